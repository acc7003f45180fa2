"""The program-constraint controller (control.program_controller) in closed loop, no ROS.

The plant is the package's `Simulation` of a model file (RK4 at 0.5 ms, the forward
dynamics of the full chain, modes included); the controller is evaluated every control
period on the sampled state and its efforts held (zero-order hold), as the node does.

Where expected values come from (per test): the closed-form solution of the designed error
dynamics e'' + 2 alpha e' + alpha^2 e = 0; the classical computed-torque law written out
here; the ZOH bound T < min(1/alpha, 4 alpha/beta^2) of the science digest (derived by the
Jury conditions); the gravity torque of two uniform bars written out here; the plant's own
modal coordinates (full coupled forward dynamics) for the elastic-state estimate; and, for
the internal-dynamics checks, the nonlinear sampled closed loop simulated here (growth or
decay of an initial modal disturbance), which the construction-time linear analysis must
predict.
"""

import math
import os
from pathlib import Path
import re

import numpy as np
import pytest
import yaml

from flexible_manipulator.control.admission import NotRobustError
from flexible_manipulator.control.program_config import load_program_file
from flexible_manipulator.control.program_controller import (
    controller_from_files, ControllerSettings, ProgramController)
from flexible_manipulator.mechanics.simulation import Simulation
from flexible_manipulator.control.uncertainty import EXACT_MODEL
from flexible_manipulator.model_config import ConfigError, load_model, model_from_dict

CONFIG = Path(__file__).resolve().parents[1] / 'config'
FLEXIBLE = CONFIG / 'models' / 'two_link_flexible.yaml'
RIGID = CONFIG / 'models' / 'two_link_rigid.yaml'
FLEXIBLE_PROGRAMS = CONFIG / 'programs_two_link_flexible.yaml'
UR5E = str(CONFIG / 'models' / 'ur5e_flexible_forearm.yaml')
CIRCLE = {'type': 'circle', 'center': [0.55, 0.25], 'radius': 0.1, 'rate': 2.0}
# Start of the circle programs of config/programs_two_link_flexible.yaml (rigid inverse
# kinematics of (0.65, 0.25) m, velocity 0.2 m/s along +y); the same numbers as the plant's
# initial state in config/sim.yaml, checked in test_demo_program_starts_on_the_plant_state.
START_Q, START_V = [-0.23226582, 1.38217994], [0.3716835, -0.25451391]


@pytest.fixture(scope='module')
def rigid():
    """The rigid two-link arm in a vertical plane (gravity along -y of its base frame)."""
    return load_model(str(RIGID))


def flexible_settings(**overrides):
    """Settings of the demo controller: servo, first mode of each link modelled, 2 ms; the
    plant is the model (no robustness check: test_uncertainty.py checks it)."""
    values = dict(period=0.002, control_modes=1, analysis_positions=[-0.3, 1.5],
                  uncertainty=EXACT_MODEL)
    values.update(overrides)
    return ControllerSettings(**values)


def estimated_controller(flexible):
    """The demo's lambda_circle with the elastic state estimated (only joints measured).

    delay_periods=0: the loops here apply each effort in its own period and report no
    applied effort, so the estimator must take the effort just sent as the one applied.
    """
    programs, _ = load_program_file(FLEXIBLE_PROGRAMS)
    return ProgramController(flexible, {'lambda_circle': programs['lambda_circle']},
                             flexible_settings(elastic_state='estimated', delay_periods=0))


def one_program(rows, alpha, policy='refuse'):
    """A program mapping with one program named 'p'."""
    return {'p': {'gains': {'alpha': alpha}, 'non_minimum_phase': policy, 'rows': rows}}


def lambda_row(lam, reference=CIRCLE):
    """The forearm's lambda-point in the arm's plane."""
    return {'type': 'lambda_point', 'link': 'forearm', 'lambda': lam, 'axes': ['x', 'y'],
            'reference': dict(reference)}


def run(controller, sim, duration, period, measured=True, every=None):
    """Close the loop for ``duration`` s; return per-tick residual, modal amplitude, status.

    ``every(controller, sim)`` is called after each controller update (for extra records).
    """
    n = controller.n_joints
    residual, modes = [], []
    for _ in range(int(round(duration / period))):
        if measured:
            effort = controller.update(sim.time, sim.q[:n], sim.v[:n], sim.q[n:], sim.v[n:])
        else:
            effort = controller.update(sim.time, sim.q[:n], sim.v[:n])
        if every is not None:
            every(controller, sim)
        residual.append(float(np.max(np.abs(controller.status.residual)))
                        if controller.status.tracking else math.nan)
        modes.append(float(np.max(np.abs(sim.q[n:]))) if sim.q.size > n else 0.0)
        sim.advance(effort.copy(), period)
    return np.array(residual), np.array(modes)


