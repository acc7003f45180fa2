"""Strain-parameterized Cosserat links against closed forms and the elastica.

References: the exact circle of a beam under an end moment (curvature M / EI); the
inextensible elastica under a dead tip load, solved here by shooting on
EI theta'' = P cos theta with scipy; Euler-Bernoulli, axial and torsional cantilever
frequencies in closed form; Lagrange's equations (finite differences of M and of the
potential energy); the centrifugal tension rho A w^2 (L^2 - X^2) / 2 of a spinning link.
"""

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.linalg import eigh
from scipy.optimize import brentq

from flexible_manipulator.mechanics import lie
from flexible_manipulator.mechanics.model.chain import Chain
from flexible_manipulator.mechanics.model.link_part import PRISMATIC, LinkPart, rigid_inertia
from flexible_manipulator.mechanics.cosserat.rod import CosseratRod, Section
from flexible_manipulator.mechanics.equilibrium import (
    generalized_load, Load, static_equilibrium)
from flexible_manipulator.mechanics.cosserat.strain_basis import StrainBasis
from flexible_manipulator.mechanics.reference import cosserat_chain as reference_chain

EI, L, RHO_A = 2.0, 1.0, 0.1
STIFF = 1e6          # EA, GA [N] of the "inextensible" beams: inactive strains are exact


def cantilever(orders, points=None, rotary=1e-12, length=L):
    """A horizontal clamped link (its joint held) along x, bending in the x-y plane."""
    section = Section(RHO_A, [rotary] * 3, [1.0, EI, EI, STIFF, STIFF, STIFF])
    rod = CosseratRod(StrainBasis(orders, length), section, points)
    return Chain([LinkPart('beam', rod)], gravity=(0.0, 0.0, 0.0))


def tip_under(chain, loads):
    q = static_equilibrium(chain, np.zeros(chain.nq), loads=loads, gravity=False,
                           increments=4)
    R, p = chain.section_pose(chain.create_data(), q, 0, chain.parts[0].rod.length)
    return math.atan2(R[1, 0], R[0, 0]), p, q


def elastica(alpha):
    """Tip (rotation, x/L, y/L) of the inextensible cantilever under P L^2/EI = alpha, down.

    The moment balance EI theta'(s) = -P (x_tip - x(s)) gives theta'' = alpha cos theta on
    s in [0, 1], theta(0) = 0, theta'(1) = 0; shooting on theta'(0).
    """
    def rhs(_, y):
        return [y[1], alpha * math.cos(y[0]), math.cos(y[0]), math.sin(y[0])]

    def end(slope):
        return solve_ivp(rhs, (0.0, 1.0), [0.0, slope, 0.0, 0.0], rtol=1e-12,
                         atol=1e-13).y[:, -1]
    slope = brentq(lambda a: end(a)[1], -1.01 * alpha, 0.0, xtol=1e-14)
    theta, _, x, y = end(slope)
    return theta, x, y


def dead_tip_load(alpha):
    return [Load(0, L, [0.0, 0.0, 0.0, 0.0, -alpha * EI / L ** 2, 0.0], False)]


@pytest.mark.parametrize('turns', [0.5, 1.0])
def test_an_end_moment_rolls_the_link_into_a_circle(turns):
    """M = 2 pi turns EI / L bends it to curvature M / EI: half circle, then full circle."""
    chain = cantilever({'bending_z': 3, 'extension': 1})
    moment = 2.0 * math.pi * turns * EI / L
    _, tip, q = tip_under(chain, [Load(0, L, [0.0, 0.0, moment, 0.0, 0.0, 0.0], True)])
    radius = EI / moment
    expected = np.array([radius * math.sin(L / radius), radius * (1 - math.cos(L / radius)), 0])
    np.testing.assert_allclose(tip, expected, atol=1e-9)
    # the total rotation int K3 dX = q_0 L (Legendre P_0 = 1) is 2 pi turns, not 0 mod 2 pi
    assert q[1] * L == pytest.approx(2 * math.pi * turns, rel=1e-10)
    np.testing.assert_allclose(q[2:], 0.0, atol=1e-9)       # no extension without a force


