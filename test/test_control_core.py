"""Tests of the joint program and the computed-torque controller (pure Python, no ROS).

Expected values: closed-form sinusoid and its finite differences, the control law written
out in this file, and the analytic error response of the designed error dynamics.
"""

import math
from pathlib import Path

import numpy as np
import pytest

from flexible_manipulator.control.computed_torque import ComputedTorqueController
from flexible_manipulator.control.joint_program import SinusoidalJointProgram
from flexible_manipulator.mechanics.chain import Joint, Link, RigidBody, SerialChain
from flexible_manipulator.mechanics.simulation import Simulation
from flexible_manipulator.model_config import load_model

MODEL_FILE = Path(__file__).resolve().parents[1] / 'config' / 'models' / 'two_link_rigid.yaml'

OFFSET, AMPLITUDE, FREQUENCY, PHASE = [0.3, 0.8], [0.3, 0.3], [0.2, 0.25], [0.0, 1.0]


def program():
    """Return the slow two-joint program of the controller tests: 0.2 and 0.25 Hz, 0.3 rad."""
    return SinusoidalJointProgram(OFFSET, AMPLITUDE, FREQUENCY, PHASE)


def planar_bar(mass, com, inertia):
    """Rigid link body: COM at ``com`` on the link's x axis, ``inertia`` about z at the COM.

    A slender bar (small axial entry, I_yy = I_zz); only I_zz acts in the plane of motion.
    """
    return RigidBody(mass, (com, 0.0, 0.0),
                     ((1e-3 * inertia, 0.0, 0.0), (0.0, inertia, 0.0), (0.0, 0.0, inertia)))


def evaluate_copy(prog, t):
    """Return copies of (q_d, q_d', q_d'') (evaluate reuses its output buffers)."""
    return tuple(array.copy() for array in prog.evaluate(t))


def test_program_position_is_the_documented_sinusoid():
    """q_d(t) = offset + amplitude sin(2 pi f t + phase), evaluated here with math.sin."""
    prog = SinusoidalJointProgram([0.1, -0.2, 0.0], [0.5, 1.0, 2.0], [0.5, 1.5, 0.1],
                                  [0.0, -0.7, 2.0])
    for t in (0.0, 0.37, 2.9):
        expected = [0.1 + 0.5 * math.sin(2 * math.pi * 0.5 * t),
                    -0.2 + 1.0 * math.sin(2 * math.pi * 1.5 * t - 0.7),
                    0.0 + 2.0 * math.sin(2 * math.pi * 0.1 * t + 2.0)]
        np.testing.assert_allclose(prog.evaluate(t)[0], expected, rtol=0, atol=1e-14)


def test_program_derivatives_match_central_differences():
    """Check q_d' and q_d'' against central differences of q_d and q_d'.

    First differences, dt = 1e-6: truncation dt^2 |f'''| / 6 <= 1e-12 A w^4 / 6 ~ 3e-9
    (A w^4 <= 1.0 (2 pi 1.5)^4 ~ 7.9e3), rounding ~1e-16 |f| / dt ~ 1e-9; tolerance 1e-7.
    Second difference of q_d, dt = 1e-4: truncation dt^2 A w^4 / 12 ~ 7e-6, rounding
    ~1e-16 / dt^2 ~ 1e-8; tolerance 1e-4. A wrong factor w or sign gives errors of O(1).
    """
    prog = SinusoidalJointProgram([0.1, -0.2, 0.0], [0.5, 1.0, 2.0], [0.5, 1.5, 0.1],
                                  [0.0, -0.7, 2.0])
    for t in (0.0, 0.21, 1.3, 4.75):
        q, v, a = evaluate_copy(prog, t)
        dt = 1e-6
        q_minus, v_minus, _ = evaluate_copy(prog, t - dt)
        q_plus, v_plus, _ = evaluate_copy(prog, t + dt)
        np.testing.assert_allclose(v, (q_plus - q_minus) / (2 * dt), rtol=0, atol=1e-7)
        np.testing.assert_allclose(a, (v_plus - v_minus) / (2 * dt), rtol=0, atol=1e-7)
        dt = 1e-4
        q_minus, q_plus = evaluate_copy(prog, t - dt)[0], evaluate_copy(prog, t + dt)[0]
        np.testing.assert_allclose(a, (q_plus - 2 * q + q_minus) / dt ** 2, rtol=0, atol=1e-4)


def test_program_refuses_mismatched_sizes():
    """One entry per joint in every argument, or ValueError."""
    with pytest.raises(ValueError):
        SinusoidalJointProgram([0.0, 0.0], [1.0], [1.0, 1.0])


def test_controller_gain_arguments_must_be_positive():
    """Non-positive natural frequency or damping ratio is refused."""
    model = load_model(str(MODEL_FILE))
    with pytest.raises(ValueError):
        ComputedTorqueController(model, program(), 0.0, 1.0)
    with pytest.raises(ValueError):
        ComputedTorqueController(model, program(), 5.0, -1.0)


