"""The servo controller core (control.servo_controller) on free servo models, without ROS.

Where the expected values come from:

* the effort: the servo realization of psi' + gamma psi = 0 along B = b on M w' + h = B u
  is u = (<M^-1 a, h> - gamma <a, w>) / <M^-1 a, b> (one row, one input), written out
  here with h of Euler's / the planar Newton-Euler equations from test_servo_closed_loop
  (`euler_bias`, `sleigh_bias`), and it is Kozlov's multiplier: the servo model of the same
  body with the Baumgarte gain k = gamma computes the same lambda in its own kernel;
* the predicted rate: with the unclipped effort psi' = -gamma psi exactly; clipped to
  u_c, A M^-1 (B u_c - h) differs from that by <M^-1 a, b> (u_c - u) (linear in u);
* the holding effort B^+ h(q, 0) = <b, h(q, 0)>/|b|^2 (one column), h(q, 0) = -gamma x c_g
  for the heavy top at rest (Euler's equations with w = 0);
* the discrete bounds: gamma T < 2 for a zero-order hold (1 - gamma T per period) and
  2 sin(pi/(2 (2d + 1))) = 1, (sqrt 5 - 1)/2 with d = 1, 2 periods of delay: the
  recursion psi_{n+1} = psi_n - gamma T psi_{n-d} run here decays below and grows above;
* realizability: a row c with <M^-1 c, b> = 0 (c = M (b x e1), so <M^-1 c, b> =
  <b x e1, b> = 0) cannot be moved by the input.
"""

import math
import os

import numpy as np
import pytest

from flexible_manipulator.control.programs import (ConstantVelocityProgram, JointProgram,
                                                   VelocityProgram)
from flexible_manipulator.control.servo_controller import (is_servo_model, ServoController,
                                                           ServoSettings)
from flexible_manipulator.control.stabilization import (delayed_velocity_critical_period,
                                                        delayed_velocity_radius)
from flexible_manipulator.mechanics.servo_rigid_body import ServoRigidBody
from flexible_manipulator.mechanics.servo_sleigh import ServoSleigh
from flexible_manipulator.model_config import ConfigError, load_model
from test_servo_closed_loop import config, euler_bias, interface_models, sleigh_bias

MODELS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'config',
                      'models')


def bias(model, q, v):
    """h of the model's equations, written out in test_servo_closed_loop."""
    return (euler_bias if model.kind == 'rigid_body' else sleigh_bias)(model, q, v)


def random_state(model, rng):
    """A state off the constraint: unit quaternion or (x, y, phi), and any velocity."""
    if model.nq == 4:
        q = rng.normal(size=4)
        return q / np.linalg.norm(q), rng.normal(size=3)
    return rng.normal(size=3) * [1.0, 1.0, math.pi], rng.normal(size=3)


def expected_effort(model, gamma, q, v):
    """u = (<M^-1 a, h> - gamma <a, w>) / <M^-1 a, b> (module doc)."""
    reach = np.linalg.solve(model.inertia_matrix, model.a)
    return (reach @ bias(model, q, v) - gamma * (model.a @ v)) / (reach @ model.b)


def enabled(model, **settings):
    """A controller on ``model``, enabled."""
    controller = ServoController(model, ServoSettings(**settings))
    controller.enable()
    return controller


@pytest.mark.parametrize('index', [0, 1], ids=['top', 'sleigh'])
def test_effort_is_kozlovs_multiplier_with_the_gain_as_baumgarte_gain(index):
    """At random states off the constraint (gravity, offset and incline all on): u is the
    written-out formula and the servo model's lambda with k = gamma (1e-12); psi = <a, w>,
    the predicted psi' = -gamma psi, the realization exact and nothing clipped."""
    free, servo = interface_models()[index], interface_models()[index + 2]
    gamma = servo.stabilization
    controller = enabled(free, gain=gamma, period=1e-3)
    data = servo.create_data()
    rng = np.random.default_rng(index)
    for k in range(5):
        q, v = random_state(free, rng)
        u = controller.update(0.01 * k, q, v)
        status = controller.status
        _, lam = servo.acceleration(data, q, v)
        expected = expected_effort(free, gamma, q, v)
        assert u.shape == (1,)
        assert u[0] == pytest.approx(expected, rel=1e-12, abs=1e-12)
        assert u[0] == pytest.approx(lam, rel=1e-12, abs=1e-12)
        psi = free.a @ v
        assert status.residual[0] == pytest.approx(psi, rel=1e-14, abs=1e-15)
        assert status.residual_rate[0] == pytest.approx(-gamma * psi, rel=1e-9, abs=1e-12)
        assert status.tracking and status.realization.code == 'exact'
        assert not status.saturated and status.message == 'tracking'
        assert status.program_time == pytest.approx(0.01 * k)
    assert controller.row_names == [('a_omega', 'v_lat')[index]]


