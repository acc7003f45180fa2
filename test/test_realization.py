"""Ideal (Gauss / Udwadia-Kalaba) and servo (Beghin) realization of program constraints.

Expected values: the Lagrange-multiplier (KKT) system solved here with numpy; the
closed-form dynamics, inverse kinematics and acceleration of a two-link point-mass arm
written out here; Kozlov's servo multiplier for a rigid body (formula in the science
digest, derived by differentiating <a, omega> = 0); the damped-least-squares formula
G^T (G G^T + lambda^2 I)^-1 r; and the package's own forward dynamics for checks that
the efforts really produce A q'' = b.
"""

import math
from pathlib import Path

import numpy as np
import pytest

from flexible_manipulator.control.programs import PointProgram
from flexible_manipulator.control.realization import (
    IdealRealization, RealizabilityError, ServoRealization, check_realizability,
    complement_acceleration, gauss_acceleration, lagrange_acceleration, posture_force)
from flexible_manipulator.control.stabilization import Stabilization
from flexible_manipulator.control.trajectories import (
    CirclePath, ConstantRateTiming, ConstantReference, Trajectory)
from flexible_manipulator.mechanics.link_description import Joint, Link, RigidBody
from flexible_manipulator.mechanics.links import chain_from_links
from flexible_manipulator.model_config import load_model

MODELS = Path(__file__).resolve().parents[1] / 'config' / 'models'


def random_problem(seed, nv=6, m=3):
    """SPD M, full-rank A, b and a force f."""
    rng = np.random.default_rng(seed)
    root = rng.normal(size=(nv, nv))
    M = root @ root.T + nv * np.eye(nv)
    return M, rng.normal(size=(m, nv)), rng.normal(size=m), rng.normal(size=nv)


def kkt(M, A, b, f):
    """Solve M q'' = f + A^T mu, A q'' = b directly (the reference)."""
    nv, m = M.shape[0], A.shape[0]
    system = np.block([[M, -A.T], [A, np.zeros((m, m))]])
    solution = np.linalg.solve(system, np.concatenate([f, b]))
    return solution[:nv], solution[nv:]


def test_udwadia_kalaba_forms_equal_lagrange_multipliers():
    """Moore-Penrose, orthogonal-complement and Lagrange forms equal the KKT solution.

    Also Gauss's principle: any other admissible q'' + d (A d = 0) has a larger
    (q'' - a)^T M (q'' - a), a = M^-1 f.
    """
    for seed in range(5):
        M, A, b, f = random_problem(seed)
        expected, mu = kkt(M, A, b, f)
        np.testing.assert_allclose(gauss_acceleration(M, f, A, b), expected, atol=1e-12)
        np.testing.assert_allclose(complement_acceleration(M, f, A, b), expected, atol=1e-12)
        qdd, multipliers = lagrange_acceleration(M, f, A, b)
        np.testing.assert_allclose(qdd, expected, atol=1e-12)
        np.testing.assert_allclose(multipliers, mu, atol=1e-12)
        a = np.linalg.solve(M, f)

        def gauss(x):
            return (x - a) @ M @ (x - a)
        null = np.linalg.svd(A)[2][A.shape[0]:].T
        for d in null.T:
            assert gauss(expected + 1e-3 * d) > gauss(expected)
        ideal = IdealRealization(6, 6, 3)
        u = ideal.realize(M, -f, A, b)
        np.testing.assert_allclose(u, A.T @ mu, atol=1e-11)   # B = I: u = M q'' + h
        assert ideal.status.ok and ideal.status.code == 'exact'


def test_dependent_consistent_rows_are_realized_by_the_pseudo_inverse():
    """A third row = 2 x the first (b likewise): the Moore-Penrose form gives the
    two-row KKT answer; the Lagrange and complement forms refuse, naming the rank."""
    M, A, b, f = random_problem(7, m=2)
    expected, _ = kkt(M, A, b, f)
    A3, b3 = np.vstack([A, 2 * A[0]]), np.append(b, 2 * b[0])
    np.testing.assert_allclose(gauss_acceleration(M, f, A3, b3), expected, atol=1e-11)
    with pytest.raises(ValueError, match='dependent'):
        lagrange_acceleration(M, f, A3, b3)
    with pytest.raises(ValueError, match='full rank'):
        complement_acceleration(M, f, A3, b3)
    ideal = IdealRealization(6, 6, 3)
    ideal.realize(M, -f, A3, b3)
    assert ideal.status.code == 'redundant' and ideal.status.ok
    np.testing.assert_allclose(ideal.acceleration, expected, atol=1e-11)


