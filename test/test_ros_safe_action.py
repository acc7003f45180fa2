"""The safe action and the driver convention over real DDS: plant node and controller node.

The plant runs in lockstep (one update period of 2 ms per command), so the runs depend on
simulated time only. Expected values: the static offset the hold law leaves against a
payload the controller's model underestimates, (alpha^2 M)^-1 Delta g (alpha = 2 /s,
`program_controller.HOLD_BANDWIDTH`; M and Delta g of the rigid arm's bars written out in
the test's docstring, as in test_safe_action.py); and, for the driver convention, the
plain loop's own trajectory (the same total torque, hence the same motion).
"""

import os

import numpy as np
import pytest
import yaml

from conftest import CONFIG, CONTROLLER, PLANT

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


def run(probe, start_node, plant, controller, duration):
    """Run the lockstep loop until ``duration`` [s] of simulated time; return (t, q) rows."""
    from sensor_msgs.msg import JointState
    states = probe.received.get('/joint_states')
    if states is None:
        states = probe.subscribe(JointState, '/joint_states', 1000)
    states.clear()
    plant = {'timing_mode': 'lockstep', 'initial_positions': str(START), **dict(plant)}
    nodes = [start_node(PLANT, params_file=None, parameters=list(plant.items())),
             start_node(CONTROLLER, params_file=None, parameters=[
                 ('program_file', 'programs_two_link_rigid'), ('delay_periods', 0),
                 ('state_timeout', 30.0), *controller])]

    def stamp(msg):
        return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec

    def this_run():
        # States of a run stopped before may come late: this run's start where time went back.
        starts = [k for k in range(1, len(states))
                  if stamp(states[k]) < stamp(states[k - 1])]
        return states[starts[-1]:] if starts else states
    probe.spin_until(lambda: states and stamp(this_run()[-1]) >= duration, 240,
                     f'{duration} s of simulated time')
    for node in nodes:
        assert node.alive() and 'Traceback' not in node.output(), node.output()
        node.stop()
    rows = {round(stamp(msg), 6): list(msg.position) for msg in this_run()}
    count = -1
    while count != len(states):     # the stopped run's last states, before the next run
        count = len(states)
        probe.spin_for(1.0)
    return np.array([[t, *q] for t, q in sorted(rows.items())])


def test_hold_keeps_the_arm_where_it_started_disabled_and_zero_lets_it_fall(
        probe, start_node, tmp_path):
    """The plant's payload is 1.3 x the controller's (0.039 against 0.03 kg). Started
    disabled with safe_action: hold, the arm stays within 0.05 rad of where it started over
    2 s: the hold law's static offset is (alpha^2 M)^-1 Delta g with Delta g = (0.009 kg
    g 0.5 m cos q1, 0) = (0.040, 0) N m (the forearm vertical), M = [[0.283, 0.012],
    [0.012, 0.048]] kg m^2 at START, alpha = 2 /s: (0.036, -0.009) rad. With zero effort the
    arm falls: more than 0.3 rad within the same 2 s."""
    model = model_file(tmp_path, 'model', PAYLOAD)
    arm = model_file(tmp_path, 'arm', 1.3 * PAYLOAD)
    held = run(probe, start_node, [('model', arm)],
               [('model', model), ('start_enabled', False), ('safe_action', 'hold')], 2.0)
    drift = np.abs(held[:, 1:] - START).max(axis=0)
    assert held[-1, 0] >= 2.0 and drift.max() < 0.05, drift
    assert 0.5 * 0.036 < drift[0], drift       # the payload's offset did appear
    fell = run(probe, start_node, [('model', arm)],
               [('model', model), ('start_enabled', False), ('safe_action', 'zero')], 2.0)
    assert np.abs(fell[:, 1:] - START).max() > 0.3


def test_a_gravity_compensating_driver_tracks_as_the_plain_one(probe, start_node, tmp_path):
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
    plain = run(probe, start_node, plant, controller, 1.0)
    driven = run(probe, start_node, [*plant, ('driver_gravity_compensation', True)],
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
