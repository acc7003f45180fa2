"""The ``angle`` row: the planar angle of a section about a base axis."""

from ...config_checks import ConfigError
from ..programs import PlanarAngleProgram
from .base import Row
from .fields import AXES, FRACTION, Key, LINK, REQUIRED, section, sub, vector_reference

AXIS = Key('axis', 'x, y or z', '', 'z', 'the base axis the angle is measured about')


class AngleRow(Row):
    """The angle of a section about a base axis follows a reference [rad] (planar motion).

    The angle of the section's next axis about ``axis`` (of its x axis about z); the error
    is wrapped to (-pi, pi], so references may turn many times.
    """

    row_type = 'angle'
    program_class = PlanarAngleProgram
    keys = (LINK,
            Key('reference', 'vector reference', 'rad', REQUIRED, 'one value'),
            FRACTION, AXIS)

    @classmethod
    def from_spec(cls, spec, model, field, rigid_twin=None):
        """Build the row on ``model`` (see `Row.from_spec`)."""
        link, abscissa = section(model, spec, field)
        axis = spec.get(AXIS.name, AXIS.default)
        if not isinstance(axis, str) or axis not in AXES:
            raise ConfigError(f'{sub(field, AXIS.name)}: expected x, y or z, got {axis!r}')
        return cls(PlanarAngleProgram(model, link, abscissa,
                                      vector_reference(spec['reference'],
                                                       sub(field, 'reference'), 1),
                                      AXES[axis]),
                   [f'{model.link_names[link]}_angle_{axis}'])