@pytest.mark.parametrize('alpha', [0.1, 1.0, 2.0, 5.0, 10.0])
def test_large_deflection_follows_the_elastica(alpha):
    """Tip rotation, deflection and shortening under P L^2/EI = 0.1 ... 10 (Mattiasson's range)."""
    theta, tip, _ = tip_under(cantilever({'bending_z': 8}, points=40), dead_tip_load(alpha))
    ref_theta, ref_x, ref_y = elastica(alpha)
    assert theta == pytest.approx(ref_theta, abs=1e-6)
    assert tip[1] == pytest.approx(ref_y * L, abs=1e-6)               # vertical deflection
    assert L - tip[0] == pytest.approx(L - ref_x * L, abs=1e-6)       # horizontal shortening


def test_convergence_in_strain_order_and_nodes():
    """Error of the tip rotation at P L^2/EI = 10: fast in the strain order, h^4 in nodes."""
    ref = elastica(10.0)[0]

    def error(order, points):
        return abs(tip_under(cantilever({'bending_z': order}, points), dead_tip_load(10.0))[0]
                   - ref)
    by_order = [error(order, 80) for order in (2, 4, 6)]
    assert by_order[0] > 30 * by_order[1] and by_order[0] > 1e4 * by_order[2]
    by_nodes = [error(8, points) for points in (20, 40)]
    # the fourth-order Magnus steps: doubling the nodes divides the error by ~16
    assert 10.0 < by_nodes[0] / by_nodes[1] < 25.0


def _frequencies(chain, count=3):
    """Lowest natural frequencies [rad/s] of the strain rows with the joint held, at q = 0."""
    M = reference_chain.mass_matrix(chain, np.zeros(chain.nq))[1:, 1:]
    return np.sqrt(eigh(chain.stiffness[1:, 1:], M, eigvals_only=True)[:count])


def test_small_amplitude_frequencies_are_the_beam_theory_ones():
    """Bending: Euler-Bernoulli (beta L = 1.8751, 4.6941, 7.8548); axial and torsional:
    (2n - 1) pi / 2 sqrt(EA / rho A) / L and (2n - 1) pi / 2 sqrt(GJ / rho I_p) / L.

    Below the strain-order error, the Magnus steps between nodes set the error (h^4): the
    third bending mode is 2e-5 off on the default 24 nodes, 5e-7 on 64."""
    bending = np.array([1.8751040687, 4.6940911330, 7.8547574382]) ** 2 * math.sqrt(
        EI / (RHO_A * L ** 4))
    np.testing.assert_allclose(_frequencies(cantilever({'bending_z': 10}, points=64)), bending,
                               rtol=1e-6)
    odd = (2 * np.arange(1, 3) - 1) * math.pi / 2 / L
    np.testing.assert_allclose(_frequencies(cantilever({'extension': 8}, points=64), 2),
                               odd * math.sqrt(STIFF / RHO_A), rtol=1e-7)
    rotary = 1e-4
    np.testing.assert_allclose(_frequencies(cantilever({'torsion': 8}, 64, rotary), 2),
                               odd * math.sqrt(1.0 / rotary), rtol=1e-7)


def mixed_chain(gravity=(0.0, 0.0, -9.81)):
    """Every strain kind, a y-axis elbow with an offset, a prismatic joint, a rigid link,
    hubs and payloads."""
    def rod(length, orders, points=None):
        section = Section(0.5, [1e-4, 5e-5, 5e-5], [5.0, 3.0, 3.0, 1e4, 8e3, 8e3])
        return CosseratRod(StrainBasis(orders, length), section, points)
    links = [LinkPart('upper', rod(0.6, {'torsion': 1, 'bending_y': 1, 'bending_z': 2,
                                         'extension': 1, 'shear_y': 1}),
                      hub=rigid_inertia(0.3, [0.01, 0.0, 0.0], np.eye(3) * 1e-3),
                      payload=rigid_inertia(0.2, [0.02, 0.01, 0.0], np.eye(3) * 2e-4)),
             LinkPart('fore', rod(0.4, {'bending_y': 2, 'bending_z': 1, 'shear_z': 0}),
                      axis=(0.0, 1.0, 0.0),
                      offset=lie.se3_exp(np.array([0.0, 0.0, 0.3, 0.02, 0.0, 0.0])),
                      payload=rigid_inertia(0.1, [0.0, 0.0, 0.0], np.eye(3) * 1e-5)),
             LinkPart('slide', rod(0.2, {'bending_z': 0}), joint=PRISMATIC,
                      axis=(1.0, 0.0, 0.0)),
             LinkPart('rigid', None, axis=(0.0, 1.0, 0.0), length=0.3,
                      hub=rigid_inertia(0.2, [0.15, 0.01, 0.0], np.eye(3) * 1e-3),
                      payload=rigid_inertia(0.05, [0.0, 0.0, 0.02], np.eye(3) * 1e-5))]
    return Chain(links, gravity=gravity)


