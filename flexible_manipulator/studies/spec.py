"""A study file: the base graph, the parameters to vary, the runs' duration and records.

The format (doc/studies.md has an example)::

    base:
      params_file: sim            # a graph's parameter file (config/sim.yaml)
      values: {controller.delay_periods: 0}   # fixed changes, dotted paths (optional)
    duration: 2.0                 # s simulated per run
    mode: closed_loop             # closed_loop (no ROS) | ros_graph (the nodes, lock-step)
    record: {mcap: false}         # also write each run's MCAP recording
    seed: 0                       # the random draws' seed
    draws: 4                      # random draws per grid point (random parameters)
    parameters:                   # dotted path (`closed_loop`): how it varies
      model.links[1].payload.mass: [0.05, 0.1, 0.2]          # a list of values
      controller.control_period: {grid: [0.001, 0.002]}       # the same
      plant.initial_positions[0]: {linspace: [-0.3, -0.1, 3]} # start, stop, count
      model.links[0].beam.damping_ratio: {uniform: [0.002, 0.01]}   # random draws
      model.links[0].beam.bending_stiffness[0]: {log_uniform: [3.0, 6.0]}
      plant.initial_velocities[1]: {normal: [0.0, 0.05]}       # mean, standard deviation
      controller.active_program: {choice: [lambda_circle, joint_sine]}

The runs: every combination of the grid parameters (lists, ``grid``, ``linspace``; in file
order, the last varying fastest), each with ``draws`` draws of the random ones (``uniform``,
``log_uniform``, ``normal``, ``choice``). Draw d of every grid point has the same random
values (common random numbers: grid points are compared under the same conditions), made
from (``seed``, d) alone. `load_study` checks everything before anything runs: the keys,
each path against the base graph, each grid value and each random range's ends by
building the graph's pieces with that one value (`closed_loop.Graph.check`); it raises
`StudyError` naming the field (``parameters.model.links[9].mass: ...``).
"""

from dataclasses import dataclass, field
import hashlib
import itertools
import json
import math
import os

import numpy as np

from ..closed_loop import load_graph, parse_path
from ..config_checks import check_keys, ConfigError
from ..config_files import load_yaml

MODES = ('closed_loop', 'ros_graph')
GRIDS = ('grid', 'linspace')
RANDOM = ('uniform', 'log_uniform', 'normal', 'choice')
MAX_RUNS = 10 ** 7


class StudyError(ConfigError):
    """A study file is unusable; the message starts with the field at fault."""


@dataclass
class Parameter:
    """One varied field: ``values`` (a grid) or ``draw`` (kind, arguments) (random)."""

    path: str
    values: list = None
    kind: str = 'grid'
    arguments: list = None

    def sample(self, rng):
        """Draw one value (a random parameter)."""
        a = self.arguments
        if self.kind == 'uniform':
            return float(rng.uniform(a[0], a[1]))
        if self.kind == 'log_uniform':
            return float(math.exp(rng.uniform(math.log(a[0]), math.log(a[1]))))
        if self.kind == 'normal':
            return float(rng.normal(a[0], a[1]))
        return a[int(rng.integers(len(a)))]

    def extremes(self):
        """Values that stand for this parameter in the check: the grid, or a range's ends."""
        if self.values is not None:
            return self.values
        if self.kind == 'normal':
            return [self.arguments[0]]
        return self.arguments if self.kind == 'choice' else self.arguments[:2]


