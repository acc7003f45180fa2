"""The rigid body with a Beghin servoconstraint (generalized Suslov problem), against theory.

Where the expected values come from (never from the code under test):

* Kozlov, "The dynamics of systems with servoconstraints. I" (2015), as rebuilt in
  shared/science/kozlov_servoconstraints.md: the reduced planar system (5.6)-(5.7) in the
  paper frame (a = e3, b = (0, b2, b3)), the linear integral of the case I13 = I23 = 0,
  K of (5.11), the invariant-measure conditions (5.15)-(5.16) and the cubic integral, the
  invariant line and its blow-up law lambda' = c lambda^2 (Theorem 1), the heavy body
  (8.1) and its integral <I w, c> (Theorem 7), realizability (5.5);
* the classical Suslov closed form w1 = A sech(k t), w2 = B tanh(k t) derived in the test;
* independent integrations of those equations, written here with NumPy and integrated
  with scipy's solve_ivp (DOP853, rtol 1e-11);
* the energy law dT/dt = lambda <b, w> of (2.4), integrated here by Simpson's rule.
"""

import math
import os

import numpy as np
import pytest
from scipy.integrate import simpson, solve_ivp

from flexible_manipulator.mechanics import lie, servo_kernels
from flexible_manipulator.mechanics.servo import (RealizabilityError, SE2_STRUCTURE,
                                                  SO3_STRUCTURE)
from flexible_manipulator.mechanics.servo_rigid_body import ServoRigidBody
from flexible_manipulator.mechanics.simulation import NonFiniteStateError, Simulation
from flexible_manipulator.model_config import load_model
from servo_sampling import output, run

MODELS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'config',
                      'models')
REFERENCE = dict(method='DOP853', rtol=1e-11, atol=1e-12)


def config(name):
    return load_model(os.path.join(MODELS, name + '.yaml'))


def random_rotation(seed):
    """A rotation matrix (QR of a Gaussian matrix, sign-fixed to det +1)."""
    Q, R = np.linalg.qr(np.random.default_rng(seed).normal(size=(3, 3)))
    Q = Q * np.sign(np.diag(R))
    return Q if np.linalg.det(Q) > 0 else -Q


def rotated(model, Q, **changes):
    """The same body described in body axes rotated by Q: I -> Q I Q^T, a -> Q a, ..."""
    args = dict(inertia=Q @ model.inertia @ Q.T, a=Q @ model.a, b=Q @ model.b,
                weight_moment=Q @ model.weight_moment, realization=model.realization,
                stabilization=model.stabilization, omega_max=model.omega_max)
    args.update(changes)
    return ServoRigidBody(model.name + '_rotated', **args)


def paper_frame(a, b):
    """Kozlov's frame: e3 = a/|a|, e2 along the part of b orthogonal to a, e1 = e2 x e3."""
    e3 = np.asarray(a, float) / np.linalg.norm(a)
    n = np.asarray(b, float) - (np.asarray(b, float) @ e3) * e3
    e2 = n / np.linalg.norm(n)
    return np.column_stack([np.cross(e2, e3), e2, e3])


def reduced_field(inertia, a, b):
    """Right-hand side of (5.6)-(5.7) for (w1, w2) in the paper frame (w3 = 0).

    (5.6): I11 w1' + I12 w2' + (I13 w1 + I23 w2) w2 = 0,
    (5.7): (b3 I12 - b2 I13) w1' + (b3 I22 - b2 I23) w2'
           - [(b3 I13 + b2 I12) w1 + (b3 I23 + b2 I22) w2] w1 + b2 (I11 w1 + I12 w2) w2 = 0.
    """
    P = paper_frame(a, b)
    Ip = P.T @ inertia @ P
    _, b2, b3 = P.T @ b
    I11, I22, I12, I13, I23 = Ip[0, 0], Ip[1, 1], Ip[0, 1], Ip[0, 2], Ip[1, 2]
    A = np.array([[I11, I12], [b3 * I12 - b2 * I13, b3 * I22 - b2 * I23]])

    def field(w):
        w1, w2 = w
        r1 = -(I13 * w1 + I23 * w2) * w2
        r2 = (((b3 * I13 + b2 * I12) * w1 + (b3 * I23 + b2 * I22) * w2) * w1
              - b2 * (I11 * w1 + I12 * w2) * w2)
        return np.linalg.solve(A, [r1, r2])
    return field, P


