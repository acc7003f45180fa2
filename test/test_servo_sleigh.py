"""The Chaplygin sleigh with a servoconstraint (Kozlov 2015, sections 6-7), against theory.

Where the expected values come from (never from the code under test):

* the servo-sleigh's reduced system u' = alpha u w, w' = beta u w (6.3) with
  alpha = a_s/b_s, beta = m c_s/(I b_s): the integral beta u - alpha w = gamma (6.4), the
  explicit solution u = gamma/(beta + C e^{gamma t}) (6.5), the heading
  phi = -(1/alpha) ln((beta + C e^{gamma t})/(beta + C)) (its integral), the curvature
  |w/u| = C e^{gamma t}/alpha and the finite path length (1/beta) ln(1 + beta/C);
* the classical sleigh with the centre of mass offset by eps (science digest 2.11):
  u = U tanh(k t), w = sqrt(m/J) U sech(k t), k = eps m U / J, heading
  sqrt(m/J) U (2/k) atan(tanh(k t/2));
* Theorem 6 on the inclined plane: the function W = I xi'^2/2 + c p (1 - cos xi),
  xi = pi/2 - phi, obeys dW/dt = m c u xi'^2 (7.6), so it cannot increase while u <= 0
  when c > 0;
* an independent integration (solve_ivp, DOP853, rtol 1e-11) of the Newton-Euler
  equations of 2.11 about the blade point, written here with a 2x2 solve for (w', lambda);
* the energy law d(T + V)/dt = lambda <b, w>, integrated here by Simpson's rule.
"""

import math
import os

import numpy as np
import pytest
from scipy.integrate import simpson, solve_ivp

from flexible_manipulator.mechanics.servo import RealizabilityError
from flexible_manipulator.mechanics.servo_sleigh import ServoSleigh
from flexible_manipulator.mechanics.simulation import Simulation
from flexible_manipulator.model_config import load_model
from servo_sampling import output, run

MODELS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'config',
                      'models')
REFERENCE = dict(method='DOP853', rtol=1e-11, atol=1e-12)
G = 9.80665


def config(name):
    return load_model(os.path.join(MODELS, name + '.yaml'))


def servo_sleigh_solution(model, times):
    """(6.5) and its consequences for the initial state of the model file."""
    m, inertia = model.mass, model.inertia
    a_s, b_s, c_s = model.control
    alpha, beta = a_s / b_s, m * c_s / (inertia * b_s)
    omega0, u0, _ = model.initial_v
    gamma = beta * u0 - alpha * omega0
    C = gamma / u0 - beta
    growth = C * np.exp(gamma * times)
    u = gamma / (beta + growth)
    omega = (beta * u - gamma) / alpha
    phi = model.initial_q[2] - np.log((beta + growth) / (beta + C)) / alpha
    return dict(alpha=alpha, beta=beta, gamma=gamma, C=C, u=u, omega=omega, phi=phi,
                curvature=growth / alpha, length=math.log(1.0 + beta / C) / beta)


def test_servo_sleigh_explicit_solution_and_integral():
    """sleigh_servo over 10 s (rk4, 1 ms): u, w and phi equal (6.5) and its integral to
    1e-10, beta u - alpha w stays gamma (the model's 'sleigh_integral' too), the multiplier
    is lambda = m w u / b_s (from 0 = -m w u + lambda b_s), and the curvature of O's path is
    C e^{gamma t}/alpha."""
    model = config('sleigh_servo')
    times = np.linspace(0.0, 10.0, 101)
    exact = servo_sleigh_solution(model, times)
    assert exact['gamma'] > 0 and 0 < exact['beta'] * model.initial_v[1] < exact['gamma']
    qs, vs, outs = run(model, model.initial_q, model.initial_v, times)
    np.testing.assert_allclose(vs[:, 1], exact['u'], rtol=0, atol=1e-10)
    np.testing.assert_allclose(vs[:, 0], exact['omega'], rtol=0, atol=1e-10)
    np.testing.assert_allclose(qs[:, 2], exact['phi'], rtol=0, atol=1e-10)
    assert np.abs(vs[:, 2]).max() < 1e-14
    integral = exact['beta'] * vs[:, 1] - exact['alpha'] * vs[:, 0]
    np.testing.assert_allclose(integral, exact['gamma'], atol=1e-13)
    np.testing.assert_allclose(output(model, outs, 'sleigh_integral'), exact['gamma'], atol=1e-13)
    lam = model.mass * vs[:, 0] * vs[:, 1] / model.control[1]
    np.testing.assert_allclose(output(model, outs, 'lambda'), lam, atol=1e-13)
    np.testing.assert_allclose(np.abs(vs[:, 0] / vs[:, 1]), exact['curvature'], rtol=1e-8)


