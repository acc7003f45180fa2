"""Zero dynamics of servo realizations on flexible links (linearized at rest).

Expected values come from:
* the clamped-free frequency parameters b_k L = 1.875104, 4.694091, 7.854757 (doc/validation.md):
  with the joint angle as output the zeros are the clamped-free frequencies;
* the exact transcendental zero equation of a Euler-Bernoulli beam on a hub, solved here:
  on y = x theta + w(x) = 0 the hub torque is free, so the zero shapes Y solve
  Y'''' = kappa Y with Y(0) = 0, Y(x) = 0, Y''(L) = Y'''(L) = 0 (free end), s^2 =
  -kappa EI/(rho A); kappa < 0 gives a real zero pair +-s (non-minimum phase);
* an assumed-modes hub-beam model written here from the clamped-free mode shapes (its own
  mode functions and quadrature), with zeros from the Rosenbrock system-matrix pencil
  [[s I - A, -B], [C, 0]] (a different method from the module's null-space projection).
"""

import math
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg
from scipy.optimize import brentq

from flexible_manipulator.control.zero_dynamics import (
    analyze_output, assess_point_program, lambda_limit, linearize, link_angle_output,
    point_output, transmission_zeros)
from flexible_manipulator.mechanics.link_description import Beam, Joint, Link, RigidBody
from flexible_manipulator.mechanics.links import chain_from_links
from flexible_manipulator.model_config import load_model

MODELS = Path(__file__).resolve().parents[1] / 'config' / 'models'
EI, RHO_A, LENGTH, HUB = 2.0, 0.5, 0.8, 0.05


def hub_beam(modes):
    """One flexible link on a hub (no gravity, no damping, no payload)."""
    hub = RigidBody(0.0, (0.0, 0.0, 0.0), ((1e-4, 0, 0), (0, 1e-4, 0), (0, 0, HUB)))
    link = Link('beam', Joint('hub'), LENGTH, body=hub, beam=Beam(RHO_A, (EI, EI), (modes, 0)))
    return chain_from_links('hub_beam', [link])


def continuum_determinant(omega, fraction):
    """det of the zero conditions for the dimensionless kappa L^4 = omega (module doc).

    Y = b T(u)/k + c U(u)/k^2 + d V(u)/k^3 (Krylov functions of u = k x, k^4 = kappa) already
    satisfies Y(0) = 0; rows: Y(fraction) = 0, Y''(1) = 0, Y'''(1) = 0 on a unit beam.
    """
    k = complex(omega) ** 0.25

    def krylov(u):
        return ((np.cosh(u) + np.cos(u)) / 2, (np.sinh(u) + np.sin(u)) / 2,
                (np.cosh(u) - np.cos(u)) / 2, (np.sinh(u) - np.sin(u)) / 2)
    _, T, U, V = krylov(k * fraction)
    S1, T1, U1, V1 = krylov(k)
    rows = np.array([[T / k, U / k ** 2, V / k ** 3],
                     [k * V1, S1, T1 / k],
                     [k ** 2 * U1, k * V1, S1]])
    return np.linalg.det(rows).real


def first_root(function, start, stop, samples=4000):
    """First sign change of function on [start, stop], refined by brentq."""
    grid = np.linspace(start, stop, samples)
    values = [function(x) for x in grid]
    for i in range(samples - 1):
        if values[i] * values[i + 1] < 0.0:
            return brentq(function, grid[i], grid[i + 1], xtol=1e-13)
    raise AssertionError('no root in the interval')


def test_joint_angle_output_has_the_clamped_free_frequencies_as_zeros():
    """Collocated output (hub angle): zeros +-i (b_k L)^2 sqrt(EI / (rho A L^4))."""
    model = hub_beam(3)
    C = np.eye(model.nv)[:1]
    report = analyze_output(model, C, label='hub angle')
    assert report.minimum_phase and 'minimum phase' in report.message
    expected = np.array([1.875104, 4.694091, 7.854757]) ** 2 * math.sqrt(
        EI / (RHO_A * LENGTH ** 4))
    np.testing.assert_allclose(report.zeros.real, 0.0, atol=1e-9)
    np.testing.assert_allclose(np.sort(np.abs(report.zeros.imag))[::2], expected, rtol=1e-6)


