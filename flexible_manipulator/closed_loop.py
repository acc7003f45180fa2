"""A simulation graph as data, and its closed loop run without ROS.

A graph's parameter file (config/sim.yaml: a ``plant`` and a ``controller`` section) names
a model file and a program file. `Graph` holds the four as data: the two sections
flattened to parameter names (``uncertainty.stiffness``), the model and program files as
parsed YAML. Any field can be changed by its dotted path (`Graph.with_values`):

* ``plant.<parameter>``: the plant's parameters that act on a run (`PLANT_FIELDS`:
  integrator, step, update period, initial state);
* ``controller.<parameter>``: the controller's (`CONTROLLER_FIELDS`: every setting of
  `ControllerSettings`, ``program_file``, ``active_program``);
* ``model.<path>``: the arm's model file, the plant's and (when both nodes name the same
  file, as config/sim.yaml does) the controller's: a design change the controller is
  built for; ``plant_model.<path>``: the plant's copy only (the arm is not what the
  controller's model says: a mismatch);
* ``program.<path>``: the program file (``program.programs.lambda_circle.gains.alpha``).

A path into a file is keys and list indices: ``model.links[1].payload.mass`` (or
``model.links.1.payload.mass``); a parameter may be indexed too
(``plant.initial_positions[0]``). `Graph.check` builds what can be built without running
(the models, the programs, every parameter's check) and raises `ConfigError` naming the
field; `build_loop` builds the run (the controller as the node builds it, the plant's
simulation from the plant's initial state, `plant_config.arm_initial_state`) and
`run_closed_loop` runs it in lock-step (`control.lockstep`: what ``bringup --timing-mode
lockstep`` does over DDS, one period per command) and returns bringup's summary figures.
"""

from collections import namedtuple
import copy
from dataclasses import dataclass, replace
import math
import os
import re
import time
import warnings

import numpy as np

from .control.lockstep import run_lockstep
from .control.program_config import parse_program, resolve_program_path
from .control.program_controller import build_controller, ControllerSettings
from .mechanics.simulation import Simulation
from .config_checks import ConfigError
from .config_files import load_yaml, resolve_config_path, resolve_model_path
from .model_config import model_from_dict, ModelWarning
from .plant_config import arm_initial_state, ARM_PLANT_SETTINGS, ARM_STATE_SETTINGS
from .settings import flatten, from_parameters, schema, Setting

NAMESPACES = {
    'plant': "the plant's parameters",
    'controller': "the controller's parameters",
    'model': "the arm's model file (the plant's, and the controller's when it is the same)",
    'plant_model': "the plant's model file only (a mismatch)",
    'program': 'the program file',
}
# The plant's parameters that act on a run without ROS (the others: topics, timing, TF).
PLANT_FIELDS = {s.name: s for s in ARM_PLANT_SETTINGS + ARM_STATE_SETTINGS
                if s.name in ('integrator', 'integration_step', 'step_check', 'update_period',
                              'initial_positions', 'initial_velocities', 'initial_modes')}
# The controller node's own parameters that choose the programs (`nodes.controller_node`).
PROGRAM_FILE = Setting('program_file', 'programs_two_link_flexible',
                       'Program file: a path, or the name of a file in config/.')
ACTIVE_PROGRAM = Setting('active_program', '',
                         'Program to track (a name in the program file; empty: its default).')
CONTROLLER_FIELDS = {s.name: s for s in (*schema(ControllerSettings), PROGRAM_FILE,
                                         ACTIVE_PROGRAM)}
_TOKEN = re.compile(r'([^.\[\]]+)|\[(\d+)\]')

Loop = namedtuple('Loop', 'plant_model controller simulation period measured row_names '
                          'input_names active notes')