def test_curl_has_the_finite_length_of_the_paper():
    """The path of O (the chord sum of positions sampled every 2 ms over 30 s) has the
    length (1/beta) ln(1 + beta/C) - (1/beta) ln(1 + beta e^{-30 gamma}/C) to 1e-6 m (chord
    error (w h)^2/24 relative), and O is at rest at the end while the sleigh keeps spinning
    at w -> -gamma/alpha."""
    model = config('sleigh_servo')
    exact = servo_sleigh_solution(model, np.zeros(1))
    beta, gamma, C = exact['beta'], exact['gamma'], exact['C']
    sim = Simulation(model, 1e-3, 'rk4', model.initial_q, model.initial_v)
    points = [model.pose(sim.q)[1]]
    for _ in range(15000):
        sim.advance([], 2e-3)
        points.append(model.pose(sim.q)[1])
    points = np.array(points)
    length = np.linalg.norm(np.diff(points, axis=0), axis=1).sum()
    remaining = math.log(1.0 + beta * math.exp(-30.0 * gamma) / C) / beta
    assert length == pytest.approx(exact['length'] - remaining, abs=1e-6)
    assert np.linalg.norm(points[-1] - points[-2500]) < 1e-7
    assert sim.v[0] == pytest.approx(-gamma / exact['alpha'], rel=1e-8)


def test_classical_sleigh_with_offset_tanh_sech():
    """sleigh_classical (a_s = c_s = 0, eps > 0): u = U tanh(k t), w = sqrt(m/J) U sech(k t),
    phi = sqrt(m/J) U (2/k) atan(tanh(k t/2)) to 1e-11 over 10 s; energy constant to 1e-13
    relative, no control power, lambda = m I_C u w / J, and the motion straightens
    (w -> 0, u -> U)."""
    model = config('sleigh_classical')
    m, J, eps = model.mass, model.inertia, model.offset
    omega0 = model.initial_v[0]
    energy0 = 0.5 * J * omega0 ** 2
    U = math.sqrt(2 * energy0 / m)
    k = eps * m * U / J
    times = np.linspace(0.0, 10.0, 101)
    qs, vs, outs = run(model, model.initial_q, model.initial_v, times)
    np.testing.assert_allclose(vs[:, 1], U * np.tanh(k * times), rtol=0, atol=1e-11)
    np.testing.assert_allclose(vs[:, 0], math.sqrt(m / J) * U / np.cosh(k * times), rtol=0,
                               atol=1e-11)
    heading = math.sqrt(m / J) * U * (2 / k) * np.arctan(np.tanh(0.5 * k * times))
    np.testing.assert_allclose(qs[:, 2], heading, rtol=0, atol=1e-11)
    np.testing.assert_allclose(output(model, outs, 'energy'), energy0, rtol=1e-13)
    assert np.abs(output(model, outs, 'control_power')).max() < 1e-15
    lam = m * (J - m * eps ** 2) * vs[:, 1] * vs[:, 0] / J
    np.testing.assert_allclose(output(model, outs, 'lambda'), lam, atol=1e-13)
    assert vs[-1, 0] < 1e-3 * omega0 and vs[-1, 1] > 0.999 * U