def test_tip_of_a_flexible_link_is_non_minimum_phase_with_the_exact_real_zero():
    """Tip output: the exact equation has a real root kappa L^4 = Omega < 0 (found here);
    the 6-mode model reports non-minimum phase with its slowest unstable zero within 0.1 %
    of sqrt(-Omega EI / (rho A L^4)). Sanity of the exact equation: as x -> 0 its first
    positive root is the clamped-free 1.875104^4."""
    assert first_root(lambda w: continuum_determinant(w, 1e-7), 5.0, 20.0) == pytest.approx(
        1.875104 ** 4, rel=1e-5)
    omega = first_root(lambda w: continuum_determinant(w, 1.0), -1.0, -400.0)
    sigma = math.sqrt(-omega * EI / (RHO_A * LENGTH ** 4))
    model = hub_beam(6)
    report = assess_point_program(model, 0, 1.0, axes=(1,))
    assert not report.minimum_phase
    assert 'NON-MINIMUM PHASE' in report.message and 'lambda <' in report.message
    slowest = report.unstable[np.argmin(np.abs(report.unstable))]
    assert abs(slowest.imag) < 1e-9 * abs(slowest)
    assert slowest.real == pytest.approx(sigma, rel=1e-3)


def assumed_modes(modes):
    """Hub-beam M and K from clamped-free modes, written here (not the package's code).

    W_k = cosh b x - cos b x - s_k (sinh b x - sin b x), s_k = (sinh bL - sin bL) /
    (cosh bL + cos bL), cos(bL) cosh(bL) = -1, normalized int W^2 = L. Coordinates
    (theta, q_k); lateral displacement x theta + sum W_k(x) q_k.
    """
    # cos z + 1/cosh z (same roots, bounded) has one root in each [(k - 1) pi, k pi].
    roots = [brentq(lambda z: math.cos(z) + 1.0 / math.cosh(z), (k - 1) * math.pi,
                    k * math.pi, xtol=1e-14) for k in range(1, modes + 1)]
    beta = np.array(roots) / LENGTH
    sigma = (np.sinh(roots) - np.sin(roots)) / (np.cosh(roots) + np.cos(roots))

    def shapes(x):
        bx = np.outer(np.atleast_1d(x), beta)
        raw = np.cosh(bx) - np.cos(bx) - sigma * (np.sinh(bx) - np.sin(bx))
        return raw / norms

    nodes, weights = np.polynomial.legendre.leggauss(60)
    x, w = LENGTH / 2 * (nodes + 1), LENGTH / 2 * weights
    norms = np.ones(modes)
    norms = np.sqrt((w[:, None] * shapes(x) ** 2).sum(axis=0) / LENGTH)
    n = modes + 1
    M = np.zeros((n, n))
    M[0, 0] = HUB + RHO_A * LENGTH ** 3 / 3
    M[0, 1:] = M[1:, 0] = RHO_A * (w * x) @ shapes(x)
    M[1:, 1:] = RHO_A * (w[:, None] * shapes(x)).T @ shapes(x)
    K = np.diag(np.concatenate([[0.0], EI * beta ** 4 * LENGTH]))
    return M, K, shapes


def rosenbrock_zeros(M, K, C):
    """Finite generalized eigenvalues of the Rosenbrock pencil of M x'' + K x = e1 u, y = C x."""
    n = M.shape[0]
    Minv = np.linalg.inv(M)
    A = np.block([[np.zeros((n, n)), np.eye(n)], [-Minv @ K, np.zeros((n, n))]])
    B = np.concatenate([np.zeros(n), Minv[:, 0]])[:, None]
    Cs = np.concatenate([C, np.zeros(n)])[None, :]
    pencil = np.block([[A, B], [Cs, np.zeros((1, 1))]])
    mass = np.zeros_like(pencil)
    mass[:2 * n, :2 * n] = np.eye(2 * n)
    zeros = scipy.linalg.eigvals(pencil, mass)
    return zeros[np.isfinite(zeros)]