# -- the law --------------------------------------------------------------------------------
def test_ideal_realization_of_a_joint_program_is_the_classical_computed_torque(rigid):
    """tau = M (q_d'' + 2 alpha (q_d' - q') + beta^2 (q_d - q)) + h (science digest 3.2,
    special case m = n): formed here and evaluated with the model's RNEA (M a + h), at
    random states inside the limits; alpha = 4, beta = 6 (not critically damped)."""
    reference = {'type': 'sinusoid', 'offset': [0.3, 0.8], 'amplitude': [0.3, 0.3],
                 'frequency': [0.2, 0.25], 'phase': [0.0, 1.0]}
    programs = {'sine': {'gains': {'alpha': 4.0, 'beta': 6.0},
                         'rows': [{'type': 'joint', 'joints': ['shoulder', 'elbow'],
                                   'reference': reference}]}}
    controller = ProgramController(rigid, programs, ControllerSettings(period=0.002))
    assert controller.realization_kind == 'ideal'
    data = rigid.create_data()
    rng = np.random.default_rng(3)
    omega = 2 * math.pi * np.array([0.2, 0.25])
    for t in (0.0, 0.37, 1.1, 2.9, 4.2):
        angle = omega * t + np.array([0.0, 1.0])
        q_d = np.array([0.3, 0.8]) + 0.3 * np.sin(angle)
        v_d = 0.3 * omega * np.cos(angle)
        a_d = -0.3 * omega ** 2 * np.sin(angle)
        q, v = q_d + rng.uniform(-0.1, 0.1, 2), v_d + rng.uniform(-0.3, 0.3, 2)
        expected = rigid.rnea(data, q, v, a_d + 8.0 * (v_d - v) + 36.0 * (q_d - q)).copy()
        controller.enable()
        controller.update(0.0, q, v)                  # program time starts at stamp 0
        effort = controller.update(t, q, v).copy()    # ... so this is program time t
        np.testing.assert_allclose(effort, expected, rtol=1e-10, atol=1e-10)
        assert controller.status.tracking and not controller.status.saturated


def decay_run(rigid, period, alpha, e0, de0, checkpoints):
    """Rigid arm, tip on a circle from an initial error; residuals at the checkpoints."""
    circle = {'type': 'circle', 'center': [0.5, 0.2], 'radius': 0.1, 'rate': 1.0}
    controller = ProgramController(
        rigid, one_program([{'type': 'point', 'link': 'forearm', 'axes': ['x', 'y'],
                             'reference': circle}], alpha),
        ControllerSettings(period=period, analysis_positions=[-0.3, 1.5]))
    entry = controller.entry
    q, zero = np.array([-0.3, 1.5]), np.zeros(2)
    for _ in range(50):                     # joints that put the tip at p_d(0) + e0
        entry.program.evaluate(0.0, q, zero)
        q -= np.linalg.solve(entry.program.jacobian, entry.program.phi - e0)
    entry.program.evaluate(0.0, q, zero)
    velocity = np.linalg.solve(entry.program.jacobian, np.array([0.0, 0.1]) + de0)
    sim = Simulation(rigid, min(period, 5e-4), 'rk4', q0=q, v0=velocity)
    controller.enable()
    found = {}

    def record(c, s):
        for t in checkpoints:
            if abs(s.time - t) < 1e-9:
                found[t] = c.status.residual.copy()
                assert not c.status.saturated
    run(controller, sim, max(checkpoints) + period, period, every=record)
    return found


def test_tip_error_of_the_rigid_arm_decays_as_designed(rigid):
    """Started off the circle, the tip error follows e(t) = (e0 + (e0' + a e0) t) e^(-a t)
    (the solution of e'' + 2 a e' + a^2 e = 0, doc/validation.md "Program constraints" 1), gravity
    and the arm's nonlinearity cancelled by the exact model.

    Tolerance from the 2 ms hold: the held effort is on average T/2 stale, a relative
    perturbation of order a T/2 = 0.5 % (a = 5 /s); bound 2 % of |e0|. That the deviation
    is a sampling effect is checked too: first order in T, halving T must about halve it
    (ratio 1.6..2.4).
    """
    a, e0, de0 = 5.0, np.array([0.02, -0.015]), np.array([0.0, 0.05])
    checkpoints = (0.2, 0.5, 1.0)
    deviations = {}
    for period in (2e-3, 1e-3):
        found = decay_run(rigid, period, a, e0, de0, checkpoints)
        deviations[period] = np.array([found[t] - (e0 + (de0 + a * e0) * t) * math.exp(-a * t)
                                       for t in checkpoints])
    assert np.all(np.abs(deviations[2e-3]) < 0.02 * np.abs(e0))
    ratio = np.max(np.abs(deviations[2e-3])) / np.max(np.abs(deviations[1e-3]))
    assert 1.6 < ratio < 2.4