def newton_euler_reference(model, q0, v0, times):
    """solve_ivp of the 2.11 equations about O (v_lat = 0), body axes (u, l):
    m u' = m eps w^2 + F_u + lambda a_s,  m eps w' + m u w = F_v + lambda b_s,
    J w' = -m eps u w + eps F_v + lambda c_s,  F = (-p sin phi, -p cos phi)."""
    m, J, eps = model.mass, model.inertia, model.offset
    a_s, b_s, c_s = model.control
    p = m * G * math.sin(model.slope)

    def rhs(t, y):
        x, yy, phi, u, w = y
        f_u, f_v = -p * math.sin(phi), -p * math.cos(phi)
        wdot, lam = np.linalg.solve([[m * eps, -b_s], [J, -c_s]],
                                    [f_v - m * u * w, -m * eps * u * w + eps * f_v])
        udot = (m * eps * w * w + f_u + lam * a_s) / m
        return [u * math.cos(phi), u * math.sin(phi), w, udot, wdot]
    y0 = [q0[0], q0[1], q0[2], v0[1], v0[0]]
    return solve_ivp(rhs, (0.0, times[-1]), y0, t_eval=times, **REFERENCE)


def test_offset_servo_sleigh_on_an_incline_matches_newton_euler_and_the_energy_law():
    """A servo-sleigh with every term on (offset, slope, a_s, c_s != 0): pose and velocity
    agree with the 2.11 reference to 1e-9 over 3 s, and T + V (V = m g times the height of
    the centre of mass, computed here from the world pose) changes by the control work."""
    model = ServoSleigh('s', mass=2.0, inertia=0.08, control=(0.3, 1.0, 0.04), offset=0.12,
                        slope=0.15)
    q0, v0 = np.array([0.3, -0.2, 0.7]), np.array([0.8, -0.4, 0.0])
    times = np.linspace(0.0, 3.0, 1501)
    qs, vs, outs = run(model, q0, v0, times)
    reference = newton_euler_reference(model, q0, v0, times)
    np.testing.assert_allclose(qs, reference.y[:3].T, rtol=0, atol=1e-9)
    np.testing.assert_allclose(vs[:, 1], reference.y[3], rtol=0, atol=1e-9)
    np.testing.assert_allclose(vs[:, 0], reference.y[4], rtol=0, atol=1e-9)
    heights = []
    for q in qs:
        R, p = model.pose(q)
        heights.append((p + R @ [model.offset, 0.0, 0.0])[2])
    potential = model.mass * G * np.array(heights)
    np.testing.assert_allclose(output(model, outs, 'potential_energy'), potential, atol=1e-12)
    energy = output(model, outs, 'energy')
    power = output(model, outs, 'control_power')
    a_s, b_s, c_s = model.control
    np.testing.assert_allclose(power, output(model, outs, 'lambda')
                               * (a_s * vs[:, 1] + c_s * vs[:, 0]), atol=1e-13)
    for k in (500, 1000, 1500):
        work = simpson(power[:k + 1], x=times[:k + 1])
        assert energy[k] - energy[0] == pytest.approx(work, abs=1e-9)
    assert abs(energy[-1] - energy[0]) > 0.1


def theorem6_run(c_s, duration=5.0):
    model = config('sleigh_incline')
    model = ServoSleigh('incline', model.mass, model.inertia,
                        (model.control[0], model.control[1], c_s), slope=model.slope)
    times = np.linspace(0.0, duration, int(round(duration / 1e-2)) + 1)
    base = config('sleigh_incline')
    qs, vs, _ = run(model, base.initial_q, base.initial_v, times)
    xi, xi_dot = 0.5 * math.pi - qs[:, 2], -vs[:, 0]
    return model, times, xi, xi_dot, vs


def test_theorem_6_steepest_descent_is_stable_for_positive_c():
    """sleigh_incline (c = c_s/b_s > 0), xi0 = 0.1 rad: the sleigh slides down (u < 0 after
    the start), W = I xi'^2/2 + c p (1 - cos xi) never increases (7.6), so |xi| <= xi0, and
    xi decays. With c < 0 the same start departs from the steepest descent (|xi| > 1 rad
    within 5 s); with c = 0 the heading stays where it started (w = 0)."""
    model, times, xi, xi_dot, vs = theorem6_run(config('sleigh_incline').control[2])
    c = model.control[2] / model.control[1]
    p = model.mass * G * math.sin(model.slope)
    assert c > 0
    assert np.all(vs[1:, 1] < 0)
    W = 0.5 * model.inertia * xi_dot ** 2 + c * p * (1 - np.cos(xi))
    assert np.all(np.diff(W) <= 1e-13 * W[0])
    assert np.abs(xi).max() <= xi[0] * (1 + 1e-12)
    assert abs(xi[-1]) < 0.5 * xi[0]
    _, _, xi, _, _ = theorem6_run(-c * model.control[1])
    assert np.abs(xi).max() > 1.0
    _, _, xi, _, vs = theorem6_run(0.0)
    np.testing.assert_allclose(xi, xi[0], atol=1e-14)


