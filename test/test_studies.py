"""Studies (`flexible_manipulator.studies`): the file, the local runs, resume, a dying worker.

Expected values: each run's figures are those of `closed_loop.run_closed_loop` on the same
graph in this process (deterministic: the same numbers bit for bit, whichever process runs
it); the runs of a study file follow the documented expansion (`studies.spec`: grid
product in file order, ``draws`` per point, draw d from (seed, d) alone); a bad file is
refused naming the field (exit status 2); a study interrupted or losing a worker completes
with every run's row. The Ray runs are in test_studies_ray.py.
"""

import math
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import yaml

from conftest import REPO
from flexible_manipulator.closed_loop import load_graph, run_closed_loop
from flexible_manipulator.studies.spec import load_study, parse_study, StudyError

pytest.importorskip('pyarrow', reason='pyarrow (pip only: requirements-ros.txt) is not '
                    'installed: a study writes its table with it')
from flexible_manipulator.studies.runner import run_study  # noqa: E402 - after the skip
from flexible_manipulator.studies.table import JOURNAL, read_table  # noqa: E402

DURATION = 0.2          # s per run: 100 control periods of config/sim.yaml
# Columns that depend on the machine or the process, not on the run.
VOLATILE = ('wall_time', 'real_time_factor', 'run_seconds', 'worker', 'worker_warmups',
            'worker_run', 'node')
SMALL = {'duration': DURATION, 'parameters': {'model.links[1].payload.mass': [0.05, 0.2],
                                              'controller.active_program': ['lambda_circle',
                                                                            'joint_sine']}}


def write(path, content):
    """Write a study file; return its path as text."""
    path.write_text(yaml.safe_dump(content))
    return str(path)


def stable(rows):
    """The rows without their machine-dependent columns, NaN made comparable."""
    return [{k: ('nan' if isinstance(v, float) and math.isnan(v) else v)
             for k, v in row.items() if k not in VOLATILE} for row in rows]


