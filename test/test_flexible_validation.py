"""Validation of the flexible serial chain (floating frame with clamped-free assumed modes).

Covers doc/validation.md "Flexible links: floating frame with assumed modes" items 1-6.
Expected values come from Euler-Bernoulli beam theory (clamped-free and pinned-free frequency
equations, the transcendental equation of a beam on a free hub derived below), textbook
static deflections, the Southwell coefficient and the rotating-beam table of Wright et al.,
the Kane-Ryan-Banerjee spin-up benchmark, and a brute-force kinetic energy and Lagrangian
built here from the section poses of the stated kinematics by finite differences in time.
Nothing is copied from numbers the package printed.
"""

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.linalg import eigh
from scipy.optimize import brentq

from flexible_manipulator.mechanics.link_description import Beam, Joint, Link, RigidBody
from flexible_manipulator.mechanics.links import chain_from_links

G = 9.80665
BETA_L = np.array([1.875104, 4.694091, 7.854757, 10.995541])   # 1 + cos b cosh b = 0
# The same roots to full precision (elastic energies need more than the table's 7 digits).
BETA_L_EXACT = np.array([brentq(lambda b: math.cos(b) + 1 / math.cosh(b), b - 0.01, b + 0.01,
                                xtol=1e-15) for b in BETA_L])
PINNED_FREE = np.array([3.926602, 7.068583, 10.210176])        # tan b = tanh b
SOUTHWELL = 1.1933      # first flapwise mode of a uniform cantilever, zero hub radius
# Wright, Smith, Thresher & Wang (1982), J. Appl. Mech. 49:197, hub radius 0: first flapwise
# omega / sqrt(EI / (rho A L^4)) at spin rate Omega / sqrt(EI / (rho A L^4)) = 1, 2, 3, 4.
WRIGHT_1982 = {1.0: 3.6817, 2.0: 4.1373, 3.0: 4.7973, 4.0: 5.5850}
STENCIL = ((-2, 1 / 12), (-1, -8 / 12), (1, 8 / 12), (2, -1 / 12))   # 4th-order d/dt


def single_link(length, rho_a, ei, modes, hub=0.0, payload=0.0, gravity=(0.0, 0.0, 0.0),
                stiffening=True):
    """One flexible link on a revolute z joint; ``hub``: rigid inertia about z [kg m^2]."""
    link = Link('arm', Joint('hub'), length, body=RigidBody(1.0, inertia=np.diag([1, 1, hub])),
                payload=RigidBody(payload),
                beam=Beam(rho_a, ei if isinstance(ei, tuple) else (ei, ei), modes=modes))
    return chain_from_links('one', [link], gravity_base=gravity, geometric_stiffening=stiffening)


def body(mass, com=(0.0, 0.0, 0.0), *inertia):
    """Rigid body; ``inertia``: principal moments, or one full 3x3 tuple."""
    return RigidBody(mass, com, inertia[0] if len(inertia) == 1 else np.diag(inertia))


def planar_two_link(stiffening):
    links = [Link('l1', Joint('j1'), 0.8, body=body(0.5, (0.02, 0, 0), 1e-3, 1e-3, 2e-3),
                  beam=Beam(0.3, (30.0, 30.0), modes=(2, 0)),
                  payload=body(0.2, (0.01, 0, 0), 1e-4, 1e-4, 2e-4)),
             Link('l2', Joint('j2', xyz=(0.03, 0, 0)), 0.6, body=body(0.1, (0, 0, 0), *[1e-4] * 3),
                  beam=Beam(0.2, (4.0, 4.0), modes=(2, 0)),
                  payload=body(0.1, (0.02, 0.01, 0), 2e-4, 3e-4, 4e-4))]
    return chain_from_links('planar2', links, (0, -G, 0), geometric_stiffening=stiffening)