def test_free_sleigh_fed_with_the_servo_multiplier_reproduces_the_curl():
    """Open loop, 1 s: sleigh_free_actuated (same body, no blade constraint, input u
    scaling the force/torque (a_s, b_s, c_s)) driven by the servo model's lambda(t) (the
    trapezoidal mean per 1 ms step) follows sleigh_servo to 1e-6 with v_lat < 1e-6; with
    u = 0 it glides straight on (departs)."""
    servo_model, free = config('sleigh_servo'), config('sleigh_free_actuated')
    np.testing.assert_array_equal(free.control, servo_model.control)
    assert (free.nu, free.realization) == (1, 'free')
    times = np.linspace(0.0, 1.0, 1001)
    qs, vs, outs = run(servo_model, free.initial_q, free.initial_v, times)
    lam = output(servo_model, outs, 'lambda')
    sim = Simulation(free, 1e-3, 'rk4', free.initial_q, free.initial_v)
    error = 0.0
    for k in range(1000):
        sim.advance([0.5 * (lam[k] + lam[k + 1])], 1e-3)
        error = max(error, np.abs(sim.v - vs[k + 1]).max(), np.abs(sim.q - qs[k + 1]).max())
    assert error < 1e-6
    sim.reset()
    sim.advance([0.0], 1.0)
    assert np.abs(sim.v - vs[-1]).max() > 0.1


def test_pose_and_twist_are_consistent_on_the_tilted_plane():
    """d/dt of the world position of O equals R (u, v_lat, 0) and d/dt R = R hat((0, 0, w))
    (finite differences over a 1 us step), with the plane tilted about world x."""
    model = ServoSleigh('s', 2.0, 0.08, (0.3, 1.0, 0.04), offset=0.1, slope=0.3,
                        stabilization=1.0)
    q0, v0 = np.array([0.2, 0.5, 1.1]), np.array([0.7, -0.6, 0.05])
    R0, p0 = model.pose(q0)
    angular, linear = model.body_twist(q0, v0)
    sim = Simulation(model, 1e-6, 'rk4', q0, v0)
    sim.advance([], 1e-6)
    R1, p1 = model.pose(sim.q)
    np.testing.assert_allclose((p1 - p0) / 1e-6, R0 @ linear, atol=1e-5)
    hat = np.array([[0, -angular[2], 0], [angular[2], 0, 0], [0, 0, 0]])
    np.testing.assert_allclose((R1 - R0) / 1e-6, R0 @ hat, atol=1e-5)
    np.testing.assert_allclose(R0[:, 2], [0.0, -math.sin(0.3), math.cos(0.3)], atol=1e-15)


@pytest.mark.parametrize('kwargs, field, error', [
    (dict(control=(0.5, 0.0, 0.01)), 'control', RealizabilityError),
    (dict(control=(0.5, 0.5, 0.125), offset=0.2, inertia=0.1), 'control', RealizabilityError),
    (dict(mass=-1.0), 'mass', ValueError),
    (dict(inertia=0.01, offset=0.1), 'inertia', ValueError),
    (dict(slope=2.0), 'slope', ValueError),
    (dict(control=(0, math.nan, 0)), 'control', ValueError),
    (dict(realization='passive'), 'realization', ValueError)])
def test_bad_sleigh_parameters_are_refused(kwargs, field, error):
    """b_s = 0 with eps = 0, and J b_s = m eps c_s, make the constraint unrealizable
    (D = J b_s - m eps c_s = m I_C <I^-1 a, b> = 0); bad mass, inertia below m eps^2, a
    vertical slope and NaN control are refused naming the field."""
    args = dict(mass=2.0, inertia=0.05, control=(0.5, 1.0, 0.01))
    args.update(kwargs)
    with pytest.raises(error, match=f'^{field}:'):
        ServoSleigh('s', **args)
