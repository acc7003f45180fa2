"""Model following's joint laws (`control.joint_follower`) against the check that admits them.

The start-up check analyses a linear discrete system; the arm gets the per-tick law. The
two must be the same law: expected values come from running the check's state space
(A, B, C, D) on the same error sequence, at a rest where the rigid twin's gravity is linear
in the error to the order of the error squared. And the check's closed loop for a law
without states must be the one the static loop check builds (`LinearLoop.radius`).
"""

import numpy as np
import pytest

from flexible_manipulator.control import joint_follower
from flexible_manipulator.control.loop_checks import LinearLoop
from flexible_manipulator.control.zero_dynamics import linearize
from flexible_manipulator.mechanics.equilibrium import static_equilibrium
from flexible_manipulator.model_config import load_model
from conftest import CONFIG

POSE = np.array([0.0, -1.2, 1.5, -1.9, -1.57, 0.0])
PERIOD = 0.002


@pytest.fixture(scope='module')
def arm():
    """The UR5e-like arm with its flexible forearm and the rigid twin."""
    model = load_model(f'{CONFIG}/models/ur5e_flexible_forearm.yaml')
    return model, model.rigid_twin()


@pytest.mark.parametrize('payload_range, damper', [((1.0, 1.0), None), ((0.5, 2.0), None),
                                                   ((0.5, 2.0), (500.0, 10.0))])
def test_the_filtered_law_is_the_system_the_check_analyses(arm, payload_range, damper):
    """Random joint errors of 1e-7 rad (and rates) about a rest theta_m: the per-tick law's
    u - u_m equals the output of state_space(M_r, K_r, T, w, Y) driven by the same errors,
    to 1e-6 of its size (the gravity difference's second order: 1e-7 relative), over 300
    ticks, its states included (integral, three filter stages, with a payload range the
    payload's estimate, Y its regressor at theta_m, and with a damper its band-pass)."""
    model, twin = arm
    theta_m = static_equilibrium(twin, POSE.copy())
    mass, _, stiffness, _ = linearize(twin, theta_m)
    w = 6.0
    payload = joint_follower.payload_gravity(twin, theta_m, payload_range)
    assert (payload is None) == (payload_range == (1.0, 1.0))
    A, B, C, D = joint_follower.state_space(mass, stiffness, PERIOD, w, payload, damper)
    law = joint_follower.FilteredFollower(twin, PERIOD, payload_range)
    law.set_bandwidth(w)
    law.set_damper(damper)
    rng = np.random.default_rng(3)
    x = np.zeros(A.shape[0])
    feedforward, rest = rng.normal(size=6), np.zeros(6)
    worst, size = 0.0, 0.0
    for _ in range(300):
        y = rng.normal(scale=1e-7, size=12)
        expected = C @ x + D @ y
        got = law.effort(feedforward, theta_m + y[:6], y[6:], theta_m, rest, rest) - feedforward
        worst, size = max(worst, np.max(np.abs(got - expected))), max(size, np.max(
            np.abs(expected)))
        x = A @ x + B @ y
    assert size > 0.0 and worst < 1e-6 * size


def test_the_dampers_band_pass_has_unit_gain_and_no_phase_at_its_centre():
    """The discrete band-pass (joint_follower.bandpass, Tustin prewarped at w_c) on the unit
    circle is the continuous H(s) = 2 zeta w_c s / (s^2 + 2 zeta w_c s + w_c^2) at the
    warped frequency w_a = c tan(w T / 2), c = w_c / tan(w_c T / 2) (Tustin's map), to
    1e-9; at w_c itself H = 1 (unit gain, no phase)."""
    T, wc = 0.001, 400.0
    (a1, a2), (b0, c1, c2) = joint_follower.bandpass(wc, T)
    b1, b2 = c1 + b0 * a1, c2 + b0 * a2

    def H(w):
        z1 = np.exp(-1j * w * T)
        return (b0 + b1 * z1 + b2 * z1 ** 2) / (1.0 + a1 * z1 + a2 * z1 ** 2)
    zeta, c = joint_follower.DAMPER_ZETA, wc / np.tan(wc * T / 2)
    assert H(wc) == pytest.approx(1.0, abs=1e-9)
    for w in (0.1 * wc, 0.5 * wc, 2.0 * wc, 5.0 * wc):
        s = 1j * c * np.tan(w * T / 2)
        continuous = 2 * zeta * wc * s / (s * s + 2 * zeta * wc * s + wc * wc)
        assert abs(H(w) - continuous) < 1e-9


def test_a_payload_error_at_rest_ends_in_the_estimate():
    """The joint error whose integral supplies the torque Y delta in one tick (a payload
    x(1 + delta) at a rest, Y its regressor there: the arm sags until the integral holds
    it): the integral's part along Y is Phi, so the estimate is
    1 + delta and rho stays 0; beyond the declared range the estimate stops at its bound
    and the rest stays in rho (the sum rho + Y Phi is the integral of M_r e T either
    way: the law is the checked PID). Tolerances: the split's eps, PAYLOAD_FLOOR of Y^T Y,
    leaves that fraction of the payload in rho."""
    model = load_model(f'{CONFIG}/models/ur5e_flexible_forearm.yaml')
    twin = model.rigid_twin()
    theta_m = static_equilibrium(twin, POSE.copy())
    Y = joint_follower.payload_gravity(twin, theta_m, (0.5, 2.0))
    mass = twin.mass_matrix(twin.create_data(), theta_m)
    for delta, expected in ((0.3, 1.3), (1.5, 2.0)):
        law = joint_follower.FilteredFollower(twin, PERIOD, (0.5, 2.0))
        law.set_bandwidth(6.0)
        gain = joint_follower.INTEGRAL_RATIO * 6.0 ** 3
        # The error whose integral torque -gain (rho + Y Phi) is Y delta after one tick.
        error = -np.linalg.solve(mass, Y * delta / (gain * PERIOD))
        rest = np.zeros(6)
        law.effort(rest, theta_m + error, rest, theta_m, rest, rest)
        floor = 2.0 * joint_follower.PAYLOAD_FLOOR
        assert law.payload_factor == pytest.approx(expected, rel=floor)
        total = -gain * (law._integral + Y * law._payload_integral)
        np.testing.assert_allclose(total, Y * delta, rtol=1e-9, atol=1e-12 * np.abs(Y).max())
        if delta < 1.0:
            assert np.abs(law._integral).max() < floor * np.abs(Y).max() / gain


