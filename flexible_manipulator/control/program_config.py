"""Program files: read them, and build a program (rows and gains) from a parsed mapping.

A program (one entry of a program file, below) reads::

    gains: {alpha: 8.0, beta: 8.0, gamma: 5.0}   # [1/s]; beta defaults to alpha
    rows:
      - type: joint                   # selected joints follow a reference [rad]
        joints: [shoulder, elbow]     # joint names or coordinate indices
        reference: {type: spline, waypoints: [[0.0, 0.0], [0.5, 1.0]], duration: 4.0}
      - type: point                   # a material point follows a path [m]
        link: forearm                 # link name or index
        fraction: 1.0                 # abscissa x = fraction * length (1: tip, lambda point)
        axes: [x, y]
        reference: {type: circle, center: [0.5, 0.2], radius: 0.1, rate: 0.5}
      - type: angle                   # planar angle of a section about a base axis [rad]
        link: forearm
        fraction: 0.5
        axis: z
        reference: {type: line, start: [0.0], end: [1.0], duration: 2.0}

References (``start_time`` [s] optional where a timing law is used):

* ``constant``: value;
* ``line``: start, end, duration (quintic rest-to-rest timing);
* ``spline``: waypoints, duration, knots (chord | uniform; quintic timing);
* ``circle``: center, radius [m], rate [rad/s], phase [rad] (constant-speed timing);
* ``sinusoid``: offset, amplitude, frequency [Hz], phase [rad] (joint programs).

A program file (``load_program_file``; ``resolve_program_path`` finds it) names its
programs::

    default: circle                   # optional; else the first program
    programs:
      circle: {gains: {alpha: 8.0}, rows: [...]}   # a program as above
      home: {...}

Two more row types need the controller's models (`parse_program`): ``lambda_point``, the
redefined output of a flexible arm (`programs.LambdaPointProgram`, on the rigid twin's
kinematics: ``link``, ``lambda`` (one, or one per link, in (0, 1]), ``fraction``, ``axes``,
``reference``), and ``hold`` (`programs.HoldProgram`: ``joints`` kept where the program
starts). Any row may carry its own ``gains``; a program may say ``non_minimum_phase:
refuse | redefine | allow`` and carry a ``description``.

Every error is a `model_config.ConfigError` naming the dotted field at fault.
"""

from dataclasses import dataclass

import numpy as np

from ..model_config import (check_keys, ConfigError, load_yaml, number, resolve_config_path,
                            vector)
from .joint_program import SinusoidalJointProgram
from .programs import (HoldProgram, JointProgram, LambdaPointProgram, PlanarAngleProgram,
                       PointProgram, Program, StackedProgram)
from .stabilization import Stabilization
from .trajectories import (CirclePath, ConstantRateTiming, ConstantReference, LinePath,
                           QuinticTiming, SplinePath, Trajectory)

AXES = {'x': 0, 'y': 1, 'z': 2}
AXIS_NAMES = 'xyz'
ROW_TYPES = ('joint', 'point', 'angle', 'lambda_point', 'hold')
NON_MINIMUM_PHASE = ('refuse', 'redefine', 'allow')
ROW_KEYS = {           # required, optional keys per row type
    'joint': (('type', 'joints', 'reference'), ('gains',)),
    'point': (('type', 'link', 'reference'), ('fraction', 'axes', 'gains')),
    'angle': (('type', 'link', 'reference'), ('fraction', 'axis', 'gains')),
    'lambda_point': (('type', 'link', 'lambda', 'reference'), ('fraction', 'axes', 'gains')),
    'hold': (('type', 'joints'), ('gains',)),
}


def _sub(field, key):
    """Return the dotted path of ``key`` under ``field`` (which may be empty)."""
    return f'{field}.{key}' if field else key


def _numbers(value, field, size=None):
    """Return a list of numbers (of ``size`` if given) as a float array."""
    if not isinstance(value, (list, tuple)) or not value:
        raise ConfigError(f'{field}: expected a non-empty list of numbers, got {value!r}')
    return vector(value, field, len(value) if size is None else size)