def test_effort_limit_clips_and_reports_the_constraint_error():
    """With the limit at half the needed |u|: u = +-limit, the status says clipped, the
    dropped effort is u - u_c and psi' misses -gamma psi by <M^-1 a, b> (u_c - u)."""
    plant = config('sleigh_free_actuated')
    q, v = plant.initial_q, plant.initial_v + [0.0, 0.0, 0.05]
    needed = expected_effort(plant, 100.0, q, v)
    controller = enabled(plant, effort_limits=[0.5 * abs(needed)])
    u = controller.update(0.0, q, v)[0]
    status = controller.status
    assert u == pytest.approx(0.5 * needed, rel=1e-12)
    assert status.saturated and 'clipped on inputs [0]' in status.message
    assert status.dropped[0] == pytest.approx(needed - u, rel=1e-12)
    margin = np.linalg.solve(plant.inertia_matrix, plant.a) @ plant.b
    error = margin * (u - needed)
    assert status.constraint_error[0] == pytest.approx(error, rel=1e-9)
    assert status.residual_rate[0] == pytest.approx(-100.0 * 0.05 + error, rel=1e-9)


def test_disable_fault_and_holding_effort():
    """Disabled: zero effort. |v| > omega_max latches a fault (zero effort, also for later
    good states) until enable. Holding effort: zero before any state, then
    <b, h(q, 0)>/|b|^2 with h(q, 0) = -gamma x c_g for the heavy top."""
    inertia = np.diag([2.0, 3.0, 4.0])
    b = np.array([0.0, 0.6, 0.8])
    top = ServoRigidBody('heavy', inertia, (0.0, 0.0, 1.0), b, (1.5, -0.4, 0.0),
                         realization='free', omega_max=10.0)
    controller = ServoController(top)
    assert controller.holding_effort()[0] == 0.0
    q = np.array([math.cos(0.3), math.sin(0.3), 0.0, 0.0])
    v = np.array([0.2, -0.1, 0.05])
    assert controller.update(0.0, q, v)[0] == 0.0 and controller.status.mode == 'disabled'
    controller.enable()
    assert controller.update(0.01, q, v)[0] != 0.0 and controller.status.tracking
    assert controller.update(0.02, q, [11.0, 0.0, 0.0])[0] == 0.0
    assert controller.status.mode == 'fault' and 'omega_max' in controller.fault
    assert controller.update(0.03, q, v)[0] == 0.0 and controller.status.mode == 'fault'
    assert controller.status.message.startswith('fault: |v| = 11')
    controller.enable()
    assert controller.update(0.04, q, v)[0] != 0.0 and controller.status.tracking
    gravity = np.array([0.0, 2 * q[0] * q[1], 1 - 2 * q[1] ** 2])      # R^T e_z
    static = -np.cross(gravity, top.weight_moment)
    assert controller.holding_effort()[0] == pytest.approx(b @ static / (b @ b), rel=1e-12)


def test_time_varying_velocity_program_of_programs_module():
    """psi = <a, w> - r(t), r = 0.1 sin(t) (offset -r, bias -r'): the plant's own
    acceleration under the returned u gives psi' = A w' - r' = -gamma psi (1e-10)."""
    plant = config('suslov_free_actuated')

    def rows(t, q, v, matrix, offset, bias):
        matrix[0] = plant.a
        offset[0] = -0.1 * math.sin(t)
        bias[0] = -0.1 * math.cos(t)

    controller = ServoController(plant, ServoSettings(gain=40.0),
                                 program=VelocityProgram(3, 1, rows))
    controller.enable()
    assert controller.row_names == ['servoconstraint_0']
    data = plant.create_data()
    rng = np.random.default_rng(7)
    controller.update(5.0, *random_state(plant, rng))            # program time starts here
    for t in (5.3, 5.9):
        q, v = random_state(plant, rng)
        u = controller.update(t, q, v)
        tau = t - 5.0
        psi = plant.a @ v - 0.1 * math.sin(tau)
        wdot, _ = plant.acceleration(data, q, v, u)
        assert controller.status.residual[0] == pytest.approx(psi, rel=1e-12)
        assert plant.a @ wdot - 0.1 * math.cos(tau) == pytest.approx(-40.0 * psi, rel=1e-10,
                                                                     abs=1e-10)