def reduced_solution(model, v0, times, events=None):
    """Paper-frame (w1, w2)(t) and the attitude R(t) by solve_ivp of (5.6)-(5.7), R' = R hat(w)."""
    field, P = reduced_field(model.inertia, model.a, model.b)

    def rhs(t, y):
        w = P @ np.array([y[0], y[1], 0.0])
        R = y[2:].reshape(3, 3)
        return np.concatenate([field(y[:2]), (R @ lie.hat3(w)).ravel()])
    y0 = np.concatenate([(P.T @ v0)[:2], np.eye(3).ravel()])
    return solve_ivp(rhs, (0.0, times[-1]), y0, t_eval=times, events=events, **REFERENCE), P


def test_structure_constants_give_euler_and_planar_newton_euler():
    """ad*_w m from the structure constants: m x w on so(3) (Euler's equations m' = m x w
    for m = I w), and on se(2) the coadjoint action of `lie.se2_coad` (planar Newton-Euler
    in the body frame: mu' = v m_u - u m_v, m_u' = omega m_v, m_v' = -omega m_u)."""
    rng = np.random.default_rng(1)
    out = np.zeros(3)
    for _ in range(5):
        m, w = rng.normal(size=3), rng.normal(size=3)
        servo_kernels.coadjoint(SO3_STRUCTURE, m, w, out)
        np.testing.assert_allclose(out, np.cross(m, w), atol=1e-15)
        servo_kernels.coadjoint(SE2_STRUCTURE, m, w, out)
        omega, u, v = w
        np.testing.assert_allclose(out, [v * m[1] - u * m[2], omega * m[2], -omega * m[1]],
                                   atol=1e-15)
        np.testing.assert_allclose(out, lie.se2_coad(w) @ m, atol=1e-15)


def test_generic_servo_top_matches_the_reduced_system_in_any_body_frame():
    """The generic config, described in randomly rotated body axes, reproduces the paper's
    reduced system (5.6)-(5.7) integrated by solve_ivp (w in the paper frame and the
    attitude, over 0.4 s, before its blow-up near 0.55 s): agreement to 1e-11 relative with
    rk4 at h = 0.1 ms, and the residual stays at round-off."""
    base = config('suslov_servo_generic')
    Q = random_rotation(7)
    model = rotated(base, Q)
    v0 = Q @ base.initial_v
    times = np.linspace(0.0, 0.4, 41)
    reference, P = reduced_solution(model, v0, times)
    qs, vs, outs = run(model, None, v0, times, step=1e-4)
    scale = np.abs(reference.y[:2]).max()
    np.testing.assert_allclose((vs @ P)[:, :2], reference.y[:2].T, rtol=0, atol=1e-11 * scale)
    for q, R in zip(qs, reference.y[2:].T):
        np.testing.assert_allclose(model.pose(q)[0], R.reshape(3, 3), rtol=0, atol=1e-10)
    assert np.abs(output(model, outs, 'residual')).max() < 1e-13 * scale
    assert scale > 20.0      # the run covers the growth towards the blow-up


def unit(vector):
    """The unit vector along ``vector`` (the model takes unit axes a and b)."""
    vector = np.asarray(vector, dtype=float)
    return vector / np.linalg.norm(vector)


@pytest.mark.parametrize('b', [(0.0, 0.0, 1.0), (0.0, 0.6, -0.8), (0.3, 0.5, 0.8),
                               (1.0, -0.5, 0.0), (-0.2, 0.7, 0.4)],
                         ids=['classical', 'generic', 'oblique', 'b_orthogonal_to_a',
                              'random'])
def test_constraint_holds_to_round_off_for_several_b(b):
    """<a, w> = 0 is a linear invariant of the equations (the multiplier makes
    <a, w'> = 0 at every stage), so every Runge-Kutta stage keeps it: after 2000 rk4 steps
    the residual is at round-off (< 1e-13 |w|) for every realizable b, including b
    orthogonal to a (realizable since I11 I23 != I12 I13, (5.5)), in rotated axes."""
    inertia = np.array([[2.0, 0.3, 0.4], [0.3, 3.0, 0.5], [0.4, 0.5, 4.0]])
    Q = random_rotation(3)
    model = ServoRigidBody('t', Q @ inertia @ Q.T, Q @ [0.0, 0.0, 1.0], Q @ unit(b))
    v0 = Q @ [0.4, -0.3, 0.0]
    _, vs, outs = run(model, None, v0, np.linspace(0.0, 2.0, 21))
    scale = np.abs(vs).max()
    assert np.abs(output(model, outs, 'residual')).max() < 1e-13 * scale
    assert np.abs(vs @ model.a).max() < 1e-13 * scale


