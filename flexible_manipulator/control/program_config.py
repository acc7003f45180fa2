"""Program files: read them, and build a program (rows and gains) from a parsed mapping.

The format is doc/programs.md: a file names its programs (``programs``, ``default``;
``load_program_file`` reads it, ``resolve_program_path`` finds it); a program has
``gains`` {alpha, beta, gamma} [1/s], ``rows``, and optionally ``non_minimum_phase``
(refuse | redefine | allow; not given: `admission.non_minimum_phase_policy`) and a
``description``. Each row is built by its registered
row type (`rows`: its keys, units, defaults and parser, and the documentation's tables);
`parse_program` adds the gains and stacks the rows (`assemble`).

Every error is a `config_checks.ConfigError` naming the dotted field at fault.
"""

from dataclasses import dataclass

import numpy as np

from ..config_checks import check_keys, ConfigError, number
from ..config_files import load_yaml, resolve_config_path
from .programs import HoldProgram, Program, StackedProgram
from .rows import build_row
from .rows.fields import sub
from .stabilization import Stabilization

NON_MINIMUM_PHASE = ('refuse', 'redefine', 'allow')


@dataclass
class ProgramSpec:
    """One program of a file, built: its rows on the control model and what goes with them."""

    program: Program
    stabilization: Stabilization        # gains per row (``gains`` of the row or program)
    row_names: list                     # one label per constraint row (topics, messages)
    references: list                    # (slice of rows, reference object) per file row
    holds: list                         # HoldProgram rows (captured where the program starts)
    non_minimum_phase: str              # refuse | redefine | allow; None: not given
    rows: list                          # the built rows (`rows.Row`), in file order


def parse_gains(spec, field, defaults=None):
    """Parse a gains mapping {alpha, beta, gamma} [1/s]; missing keys from ``defaults``.

    ``alpha`` is required unless ``defaults`` are given; ``beta`` defaults to ``alpha``.
    """
    defaults = defaults or {}
    check_keys(spec, field, () if defaults else ('alpha',), ('alpha', 'beta', 'gamma'))
    out = dict(defaults)
    for key in ('alpha', 'beta', 'gamma'):
        if key in spec:
            out[key] = number(spec[key], sub(field, key), 0.0, strict_minimum=True)
            if key == 'alpha' and 'beta' not in spec:
                out['beta'] = out['alpha']
    return out


def parse_program(model, spec, field='', rigid_twin=None):
    """Build the program ``spec`` (one entry of a program file) on ``model``.

    ``field`` prefixes error messages (the program's name); ``rigid_twin`` as in
    `rows.Row.from_spec`.
    Returns a `ProgramSpec`; raises `ConfigError` naming the dotted field at fault.
    """
    check_keys(spec, field, ('rows', 'gains'), ('non_minimum_phase', 'description'))
    gains = parse_gains(spec['gains'], sub(field, 'gains'))
    policy = spec.get('non_minimum_phase')
    if policy is not None and policy not in NON_MINIMUM_PHASE:
        raise ConfigError(f'{sub(field, "non_minimum_phase")}: must be one of '
                          f'{", ".join(NON_MINIMUM_PHASE)}, got {policy!r}')
    rows = spec['rows']
    if not isinstance(rows, list) or not rows:
        raise ConfigError(f'{sub(field, "rows")}: expected a non-empty list of program rows, '
                          f'got {rows!r}')
    built = []
    for i, spec_row in enumerate(rows):
        row_field = program_row_field(field, i)
        row = build_row(model, spec_row, row_field, rigid_twin)
        row.gains = (parse_gains(spec_row['gains'], sub(row_field, 'gains'), gains)
                     if 'gains' in spec_row else gains)
        built.append(row)
    return assemble(built, policy)


def program_row_field(field, index):
    """Return the dotted path of row ``index`` of the program at ``field``."""
    return f'{sub(field, "rows")}[{index}]'


def assemble(rows, policy):
    """Return the `ProgramSpec` of built rows (`rows.Row`, their gains set) under ``policy``.

    The rows stacked in order, one stabilization row per constraint row with the row's
    gains (gamma 1 /s where no gains give it), labels made unique by their index
    when two rows share one.
    """
    programs, alpha, beta, gamma, names, references = [], [], [], [], [], []
    for row in rows:
        program = row.program
        start = sum(p.size for p in programs)
        references.append((slice(start, start + program.size), row.reported_reference))
        programs.append(program)
        names += row.labels
        for values, key, default in ((alpha, 'alpha', None), (beta, 'beta', None),
                                     (gamma, 'gamma', 1.0)):
            values += [row.gains.get(key, default)] * program.size
    if len(set(names)) != len(names):
        names = [f'{label}_{i}' for i, label in enumerate(names)]
    program = programs[0] if len(programs) == 1 else StackedProgram(programs)
    stabilization = Stabilization(program.order, np.array(alpha), np.array(beta),
                                  np.array(gamma))
    holds = [p for p in programs if isinstance(p, HoldProgram)]
    return ProgramSpec(program, stabilization, names, references, holds, policy, list(rows))


def program_from_dict(model, spec, source='program'):
    """Return (program, stabilization) described by ``spec``; ``source`` names it in errors."""
    try:
        parsed = parse_program(model, spec)
    except ConfigError as error:
        raise ConfigError(f'{source}: {error}') from None
    return parsed.program, parsed.stabilization


def load_program_file(path):
    """Read a program file: returns (programs mapping, default name or None)."""
    content = load_yaml(path, 'program file')
    try:
        check_keys(content, '', ('programs',), ('default',))
    except ConfigError as error:
        raise ConfigError(f'{path}: {error}') from None
    return content['programs'], content.get('default')


def resolve_program_path(name, share_directory=None):
    """Path of a program file: absolute, relative to the cwd, or a name in ``config``."""
    return resolve_config_path(name, 'config', share_directory)
