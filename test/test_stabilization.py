"""Constraint stabilization: designed error decay and the discrete stability limits.

Expected values: the closed-form solutions of the perturbation equations
(e(t) = (e0 + (e0' + alpha e0) t) e^(-alpha t) for alpha = beta, psi0 e^(-gamma t)); the
Jury conditions worked out by hand in the docstrings; roots of the Runge-Kutta stability
polynomials computed here with numpy; and closed loops integrated here (own Runge-Kutta
loops or the package's plant under a zero-order hold) that decay just inside and grow
just outside each bound.
"""

import math
from pathlib import Path

import numpy as np
import pytest

from flexible_manipulator.control.programs import (
    ConstantVelocityProgram, JointProgram, PointProgram, StackedProgram, VelocityProgram)
from flexible_manipulator.control.realization import IdealRealization
from flexible_manipulator.control.stabilization import (
    Stabilization, check_discrete_stability, check_velocity_stability, critical_period,
    velocity_critical_period)
from flexible_manipulator.control.trajectories import (
    CirclePath, ConstantRateTiming, ConstantReference, Trajectory)
from flexible_manipulator.mechanics.link_description import Joint, Link, RigidBody
from flexible_manipulator.mechanics.links import chain_from_links
from flexible_manipulator.mechanics.simulation import Simulation
from flexible_manipulator.model_config import load_model

MODELS = Path(__file__).resolve().parents[1] / 'config' / 'models'


def rk4_step(f, t, x, h):
    """One classical Runge-Kutta step of x' = f(t, x) (written here, independent)."""
    k1 = f(t, x)
    k2 = f(t + h / 2, x + h / 2 * k1)
    k3 = f(t + h / 2, x + h / 2 * k2)
    k4 = f(t + h, x + h * k3)
    return x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def test_target_is_the_perturbation_equation_solved_for_the_acceleration():
    """b = -bias - 2 alpha phi' - beta^2 phi (position), -bias - gamma psi (velocity)."""
    program = StackedProgram([JointProgram(3, [0, 1], ConstantReference([0.0, 0.0])),
                              ConstantVelocityProgram([[0.0, 0.0, 1.0]])])
    program.evaluate(0.0, np.array([0.2, -0.1, 0.0]), np.array([0.3, 0.5, 0.7]))
    stab = Stabilization.for_program(program, alpha=[2.0, 3.0, 0.0], beta=[4.0, 5.0, 0.0],
                                     gamma=6.0)
    expected = [-2 * 2.0 * 0.3 - 16.0 * 0.2, -2 * 3.0 * 0.5 - 25.0 * -0.1, -6.0 * 0.7]
    np.testing.assert_allclose(stab.evaluate(program), expected, atol=1e-15)


def test_gains_must_be_positive_and_present():
    """Non-positive or missing gains are refused with ValueError."""
    with pytest.raises(ValueError, match='alpha'):
        Stabilization([2, 2], alpha=[1.0, 0.0])
    with pytest.raises(ValueError, match='gamma'):
        Stabilization([2, 1], alpha=1.0)
    with pytest.raises(ValueError, match='beta'):
        critical_period(1.0, -1.0, 'zoh')