def spatial_three_link(stiffening, armature=0.0, prismatic=False, damping=0.0):
    """Three links, both bending planes, skewed axes and origins, offset payloads."""
    origin = dict(xyz=(0.02, 0, 0.01), rpy=(0.3, -0.2, 0.1), damping=damping)
    joint2 = (Joint('j2', 'prismatic', (0.8, 0.6, 0), armature=armature, **origin) if prismatic
              else Joint('j2', axis=(0, 1, 0), **origin))
    links = [
        Link('l1', Joint('j1', armature=armature, damping=damping), 0.4,
             body=body(1.0, (0.05, 0.01, -0.02),
                       ((0.01, 1e-3, 0), (1e-3, 0.02, 2e-3), (0, 2e-3, 0.015))),
             beam=Beam(0.5, (60.0, 80.0), modes=(1, 1), damping_ratio=damping),
             payload=body(0.1, (0, 0.02, 0.01), 1e-4, 2e-4, 3e-4)),
        Link('l2', joint2, 0.6, body=body(0.1, (0.01, 0, 0.01), 3e-4, 4e-4, 5e-4),
             beam=Beam(0.2, (8.0, 6.0), modes=(2, 1), damping_ratio=damping),
             payload=body(0.1, (0.03, -0.01, 0.02),
                          ((4e-4, 1e-5, 0), (1e-5, 5e-4, 0), (0, 0, 6e-4)))),
        Link('l3', Joint('j3', axis=(0.6, 0, 0.8), xyz=(0, 0.01, 0), rpy=(-0.4, 0.3, 0.5),
                         damping=damping), 0.4, body=body(0.05, (0, 0, 0), *[1e-4] * 3),
             beam=Beam(0.15, (1.0, 1.5), modes=(1, 2), damping_ratio=damping),
             payload=body(0.1, (0.05, 0, -0.02), 3e-4, 3e-4, 2e-4))]
    return chain_from_links('spatial3', links, (0.3, -G, 0.5), geometric_stiffening=stiffening)


def build(name, stiffening, damping=0.0):
    """'planar', 'spatial' (with armature) or 'prismatic' (spatial, joint 2 prismatic)."""
    if name == 'planar':
        return planar_two_link(stiffening)
    return spatial_three_link(stiffening, 0.02, name == 'prismatic', damping)


def jacobian(function, x, eps=1e-6):
    """Central finite-difference Jacobian of a vector function (copies its output)."""
    return np.array([(np.array(function(x + eps * e)) - function(x - eps * e)) / (2 * eps)
                     for e in np.eye(x.size)]).T


def linearize_at_rest(model):
    """M and K = dh/dx at x = 0, v = 0 (K includes whatever gravity the model has)."""
    data = model.create_data()
    zero = np.zeros(model.nv)
    mass = model.mass_matrix(data, zero).copy()
    stiffness = jacobian(lambda x: model.bias_forces(data, x, zero).copy(), zero)
    return mass, 0.5 * (stiffness + stiffness.T)


def frequencies(stiffness, mass):
    return np.sqrt(np.abs(eigh(stiffness, mass, eigvals_only=True)))


def random_state(model, rng, amplitude=0.05):
    """Joints in (-pi, pi) (prismatic: +-0.2 m), modes +-amplitude; rates +-1 and +-0.5."""
    scale = [0.2 if link.joint.type == 'prismatic' else math.pi for link in model.links]
    modes = np.ones(model.n_modes)
    return (rng.uniform(-1, 1, model.nv) * np.r_[scale, amplitude * modes],
            rng.uniform(-1, 1, model.nv) * np.r_[np.ones(model.n_joints), 0.5 * modes])


# ---- 1. clamped-free eigenfrequencies -------------------------------------------------
@pytest.mark.parametrize('modes', [(6, 0), (0, 6), (5, 5)])
def test_clamped_free_eigenfrequencies(modes):
    """omega_n = (b_n L)^2 sqrt(EI / (rho A L^4)) (doc/validation.md item 1), joint locked
    or a huge hub.

    Theory: 1 + cos b cosh b = 0. Required: < 0.1 % for modes whose index is at most N - 2.
    """
    length, rho_a, ei = 1.3, 0.7, (25.0, 60.0)
    model = single_link(length, rho_a, ei, modes, hub=1e8)
    mass, stiffness = linearize_at_rest(model)
    locked = frequencies(stiffness[1:, 1:], mass[1:, 1:])
    free = frequencies(stiffness, mass)
    assert free[0] < 1e-3 * locked[0]                       # the rigid rotation
    for count, bending in zip(modes, ei):
        expected = BETA_L[:max(count - 2, 0)] ** 2 * math.sqrt(bending / (rho_a * length ** 4))
        for omega in expected:
            assert np.min(np.abs(locked / omega - 1.0)) < 1e-3
            assert np.min(np.abs(free / omega - 1.0)) < 1e-3
            assert np.min(np.abs(model.mode_frequencies / omega - 1.0)) < 1e-6