# -- discrete bound -------------------------------------------------------------------------
def test_gains_outside_the_zoh_bound_are_refused_and_the_loop_diverges_there(rigid):
    """alpha = beta = 100 /s: the ZOH bound is T < min(1/alpha, 4 alpha/beta^2) = 10 ms
    (science digest 2.4). T = 11 ms is refused with the bound in the message. Run anyway
    (the controller built for 9 ms, the loop sampled at 11 ms) a 1 mrad hold error grows
    past 3 mrad within 20 periods, while at 9 ms it falls below 1e-6 of itself in 40
    (spectral radii 1.27 and 0.74 of the ZOH error map)."""
    programs = one_program([{'type': 'joint', 'joints': ['shoulder', 'elbow'],
                             'reference': {'type': 'constant', 'value': [0.3, 0.8]}}], 100.0)
    with pytest.raises(ConfigError, match=r'need period < min\(1/alpha, 4 alpha/beta\^2\) = '
                                          r'0\.01 s'):
        ProgramController(rigid, programs, ControllerSettings(period=0.011))
    errors = {}
    for period in (0.009, 0.011):
        controller = ProgramController(rigid, programs, ControllerSettings(
            period=0.009, effort_limits=1e4, velocity_limits=1e3))
        controller.enable()
        sim = Simulation(rigid, 5e-4, 'rk4', q0=np.array([0.301, 0.799]))
        errors[period], _ = run(controller, sim, 41 * period, period)
    assert errors[0.009][40] < 1e-6 * errors[0.009][0]
    assert errors[0.011][20] > 3.0 * errors[0.011][0]


# -- the flexible arm ------------------------------------------------------------------------
def test_tip_program_is_refused_as_non_minimum_phase_with_the_lambda_limit(flexible):
    """The forearm tip under the servo realization: refused, the message says NON-MINIMUM
    PHASE and offers the lambda-point with the limit it computed; non_minimum_phase:
    redefine substitutes lambda = 0.8 lambda*. The limit itself is checked against the
    nonlinear sampled loop in the next test."""
    tip = [{'type': 'point', 'link': 'forearm', 'axes': ['x', 'y'], 'reference': CIRCLE}]
    with pytest.raises(ConfigError) as refused:
        ProgramController(flexible, one_program(tip, 10.0), flexible_settings())
    text = str(refused.value)
    assert 'NON-MINIMUM PHASE' in text and 'lambda_point' in text
    limit = float(text.split('for lambda < ')[1].split(':')[0])
    assert 0.1 < limit < 1.0
    controller = ProgramController(flexible, one_program(tip, 10.0, 'redefine'),
                                   flexible_settings())
    program = controller.entry.program
    assert type(program).__name__ == 'LambdaPointProgram'
    assert program.lambdas[0] == pytest.approx(0.8 * limit, rel=1e-3)
    assert any('Redefined output substituted' in note for note in controller.entry.notes)


def modal_growth(flexible, lam, duration=3.0):
    """Largest modal coordinate over the last second / initial, for the lambda-point held
    still (constant reference at its start) from a 1e-4 disturbance of the first mode."""
    held = {'type': 'constant', 'value': [0.65, 0.25]}
    controller = ProgramController(flexible, one_program([lambda_row(lam, held)], 10.0,
                                                         'allow'), flexible_settings())
    controller.enable()
    q0 = np.zeros(flexible.nv)
    q0[:2] = START_Q
    q0[2] = 1e-4
    sim = Simulation(flexible, 5e-4, 'rk4', q0=q0)
    _, modes = run(controller, sim, duration, 0.002)
    return np.max(modes[-500:]) / 1e-4, controller


def test_lambda_limit_separates_bounded_from_growing_internal_dynamics(flexible):
    """The offered lambda* (linear analysis at construction) against the nonlinear sampled
    loop: with the lambda-point at 0.75 lambda* a first-mode disturbance stays bounded over
    3 s (below 2x its size: lightly damped zero dynamics), at 1.5 lambda* (allowed
    explicitly) it grows more than 5x. Above the limit the controller would refuse."""
    with pytest.raises(ConfigError) as refused:
        ProgramController(flexible, one_program([lambda_row(0.9)], 10.0),
                          flexible_settings())
    limit = float(str(refused.value).split('for lambda < ')[1].split(':')[0])
    below, controller = modal_growth(flexible, 0.75 * limit)
    assert controller.entry.sampled_radius < 1.0 and not controller.entry.notes
    above, controller = modal_growth(flexible, min(1.5 * limit, 1.0))
    assert controller.entry.sampled_radius > 1.0
    assert below < 2.0 and above > 5.0