def test_task_space_error_decays_as_designed_on_the_rigid_arm():
    """Tip of the rigid two-link arm on a circle, alpha = beta = 4, ideal realization.

    The closed loop (control at every stage, i.e. continuous time) is integrated here with
    RK4, h = 1e-3 s; each error component must follow e(t) = (e0 + (e0' + 4 e0) t) e^(-4t)
    (the solution of e'' + 8 e' + 16 e = 0) to 1e-8 m: the model, its derivatives and the
    realization are exact, so only the integrator error (~h^4) remains.
    """
    model = load_model(str(MODELS / 'two_link_rigid.yaml'))
    data = model.create_data()
    alpha = 4.0
    circle = Trajectory(CirclePath([0.5, 0.3], 0.1), ConstantRateTiming(1.5))
    program = PointProgram(model, 1, 0.4, circle, axes=(0, 1))
    stab = Stabilization.for_program(program, alpha=alpha)
    ideal = IdealRealization(model.nv, model.nu, program.size)

    def closed_loop(t, x):
        q, v = x[:2], x[2:]
        program.evaluate(t, q, v)
        b = stab.evaluate(program)
        M = model.mass_matrix(data, q).copy()
        h = model.bias_forces(data, q, v).copy()
        u = ideal.realize(M, h, program.jacobian, b).copy()
        assert ideal.status.ok, ideal.status.message
        return np.concatenate([v, model.forward_dynamics(data, q, v, u)])

    x = np.array([0.1, 0.9, 0.4, -0.3])
    program.evaluate(0.0, x[:2], x[2:])
    e0, de0 = program.phi.copy(), program.rate.copy()
    assert np.all(np.abs(e0) > 0.05)          # a real initial error, off the circle
    step, t = 1e-3, 0.0
    for n in range(1, 1501):
        x = rk4_step(closed_loop, t, x, step)
        t = n * step
        if n % 250 == 0:
            program.evaluate(t, x[:2], x[2:])
            expected = (e0 + (de0 + alpha * e0) * t) * math.exp(-alpha * t)
            np.testing.assert_allclose(program.phi, expected, rtol=0, atol=1e-8)


class Ramp:
    """theta_d = 0.8 t (the knife-edge example's heading program)."""

    def evaluate(self, t):
        """Return (theta_d, theta_d', theta_d'')."""
        return np.array([0.8 * t]), np.array([0.8]), np.array([0.0])


def knife_edge_rows(t, q, v, matrix, offset, bias):
    """psi = -x' sin(theta) + y' cos(theta); bias A' v = -theta' (x' cos + y' sin)."""
    s, c = math.sin(q[2]), math.cos(q[2])
    matrix[0] = (-s, c, 0.0)
    bias[0] = -v[2] * (v[0] * c + v[1] * s)


def test_knife_edge_velocity_and_heading_errors_decay_as_designed():
    """Mixed program on the knife edge q = (x, y, theta), M = diag(2, 2, 0.5).

    psi' = -4 psi and phi'' + 6 phi' + 9 phi = 0 with phi = theta - 0.8 t, pushed by 1 N
    along the heading; from (0, 0, 0.1; 0.3, 0.2, 0): psi0 = -0.3 sin 0.1 + 0.2 cos 0.1,
    phi0 = 0.1, phi0' = -0.8. Expected psi0 e^(-4t) and (phi0 + (phi0' + 3 phi0) t) e^(-3t)
    (closed forms); RK4 with h = 1e-3 s leaves ~1e-12.
    """
    M = np.diag([2.0, 2.0, 0.5])
    program = StackedProgram([VelocityProgram(3, 1, knife_edge_rows),
                              JointProgram(3, [2], Ramp())])
    stab = Stabilization.for_program(program, alpha=3.0, gamma=4.0)
    ideal = IdealRealization(3, 3, 2)

    def closed_loop(t, x):
        q, v = x[:3], x[3:]
        program.evaluate(t, q, v)
        push = np.array([math.cos(q[2]), math.sin(q[2]), 0.0])
        u = ideal.realize(M, -push, program.jacobian, stab.evaluate(program))
        return np.concatenate([v, np.linalg.solve(M, push + u)])

    x = np.array([0.0, 0.0, 0.1, 0.3, 0.2, 0.0])
    psi0 = -0.3 * math.sin(0.1) + 0.2 * math.cos(0.1)
    phi0, dphi0 = 0.1, -0.8
    step = 1e-3
    for n in range(1, 2001):
        x = rk4_step(closed_loop, (n - 1) * step, x, step)
        if n % 400 == 0:
            t = n * step
            program.evaluate(t, x[:3], x[3:])
            assert program.phi[0] == pytest.approx(psi0 * math.exp(-4 * t), abs=1e-10)
            assert program.phi[1] == pytest.approx(
                (phi0 + (dphi0 + 3 * phi0) * t) * math.exp(-3 * t), abs=1e-10)