# ---- 2. static tip deflection ---------------------------------------------------------
def static_tip(count, payload, length=2.0, rho_a=0.3, ei=50.0):
    """Linear static tip deflection [m] and slope [rad] of a horizontal link, joint locked."""
    model = single_link(length, rho_a, ei, (count, 0), payload=payload, gravity=(0, -G, 0))
    data = model.create_data()
    zero = np.zeros(model.nv)
    gravity_load = model.bias_forces(data, zero, zero)[1:].copy()
    stiffness = linearize_at_rest(model)[1][1:, 1:]
    R, p = model.section_pose(data, np.r_[0.0, -np.linalg.solve(stiffness, gravity_load)], 0,
                              length)
    return np.array([p[1], math.atan2(R[1, 0], R[0, 0])])


def test_static_tip_deflection_converges_with_mode_count():
    """Uniform load q0 L^4 / (8 EI) and tip load P L^3 / (3 EI) (doc/validation.md item 2).

    Gravity is perpendicular to the link; the linear static solution K q = -h_q(0) is
    compared. Deflection errors decrease with the mode count and are < 0.5 % from 4 modes.
    The tip slopes q0 L^3 / (6 EI) and P L^2 / (2 EI) check the section rotation (< 1 %).
    """
    length, q0, ei, mass = 2.0, 0.3 * G, 50.0, 0.4
    uniform = np.array([-q0 * length ** 4 / (8 * ei), -q0 * length ** 3 / (6 * ei)])
    point = np.array([-mass * G * length ** 3 / (3 * ei), -mass * G * length ** 2 / (2 * ei)])
    errors = []
    for count in range(1, 7):
        beam_only = static_tip(count, 0.0)
        loaded = static_tip(count, mass) - beam_only          # superposition
        errors.append(np.abs(np.r_[beam_only / uniform, loaded / point] - 1.0))
    errors = np.array(errors)
    assert np.all(np.diff(errors, axis=0) <= 0.0), errors
    assert np.all(errors[3:, [0, 2]] < 5e-3) and np.all(errors[5] < 1e-2), errors
    assert np.all(errors[0] > 1e-3)                           # convergence, not luck


# ---- 3. beam on a free hub ----------------------------------------------------------------
def hub_beam_roots(ratio, count):
    """Roots b L of the frequency equation of a beam clamped to a free hub.

    With y(x, t) the absolute deflection, hub rotation theta = y'(0), and I_h the hub inertia,
    Hamilton's principle gives y(0) = 0, I_h theta'' = EI y''(0), y''(L) = y'''(L) = 0.
    With Y = A (cosh - cos) + B sinh + D sin and r = I_h / (rho A L^3), the determinant is
    r (bL)^3 (1 + cos bL cosh bL) + sin bL cosh bL - cos bL sinh bL = 0
    (r -> infinity: clamped-free; r = 0: tan bL = tanh bL, pinned-free).
    """
    def scaled(b):
        return (ratio * b ** 3 * (1 + math.cos(b) * math.cosh(b)) + math.sin(b) * math.cosh(b)
                - math.cos(b) * math.sinh(b)) / math.cosh(b)
    grid = np.linspace(0.5, 14.0, 13501)
    values = [scaled(b) for b in grid]
    roots = [brentq(scaled, a, b, xtol=1e-13) for a, b, fa, fb in
             zip(grid, grid[1:], values, values[1:]) if fa * fb < 0]
    return np.array(roots[:count])


def test_hub_beam_frequency_equation_limits():
    """The derived equation reproduces the textbook clamped-free and pinned-free roots."""
    assert np.allclose(hub_beam_roots(0.0, 3), PINNED_FREE, rtol=1e-6)
    assert np.allclose(hub_beam_roots(1e9, 4), BETA_L, rtol=1e-6)