def test_the_equations_are_lagrangian():
    """Section Jacobians = derivatives of the poses; h(q, v) - K q - D v - g(q) =
    M' v - 1/2 d(v^T M v)/dq; g(q) = dU/dq; M symmetric positive definite."""
    chain = mixed_chain()
    data = chain.create_data()
    rng = np.random.default_rng(1)
    q, v = 0.3 * rng.normal(size=chain.nq), rng.normal(size=chain.nv)
    eps = 1e-6
    for j, X in [(0, 0.6), (1, 0.25), (1, 0.4), (2, 0.1), (3, 0.2)]:
        def pose(q, j, X):
            return reference_chain.section_pose(chain, q, j, X)
        rate = (pose(q + eps * v, j, X) - pose(q - eps * v, j, X))
        twist = lie.se3_vee(np.linalg.inv(pose(q, j, X)) @ rate / (2 * eps))
        np.testing.assert_allclose(reference_chain.section_jacobian(chain, q, j, X) @ v, twist,
                                   atol=1e-8)
    unit = np.eye(chain.nq)

    def M(q):
        return reference_chain.mass_matrix(chain, q)
    m_rate = (M(q + eps * v) - M(q - eps * v)) / (2 * eps)
    gradient = np.array([(v @ M(q + eps * e) @ v - v @ M(q - eps * e) @ v) / (2 * eps)
                         for e in unit])
    velocity_terms = (reference_chain.bias_forces(chain, q, v, gravity=False)
                      - chain.stiffness @ q - chain.damping @ v)
    np.testing.assert_allclose(velocity_terms, m_rate @ v - 0.5 * gradient, atol=1e-8)
    gravity = reference_chain.bias_forces(chain, q, np.zeros(chain.nv)) - chain.stiffness @ q
    potential = np.array([(chain.potential_energy(data, q + 1e-5 * e)
                           - chain.potential_energy(data, q - 1e-5 * e)) / 2e-5 for e in unit])
    np.testing.assert_allclose(gravity, potential - chain.stiffness @ q, atol=1e-7)
    mass = M(q)
    np.testing.assert_allclose(mass, mass.T, atol=1e-14)
    assert np.linalg.eigvalsh(mass)[0] > 0.0


def test_the_kernels_equal_the_reference():
    """The kernels' M, h and v' equal `Chain.forward_pass`'s on random states."""
    chain = mixed_chain()
    data = chain.create_data()
    rng = np.random.default_rng(2)
    for _ in range(3):
        q, v = 0.3 * rng.normal(size=chain.nq), rng.normal(size=chain.nv)
        u = rng.normal(size=chain.nu)
        mass = chain.mass_matrix(data, q)
        np.testing.assert_allclose(mass, reference_chain.mass_matrix(chain, q), atol=1e-13)
        bias = chain.bias_forces(data, q, v)
        np.testing.assert_allclose(bias, reference_chain.bias_forces(chain, q, v),
                                   atol=1e-12 * np.abs(bias).max())
        acceleration = chain.forward_dynamics(data, q, v, u)
        reference = reference_chain.forward_dynamics(chain, q, v, u)
        np.testing.assert_allclose(acceleration, reference, atol=1e-10 * np.abs(reference).max())