@pytest.mark.parametrize('modes', [2, 3, 5])
def test_lambda_limit_matches_an_independent_assumed_modes_model(modes):
    """Largest stable lambda of the point x = lambda L: the module on the package's chain
    model against bisection here on the hand-built model's Rosenbrock zeros (1e-6).
    The redefined joint output of a single link is the same output scaled (same limit).
    The limit falls with the mode count (the N-th zero goes through infinity first)."""
    M, K, shapes = assumed_modes(modes)

    def unstable(lam):
        x = lam * LENGTH
        C = np.concatenate([[x], shapes(x)[0]])
        z = rosenbrock_zeros(M, K, C)
        return np.any(z.real > 1e-7 * np.maximum(1.0, np.abs(z)))

    lower, upper = 1e-3, 1.0
    assert not unstable(lower) and unstable(upper)
    grid = np.linspace(lower, upper, 400)
    first = next(lam for lam in grid if unstable(lam))
    lower, upper = first - (grid[1] - grid[0]), first
    for _ in range(40):
        middle = 0.5 * (lower + upper)
        lower, upper = (middle, upper) if not unstable(middle) else (lower, middle)
    model = hub_beam(modes)
    limit = lambda_limit(model, lambda lam: point_output(model, 0, lam, axes=(1,)))
    assert limit == pytest.approx(lower, abs=1e-6)
    redefined = lambda_limit(model, lambda lam: link_angle_output(model, lam))
    assert redefined == pytest.approx(limit, abs=1e-6)
    assert limit < 1.0


def test_default_flexible_arm_tip_program_is_refused_and_redefined_outputs_offered():
    """Forearm tip, planar (x, y), elbow at 1 rad: non-minimum phase (checked here with the
    Rosenbrock pencil on M, K = diag(model.arrays.stiffness), C from section_jacobian).
    The offered redefined joint outputs are stable just below their reported limit and
    unstable just above it (same independent pencil, damping D = diag(arrays.damping))."""
    model = load_model(str(MODELS / 'two_link_flexible.yaml'))
    q0 = np.zeros(model.nv)
    q0[1] = 1.0
    report = assess_point_program(model, 1, 1.0, axes=(0, 1), q0=q0)
    assert not report.minimum_phase
    assert 'NON-MINIMUM PHASE' in report.message and 'redefined joint outputs' in report.message
    M = model.mass_matrix(model.create_data(), q0).copy()
    K = np.diag(model.arrays.stiffness)
    D = np.diag(model.arrays.damping)
    B = model.input_matrix()
    n = model.nv

    def pencil_zeros(C, damping):
        Minv = np.linalg.inv(M)
        A = np.block([[np.zeros((n, n)), np.eye(n)], [-Minv @ K, -Minv @ damping]])
        Bs = np.vstack([np.zeros((n, 2)), Minv @ B])
        Cs = np.hstack([C, np.zeros((2, n))])
        P = np.block([[A, Bs], [Cs, np.zeros((2, 2))]])
        E = np.zeros_like(P)
        E[:2 * n, :2 * n] = np.eye(2 * n)
        z = scipy.linalg.eigvals(P, E)
        return z[np.isfinite(z)]

    tip = model.section_jacobian(model.create_data(), q0, 1, 0.4)[3:5]
    assert pencil_zeros(tip, 0 * D).real.max() > 100.0
    limit = report.redefined_limit
    assert 0.0 < limit < 1.0
    assert pencil_zeros(link_angle_output(model, 0.98 * limit), D).real.max() < 0.0
    assert pencil_zeros(link_angle_output(model, 1.02 * limit), D).real.max() > 0.0


