"""Validation of the serial chain's rigid planar dynamics, the integrators and `Simulation`.

The chains here are planar: every joint is revolute about the base z axis, every link a
rigid body with its centre of mass on the link's x axis, so the textbook planar formulas
apply. Every expected value is derived in this file from textbook mechanics (closed-form
two-link arm, Lagrange's equations with Jacobians written here, exact ODE solutions),
never copied from numbers the package printed.
"""

from types import SimpleNamespace
import math

import numpy as np
import pytest
from scipy.special import ellipj, ellipk

from flexible_manipulator.mechanics.link_description import Beam, Joint, Link, RigidBody
from flexible_manipulator.mechanics.links import chain_from_links
from flexible_manipulator.mechanics.integrators import (IMPLICIT, METHODS, Stepper, TABLEAUS,
                                                        rosenbrock_tableau)
from flexible_manipulator.mechanics.simulation import NonFiniteStateError, Simulation
from flexible_manipulator.mechanics.step_check import StepStabilityWarning

G = 9.80665


def rigid_link(name, joint, length, mass, com, inertia, damping=0.0,
               effort_limit=math.inf):
    """Planar rigid link: COM at ``com`` on the link's x axis, ``inertia`` about z at the COM.

    A slender bar: the axial entry I_xx is small, I_yy = I_zz; only I_zz acts in the plane.
    """
    tensor = ((1e-3 * inertia, 0.0, 0.0), (0.0, inertia, 0.0), (0.0, 0.0, inertia))
    return Link(name, Joint(joint, damping=damping, effort_limit=effort_limit), length,
                RigidBody(mass, (com, 0.0, 0.0), tensor))


def planar(model):
    """Planar parameters of a chain of `rigid_link` links, as arrays (one entry per link).

    length l, mass m, COM abscissa c, planar inertia I (about z, at the COM), damping d.
    """
    links = model.links
    return SimpleNamespace(
        length=np.array([link.length for link in links]),
        mass=np.array([link.body.mass for link in links]),
        com=np.array([link.body.com[0] for link in links]),
        inertia=np.array([link.body.inertia[2][2] for link in links]),
        damping=np.array([link.joint.damping for link in links]))


def random_chain(rng, n, gravity_base=(0.0, -G, 0.0), damping=True):
    """Chain of ``n`` links with random physical parameters (lengths 0.2..1 m etc.)."""
    links = []
    for i in range(n):
        length = rng.uniform(0.2, 1.0)
        links.append(rigid_link(
            f'link{i}', f'joint{i}', length, mass=rng.uniform(0.3, 3.0),
            com=rng.uniform(0.1, 0.9) * length, inertia=rng.uniform(0.005, 0.2),
            damping=rng.uniform(0.05, 0.5) if damping else 0.0))
    return chain_from_links(f'chain{n}', links, gravity_base=gravity_base)


# --------------------------------------------------------------------------------------
# Two-link arm: textbook closed form (e.g. Spong, Hutchinson, Vidyasagar, "Robot Modeling
# and Control", section 7.4.1 "Two-link revolute joint arm"), gravity g along -y.
# --------------------------------------------------------------------------------------

def two_link_closed_form(model, q, v, g):
    """Return (M, h) of the two-link planar arm from the textbook formulas."""
    p = planar(model)
    (l1, _), (m1, m2), (c1, c2), (i1, i2), (d1, d2) = (
        p.length, p.mass, p.com, p.inertia, p.damping)
    q1, q2 = q
    v1, v2 = v
    cos2, sin2 = math.cos(q2), math.sin(q2)
    m11 = m1 * c1 ** 2 + i1 + m2 * (l1 ** 2 + c2 ** 2 + 2 * l1 * c2 * cos2) + i2
    m12 = m2 * (c2 ** 2 + l1 * c2 * cos2) + i2
    m22 = m2 * c2 ** 2 + i2
    mass = np.array([[m11, m12], [m12, m22]])
    coriolis = np.array([-m2 * l1 * c2 * sin2 * (2 * v1 * v2 + v2 ** 2),
                         m2 * l1 * c2 * sin2 * v1 ** 2])
    # V = m1 g c1 sin q1 + m2 g (l1 sin q1 + c2 sin(q1 + q2)); gravity torque = dV/dq.
    gravity = np.array([(m1 * c1 + m2 * l1) * g * math.cos(q1) + m2 * c2 * g * math.cos(q1 + q2),
                        m2 * c2 * g * math.cos(q1 + q2)])
    damping = np.array([d1 * v1, d2 * v2])
    return mass, coriolis + gravity + damping