def test_a_spinning_straight_link_only_stretches():
    """Rigid spin w about the joint: no bending, torsion or shear load (frame indifference);
    the extension rows carry the centrifugal tension:
    h_k = -int P_k(X) rho A w^2 (L^2 - X^2) / 2 dX."""
    orders = {'torsion': 2, 'bending_y': 2, 'bending_z': 2, 'extension': 3, 'shear_y': 2,
              'shear_z': 2}
    chain = cantilever(orders)
    basis = chain.parts[0].rod.basis
    omega = 3.0
    v = np.zeros(chain.nv)
    v[0] = omega
    h = reference_chain.bias_forces(chain, np.zeros(chain.nq), v)
    names = ['joint'] + basis.names
    s, w = np.polynomial.legendre.leggauss(20)
    X = 0.5 * L * (s + 1)
    tension = RHO_A * omega ** 2 * (L ** 2 - X ** 2) / 2
    for k, name in enumerate(names):
        if name.startswith('extension'):
            legendre = np.polynomial.legendre.Legendre.basis(int(name[-1]))(s)
            assert h[k] == pytest.approx(-0.5 * L * np.sum(w * legendre * tension), rel=1e-12)
        else:
            assert h[k] == pytest.approx(0.0, abs=1e-13), name


def test_energy_is_conserved_without_damping():
    """A two-link arm with soft links swinging under gravity, joints free: E(t) constant."""
    def rod(length, orders):
        section = Section(0.2, [1e-5] * 3, [0.05, 0.05, 0.05, 50.0, 40.0, 40.0])
        return CosseratRod(StrainBasis(orders, length), section, points=4)
    chain = Chain(gravity=(0.0, 0.0, -9.81), parts=[
        LinkPart('upper', rod(0.5, {'bending_z': 1, 'bending_y': 1, 'torsion': 0}),
                 hub=rigid_inertia(0.1, [0, 0, 0], np.eye(3) * 1e-4),
                 payload=rigid_inertia(0.05, [0, 0, 0], np.eye(3) * 1e-5)),
        LinkPart('fore', rod(0.4, {'bending_z': 1, 'extension': 0}), axis=(0, 1, 0),
                 payload=rigid_inertia(0.05, [0.01, 0, 0], np.eye(3) * 1e-5))])
    n, data = chain.nq, chain.create_data()
    y0 = np.zeros(2 * n)
    y0[:2], y0[n] = (0.3, 0.5), 1.0

    def rhs(_, y):
        return np.concatenate([y[n:], chain.forward_dynamics(data, y[:n], y[n:], np.zeros(2))])
    solution = solve_ivp(rhs, (0.0, 0.3), y0, method='DOP853', rtol=1e-10, atol=1e-10)

    def energy(y):
        return chain.kinetic_energy(data, y[:n], y[n:]) + chain.potential_energy(data, y[:n])
    scale = abs(energy(y0)) + chain.kinetic_energy(data, y0[:n], y0[n:])
    drift = max(abs(energy(y) - energy(y0)) for y in solution.y.T)
    assert drift < 1e-8 * scale
    assert np.abs(solution.y[2:n]).max() > 0.5          # large strains: not a linear check


@pytest.mark.parametrize('orders, message', [
    ({}, 'no active strain'),
    ({'bend': 2}, "unknown strain 'bend'"),
    ({'bending_z': 21}, 'bending_z order must be an integer in 0..20'),
    ({'bending_z': -1}, 'bending_z order'),
    ({'bending_z': 1.5}, 'bending_z order'),
])
def test_a_bad_strain_basis_is_refused_naming_the_field(orders, message):
    with pytest.raises(ValueError, match=message):
        StrainBasis(orders, 1.0)


@pytest.mark.parametrize('field, args, message', [
    ('density', (0.0, [1, 1, 1], [1] * 6), 'linear_density must be finite and positive'),
    ('inertia', (1.0, [1, -1, 1], [1] * 6), r'rotary_inertia\[1\]'),
    ('EI', (1.0, [1, 1, 1], [1, 1, 0, 1, 1, 1]), 'stiffness bending_z'),
    ('EA', (1.0, [1, 1, 1], [1, 1, 1, math.nan, 1, 1]), 'stiffness extension'),
    ('count', (1.0, [1, 1, 1], [1] * 5), '6 values'),
])
def test_a_bad_section_is_refused_naming_the_field(field, args, message):
    with pytest.raises(ValueError, match=message):
        Section(*args)