def parse_path(path):
    """Split a dotted path into (namespace, keys); `ConfigError` naming it if malformed.

    ``keys``: for a file (model, plant_model, program), keys and int indices; for a
    parameter (plant, controller), [name] or [name, index].
    """
    if not isinstance(path, str) or not path:
        raise ConfigError(f'{path!r}: expected a dotted path such as model.links[1].mass')
    namespace, _, rest = path.partition('.')
    if namespace not in NAMESPACES:
        raise ConfigError(f'{path}: unknown namespace {namespace!r} (known: '
                          f'{", ".join(NAMESPACES)})')
    if not rest:
        raise ConfigError(f'{path}: names no field of {NAMESPACES[namespace]}')
    if namespace in ('plant', 'controller'):
        match = re.fullmatch(r'([A-Za-z_][\w.]*?)(?:\[(\d+)\])?', rest)
        fields = PLANT_FIELDS if namespace == 'plant' else CONTROLLER_FIELDS
        if match is None or match.group(1) not in fields:
            name = match.group(1) if match else rest
            raise ConfigError(f'{path}: unknown {namespace} parameter {name!r} (known: '
                              f'{", ".join(sorted(fields))})')
        keys = [match.group(1)] + ([int(match.group(2))] if match.group(2) else [])
        setting = fields[keys[0]]
        if len(keys) > 1 and setting.kind not in ('floats', 'strings'):
            raise ConfigError(f'{path}: {keys[0]} is not an array, it takes no index')
        return namespace, keys
    keys, position = [], 0
    for match in _TOKEN.finditer(rest):
        if match.start() != position and rest[position:match.start()] != '.':
            break
        keys.append(match.group(1) if match.group(1) is not None else int(match.group(2)))
        position = match.end()
    if position != len(rest) or not keys:
        raise ConfigError(f'{path}: not a dotted path of keys and [index]es')
    return namespace, [int(k) if isinstance(k, str) and k.isdigit() else k for k in keys]


def _set(document, keys, value, path):
    """Set ``document[keys...] = value`` (a new key only in an existing mapping)."""
    node = document
    for depth, key in enumerate(keys):
        last = depth == len(keys) - 1
        if isinstance(node, dict):
            if key not in node and not last:
                raise ConfigError(f'{path}: no field {key!r} here (fields: '
                                  f'{", ".join(map(str, node))})')
        elif isinstance(node, list):
            if not isinstance(key, int) or not 0 <= key < len(node):
                raise ConfigError(f'{path}: index {key!r} is out of range (a list of '
                                  f'{len(node)})')
        else:
            raise ConfigError(f'{path}: {keys[depth - 1]!r} holds {node!r}, not a mapping '
                              'or a list')
        if last:
            node[key] = value
        else:
            node = node[key]


@dataclass
class Graph:
    """A simulation graph as data (module doc); build it with `load_graph`."""

    plant: dict                 # flattened plant parameters
    controller: dict            # flattened controller parameters
    plant_model: dict           # the plant's model file, parsed
    control_model: dict         # the controller's model file, parsed
    programs: dict              # the program file, parsed
    same_model: bool            # both nodes name the same model file
    model_directory: str        # where a model file's relative urdf: path starts
    source: str                 # the parameter file

    def with_values(self, values):
        """Return a copy with ``values`` {dotted path: value} set (`ConfigError` naming one)."""
        graph = replace(self, plant=dict(self.plant), controller=dict(self.controller),
                        plant_model=copy.deepcopy(self.plant_model),
                        control_model=copy.deepcopy(self.control_model),
                        programs=copy.deepcopy(self.programs))
        for path, value in values.items():
            namespace, keys = parse_path(path)
            if namespace in ('plant', 'controller'):
                parameters = getattr(graph, namespace)
                fields = PLANT_FIELDS if namespace == 'plant' else CONTROLLER_FIELDS
                if len(keys) == 1:
                    parameters[keys[0]] = value
                else:
                    current = parameters.get(keys[0], fields[keys[0]].default)
                    if not isinstance(current, list):
                        raise ConfigError(f'{path}: {namespace}.{keys[0]} is unset, an index '
                                          'into it means nothing')
                    current = list(current)
                    _set(current, keys[1:], value, path)
                    parameters[keys[0]] = current
            elif namespace == 'program':
                _set(graph.programs, keys, value, path)
            else:
                _set(graph.plant_model, keys, value, path)
                if namespace == 'model' and graph.same_model:
                    _set(graph.control_model, keys, value, path)
        return graph

    def plant_parameters(self):
        """Return the plant's run parameters, checked ({name: value}, defaults filled in)."""
        return _checked('plant', PLANT_FIELDS, self.plant)

    def controller_parameters(self):
        """Return the controller's parameters, checked ({name: value}, as given)."""
        given = {k: v for k, v in self.controller.items() if k in CONTROLLER_FIELDS}
        checked = _checked('controller', CONTROLLER_FIELDS, given)
        return {k: checked[k] for k in given}

    def models(self):
        """Return the plant's and the controller's models, built (one object if the same file).

        Returns (plant model, control model, notes): notes are the models' warnings.
        """
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always', ModelWarning)
            plant = model_from_dict(self.plant_model, 'model', directory=self.model_directory)
            control = (plant if self.control_model == self.plant_model else
                       model_from_dict(self.control_model, 'controller model',
                                       directory=self.model_directory))
        notes = [str(w.message) for w in caught if issubclass(w.category, ModelWarning)]
        return plant, control, notes

    def program_set(self, model):
        """Return (programs, active name) of the program file on ``model``, each parsed.

        `ConfigError` naming the field (``program: programs.NAME.gains.alpha: ...``).
        """
        content = self.programs
        if not isinstance(content, dict) or not isinstance(content.get('programs'), dict) \
                or not content['programs']:
            raise ConfigError('program: programs: expected a mapping of named programs')
        programs = content['programs']
        for name, spec in programs.items():
            try:
                parse_program(model, spec, f'programs.{name}')
            except ConfigError as error:
                raise ConfigError(f'program: {error}') from None
        active = self.controller.get('active_program') or content.get('default') \
            or next(iter(programs))
        if active not in programs:
            raise ConfigError(f'controller.active_program: unknown program {active!r} (in '
                              f'the program file: {", ".join(map(str, programs))})')
        return programs, active

    def check(self):
        """Build what can be built without running; `ConfigError` naming the field."""
        self.plant_parameters()
        settings = self.controller_parameters()
        plant, control, _ = self.models()
        self.program_set(control)
        if plant.joint_names[:plant.n_joints] != control.joint_names[:control.n_joints] or \
                list(plant.mode_names) != list(control.mode_names):
            raise ConfigError('plant_model: its joints and modes must be the controller '
                              "model's (the loop passes them by position)")
        return settings