def test_a_law_without_states_closes_the_same_loop_as_the_static_check(arm):
    """Computed torque on the rigid twin as a system without states (joint_feedback) gives,
    with no damping margin, the spectral radius LinearLoop.radius gives for the same rows
    and gains, for 0 to 2 periods of delay; a damping margin can only raise the figure."""
    model, twin = arm
    loop = LinearLoop(model, twin, POSE, PERIOD, 'ideal')
    kp, kd = np.eye(6) * 16.0, np.eye(6) * 8.0
    for delay in range(3):
        static = loop.radius(np.eye(6), kp, kd, delay)
        dynamic = loop.dynamic_radius(loop.joint_feedback(kp, kd), delay)
        assert dynamic == pytest.approx(static, rel=1e-9)
        assert loop.dynamic_radius(loop.joint_feedback(kp, kd), delay, 0.01) >= dynamic


def test_the_damping_margin_is_the_least_damping_ratio_of_the_poles(arm):
    """Computed torque on the rigid twin, no delay: the closed loop is Phi + Gamma F (built
    here from the static law's F); its poles' least damping ratio zeta* = min -Re s / |s|
    (s = ln z / T) is computed from them, and the check's figure with margin m is at most
    1 exactly for m below zeta*: tried at zeta* / 2 and 2 zeta*, and at zeta* +- 1e-6."""
    model, twin = arm
    loop = LinearLoop(model, twin, POSE, PERIOD, 'ideal')
    kp, kd = np.eye(6) * 16.0, np.eye(6) * 8.0
    poles = np.linalg.eigvals(loop.Phi + loop.Gamma @ loop.feedback(np.eye(6), kp, kd))
    s = np.log(poles.astype(complex)) / PERIOD
    least = float(np.min(-s.real / np.abs(s)))
    assert 0.0 < least < 0.5
    system = loop.joint_feedback(kp, kd)
    for margin, admitted in [(least / 2, True), (2 * least, False), (least - 1e-6, True),
                             (least + 1e-6, False)]:
        assert (loop.dynamic_radius(system, 0, margin) <= 1.0) == admitted, margin


def test_a_law_taking_over_goes_on_with_the_payload_and_the_integral():
    """A program switch whose check chose other gains (model_following.set_follower): the
    new filtered law takes over the integral (a torque), the low pass's states and the
    payload's factor (its Phi rescaled to the new integral gain), so its payload torque
    Y p is the old one; from computed torque (no such states) it starts from rest."""
    model = load_model(f'{CONFIG}/models/ur5e_flexible_forearm.yaml')
    twin = model.rigid_twin()
    theta_m = static_equilibrium(twin, POSE.copy())
    rest = np.zeros(6)
    old = joint_follower.FilteredFollower(twin, PERIOD, (0.5, 2.0))
    old.set_bandwidth(6.0)
    rng = np.random.default_rng(5)
    for _ in range(50):
        old.effort(rest, theta_m - 1e-3 * np.abs(rng.normal(size=6)), rest, theta_m, rest,
                   rest)
    assert old.payload_factor != 1.0
    new = joint_follower.FilteredFollower(twin, PERIOD, (0.5, 2.0))
    new.set_bandwidth(4.8)
    new.set_damper((400.0, 5.0))
    new.take_over(old)
    assert new.payload_factor == old.payload_factor
    np.testing.assert_array_equal(new._integral, old._integral)
    np.testing.assert_array_equal(new._stages, old._stages)
    gain = joint_follower.INTEGRAL_RATIO * 4.8 ** 3
    assert -gain * new._payload_integral == pytest.approx(new.payload_factor - 1.0, rel=1e-12)
    new.take_over(joint_follower.ComputedTorqueFollower(twin, PERIOD, 36.0, 12.0))
    assert new.payload_factor == 1.0 and not new._integral.any()


def test_the_payload_alone_is_the_difference_of_the_heavier_and_the_nominal_twin():
    """Y from one walk equals ID(payload x2) - ID(payload x1) (linearity in the inertias).

    Expected: the definition of the module doc, evaluated on two full twins (rnea).
    """
    from flexible_manipulator.mechanics.perturbation import payload_alone, perturbed
    model = load_model(f'{CONFIG}/models/ur5e_flexible_forearm.yaml')
    twin = model.rigid_twin()
    alone, heavier = payload_alone(twin), perturbed(twin, payload=2.0)
    rng = np.random.default_rng(3)
    for _ in range(5):
        q, v, a = (rng.uniform(-2.0, 2.0, twin.nv) for _ in range(3))
        expected = (heavier.rnea(heavier.create_data(), q, v, a)
                    - twin.rnea(twin.create_data(), q, v, a))
        np.testing.assert_allclose(alone.rnea(alone.create_data(), q, v, a), expected,
                                   rtol=1e-9, atol=1e-9 * np.abs(expected).max())
    assert payload_alone(model) is None          # its forearm has elastic coordinates