def _reference(spec, field, size):
    """Build a reference of ``size`` components from its mapping."""
    check_keys(spec, field, ('type',), ('value', 'start', 'end', 'duration', 'start_time',
                                        'waypoints', 'knots', 'center', 'radius', 'rate',
                                        'phase', 'offset', 'amplitude', 'frequency'))
    kind = spec['type']
    start_time = number(spec.get('start_time', 0.0), f'{field}.start_time')
    if kind == 'constant':
        return ConstantReference(_numbers(spec.get('value'), f'{field}.value', size))
    if kind in ('line', 'spline'):
        duration = number(spec.get('duration'), f'{field}.duration', 0.0, strict_minimum=True)
        timing = QuinticTiming(duration, start_time)
        if kind == 'line':
            return Trajectory(LinePath(_numbers(spec.get('start'), f'{field}.start', size),
                                       _numbers(spec.get('end'), f'{field}.end', size)),
                              timing)
        waypoints = spec.get('waypoints')
        if not isinstance(waypoints, list) or len(waypoints) < 2:
            raise ConfigError(f'{field}.waypoints: expected a list of at least two points, '
                              f'got {waypoints!r}')
        points = [_numbers(p, f'{field}.waypoints[{i}]', size) for i, p in enumerate(waypoints)]
        try:
            return Trajectory(SplinePath(points, spec.get('knots', 'chord')), timing)
        except ValueError as error:
            raise ConfigError(f'{field}.waypoints: {error}') from None
    if kind == 'circle':
        if size < 2:
            raise ConfigError(f'{field}.type: a circle needs a row of at least two axes, this '
                              f'row has {size}')
        center = _numbers(spec.get('center'), f'{field}.center', size)
        radius = number(spec.get('radius'), f'{field}.radius', 0.0, strict_minimum=True)
        rate = number(spec.get('rate'), f'{field}.rate')
        phase = number(spec.get('phase', 0.0), f'{field}.phase')
        return Trajectory(CirclePath(center, radius), ConstantRateTiming(rate, start_time,
                                                                         phase))
    if kind == 'sinusoid':
        values = [_numbers(spec.get(key, [0.0] * size if key == 'phase' else None),
                           f'{field}.{key}', size)
                  for key in ('offset', 'amplitude', 'frequency', 'phase')]
        return SinusoidalJointProgram(*values)
    raise ConfigError(f'{field}.type: unknown reference type {kind!r} (known: constant, line, '
                      'spline, circle, sinusoid)')