def test_delayed_discrete_bound_is_the_recursions_stability_limit():
    """gamma T* = 2, 1, (sqrt 5 - 1)/2 for d = 0, 1, 2; psi_{n+1} = psi_n - gamma T
    psi_{n-d} run 3000 periods decays at 0.97 T* and grows at 1.03 T*; the spectral
    radius is below 1 below the bound and above it above."""
    gamma = 50.0
    for d, product in ((0, 2.0), (1, 1.0), (2, (math.sqrt(5.0) - 1.0) / 2.0)):
        bound = delayed_velocity_critical_period(gamma, d)
        assert gamma * bound == pytest.approx(product, rel=1e-12)
        for factor, grows in ((0.97, False), (1.03, True)):
            k = gamma * factor * bound
            psi = [1.0] * (d + 1)
            for _ in range(3000):
                psi.append(psi[-1] - k * psi[-1 - d])
            assert (abs(psi[-1]) > 1.0) == grows, (d, factor, psi[-1])
            assert (delayed_velocity_radius(gamma, factor * bound, d) > 1.0) == grows


def test_bad_models_gains_programs_and_limits_are_refused_by_name():
    """ConfigError naming the field: a servo-realization model or an arm model (model),
    gamma outside the zoh bound or the delayed bound, or not positive (servo_gain), an
    unrealizable or position-row program (program), non-positive limits (effort_limits),
    a delay with another hold scheme (delay_periods)."""
    with pytest.raises(ConfigError, match="^model: 'suslov_linear_integral' has realization "
                                          "'servo'"):
        ServoController(config('suslov_linear_integral'))
    arm = load_model(os.path.join(MODELS, 'two_link_rigid.yaml'))
    assert not is_servo_model(arm) and is_servo_model(config('sleigh_servo'))
    with pytest.raises(ConfigError, match='^model: .* is not a servoconstraint model'):
        ServoController(arm)
    plant = config('suslov_free_actuated')
    # The zoh bound without delay: delay_periods=0 (a lock-step loop).
    with pytest.raises(ConfigError, match=r'^servo_gain: .*need period < 2/gamma = 0.02 s'):
        ServoController(plant, ServoSettings(period=0.02, gain=100.0, delay_periods=0))
    ServoController(plant, ServoSettings(period=0.009, gain=100.0, delay_periods=1))
    with pytest.raises(ConfigError, match=r'^servo_gain: .*1 period\(s\) late .* = 0.01 s'):
        ServoController(plant, ServoSettings(period=0.011, gain=100.0, delay_periods=1))
    with pytest.raises(ConfigError, match='^servo_gain: must be a positive number'):
        ServoController(plant, ServoSettings(gain=-1.0))
    with pytest.raises(ConfigError, match='^delay_periods:'):
        ServoController(plant, ServoSettings(hold='rk4', delay_periods=1))
    with pytest.raises(ConfigError, match='^effort_limits:'):
        ServoController(plant, ServoSettings(effort_limits=[0.0]))
    row = plant.inertia_matrix @ np.cross(plant.b, [1.0, 0.0, 0.0])
    with pytest.raises(ConfigError, match='^program: not realizable along the input'):
        ServoController(plant, program=ConstantVelocityProgram(row))
    with pytest.raises(ConfigError, match='^program: .*velocity rows'):
        ServoController(plant, program=JointProgram(3, [0], reference=None))
    # The model's own unrealizable direction never gets this far: the model refuses it.
    with pytest.raises(ValueError, match='^control: realizability margin'):
        ServoSleigh('s', 2.0, 0.05, (0.5, 0.0, 0.01), realization='free')


def test_states_that_cannot_be_taken_latch_a_fault_and_enable_recovers():
    """No exception leaves `update` (control.safety): a state of the wrong length, a NaN,
    a time that is not a number, a failing law each give zero effort and a fault naming
    the step; `enable` and the model's initial state track again."""
    model = interface_models()[0]
    controller = enabled(model, gain=7.0, period=1e-3)
    q, v = np.array(model.initial_q, dtype=float), np.array(model.initial_v, dtype=float)
    for args, text in (((0.0, q[:2], v), "state intake failed at t = 0.000000 s: ValueError: q:"),
                       ((0.0, q, [math.nan] * 3), 'state intake failed'),
                       ((None, q, v), 'state intake failed at t = None: ValueError: t:')):
        controller.enable()
        assert not controller.update(*args).any()
        assert controller.status.mode == 'fault' and controller.fault.startswith(text)

    def singular(*_):
        raise np.linalg.LinAlgError('singular')
    controller.enable()
    controller.realization.realize = singular
    assert not controller.update(0.001, q, v).any()
    assert controller.fault.startswith('control law failed at t = 0.001000 s: LinAlgError')
    del controller.realization.realize
    controller.enable()
    assert np.all(np.isfinite(controller.update(0.002, q, v)))
    assert controller.status.mode == 'tracking'
