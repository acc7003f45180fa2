"""What the program row types share: their common keys and the parsers of their values.

A row type (`rows.base.Row`) declares its keys as `Key` lines; the keys several types
have (``link``, ``fraction``, ``axes``, ``joints``) are declared here once, next to the
parser that reads them and applies their default, and so are the vector references
(`reference`). Every parser raises `config_checks.ConfigError` naming the dotted field.
"""

from collections import namedtuple
import math

from ...config_checks import check_keys, ConfigError, number, vector
from ..joint_program import SinusoidalJointProgram
from ..trajectories import (CirclePath, ConstantRateTiming, ConstantReference, LinePath,
                            MultisineReference, QuinticTiming, SplinePath, Trajectory)

AXES = {'x': 0, 'y': 1, 'z': 2}
AXIS_NAMES = 'xyz'
REQUIRED = 'required'       # the default of a key the row must give
TOOL_FRAME = "the model's tool_frame"    # the default of a frame key (`tcp`)

Key = namedtuple('Key', 'name value unit default meaning')
Key.__doc__ = ('One key of a row type: its ``name``, what its ``value`` is, its ``unit`` '
               '("" when none), its ``default`` (`REQUIRED` when it has none) and its '
               '``meaning`` (the program-file documentation is made of these).')

LINK = Key('link', 'link name or index', '', REQUIRED, 'the link the section is on')
FRACTION = Key('fraction', 'number in [0, 1]', '', 1.0,
               'the section at x = fraction * length of the link (1: its tip)')
AXES_KEY = Key('axes', 'list of x, y, z', '', ['x', 'y', 'z'],
               'the base-frame components the rows constrain, one row each')
PATH = Key('reference', 'vector reference', 'm', REQUIRED, 'one value per axis')
GAINS = Key('gains', 'mapping {alpha, beta, gamma}', '1/s', "the program's",
            "this row's gains; missing ones are the program's")


def sub(field, key):
    """Return the dotted path of ``key`` under ``field`` (which may be empty)."""
    return f'{field}.{key}' if field else key


def numbers(value, field, size=None):
    """Return a non-empty list of numbers as a float array, of ``size`` if given."""
    if not isinstance(value, (list, tuple)) or not value:
        raise ConfigError(f'{field}: expected a non-empty list of numbers, got {value!r}')
    return vector(value, field, len(value) if size is None else size)


def quintic_timing(spec, field, start_time):
    """Return the quintic timing from ``start_time`` [s] over the ``duration`` [s] of ``spec``."""
    duration = number(spec.get('duration'), f'{field}.duration', 0.0, strict_minimum=True)
    return QuinticTiming(duration, start_time)


def vector_reference(spec, field, size):
    """Build a reference of ``size`` components from its mapping."""
    check_keys(spec, field, ('type',), ('value', 'start', 'end', 'duration', 'start_time',
                                        'waypoints', 'knots', 'center', 'radius', 'rate',
                                        'phase', 'offset', 'amplitude', 'frequency',
                                        'frequencies', 'amplitudes', 'phases', 'ramp'))
    kind = spec['type']
    start_time = number(spec.get('start_time', 0.0), f'{field}.start_time')
    if kind == 'constant':
        return ConstantReference(numbers(spec.get('value'), f'{field}.value', size))
    if kind in ('line', 'spline'):
        timing = quintic_timing(spec, field, start_time)
        if kind == 'line':
            return Trajectory(LinePath(numbers(spec.get('start'), f'{field}.start', size),
                                       numbers(spec.get('end'), f'{field}.end', size)),
                              timing)
        waypoints = spec.get('waypoints')
        if not isinstance(waypoints, list) or len(waypoints) < 2:
            raise ConfigError(f'{field}.waypoints: expected a list of at least two points, '
                              f'got {waypoints!r}')
        points = [numbers(p, f'{field}.waypoints[{i}]', size) for i, p in enumerate(waypoints)]
        try:
            return Trajectory(SplinePath(points, spec.get('knots', 'chord')), timing)
        except ValueError as error:
            raise ConfigError(f'{field}.waypoints: {error}') from None
    if kind == 'circle':
        if size < 2:
            raise ConfigError(f'{field}.type: a circle needs a row of at least two axes, this '
                              f'row has {size}')
        center = numbers(spec.get('center'), f'{field}.center', size)
        radius = number(spec.get('radius'), f'{field}.radius', 0.0, strict_minimum=True)
        rate = number(spec.get('rate'), f'{field}.rate')
        phase = number(spec.get('phase', 0.0), f'{field}.phase')
        return Trajectory(CirclePath(center, radius), ConstantRateTiming(rate, start_time,
                                                                         phase))
    if kind == 'sinusoid':
        values = [numbers(spec.get(key, [0.0] * size if key == 'phase' else None),
                          f'{field}.{key}', size)
                  for key in ('offset', 'amplitude', 'frequency', 'phase')]
        return SinusoidalJointProgram(*values)
    if kind == 'multisine':
        return multisine_reference(spec, field, size, start_time)
    raise ConfigError(f'{field}.type: unknown reference type {kind!r} (known: constant, line, '
                      'spline, circle, sinusoid, multisine)')