def test_inconsistent_rows_are_reported_with_their_residual():
    """Same rows, contradicting right-hand sides (b3 = 2 b1 + 1): status 'inconsistent'."""
    M, A, b, f = random_problem(8, m=2)
    A3, b3 = np.vstack([A, 2 * A[0]]), np.append(b, 2 * b[0] + 1.0)
    ideal = IdealRealization(6, 6, 3)
    ideal.realize(M, -f, A3, b3)
    assert ideal.status.code == 'inconsistent' and not ideal.status.ok
    assert ideal.status.residual > 0.1
    assert 'inconsistent constraint rows' in ideal.status.message


def point_mass_arm(l1, l2, m1, m2):
    """Planar arm, massless links, point masses m1 at the elbow and m2 at the end."""
    def link(name, joint, length, mass):
        return Link(name, Joint(joint), length, body=RigidBody(0.0), payload=RigidBody(mass))
    return chain_from_links('point_mass_arm', [link('l1', 'j1', l1, m1), link('l2', 'j2', l2, m2)])


def hand_torque(t, l1, l2, m1, m2, center, radius, rate):
    """tau = M(th) th'' + c(th, th') for the end mass on the circle, written out by hand.

    Inverse kinematics (elbow angle positive): c2 = (x^2 + y^2 - l1^2 - l2^2) / (2 l1 l2),
    th1 = atan2(y, x) - atan2(l2 s2, l1 + l2 c2); th' = J^-1 p', th'' = J^-1 (p'' - J' th').
    Lagrange equations of two point masses:
    M = [[(m1 + m2) l1^2 + m2 l2^2 + 2 m2 l1 l2 c2, m2 l2^2 + m2 l1 l2 c2],
         [m2 l2^2 + m2 l1 l2 c2, m2 l2^2]],
    c = m2 l1 l2 s2 (-(2 th1' th2' + th2'^2), th1'^2).
    """
    angle = rate * t
    p = np.array(center) + radius * np.array([math.cos(angle), math.sin(angle)])
    dp = radius * rate * np.array([-math.sin(angle), math.cos(angle)])
    ddp = -radius * rate ** 2 * np.array([math.cos(angle), math.sin(angle)])
    c2 = (p @ p - l1 ** 2 - l2 ** 2) / (2 * l1 * l2)
    th2 = math.acos(c2)
    s2 = math.sin(th2)
    th1 = math.atan2(p[1], p[0]) - math.atan2(l2 * s2, l1 + l2 * c2)
    t1, t12 = th1, th1 + th2
    J = np.array([[-l1 * math.sin(t1) - l2 * math.sin(t12), -l2 * math.sin(t12)],
                  [l1 * math.cos(t1) + l2 * math.cos(t12), l2 * math.cos(t12)]])
    w = np.linalg.solve(J, dp)
    w1, w12 = w[0], w[0] + w[1]
    jdot_w = np.array([-l1 * math.cos(t1) * w1 ** 2 - l2 * math.cos(t12) * w12 ** 2,
                       -l1 * math.sin(t1) * w1 ** 2 - l2 * math.sin(t12) * w12 ** 2])
    acc = np.linalg.solve(J, ddp - jdot_w)
    mass = np.array([[(m1 + m2) * l1 ** 2 + m2 * l2 ** 2 + 2 * m2 * l1 * l2 * c2,
                      m2 * l2 ** 2 + m2 * l1 * l2 * c2],
                     [m2 * l2 ** 2 + m2 * l1 * l2 * c2, m2 * l2 ** 2]])
    coriolis = m2 * l1 * l2 * s2 * np.array([-(2 * w[0] * w[1] + w[1] ** 2), w[0] ** 2])
    return np.array([th1, th2]), w, mass @ acc + coriolis


def test_two_link_point_mass_arm_on_a_circle_needs_the_hand_computed_torques():
    """End mass on the circle c = (1, 0.5), r = 0.5, 1 rad/s, m1 = m2 = l1 = l2 = 1.

    On the program (state from the hand inverse kinematics) the stabilization terms
    vanish and the ideal realization must return exactly the hand torques (1e-10 N m).
    """
    l1 = l2 = m1 = m2 = 1.0
    center, radius, rate = (1.0, 0.5), 0.5, 1.0
    model = point_mass_arm(l1, l2, m1, m2)
    data = model.create_data()
    circle = Trajectory(CirclePath(center, radius), ConstantRateTiming(rate))
    program = PointProgram(model, 1, l2, circle, axes=(0, 1))
    stab = Stabilization.for_program(program, alpha=5.0)
    ideal = IdealRealization(2, 2, 2)
    for t in (0.0, 0.8, 2.1, 4.0, 5.5):
        q, v, expected = hand_torque(t, l1, l2, m1, m2, center, radius, rate)
        program.evaluate(t, q, v)
        np.testing.assert_allclose(program.phi, 0.0, atol=1e-13)
        np.testing.assert_allclose(program.rate, 0.0, atol=1e-13)
        M = model.mass_matrix(data, q).copy()
        h = model.bias_forces(data, q, v).copy()
        u = ideal.realize(M, h, program.jacobian, stab.evaluate(program))
        np.testing.assert_allclose(u, expected, rtol=0, atol=1e-10)