@pytest.mark.parametrize('method', ['rk4', 'rosenbrock2'])
def test_stabilization_drives_the_residual_down_as_exp_minus_kt(method):
    """With the Baumgarte gain k the multiplier gives d<a, w>/dt = -k <a, w> exactly, so
    an initial residual r0 decays as r0 e^{-k t}: at h = 1 ms the discrete factor per step
    is the scheme's stability polynomial R(-k h) (rk4: 1 - kh + (kh)^2/2 - ..., within
    (kh)^5/120 of e^{-kh}; ros2 with W = I is Heun, within (kh)^3/6), checked over 1 s."""
    k = 5.0
    inertia = np.array([[2.0, 0.3, 0.4], [0.3, 3.0, 0.5], [0.4, 0.5, 4.0]])
    model = ServoRigidBody('t', inertia, (0.0, 0.0, 1.0), (0.0, 0.6, -0.8), stabilization=k)
    v0 = np.array([0.5, -0.4, 0.2])        # residual r0 = 0.2
    times = np.linspace(0.0, 1.0, 11)
    _, _, outs = run(model, None, v0, times, method=method)
    residual = output(model, outs, 'residual')
    order_error = (k * 1e-3) ** 5 / 120 if method == 'rk4' else (k * 1e-3) ** 3 / 6
    expected = 0.2 * np.exp(-k * times)
    np.testing.assert_allclose(residual, expected, rtol=2000 * order_error, atol=1e-15)
    assert residual[-1] < 0.2 * math.exp(-4.9)


def test_energy_changes_by_the_work_of_the_servo_torque():
    """dT/dt = lambda <b, w> (2.4): T(t) - T(0) equals the integral of the control power,
    integrated here by Simpson's rule on a 1 ms grid (error ~1e-10), for the generic top
    over 0.4 s; the energy change is large (the reaction does work)."""
    model = config('suslov_servo_generic')
    times = np.linspace(0.0, 0.4, 401)
    _, vs, outs = run(model, None, model.initial_v, times, step=1e-4)
    energy = output(model, outs, 'energy')
    power = output(model, outs, 'control_power')
    np.testing.assert_allclose(power, output(model, outs, 'lambda') * (vs @ model.b))
    work = np.array([simpson(power[:k + 1], x=times[:k + 1]) for k in range(2, 401, 50)])
    change = energy[2:401:50] - energy[0]
    np.testing.assert_allclose(change, work, rtol=0, atol=1e-8 * np.abs(energy).max())
    assert abs(energy[-1] - energy[0]) > 0.5 * energy[0]


def test_classical_suslov_closed_form_and_energy():
    """b || a (suslov_classical, I12 = I23 = 0): with T = E constant,
    w1 = sqrt(2E/I11) sech(k (t - t0)), w2 = sqrt(2E/I22) tanh(k (t - t0)),
    k = I13 sqrt(2E) / (I11 sqrt(I22)) (from I11 w1' = -I13 w1 w2, I22 w2' = I13 w1^2).
    In rotated body axes, rk4 at 1 ms over 6 s reproduces it to 1e-12 and T to 1e-12."""
    base = config('suslov_classical')
    inertia = base.inertia
    I11, I22, I13 = inertia[0, 0], inertia[1, 1], inertia[0, 2]
    w10, w20 = base.initial_v[:2]
    E = 0.5 * (I11 * w10 ** 2 + I22 * w20 ** 2)
    k = I13 * math.sqrt(2 * E) / (I11 * math.sqrt(I22))
    B = math.sqrt(2 * E / I22)
    t0 = -math.atanh(w20 / B) / k
    times = np.linspace(0.0, 6.0, 61)
    expected = np.column_stack([math.sqrt(2 * E / I11) / np.cosh(k * (times - t0)),
                                B * np.tanh(k * (times - t0)), 0 * times])
    Q = random_rotation(11)
    model = rotated(base, Q)
    _, vs, outs = run(model, None, Q @ base.initial_v, times)
    np.testing.assert_allclose(vs @ Q, expected, rtol=0, atol=1e-12)
    energy = output(model, outs, 'energy')
    np.testing.assert_allclose(energy, E, rtol=1e-12)
    assert np.abs(output(model, outs, 'control_power')).max() < 1e-12
    assert vs[-1] @ Q[:, 1] > 0.99 * B        # the permanent rotation about e2 is reached