def test_lambda_point_tracks_the_circle_while_the_tip_deflects(flexible):
    """The demo program (lambda-point, lambda = 0.2, alpha = 5 /s, 2 ms, modal states
    measured) from the program's start: the lambda-point stays on the circle to < 5e-4 m
    (0.5 % of the radius; on the program from t = 0 the designed error dynamics leave only
    the effects of sampling and of the unmodelled 2nd and 3rd modes), while the true tip
    leaves the circle by more than 1 mm (elastic deflection, computed here from the
    plant's section pose): the program is realized on the flexible arm, not on a rigid one.
    No saturation; the modes stay bounded."""
    controller = controller_from_files(str(FLEXIBLE), str(FLEXIBLE_PROGRAMS),
                                       flexible_settings())
    assert controller.active == 'lambda_circle'
    controller.enable()
    q0, v0 = np.zeros(flexible.nv), np.zeros(flexible.nv)
    q0[:2], v0[:2] = START_Q, START_V
    sim = Simulation(flexible, 5e-4, 'rk4', q0=q0, v0=v0)
    data = flexible.create_data()
    tip_deviation = []

    def tip(c, s):
        _, p = flexible.section_pose(data, s.q, 1, 0.4)
        tip_deviation.append(abs(math.hypot(p[0] - 0.55, p[1] - 0.25) - 0.1))
        assert not c.status.saturated and c.status.elastic_source == 'measured'
    residual, modes = run(controller, sim, 3.0, 0.002, every=tip)
    assert np.max(residual) < 5e-4
    assert np.max(tip_deviation) > 1e-3 > 2 * np.max(residual)
    assert np.max(modes) < 1e-2


def test_estimated_elastic_state_follows_the_plant_and_closes_the_loop(flexible):
    """Only joints measured: the estimate (modal rows driven by the measured joint motion,
    theta-method at 2 ms) follows the plant's modal coordinates to 1 % of their peak,
    and the lambda-point tracks as with measured modes (residual < 5e-4 m)."""
    controller = estimated_controller(flexible)
    controller.enable()
    q0, v0 = np.zeros(flexible.nv), np.zeros(flexible.nv)
    q0[:2], v0[:2] = START_Q, START_V
    sim = Simulation(flexible, 5e-4, 'rk4', q0=q0, v0=v0)
    errors = []

    def compare(c, s):
        errors.append(np.max(np.abs(c.elastic_positions - s.q[2:])))
        assert c.status.elastic_source == 'estimated'
    residual, modes = run(controller, sim, 2.0, 0.002, measured=False, every=compare)
    assert np.max(errors) < 0.01 * np.max(modes)
    assert np.max(residual) < 5e-4


def test_sampled_servo_loop_with_fast_modelled_modes_is_refused(flexible):
    """The servo law with all 3 modes per link at 2 ms (omega_3 T = 3.4): refused with the
    spectral radius and the advice to model fewer modes. Run anyway (allow) from the same
    start as the demo, the nonlinear loop departs: the lambda-point leaves the circle by
    more than 1 cm within 0.3 s with the efforts at their limits (the same program with one
    modelled mode stays within 2e-4 m, test above), which the check predicted."""
    servo = dict(control_modes=None, realization='servo', control_model='full')
    with pytest.raises(ConfigError, match='spectral radius .* > 1 at period 0.002 s.*'
                                          'control_modes'):
        ProgramController(flexible, one_program([lambda_row(0.2)], 10.0),
                          flexible_settings(**servo))
    controller = ProgramController(flexible, one_program([lambda_row(0.2)], 10.0, 'allow'),
                                   flexible_settings(**servo))
    assert any('ALLOWED' in note for note in controller.entry.notes)
    controller.enable()
    q0, v0 = np.zeros(flexible.nv), np.zeros(flexible.nv)
    q0[:2], v0[:2] = START_Q, START_V
    sim = Simulation(flexible, 5e-4, 'rk4', q0=q0, v0=v0)
    residual, _ = run(controller, sim, 0.3, 0.002)
    assert np.nanmax(residual) > 1e-2 and controller.status.saturated


# -- limits, safety, switching ---------------------------------------------------------------
def test_saturation_and_rate_limits_are_reported_with_the_constraint_error(rigid):
    """Effort limits 2 and 0.5 N m, a 0.2 rad hold error: the clipped inputs are flagged,
    dropped = unsaturated - applied, and the constraint-acceleration error equals
    J M^-1 (u - h) - b computed here (b = -2 alpha phi' - beta^2 phi for a constant joint
    reference). Then a rate limit of 10 N m/s: the next effort moves at most 0.02 N m from
    the last one in 2 ms."""
    programs = one_program([{'type': 'joint', 'joints': ['shoulder', 'elbow'],
                             'reference': {'type': 'constant', 'value': [0.3, 0.8]}}], 10.0)
    controller = ProgramController(rigid, programs, ControllerSettings(effort_limits=[2.0, 0.5]))
    controller.enable()
    q, v = np.array([0.1, 1.0]), np.array([0.2, -0.1])
    effort = controller.update(0.0, q, v).copy()
    status = controller.status
    assert status.saturated and status.clipped.tolist() == [True, True]
    np.testing.assert_allclose(np.abs(effort), [2.0, 0.5])
    np.testing.assert_allclose(status.dropped, status.unsaturated - effort)
    data = rigid.create_data()
    M, h = rigid.mass_matrix(data, q).copy(), rigid.bias_forces(data, q, v).copy()
    b = -20.0 * v - 100.0 * (q - np.array([0.3, 0.8]))
    expected = np.linalg.solve(M, effort - h) - b
    np.testing.assert_allclose(status.constraint_error, expected, rtol=1e-9, atol=1e-9)
    assert status.constraint_error_norm == pytest.approx(np.linalg.norm(expected))
    assert 'clipped on inputs [0, 1]' in status.message
    limited = ProgramController(rigid, programs, ControllerSettings(effort_limits=[2.0, 0.5],
                                                                    effort_rate_limits=10.0))
    limited.enable()
    first = limited.update(0.0, np.array([0.3, 0.8]), np.zeros(2)).copy()
    second = limited.update(0.002, q, v).copy()
    assert np.all(np.abs(second - first) <= 0.02 + 1e-12)
    assert limited.status.rate_limited.all() and 'rate-limited' in limited.status.message
    np.testing.assert_allclose(limited.status.dropped, limited.status.unsaturated - second)