def component_lists(value, field, size, minimum=-math.inf):
    """Return ``size`` lists of numbers (one per coordinate, each possibly empty)."""
    if not isinstance(value, (list, tuple)) or len(value) != size:
        raise ConfigError(f'{field}: expected {size} lists of numbers (one per coordinate), '
                          f'got {value!r}')
    lists = []
    for i, item in enumerate(value):
        if not isinstance(item, (list, tuple)):
            raise ConfigError(f'{field}[{i}]: expected a list of numbers, got {item!r}')
        lists.append([number(x, f'{field}[{i}][{k}]', minimum) for k, x in enumerate(item)])
    return lists


def multisine_reference(spec, field, size, start_time):
    """Build a ``multisine`` reference (`MultisineReference`) from its mapping."""
    offset = numbers(spec.get('offset'), f'{field}.offset', size)
    frequencies = component_lists(spec.get('frequencies'), f'{field}.frequencies', size, 0.0)
    amplitudes = component_lists(spec.get('amplitudes'), f'{field}.amplitudes', size)
    phases = component_lists(spec.get('phases', [[0.0] * len(f) for f in frequencies]),
                             f'{field}.phases', size)
    for key, lists in (('amplitudes', amplitudes), ('phases', phases)):
        for i, (values, reference) in enumerate(zip(lists, frequencies)):
            if len(values) != len(reference):
                raise ConfigError(f'{field}.{key}[{i}]: expected {len(reference)} numbers (one '
                                  f'per frequency of coordinate {i}), got {len(values)}')
    ramp = number(spec.get('ramp', 0.0), f'{field}.ramp', 0.0)
    duration = spec.get('duration')
    if duration is not None:
        duration = number(duration, f'{field}.duration', 0.0, strict_minimum=True)
        if duration < 2.0 * ramp:
            raise ConfigError(f'{field}.duration: must be at least twice the ramp '
                              f'({2.0 * ramp:g} s), got {duration:g}')
    return MultisineReference(offset, frequencies, amplitudes, phases, ramp, duration,
                              start_time)


def index(value, names, field, what):
    """Return the index of a name in ``names``, or check an integer index."""
    if isinstance(value, str):
        if value not in names:
            raise ConfigError(f'{field}: unknown {what} {value!r} (known: {", ".join(names)})')
        return names.index(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < len(names):
        raise ConfigError(f'{field}: expected a {what} name or index below {len(names)}, got '
                          f'{value!r}')
    return value


def section(model, spec, field):
    """Return (link index, abscissa [m]) of the row's `LINK` and `FRACTION`."""
    link = index(spec.get(LINK.name), list(model.link_names), sub(field, LINK.name), 'link')
    fraction = number(spec.get(FRACTION.name, FRACTION.default), sub(field, FRACTION.name),
                      0.0)
    if fraction > 1.0:
        raise ConfigError(f'{sub(field, FRACTION.name)}: must be <= 1 (x = fraction * '
                          f'length), got {fraction:g}')
    return link, fraction * model.links[link].length


def axes(spec, field):
    """Return the base-frame axis indices the row lists (`AXES_KEY`)."""
    names = spec.get(AXES_KEY.name, AXES_KEY.default)
    if not isinstance(names, list) or not names or any(not isinstance(a, str) or a not in AXES
                                                       for a in names):
        raise ConfigError(f'{sub(field, AXES_KEY.name)}: expected a list of x, y, z, got '
                          f'{names!r}')
    return [AXES[a] for a in names]


def point_path(model, spec, field):
    """Return (link, abscissa [m], axis indices, reference) of a point following a path.

    The point's `LINK` and `FRACTION`, its `AXES_KEY` and its `PATH` (a vector reference
    of one value per axis), read in that order.
    """
    link, abscissa = section(model, spec, field)
    indices = axes(spec, field)
    return link, abscissa, indices, vector_reference(spec[PATH.name], sub(field, PATH.name),
                                                     len(indices))


def joints(spec, names, field, what):
    """Return the indices of a row's ``joints`` in ``names`` (each a ``what``)."""
    listed = spec.get('joints')
    if not isinstance(listed, list) or not listed:
        raise ConfigError(f'{sub(field, "joints")}: expected a non-empty list, got {listed!r}')
    return [index(j, names, f'{sub(field, "joints")}[{i}]', what)
            for i, j in enumerate(listed)]