def test_b_parallel_to_inertia_times_a_is_not_the_classical_case():
    """The digest's caveat: b = I a differs from b || a unless a is an eigenvector of I, and
    then the reaction works: T changes (by the integrated control power)."""
    base = config('suslov_classical')
    model = rotated(base, np.eye(3), b=unit(base.inertia @ base.a))
    times = np.linspace(0.0, 2.0, 2001)
    _, _, outs = run(model, None, base.initial_v, times)
    energy = output(model, outs, 'energy')
    work = simpson(output(model, outs, 'control_power'), x=times)
    assert abs(energy[-1] - energy[0]) > 1e-2 * energy[0]
    assert abs(energy[-1] - energy[0] - work) < 1e-9 * energy[0]


def test_linear_integral_and_straight_trajectories():
    """I13 = I23 = 0 (suslov_linear_integral): the paper's linear integral
    (b2 I11 - b1 I12) w1 + (b2 I12 - b1 I22) w2 is constant (to 1e-12), the trajectory is
    the straight line through w0 along d = M^-1 (b1, b2), and it ends on an equilibrium
    where lambda b3 = I12 w1^2 + (I22 - I11) w1 w2 - I12 w2^2 (5.3) vanishes. The model's
    own 'linear_integral' output is constant too."""
    model = config('suslov_linear_integral')
    inertia, (b1, b2, b3) = model.inertia, model.b
    I11, I22, I12 = inertia[0, 0], inertia[1, 1], inertia[0, 1]
    times = np.linspace(0.0, 30.0, 301)
    _, vs, outs = run(model, None, model.initial_v, times)
    w1, w2 = vs[:, 0], vs[:, 1]
    integral = (b2 * I11 - b1 * I12) * w1 + (b2 * I12 - b1 * I22) * w2
    np.testing.assert_allclose(integral, integral[0], rtol=0, atol=1e-12)
    code = output(model, outs, 'linear_integral')
    np.testing.assert_allclose(code, code[0], rtol=0, atol=1e-12)
    d = np.linalg.solve([[I11, I12], [I12, I22]], [b1, b2])
    offset = vs[:, :2] - vs[0, :2]
    np.testing.assert_allclose(offset[:, 0] * d[1] - offset[:, 1] * d[0], 0.0, atol=1e-12)
    lam_b3 = I12 * w1 ** 2 + (I22 - I11) * w1 * w2 - I12 * w2 ** 2
    np.testing.assert_allclose(output(model, outs, 'lambda') * b3, lam_b3, atol=1e-12)
    assert abs(lam_b3[-1]) < 1e-4 * abs(lam_b3).max()    # at rest on a line of equilibria
    assert np.linalg.norm(offset[-1]) > 0.1                # after a real motion


