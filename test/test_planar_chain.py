"""Validation of the rigid planar chain dynamics, the integrators and `Simulation`.

Every expected value is derived in this file from textbook mechanics (closed-form two-link
arm, Lagrange's equations with Jacobians written here, exact ODE solutions), never copied
from numbers the package printed.
"""

import math

import numpy as np
import pytest

from flexible_manipulator.mechanics.integrators import ExplicitRungeKutta, TABLEAUS
from flexible_manipulator.mechanics.planar_chain import (
    kinetic_energy, PlanarChainModel, potential_energy, RigidLink, rnea)
from flexible_manipulator.mechanics.simulation import NonFiniteStateError, Simulation

G = 9.80665


def random_chain(rng, n, gravity_base=(0.0, -G, 0.0), damping=True):
    """Chain of ``n`` links with random physical parameters (lengths 0.2..1 m etc.)."""
    links = []
    for i in range(n):
        length = rng.uniform(0.2, 1.0)
        links.append(RigidLink(
            name=f'link{i}', joint=f'joint{i}', length=length, mass=rng.uniform(0.3, 3.0),
            com=rng.uniform(0.1, 0.9) * length, inertia=rng.uniform(0.005, 0.2),
            damping=rng.uniform(0.05, 0.5) if damping else 0.0))
    return PlanarChainModel(f'chain{n}', links, gravity_base=gravity_base)


# --------------------------------------------------------------------------------------
# Two-link arm: textbook closed form (e.g. Spong, Hutchinson, Vidyasagar, "Robot Modeling
# and Control", section 7.4.1 "Two-link revolute joint arm"), gravity g along -y.
# --------------------------------------------------------------------------------------

def two_link_closed_form(model, q, v, g):
    """Return (M, h) of the two-link planar arm from the textbook formulas."""
    (l1, _), (m1, m2), (c1, c2), (i1, i2), (d1, d2) = (
        model.length, model.mass, model.com, model.inertia, model.damping)
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
        np.testing.assert_allclose(rnea(model, data, q, v, a), mass @ a + bias,
                                   rtol=1e-12, atol=1e-11)