def sweep(*arguments, **options):
    """Start the sweep command (``python -m``) in a process; returns the Popen."""
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get('PYTHONPATH', ''))
    # SIGINT as a terminal sends it: a suite started in the background by a shell without
    # job control inherits it ignored, and an ignored SIGINT stays ignored across exec.
    return subprocess.Popen([sys.executable, '-m', 'flexible_manipulator.studies', *arguments],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=options.get('cwd', REPO),
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def journal_rows(directory):
    """Rows the study has journaled so far."""
    path = os.path.join(directory, JOURNAL)
    if not os.path.exists(path):
        return []
    with open(path) as stream:
        return [line for line in stream if line.strip()]


@pytest.fixture(scope='module')
def reference():
    """The figures of SMALL's four runs, computed here by the closed loop directly."""
    base = load_graph('sim')
    figures = {}
    for mass in (0.05, 0.2):
        for program in ('lambda_circle', 'joint_sine'):
            figures[mass, program] = run_closed_loop(base.with_values(
                {'model.links[1].payload.mass': mass, 'controller.active_program': program}),
                DURATION)
    return figures


# -- the study file -------------------------------------------------------------------------
@pytest.mark.parametrize('content, field', [
    ({'parameters': {'plant.integrator': ['rk4']}}, 'duration'),
    ({'duration': 1.0, 'parameters': {'modle.links[1].mass': [1.0]}}, 'parameters.modle'),
    ({'duration': 1.0, 'parameters': {'model.links[1].payload.mas': [1.0]}},
     'parameters.model.links[1].payload.mas'),
    ({'duration': 1.0, 'parameters': {'model.links[5].mass': [1.0]}},
     'parameters.model.links[5].mass'),
    ({'duration': 1.0, 'parameters': {'controller.control_period': [0.002, -1.0]}},
     'parameters.controller.control_period'),
    ({'duration': 1.0, 'parameters': {'controller.gain': [1.0]}}, 'parameters.controller.gain'),
    ({'duration': 1.0, 'parameters': {'plant.initial_positions[0]': {'uniform': [1.0, 0.0]}}},
     'parameters.plant.initial_positions[0].uniform'),
    ({'duration': 1.0, 'parameters': {'program.programs.hold.gains.alpha': [6.0, 0.0]}},
     'parameters.program.programs.hold.gains.alpha'),
    ({'duration': 1.0, 'parameters': {'plant.integrator': ['rk5']}},
     'parameters.plant.integrator'),
    ({'duration': 1.0, 'draws': 0, 'parameters': {'plant.integrator': ['rk4']}}, 'draws'),
    ({'duration': 1.0, 'mode': 'ros', 'parameters': {'plant.integrator': ['rk4']}}, 'mode'),
    ({'duration': 1.0, 'base': {'values': {'model.links[0].length': -1}},
      'parameters': {'plant.integrator': ['rk4']}}, 'base.values'),
])
def test_a_bad_study_is_refused_naming_the_field(content, field):
    with pytest.raises(StudyError) as caught:
        parse_study(content)
    assert str(caught.value).startswith(field), str(caught.value)


def test_the_command_exits_2_naming_the_field(tmp_path):
    path = write(tmp_path / 'bad.yaml', {'duration': 1.0, 'parameters': {
        'model.links[1].beam.bending_stiffness[0]': [4.7, -3.0]}})
    process = sweep(path)
    _, error = process.communicate(timeout=300)
    assert process.returncode == 2
    assert 'parameters.model.links[1].beam.bending_stiffness[0]: value -3.0' in error
    assert not os.path.exists(tmp_path / 'bad.results')      # nothing ran


def test_runs_are_the_grid_product_with_common_random_draws():
    study = parse_study({'duration': 1.0, 'seed': 5, 'draws': 3, 'parameters': {
        'model.links[1].payload.mass': [0.05, 0.1],
        'plant.initial_positions[0]': {'uniform': [-0.3, -0.1]},
        'controller.delay_periods': {'grid': [0, 1, 2]}}})
    runs = study.runs()
    assert len(runs) == 2 * 3 * 3
    # the last grid parameter varies fastest, the draws fastest of all
    assert [r['values']['controller.delay_periods'] for r in runs[:6]] == [0, 0, 0, 1, 1, 1]
    expected = [float(np.random.default_rng([5, d]).uniform(-0.3, -0.1)) for d in range(3)]
    for run in runs:
        assert run['values']['plant.initial_positions[0]'] == expected[run['draw']]
    assert len({r['key'] for r in runs}) == len(runs)
    assert [r['key'] for r in study.runs()] == [r['key'] for r in runs]   # reproducible


def test_a_run_builds_the_active_program_alone_with_the_same_result():
    """`closed_loop.build_loop` builds the active program only (a run tracks one); the
    controller node builds the whole file. Expected: the same run, figure for figure."""
    graph = load_graph('sim').with_values({'controller.active_program': 'tip_circle'})
    alone = run_closed_loop(graph, DURATION)
    every = run_closed_loop(graph, DURATION, all_programs=True)
    assert stable([alone]) == stable([every])
    assert alone['control_ticks'] == 100 and alone['program'] == 'tip_circle'


def test_the_example_study_checks():
    """examples/study.yaml (doc/studies.md): 3 x 3 grid points x 4 draws."""
    study = load_study(os.path.join(REPO, 'examples', 'study.yaml'))
    assert len(study.runs()) == 36
    process = sweep(os.path.join('examples', 'study.yaml'), '--check')
    output, _ = process.communicate(timeout=300)
    assert process.returncode == 0 and '36 runs of 2 s (closed_loop)' in output


# -- running --------------------------------------------------------------------------------
@pytest.mark.slow
def test_local_study_gives_the_closed_loops_figures_and_resumes(tmp_path, reference):
    study = parse_study(dict(SMALL, parameters=dict(SMALL['parameters'], **{
        # 0.0007 s: 2 ms is no whole number of steps: the run fails, as a row
        'plant.integration_step': [0.0005, 0.0007]})), 'small')
    output = str(tmp_path / 'out')
    outcome = run_study(study, output, workers=2, stream=None)
    assert (outcome.total, outcome.ran, outcome.failed) == (8, 8, 4)
    rows = read_table(output)
    assert [row['run'] for row in rows] == list(range(8))
    for row in rows:
        key = (row['model.links[1].payload.mass'], row['controller.active_program'])
        if row['plant.integration_step'] == 0.0007:
            assert row['status'] == 'error' and 'whole number' in row['error']
            continue
        assert row['status'] == 'ok' and row['error'] == ''
        for name, value in reference[key].items():
            if name not in VOLATILE:
                assert row[name] == value or (value != value and row[name] != row[name]), name
    # kernels warmed once per worker process, not per run
    assert {row['worker_warmups'] for row in rows} == {1}
    assert max(row['worker_run'] for row in rows) >= 2
    assert len(outcome.figures) == 2 and all(os.path.getsize(f) > 0 for f in outcome.figures)
    again = run_study(study, output, workers=2, stream=None)
    assert (again.skipped, again.ran) == (8, 0)
    assert stable(read_table(output)) == stable(rows)


@pytest.mark.slow
def test_interrupted_study_resumes_to_the_same_table(tmp_path, reference):
    content = dict(SMALL, draws=2, parameters=dict(SMALL['parameters'], **{
        'plant.initial_velocities[0]': {'normal': [0.3716835, 0.01]}}))
    path = write(tmp_path / 'study.yaml', content)
    output = str(tmp_path / 'study.results')
    process = sweep(path, '--workers', '1')
    deadline = time.monotonic() + 240
    while len(journal_rows(output)) < 2 and process.poll() is None:
        assert time.monotonic() < deadline, 'no run finished in 240 s'
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    _, error = process.communicate(timeout=120)
    assert process.returncode == 130, error[-2000:]
    done = len(read_table(output))
    assert 2 <= done < 8                        # interrupted with runs left
    process = sweep(path, '--workers', '2')
    _, error = process.communicate(timeout=300)
    assert process.returncode == 0, error[-2000:]
    assert f'{done} of 8 runs already done: skipped' in error
    rows = read_table(output)
    assert [r['status'] for r in rows] == ['ok'] * 8
    # the same runs from scratch, in this process: the same figures
    fresh = run_study(load_study(path), str(tmp_path / 'fresh'), workers=2, stream=None,
                      plots=False)
    assert fresh.ran == 8
    assert stable(read_table(tmp_path / 'fresh')) == stable(rows)


@pytest.mark.slow
def test_a_killed_worker_does_not_fail_the_study(tmp_path, reference):
    path = write(tmp_path / 'study.yaml', dict(SMALL, duration=1.0))
    output = str(tmp_path / 'study.results')
    process = sweep(path, '--workers', '2')
    deadline = time.monotonic() + 240
    while not journal_rows(output):
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.1)
    children = _children(process.pid)
    workers = [pid for pid in children if _running_python(pid)]
    assert workers, children
    os.kill(workers[-1], signal.SIGKILL)           # a worker dies mid-study
    _, error = process.communicate(timeout=300)
    assert process.returncode == 0, error[-2000:]
    rows = read_table(output)
    assert [r['status'] for r in rows] == ['ok'] * 4, [r['error'] for r in rows]
    # the pool was started anew: runs were done by processes started after the kill
    assert {int(r['worker'].rsplit(':', 1)[1]) for r in rows} - set(children)
    base = load_graph('sim')
    for row in rows:
        expected = run_closed_loop(base.with_values(
            {'model.links[1].payload.mass': row['model.links[1].payload.mass'],
             'controller.active_program': row['controller.active_program']}), 1.0)
        assert row['residual_rms'] == expected['residual_rms']
        assert row['control_ticks'] == 500


