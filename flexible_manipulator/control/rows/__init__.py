"""Program row types: one module each, registered here; program files are read from them.

Each row type is a `base.Row` subclass in a module of this package (its ``type`` in a
file, its keys with their values, units and defaults, and ``from_spec``); `ROWS`
registers them, in the order the documentation lists them. The program parser
(`program_config.parse_program`), its messages, the program-file documentation
(`rows.docs`, doc/programs.md) and the admission's redefinition (`admission`) all come
from the registry. Adding a row type: a module here, its line in `ROWS`, its tests (see
doc/architecture.md).
"""

from ...config_checks import ConfigError
from .angle import AngleRow
from .base import Row
from .fields import sub
from .hold import HoldRow
from .joint import JointRow
from .lambda_point import LambdaPointRow
from .orientation import OrientationRow
from .point import PointRow
from .tcp import TcpRow

ROWS = {row.row_type: row for row in (JointRow, PointRow, AngleRow, LambdaPointRow, HoldRow,
                                      OrientationRow, TcpRow)}
ROW_TYPES = tuple(ROWS)

__all__ = ['build_row', 'ROW_TYPES', 'ROWS', 'Row']


def build_row(model, spec, field, rigid_twin=None):
    """Build one program row of ``spec`` on ``model``: a `Row` of its registered type.

    ``field`` is the row's dotted path in messages; ``rigid_twin`` as in `Row.from_spec`.
    """
    if not isinstance(spec, dict):
        raise ConfigError(f'{field}: expected a mapping, got {spec!r}')
    kind = spec.get('type')
    if kind not in ROW_TYPES:      # a tuple: an unhashable type (a list) is unknown too
        raise ConfigError(f'{sub(field, "type")}: unknown program row type {kind!r} '
                          f'(known: {", ".join(ROW_TYPES)})')
    row_type = ROWS[kind]
    row_type.check(spec, field)
    return row_type.from_spec(spec, model, field, rigid_twin)