def test_quadratic_integral_K_of_5_11():
    """I'12 = I'13 = 0 in the paper frame: K = I11 [b2 (I11 - I22) - b3 I23] w1^2
    - I23 (b3 I22 - b2 I23) w2^2 (5.11) is constant along the motion (to 1e-11), here
    definite, so the motion runs along an ellipse arc into the equilibrium axis w2 = 0;
    the trajectory agrees with solve_ivp of (5.6)-(5.7) and the model reports K too."""
    inertia = np.array([[2.0, 0.0, 0.0], [0.0, 3.0, 0.5], [0.0, 0.5, 4.0]])
    b = np.array([0.0, 0.6, 0.8])
    Q = random_rotation(5)
    model = ServoRigidBody('k', Q @ inertia @ Q.T, Q @ [0.0, 0.0, 1.0], Q @ b)
    assert 'quadratic_integral_K' in model.output_names
    I11, I22, I23, b2, b3 = 2.0, 3.0, 0.5, 0.6, 0.8
    k1, k2 = I11 * (b2 * (I11 - I22) - b3 * I23), -I23 * (b3 * I22 - b2 * I23)
    assert k1 < 0 and k2 < 0                       # definite: Suslov-like portrait
    v0 = Q @ [0.5, 1.0, 0.0]
    times = np.linspace(0.0, 20.0, 201)
    _, vs, outs = run(model, None, v0, times)
    w = vs @ Q
    K = k1 * w[:, 0] ** 2 + k2 * w[:, 1] ** 2
    np.testing.assert_allclose(K, K[0], rtol=1e-11)
    code = output(model, outs, 'quadratic_integral_K')
    np.testing.assert_allclose(code, code[0], rtol=1e-11)
    reference, P = reduced_solution(model, v0, times)
    np.testing.assert_allclose((vs @ P)[:, :2], reference.y[:2].T, atol=1e-9)
    assert abs(w[-1, 1]) < 1e-2 * abs(w[0, 1])


def divergence(model, w):
    """d w1'/d w1 + d w2'/d w2 of the model's flow on the constraint plane (paper frame),
    by central differences (exact for a quadratic field up to round-off)."""
    P = model.paper_frame
    data = model.create_data()
    q = model.neutral_configuration()
    total = 0.0
    for i in range(2):
        e = 1e-4 * P[:, i]
        plus = model.acceleration(data, q, P @ [w[0], w[1], 0.0] + e)[0]
        minus = model.acceleration(data, q, P @ [w[0], w[1], 0.0] - e)[0]
        total += (P[:, i] @ (plus - minus)) / 2e-4
    return total


def flow_jacobian_determinant(model, w0, duration, delta=1e-6):
    """det of the flow map's Jacobian on the constraint plane (finite differences)."""
    P = model.paper_frame
    columns = []
    for i in range(2):
        ends = []
        for sign in (1.0, -1.0):
            start = P @ np.array([w0[0], w0[1], 0.0]) + sign * delta * P[:, i]
            sim = Simulation(model, 1e-3, 'rk4', None, start)
            sim.advance([], duration)
            ends.append((P.T @ sim.v)[:2])
        columns.append((ends[0] - ends[1]) / (2 * delta))
    return np.linalg.det(np.column_stack(columns))


def test_invariant_measure_case_is_area_preserving_with_a_cubic_integral():
    """suslov_invariant_measure satisfies (5.15)-(5.16) (evaluated here); then the reduced
    flow has zero divergence (5.14), its flow map preserves area (Jacobian determinant 1
    after 1 s), and H = (w1 w2' - w2 w1')/3 with the paper's reduced field (5.6)-(5.7) is
    conserved along the simulated motion. The generic top, for contrast, has a nonzero
    divergence and does not preserve area."""
    model = config('suslov_invariant_measure')
    P = paper_frame(model.a, model.b)
    Ip = P.T @ model.inertia @ P
    _, b2, b3 = P.T @ model.b
    I11, I22, I12, I13, I23 = Ip[0, 0], Ip[1, 1], Ip[0, 1], Ip[0, 2], Ip[1, 2]
    c15 = b2 * (I11 ** 2 - I11 * I22 + 2 * I12 ** 2 + I13 ** 2) + b3 * (I12 * I13 - I11 * I23)
    c16 = b2 * (I11 * I12 + I12 * I22 + I13 * I23) + b3 * (I13 * I22 - I12 * I23)
    assert abs(c15) < 1e-12 and abs(c16) < 1e-12
    generic = config('suslov_servo_generic')
    for w in ([1.0, 0.0], [0.0, 1.0], [-0.7, 0.4]):
        assert abs(divergence(model, w)) < 1e-9
        assert abs(divergence(generic, w)) > 1e-2
    assert abs(flow_jacobian_determinant(model, [-1.0, 0.0], 1.0) - 1.0) < 1e-7
    assert abs(flow_jacobian_determinant(generic, [-1.0, 1.0], 1.0) - 1.0) > 1e-1
    field, P = reduced_field(model.inertia, model.a, model.b)
    times = np.linspace(0.0, 5.0, 51)
    _, vs, outs = run(model, None, model.initial_v, times)
    H = []
    for w in vs @ P:
        v1, v2 = field(w[:2])
        H.append((w[0] * v2 - w[1] * v1) / 3.0)
    H = np.array(H)
    assert abs(H[0]) > 1e-2
    np.testing.assert_allclose(H, H[0], rtol=1e-10)
    code = output(model, outs, 'cubic_integral')
    np.testing.assert_allclose(code, H, rtol=1e-9)