@pytest.mark.parametrize('seed', range(5))
def test_two_link_matches_textbook_closed_form(seed):
    """M(q), h(q, v) and rnea of a random two-link arm equal the closed-form expressions."""
    rng = np.random.default_rng(seed)
    model = random_chain(rng, 2)
    data = model.create_data()
    for _ in range(4):
        q = rng.uniform(-math.pi, math.pi, 2)
        v = rng.uniform(-3.0, 3.0, 2)
        a = rng.uniform(-5.0, 5.0, 2)
        mass, bias = two_link_closed_form(model, q, v, G)
        np.testing.assert_allclose(model.mass_matrix(data, q), mass, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(model.bias_forces(data, q, v), bias, rtol=1e-12, atol=1e-11)
        np.testing.assert_allclose(model.rnea(data, q, v, a), mass @ a + bias,
                                   rtol=1e-12, atol=1e-11)


def test_two_link_gravity_and_damping_parts_separate():
    """h = C v + g + D v splits by switching gravity and damping off in the description.

    This is the physics the deleted ``with_gravity`` / ``with_damping`` flags of the old
    planar rnea selected. Built without gravity, h is the closed-form C v + D v; built
    without damping, C v + g; and the full model's h minus the gravity-free one is g(q)
    alone, independent of v (gravity does no velocity-dependent work).
    """
    rng = np.random.default_rng(21)
    full = random_chain(rng, 2)
    links = full.links
    weightless = chain_from_links('weightless', links, gravity_base=(0.0, 0.0, 0.0))
    undamped = chain_from_links('undamped', [
        Link(link.name, Joint(link.joint.name), link.length, link.body) for link in links],
        gravity_base=full.gravity_base)
    datas = [model.create_data() for model in (full, weightless, undamped)]
    d = planar(full).damping
    zero = np.zeros(2)
    for _ in range(4):
        q = rng.uniform(-math.pi, math.pi, 2)
        v = rng.uniform(-3.0, 3.0, 2)
        a = rng.uniform(-5.0, 5.0, 2)
        mass, bias = two_link_closed_form(full, q, v, G)
        _, gravity = two_link_closed_form(full, q, zero, G)  # g(q) + D 0
        _, bias_no_gravity = two_link_closed_form(full, q, v, 0.0)
        np.testing.assert_allclose(weightless.rnea(datas[1], q, v, a), mass @ a + bias_no_gravity,
                                   rtol=1e-12, atol=1e-11)
        np.testing.assert_allclose(undamped.rnea(datas[2], q, v, a), mass @ a + bias - d * v,
                                   rtol=1e-12, atol=1e-11)
        gravity_part = (full.bias_forces(datas[0], q, v).copy()
                        - weightless.bias_forces(datas[1], q, v))
        np.testing.assert_allclose(gravity_part, gravity, rtol=1e-12, atol=1e-11)
        # The mass matrix is the same with or without gravity and damping.
        for model, data in zip((weightless, undamped), datas[1:]):
            np.testing.assert_allclose(model.mass_matrix(data, q), mass, rtol=1e-12,
                                       atol=1e-12)


def test_two_link_gravity_sign_in_horizontal_pose():
    """Holding a horizontal arm needs a positive (counter-clockwise) shoulder torque.

    Statics by hand: with q = 0 both links lie along +x and gravity pulls along -y, so the
    shoulder must supply (m1 c1 + m2 (l1 + c2)) g and the elbow m2 c2 g, both positive.
    """
    model = chain_from_links('arm', [rigid_link('a', 'j1', 1.0, 2.0, 0.5, 0.1),
                                     rigid_link('b', 'j2', 0.8, 1.0, 0.4, 0.05)],
                             gravity_base=(0.0, -G, 0.0))
    data = model.create_data()
    tau = model.bias_forces(data, np.zeros(2), np.zeros(2))
    np.testing.assert_allclose(tau, [(2.0 * 0.5 + 1.0 * 1.4) * G, 1.0 * 0.4 * G], rtol=1e-13)


# --------------------------------------------------------------------------------------
# Three-link chain: Lagrange's equations with Jacobians written here.
# --------------------------------------------------------------------------------------

def com_kinematics(model, q):
    """COM positions p_i (n, 2), linear Jacobians J_v,i (n, 2, n), angular J_w,i (n, n).

    p_i = sum_{k<i} l_k e(theta_k) + c_i e(theta_i), theta_i = q_1 + ... + q_i, with
    e(theta) = (cos theta, sin theta); d theta_k / d q_j = 1 for j <= k.
    """
    p = planar(model)
    n = model.nv
    theta = np.cumsum(q)
    positions = np.zeros((n, 2))
    jv = np.zeros((n, 2, n))
    jw = np.zeros((n, n))
    for i in range(n):
        arms = [(p.length[k], theta[k]) for k in range(i)] + [(p.com[i], theta[i])]
        for k, (arm, angle) in enumerate(arms):
            positions[i] += arm * np.array([math.cos(angle), math.sin(angle)])
            # d/dq_j of arm e(theta_k) = arm e_perp(theta_k) for every j <= k.
            jv[i, :, :k + 1] += arm * np.array([[-math.sin(angle)], [math.cos(angle)]])
        jw[i, :i + 1] = 1.0
    return positions, jv, jw


def reference_mass_matrix(model, q):
    """M(q) = sum_i m_i J_v,i^T J_v,i + I_i J_w,i^T J_w,i (kinetic energy = v^T M v / 2)."""
    p = planar(model)
    _, jv, jw = com_kinematics(model, q)
    return sum(p.mass[i] * jv[i].T @ jv[i] + p.inertia[i] * np.outer(jw[i], jw[i])
               for i in range(model.nv))


def reference_coriolis(model, q, v, eps=1e-6):
    """C(q, v) v from Christoffel symbols of the reference M, dM/dq by central differences.

    (C v)_k = sum_ij (dM_kj/dq_i - 1/2 dM_ij/dq_k) v_i v_j.
    """
    n = model.nv
    dm = np.zeros((n, n, n))  # dm[i] = dM / dq_i
    for i in range(n):
        step = np.zeros(n)
        step[i] = eps
        dm[i] = (reference_mass_matrix(model, q + step)
                 - reference_mass_matrix(model, q - step)) / (2 * eps)
    mdot = np.einsum('ikj,i->kj', dm, v)
    return mdot @ v - 0.5 * np.array([v @ dm[k] @ v for k in range(n)])


def reference_gravity(model, q):
    """g(q) = dV/dq with V = -sum m_i g . p_i, i.e. -sum m_i J_v,i^T g (in-plane part)."""
    p = planar(model)
    _, jv, _ = com_kinematics(model, q)
    g = model.gravity_base[:2]
    return -sum(p.mass[i] * jv[i].T @ g for i in range(model.nv))


def fd_gradient(function, q, eps=1e-6):
    """Central-difference gradient of a scalar function."""
    grad = np.zeros(q.size)
    for i in range(q.size):
        step = np.zeros(q.size)
        step[i] = eps
        grad[i] = (function(q + step) - function(q - step)) / (2 * eps)
    return grad


# Gravity with an arbitrary in-plane direction and a normal component that must do no work.
THREE_LINK_GRAVITY = (3.0, -8.5, 2.5)


@pytest.mark.parametrize('seed', range(3))
def test_three_link_mass_matrix_from_jacobians(seed):
    """mass_matrix equals sum m J_v^T J_v + I J_w^T J_w built from hand-written Jacobians."""
    rng = np.random.default_rng(100 + seed)
    model = random_chain(rng, 3, gravity_base=THREE_LINK_GRAVITY)
    data = model.create_data()
    for _ in range(4):
        q = rng.uniform(-math.pi, math.pi, 3)
        np.testing.assert_allclose(model.mass_matrix(data, q), reference_mass_matrix(model, q),
                                   rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize('seed', range(3))
def test_three_link_rnea_matches_lagrange_equations(seed):
    """rnea(q, v, a) = M a + C v + g + D v with C from Christoffel symbols (finite differences).

    Central differences with eps = 1e-6 have truncation error ~eps^2 |M'''| ~ 1e-12 and
    rounding error ~1e-16 |M| / eps ~ 1e-10, so 1e-7 (relative to the torque scale) is
    generous yet far below any real modelling error (a wrong sign or factor gives O(1)).
    """
    rng = np.random.default_rng(200 + seed)
    model = random_chain(rng, 3, gravity_base=THREE_LINK_GRAVITY)
    data = model.create_data()
    for _ in range(3):
        q = rng.uniform(-math.pi, math.pi, 3)
        v = rng.uniform(-3.0, 3.0, 3)
        a = rng.uniform(-5.0, 5.0, 3)
        expected = (reference_mass_matrix(model, q) @ a + reference_coriolis(model, q, v)
                    + reference_gravity(model, q) + planar(model).damping * v)
        tau = model.rnea(data, q, v, a).copy()
        scale = max(1.0, np.max(np.abs(expected)))
        np.testing.assert_allclose(tau, expected, rtol=0.0, atol=1e-7 * scale)


def test_potential_energy_gradient_is_rnea_gravity():
    """The gradient of potential_energy (central differences) is the static torque g(q).

    rnea(q, 0, 0) (damping does not act at rest) must equal dV/dq (principle of virtual
    work), and both must equal -sum m J_v^T g from the hand-written Jacobians.
    """
    rng = np.random.default_rng(7)
    model = random_chain(rng, 3, gravity_base=THREE_LINK_GRAVITY)
    data = model.create_data()
    zero = np.zeros(3)
    for _ in range(4):
        q = rng.uniform(-math.pi, math.pi, 3)
        grad = fd_gradient(lambda x: model.potential_energy(data, x), q)
        static = model.rnea(data, q, zero, zero).copy()
        np.testing.assert_allclose(static, grad, rtol=0.0, atol=1e-7)
        np.testing.assert_allclose(static, reference_gravity(model, q), rtol=1e-12, atol=1e-12)


def test_kinetic_and_potential_energy_from_com_velocities():
    """T = sum (m |J_v v|^2 + I (J_w v)^2) / 2 and V = -sum m g . p_C by direct summation."""
    rng = np.random.default_rng(8)
    model = random_chain(rng, 3, gravity_base=THREE_LINK_GRAVITY)
    p = planar(model)
    data = model.create_data()
    g = np.array(THREE_LINK_GRAVITY[:2])
    for _ in range(4):
        q = rng.uniform(-math.pi, math.pi, 3)
        v = rng.uniform(-3.0, 3.0, 3)
        positions, jv, jw = com_kinematics(model, q)
        kinetic = sum(0.5 * p.mass[i] * np.sum((jv[i] @ v) ** 2)
                      + 0.5 * p.inertia[i] * (jw[i] @ v) ** 2 for i in range(3))
        potential = -sum(p.mass[i] * g @ positions[i] for i in range(3))
        assert model.kinetic_energy(data, q, v) == pytest.approx(kinetic, rel=1e-12)
        assert model.potential_energy(data, q) == pytest.approx(potential, rel=1e-12)


@pytest.mark.parametrize('n', [1, 2, 3, 5])
def test_mass_matrix_symmetric_positive_definite(n):
    """M(q) is symmetric and positive definite (T > 0 for v != 0) on random states."""
    rng = np.random.default_rng(300 + n)
    model = random_chain(rng, n)
    data = model.create_data()
    for _ in range(10):
        mass = model.mass_matrix(data, rng.uniform(-math.pi, math.pi, n)).copy()
        np.testing.assert_allclose(mass, mass.T, rtol=0.0, atol=1e-13)
        assert np.min(np.linalg.eigvalsh(mass)) > 0.0
        np.linalg.cholesky(mass)  # raises LinAlgError unless positive definite


@pytest.mark.parametrize('n', [1, 2, 4])
def test_forward_dynamics_inverts_rnea(n):
    """rnea(q, v, forward_dynamics(q, v, tau)) = tau, since both solve M a + h = tau."""
    rng = np.random.default_rng(400 + n)
    model = random_chain(rng, n)
    data = model.create_data()
    for _ in range(10):
        q = rng.uniform(-math.pi, math.pi, n)
        v = rng.uniform(-3.0, 3.0, n)
        tau = rng.uniform(-20.0, 20.0, n)
        acc = model.forward_dynamics(data, q, v, tau).copy()
        np.testing.assert_allclose(model.rnea(data, q, v, acc), tau, rtol=1e-10, atol=1e-10)


def planar_poses(model, data, q):
    """(x, y, theta) of every link frame (rows 0..n-1) and of the last tip (row n).

    Also checks that every frame lies in the base x-y plane and turns about z only.
    """
    link_R, link_p, tip_R, tip_p = (array.copy() for array in model.frame_placements(data, q))
    rotations = np.concatenate([link_R, tip_R[-1:]])
    positions = np.concatenate([link_p, tip_p[-1:]])
    np.testing.assert_allclose(positions[:, 2], 0.0, rtol=0, atol=1e-14)
    np.testing.assert_allclose(rotations[:, 2, :], [[0.0, 0.0, 1.0]] * len(rotations),
                               rtol=0, atol=1e-14)
    np.testing.assert_allclose(rotations[:, :2, 2], 0.0, rtol=0, atol=1e-14)
    theta = np.arctan2(rotations[:, 1, 0], rotations[:, 0, 0])
    return np.column_stack([positions[:, :2], theta]), tip_R, tip_p


def test_frame_placements_closed_form_kinematics():
    """Joint frames and tool: x_i = sum_{k<i} l_k cos theta_k, y likewise, theta_i = sum q.

    Each joint sits at the previous link's tip (x = length), so the tip of link i is the
    frame of link i + 1, with the orientation of link i (rigid links do not bend).
    """
    rng = np.random.default_rng(9)
    model = random_chain(rng, 3)
    data = model.create_data()
    l1, l2, l3 = planar(model).length
    for _ in range(5):
        q1, q2, q3 = q = rng.uniform(-math.pi, math.pi, 3)
        t1, t2, t3 = q1, q1 + q2, q1 + q2 + q3
        expected = np.array([
            [0.0, 0.0, t1],
            [l1 * math.cos(t1), l1 * math.sin(t1), t2],
            [l1 * math.cos(t1) + l2 * math.cos(t2), l1 * math.sin(t1) + l2 * math.sin(t2), t3],
            [l1 * math.cos(t1) + l2 * math.cos(t2) + l3 * math.cos(t3),
             l1 * math.sin(t1) + l2 * math.sin(t2) + l3 * math.sin(t3), t3],
        ])
        poses, tip_R, tip_p = planar_poses(model, data, q)
        np.testing.assert_allclose(poses[:, :2], expected[:, :2], rtol=0, atol=1e-14)
        # Angles compared modulo 2 pi (atan2 returns them in (-pi, pi]).
        wrapped = np.angle(np.exp(1j * (poses[:, 2] - expected[:, 2])))
        np.testing.assert_allclose(wrapped, 0.0, rtol=0, atol=1e-14)
        tip_theta = np.arctan2(tip_R[:, 1, 0], tip_R[:, 0, 0])
        np.testing.assert_allclose(np.angle(np.exp(1j * (tip_theta - expected[:3, 2]))), 0.0,
                                   rtol=0, atol=1e-14)
        np.testing.assert_allclose(tip_p[:, :2], expected[1:, :2], rtol=0, atol=1e-14)


# --------------------------------------------------------------------------------------
# Energy behaviour of the integrated motion.
# --------------------------------------------------------------------------------------

def lab_arm(damping):
    """Two-link arm with the parameters of config/models/two_link_rigid.yaml."""
    return chain_from_links('arm', [
        rigid_link('upper_arm', 'shoulder', 0.5, 1.2, 0.25, 0.025, damping=damping),
        rigid_link('forearm', 'elbow', 0.4, 0.8, 0.2, 0.010667, damping=damping)],
        gravity_base=(0.0, -G, 0.0))


def energy_history(model, step, duration=5.0, sample=0.01):
    """T + V sampled every ``sample`` s of an unactuated RK4 simulation from a raised pose."""
    sim = Simulation(model, step, 'rk4', q0=[0.3, 1.0], v0=[0.5, -1.0])
    data = model.create_data()
    energies = []
    for _ in range(int(round(duration / sample)) + 1):
        energies.append(model.kinetic_energy(data, sim.q, sim.v)
                        + model.potential_energy(data, sim.q))
        if len(energies) <= round(duration / sample):
            sim.advance(np.zeros(2), sample)
    assert sim.time == pytest.approx(duration)
    return np.array(energies)


def test_energy_conserved_without_damping():
    """No damping, no input: T + V is a first integral; RK4 drift over 5 s stays below 1e-6.

    Step choice: RK4's energy error grows like h^4 t. The start (q = (0.3, 1.0) rad,
    raised, E0 ~ 3.6 J) throws the arm into large chaotic swings with elbow rates up to
    ~35 rad/s, i.e. up to ~0.035 rad per step at h = 1e-3 s. At h = 2e-3 s the drift is
    already of the order of the bound; h^4 scaling gives h = 1e-3 s a ~16x margin, while
    any error in the dynamics (wrong Coriolis term, spurious dissipation) gives O(1e-2+).
    """
    energies = energy_history(lab_arm(0.0), step=1e-3)
    assert abs(energies[0]) > 1.0  # the relative measure is meaningful
    drift = np.max(np.abs(energies - energies[0])) / abs(energies[0])
    assert drift < 1e-6


def test_energy_decreases_monotonically_with_damping():
    """With joint damping dE/dt = -v^T D v <= 0: sampled T + V must decrease at every sample.

    Over each 10 ms sample the dissipated energy is >= ~1e-5 J here, while the RK4 energy
    error per sample (h = 1e-3 s, see above: < 1e-6 * 3.6 J over 500 samples) is below
    1e-8 J, so a strict decrease is a robust criterion.
    The total loss must also be substantial (the arm starts raised and sinks).
    """
    energies = energy_history(lab_arm(0.05), step=1e-3)
    assert np.all(np.diff(energies) < 0.0)
    assert energies[-1] < energies[0] - 1.0


# --------------------------------------------------------------------------------------
# Integrators: observed order of convergence on chain models with known motions.
# --------------------------------------------------------------------------------------

# First root of 1 + cos(x) cosh(x) = 0, the clamped-free beam's b_1 L (Blevins, "Formulas
# for natural frequency and mode shape", table 8-1: 1.87510407).
BETA1_L = 1.8751040687119611


def damped_disc():
    """One rigid link, no gravity, J = I + m c^2 = 1 kg m^2 and damping d = 1 N m s.

    Its motion is v' = -(d / J) v = -v: v = v0 exp(-t), q = q0 + v0 (1 - exp(-t)).
    """
    return chain_from_links('disc', [rigid_link('disc', 'spin', 1.0, 1.0, 0.5, 0.75, damping=1.0)])


def sliding_beam():
    """A beam on a prismatic joint along its own axis, one bending mode, no gravity.

    Without the foreshortening coupling (geometric_stiffening off) the axial slide and the
    transverse bending are decoupled (the mode moves the beam along y, the joint along x, no
    rotation): the slide moves uniformly and the modal coordinate is a harmonic oscillator
    of frequency omega_1 = (b_1 L)^2 sqrt(EI / (rho A L^4)) = 1 rad/s for L = 1 m,
    rho A = 1 kg/m and EI = 1 / (b_1 L)^4 N m^2.
    """
    beam = Beam(1.0, (BETA1_L ** -4, 1.0), modes=(1, 0))
    link = Link('beam', Joint('slide', type='prismatic', axis=(1.0, 0.0, 0.0)), 1.0,
                RigidBody(0.5), beam=beam)
    return chain_from_links('sliding_beam', [link], geometric_stiffening=False)


def pendulum():
    """Point mass 1 kg on a massless 1 m link, gravity 1 m/s^2 along -y: theta'' = -cos theta.

    With phi = theta + pi/2 (from the hanging pose) this is phi'' = -sin phi. Released from
    rest at phi0 its exact motion (e.g. Lawden, "Elliptic functions and applications", 5.2)
    is phi = 2 arcsin(k sn(K - t, k)), phi' = -2 k cn(K - t, k), k = sin(phi0 / 2), K = K(k).
    """
    return chain_from_links('pendulum', [Link('bob', Joint('pivot'), 1.0,
                                         RigidBody(1.0, (1.0, 0.0, 0.0)))],
                            gravity_base=(0.0, -1.0, 0.0))


def pendulum_exact(phi0, t):
    """State (theta, theta') at t of the pendulum released from rest at phi0 (see above)."""
    m = math.sin(phi0 / 2) ** 2               # parameter m = k^2 of scipy's ellipj
    sn, cn, _, _ = ellipj(ellipk(m) - t, m)
    k = math.sqrt(m)
    return [2 * math.asin(k * sn) - math.pi / 2, -2 * k * cn]


PENDULUM_PHI0 = 2.0  # rad from hanging: a large, strongly nonlinear swing

# name: (model, x(0) = (q, v), exact x(1))
ODES = {
    # v = exp(-t), q = 0.2 + (1 - exp(-t))
    'decay': (damped_disc, [0.2, 1.0], [0.2 + 1.0 - math.exp(-1.0), math.exp(-1.0)]),
    # slide: s = 0.3 t; mode: cos t, -sin t (amplitude 0.1)
    'oscillator': (sliding_beam, [0.0, 0.1, 0.3, 0.0],
                   [0.3, 0.1 * math.cos(1.0), 0.3, -0.1 * math.sin(1.0)]),
    'pendulum': (pendulum, [PENDULUM_PHI0 - math.pi / 2, 0.0],
                 pendulum_exact(PENDULUM_PHI0, 1.0)),
}

# Classical orders of the schemes (Hairer, Norsett, Wanner, "Solving ODEs I", II.1), of
# ROS2 (Verwer, Spee, Blom & Hundsdorfer, SIAM J. Sci. Comput. 20 (1999): order 2) and of
# ROS34PW2 (Rang & Angermann, BIT 45 (2005): order 3 as a W-method).
TEXTBOOK_ORDER = {'euler': 1, 'heun': 2, 'rk3': 3, 'rk4': 4, 'rosenbrock2': 2, 'rosenbrock3': 3}


def integrate(method, model, x0, steps, end=1.0):
    """Integrate the unactuated model from t = 0 to ``end`` with ``steps`` equal steps."""
    data = model.create_data()
    stepper = Stepper(model, data, method)
    x = np.array(x0, dtype=float)
    assert stepper.advance(x, np.zeros(model.nu), end / steps, steps)
    return x


def test_ode_models_start_from_the_stated_initial_state():
    """The exact solutions above start where the integrations do (checks the formulas).

    Also the oscillator's frequency: the model's first mode is the clamped-free
    omega_1 = (b_1 L)^2 sqrt(EI / (rho A L^4)) = 1 rad/s.
    """
    np.testing.assert_allclose(pendulum_exact(PENDULUM_PHI0, 0.0), ODES['pendulum'][1],
                               rtol=0, atol=1e-14)
    assert sliding_beam().mode_frequencies == pytest.approx([1.0], rel=1e-12)


def test_tableau_orders_are_the_textbook_orders():
    """The declared orders (TABLEAUS, and each Stepper's order) are the textbook orders."""
    assert {name: tableau[3] for name, tableau in TABLEAUS.items()} == {
        name: order for name, order in TEXTBOOK_ORDER.items() if name not in IMPLICIT}
    assert set(METHODS) == set(TEXTBOOK_ORDER)
    model = damped_disc()
    for method in METHODS:
        assert Stepper(model, model.create_data(), method).order == TEXTBOOK_ORDER[method]


@pytest.mark.parametrize('method', sorted(TABLEAUS))
def test_tableau_nodes_are_row_sums(method):
    """c_j = sum_l A_jl and sum b_j = 1 (HNW II.1, (1.9) and consistency).

    The steppers integrate the autonomous x' = f(x, u) with u held over the step, so the
    nodes c never enter a step; these conditions make that the same integration as the
    non-autonomous form that would use them.
    """
    a_rows, b, c, _ = TABLEAUS[method]
    assert len(a_rows) == len(b) == len(c)
    np.testing.assert_allclose([sum(row) for row in a_rows], c, rtol=0, atol=1e-15)
    assert sum(b) == pytest.approx(1.0, abs=1e-15)


def gamma_form_step(method, f, jacobian, x, h):
    """One step of a method of `IMPLICIT` in the papers' own Gamma form (HW IV.7, (7.4)):

    (I - gamma h J) K_j = h f(x + sum_l alpha_jl K_l) + gamma h J sum_{l<j} (gamma_jl / gamma)
    K_l, x+ = x + sum beta_j K_j, with the products by J that the stepper's form avoids.
    """
    gamma, alpha_rows, gamma_rows, beta, _ = IMPLICIT[method]
    n, stages = x.size, []
    w = np.eye(n) - gamma * h * jacobian
    for j in range(len(beta)):
        point = x + sum(alpha * k for alpha, k in zip(alpha_rows[j], stages))
        coupling = sum(g * k for g, k in zip(gamma_rows[j], stages)) if j else np.zeros(n)
        stages.append(np.linalg.solve(w, h * f(point) + h * jacobian @ coupling))
    return x + sum(b * k for b, k in zip(beta, stages))


def transformed_step(method, f, jacobian, x, h):
    """The same step in the stepper's form (`integrators` module doc) from `rosenbrock_tableau`."""
    a, c, b, gamma = rosenbrock_tableau(method)
    w = np.eye(x.size) - gamma * h * jacobian
    stages = []
    for j in range(b.size):
        rhs = f(x + h * sum(a[j, m] * stages[m] for m in range(j))) + sum(
            c[j, m] * stages[m] for m in range(j))
        stages.append(np.linalg.solve(w, rhs))
    return x + h * sum(b[j] * stages[j] for j in range(b.size))


def van_der_pol(x):
    """x'' = (1 - x^2) x' - x as a first-order system (smooth, nonlinear; unit time scales)."""
    return np.array([x[1], (1.0 - x[0] ** 2) * x[1] - x[0]])


@pytest.mark.parametrize('method', sorted(IMPLICIT))
def test_rosenbrock_tableaus_match_the_papers_gamma_form(method):
    """The stepper's (a, c, b) give the step of the published Gamma form to round-off.

    Any J (the W-method's matrix) must give the same step in both forms: checked with a J
    that is not the Jacobian of f.
    """
    jacobian = np.array([[0.3, -1.2], [2.0, -5.0]])
    x = np.array([1.5, -0.4])
    for h in (0.01, 0.2):
        np.testing.assert_allclose(transformed_step(method, van_der_pol, jacobian, x, h),
                                   gamma_form_step(method, van_der_pol, jacobian, x, h),
                                   rtol=0, atol=1e-14)


@pytest.mark.parametrize('method', sorted(IMPLICIT))
@pytest.mark.parametrize('which', ['exact', 'zero', 'wrong'])
def test_rosenbrock_w_order_for_any_jacobian(method, which):
    """A W-method keeps its order whatever J is (Steihaug & Wolfbrandt 1979; HW IV.7).

    Van der Pol to t = 1 in the published Gamma form, with J the exact Jacobian at the
    step's start, zero (then an explicit Runge-Kutta method) or a fixed wrong matrix;
    reference: the exact-J run with 1/32 of the step. log2 of the error ratio for h = 1/20
    and 1/40 is the paper's order within 0.25.
    """
    def exact(x):
        return np.array([[0.0, 1.0], [-2.0 * x[0] * x[1] - 1.0, 1.0 - x[0] ** 2]])

    def jacobian_at(x):
        if which == 'exact':
            return exact(x)
        return np.zeros((2, 2)) if which == 'zero' else np.array([[0.5, 0.0], [-3.0, -2.0]])

    def run(steps, jac=jacobian_at):
        x = np.array([2.0, 0.0])
        for _ in range(steps):
            x = gamma_form_step(method, van_der_pol, jac(x), x, 1.0 / steps)
        return x

    reference = run(40 * 32, exact)
    errors = [np.max(np.abs(run(steps) - reference)) for steps in (20, 40)]
    assert abs(math.log2(errors[0] / errors[1]) - IMPLICIT[method][-1]) < 0.25


@pytest.mark.parametrize('method', sorted(IMPLICIT))
def test_rosenbrock_methods_are_l_stable(method):
    """R(z) = 1 + z beta^T (I - z (alpha + Gamma))^-1 1 (HW IV.7, (7.13)): |R(iy)| <= 1 on
    the imaginary axis (A-stable: R has no pole in the left half-plane, its only pole is
    1/gamma > 0) and R(z) -> 0 as z -> -infinity (L-stable)."""
    gamma, alpha_rows, gamma_rows, beta, _ = IMPLICIT[method]
    stages = len(beta)
    coupled = gamma * np.eye(stages)
    for j in range(stages):
        coupled[j, :j] = np.add(alpha_rows[j], gamma_rows[j]) if j else []

    def stability(z):
        return 1.0 + z * np.array(beta) @ np.linalg.solve(
            np.eye(stages) - z * coupled, np.ones(stages))
    assert max(abs(stability(1j * y)) for y in np.geomspace(1e-3, 1e6, 400)) <= 1.0 + 1e-12
    assert abs(stability(-1e9)) < 1e-6


@pytest.mark.parametrize('ode', sorted(ODES))
@pytest.mark.parametrize('method', sorted(METHODS))
def test_observed_order_of_convergence(method, ode):
    """log2(err(h) / err(h/2)) at t = 1 is within 0.2 of the method's textbook order.

    h = 1/20 and 1/40 are in the asymptotic range for all five schemes (the motions have
    unit time scales) yet keep the RK4 error (~1e-9) far above rounding. The pendulum is
    strongly nonlinear; for ROS2 the decay and the oscillator are linear problems whose
    Jacobian the model supplies exactly, while on the pendulum its W matrix is the identity
    (no elastic terms), which ROS2, a W-method, tolerates without loss of order.
    """
    model_factory, x0, exact = ODES[ode]
    model = model_factory()
    errors = [np.max(np.abs(integrate(method, model, x0, steps) - exact)) for steps in (20, 40)]
    observed = math.log2(errors[0] / errors[1])
    assert abs(observed - TEXTBOOK_ORDER[method]) < 0.2


def test_unknown_integrator_is_refused():
    """An unknown method name is a ValueError listing the known ones."""
    model = damped_disc()
    with pytest.raises(ValueError, match='rk4'):
        Stepper(model, model.create_data(), 'rk45')
    with pytest.raises(ValueError, match='rosenbrock2'):
        Simulation(model, 1e-3, 'rk45')


def test_the_old_integrator_name_ros2_still_runs_with_a_warning():
    """'ros2' (renamed 'rosenbrock2': it read as ROS 2) still runs, deprecated: a
    FutureWarning names the new value, and the run is the same, bit for bit."""
    model = damped_disc()
    new = Simulation(model, 1e-3, 'rosenbrock2', v0=[1.0])
    with pytest.warns(FutureWarning, match="'ros2' is renamed 'rosenbrock2'"):
        old = Simulation(model, 1e-3, 'ros2', v0=[1.0])
    for sim in (new, old):
        sim.advance(np.ones(1), 0.05)
    assert np.array_equal(new.state, old.state)


def stiff_blade():
    """A hub driving a short, very stiff flexible blade (two bending modes) with a tip mass.

    Beam: L = 0.5 m, rho A = 0.5 kg/m, EI = 2.5e5 N m^2; clamped-free frequencies
    omega_k = (b_k L)^2 sqrt(EI / (rho A L^4)) = 9.9e3 and 6.2e4 rad/s.
    """
    hub = RigidBody(0.5, (0.0, 0.0, 0.0), tuple(map(tuple, 0.01 * np.eye(3))))
    blade = Link('blade', Joint('hub'), 0.5, hub, beam=Beam(0.5, (2.5e5, 2.5e5), modes=(2, 0)),
                 payload=RigidBody(0.1))
    return chain_from_links('stiff_blade', [blade], gravity_base=(0.0, -G, 0.0))


def test_ros2_stays_stable_where_rk4_blows_up_on_a_stiff_blade():
    """At h = 1 ms, h omega_1 ~ 10 > 2.8 (RK4's stability limit): RK4 diverges, ROS2 does not.

    The blade spins up from the horizontal at 2 rad/s with a tip deflection of 4e-5 m in
    its first mode (W_1(L) = 2), under gravity, no damping, no input: T + V is conserved.
    ROS2 is L-stable on the elastic part, so it damps the unresolved vibration instead of
    amplifying it. Expected, from the energy balance:

    * T + V never exceeds its initial value (1e-9 J allowance for rounding);
    * it loses at most the initial elastic energy K_1 q_1^2 / 2 = rho A L omega_1^2 q_1^2 / 2
      (~5e-3 J, the vibration it damps) plus 10 % for the vibration the rotation and
      gravity excite, far less than the 0.11 J of the rigid swing;
    * the modal coordinates never exceed the initial deflection;
    * the hub angle follows an RK4 run resolved with h = 1e-5 s (h omega ~ 0.5, stable)
      within 1e-3 rad over 1 s, while it turns by ~3.2 rad: the rigid motion is kept.
    """
    model = stiff_blade()
    omega = model.mode_frequencies
    expected = BETA1_L ** 2 * math.sqrt(2.5e5 / (0.5 * 0.5 ** 4))
    assert omega[0] == pytest.approx(expected, rel=1e-12)
    q0, v0 = [0.0, 2e-5, 0.0], [2.0, 0.0, 0.0]
    step, sample, duration = 1e-3, 0.01, 1.0
    assert step * omega[0] > 2.8

    # refused at start-up (step_check: the fastest elastic mode), unless only warned about
    with pytest.raises(ValueError, match='past the stability limit of rk4'):
        Simulation(model, step, 'rk4', q0=q0, v0=v0)
    with pytest.warns(StepStabilityWarning, match='largest stable step'):
        rk4 = Simulation(model, step, 'rk4', q0=q0, v0=v0, refuse_unstable=False)
    with np.errstate(all='ignore'):
        with pytest.raises(NonFiniteStateError):
            rk4.advance(np.zeros(1), duration)

    data = model.create_data()

    def energy(sim):
        return model.kinetic_energy(data, sim.q, sim.v) + model.potential_energy(data, sim.q)

    implicit = Simulation(model, step, 'rosenbrock2', q0=q0, v0=v0)
    reference = Simulation(model, 1e-5, 'rk4', q0=q0, v0=v0)
    energies, modes, angle_error = [energy(implicit)], [], []
    for _ in range(int(round(duration / sample))):
        implicit.advance(np.zeros(1), sample)
        reference.advance(np.zeros(1), sample)
        energies.append(energy(implicit))
        modes.append(implicit.q[1:].copy())
        angle_error.append(implicit.q[0] - reference.q[0])
    energies = np.array(energies)
    elastic = 0.5 * 0.5 * 0.5 * omega[0] ** 2 * q0[1] ** 2
    assert np.all(energies <= energies[0] + 1e-9)
    assert energies[0] - energies[-1] < 1.1 * elastic < 0.1 * energies[0]
    assert np.max(np.abs(modes)) <= q0[1]
    assert abs(reference.q[0] - q0[0]) > 3.0
    assert np.max(np.abs(angle_error)) < 1e-3


# --------------------------------------------------------------------------------------
# Simulation bookkeeping.
# --------------------------------------------------------------------------------------

def test_advance_refuses_partial_steps():
    """A duration that is not a whole number of steps raises ValueError and changes nothing."""
    sim = Simulation(lab_arm(0.05), 1e-3, 'rk4', q0=[0.1, 0.2])
    before = sim.state.copy()
    for duration in (0.0105, 0.0, -0.002, 0.0004):
        with pytest.raises(ValueError, match='whole number'):
            sim.advance(np.zeros(2), duration)
    np.testing.assert_array_equal(sim.state, before)
    assert sim.time == 0.0
    sim.advance(np.zeros(2), 0.011)  # 11 steps: accepted
    assert sim.time == pytest.approx(0.011, abs=1e-15)


def test_simulation_step_must_be_positive():
    """Zero, negative and non-finite steps are refused."""
    for step in (0.0, -1e-3, math.inf, math.nan):
        with pytest.raises(ValueError):
            Simulation(lab_arm(0.0), step)


def test_blow_up_raises_and_keeps_last_finite_state():
    """Explicit Euler, h = 0.1 s, a 1e-6 kg distal link driven by 1e8 N m diverges.

    The distal link's acceleration ~ tau / (m c^2 + I) ~ 4e14 rad/s^2 makes the state
    overflow within a few steps. advance must raise NonFiniteStateError, restore the state
    and time from before the call, and leave the simulation usable.
    """
    model = chain_from_links('light', [rigid_link('a', 'j1', 1.0, 1.0, 0.5, 0.1),
                                       rigid_link('b', 'j2', 1.0, 1e-6, 0.5, 1e-9)],
                             gravity_base=(0.0, -G, 0.0))
    sim = Simulation(model, 0.1, 'euler', q0=[0.1, 0.2])
    sim.advance(np.zeros(2), 0.2)
    before, time_before = sim.state.copy(), sim.time
    with np.errstate(all='ignore'):
        with pytest.raises(NonFiniteStateError):
            sim.advance(np.array([0.0, 1e8]), 2.0)
    assert np.all(np.isfinite(sim.state))
    np.testing.assert_array_equal(sim.state, before)
    assert sim.time == time_before == pytest.approx(0.2)
    sim.advance(np.zeros(2), 0.1)
    assert sim.time == pytest.approx(0.3)


def test_blow_up_through_velocity_overflow_raises_non_finite_state_error():
    """Divergence where the velocities overflow inside the dynamics must be handled the same.

    A 1 kg distal link with 1e-12 kg m^2 of inertia under explicit Euler at h = 0.1 s
    diverges: the rates grow by ~1e2..1e76 per step, so after 8 steps |v| ~ 1e305 and the
    angles ~1e152 (finite, evaluated by cos and sin), and the ninth step overflows the
    rates (inf - inf gives nan). Expected per the advance docstring:
    NonFiniteStateError, with the last finite state and time restored.
    """
    model = chain_from_links('stiff', [
        rigid_link('a', 'j1', 1.0, 0.01, 0.5, 0.001, damping=1.0),
        rigid_link('b', 'j2', 1.0, 1.0, 0.5, 1e-12)])
    sim = Simulation(model, 0.1, 'euler', q0=[0.5, 0.5], v0=[1.0, 1.0])
    with np.errstate(all='ignore'):
        with pytest.raises(NonFiniteStateError):
            sim.advance(np.array([1000.0, 1000.0]), 3.7)
    np.testing.assert_array_equal(sim.state, [0.5, 0.5, 1.0, 1.0])
    assert sim.time == 0.0


def test_reset_restores_initial_state_and_time_zero():
    """reset() brings back (q0, v0), time 0 and zero input after some motion."""
    sim = Simulation(lab_arm(0.05), 1e-3, 'heun', q0=[0.1, -0.2], v0=[0.3, 0.4])
    sim.advance(np.array([1.0, -0.5]), 0.05)
    assert sim.time > 0.0
    assert not np.allclose(sim.state, [0.1, -0.2, 0.3, 0.4])
    sim.reset()
    np.testing.assert_array_equal(sim.q, [0.1, -0.2])
    np.testing.assert_array_equal(sim.v, [0.3, 0.4])
    np.testing.assert_array_equal(sim.input, [0.0, 0.0])
    assert sim.time == 0.0
    assert sim.steps == 0


def test_simulation_matches_free_fall_of_a_pendulum_at_small_angle():
    """Compound pendulum released from rest at small angle: period 2 pi sqrt(J / (m g c)).

    Single link, J = I + m c^2 about the joint, hanging along -y (q = -pi/2). With
    amplitude 1e-3 rad the anharmonic period shift (~theta0^2 / 16 ~ 6e-8) is negligible,
    so after exactly one linear period the angle returns to its start within 1e-8 rad.
    """
    mass, com, inertia = 2.0, 0.3, 0.04
    model = chain_from_links('pendulum', [rigid_link('a', 'j', 0.6, mass, com, inertia)],
                             gravity_base=(0.0, -G, 0.0))
    period = 2 * math.pi * math.sqrt((inertia + mass * com ** 2) / (mass * G * com))
    steps = 2000
    q0 = -math.pi / 2 + 1e-3
    sim = Simulation(model, period / steps, 'rk4', q0=[q0])
    sim.advance(np.zeros(1), period / 2)
    assert sim.q[0] == pytest.approx(-math.pi / 2 - 1e-3, abs=1e-8)  # opposite extreme
    sim.advance(np.zeros(1), period / 2)
    assert sim.q[0] == pytest.approx(q0, abs=1e-8)
    assert sim.v[0] == pytest.approx(0.0, abs=1e-7)