def one_joint_link():
    """A rigid bar turning about z, no gravity, no friction: M constant, h = 0."""
    inertia = 0.02
    body = RigidBody(1.0, (0.2, 0.0, 0.0), ((1e-4, 0, 0), (0, inertia, 0), (0, 0, inertia)))
    return chain_from_links('bar', [Link('bar', Joint('hinge'), 0.4, body=body)])


def sampled_error_growth(alpha, beta, period, periods):
    """|e_N| / |e_0| of a joint program realized by a ZOH controller of the given period.

    The package's plant (RK4, 20 steps per period: exact for the constant acceleration a
    held torque gives a body with constant M and h = 0) runs under efforts computed once
    per period by the package's program / stabilization / realization chain.
    """
    model = one_joint_link()
    data = model.create_data()
    program = JointProgram(1, [0], ConstantReference([0.0]))
    stab = Stabilization.for_program(program, alpha=alpha, beta=beta)
    ideal = IdealRealization(1, 1, 1)
    sim = Simulation(model, period / 20, 'rk4', q0=[0.05])
    for _ in range(periods):
        q, v = sim.q.copy(), sim.v.copy()
        program.evaluate(sim.time, q, v)
        M = model.mass_matrix(data, q).copy()
        u = ideal.realize(M, model.bias_forces(data, q, v).copy(), program.jacobian,
                          stab.evaluate(program))
        sim.advance(u, period)
    return math.hypot(sim.q[0], sim.v[0] / alpha) / 0.05


@pytest.mark.parametrize('alpha, beta', [(5.0, 5.0), (1.0, 4.0)])
def test_zoh_bound_is_the_jury_bound_and_separates_decay_from_growth(alpha, beta):
    """Sampled controller, zero-order hold: T* = min(1/alpha, 4 alpha/beta^2).

    Derivation (by hand): over one period the held e'' = -2 alpha e'_n - beta^2 e_n gives
    Phi = [[1 - b2 T^2/2, T - alpha T^2], [-b2 T, 1 - 2 alpha T]] (b2 = beta^2), trace
    2 - 2 alpha T - b2 T^2/2, det 1 - 2 alpha T + b2 T^2/2. Jury: 1 - tr + det = b2 T^2 > 0,
    det < 1 iff T < 4 alpha/b2, 1 + tr + det = 4 - 4 alpha T > 0 iff T < 1/alpha.
    Critical damping (5, 5): T* = 0.2 s; underdamped (1, 4): T* = 0.25 s. The sampled
    closed loop decays at 0.97 T* and grows at 1.03 T* (1000 periods).
    """
    bound = min(1 / alpha, 4 * alpha / beta ** 2)
    assert critical_period(alpha, beta, 'zoh') == pytest.approx(bound, rel=1e-15)
    assert sampled_error_growth(alpha, beta, 0.97 * bound, 1000) < 0.05
    assert sampled_error_growth(alpha, beta, 1.03 * bound, 1000) > 20.0
    with pytest.raises(ValueError, match=r'need period < min\(1/alpha, 4 alpha/beta\^2\)'):
        check_discrete_stability(alpha, beta, 1.03 * bound, 'zoh')
    check_discrete_stability(alpha, beta, 0.97 * bound, 'zoh')