def test_switching_enable_velocity_fault_and_holding_effort(rigid):
    """Programs switch by name (unknown names list the known ones); disabled means zero
    effort (a fast joint is then no fault); enabled, a joint above its velocity limit
    latches a fault until enable(); the holding
    effort is the gravity torque of two uniform bars, written out here (gravity along -y
    of the base frame, tau_2 = m_2 g c_2 cos(q1 + q2), tau_1 = g (m_1 c_1 cos q1 +
    m_2 (l_1 cos q1 + c_2 cos(q1 + q2))), m = 1.2, 0.8 kg, c = 0.25, 0.2 m, l_1 = 0.5 m)."""
    controller = controller_from_files(str(RIGID), str(CONFIG / 'programs_two_link_rigid.yaml'))
    assert controller.program_names == ['joint_sine', 'tip_circle', 'hold']
    with pytest.raises(ValueError, match='unknown program .*joint_sine, tip_circle, hold'):
        controller.switch('circle')
    q = np.array([0.4, -0.7])
    assert np.all(controller.update(0.0, q, np.zeros(2)) == 0.0)       # not enabled yet
    assert controller.status.mode == 'disabled'
    # Disabled, the arm swings freely under zero effort: a fast joint is no fault.
    assert np.all(controller.update(0.005, q, np.array([0.0, 10.5])) == 0.0)
    assert controller.status.mode == 'disabled' and controller.fault == ''
    controller.switch('hold')
    controller.enable()
    controller.update(0.01, q, np.zeros(2))
    np.testing.assert_allclose(controller.entry.reference, q)            # held where started
    assert controller.status.residual.tolist() == [0.0, 0.0]
    g, q12 = 9.80665, q[0] + q[1]
    upper = 1.2 * 0.25 * math.cos(q[0])
    fore = 0.8 * (0.5 * math.cos(q[0]) + 0.2 * math.cos(q12))
    expected = [g * (upper + fore), g * 0.8 * 0.2 * math.cos(q12)]
    np.testing.assert_allclose(controller.holding_effort(), expected, rtol=1e-9)
    controller.update(0.02, q, np.array([0.0, 10.5]))                  # elbow limit 10 rad/s
    assert controller.status.mode == 'fault' and "'elbow'" in controller.fault
    assert np.all(controller.update(0.03, q, np.zeros(2)) == 0.0)       # latched
    controller.enable()
    controller.update(0.04, q, np.zeros(2))
    assert controller.status.tracking and controller.active == 'hold'


@pytest.mark.parametrize('edit, field', [
    (lambda p: p['p']['rows'][0].update(type='spiral'), r'p\.rows\[0\]\.type: unknown'),
    (lambda p: p['p']['rows'][0].update({'lambda': 1.5}), r'p\.rows\[0\]\.lambda: must be'),
    (lambda p: p['p']['rows'][0]['reference'].update(radius=-1.0),
     r'p\.rows\[0\]\.reference\.radius'),
    (lambda p: p['p']['rows'][0].update(gains={'alpha': 0.0}), r'p\.rows\[0\]\.gains\.alpha'),
    (lambda p: p['p'].update(non_minimum_phase='ignore'), r'p\.non_minimum_phase'),
    (lambda p: p['p']['rows'].append({'type': 'hold', 'joints': ['wrist']}),
     r"p\.rows\[1\]\.joints\[0\]: unknown joint 'wrist'"),
])
def test_program_errors_name_the_field(flexible, edit, field):
    """Every error names the dotted field of the program at fault."""
    programs = one_program([lambda_row(0.2)], 10.0)
    edit(programs)
    with pytest.raises(ConfigError, match=field):
        ProgramController(flexible, programs, flexible_settings())