def test_two_link_gravity_sign_in_horizontal_pose():
    """Holding a horizontal arm needs a positive (counter-clockwise) shoulder torque.

    Statics by hand: with q = 0 both links lie along +x and gravity pulls along -y, so the
    shoulder must supply (m1 c1 + m2 (l1 + c2)) g and the elbow m2 c2 g, both positive.
    """
    model = PlanarChainModel('arm', [RigidLink('a', 'j1', 1.0, 2.0, 0.5, 0.1),
                                     RigidLink('b', 'j2', 0.8, 1.0, 0.4, 0.05)],
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
    n = model.nv
    theta = np.cumsum(q)
    positions = np.zeros((n, 2))
    jv = np.zeros((n, 2, n))
    jw = np.zeros((n, n))
    for i in range(n):
        arms = [(model.length[k], theta[k]) for k in range(i)] + [(model.com[i], theta[i])]
        for k, (arm, angle) in enumerate(arms):
            positions[i] += arm * np.array([math.cos(angle), math.sin(angle)])
            # d/dq_j of arm e(theta_k) = arm e_perp(theta_k) for every j <= k.
            jv[i, :, :k + 1] += arm * np.array([[-math.sin(angle)], [math.cos(angle)]])
        jw[i, :i + 1] = 1.0
    return positions, jv, jw


def reference_mass_matrix(model, q):
    """M(q) = sum_i m_i J_v,i^T J_v,i + I_i J_w,i^T J_w,i (kinetic energy = v^T M v / 2)."""
    _, jv, jw = com_kinematics(model, q)
    return sum(model.mass[i] * jv[i].T @ jv[i] + model.inertia[i] * np.outer(jw[i], jw[i])
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
    _, jv, _ = com_kinematics(model, q)
    g = model.gravity_base[:2]
    return -sum(model.mass[i] * jv[i].T @ g for i in range(model.nv))


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
                    + reference_gravity(model, q) + model.damping * v)
        tau = rnea(model, data, q, v, a).copy()
        scale = max(1.0, np.max(np.abs(expected)))
        np.testing.assert_allclose(tau, expected, rtol=0.0, atol=1e-7 * scale)


def test_potential_energy_gradient_is_rnea_gravity():
    """The gradient of potential_energy (central differences) is the static torque g(q).

    rnea(q, 0, 0) without damping must equal dV/dq (principle of virtual work), and both
    must equal -sum m J_v^T g from the hand-written Jacobians.
    """
    rng = np.random.default_rng(7)
    model = random_chain(rng, 3, gravity_base=THREE_LINK_GRAVITY)
    data = model.create_data()
    zero = np.zeros(3)
    for _ in range(4):
        q = rng.uniform(-math.pi, math.pi, 3)
        grad = fd_gradient(lambda x: potential_energy(model, data, x), q)
        static = rnea(model, data, q, zero, zero).copy()
        np.testing.assert_allclose(static, grad, rtol=0.0, atol=1e-7)
        np.testing.assert_allclose(static, reference_gravity(model, q), rtol=1e-12, atol=1e-12)


def test_kinetic_and_potential_energy_from_com_velocities():
    """T = sum (m |J_v v|^2 + I (J_w v)^2) / 2 and V = -sum m g . p_C by direct summation."""
    rng = np.random.default_rng(8)
    model = random_chain(rng, 3, gravity_base=THREE_LINK_GRAVITY)
    data = model.create_data()
    g = np.array(THREE_LINK_GRAVITY[:2])
    for _ in range(4):
        q = rng.uniform(-math.pi, math.pi, 3)
        v = rng.uniform(-3.0, 3.0, 3)
        positions, jv, jw = com_kinematics(model, q)
        kinetic = sum(0.5 * model.mass[i] * np.sum((jv[i] @ v) ** 2)
                      + 0.5 * model.inertia[i] * (jw[i] @ v) ** 2 for i in range(3))
        potential = -sum(model.mass[i] * g @ positions[i] for i in range(3))
        assert kinetic_energy(model, data, q, v) == pytest.approx(kinetic, rel=1e-12)
        assert potential_energy(model, data, q) == pytest.approx(potential, rel=1e-12)


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
        np.testing.assert_allclose(rnea(model, data, q, v, acc), tau, rtol=1e-10, atol=1e-10)


def test_frame_poses_closed_form_kinematics():
    """Joint frames and tool: x_i = sum_{k<i} l_k cos theta_k, y likewise, theta_i = sum q."""
    rng = np.random.default_rng(9)
    model = random_chain(rng, 3)
    data = model.create_data()
    l1, l2, l3 = model.length
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
        np.testing.assert_allclose(model.frame_poses(data, q), expected, rtol=0, atol=1e-14)


# --------------------------------------------------------------------------------------
# Energy behaviour of the integrated motion.
# --------------------------------------------------------------------------------------

def lab_arm(damping):
    """Two-link arm with the parameters of config/models/two_link_rigid.yaml."""
    return PlanarChainModel('arm', [
        RigidLink('upper_arm', 'shoulder', 0.5, 1.2, 0.25, 0.025, damping=damping),
        RigidLink('forearm', 'elbow', 0.4, 0.8, 0.2, 0.010667, damping=damping)],
        gravity_base=(0.0, -G, 0.0))


def energy_history(model, step, duration=5.0, sample=0.01):
    """T + V sampled every ``sample`` s of an unactuated RK4 simulation from a raised pose."""
    sim = Simulation(model, step, 'rk4', q0=[0.3, 1.0], v0=[0.5, -1.0])
    data = model.create_data()
    energies = []
    for _ in range(int(round(duration / sample)) + 1):
        energies.append(kinetic_energy(model, data, sim.q, sim.v)
                        + potential_energy(model, data, sim.q))
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
# Integrators: observed order of convergence on ODEs with known solutions.
# --------------------------------------------------------------------------------------

def _decay(t, x, out):
    out[:] = -x


def _oscillator(t, x, out):
    out[0], out[1] = x[1], -x[0]


def _non_autonomous(t, x, out):
    out[:] = x * math.cos(t)


# name: (right-hand side, x(0), exact x(1))
ODES = {
    'decay': (_decay, [1.0], [math.exp(-1.0)]),                       # x = exp(-t)
    'oscillator': (_oscillator, [1.0, 0.0], [math.cos(1.0), -math.sin(1.0)]),  # cos, -sin
    'non_autonomous': (_non_autonomous, [1.0], [math.exp(math.sin(1.0))]),  # exp(sin t)
}

# Classical orders of the schemes (Hairer, Norsett, Wanner, "Solving ODEs I", II.1).
TEXTBOOK_ORDER = {'euler': 1, 'heun': 2, 'rk3': 3, 'rk4': 4}


def integrate(method, rhs, x0, steps, end=1.0):
    """Integrate from t = 0 to ``end`` with ``steps`` equal steps."""
    stepper = ExplicitRungeKutta(method, len(x0))
    x = np.array(x0, dtype=float)
    h = end / steps
    for k in range(steps):
        stepper.step(rhs, k * h, x, h)
    return x


def test_tableau_orders_are_the_textbook_orders():
    """The orders declared in TABLEAUS are the classical orders of the named schemes."""
    assert {name: tableau[3] for name, tableau in TABLEAUS.items()} == TEXTBOOK_ORDER


@pytest.mark.parametrize('ode', sorted(ODES))
@pytest.mark.parametrize('method', sorted(TABLEAUS))
def test_observed_order_of_convergence(method, ode):
    """log2(err(h) / err(h/2)) at t = 1 is within 0.2 of the tableau's order.

    h = 1/20 and 1/40 are in the asymptotic range for all four schemes yet keep the RK4
    error (~1e-8) far above rounding. The non-autonomous ODE also exercises the nodes c.
    """
    rhs, x0, exact = ODES[ode]
    errors = [np.max(np.abs(integrate(method, rhs, x0, steps) - exact)) for steps in (20, 40)]
    observed = math.log2(errors[0] / errors[1])
    assert abs(observed - TABLEAUS[method][3]) < 0.2


def test_unknown_integrator_is_refused():
    """An unknown method name is a ValueError listing the known ones."""
    with pytest.raises(ValueError, match='rk4'):
        ExplicitRungeKutta('rk45', 2)


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
    model = PlanarChainModel('light', [RigidLink('a', 'j1', 1.0, 1.0, 0.5, 0.1),
                                       RigidLink('b', 'j2', 1.0, 1e-6, 0.5, 1e-9)],
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


def test_blow_up_through_angle_overflow_raises_non_finite_state_error():
    """Divergence where the velocities overflow to +-inf must be handled the same.

    A 1 kg distal link with 1e-12 kg m^2 of inertia under explicit Euler at h = 0.1 s
    diverges; after 8 steps v = (+inf, -inf) with q still finite, the next step makes
    q = (+inf, -inf), and the one after evaluates cos(+inf). Expected per the advance
    docstring: NonFiniteStateError, with the last finite state and time restored.
    """
    model = PlanarChainModel('stiff', [
        RigidLink('a', 'j1', 1.0, 0.01, 0.5, 0.001, damping=1.0),
        RigidLink('b', 'j2', 1.0, 1.0, 0.5, 1e-12)])
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
    model = PlanarChainModel('pendulum', [RigidLink('a', 'j', 0.6, mass, com, inertia)],
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