@pytest.mark.parametrize('ratio', [0.0, 0.05, 0.5, 5.0, 1e6])
def test_hub_beam_frequencies(ratio):
    """Free hub of inertia I_h = r rho A L^3 (doc/validation.md item 3); roots of `hub_beam_roots`.

    Rayleigh-Ritz: the model's frequencies are upper bounds that converge with the mode
    count; with 6 modes the first three flexible ones are within 0.01 %, 0.1 % and 1 %.
    """
    length, rho_a, ei = 1.5, 0.4, 20.0
    scale = math.sqrt(ei / (rho_a * length ** 4))
    exact = hub_beam_roots(ratio, 3) ** 2 * scale
    errors = []
    for count in (2, 4, 6):
        model = single_link(length, rho_a, ei, (count, 0), hub=ratio * rho_a * length ** 3)
        omega = frequencies(*linearize_at_rest(model)[::-1])
        assert omega[0] < 1e-3 * exact[0]                     # free rotation of the hub
        flexible = omega[1:4]
        assert np.all(flexible >= exact[:flexible.size] * (1 - 1e-9))
        errors.append(flexible[0] / exact[0] - 1.0)
    assert np.all(np.diff(errors) < 1e-12), errors
    assert np.all(np.abs(flexible / exact - 1.0) < [1e-4, 1e-3, 1e-2])


# ---- 4. rotating-beam stiffening ------------------------------------------------------
def spinning_frequencies(modes, spin, stiffening):
    """Frequencies of the modal equations linearized about a steady spin, joint rate held.

    With the joint acceleration prescribed to zero, q'' = -M_qq^-1 h_q(q, q'); the state
    matrix of (q, q') comes from central differences at q = q' = 0 (unit EI, rho A, L).
    """
    model = single_link(1.0, 1.0, 1.0, modes, stiffening=stiffening)
    data = model.create_data()
    count = model.n_modes

    def accel(state):
        x, v = np.r_[0.0, state[:count]], np.r_[spin, state[count:]]
        mass = model.mass_matrix(data, x).copy()
        return -np.linalg.solve(mass[1:, 1:], model.bias_forces(data, x, v)[1:])
    matrix = np.zeros((2 * count, 2 * count))
    matrix[:count, count:] = np.eye(count)
    matrix[count:] = jacobian(accel, np.zeros(2 * count))
    eigenvalues = np.linalg.eigvals(matrix)
    assert np.all(np.abs(eigenvalues.real) < 1e-6)
    return np.sort(np.abs(eigenvalues.imag))[::2], model.mode_frequencies[0]


def test_rotating_beam_flapwise_stiffening():
    """Southwell omega^2 = omega_0^2 + K Omega^2, K = 1.1933 (doc/validation.md item 4).

    First-order eigenvalue perturbation makes K exact at small Omega; the fit up to
    Omega = omega_0 is within 2 %, and the frequencies match the Wright et al. (1982) table.
    """
    omega_0 = BETA_L[0] ** 2
    small = 0.05 * omega_0
    omega = spinning_frequencies((0, 4), small, True)[0][0]
    assert abs((omega ** 2 - omega_0 ** 2) / small ** 2 / SOUTHWELL - 1.0) < 1e-3
    spins = omega_0 * np.linspace(0.2, 1.0, 5)
    rises = [spinning_frequencies((0, 4), s, True)[0][0] ** 2 - omega_0 ** 2 for s in spins]
    slope = np.dot(spins ** 2, rises) / np.dot(spins ** 2, spins ** 2)
    assert abs(slope / SOUTHWELL - 1.0) < 0.02
    for spin, expected in WRIGHT_1982.items():
        assert abs(spinning_frequencies((0, 6), spin, True)[0][0] / expected - 1.0) < 2e-4


