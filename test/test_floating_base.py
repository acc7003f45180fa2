"""A free-floating base: momentum conservation and the Lie-group (RKMK) integration.

Expected values come from mechanics, not from the code: without gravity the joint efforts
are internal, so the momentum of the whole system (angular about the world origin, linear)
is constant; the attitude of the base lives on SO(3), so its quaternion keeps unit norm to
round-off when integrated on the group (a naive q' = q w / 2 with RK4 drifts off it); and
an RK scheme keeps its classical order on the group (Munthe-Kaas 1998), observed against a
run with a 16 times smaller step.
"""

import math
import os

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from flexible_manipulator.mechanics import group_kernels, lie
from flexible_manipulator.mechanics.link_description import Beam, Joint, Link, RigidBody
from flexible_manipulator.mechanics.links import chain_from_links
from flexible_manipulator.mechanics.simulation import Simulation
from flexible_manipulator.model_config import load_model, model_from_dict

MODELS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'config',
                      'models')


def spacecraft(gravity=(0.0, 0.0, 0.0), damping_ratio=0.01):
    """A satellite body carrying a flexible two-link arm (a spatial joint axis and modes)."""
    hub = RigidBody(2.0, (0.0, 0.0, 0.0), ((0.02, 0, 0), (0, 0.02, 0), (0, 0, 0.02)))
    links = [Link('boom', Joint('j1', axis=(0, 0, 1), xyz=(0.1, 0.0, 0.0)), 0.8, hub,
                  Beam(0.5, (20.0, 30.0), (2, 1), damping_ratio=damping_ratio),
                  RigidBody(0.3, (0.0, 0.0, 0.0), ((1e-3, 0, 0), (0, 1e-3, 0), (0, 0, 1e-3)))),
             Link('arm', Joint('j2', axis=(0, 1, 0)), 0.6, RigidBody(0.5),
                  Beam(0.4, (15.0, 15.0), (2, 0), damping_ratio=damping_ratio))]
    inertia = ((2.0, 0.1, 0.0), (0.1, 3.0, -0.2), (0.0, -0.2, 2.5))
    base = RigidBody(40.0, (0.02, -0.01, 0.03), inertia)
    return chain_from_links('spacecraft', links, gravity_base=gravity, floating_base=base)


def initial_state(model, seed=0):
    rng = np.random.default_rng(seed)
    q = model.neutral_configuration()
    q[:model.n_joints] = rng.uniform(-1.0, 1.0, model.n_joints)
    q[model.n_joints:model.nv - 6] = rng.normal(0.0, 1e-4, model.n_modes)
    axis = rng.normal(size=3)
    angle = 0.7
    b = model.nv - 6
    q[b + 3:b + 7] = np.concatenate(
        [[math.cos(angle / 2)], math.sin(angle / 2) * axis / np.linalg.norm(axis)])
    v = rng.normal(0.0, 0.5, model.nv)
    v[model.n_joints:model.nv - 6] *= 1e-3   # gentle vibration: the top mode is 375 rad/s
    return q, v


def momentum_drift(model, q0, v0, step):
    """Max |h(t) - h(0)| of the world momentum over 2 s of sinusoidal joint torques, and the
    change of kinetic energy."""
    sim = Simulation(model, step, 'rk4', q0, v0)
    data = model.create_data()
    h0 = model.base_momentum(data, sim.q, sim.v).copy()
    energy0 = model.kinetic_energy(data, sim.q, sim.v)
    drift = 0.0
    for k in range(200):
        t = k * 0.01
        sim.advance([0.5 * math.sin(3.0 * t), -0.3 * math.cos(5.0 * t)], 0.01)
        drift = max(drift, np.max(np.abs(model.base_momentum(data, sim.q, sim.v) - h0)))
    return drift, np.max(np.abs(h0)), model.kinetic_energy(data, sim.q, sim.v) - energy0