@pytest.mark.slow
def test_a_ros_graph_study_runs_the_nodes_in_lockstep(tmp_path):
    """mode ros_graph: the plant and controller nodes, over DDS on a private domain (claimed
    by bringup --local as the suite's nodes claim theirs, `ros_domain`), lock-step.

    Expected: the closed loop's run of the same graph names the same rows and has the
    same residual within a factor 1.5 (joint_sine from config/sim.yaml's start, which is
    lambda_circle's: a transient of ~0.05 rad on the elbow). Not bit for bit: the ROS run's
    summary counts its ticks up to the monitor's pause, a few periods past the duration,
    and its figures are printed to 3 digits (bringup's).
    """
    study = parse_study({'duration': 0.4, 'mode': 'ros_graph', 'parameters': {
        'model.links[1].payload.mass': [0.2], 'controller.active_program': ['joint_sine']}},
        'ros')
    outcome = run_study(study, str(tmp_path / 'out'), workers=1, stream=None, plots=False)
    row, = read_table(tmp_path / 'out')
    assert outcome.failed == 0 and row['status'] == 'ok', row['error']
    assert 200 <= row['control_ticks'] <= 240
    closed = run_closed_loop(load_graph('sim').with_values(
        {'model.links[1].payload.mass': 0.2, 'controller.active_program': 'joint_sine'}), 0.4)
    rows = sorted(k for k in closed if k.startswith('residual_rms.'))
    assert rows == sorted(k for k in row if k.startswith('residual_rms.') and row[k] is not None)
    assert closed['residual_rms.elbow'] > 0.01
    ratios = [row[k] / closed[k] for k in rows]
    assert all(1 / 1.5 < ratio < 1.5 for ratio in ratios), ratios
    assert row['program'] == 'joint_sine'