def test_demo_program_starts_on_the_plant_state(flexible):
    """config/sim.yaml starts the plant where the demo program starts: the lambda-point
    program's rows vanish at t = 0 at START_Q, START_V (modes at rest)."""
    import yaml
    plant = yaml.safe_load(open(CONFIG / 'sim.yaml'))['plant']['ros__parameters']
    np.testing.assert_allclose(plant['initial_positions'], START_Q)
    np.testing.assert_allclose(plant['initial_velocities'], START_V)
    controller = controller_from_files(str(FLEXIBLE), str(FLEXIBLE_PROGRAMS),
                                       flexible_settings())
    q, v = np.zeros(controller.control_model.nv), np.zeros(controller.control_model.nv)
    q[:2], v[:2] = START_Q, START_V
    program = controller.entry.program.evaluate(0.0, q, v)
    np.testing.assert_allclose(program.phi, 0.0, atol=1e-7)
    np.testing.assert_allclose(program.rate, 0.0, atol=1e-7)


def test_absurd_finite_states_latch_a_fault_and_enable_recovers(flexible):
    """States that are finite but absurd must not raise out of `update` (the node
    must not die on them). Modal coordinates of 1e200 m overflow the control model's mass matrix:
    zero effort and a fault naming the step and the function ('control model failed ...
    mass_matrix: not finite', the model API's contract). With the elastic state
    estimated, a joint at 1e6 rad/s latches the velocity fault; the estimator may have been
    fed absurd values meanwhile, and `enable` must restart it: the next sane state gives a
    finite effort, tracking again. Expected values: zero effort (the safe action) and the
    tracking status of the normal law."""
    q, v = np.array(START_Q), np.array(START_V)
    measured = controller_from_files(str(FLEXIBLE), str(FLEXIBLE_PROGRAMS), flexible_settings())
    measured.enable()
    modes = np.zeros(flexible.nv - 2)
    assert measured.update(0.0, q, v, modes, modes).any()
    effort = measured.update(0.002, q, v, np.full_like(modes, 1e200), modes)
    assert not effort.any()
    assert measured.status.mode == 'fault'
    assert measured.fault.startswith('control model failed') and 'mass_matrix' in measured.fault
    assert not measured.update(0.004, q, v, modes, modes).any()      # latched
    measured.enable()
    assert np.all(np.isfinite(measured.update(0.006, q, v, modes, modes)))
    assert measured.status.mode == 'tracking'

    estimated = estimated_controller(flexible)
    estimated.enable()
    estimated.update(0.0, q, v)
    assert not estimated.update(0.002, q, np.array([1e6, 0.0])).any()
    assert 'exceeds its velocity limit' in estimated.fault
    for k in range(3, 6):
        estimated.update(0.002 * k, q, np.array([1e6, -1e6]))
    estimated.enable()
    effort = estimated.update(0.012, q, v)
    assert np.all(np.isfinite(effort)) and estimated.status.mode == 'tracking'


def test_bad_limits_name_the_node_parameter(rigid):
    """A wrong effort limit is reported under the node's parameter name ``effort_limits``
    (it named the internal setting ``effort_limit``)."""
    with pytest.raises(ConfigError, match=r'^effort_limits'):
        ProgramController(rigid, one_program([{'type': 'joint', 'joints': ['elbow'],
                                               'reference': {'type': 'constant',
                                                             'value': [0.2]}}], 5.0),
                          ControllerSettings(effort_limits=[1.0, -2.0]))


def constant_joint_row(joint, value):
    """A joint row holding ``joint`` at ``value`` [rad]."""
    reference = {'type': 'constant', 'value': [value]}
    return {'type': 'joint', 'joints': [joint], 'reference': reference}


def test_a_program_that_cannot_be_met_is_refused_at_start_up(rigid, flexible):
    """Admission for every model (none of these may start and run as 'tracking'):
    * the rigid arm given the elbow twice at 0.2 and 0.5 rad: the second row adds no rank
      (rank 1 of 2) and the rows cannot both be met: refused, naming the row;
    * the same row twice with the same reference: the ideal realization keeps it (redundant,
      a note); the servo realization, which needs independent rows, refuses it;
    * the planar rigid arm's tip given x, y and z, with z 0.1 m off its plane: the z row is
      zero (no joint moves the tip out of the plane) and cannot be met: refused;
    * the flexible arm (2 inputs) given three rows: A M^-1 B (3 x 2) has rank < 3: not
      realizable along the input directions."""
    twice = [constant_joint_row('elbow', 0.2), constant_joint_row('elbow', 0.5)]
    with pytest.raises(ConfigError, match=r"p\.rows: rows 'elbow_1' depend .*rank 1 of 2"
                                          r".* can never be met"):
        ProgramController(rigid, one_program(twice, 5.0), ControllerSettings())
    same = [constant_joint_row('elbow', 0.2), constant_joint_row('elbow', 0.2)]
    ideal = ProgramController(rigid, one_program(same, 5.0), ControllerSettings())
    assert any('redundant' in note for note in ideal.entry.notes)
    with pytest.raises(ConfigError, match='the servo realization needs independent rows'):
        ProgramController(rigid, one_program(same, 5.0),
                          ControllerSettings(realization='servo'))
    off_plane = [{'type': 'point', 'link': 'forearm', 'axes': ['x', 'y', 'z'],
                  'reference': {'type': 'constant', 'value': [0.5, 0.2, 0.1]}}]
    with pytest.raises(ConfigError, match='can never be met'):
        ProgramController(rigid, one_program(off_plane, 5.0), ControllerSettings())
    three = [lambda_row(0.2), constant_joint_row('elbow', 1.4)]
    with pytest.raises(ConfigError, match='not realizable along the input directions'):
        ProgramController(flexible, one_program(three, 5.0), flexible_settings())


