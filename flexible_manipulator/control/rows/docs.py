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

import argparse
import inspect
import re
import sys

from . import ROWS
from .fields import GAINS, REQUIRED

MARKER = re.compile(r'(<!-- program-rows -->\n)(.*?)(<!-- /program-rows -->)', re.S)


def _value(value):
    """Return a default as a program file writes it."""
    if isinstance(value, list):
        return '`[' + ', '.join(str(v) for v in value) + ']`'
    if isinstance(value, float):
        return f'`{value:g}`'
    return value if value in (REQUIRED, GAINS.default) else f'`{value}`'


def _cell(text):
    return ' '.join(str(text).split()).replace('|', '\\|')


def render_row_type(row_type):
    """Return the markdown section of one registered row type."""
    program = row_type.program_class
    lines = [f'### `{row_type.row_type}`', '',
             f'{" ".join(inspect.getdoc(row_type).split())} Its program: '
             f'`{program.__module__.rsplit(".", 1)[-1]}.{program.__name__}`.', '',
             '| key | value | unit | default | meaning |', '|---|---|---|---|---|']
    for key in row_type.all_keys():
        lines.append(f'| `{key.name}` | {_cell(key.value)} | {_cell(key.unit) or "-"} | '
                     f'{_value(key.default)} | {_cell(key.meaning)} |')
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
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('document')
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument('--write', action='store_true', help='rewrite the row types in place')
    mode.add_argument('--check', action='store_true', help='exit 1 if they differ')
    options = parser.parse_args(argv)
    with open(options.document, encoding='utf-8') as stream:
        text = stream.read()
    updated = update(text)
    if options.check:
        if updated != text:
            print(f'{options.document}: the program row types differ from the registry '
                  '(control/rows); run with --write', file=sys.stderr)
            return 1
        return 0
    with open(options.document, 'w', encoding='utf-8') as stream:
        stream.write(updated)
    return 0


if __name__ == '__main__':
    sys.exit(main())