def test_a_ros_graph_model_copy_keeps_its_relative_urdf(tmp_path):
    """mode ros_graph writes the graph's model files elsewhere (a temporary directory): a
    relative ``urdf:`` path (config/models/ur5e_flexible_forearm.yaml's
    ``../urdf/ur5e_like.urdf``) must still name the original's file, so the copy loads the
    same model; ``-`` (the robot_description topic) stays as it is."""
    import dataclasses
    from flexible_manipulator.model_config import load_model
    from flexible_manipulator.studies.ros_graph import write_graph
    source = os.path.join(REPO, 'config', 'models', 'ur5e_flexible_forearm.yaml')
    content = yaml.safe_load(open(source))
    assert not os.path.isabs(content['urdf'])
    graph = dataclasses.replace(load_graph('sim'), plant_model=content,
                                control_model=dict(content, urdf='-'),
                                model_directory=os.path.dirname(source))
    params = yaml.safe_load(open(write_graph(graph, str(tmp_path))))
    plant_file = params['plant']['ros__parameters']['model']
    copy = yaml.safe_load(open(plant_file))
    assert copy['urdf'] == os.path.join(os.path.dirname(source), content['urdf'])
    assert load_model(plant_file).joint_names == load_model(source).joint_names
    control_file = params['controller']['ros__parameters']['model']
    assert yaml.safe_load(open(control_file))['urdf'] == '-'


def test_a_recorded_run_writes_the_runs_states_to_mcap(tmp_path):
    """record.mcap: the run's recording holds the closed loop's states (expected: the same
    graph's loop built here and run for as many periods, its final state bit for bit)."""
    from flexible_manipulator.closed_loop import build_loop
    from flexible_manipulator.control.lockstep import run_lockstep
    from flexible_manipulator.recording.series import read
    study = parse_study({'duration': 0.1, 'record': {'mcap': True}, 'parameters': {
        'model.links[1].payload.mass': [0.2]}}, 'recorded')
    run_study(study, str(tmp_path / 'out'), workers=1, stream=None, plots=False)
    row, = read_table(tmp_path / 'out')
    assert row['status'] == 'ok' and os.path.isfile(row['mcap'])
    joints = read(row['mcap']).first('/joint_states')
    assert len(joints.times) == 51                  # t = 0 and 50 periods of 2 ms
    loop = build_loop(load_graph('sim').with_values({'model.links[1].payload.mass': 0.2}))
    run_lockstep(loop.controller, loop.simulation, 0.1, loop.period, loop.measured)
    assert joints.array('position')[-1].tolist() == loop.simulation.q[:2].tolist()


def _children(pid):
    """Process ids of the children of ``pid`` (Linux /proc)."""
    found = []
    for task in os.listdir(f'/proc/{pid}/task'):
        with open(f'/proc/{pid}/task/{task}/children') as stream:
            found += [int(p) for p in stream.read().split()]
    return found


def _running_python(pid):
    """True for a worker of the pool (spawned: its command runs multiprocessing's main)."""
    try:
        with open(f'/proc/{pid}/cmdline', 'rb') as stream:
            return b'multiprocessing' in stream.read()
    except OSError:
        return False