def test_a_program_that_becomes_unrealizable_is_a_fault_not_tracking(rigid):
    """The rigid arm's tip on a point program, met at start-up, then measured with the arm
    stretched out (elbow at 0: the tip Jacobian has rank 1): the rows cannot be realized
    there. The tick latches a fault naming the program and the reason, with zero effort
    (not the problem reported every tick with the status 'tracking')."""
    rows = [{'type': 'point', 'link': 'forearm', 'axes': ['x', 'y'], 'reference': CIRCLE}]
    controller = ProgramController(rigid, one_program(rows, 5.0),
                                   ControllerSettings(analysis_positions=[-0.3, 1.5]))
    controller.enable()
    effort = controller.update(0.0, np.array([0.3, 0.0]), np.zeros(2))
    assert not effort.any() and controller.status.mode == 'fault'
    assert "program 'p' cannot be met at t = 0.000000 s" in controller.fault


def test_a_reference_that_leaves_the_reach_is_refused_at_start_up(rigid):
    """The rigid arm's tip (reach l1 + l2 = 0.9 m, the model file) on a circle of radius
    0.2 m about (0.75, 0) starting at its near point (phase pi, 0.55 m from the shoulder):
    reachable at the start, but the circle's far side (0.95 m) is not. The circle leaves
    the reach where |c + r (cos s, sin s)| = 0.9 m: cos s = (0.81 - 0.5625 - 0.04) / (2 *
    0.75 * 0.2), at s = 2 pi - acos(...), t = (s - pi) / rate. The refusal names the first
    sampled time past it (samples every span / ALONG_SAMPLES)."""
    from flexible_manipulator.control.admission import ALONG_SAMPLES
    rate = 2.0
    circle = {'type': 'circle', 'center': [0.75, 0.0], 'radius': 0.2, 'rate': rate,
              'phase': math.pi}
    rows = [{'type': 'point', 'link': 'forearm', 'axes': ['x', 'y'], 'reference': circle}]
    exit_angle = math.acos((0.81 - 0.5625 - 0.04) / (2 * 0.75 * 0.2))    # polar angle s
    t_exit = (2 * math.pi - exit_angle - math.pi) / rate
    with pytest.raises(ConfigError, match="cannot be met at t = .* along the reference") \
            as refused:
        ProgramController(rigid, one_program(rows, 5.0),
                          ControllerSettings(analysis_positions=[-0.3, 1.5]))
    named = float(str(refused.value).split('at t = ')[1].split(' s')[0])
    step = (2 * math.pi / rate) / ALONG_SAMPLES
    assert t_exit <= named <= t_exit + step + 1e-3, (named, t_exit)


def test_rows_that_contradict_each_other_later_are_refused(rigid):
    """The elbow held at 0.2 rad by one row and moved from 0.2 to 0.5 rad by another
    (a quintic over 2 s): met, and redundant, at the start (a note under the ideal
    realization), contradictory from the first sample on, t = 2 s / ALONG_SAMPLES."""
    from flexible_manipulator.control.admission import ALONG_SAMPLES
    moving = {'type': 'joint', 'joints': ['elbow'],
              'reference': {'type': 'line', 'start': [0.2], 'end': [0.5], 'duration': 2.0}}
    rows = [constant_joint_row('elbow', 0.2), moving]
    with pytest.raises(ConfigError, match=f'cannot be met at t = {2.0 / ALONG_SAMPLES:.4g} s '
                                          'of 2 s along the reference'):
        ProgramController(rigid, one_program(rows, 5.0), ControllerSettings())


def test_every_step_of_a_tick_is_guarded_and_names_itself(flexible):
    """No exception leaves `update`, whichever step fails (as the estimator's solve can
    on a host's LAPACK). Each step is made to fail in turn, as a
    singular solve does: the estimator, the control model's M, the law's realization;
    and states that cannot be taken (wrong length, NaN, a time that is not a number).
    Expected: zero effort (the safe action), a latched fault naming the step, and after
    `enable` the designed start tracked again."""
    q, v = np.array(START_Q), np.array(START_V)
    controller = estimated_controller(flexible)

    def singular(*_):
        raise np.linalg.LinAlgError('Matrix is singular to machine precision.')

    steps = {'elastic-state estimator': (controller.estimator, 'advance'),
             'control model': (controller.control_model, 'mass_and_bias'),
             'control law': (controller.entry.realization, 'realize')}
    t = 0.0
    for step, (owner, method) in steps.items():
        controller.enable()
        controller.update(t, q, v)
        t += 0.002
        setattr(owner, method, singular)
        try:
            effort = controller.update(t, q, v)
        finally:
            delattr(owner, method)
        assert not effort.any() and controller.status.mode == 'fault'
        assert controller.fault.startswith(f'{step} failed at t = {t:.6f} s: LinAlgError')
        t += 0.002
    bad_states = (((q[:1], v), 'joint_positions'),
                  ((q, [v[0], math.nan]), 'joint_velocities'),
                  ((q, v, np.zeros(3), np.zeros(6)), 'elastic_positions'))
    for bad, name in bad_states:
        controller.enable()
        assert not controller.update(t, *bad).any()
        assert controller.fault.startswith('state intake failed') and name in controller.fault
        t += 0.002
    controller.enable()
    assert not controller.update('now', q, v).any() and 't: expected a time' in controller.fault
    controller.enable()
    assert np.all(np.isfinite(controller.update(t, q, v)))
    assert controller.status.mode == 'tracking'