def test_servo_refuses_a_direction_that_cannot_realize_the_constraint():
    """Rigid body I = diag(1, 2, 3), constraint <a, omega> = 0 with a = e3, force along
    b = e1: <I^-1 a, b> = (e3/3) . e1 = 0 (hand), so the servo constraint is not
    realizable: strict mode and check_realizability raise; lenient mode reports it."""
    inertia = np.diag([1.0, 2.0, 3.0])
    a = np.array([[0.0, 0.0, 1.0]])
    b = np.array([[1.0], [0.0], [0.0]])
    omega = np.array([0.3, -0.4, 0.0])
    h = np.cross(omega, inertia @ omega)
    with pytest.raises(RealizabilityError, match='not realizable'):
        check_realizability(inertia, a, b)
    strict = ServoRealization(3, 1, 1, strict=True)
    with pytest.raises(RealizabilityError, match=r'det\(A M\^-1 B\) = 0'):
        strict.realize(inertia, h, a, np.zeros(1), b)
    lenient = ServoRealization(3, 1, 1)
    u = lenient.realize(inertia, h, a, np.zeros(1), b)
    assert lenient.status.code == 'unrealizable' and not lenient.status.ok
    assert np.all(np.isfinite(u)) and 'not realizable along the input directions' in \
        lenient.status.message


def test_servo_effort_is_kozlovs_multiplier_for_a_realizable_direction():
    """b = (0, 1, 1)/sqrt(2): <I^-1 a, b> = 1/(3 sqrt 2) != 0. With psi = <a, omega> = 0
    the stabilization term vanishes and the effort equals Kozlov's
    lambda = -<a, I^-1 (I omega x omega)> / <a, I^-1 b>."""
    inertia = np.diag([1.0, 2.0, 3.0])
    a = np.array([0.0, 0.0, 1.0])
    b = np.array([0.0, 1.0, 1.0]) / math.sqrt(2.0)
    omega = np.array([0.3, -0.4, 0.0])
    h = np.cross(omega, inertia @ omega)           # I omega' + omega x I omega = b lambda
    expected = -(a @ np.linalg.solve(inertia, np.cross(inertia @ omega, omega))) / (
        a @ np.linalg.solve(inertia, b))
    servo = ServoRealization(3, 1, 1)
    u = servo.realize(inertia, h, a[None, :], np.zeros(1), b[:, None])
    assert u[0] == pytest.approx(expected, rel=1e-13)
    assert servo.status.code == 'exact'
    assert a @ servo.acceleration == pytest.approx(0.0, abs=1e-14)


def flexible_arm():
    """Return the default planar two-link flexible arm."""
    return load_model(str(MODELS / 'two_link_flexible.yaml'))


def test_servo_realization_on_the_flexible_arm_produces_the_constraint_acceleration():
    """Tip of the forearm on a circle with joint torques only: the package's forward
    dynamics under the returned efforts gives J q'' = b (1e-9); the ideal realization
    reports that it would need forces on the unactuated modes."""
    model = flexible_arm()
    data = model.create_data()
    program = PointProgram(model, 1, 0.4, Trajectory(CirclePath([0.55, 0.35], 0.05),
                                                     ConstantRateTiming(3.0)), axes=(0, 1))
    stab = Stabilization.for_program(program, alpha=10.0)
    servo = ServoRealization(model.nv, model.nu, 2)       # no effort limits here
    rng = np.random.default_rng(11)
    q = np.concatenate([[0.2, 1.4], 1e-4 * rng.normal(size=model.nv - 2)])
    v = np.concatenate([[0.1, -0.2], 1e-3 * rng.normal(size=model.nv - 2)])
    program.evaluate(0.5, q, v)
    b = stab.evaluate(program).copy()
    M, h = model.mass_matrix(data, q).copy(), model.bias_forces(data, q, v).copy()
    u = servo.realize(M, h, program.jacobian, b, model.input_matrix()).copy()
    assert servo.status.ok, servo.status.message
    qdd = model.forward_dynamics(data, q, v, u)
    np.testing.assert_allclose(program.jacobian @ qdd, b, rtol=0, atol=1e-9)
    ideal = IdealRealization(model.nv, model.nu, 2)
    ideal.realize(M, h, program.jacobian, b, model.input_matrix())
    assert ideal.status.code == 'unrealizable'
    assert 'outside the range of B' in ideal.status.message