def heavy_reference(model, v0, times):
    """solve_ivp of (8.1): I w' + w x I w = gamma x c + lambda b, gamma' = gamma x w,
    lambda from <a, w'> = 0; gamma(0) = R(q0)^T e_z = e_z for the identity attitude."""
    inertia, a, b, c = model.inertia, model.a, model.b, model.weight_moment
    Iinv = np.linalg.inv(inertia)

    def rhs(t, y):
        w, gamma = y[:3], y[3:]
        torque = np.cross(inertia @ w, w) + np.cross(gamma, c)
        lam = -(a @ Iinv @ torque) / (a @ Iinv @ b)
        return np.concatenate([Iinv @ (torque + lam * b), np.cross(gamma, w)])
    return solve_ivp(rhs, (0.0, times[-1]), np.concatenate([v0, [0.0, 0.0, 1.0]]),
                     t_eval=times, **REFERENCE)


def test_heavy_body_theorem_7_integral():
    """suslov_heavy_kharlamova (I a = rho a, c _|_ a, c _|_ b): the motion agrees with
    solve_ivp of (8.1) (w and gamma = R^T e_z, 1e-9 over 3 s at h = 0.1 ms), F = <I w, c>
    is constant (8.3), |gamma| = 1, and T + <c, gamma> changes by the control work (it is
    not conserved). With b = a (Kharlamova's nonholonomic case) T + V is conserved."""
    model = config('suslov_heavy_kharlamova')
    times = np.linspace(0.0, 3.0, 3001)
    qs, vs, outs = run(model, None, model.initial_v, times, step=1e-4)
    reference = heavy_reference(model, model.initial_v, times)
    np.testing.assert_allclose(vs, reference.y[:3].T, atol=1e-9)
    gammas = np.array([model.pose(q)[0][2] for q in qs])
    np.testing.assert_allclose(gammas, reference.y[3:].T, atol=1e-9)
    F = (vs @ model.inertia) @ model.weight_moment
    np.testing.assert_allclose(F, F[0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(output(model, outs, 'kharlamova_integral'), F, atol=1e-12)
    np.testing.assert_allclose(output(model, outs, 'gamma_norm'), 1.0, atol=1e-13)
    energy = output(model, outs, 'energy')
    work = simpson(output(model, outs, 'control_power'), x=times)
    assert abs(energy[-1] - energy[0]) > 0.05
    assert abs(energy[-1] - energy[0] - work) < 1e-9
    ideal = rotated(model, np.eye(3), b=model.a)
    _, _, outs = run(ideal, None, model.initial_v, np.linspace(0.0, 3.0, 31))
    np.testing.assert_allclose(output(ideal, outs, 'energy'), output(ideal, outs, 'energy')[0],
                               rtol=0, atol=1e-10)
    assert 'kharlamova_integral' in ideal.output_names


def invariant_lines(field):
    """Real roots z of f(z) = v2(1, z) - z v1(1, z) (3.3) and c = v1(1, z) on each line."""
    zs = np.array([-1.0, 0.0, 1.0, 2.0])
    f = [field((1.0, z))[1] - z * field((1.0, z))[0] for z in zs]
    roots = np.roots(np.polyfit(zs, f, 3))     # a cubic through 4 points: exact
    return [(z.real, field((1.0, z.real))[0]) for z in roots if abs(z.imag) < 1e-9]


def test_finite_time_blow_up_is_detected_at_the_predicted_time():
    """Generic servo top: on the invariant line x = s (1, z*) of the reduced system,
    s' = c s^2 (Theorem 1), so s = s0 / (1 - c s0 t) reaches |w| = omega_max at
    t_max = (1/s0 - 1/s_max)/c, s_max = sign(s0) omega_max / sqrt(1 + z*^2). The simulation
    (rk4, 0.1 ms steps) raises NonFiniteStateError naming the blow-up within two steps
    before t_max, keeps the last good (finite) state, and refuses to continue. From the
    config's generic initial state the escape time matches solve_ivp's to 1e-3 s."""
    model = config('suslov_servo_generic')
    field, P = reduced_field(model.inertia, model.a, model.b)
    (z, c), = invariant_lines(field)
    s0 = math.copysign(5.0, c) / math.sqrt(1 + z * z)        # |w0| = 5 rad/s, c s0 > 0
    s_max = math.copysign(model.omega_max, c) / math.sqrt(1 + z * z)
    t_max = (1.0 / s0 - 1.0 / s_max) / c
    assert 0.5 < t_max < 2.0
    step = 1e-4
    sim = Simulation(model, step, 'rk4', None, P @ [s0, s0 * z, 0.0])
    with pytest.raises(NonFiniteStateError, match='blow-up') as error:
        while sim.time < 2 * t_max:
            sim.advance([], step)
    assert 'omega_max = 1e+03 rad/s' in str(error.value)
    assert t_max - 2.5 * step < sim.time <= t_max
    assert np.all(np.isfinite(sim.state)) and np.linalg.norm(sim.v) < model.omega_max
    kept = sim.state.copy()
    with pytest.raises(NonFiniteStateError):
        sim.advance([], step)
    np.testing.assert_array_equal(sim.state, kept)

    def escape(t, y):
        return y[0] ** 2 + y[1] ** 2 - model.omega_max ** 2
    escape.terminal = True
    y0 = (P.T @ model.initial_v)[:2]
    reference = solve_ivp(lambda t, y: field(y), (0.0, 5.0), y0, events=escape, **REFERENCE)
    t_ref = reference.t_events[0][0]
    sim = Simulation(model, 1e-4, 'rk4', model.initial_q, model.initial_v)
    with pytest.raises(NonFiniteStateError, match='blow-up'):
        sim.advance([], 1.0)
    assert 0.0 < t_ref < 1.0
    sim = Simulation(model, 1e-4, 'rk4', model.initial_q, model.initial_v)
    with pytest.raises(NonFiniteStateError):
        while True:
            sim.advance([], 1e-3)
    assert abs(sim.time - t_ref) < 1e-3


def test_realizability_is_checked_at_construction():
    """(2.5) <I^-1 a, b> != 0: b orthogonal to I^-1 a is refused with RealizabilityError
    naming b and the margin; (5.5) with b3 = 0 and I11 I23 = I12 I13 is refused too, while
    b3 = 0 with I11 I23 != I12 I13 (b orthogonal to a, not to I^-1 a) is realizable."""
    inertia = np.array([[2.0, 0.3, 0.4], [0.3, 3.0, 0.5], [0.4, 0.5, 4.0]])
    a = unit([0.2, -0.1, 1.0])
    b = unit(np.cross(np.linalg.solve(inertia, a), [0.3, 1.0, -0.2]))
    with pytest.raises(RealizabilityError, match=r'^b: realizability margin <I\^-1 a, b>'):
        ServoRigidBody('t', inertia, a, b)
    degenerate = np.array([[2.0, 0.3, 0.4], [0.3, 3.0, 0.06], [0.4, 0.06, 4.0]])
    assert degenerate[0, 0] * degenerate[1, 2] == pytest.approx(
        degenerate[0, 1] * degenerate[0, 2])
    with pytest.raises(RealizabilityError, match='margin'):
        ServoRigidBody('t', degenerate, (0, 0, 1), (0.0, 1.0, 0.0))
    model = ServoRigidBody('t', inertia, (0, 0, 1), (0.0, 1.0, 0.0))
    cofactor = inertia[0, 0] * inertia[1, 2] - inertia[0, 1] * inertia[0, 2]
    expected = -cofactor / np.linalg.det(inertia)      # (5.5) with b = e2, over det I
    assert model.margin == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize('change, field', [
    (dict(inertia=[[1, 0, 0], [0, -1, 0], [0, 0, 1]]), 'inertia'),
    (dict(inertia=[[1, 0.5, 0], [0, 1, 0], [0, 0, 1]]), 'inertia'),
    (dict(inertia=[[1, 0, 0], [0, 1, 0], [0, 0, math.nan]]), 'inertia'),
    (dict(a=[0, 0, 0]), 'a'), (dict(b=[0, math.inf, 1]), 'b'), (dict(b=[0, 0]), 'b'),
    (dict(a=[0, 0, 2]), 'a'), (dict(b=[0.3, 0.5, 0.8]), 'b'),
    (dict(weight_moment=[0, math.nan, 0]), 'weight_moment'),
    (dict(realization='ideal'), 'realization'), (dict(stabilization=-1.0), 'stabilization'),
    (dict(omega_max=0.0), 'omega_max'), (dict(position=[0, 0]), 'position')])
def test_bad_parameters_are_refused_naming_the_field(change, field):
    """Non-SPD or non-finite inertia, zero, non-unit or non-finite a, b, bad options:
    ValueError naming the field."""
    args = dict(inertia=np.diag([1.0, 2.0, 3.0]), a=[0, 0, 1], b=[0, 0, 1])
    args.update(change)
    with pytest.raises(ValueError, match=f'^{field}:'):
        ServoRigidBody('t', **args)


def test_state_checks_and_failure_text():
    """check_state names a non-finite entry, a non-unit quaternion and |w| > omega_max;
    failure() names the blow-up."""
    model = config('suslov_classical')
    q, v = model.initial_q, model.initial_v
    model.check_state(q, v)
    with pytest.raises(ValueError, match='v: wy is not finite'):
        model.check_state(q, [0.0, math.nan, 0.0])
    with pytest.raises(ValueError, match='quaternion must be unit'):
        model.check_state(2 * q, v)
    with pytest.raises(ValueError, match='omega_max'):
        model.check_state(q, [2e3, 0.0, 0.0])
    assert model.failure(q, [2e3, 0.0, 0.0]).startswith('blow-up: |w| = 2e+03 rad/s exceeds')
    assert 'not finite' in model.failure(q, [math.nan, 0.0, 0.0])


@pytest.mark.parametrize('method, tolerance', [('rk4', 1e-13), ('rosenbrock2', 5e-13)])
def test_quaternion_stays_unit_on_the_group(method, tolerance):
    """20 000 steps of a fast tumble (|w| ~ 5 rad/s): | |q| - 1 | stays at accumulated
    round-off, ~1e-13 (integrated on SO(3) by q exp(theta); a componentwise q' = q w/2
    would drift by the truncation error instead)."""
    model = rotated(config('suslov_classical'), random_rotation(2))
    sim = Simulation(model, 1e-3, method, None, model.project_velocity([3.0, -4.0, 1.0]))
    sim.advance([], 20.0)
    assert abs(np.linalg.norm(sim.q) - 1.0) < tolerance


def test_free_plant_fed_with_the_servo_multiplier_reproduces_the_motion():
    """Open loop, 0.5 s: the free plant (suslov_free_actuated: same body, no constraint,
    torque u along b) driven by the servo model's lambda(t) (recorded each 1 ms step and
    applied as the step's trapezoidal mean, O(h^2)) follows the servo motion to 1e-6 rad/s
    and keeps <a, w> below 1e-6: the free plant is the same physics. With u = 0 it departs
    (the controller's job is to close the loop)."""
    servo_model = config('suslov_linear_integral')
    free = config('suslov_free_actuated')
    np.testing.assert_array_equal(free.inertia, servo_model.inertia)
    np.testing.assert_array_equal(free.b, servo_model.b)
    assert (free.nu, free.realization) == (1, 'free')
    times = np.linspace(0.0, 0.5, 501)
    qs, vs, outs = run(servo_model, None, free.initial_v, times)
    lam = output(servo_model, outs, 'lambda')
    sim = Simulation(free, 1e-3, 'rk4', free.initial_q, free.initial_v)
    data = free.create_data()
    error = residual = 0.0
    for k in range(500):
        u = [0.5 * (lam[k] + lam[k + 1])]
        sim.advance(u, 1e-3)
        error = max(error, np.abs(sim.v - vs[k + 1]).max())
        residual = max(residual, abs(free.outputs(data, sim.q, sim.v, u)[5]))
    assert error < 1e-6 and residual < 1e-6
    assert np.abs(sim.q - qs[-1]).max() < 1e-6
    sim.reset()
    sim.advance([0.0], 0.5)
    assert np.abs(sim.v - vs[-1]).max() > 1e-2