def integrate_error(alpha, beta, step, steps, method):
    """|(e, e'/alpha)| after integrating e'' + 2 alpha e' + beta^2 e = 0 from (1, 0).

    Explicit Runge-Kutta of order 1..4 written here (Euler, Heun, Kutta 3, classical 4).
    """
    def f(t, x):
        return np.array([x[1], -2 * alpha * x[1] - beta ** 2 * x[0]])

    def euler(t, x, h):
        return x + h * f(t, x)

    def heun(t, x, h):
        k1 = f(t, x)
        return x + h / 2 * (k1 + f(t, x + h * k1))

    def kutta3(t, x, h):
        k1 = f(t, x)
        k2 = f(t, x + h / 2 * k1)
        k3 = f(t, x - h * k1 + 2 * h * k2)
        return x + h / 6 * (k1 + 4 * k2 + k3)

    def rk4(t, x, h):
        return rk4_step(f, t, x, h)

    stepper = {'euler': euler, 'heun': heun, 'rk3': kutta3, 'rk4': rk4}[method]
    x = np.array([1.0, 0.0])
    for _ in range(steps):
        x = stepper(0.0, x, step)
    return math.hypot(x[0], x[1] / alpha)


def test_runge_kutta_bounds_at_critical_damping_are_stability_polynomial_roots():
    """alpha = beta = k: both eigenvalues are -k, so T* k is the first x > 0 with
    |R_p(-x)| = 1. Computed here: Euler and RK2 x = 2 (R_1 = 1 - x = -1; R_2 = 1 - x +
    x^2/2 = 1); RK3 the real root of R_3(-x) = -1; RK4 the real root of R_4(-x) = 1.
    """
    k = 3.0
    rk3 = [r.real for r in np.roots([-1 / 6, 1 / 2, -1, 2]) if abs(r.imag) < 1e-12]
    rk4 = [r.real for r in np.roots([1 / 24, -1 / 6, 1 / 2, -1]) if abs(r.imag) < 1e-12]
    expected = {'euler': 2.0, 'heun': 2.0, 'rk3': rk3[0], 'rk4': rk4[0]}
    for method, x in expected.items():
        assert critical_period(k, k, method) * k == pytest.approx(x, rel=1e-9)
        assert velocity_critical_period(k, method) * k == pytest.approx(x, rel=1e-9)


@pytest.mark.parametrize('method', ['euler', 'heun', 'rk3', 'rk4'])
@pytest.mark.parametrize('alpha, beta', [(3.0, 3.0), (1.0, 4.0), (4.0, 1.0)])
def test_integrator_bounds_separate_decay_from_growth(method, alpha, beta):
    """The closed loop integrated here with the method decays at 0.98 T* and grows at
    1.02 T* (4000 steps), for critical, under- and over-damped gains. For Euler the
    bound is also the hand Jury result on z^2 - (2 - 2 alpha T) z + (1 - 2 alpha T +
    beta^2 T^2): T < 2 alpha/beta^2 (alpha < beta), 2/(alpha + sqrt(alpha^2 - beta^2))
    (alpha >= beta).
    """
    bound = critical_period(alpha, beta, method)
    if method == 'euler':
        hand = (2 * alpha / beta ** 2 if alpha < beta else
                2 / (alpha + math.sqrt(alpha ** 2 - beta ** 2)))
        assert bound == pytest.approx(hand, rel=1e-14)
    assert integrate_error(alpha, beta, 0.98 * bound, 4000, method) < 1e-3
    assert integrate_error(alpha, beta, 1.02 * bound, 4000, method) > 1e3


def test_velocity_rows_bound_and_message():
    """psi_{n+1} = (1 - gamma T) psi_n under a hold: T < 2/gamma (0.5 s for gamma = 4)."""
    assert velocity_critical_period(4.0, 'zoh') == pytest.approx(0.5)
    with pytest.raises(ValueError, match=r'need period < 2/gamma = 0\.5 s'):
        check_velocity_stability(4.0, 0.6, 'zoh')
    stab = Stabilization([2, 1], alpha=5.0, gamma=4.0)
    stab.check(0.1, 'zoh')
    with pytest.raises(ValueError, match=r'alpha=5, beta=5 .* need period < .* = 0\.2 s'):
        stab.check(0.25, 'zoh')