def test_too_few_points_for_the_strain_order_are_refused():
    section = Section(1.0, [1, 1, 1], [1] * 6)
    with pytest.raises(ValueError, match='3 Gauss points cannot integrate a strain of order 4'):
        CosseratRod(StrainBasis({'bending_z': 4}, 1.0), section, points=3)


def _prescribed_hub(step, spin, end=16.0):
    """Return the strain rows' right-hand side with the hub following `hub_program` up to
    ``spin`` [rad/s], and the sample times (0.01 s apart).

    ``step(x, v, acceleration)`` returns the strain accelerations with the joint prescribed.
    """
    from test_flexible_validation import hub_program

    def rhs(t, y):
        angle, rate, accel = hub_program(t, spin)
        m = y.size // 2
        return np.r_[y[m:], step(np.r_[angle, y[:m]], np.r_[rate, y[m:]], accel)]
    return rhs, np.linspace(0.0, end, 1601)


def spin_up_deflection(model, spin):
    """Tip deflection [m] in the hub frame of the KRB beam (L = 10 m, EI = 1.4e4 N m^2,
    rho A = 1.2 kg/m): 'cosserat' (bending only, order 3) or 'floating' (3 modes)."""
    from test_flexible_validation import single_link
    length = 10.0
    if model == 'cosserat':
        rod = CosseratRod(StrainBasis({'bending_z': 3}, length),
                          Section(1.2, [1e-9] * 3, [1e6, 1e9, 1.4e4, 1e9, 1e9, 1e9]))
        chain = Chain([LinkPart('beam', rod)], gravity=(0.0, 0.0, 0.0))

        def tip(x):
            return reference_chain.section_pose(chain, x, 0, length)[1, 3]
    else:
        chain = single_link(length, 1.2, 1.4e4, (3, 0), stiffening=True)

        def tip(x):
            return chain.section_pose(data, x, 0, length)[1][1]
    data = chain.create_data()

    def step(x, v, accel):
        mass = chain.mass_matrix(data, x).copy()
        load = chain.bias_forces(data, x, v)[1:] + mass[1:, 0] * accel
        return -np.linalg.solve(mass[1:, 1:], load)
    rhs, times = _prescribed_hub(step, spin)
    count = chain.nv - 1
    solution = solve_ivp(rhs, (0.0, times[-1]), np.zeros(2 * count), method='DOP853',
                         rtol=1e-8, atol=1e-10, max_step=0.05, t_eval=times)
    return np.array([tip(np.r_[0.0, y[:count]]) for y in solution.y.T])


def test_spin_up_agrees_with_the_floating_frame_model_to_its_neglected_order():
    """Kane-Ryan-Banerjee spin-up, no stiffening term added by hand: bounded, and within
    the floating-frame model's neglected terms, cubic in the deflection: halving the spin
    (and so the lag) divides the gap between the two models by ~8."""
    gaps, lags = [], []
    for spin in (6.0, 3.0):
        ours = spin_up_deflection('cosserat', spin)
        theirs = spin_up_deflection('floating', spin)
        lags.append(-ours.min())
        gaps.append(np.abs(ours - theirs).max())
    assert 0.4 < lags[0] < 0.8 and np.abs(ours[-200:]).max() < 0.05   # bounded, back to ~0
    assert gaps[0] < 0.01 * lags[0]
    assert 5.0 < gaps[0] / gaps[1] < 11.0