def test_rotating_beam_without_stiffening_and_in_plane():
    """Linear model: flapwise omega = omega_0, in-plane omega^2 = omega_0^2 - Omega^2.

    With stiffening, in-plane (lead-lag) bending rises with K - 1 = 0.1933 at small Omega
    (the centrifugal softening -Omega^2 M of the floating frame offsets the Southwell term).
    """
    for spin in (0.3, 1.0, 2.5):
        flap, omega_0 = spinning_frequencies((0, 3), spin, False)
        assert np.allclose(flap[0], omega_0, rtol=1e-7)
        lag = spinning_frequencies((3, 0), spin, False)[0]
        assert np.allclose(lag[0] ** 2, omega_0 ** 2 - spin ** 2, rtol=1e-7)
    spin = 0.05 * omega_0
    lag = spinning_frequencies((3, 0), spin, True)[0][0]
    assert abs((lag ** 2 - omega_0 ** 2) / spin ** 2 - (SOUTHWELL - 1.0)) < 1e-3


# ---- 5. spin-up benchmark -------------------------------------------------------------
def hub_program(t, spin=6.0, period=15.0):
    """Kane-Ryan-Banerjee hub angle, rate and acceleration."""
    if t >= period:
        return spin * (t - period / 2), spin, 0.0
    c, phase = period / (2 * math.pi), 2 * math.pi * t / period
    return (spin / period * (t ** 2 / 2 + c ** 2 * (math.cos(phase) - 1)),
            spin / period * (t - c * math.sin(phase)), spin / period * (1 - math.cos(phase)))


def spin_up(stiffening, count=3, end=20.0):
    """Tip deflection history of the benchmark beam under the prescribed hub motion."""
    length = 10.0
    model = single_link(length, 1.2, 1.4e4, (count, 0), stiffening=stiffening)
    data = model.create_data()

    def state(t, y):
        angle, rate, accel = hub_program(t)
        return np.r_[angle, y[:count]], np.r_[rate, y[count:]], accel

    def rhs(t, y):
        x, v, accel = state(t, y)
        mass = model.mass_matrix(data, x).copy()
        load = model.bias_forces(data, x, v)[1:] + mass[1:, 0] * accel
        return np.r_[y[count:], -np.linalg.solve(mass[1:, 1:], load)]

    def tip(t, y):         # y of the tip section in the link frame
        x = state(t, y)[0]
        p = model.section_pose(data, x, 0, length)[1] - model.section_pose(data, x, 0, 0.0)[1]
        return -math.sin(x[0]) * p[0] + math.cos(x[0]) * p[1]

    def blow_up(t, y):
        return abs(tip(t, y)) - 5.0
    blow_up.terminal = True
    solution = solve_ivp(rhs, (0.0, end), np.zeros(2 * count), method='DOP853', rtol=1e-8,
                         atol=1e-10, max_step=0.05, events=blow_up, dense_output=True)
    times = np.linspace(0.0, solution.t[-1], 2001)
    return solution, times, np.array([tip(t, solution.sol(t)) for t in times])


def test_spin_up_bounded_with_stiffening_diverges_without():
    """KRB spin-up (doc/validation.md item 5): L = 10 m, EI = 1.4e4 N m^2, rho A = 1.2 kg/m.

    With stiffening: a large lag during spin-up (literature about -0.5 m), bounded by 1.5 m,
    then a small oscillation about zero at constant spin. Without: divergence once Omega
    exceeds omega_1 = 3.80 rad/s (here: |tip| reaches 5 m before 20 s).
    """
    solution, times, tip = spin_up(True)
    assert solution.status == 0 and times[-1] == 20.0
    assert -1.5 < tip.min() < -0.2 and tip.max() < 0.1
    assert times[np.argmin(tip)] < 15.0
    after = tip[times > 15.0]
    assert np.abs(after).max() < 0.1 and abs(after.mean()) < 0.02
    solution, times, tip = spin_up(False)
    assert solution.status == 1 and solution.t[-1] < 20.0
    assert abs(abs(tip[-1]) - 5.0) < 1e-6