def _index(value, names, field, what):
    """Return the index of a name in ``names``, or check an integer index."""
    if isinstance(value, str):
        if value not in names:
            raise ConfigError(f'{field}: unknown {what} {value!r} (known: {", ".join(names)})')
        return names.index(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < len(names):
        raise ConfigError(f'{field}: expected a {what} name or index below {len(names)}, got '
                          f'{value!r}')
    return value


def _section(model, spec, field):
    """Return (link index, abscissa [m]) of a row's section."""
    link = _index(spec.get('link'), list(model.link_names), _sub(field, 'link'), 'link')
    fraction = number(spec.get('fraction', 1.0), _sub(field, 'fraction'), 0.0)
    if fraction > 1.0:
        raise ConfigError(f'{_sub(field, "fraction")}: must be <= 1 (x = fraction * length), '
                          f'got {fraction:g}')
    return link, fraction * model.links[link].length


@dataclass
class ProgramSpec:
    """One program of a file, built: its rows on the control model and what goes with them."""

    program: Program
    stabilization: Stabilization        # gains per row (``gains`` of the row or program)
    row_names: list                     # one label per constraint row (topics, messages)
    references: list                    # (slice of rows, reference object) per file row
    holds: list                         # HoldProgram rows (captured where the program starts)
    non_minimum_phase: str              # refuse | redefine | allow


def parse_gains(spec, field, defaults=None):
    """Parse a gains mapping {alpha, beta, gamma} [1/s]; missing keys from ``defaults``.

    ``alpha`` is required unless ``defaults`` are given; ``beta`` defaults to ``alpha``.
    """
    defaults = defaults or {}
    check_keys(spec, field, () if defaults else ('alpha',), ('alpha', 'beta', 'gamma'))
    out = dict(defaults)
    for key in ('alpha', 'beta', 'gamma'):
        if key in spec:
            out[key] = number(spec[key], _sub(field, key), 0.0, strict_minimum=True)
            if key == 'alpha' and 'beta' not in spec:
                out['beta'] = out['alpha']
    return out


def _lambdas(value, count, field):
    """One lambda for every link, or one per link, each in (0, 1]."""
    values = np.atleast_1d(np.asarray(value, dtype=object))
    if values.size not in (1, count):
        raise ConfigError(f'{field}: expected one value or one per link ({count}), got '
                          f'{value!r}')
    lambdas = np.array([number(x, field, 0.0, strict_minimum=True) for x in values])
    if np.any(lambdas > 1.0):
        raise ConfigError(f'{field}: must be in (0, 1], got {lambdas.tolist()}')
    return lambdas


def _axes(spec, field):
    axes = spec.get('axes', ['x', 'y', 'z'])
    if not isinstance(axes, list) or not axes or any(not isinstance(a, str) or a not in AXES
                                                     for a in axes):
        raise ConfigError(f'{_sub(field, "axes")}: expected a list of x, y, z, got {axes!r}')
    return [AXES[a] for a in axes]


def _joints(spec, names, field, what):
    joints = spec.get('joints')
    if not isinstance(joints, list) or not joints:
        raise ConfigError(f'{_sub(field, "joints")}: expected a non-empty list, got {joints!r}')
    return [_index(j, names, f'{_sub(field, "joints")}[{i}]', what)
            for i, j in enumerate(joints)]


def _row(model, spec, field, rigid_twin=None):
    """Build one program row on ``model``; return (program, labels of its rows).

    ``rigid_twin``: the model whose kinematics a ``lambda_point`` row uses (its links are
    rigid); ``model.rigid_twin()`` when not given.
    """
    if not isinstance(spec, dict):
        raise ConfigError(f'{field}: expected a mapping, got {spec!r}')
    kind = spec.get('type')
    if kind not in ROW_TYPES:
        raise ConfigError(f'{_sub(field, "type")}: unknown program row type {kind!r} '
                          f'(known: {", ".join(ROW_TYPES)})')
    check_keys(spec, field, *ROW_KEYS[kind])
    reference_field = _sub(field, 'reference')
    if kind in ('joint', 'hold'):
        names = list(model.coordinate_names if kind == 'joint' else model.joint_names)
        indices = _joints(spec, names, field, 'coordinate' if kind == 'joint' else 'joint')
        labels = [names[j] for j in indices]
        if kind == 'hold':
            return HoldProgram(model.nv, indices), labels
        return JointProgram(model.nv, indices, _reference(spec['reference'], reference_field,
                                                          len(indices))), labels
    link, abscissa = _section(model, spec, field)
    name = model.link_names[link]
    if kind == 'angle':
        axis = spec.get('axis', 'z')
        if not isinstance(axis, str) or axis not in AXES:
            raise ConfigError(f'{_sub(field, "axis")}: expected x, y or z, got {axis!r}')
        return (PlanarAngleProgram(model, link, abscissa,
                                   _reference(spec['reference'], reference_field, 1),
                                   AXES[axis]), [f'{name}_angle_{axis}'])
    axes = _axes(spec, field)
    reference = _reference(spec['reference'], reference_field, len(axes))
    if kind == 'point':
        fraction = abscissa / model.links[link].length
        where = 'tip' if fraction == 1.0 else f'{fraction:g}L'
        return (PointProgram(model, link, abscissa, reference, axes),
                [f'{name}_{where}_{AXIS_NAMES[a]}' for a in axes])
    lambdas = _lambdas(spec['lambda'], model.n_joints, _sub(field, 'lambda'))
    try:
        twin = model.rigid_twin() if rigid_twin is None else rigid_twin
        program = LambdaPointProgram(model, PointProgram(twin, link, abscissa, reference,
                                                         axes), lambdas)
    except ValueError as error:        # no rigid twin or joint outputs (fixed joints)
        raise ConfigError(f'{_sub(field, "type")}: lambda_point: {error}') from None
    return program, [f'{name}_lambda_{AXIS_NAMES[a]}' for a in axes]


def parse_program(model, spec, field='', rigid_twin=None):
    """Build the program ``spec`` (one entry of a program file) on ``model``.

    ``field`` prefixes error messages (the program's name); ``rigid_twin`` as in `_row`.
    Returns a `ProgramSpec`; raises `ConfigError` naming the dotted field at fault.
    """
    check_keys(spec, field, ('rows', 'gains'), ('non_minimum_phase', 'description'))
    gains = parse_gains(spec['gains'], _sub(field, 'gains'))
    policy = spec.get('non_minimum_phase', 'refuse')
    if policy not in NON_MINIMUM_PHASE:
        raise ConfigError(f'{_sub(field, "non_minimum_phase")}: must be one of '
                          f'{", ".join(NON_MINIMUM_PHASE)}, got {policy!r}')
    rows = spec['rows']
    if not isinstance(rows, list) or not rows:
        raise ConfigError(f'{_sub(field, "rows")}: expected a non-empty list of program rows, '
                          f'got {rows!r}')
    programs, alpha, beta, gamma, names, references = [], [], [], [], [], []
    for i, row in enumerate(rows):
        row_field = f'{_sub(field, "rows")}[{i}]'
        program, labels = _row(model, row, row_field, rigid_twin)
        row_gains = (parse_gains(row['gains'], _sub(row_field, 'gains'), gains)
                     if 'gains' in row else gains)
        start = sum(p.size for p in programs)
        references.append((slice(start, start + program.size), program.reference))
        programs.append(program)
        names += labels
        for values, key, default in ((alpha, 'alpha', None), (beta, 'beta', None),
                                     (gamma, 'gamma', 1.0)):
            values += [row_gains.get(key, default)] * program.size
    if len(set(names)) != len(names):
        names = [f'{label}_{i}' for i, label in enumerate(names)]
    program = programs[0] if len(programs) == 1 else StackedProgram(programs)
    stabilization = Stabilization(program.order, np.array(alpha), np.array(beta),
                                  np.array(gamma))
    holds = [p for p in programs if isinstance(p, HoldProgram)]
    return ProgramSpec(program, stabilization, names, references, holds, policy)


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