@dataclass
class Study:
    """A parsed, checked study file (module doc)."""

    source: str
    params_file: str
    base_values: dict
    duration: float
    mode: str
    mcap: bool
    seed: int
    draws: int
    parameters: list = field(default_factory=list)

    @property
    def grid(self):
        """The grid parameters, in file order."""
        return [p for p in self.parameters if p.values is not None]

    @property
    def random(self):
        """The random parameters, in file order."""
        return [p for p in self.parameters if p.values is None]

    def digest(self):
        """Identity of what every run shares: base, duration, mode (not the parameters)."""
        text = json.dumps([self.params_file, self.base_values, self.duration, self.mode,
                           self.mcap], sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def runs(self):
        """Return the runs: [{'run': index, 'draw': d, 'key': id, 'values': {path: v}}].

        ``key`` identifies a run by what it runs (the study's digest and its values), so a
        restarted study finds the runs it already did even if the file gained values.
        """
        grid, random = self.grid, self.random
        digest, runs = self.digest(), []
        draws = [[p.sample(rng) for p in random] for rng in
                 (np.random.default_rng([self.seed, d]) for d in range(self.draws))]
        for point in itertools.product(*(p.values for p in grid)):
            for d in range(self.draws):
                values = dict(zip((p.path for p in grid), point))
                values.update(zip((p.path for p in random), draws[d]))
                text = json.dumps([digest, sorted(values.items())], default=str)
                runs.append({'run': len(runs), 'draw': d, 'values': values,
                             'key': hashlib.sha256(text.encode()).hexdigest()[:20]})
        return runs


def _number(value, field, positive=False):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(value) or (positive and value <= 0):
        raise StudyError(f'{field}: expected a {"positive " if positive else ""}finite number, '
                         f'got {value!r}')
    return value


def _parameter(path, spec):
    """Parse one entry of ``parameters``."""
    field = f'parameters.{path}'
    if isinstance(spec, list):
        spec = {'grid': spec}
    if not isinstance(spec, dict) or len(spec) != 1:
        raise StudyError(f'{field}: expected a list of values or one of '
                         f'{{{", ".join(GRIDS + RANDOM)}: ...}}, got {spec!r}')
    (kind, arguments), = spec.items()
    if kind not in GRIDS + RANDOM:
        raise StudyError(f'{field}.{kind}: unknown kind (known: {", ".join(GRIDS + RANDOM)})')
    field = f'{field}.{kind}'
    if not isinstance(arguments, list) or not arguments:
        raise StudyError(f'{field}: expected a non-empty list, got {arguments!r}')
    if kind == 'grid':
        return Parameter(path, values=list(arguments))
    if kind == 'choice':
        return Parameter(path, kind=kind, arguments=list(arguments))
    size = 3 if kind == 'linspace' else 2
    if len(arguments) != size:
        raise StudyError(f'{field}: expected {size} numbers, got {arguments!r}')
    for i, value in enumerate(arguments):
        _number(value, f'{field}[{i}]')
    if kind == 'linspace':
        count = arguments[2]
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 10 ** 5:
            raise StudyError(f'{field}[2]: expected a whole number of values in 1..100000, '
                             f'got {count!r}')
        return Parameter(path, values=np.linspace(arguments[0], arguments[1],
                                                  count).tolist())
    low, high = arguments
    if kind == 'normal' and not high > 0:
        raise StudyError(f'{field}[1]: the standard deviation must be > 0, got {high!r}')
    if kind in ('uniform', 'log_uniform') and not low < high:
        raise StudyError(f'{field}: expected low < high, got {arguments!r}')
    if kind == 'log_uniform' and not low > 0:
        raise StudyError(f'{field}[0]: must be > 0 for a log-uniform draw, got {low!r}')
    return Parameter(path, kind=kind, arguments=[float(low), float(high)])


def parse_study(content, source='study', check=True):
    """Return the `Study` of a study file's parsed content; `StudyError` naming the field.

    ``check``: also check every path and value against the base graph (module doc).
    """
    if not isinstance(content, dict):
        raise StudyError(f'{source}: expected a mapping at the top level, got '
                         f'{type(content).__name__}')
    try:
        check_keys(content, '', ('duration', 'parameters'),
                   ('base', 'mode', 'record', 'seed', 'draws'))
        base = content.get('base', {})
        check_keys(base, 'base', (), ('params_file', 'values'))
        record = content.get('record', {}) or {}
        check_keys(record, 'record', (), ('mcap',))
    except ConfigError as error:
        raise StudyError(str(error)) from None
    params_file = base.get('params_file', 'sim')
    if not isinstance(params_file, str) or not params_file:
        raise StudyError(f'base.params_file: expected a file name or path, got {params_file!r}')
    values = base.get('values', {}) or {}
    if not isinstance(values, dict) or not all(isinstance(k, str) for k in values):
        raise StudyError(f'base.values: expected a mapping of dotted paths, got {values!r}')
    duration = _number(content['duration'], 'duration', positive=True)
    if duration > 1e6:
        raise StudyError(f'duration: at most 1e6 s, got {duration!r}')
    mode = content.get('mode', 'closed_loop')
    if mode not in MODES:
        raise StudyError(f'mode: must be one of {", ".join(MODES)}, got {mode!r}')
    mcap = record.get('mcap', False)
    if not isinstance(mcap, bool):
        raise StudyError(f'record.mcap: expected true or false, got {mcap!r}')
    seed, draws = content.get('seed', 0), content.get('draws', 1)
    for name, value, low in (('seed', seed, 0), ('draws', draws, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value < 2 ** 63:
            raise StudyError(f'{name}: expected a whole number >= {low}, got {value!r}')
    parameters = content['parameters']
    if not isinstance(parameters, dict) or not parameters:
        raise StudyError('parameters: expected a mapping {dotted path: values}, not empty')
    parsed = []
    for path, spec in parameters.items():
        try:
            parse_path(path)
        except ConfigError as error:
            raise StudyError(f'parameters.{error}') from None
        if path in values:
            raise StudyError(f'parameters.{path}: also fixed in base.values; keep one')
        parsed.append(_parameter(path, spec))
    study = Study(source, params_file, dict(values), float(duration), mode, mcap, seed, draws,
                  parsed)
    count = math.prod(len(p.values) for p in study.grid) * draws
    if count > MAX_RUNS:
        raise StudyError(f'parameters: {count} runs, more than {MAX_RUNS}')
    if not study.random and draws != 1:
        raise StudyError(f'draws: {draws} draws of no random parameter (use 1)')
    if check:
        check_study(study)
    return study


def check_study(study):
    """Check the base and every parameter's values against the graph (module doc)."""
    try:
        graph = load_graph(study.params_file)
    except ConfigError as error:
        raise StudyError(f'base.params_file: {error}') from None
    try:
        base = graph.with_values(study.base_values)
        base.check()
    except ConfigError as error:
        raise StudyError(f'base.values: {error}') from None
    for parameter in study.parameters:
        for value in parameter.extremes():
            try:
                base.with_values({parameter.path: value}).check()
            except ConfigError as error:
                text = str(error)
                # The error names the field (its dotted path, or the file's field): say
                # which study parameter and value led there.
                raise StudyError(f'parameters.{parameter.path}: value {value!r}: {text}') \
                    from None
    return base


def load_study(path, check=True):
    """Read and check the study file at ``path`` (`parse_study`)."""
    try:
        content = load_yaml(path, 'study file')
    except ConfigError as error:
        raise StudyError(str(error)) from None
    study = parse_study(content, os.path.basename(str(path)), check)
    return study
