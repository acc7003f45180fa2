"""The safe action and the driver convention over real DDS: plant node and controller node.

The plant runs in lockstep (one update period of 2 ms per command), so the runs depend on
simulated time only; each run starts paused, on topics of its own, and goes once the
probe has its initial state. Expected values: the static offset the hold law leaves against a
payload the controller's model underestimates, (alpha^2 M)^-1 Delta g (alpha = 2 /s,
`program_controller.HOLD_BANDWIDTH`; M and Delta g of the rigid arm's bars written out in
the test's docstring, as in test_safe_action.py); and, for the driver convention, the
plain loop's own trajectory (the same total torque, hence the same motion).
"""

import os

import numpy as np
import pytest
import yaml

from conftest import CONFIG, CONTROLLER, NodeProcess, PLANT

pytestmark = [pytest.mark.ros, pytest.mark.timeout(300)]

# Forearm pointing straight up (q1 + q2 = pi/2), the upper arm 0.43 rad below horizontal.
START = [-0.429, 2.0]
PAYLOAD = 0.03          # kg at the forearm's tip in the controller's model; the plant's x1.3


def model_file(tmp_path, name, payload):
    """config/models/two_link_rigid.yaml with ``payload`` kg at the forearm's tip."""
    with open(os.path.join(CONFIG, 'models', 'two_link_rigid.yaml')) as stream:
        model = yaml.safe_load(stream)
    model['links'][1]['payload'] = {'mass': payload, 'inertia': [1e-6, 1e-6, 1e-6, 0, 0, 0]}
    path = tmp_path / f'{name}.yaml'
    path.write_text(yaml.safe_dump(model))
    return str(path)


@pytest.fixture
def start_run(domain_id, tmp_path):
    """Start a plant and a controller on topics of their own; all stopped at the end."""
    started = []

    def start(name, plant, controller):
        topics = [(topic, f'/{name}/{topic}') for topic in
                  ('joint_states', 'effort_controller/commands', 'modal_states')]
        nodes = [NodeProcess(module, domain_id, tmp_path / f'{name}-{k}.log', None,
                             parameters, topics)
                 for k, (module, parameters) in enumerate(((PLANT, plant),
                                                           (CONTROLLER, controller)))]
        started.extend(nodes)
        return nodes

    yield start
    for node in started:
        node.stop()


def run(probe, start_run, name, plant, controller, duration):
    """Run the lockstep loop until ``duration`` [s] of simulated time; return (t, q) rows.

    Each run has topics of its own (``/<name>/joint_states``, ...): no state of another
    run can be taken for one of this run.
    """
    from sensor_msgs.msg import JointState
    from std_srvs.srv import SetBool
    states = probe.subscribe(JointState, f'/{name}/joint_states', 1000)
    plant = {'timing_mode': 'lockstep', 'initial_positions': str(START), 'start_paused': True,
             **dict(plant)}
    nodes = start_run(name, list(plant.items()), [
        ('program_file', 'programs_two_link_rigid'), ('delay_periods', 0),
        ('state_timeout', 30.0), *controller])

    def stamp(msg):
        return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
    # Time is held until this probe has the initial state: it misses none of the run.
    probe.spin_until(lambda: states, 120, 'the initial state')
    assert probe.call(SetBool, '/plant/pause', SetBool.Request(data=False), 60).success
    probe.spin_until(lambda: states and stamp(states[-1]) >= duration, 240,
                     f'{duration} s of simulated time')
    for node in nodes:
        assert node.alive() and 'Traceback' not in node.output(), node.output()
        node.stop()
    rows = {round(stamp(msg), 6): list(msg.position) for msg in states}
    return np.array([[t, *q] for t, q in sorted(rows.items())])


def test_hold_keeps_the_arm_where_it_started_disabled_and_zero_lets_it_fall(
        probe, start_run, tmp_path):
    """The plant's payload is 1.3 x the controller's (0.039 against 0.03 kg). Started
    disabled with safe_action: hold, the arm stays within 0.05 rad of where it started over
    2 s: the hold law's static offset is (alpha^2 M)^-1 Delta g with Delta g = (0.009 kg
    g 0.5 m cos q1, 0) = (0.040, 0) N m (the forearm vertical), M = [[0.283, 0.012],
    [0.012, 0.048]] kg m^2 at START, alpha = 2 /s: (0.036, -0.009) rad. With zero effort the
    arm falls: more than 0.3 rad within the same 2 s."""
    model = model_file(tmp_path, 'model', PAYLOAD)
    arm = model_file(tmp_path, 'arm', 1.3 * PAYLOAD)
    held = run(probe, start_run, 'held', [('model', arm)],
               [('model', model), ('start_enabled', False), ('safe_action', 'hold')], 2.0)
    drift = np.abs(held[:, 1:] - START).max(axis=0)
    assert held[-1, 0] >= 2.0 and drift.max() < 0.05, drift
    assert 0.5 * 0.036 < drift[0], drift       # the payload's offset did appear
    fell = run(probe, start_run, 'fell', [('model', arm)],
               [('model', model), ('start_enabled', False), ('safe_action', 'zero')], 2.0)
    assert np.abs(fell[:, 1:] - START).max() > 0.3


def test_a_gravity_compensating_driver_tracks_as_the_plain_one(probe, start_run):
    """joint_sine on the rigid arm for 1 s, from the program's start (q = (-1.2, 0.6) rad,
    q' = 2 pi f a = (0.942, 2.262) rad/s: config/programs_two_link_rigid.yaml): a plant that
    adds its gravity to each command (driver_gravity_compensation: true) with a controller
    that subtracts it (driver_compensation: [gravity]) tracks the reference as the plain
    pair does: the joint error to the reference within 1e-3 rad at every state of both,
    and the two runs' errors within 1e-4 rad of each other."""
    start = np.array([-1.2, 0.6])
    amplitude, frequency = np.array([0.6, 0.9]), np.array([0.25, 0.4])
    plant = [('model', 'two_link_rigid'), ('initial_positions', str(start.tolist())),
             ('initial_velocities', str((2 * np.pi * frequency * amplitude).tolist()))]
    controller = [('model', 'two_link_rigid'), ('active_program', 'joint_sine')]
    plain = run(probe, start_run, 'plain', plant, controller, 1.0)
    driven = run(probe, start_run, 'driven', [*plant, ('driver_gravity_compensation', True)],
                 [*controller, ('driver_compensation', '[gravity]')], 1.0)
    errors = []
    for rows in (plain, driven):
        t = rows[:, :1]
        reference = start + amplitude * np.sin(2 * np.pi * frequency * t)
        errors.append(rows[:, 1:] - reference)
        assert len(rows) >= 400 and np.abs(errors[-1]).max() < 1e-3, (
            len(rows), np.abs(errors[-1]).max(axis=0), rows[:3])
    count = min(len(plain), len(driven))
    np.testing.assert_allclose(errors[1][:count], errors[0][:count], atol=1e-4)