# ---- 6. energy ------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize('stiffening', [True, False])
@pytest.mark.parametrize('name', ['planar', 'spatial'])
def test_energy_conserved_without_damping(name, stiffening):
    """No damping, no input, gravity: relative drift of T + V over 10 s < 1e-6 (item 6).

    Drift is relative to the largest kinetic energy (the gravity datum is arbitrary).
    """
    model = build(name, stiffening)
    data = model.create_data()
    nv, effort = model.nv, np.zeros(model.nu)
    x0, v0 = random_state(model, np.random.default_rng(1), amplitude=0.01)

    def rhs(t, y):
        return np.r_[y[nv:], model.forward_dynamics(data, y[:nv], y[nv:], effort)]
    solution = solve_ivp(rhs, (0.0, 10.0), np.r_[x0, 0.1 * v0], method='DOP853', rtol=1e-10,
                         atol=1e-12)
    assert solution.status == 0
    kinetic = np.array([model.kinetic_energy(data, y[:nv], y[nv:]) for y in solution.y.T])
    total = kinetic + [model.potential_energy(data, y[:nv]) for y in solution.y.T]
    assert np.abs(total - total[0]).max() < 1e-6 * kinetic.max()
    assert np.abs(solution.y[model.n_joints:nv]).max() > 1e-3     # the modes take part


# ---- 7./8. brute-force kinetic energy and Lagrange's equations ----------------------
def beam_points(model):
    """(link, abscissa, mass) of Gauss-Legendre mass points, rho A times Gauss weights."""
    points = []
    for j, link in enumerate(model.links):
        if link.beam is not None:
            nodes, weights = np.polynomial.legendre.leggauss(link.beam.point_count())
            half = 0.5 * link.length
            points += [(j, half * (s + 1), link.beam.linear_density * half * w)
                       for s, w in zip(nodes, weights)]
    return points


def snapshot(model, data, x):
    """Beam point positions, then poses (R, p) of the sections x = 0 and x = L of each link.

    These carry the link bodies and the payloads (`rigid_bodies`), in that order.
    """
    ends = [(j, 0.0) for j in range(model.n_joints)] + [(j, link.length) for j, link in
                                                        enumerate(model.links)]
    points = np.array([model.section_pose(data, x, j, s)[1] for j, s, _ in beam_points(model)])
    return points, [model.section_pose(data, x, j, s) for j, s in ends]


def rigid_bodies(model):
    return [link.body for link in model.links] + [link.payload for link in model.links]


def brute_kinetic(model, data, x, v, h=1e-3):
    """T from positions: sum 1/2 w |p'|^2 + 1/2 m |v_C|^2 + 1/2 w.I_C w + 1/2 armature v^2."""
    shots = [(c, snapshot(model, data, x + k * h * v)) for k, c in STENCIL]
    weights = np.array([w for _, _, w in beam_points(model)])
    rates = sum(c * s[0] for c, s in shots) / h
    energy = 0.5 * np.sum(weights * np.sum(rates ** 2, axis=1))
    frames = snapshot(model, data, x)[1]
    for i, body in enumerate(rigid_bodies(model)):
        dR, dp = (sum(c * s[1][i][k] for c, s in shots) / h for k in (0, 1))
        R = frames[i][0]
        v_c = dp + dR @ np.asarray(body.com)
        spin = dR @ R.T
        w = 0.5 * np.array([spin[2, 1] - spin[1, 2], spin[0, 2] - spin[2, 0],
                            spin[1, 0] - spin[0, 1]])
        energy += 0.5 * body.mass * v_c @ v_c + 0.5 * w @ R @ np.asarray(body.inertia) @ R.T @ w
    return energy + 0.5 * sum(link.joint.armature * v[j] ** 2
                              for j, link in enumerate(model.links))


def modal_constants(model):
    """Theoretical modal stiffness EI (b_k L)^4 / L^3 and modal mass rho A L per coordinate."""
    stiffness, mass = [], []
    for link in model.links:
        if link.beam is not None:
            for count, ei in zip(link.beam.modes, link.beam.bending_stiffness):
                stiffness += list(ei * BETA_L_EXACT[:count] ** 4 / link.length ** 3)
                mass += [link.beam.linear_density * link.length] * count
    stiffness, mass = np.array(stiffness), np.array(mass)
    return stiffness, mass, np.sqrt(stiffness / mass)


def brute_potential(model, data, x):
    """-sum m g . p_C over beam points and rigid bodies + 1/2 q^T K q (K from theory)."""
    g = model.gravity_base
    points, frames = snapshot(model, data, x)
    energy = -sum(w * g @ p for (_, _, w), p in zip(beam_points(model), points))
    for body, (R, p) in zip(rigid_bodies(model), frames):
        energy -= body.mass * g @ (p + R @ np.asarray(body.com))
    q = x[model.n_joints:]
    return energy + 0.5 * np.sum(modal_constants(model)[0] * q ** 2)