def test_auto_hands_a_law_refused_on_the_model_to_one_that_passes_and_says_why(flexible):
    """realization and control_model auto (the defaults) with every mode modelled: the
    servo law is refused on the model itself (the test above); auto goes on to model
    following (the same law on the internal model: refused too) and then to computed
    torque on the rigid twin, which the same sampled-loop check admits on the full plant,
    with a note that says why. A non-minimum-phase output is not handed over: the output
    is what is refused (test_tip_program_is_refused_as_non_minimum_phase...)."""
    controller = ProgramController(flexible, one_program([lambda_row(0.2)], 10.0),
                                   flexible_settings(control_modes=None))
    assert controller.following is None and controller.realization_kind == 'ideal'
    note = controller.entry.notes[0]
    assert note.startswith('auto: computed torque on the rigid twin, because the servo law on '
                           'the flexible model is refused on the model')
    assert controller.entry.sampled_radius < 1.0


def test_when_no_law_is_admitted_auto_says_which_came_closest(tmp_path):
    """The UR5e-like arm with its flexible forearm and no armature (the elbow then drives
    the forearm's 2 g m^2 hub alone): at 2 ms with one period of delay the servo law, model
    following and the rigid twin are all refused; the one-line refusal names the closest
    (the smallest of the worst spectral radii it lists, all > 1) and by how much."""
    spec = yaml.safe_load(open(UR5E))
    spec['urdf'] = os.path.join(os.path.dirname(UR5E), spec['urdf'])
    spec['armature'] = 0.0
    arm = model_from_dict(spec)
    start = [0.0, -1.2, 1.5, -1.9, -1.57, 0.0]
    programs = {'sine': {'gains': {'alpha': 6.0}, 'rows': [
        {'type': 'joint', 'joints': list(arm.joint_names),
         'reference': {'type': 'sinusoid', 'offset': start, 'amplitude': [0.1] * 6,
                       'frequency': [0.5] * 6}}]}}
    with pytest.raises(ConfigError) as refused:
        ProgramController(arm, programs, ControllerSettings(
            period=0.002, delay_periods=1, analysis_positions=start))
    text = str(refused.value)
    assert '\n' not in text
    closest = re.search(r'auto: no law it knows is admitted; closest: (.*?) \(worst spectral '
                        r'radius ([0-9.]+), ([0-9.e-]+) % past 1\); then (.*)$', text)
    assert closest, text
    radius = float(closest.group(2))
    others = [float(x) for x in re.findall(r' ([0-9]+\.[0-9]+)(?:,|$)', closest.group(4))]
    assert len(others) == 2 and all(radius <= r for r in others) and radius > 1.0
    assert float(closest.group(3)) == pytest.approx(100 * (radius - 1), rel=1e-2)


def test_a_refusal_computes_the_gains_that_would_pass(flexible):
    """Computed torque on the rigid twin of the demo arm at alpha = 10, 2 periods of delay,
    the default uncertainty: refused as not robust (doc/hil.md: at alpha 8 a 77 Hz mode
    with half its damping turns unstable); the refusal names the largest scale s = 0.8^k
    of alpha it found stable on every plant of the set, and the same program at alpha 10 s
    is admitted by the same controller (the offer is true), while at 10 s / 0.8 it is not
    (the ladder's rung above)."""
    def program(alpha):
        return one_program([{'type': 'joint', 'joints': ['shoulder', 'elbow'],
                             'reference': {'type': 'constant', 'value': [-0.3, 1.5]}}], alpha)
    settings = flexible_settings(uncertainty=None, delay_periods=2, realization='ideal',
                                 control_model='rigid_twin')
    with pytest.raises(NotRobustError) as refused:
        ProgramController(flexible, program(10.0), settings)
    scale = float(re.search(r'gains alpha x([0-9.]+) \(computed', str(refused.value)).group(1))
    assert 0.0 < scale < 1.0
    admitted = ProgramController(flexible, program(10.0 * scale), settings)
    assert admitted.entry.robustness_margin == 1.0
    with pytest.raises(NotRobustError):
        ProgramController(flexible, program(10.0 * scale / 0.8), settings)