def test_near_singular_servo_switches_to_damped_least_squares():
    """G = A M^-1 B = [[1, 0], [1, 1e-6]] (condition ~2e6 > 1e4): the effort is
    G^T (G G^T + lambda^2 I)^-1 r with lambda^2 = eps^2 - sigma_min^2, eps = sigma_max/1e4
    (formula evaluated here; its normal equations have condition ~1/lambda^2 ~ 1e8, hence
    rtol 1e-6), bounded where the exact inverse would give ~1e6."""
    M = np.eye(3)
    B = np.eye(3)[:, :2]
    A = np.array([[1.0, 0.0, 0.0], [1.0, 1e-6, 0.0]])
    b = np.array([1.0, 2.0])
    h = np.zeros(3)
    servo = ServoRealization(3, 2, 2)
    u = servo.realize(M, h, A, b, B)
    G = A @ B
    s = np.linalg.svd(G, compute_uv=False)
    eps = s[0] / 1e4
    lam2 = eps ** 2 - s[-1] ** 2
    expected = G.T @ np.linalg.solve(G @ G.T + lam2 * np.eye(2), b)
    np.testing.assert_allclose(u, expected, rtol=1e-6)
    assert servo.status.code == 'damped' and np.abs(u).max() < 1e5
    assert 'damped least squares' in servo.status.message
    assert servo.status.residual > 0.0


def test_saturation_is_reported_with_the_resulting_constraint_error():
    """Rigid arm, 1 N m limits, a demanding tip acceleration: the clipped inputs are
    flagged and the constraint error equals A M^-1 (u_clipped - h) - b (computed here)."""
    model = load_model(str(MODELS / 'two_link_rigid.yaml'))
    data = model.create_data()
    q, v = np.array([0.3, 1.2]), np.array([2.0, -1.0])
    program = PointProgram(model, 1, 0.4, ConstantReference([0.2, 0.6]), axes=(0, 1))
    program.evaluate(0.0, q, v)
    b = Stabilization.for_program(program, alpha=20.0).evaluate(program).copy()
    M, h = model.mass_matrix(data, q).copy(), model.bias_forces(data, q, v).copy()
    ideal = IdealRealization(2, 2, 2, effort_limit=1.0)
    u = ideal.realize(M, h, program.jacobian, b)
    assert ideal.status.saturated and not ideal.status.ok
    assert ideal.status.clipped.tolist() == (np.abs(ideal.unsaturated) > 1.0).tolist()
    np.testing.assert_allclose(np.abs(u[ideal.status.clipped]), 1.0)
    error = program.jacobian @ np.linalg.solve(M, u - h) - b
    np.testing.assert_allclose(ideal.constraint_error, error, atol=1e-9)
    assert ideal.status.constraint_error == pytest.approx(np.linalg.norm(error))
    assert 'efforts clipped on inputs' in ideal.status.message


def test_posture_objective_only_acts_where_the_program_leaves_freedom():
    """m = 2 rows on nv = 4: with Q_s = K_p (q0 - q) - K_d v the result is the KKT
    solution for the force -h + Q_s (minimum M-distance to the motion Q_s would cause),
    A q'' = b still holds, and q'' differs from the solution without Q_s."""
    M, A, b, f = random_problem(12, nv=4, m=2)
    h = -f
    q, v = np.array([0.1, 0.2, -0.3, 0.4]), np.array([0.5, -0.1, 0.0, 0.2])
    posture = np.zeros(4)
    stiffness, damping = np.full(4, 9.0), np.full(4, 6.0)
    secondary = posture_force(q, v, posture, stiffness, damping)
    np.testing.assert_allclose(secondary, 9.0 * (posture - q) - 6.0 * v)
    expected, _ = kkt(M, A, b, -h + secondary)
    ideal = IdealRealization(4, 4, 2)
    ideal.realize(M, h, A, b, secondary_force=secondary)
    np.testing.assert_allclose(ideal.acceleration, expected, atol=1e-12)
    np.testing.assert_allclose(A @ ideal.acceleration, b, atol=1e-12)
    assert np.linalg.norm(expected - kkt(M, A, b, f)[0]) > 1e-2


def test_servo_preferred_effort_stays_in_the_null_space():
    """One row, two inputs: a preferred effort changes u but not A q'' = b."""
    M, A, b, f = random_problem(13, nv=4, m=1)
    B = np.eye(4)[:, :2]
    servo = ServoRealization(4, 2, 1)
    plain = servo.realize(M, -f, A, b, B).copy()
    biased = servo.realize(M, -f, A, b, B, preferred_effort=np.array([3.0, -2.0])).copy()
    assert np.linalg.norm(biased - plain) > 0.1
    np.testing.assert_allclose(A @ servo.acceleration, b, atol=1e-12)