def test_momentum_is_conserved_under_internal_joint_torques():
    """Zero gravity, modal damping on, joints driven by sinusoidal torques for 2 s.

    The world momentum (L_O, P) is constant up to the integration error: below 1e-9 of
    its size at h = 0.1 ms, and that residual is truncation error, falling ~16x when h
    halves (rk4). Energy is not constant (the motors and the damping exchange it), so the
    test cannot pass on a frozen state.
    """
    model = spacecraft()
    q0, v0 = initial_state(model)
    coarse, _, _ = momentum_drift(model, q0, v0, 2e-4)
    fine, scale, energy_change = momentum_drift(model, q0, v0, 1e-4)
    assert fine < 1e-9 * scale
    assert coarse / fine > 12.0
    assert abs(energy_change) > 1e-3


def energy_change(gravity, seed, duration):
    """Free motion (no damping, no input) for ``duration`` s with rk4 at 0.2 ms.

    Returns (|E(t) - E(0)|, E(0), base height change) with E = T + V.
    """
    model = spacecraft(gravity=gravity, damping_ratio=0.0)
    q0, v0 = initial_state(model, seed)
    sim = Simulation(model, 2e-4, 'rk4', q0, v0)
    data = model.create_data()

    def energy():
        return model.kinetic_energy(data, sim.q, sim.v) + model.potential_energy(data, sim.q)
    e0 = energy()
    sim.advance([0.0, 0.0], duration)
    b = model.nv - 6
    return abs(energy() - e0), e0, sim.q[b + 2] - q0[b + 2]


def test_energy_is_conserved_without_input_and_damping():
    """Zero gravity, no damping, no input: T + V constant to 1e-9 relative over 2 s."""
    change, e0, _ = energy_change((0.0, 0.0, 0.0), 1, 2.0)
    assert change < 1e-9 * e0


def test_energy_with_gravity_includes_the_base_height():
    """With gravity the base falls: T + V (V with -m_total g . p) stays constant over 1 s."""
    change, e0, fall = energy_change((0.0, 0.0, -9.81), 2, 1.0)
    assert fall < -3.0        # about g t^2 / 2 = 4.9 m, less the initial upward velocity
    assert change < 1e-8 * max(1.0, abs(e0))


def attitude_after(model, q0, v0, step, method, duration=0.5):
    sim = Simulation(model, step, method, q0, v0)
    sim.advance([0.0, 0.0], duration)
    b = model.nv - 6
    return sim.q[b + 3:b + 7].copy(), sim.state.copy()


@pytest.mark.parametrize('method, order',
                         [('rk4', 4), ('rk3', 3), ('heun', 2), ('rosenbrock2', 2),
                          ('rosenbrock3', 3)])
def test_integration_on_the_group_keeps_the_order(method, order):
    """log2 of the error ratio for h and h/2 is the scheme's order (within 0.3).

    The spacecraft's rigid twin tumbling fast (|w| ~ 3 rad/s), so that the rotation
    increments matter (without the dexpinv correction RKMK drops to order 2). Reference: the
    same scheme with h/16; the error is the full state difference. (With the flexible arm,
    the 375 rad/s mode's phase error dominates the second-order schemes at these steps.)
    """
    model = spacecraft(damping_ratio=0.0).rigid_twin()
    q0, v0 = initial_state(model, 3)
    b = model.nv - 6
    v0[b:b + 3] = [2.0, -1.5, 1.0]
    h = 5e-2 if order > 2 else 1e-2
    reference = attitude_after(model, q0, v0, h / 16, method)[1]
    errors = [np.max(np.abs(attitude_after(model, q0, v0, step, method)[1] - reference))
              for step in (h, h / 2)]
    assert abs(math.log2(errors[0] / errors[1]) - order) < 0.3


def test_quaternion_stays_on_the_group():
    """After 20 000 rk4 steps of a tumbling base, | |q| - 1 | is at round-off (< 1e-13)."""
    model = spacecraft(damping_ratio=0.0)
    q0, v0 = initial_state(model, 4)
    b = model.nv - 6
    v0[b:b + 3] = [3.0, 2.0, -1.0]
    quat, _ = attitude_after(model, q0, v0, 1e-4, 'rk4', duration=2.0)
    assert abs(np.linalg.norm(quat) - 1.0) < 1e-13