def test_linearized_stiffness_of_the_horizontal_arm_is_the_modal_stiffness():
    """Gravity is normal to the plane of the default arm: K = diag(model.arrays.stiffness)
    (to the finite-difference accuracy ~1e-6 relative)."""
    model = load_model(str(MODELS / 'two_link_flexible.yaml'))
    _, D, K, B = linearize(model, np.array([0.3, -0.7] + [0.0] * (model.nv - 2)))
    np.testing.assert_allclose(K, np.diag(model.arrays.stiffness), rtol=0,
                               atol=1e-6 * model.arrays.stiffness.max())
    np.testing.assert_allclose(D, np.diag(model.arrays.damping))
    np.testing.assert_allclose(B, np.eye(model.nv, 2))


def test_non_square_or_dependent_outputs_are_refused():
    """Zero dynamics need m = nu independent outputs; anything else is a ValueError."""
    model = hub_beam(2)
    M, D, K, B = linearize(model)
    with pytest.raises(ValueError, match='as many outputs as inputs'):
        transmission_zeros(M, D, K, B, np.eye(model.nv)[:2])


def servo_closed_loop(model, fraction, duration, step=5e-4):
    """Largest modal coordinate while a servo realization holds the lateral position of the
    point x = fraction L at zero (alpha = beta = 10), from a small modal perturbation.

    The plant is the package's nonlinear chain (forward dynamics), integrated here with
    RK4; the control is evaluated at every stage (continuous-time loop).
    """
    from flexible_manipulator.control.programs import PointProgram
    from flexible_manipulator.control.realization import ServoRealization
    from flexible_manipulator.control.stabilization import Stabilization
    from flexible_manipulator.control.trajectories import ConstantReference
    data = model.create_data()
    program = PointProgram(model, 0, fraction * LENGTH, ConstantReference([0.0]), axes=(1,))
    stab = Stabilization.for_program(program, alpha=10.0)
    servo = ServoRealization(model.nv, model.nu, 1)
    B = model.input_matrix()

    def f(x):
        q, v = x[:model.nv], x[model.nv:]
        program.evaluate(0.0, q, v)
        M = model.mass_matrix(data, q).copy()
        h = model.bias_forces(data, q, v).copy()
        u = servo.realize(M, h, program.jacobian, stab.evaluate(program), B).copy()
        return np.concatenate([v, model.forward_dynamics(data, q, v, u)])

    x = np.zeros(2 * model.nv)
    x[1] = 1e-5                                   # first mode, 2e-5 m of tip deflection
    largest = 0.0
    for _ in range(int(round(duration / step))):
        k1 = f(x)
        k2 = f(x + step / 2 * k1)
        k3 = f(x + step / 2 * k2)
        x = x + step / 6 * (k1 + 2 * k2 + 2 * k3 + f(x + step * k3))
        largest = max(largest, np.abs(x[1:model.nv]).max())
        if largest > 1e-2:
            break
    return largest


def test_servo_loop_diverges_on_the_tip_and_stays_bounded_below_the_lambda_limit():
    """The nonlinear closed loop confirms the linear analysis: with the tip as output the
    modes grow like e^(sigma t) (sigma ~ 35 rad/s from the exact equation above) past 1e-2
    within 0.6 s, and so they do just above the 2-mode lambda limit (1.1 lambda*); at half
    the limit they stay at the initial size (undamped zero dynamics: a bounded
    oscillation)."""
    model = hub_beam(2)
    limit = lambda_limit(model, lambda lam: point_output(model, 0, lam, axes=(1,)))
    assert servo_closed_loop(model, 1.0, 0.6) > 1e-2
    assert servo_closed_loop(model, 1.1 * limit, 0.6) > 1e-2
    assert servo_closed_loop(model, 0.5 * limit, 0.6) < 1e-4
