"""A study's run on the ROS graph: the plant and controller nodes in lock-step, private domain.

For a study with ``mode: ros_graph``: the run's graph (`closed_loop.Graph`, its values set)
is written out as files (a parameter file whose plant and controller sections name the
run's model and program files, written beside it) and run by ``bringup --local
--timing-mode lockstep --duration D`` in a process of its own: the nodes as separate
processes over DDS on this host, on a ROS domain id no other graph of the package holds
(`ros_domain`; a run's environment drops ROS_DOMAIN_ID so that parallel runs each claim
one). Its figures are read from bringup's summary: the same names as the closed loop's
(`closed_loop.run_closed_loop`), the wall time being the graph's. Nothing here imports ROS:
the nodes run in the bringup process's children.
"""

import math
import os
import re
import subprocess
import sys
import tempfile

import yaml

from ..closed_loop import CONTROLLER_FIELDS, PLANT_FIELDS

TIMEOUT_FACTOR = 60.0        # wall seconds allowed per simulated second, plus START_TIMEOUT
START_TIMEOUT = 240.0        # s: the nodes' start on a loaded machine


def _nested(parameters, fields):
    """Return a ROS parameter section from flattened names; floats as floats (ROS types them)."""
    section = {}
    for name, value in parameters.items():
        setting = fields.get(name)
        if setting is not None and setting.kind == 'float' and isinstance(value, int) \
                and not isinstance(value, bool):
            value = float(value)
        if setting is not None and setting.kind == 'floats' and isinstance(value, list):
            value = [float(x) for x in value]
        node = section
        *path, last = name.split('.')
        for key in path:
            node = node.setdefault(key, {})
        node[last] = value
    return section


def _anchored(model, graph):
    """Return a copy of a model file's content whose relative ``urdf:`` path is absolute.

    A relative path starts at the model file's directory (``graph.model_directory``), not
    at the copy's; ``-`` (the robot_description topic) and ``package://`` URIs stay.
    """
    model = dict(model)
    urdf = model.get('urdf')
    if isinstance(urdf, str) and urdf != '-' and not urdf.startswith('package://') \
            and not os.path.isabs(urdf):
        model['urdf'] = os.path.join(graph.model_directory, urdf)
    return model


def write_graph(graph, directory):
    """Write ``graph`` as a parameter file and its model and program files; return its path."""
    def dump(name, content):
        path = os.path.join(directory, name)
        with open(path, 'w', encoding='utf-8') as stream:
            yaml.safe_dump(content, stream)
        return path
    plant_model = dump('plant_model.yaml', _anchored(graph.plant_model, graph))
    control_model = (plant_model if graph.control_model == graph.plant_model else
                     dump('controller_model.yaml', _anchored(graph.control_model, graph)))
    programs = dump('programs.yaml', graph.programs)
    plant = dict(graph.plant, model=plant_model)
    controller = dict(graph.controller, model=control_model, program_file=programs)
    return dump('params.yaml', {
        'plant': {'ros__parameters': _nested(plant, PLANT_FIELDS)},
        'controller': {'ros__parameters': _nested(controller, CONTROLLER_FIELDS)}})


def parse_summary(text):
    """Return the figures of bringup's summary ``text`` (`closed_loop` names)."""
    def line(label):
        match = re.search(rf'^\s+{label}\s+(.*)$', text, re.MULTILINE)
        if match is None:
            raise RuntimeError(f'bringup printed no {label!r} line:\n{text[-2000:]}')
        return match.group(1)
    figures = {'simulated_time': float(line('simulated time').split()[0]),
               'wall_time': float(line('wall time').split()[0]),
               'real_time_factor': float(line('real-time factor').split()[0]),
               'control_ticks': int(line('control ticks').split()[0]),
               'program': line('program').split()[0]}
    squares, largest = 0.0, 0.0
    for name, rms, peak in re.findall(r'(\w+): RMS (\S+) \w+, max (\S+) \w+',
                                      line('program residual')):
        figures[f'residual_rms.{name}'] = float(rms)
        figures[f'residual_max.{name}'] = float(peak)
        squares += float(rms) ** 2
        largest = max(largest, float(peak))
    figures['residual_rms'] = math.sqrt(squares)
    figures['residual_max'] = largest
    for name, value in re.findall(r'(\w+): (\S+) N m', line('peak torque')):
        figures[f'effort_peak.{name}'] = float(value)
    level, _, message = line('controller').partition(': ')
    figures['fault'] = message if level in ('ERROR', 'STALE') else ''
    figures['fault_time'] = math.nan
    return figures


def run_ros_graph(graph, duration, record=None):
    """Run ``graph`` as the ROS graph for ``duration`` [s]; return its figures (module doc).

    ``record``: an MCAP path (bringup's ``--record``). Raises RuntimeError with bringup's
    output when it fails.
    """
    with tempfile.TemporaryDirectory(prefix='fm_run_') as directory:
        params = write_graph(graph, directory)
        command = [sys.executable, '-m', 'flexible_manipulator.nodes.bringup', '--local',
                   '--timing-mode', 'lockstep', '--duration', repr(float(duration)),
                   '--params-file', params]
        if record is not None:
            command += ['--record', record]
        env = dict(os.environ)
        env.pop('ROS_DOMAIN_ID', None)          # each run claims a private domain
        timeout = START_TIMEOUT + TIMEOUT_FACTOR * duration
        result = subprocess.run(command, capture_output=True, text=True, env=env,
                                timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(f'bringup exited with {result.returncode}: '
                           f'{(result.stderr or result.stdout)[-1500:]}')
    figures = parse_summary(result.stdout)
    # The summary's statistics come from the controller's last diagnostics; on a loaded
    # machine bringup once reported 1 tick for 0.4 s: such a run is an error, not a result.
    expected = round(duration / graph.plant_parameters()['update_period'])
    if figures['control_ticks'] < 0.9 * expected:
        raise RuntimeError(f"bringup's summary counts {figures['control_ticks']} control ticks "
                           f'for {figures["simulated_time"]} s of simulated time (expected '
                           f'about {expected}): its statistics are incomplete; run it again '
                           '(sweep --retry-failed)')
    return figures