CASES = [('planar', True), ('planar', False), ('spatial', True), ('spatial', False),
         ('prismatic', True)]


@pytest.mark.parametrize('name,stiffening', CASES)
def test_mass_matrix_and_brute_force_kinetic_energy(name, stiffening):
    """M is SPD and symmetric (also built column-wise from rnea), 1/2 v^T M v = brute T."""
    model = build(name, stiffening)
    data = model.create_data()
    rng = np.random.default_rng(7)
    for _ in range(3):
        x, v = random_state(model, rng)
        mass = model.mass_matrix(data, x).copy()
        zero = np.zeros(model.nv)
        rest = model.rnea(data, x, zero, zero).copy()
        columns = np.array([model.rnea(data, x, zero, e).copy() - rest
                            for e in np.eye(model.nv)]).T
        scale = np.abs(mass).max()
        assert np.abs(columns - columns.T).max() < 1e-12 * scale
        assert np.abs(columns - mass).max() < 1e-12 * scale
        assert np.linalg.eigvalsh(mass).min() > 0.0
        frames = model.frame_placements(data, x)        # link frame: x = 0, tip frame: x = L
        for (R, p), Rf, pf in zip(snapshot(model, data, x)[1], np.r_[frames[0], frames[2]],
                                  np.r_[frames[1], frames[3]]):
            assert np.allclose(R, Rf, rtol=0, atol=1e-14) and np.allclose(p, pf, atol=1e-14)
        assert model.kinetic_energy(data, x, v) == pytest.approx(0.5 * v @ mass @ v, rel=1e-14)
        brute = brute_kinetic(model, data, x, v)
        assert abs(0.5 * v @ mass @ v / brute - 1.0) < 1e-8


def lagrange_forces(model, data, x, v, a, h=1e-3, eps=0.1):
    """d/dt(dT/dv) - dT/dx + dV/dx by finite differences of `brute_kinetic`, `brute_potential`.

    The path is x(t) = x + t v + t^2 a / 2; dT/dv by central differences (T is quadratic in v).
    """
    eye = np.eye(model.nv)

    def momentum(t):
        xt, vt = x + t * v + 0.5 * t * t * a, v + t * a
        return np.array([brute_kinetic(model, data, xt, vt + eps * e)
                         - brute_kinetic(model, data, xt, vt - eps * e) for e in eye]) / (2 * eps)

    def gradient(function):
        return np.array([sum(c * function(x + k * h * e) for k, c in STENCIL) / h for e in eye])
    rate = sum(c * momentum(k * h) for k, c in STENCIL) / h
    return (rate - gradient(lambda y: brute_kinetic(model, data, y, v))
            + gradient(lambda y: brute_potential(model, data, y)))


@pytest.mark.parametrize('name,stiffening', CASES)
def test_rnea_satisfies_lagrange_equations(name, stiffening):
    """rnea(x, v, a) = d/dt(dT/dv) - dT/dx + dV/dx + D v for the stated kinematics (item 8).

    Damping D: joint viscous c and modal 2 zeta omega_k rho A L (theoretical omega_k).
    """
    model = build(name, stiffening, damping=0.03)
    data = model.create_data()
    x, v = random_state(model, np.random.default_rng(11))
    a = np.random.default_rng(12).uniform(-2.0, 2.0, model.nv)
    assert model.potential_energy(data, x) == pytest.approx(
        brute_potential(model, data, x), rel=1e-10, abs=1e-10)
    expected = lagrange_forces(model, data, x, v, a)
    joint_damping = np.array([link.joint.damping for link in model.links])
    _, modal_mass, omega = modal_constants(model)
    zeta = np.array([link.beam.damping_ratio for link in model.links
                     for _ in range(sum(link.beam.modes))])
    expected += np.r_[joint_damping, 2 * zeta * omega * modal_mass] * v
    residual = model.rnea(data, x, v, a) - expected
    assert np.abs(residual).max() < 1e-7 * np.abs(expected).max(), residual