def _checked(namespace, fields, given):
    """Run each setting's check on the given values; defaults for the others."""
    values = {}
    for name, setting in fields.items():
        value = given.get(name, setting.default_for())
        if setting.kind == 'float' and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)                # YAML writes 1 for 1.0
        if setting.kind in ('floats', 'strings') and value is not None \
                and not isinstance(value, (list, tuple)):
            raise ConfigError(f'{namespace}.{name}: expected a list, got {value!r}')
        if setting.kind == 'floats' and value is not None and not all(
                isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
            raise ConfigError(f'{namespace}.{name}: expected numbers, got {value!r}')
        if setting.kind == 'strings' and value is not None and not all(
                isinstance(x, str) for x in value):
            raise ConfigError(f'{namespace}.{name}: expected names, got {value!r}')
        try:
            values[name] = setting.validate(value)
            if setting.kind in ('float', 'int', 'str') and setting.check is None \
                    and setting.choices is None:
                _kind(values[name], setting.kind, name)
        except ConfigError as error:
            raise ConfigError(f'{namespace}.{error}') from None
    return values


def _kind(value, kind, name):
    """Refuse a value of the wrong type for a setting without a check of its own."""
    types = {'float': (int, float), 'int': (int,), 'str': (str,)}[kind]
    if isinstance(value, bool) or not isinstance(value, types):
        raise ConfigError(f'{name}: expected a {kind}, got {value!r}')


def load_graph(params_file='sim'):
    """Read a graph's parameter file (a path or a name in config/) into a `Graph`.

    The plant's ``model`` (default two_link_flexible) and the controller's ``model`` and
    ``program_file`` are read as the nodes read them (`model_config.resolve_model_path`).
    """
    path = resolve_config_path(params_file, 'config')
    content = load_yaml(path, 'parameter file')
    sections = {}
    for node in ('plant', 'controller'):
        section = content.get(node)
        if not isinstance(section, dict) or not isinstance(section.get('ros__parameters'),
                                                           dict):
            raise ConfigError(f'{path}: {node}.ros__parameters: required mapping is missing')
        sections[node] = flatten(section['ros__parameters'])
    plant_file = resolve_model_path(str(sections['plant'].get('model', 'two_link_flexible')))
    control_file = resolve_model_path(str(sections['controller'].get('model', plant_file)))
    program_file = resolve_program_path(str(sections['controller'].get(
        'program_file', PROGRAM_FILE.default)))
    plant_model = load_yaml(plant_file)
    same = os.path.abspath(plant_file) == os.path.abspath(control_file)
    return Graph(plant=sections['plant'], controller=sections['controller'],
                 plant_model=plant_model,
                 control_model=copy.deepcopy(plant_model) if same else load_yaml(control_file),
                 programs=load_yaml(program_file, 'program file'), same_model=same,
                 model_directory=os.path.dirname(os.path.abspath(plant_file)),
                 source=str(path))


def build_loop(graph, all_programs=False):
    """Build the closed loop of ``graph``: a `Loop` (`ConfigError` naming a bad field).

    The controller as the controller node builds it (`build_controller`: with the modes
    estimated, under the run-time model test), enabled; the plant's `Simulation` from its
    initial state; the loop's period is the plant's ``update_period`` (one command per
    state, as in lock-step). The controller node admits every program of the file (it may
    switch at run time); a run tracks one, so only the active program is built and
    checked unless ``all_programs`` (the others are parsed: a bad field is still refused).
    The start-up checks of programs that never run were three quarters of a run's cost
    on the demo's file (bench/README.md, bench_studies.py).
    """
    plant_parameters = graph.plant_parameters()
    controller_parameters = graph.controller_parameters()
    plant, control, notes = graph.models()
    programs, active = graph.program_set(control)
    if not all_programs:
        programs = {active: programs[active]}
    settings = from_parameters(ControllerSettings, controller_parameters)
    controller = build_controller(control, programs, settings, active,
                                  source=str(graph.controller.get('program_file', 'program')))
    controller.enable()
    q0, v0 = arm_initial_state(plant, plant_parameters)
    simulation = Simulation(plant, plant_parameters['integration_step'],
                            plant_parameters['integrator'], q0, v0,
                            refuse_unstable=plant_parameters['step_check'] == 'refuse')
    measured = controller.settings.elastic_state == 'measured' and controller.following is None
    return Loop(plant, controller, simulation, plant_parameters['update_period'], measured,
                list(controller.entry.row_names),
                [plant.joint_names[i] for i in range(plant.nu)], active, notes)


def run_closed_loop(graph, duration, record=None, all_programs=False):
    """Run ``graph``'s closed loop for ``duration`` [s]; return its summary figures.

    The figures of bringup's summary (`nodes.bringup`), per run: ``simulated_time`` [s],
    ``wall_time`` [s] (the loop alone, building excluded), ``real_time_factor``,
    ``control_ticks``; the program's residual phi over the run: per row
    ``residual_rms.<row>``, ``residual_max.<row>`` [m or rad] (bringup's), and over the
    rows ``residual_rms`` (the RMS of |phi|, the rows' Euclidean norm: the root of the sum
    of the rows' mean squares) and ``residual_max`` (the largest |phi_i| of any row);
    ``effort_peak.<input>``
    [N m or N]; ``program``; ``fault`` ('' if none: the controller's fault or the plant's
    failure, which end the run) and ``fault_time`` [s]. ``record``: a path to write the
    run's MCAP recording to (joint and modal states, the efforts applied), or None;
    ``all_programs``: `build_loop`'s.
    """
    loop = build_loop(graph, all_programs)
    rows, inputs = loop.row_names, loop.input_names
    squares, largest = np.zeros(len(rows)), np.zeros(len(rows))
    peak = np.zeros(len(inputs))
    efforts = []

    def on_tick(status, applied):
        residual = np.abs(status.residual)
        squares[:] += residual ** 2
        np.maximum(largest, residual, out=largest)
        np.maximum(peak, np.abs(applied), out=peak)
        if record is not None:
            efforts.append(applied.copy())

    ticks = int(round(duration / loop.period))
    start = time.perf_counter()
    run = run_lockstep(loop.controller, loop.simulation, ticks * loop.period, loop.period,
                       loop.measured, on_tick=on_tick)
    wall = time.perf_counter() - start
    simulated = run.ticks * loop.period
    figures = {'simulated_time': simulated, 'wall_time': wall,
               'real_time_factor': simulated / wall if wall > 0 else math.nan,
               'control_ticks': run.ticks,
               'residual_rms': float(np.sqrt(squares.sum() / run.ticks)) if run.ticks
               else math.nan, 'residual_max': run.peak,
               'program': loop.active, 'fault': run.fault, 'fault_time': run.fault_time}
    count = max(run.ticks, 1)
    for name, total, top in zip(rows, squares, largest):
        figures[f'residual_rms.{name}'] = float(np.sqrt(total / count)) if run.ticks \
            else math.nan
        figures[f'residual_max.{name}'] = float(top) if run.ticks else math.nan
    for name, value in zip(inputs, peak):
        figures[f'effort_peak.{name}'] = float(value)
    if record is not None:
        # The recording is the same run replayed open loop under the efforts it applied
        # (`Simulation` is deterministic: the same states bit for bit). Its writer needs
        # the ROS message types: imported only when a recording is asked for.
        from .recording.synthetic import record_simulation
        sim = loop.simulation
        record_simulation(record, loop.plant_model, np.array(efforts).reshape(-1, len(inputs)),
                          loop.period, sim.step_size, sim._stepper.method,
                          sim.initial_state[:sim.nq], sim.initial_state[sim.nq:])
    return figures