def test_the_spatial_soft_arm_bends_in_both_planes_and_twists():
    """config/models/two_link_spatial_soft.yaml held out horizontally: the upper arm's tip
    sags by less than linear theory gives for its loads (own weight w L^4/8EI, the elbow
    and forearm as a tip force P L^3/3EI and a tip moment M L^2/2EI, the forearm straight)
    and by more than 70 % of it (a 33 % deflection: the elastica's vertical deflection is
    ~0.9 of the linear one, and the sagging forearm shortens its own lever). A waist
    torque then bends the links sideways (bending_z) and twists them."""
    from pathlib import Path
    from flexible_manipulator.mechanics.simulation import Simulation
    from flexible_manipulator.model_config import load_model
    path = Path(__file__).resolve().parents[1] / 'config' / 'models' / 'two_link_spatial_soft.yaml'
    model = load_model(str(path))
    assert model.nq == 2 + 2 * (2 + 4 + 4) and model.joint_names == ('waist', 'elbow')
    q = static_equilibrium(model, np.zeros(model.nq))
    sag = -model.section_pose(model.create_data(), q, 0, 0.4)[1][2]
    g, (upper, fore) = 9.80665, (part.rod.section for part in model.parts)
    ei, length, reach = upper.stiffness[1], 0.4, 0.3
    force = g * (0.05 + 0.02 + fore.linear_density * reach + 0.02)   # clamp, hub, rod, payload
    moment = g * (fore.linear_density * reach ** 2 / 2 + 0.02 * reach)
    linear = (g * upper.linear_density * length ** 4 / (8 * ei) + force * length ** 3 / (3 * ei)
              + moment * length ** 2 / (2 * ei))
    assert 0.7 * linear < sag < linear
    sim = Simulation(model, 2e-3, 'rosenbrock2', q)
    sim.advance(np.array([1.0, 0.0]), 0.2)
    names = model.coordinate_names
    sideways = [abs(sim.q[i]) for i, n in enumerate(names) if 'bending_z' in n]
    twist = [abs(sim.q[i]) for i, n in enumerate(names) if 'torsion' in n]
    assert max(sideways) > 1e-2 and max(twist) > 1e-5


@pytest.mark.parametrize('tilt', [0.3, 0.9])
def test_a_soft_spatial_rod_under_a_tilted_dead_moment_meets_the_promised_residual(tilt):
    """A soft rod (EI = 2e-3 N m^2, isotropic bending, torsion) under a dead end moment
    about an axis tilted by ``tilt`` rad in its cross-section (where MINPACK can stop "not
    making good progress" at 5e-9 of the elastic forces: the solve must still converge). A dead
    moment M with no force gives the internal moment M at every section: with isotropic
    bending the rod is the circle of curvature |M| / EI in the plane normal to M. The
    result must meet the docstring's promise, a strain residual at most 1e-9 of the
    elastic forces (checked here from the model's own terms), and that circle."""
    soft = 2e-3
    section = Section(RHO_A, [1e-12] * 3, [0.5 * soft, soft, soft, STIFF, STIFF, STIFF])
    rod = CosseratRod(StrainBasis({'torsion': 2, 'bending_y': 3, 'bending_z': 3}, L),
                      section)
    chain = Chain([LinkPart('beam', rod)], gravity=(0.0, 0.0, 0.0))
    axis = np.array([0.0, math.sin(tilt), math.cos(tilt)])
    moment = 1.5 * math.pi * soft / L * axis                  # three quarters of a turn
    loads = [Load(0, L, [*moment, 0.0, 0.0, 0.0], False)]
    q = static_equilibrium(chain, np.zeros(chain.nq), loads=loads, gravity=False,
                           increments=4)
    strains = slice(chain.n_joints, chain.nv)
    data = chain.create_data()
    full = chain.stiffness @ q           # no gravity: h(q, 0) = K q
    residual = (full - generalized_load(chain, data, q, loads))[strains]
    elastic = chain.stiffness[strains, strains] @ q[strains]
    assert np.abs(residual).max() <= 1e-9 * np.abs(elastic).max()
    radius = soft / np.linalg.norm(moment)
    angle = L / radius
    # The circle in the plane spanned by the tangent e1 and n = axis x e1, centre at r n.
    normal = np.cross(axis, [1.0, 0.0, 0.0])
    expected = radius * math.sin(angle) * np.array([1.0, 0.0, 0.0]) \
        + radius * (1 - math.cos(angle)) * normal
    np.testing.assert_allclose(chain.section_pose(data, q, 0, L)[1], expected, atol=1e-7)