def test_controller_torque_is_inverse_dynamics_of_commanded_acceleration():
    """Torque is rnea(q, v, q_d'' + kd e' + kp e), kp = wn^2, kd = 2 zeta wn (module doc).

    The commanded acceleration is formed here from the program and the gains; rnea of the
    same model gives M a + h. Random states stay well inside the effort limits.
    """
    model = load_model(str(MODEL_FILE))
    data = model.create_data()
    prog = program()
    natural_frequency, damping_ratio = 6.0, 0.7
    kp, kd = natural_frequency ** 2, 2 * damping_ratio * natural_frequency
    controller = ComputedTorqueController(model, prog, natural_frequency, damping_ratio)
    rng = np.random.default_rng(11)
    for _ in range(10):
        t = rng.uniform(0.0, 5.0)
        q_d, v_d, a_d = evaluate_copy(prog, t)
        q = q_d + rng.uniform(-0.1, 0.1, 2)
        v = v_d + rng.uniform(-0.3, 0.3, 2)
        expected = model.rnea(data, q, v, a_d + kd * (v_d - v) + kp * (q_d - q)).copy()
        assert np.all(np.abs(expected) < model.effort_limit)
        torque = controller.compute(t, q, v)
        np.testing.assert_allclose(torque, expected, rtol=1e-12, atol=1e-12)
        assert not np.any(controller.saturated)


def test_controller_clips_to_effort_limits_and_flags_saturation():
    """Torques beyond +-effort_limit are clipped per joint and flagged in `saturated`.

    Limits 3 and 0.5 N m, program holding q_d = (pi/2, 0) (arm upright), kp = 100,
    kd = 20. The unclipped torque rnea(q, 0, kp e) is computed here for errors chosen so
    that both, only the first, only the second and no joint saturate, on both sides.
    """
    limits = np.array([3.0, 0.5])
    model = SerialChain('weak', [
        Link('a', Joint('j1', effort_limit=limits[0]), 0.5, planar_bar(1.2, 0.25, 0.025)),
        Link('b', Joint('j2', effort_limit=limits[1]), 0.4, planar_bar(0.8, 0.2, 0.0107))],
        gravity_base=(0.0, -9.80665, 0.0))
    data = model.create_data()
    q_d = np.array([math.pi / 2, 0.0])
    prog = SinusoidalJointProgram(q_d, [0.0, 0.0], [1.0, 1.0])
    controller = ComputedTorqueController(model, prog, 10.0, 1.0)
    v = np.zeros(2)
    cases = [([0.1, -0.1], [True, True]), ([0.2, -0.5], [True, False]),
             ([0.0, 0.1], [False, True]), ([0.01, 0.01], [False, False]),
             ([-0.1, 0.1], [True, True]), ([0.0, -0.1], [False, True])]  # negative side
    for error, expected_flags in cases:
        q = q_d - np.array(error)
        unclipped = model.rnea(data, q, v, 100.0 * np.array(error)).copy()
        np.testing.assert_array_equal(np.abs(unclipped) > limits, expected_flags)
        torque = controller.compute(0.0, q, v)
        np.testing.assert_allclose(torque, np.clip(unclipped, -limits, limits),
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(controller.saturated, expected_flags)


def closed_loop_error(control_period, natural_frequency, e0, de0, checkpoints):
    """Simulate plant + controller (zero-order hold); return errors q_d - q at checkpoints.

    Plant: config/models/two_link_rigid.yaml, RK4 with h = 5e-4 s. The controller is
    evaluated every ``control_period`` s on the sampled state and its torque held.
    """
    model = load_model(str(MODEL_FILE))
    prog = program()
    controller = ComputedTorqueController(model, prog, natural_frequency, 1.0)
    q_d, v_d, _ = evaluate_copy(prog, 0.0)
    sim = Simulation(model, 5e-4, 'rk4', q0=q_d - e0, v0=v_d - de0)
    errors = {}
    periods = int(round(max(checkpoints) / control_period))
    for k in range(1, periods + 1):
        torque = controller.compute(sim.time, sim.q, sim.v).copy()
        assert not np.any(controller.saturated)  # the law is linear only when unclipped
        sim.advance(torque, control_period)
        for t in checkpoints:
            if abs(k * control_period - t) < 1e-9:
                errors[t] = evaluate_copy(prog, sim.time)[0] - sim.q
    assert sorted(errors) == sorted(checkpoints)
    return errors


def test_closed_loop_error_follows_critically_damped_decay():
    """Started off the program, e(t) = (e0 + (e0' + a e0) t) exp(-a t) with a = omega_n.

    Design (computed_torque docstring, VALIDATION): with an exact model the error obeys
    e'' + 2 alpha e' + beta^2 e = 0, alpha = zeta omega_n, beta = omega_n; zeta = 1 gives
    the double root -a, whose solution with e(0) = e0, e'(0) = e0' is the expression above.

    Tolerance from the 2 ms sampling: the held torque is on average T/2 = 1 ms stale, a
    relative perturbation of the closed loop of order a T/2 = 5 rad/s * 1 ms = 0.5 %, plus
    the feed-forward/gravity drift during the hold, which with this slow program
    (<= 0.25 Hz) is of the same order. The tolerance 2 % of |e0| per joint is ~4x that
    estimate. That the residual really is a sampling effect is checked too: it is first
    order in T, so halving T to 1 ms must roughly halve it (ratio within 1.6..2.4).
    """
    a = 5.0
    e0, de0 = np.array([0.1, -0.08]), np.array([0.0, 0.2])
    checkpoints = (0.2, 0.5, 1.0)
    deviations = {}
    for period in (2e-3, 1e-3):
        errors = closed_loop_error(period, a, e0, de0, checkpoints)
        deviations[period] = np.array([
            errors[t] - (e0 + (de0 + a * e0) * t) * math.exp(-a * t) for t in checkpoints])
    assert np.all(np.abs(deviations[2e-3]) < 0.02 * np.abs(e0))
    ratio = np.max(np.abs(deviations[2e-3])) / np.max(np.abs(deviations[1e-3]))
    assert 1.6 < ratio < 2.4
