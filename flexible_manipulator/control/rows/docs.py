"""The row types of doc/programs.md, generated from the registry (`rows.ROWS`).

Each row type declares its keys (`fields.Key`: value, unit, default, meaning) and says in
its docstring what its rows constrain; that is the one source. This module writes one
section per row type, in the registry's order, between the marker lines of the
document::

    <!-- program-rows -->
    ...generated sections...
    <!-- /program-rows -->

``python -m flexible_manipulator.control.rows.docs doc/programs.md --write`` rewrites
them; ``--check`` exits 1 when the document differs (test_program_rows.py runs the same
check).
"""

import inspect
import re
import sys

from . import ROWS
from ...doc_blocks import cell, write_or_check
from .fields import GAINS, REQUIRED, TOOL_FRAME

MARKER = re.compile(r'(<!-- program-rows -->\n)(.*?)(<!-- /program-rows -->)', re.S)


def _value(value):
    """Return a default as a program file writes it."""
    if isinstance(value, list):
        return '`[' + ', '.join(str(v) for v in value) + ']`'
    if value is None:
        return 'none'
    if isinstance(value, float):
        return f'`{value:g}`'
    return value if value in (REQUIRED, GAINS.default, TOOL_FRAME) else f'`{value}`'


def render_row_type(row_type):
    """Return the markdown section of one registered row type."""
    program = row_type.program_class
    lines = [f'### `{row_type.row_type}`', '',
             f'{" ".join(inspect.getdoc(row_type).split())} Its program: '
             f'`{program.__module__.rsplit(".", 1)[-1]}.{program.__name__}`.', '',
             '| key | value | unit | default | meaning |', '|---|---|---|---|---|']
    for key in row_type.all_keys():
        lines.append(f'| `{key.name}` | {cell(key.value)} | {cell(key.unit) or "-"} | '
                     f'{_value(key.default)} | {cell(key.meaning)} |')
    return '\n'.join(lines) + '\n'


def render():
    """Return the sections of every registered row type, in the registry's order."""
    return '\n'.join(render_row_type(row_type) for row_type in ROWS.values())


def update(text):
    """Return ``text`` with its marked block replaced by `render` (ValueError: no markers)."""
    if not MARKER.search(text):
        raise ValueError('no <!-- program-rows --> ... <!-- /program-rows --> block')
    return MARKER.sub(lambda match: f'{match.group(1)}\n{render()}\n{match.group(3)}', text)


def main(argv=None):
    """Write or check the row types of a document."""
    return write_or_check(argv, __doc__.split('\n')[0], update,
                          'the program row types differ from the registry (control/rows)')


if __name__ == '__main__':
    sys.exit(main())