def test_floating_base_from_yaml_and_refusals():
    """base.floating builds a free-floating chain; a base body on a fixed base is refused."""
    spec = {'name': 'float', 'type': 'serial_chain', 'gravity': [0, 0, 0],
            'base': {'floating': True, 'mass': 10.0, 'inertia': [1, 1, 1, 0, 0, 0],
                     'xyz': [1.0, 2.0, 3.0]},
            'links': [{'name': 'l1', 'length': 0.5, 'mass': 1.0,
                       'inertia': [0.01, 0.01, 0.01, 0, 0, 0],
                       'joint': {'name': 'j1', 'effort_limit': 5.0, 'velocity_limit': 2.0}}]}
    model = model_from_dict(spec)
    assert (model.nq, model.nv, model.nu) == (8, 7, 1)
    np.testing.assert_allclose(model.neutral_configuration(), [0, 1, 2, 3, 1, 0, 0, 0])
    spec['base'] = {'mass': 10.0}
    with pytest.raises(ValueError, match='base.mass'):
        model_from_dict(spec)
    spec['base'] = {'floating': 'yes'}
    with pytest.raises(ValueError, match='base.floating'):
        model_from_dict(spec)


def test_fixed_base_model_has_no_momentum_law():
    """base_momentum refuses a fixed-base model (its momentum is not conserved)."""
    model = load_model(os.path.join(MODELS, 'two_link_rigid.yaml'))
    with pytest.raises(ValueError, match='fixed base'):
        model.base_momentum(model.create_data(), np.zeros(2), np.zeros(2))


@pytest.mark.parametrize('angle', [0.0, 1e-9, 3e-3, 0.05, 0.9, 2.5])
def test_compiled_group_maps_equal_the_lie_reference(angle):
    """quat_exp_multiply and so3_dexpinv equal lie.quat_exp_update and so3_right_jacobian_inv.

    Both branches (series below 1e-2 rad, closed form above) are exercised; tolerance 1e-15.
    """
    rng = np.random.default_rng(int(angle * 1e3) + 1)
    axis = rng.normal(size=3)
    theta = angle * axis / np.linalg.norm(axis)
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    out = np.zeros(4)
    group_kernels.quat_exp_multiply(q, theta, out)
    np.testing.assert_allclose(out, lie.quat_exp_update(q, theta, 1.0), rtol=0, atol=1e-15)
    k = rng.normal(size=3)
    expected = lie.so3_right_jacobian_inv(theta) @ k
    group_kernels.so3_dexpinv(theta, k)
    np.testing.assert_allclose(k, expected, rtol=0, atol=1e-15)
    R = np.zeros((3, 3))
    group_kernels.quat_to_matrix(q, R)
    np.testing.assert_allclose(R, lie.matrix_from_quat(q), rtol=0, atol=1e-15)


def test_compiled_matrix_to_quat_against_scipy():
    """matrix_to_quat equals scipy's Rotation.as_quat ((x, y, z, w) reordered, w >= 0).

    Random rotations, plus near-pi rotations about each axis and a tiny one, so that each of
    the four branches of Shepperd's method is taken; tolerance 1e-14.
    """
    rng = np.random.default_rng(16)
    rotations = list(Rotation.random(50, random_state=rng))
    rotations += [Rotation.from_rotvec((math.pi - 1e-9) * e) for e in np.eye(3)]
    rotations += [Rotation.from_rotvec(np.array([1e-10, -2e-10, 3e-10]))]
    q = np.zeros(4)
    for rot in rotations:
        xyzw = rot.as_quat()
        expected = np.roll(xyzw, 1) * (1.0 if xyzw[3] >= 0 else -1.0)
        group_kernels.matrix_to_quat(rot.as_matrix(), q)
        np.testing.assert_allclose(q, expected, rtol=0, atol=1e-14)
