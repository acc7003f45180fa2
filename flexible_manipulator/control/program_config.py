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

The program-constraint controller (``program_controller``) reads such files; it adds the
row types ``lambda_point`` and ``hold``, per-row gains and ``non_minimum_phase``.

Every error is a `model_config.ConfigError` naming the dotted field at fault.
"""

from ..model_config import (check_keys, ConfigError, load_yaml, number, resolve_config_path,
                            vector)
from .joint_program import SinusoidalJointProgram
from .programs import JointProgram, PlanarAngleProgram, PointProgram, StackedProgram
from .stabilization import Stabilization
from .trajectories import (CirclePath, ConstantRateTiming, ConstantReference, LinePath,
                           QuinticTiming, SplinePath, Trajectory)

AXES = {'x': 0, 'y': 1, 'z': 2}


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
    link = _index(spec.get('link'), list(model.link_names), f'{field}.link', 'link')
    fraction = number(spec.get('fraction', 1.0), f'{field}.fraction', 0.0)
    if fraction > 1.0:
        raise ConfigError(f'{field}.fraction: must be <= 1 (x = fraction * length), got '
                          f'{fraction:g}')
    return link, fraction * model.links[link].length


def _row(model, spec, field):
    """Build one program row from its mapping."""
    check_keys(spec, field, ('type', 'reference'), ('joints', 'link', 'fraction', 'axes',
                                                    'axis'))
    kind = spec['type']
    if kind == 'joint':
        joints = spec.get('joints')
        if not isinstance(joints, list) or not joints:
            raise ConfigError(f'{field}.joints: expected a non-empty list, got {joints!r}')
        indices = [_index(j, list(model.coordinate_names), f'{field}.joints[{i}]',
                          'coordinate') for i, j in enumerate(joints)]
        return JointProgram(model.nv, indices,
                            _reference(spec['reference'], f'{field}.reference', len(indices)))
    if kind == 'point':
        link, abscissa = _section(model, spec, field)
        axes = spec.get('axes', ['x', 'y', 'z'])
        if not isinstance(axes, list) or not axes or any(a not in AXES for a in axes):
            raise ConfigError(f'{field}.axes: expected a list of x, y, z, got {axes!r}')
        return PointProgram(model, link, abscissa,
                            _reference(spec['reference'], f'{field}.reference', len(axes)),
                            [AXES[a] for a in axes])
    if kind == 'angle':
        link, abscissa = _section(model, spec, field)
        axis = spec.get('axis', 'z')
        if axis not in AXES:
            raise ConfigError(f'{field}.axis: expected x, y or z, got {axis!r}')
        return PlanarAngleProgram(model, link, abscissa,
                                  _reference(spec['reference'], f'{field}.reference', 1),
                                  AXES[axis])
    raise ConfigError(f'{field}.type: unknown program type {kind!r} (known: joint, point, '
                      'angle)')


def program_from_dict(model, spec, source='program'):
    """Return (program, stabilization) described by ``spec``; ``source`` names it in errors."""
    try:
        check_keys(spec, '', ('rows', 'gains'))
        rows = spec['rows']
        if not isinstance(rows, list) or not rows:
            raise ConfigError(f'rows: expected a non-empty list of program rows, got {rows!r}')
        programs = [_row(model, row, f'rows[{i}]') for i, row in enumerate(rows)]
        program = programs[0] if len(programs) == 1 else StackedProgram(programs)
        gains = spec['gains']
        check_keys(gains, 'gains', ('alpha',), ('beta', 'gamma'))
        alpha = number(gains['alpha'], 'gains.alpha', 0.0, strict_minimum=True)
        beta = number(gains.get('beta', alpha), 'gains.beta', 0.0, strict_minimum=True)
        gamma = (number(gains['gamma'], 'gains.gamma', 0.0, strict_minimum=True)
                 if 'gamma' in gains else None)
        return program, Stabilization.for_program(program, alpha, beta, gamma)
    except ConfigError as error:
        raise ConfigError(f'{source}: {error}') from None


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
