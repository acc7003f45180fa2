"""The chain model's contract (`mechanics.model_contract.ChainModel`) on every chain model.

Every chain model file of config/models/ and seeded random mixed chains (rigid links,
floating-frame beams, Cosserat rods and links behind flexible joints, revolute and
prismatic joints, in any order) is
checked against what the contract states, each expected value from mechanics alone:

* sizes: q, v, u, the names, B and the elastic coefficients as the contract gives them;
* M(q) symmetric positive definite (a kinetic energy);
* the equation of motion: M v' + h = B u with v' from ``forward_dynamics``, and
  T = v^T M v / 2;
* h(q, 0) is the gradient of the potential energy (gravity and elastic forces are
  conservative; central differences, fixed base);
* section kinematics: twist = J v; p' and the rotation rate of R along q' = v are J v
  (central differences); accel = J' v, the rate of J(q) v along q' = v at constant v.
"""

import glob
import os

import numpy as np
import pytest

from flexible_manipulator.mechanics.model_contract import ChainModel
from flexible_manipulator.model_config import load_model, model_from_dict

MODELS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'config',
                      'models')
CHAIN_FILES = sorted(f for f in glob.glob(os.path.join(MODELS, '*.yaml'))
                     if 'type: serial_chain' in open(f).read())
STEP = 1e-6                     # central differences: truncation ~1e-12, round-off ~1e-10


def random_chain(seed):
    """A seeded mixed chain: 2 to 4 links, each rigid, a modal beam, a link behind a
    flexible joint or (even seeds) a Cosserat rod."""
    rng = np.random.default_rng(seed)
    kinds = (('rigid', 'beam', 'rod', 'flexible_joint') if seed % 2 == 0
             else ('rigid', 'beam', 'flexible_joint'))
    links = []
    for j in range(int(rng.integers(2, 5))):
        axis = [0.0, 0.0, 0.0]
        axis[int(rng.integers(3))] = 1.0
        joint = {'name': f'j{j}', 'axis': axis, 'damping': float(rng.uniform(0.0, 0.05)),
                 'armature': float(rng.uniform(0.0, 0.01)),
                 'type': 'prismatic' if rng.random() < 0.2 else 'revolute',
                 'rpy': [float(x) for x in rng.uniform(-0.5, 0.5, 3)],
                 'effort_limit': 10.0, 'velocity_limit': 6.0}
        link = {'name': f'link{j}', 'joint': joint, 'length': float(rng.uniform(0.2, 0.5)),
                'mass': float(rng.uniform(0.05, 0.3)),
                'inertia': [1e-4, 1e-4, 1e-4, 0, 0, 0],
                'payload': {'mass': float(rng.uniform(0.0, 0.1)),
                            'inertia': [1e-5, 1e-5, 1e-5, 0, 0, 0]}}
        kind = kinds[int(rng.integers(len(kinds)))]
        if kind == 'beam':
            link['beam'] = {'linear_density': 0.3, 'bending_stiffness': [5.0, 50.0],
                            'modes': [int(rng.integers(1, 3)), int(rng.integers(0, 2))],
                            'damping_ratio': 0.01}
        elif kind == 'rod':
            link['rod'] = {'material': {'density': 1100.0, 'young_modulus': 2e6,
                                        'shear_modulus': 6.667e5},
                           'section': {'shape': 'circle', 'radius': 0.015},
                           'strains': {'bending_y': int(rng.integers(1, 3)),
                                       'bending_z': int(rng.integers(0, 2)),
                                       'torsion': int(rng.integers(0, 2))},
                           'damping_time': 0.01}
        elif kind == 'flexible_joint':
            link['flexible_joint'] = {'stiffness': float(rng.uniform(20.0, 200.0)),
                                      'damping': float(rng.uniform(0.0, 0.5)),
                                      'rotor_inertia': float(rng.uniform(0.005, 0.05))}
        links.append(link)
    return model_from_dict({'name': f'random{seed}', 'type': 'serial_chain',
                            'gravity': [0.0, 0.0, -9.80665], 'links': links})


def models():
    """Every chain model file, then the random chains (ids name them)."""
    return ([pytest.param(path, id=os.path.basename(path)) for path in CHAIN_FILES]
            + [pytest.param(seed, id=f'random{seed}') for seed in range(8)])


@pytest.fixture(params=models())
def model(request):
    """The model of a file or of a seed."""
    source = request.param
    return load_model(source) if isinstance(source, str) else random_chain(source)


def state(model, seed=3):
    """A random state: q near neutral (a unit quaternion kept), v and u of order one."""
    rng = np.random.default_rng(seed)
    q = model.neutral_configuration()
    chain = model.nv if model.nq == model.nv else model.nv - 6
    q[:chain] += 0.2 * rng.standard_normal(chain)
    return q, rng.standard_normal(model.nv), rng.standard_normal(model.nu)


def test_sizes_and_names_are_those_of_the_contract(model):
    """The attributes and what the methods return have the contract's sizes."""
    assert isinstance(model, ChainModel)
    n = model.n_joints
    assert model.nq in (model.nv, model.nv + 1) and model.nu <= n <= model.nv
    chain = model.nv if model.nq == model.nv else model.nv - 6
    assert len(model.coordinate_names) == len(set(model.coordinate_names)) == chain
    assert list(model.coordinate_names[:n]) == list(model.joint_names)
    assert isinstance(model.coordinate_names, tuple) and isinstance(model.joint_names, tuple)
    if model.links is not None:         # from a file: a joint coordinate is the joint's name
        assert model.joint_names == tuple(link.joint.name for link in model.links
                                          if link.joint.type != 'fixed')
    assert model.input_matrix().shape == (model.nv, model.nu)
    stiffness, damping = model.elastic_coefficients()
    assert stiffness.shape == damping.shape == (model.nv,)
    assert np.all(stiffness[:n] == 0.0) and np.all(damping >= 0.0)
    assert np.shape(model.effort_limit) == (model.nu,)
    assert np.shape(model.velocity_limit) == (n,)
    assert model.neutral_configuration().shape == (model.nq,)


def test_the_mass_matrix_is_a_kinetic_energy(model):
    """M symmetric positive definite; T = v^T M v / 2."""
    data = model.create_data()
    q, v, _ = state(model)
    M = model.mass_matrix(data, q)
    assert np.allclose(M, M.T, rtol=0.0, atol=1e-12 * np.max(np.abs(M)))
    assert np.min(np.linalg.eigvalsh(M)) > 0.0
    assert model.kinetic_energy(data, q, v) == pytest.approx(0.5 * v @ M @ v, rel=1e-12)


def test_mass_and_bias_in_one_call_are_the_two_calls(model):
    """mass_and_bias = (mass_matrix, bias_forces) at the same state, into ``out`` arrays
    too (a tick's one call; M does not depend on v, so one walk serves both)."""
    data = model.create_data()
    q, v, _ = state(model)
    M, h = model.mass_matrix(data, q), model.bias_forces(data, q, v)
    mass, bias = np.full_like(M, np.nan), np.full_like(h, np.nan)
    assert all(a is b for a, b in zip(model.mass_and_bias(data, q, v, mass, bias),
                                      (mass, bias)))
    scale = np.max(np.abs(M))
    np.testing.assert_allclose(mass, M, rtol=0.0, atol=1e-14 * scale)
    np.testing.assert_allclose(bias, h, rtol=0.0, atol=1e-13 * (1.0 + np.max(np.abs(h))))
    again = model.mass_and_bias(data, q, v)
    np.testing.assert_array_equal(again[0], mass)
    np.testing.assert_array_equal(again[1], bias)


def test_inverse_dynamics_is_the_equation_of_motion(model):
    """rnea(q, v, a) = M(q) a + h(q, v) (the contract's definition), into ``out`` too; with
    a = forward_dynamics(q, v, u) it returns B u."""
    data = model.create_data()
    q, v, u = state(model, seed=3)
    a = np.random.default_rng(7).standard_normal(model.nv)
    M, h = (x.copy() for x in model.mass_and_bias(data, q, v))
    expected = M @ a + h
    out = np.full(model.nv, np.nan)
    assert model.rnea(data, q, v, a, out) is out
    np.testing.assert_allclose(out, expected, rtol=0.0,
                               atol=1e-12 * (1.0 + np.max(np.abs(expected))))
    acceleration = model.forward_dynamics(data, q, v, u).copy()
    force = model.input_matrix() @ u
    np.testing.assert_allclose(model.rnea(data, q, v, acceleration), force, rtol=0.0,
                               atol=1e-9 * (1.0 + np.max(np.abs(h))))


def test_forward_dynamics_solves_the_equation_of_motion(model):
    """M(q) v' + h(q, v) = B u with v' = forward_dynamics(q, v, u)."""
    data = model.create_data()
    q, v, u = state(model)
    acceleration = model.forward_dynamics(data, q, v, u)
    M = model.mass_matrix(data, q)
    force = model.input_matrix() @ u - model.bias_forces(data, q, v)
    assert np.allclose(M @ acceleration, force, rtol=0.0,
                       atol=1e-9 * (1.0 + np.max(np.abs(force))))


@pytest.mark.parametrize('algorithm', ['composite', 'articulated'])
def test_both_forward_dynamics_algorithms_solve_the_equation_of_motion(model, algorithm):
    """M(q) v' + h(q, v) = B u for the composite (M, h, Cholesky) and the O(n)
    articulated-body forward dynamics alike, on every link kind and base."""
    data = model.create_data()
    q, v, u = state(model, seed=5)
    acceleration = getattr(model, f'{algorithm}_forward_dynamics')(data, q, v, u).copy()
    M = model.mass_matrix(data, q)
    force = model.input_matrix() @ u - model.bias_forces(data, q, v)
    assert np.allclose(M @ acceleration, force, rtol=0.0,
                       atol=1e-9 * (1.0 + np.max(np.abs(force))))


def test_the_static_forces_are_the_gradient_of_the_potential(model):
    """h(q, 0) = dV/dq: gravity and elastic forces derive from the potential energy
    (central differences of step 1e-6; fixed base, where q and v coincide)."""
    if model.nq != model.nv:
        pytest.skip('a floating base: q holds a quaternion (test_cosserat_mixed.py checks '
                    'its Lagrangian form)')
    data = model.create_data()
    q, _, _ = state(model)
    static = model.bias_forces(data, q, np.zeros(model.nv))
    gradient = np.zeros(model.nv)
    for i in range(model.nv):
        step = np.zeros(model.nv)
        step[i] = STEP
        gradient[i] = (model.potential_energy(data, q + step)
                       - model.potential_energy(data, q - step)) / (2.0 * STEP)
    assert np.allclose(static, gradient, rtol=0.0,
                       atol=1e-6 * (1.0 + np.max(np.abs(static))))


def test_section_kinematics_are_the_rates_of_the_section_pose(model):
    """At mid-length of every link: twist = J v; (p(q + s v) - p(q - s v)) / 2s = J_lin v
    and the rotation rate of R, vee(R' R^T), is J_ang v; the rate of J(q) v along q' = v
    is accel (fixed base)."""
    if model.nq != model.nv:
        pytest.skip('a floating base: q holds a quaternion')
    data = model.create_data()
    q, v, _ = state(model)
    for link in range(model.n_joints):
        length = model.links[link].length
        here = model.section_kinematics(data, q, v, link, 0.5 * length)
        R, p, J = here.R.copy(), here.p.copy(), here.J.copy()
        twist, accel = here.twist.copy(), here.accel.copy()
        assert np.allclose(twist, J @ v, rtol=0.0, atol=1e-12 * (1.0 + np.max(np.abs(twist))))
        ahead = model.section_kinematics(data, q + STEP * v, v, link, 0.5 * length)
        R1, p1, twist1 = ahead.R.copy(), ahead.p.copy(), ahead.twist.copy()
        behind = model.section_kinematics(data, q - STEP * v, v, link, 0.5 * length)
        rate = (R1 - behind.R) / (2.0 * STEP) @ R.T
        omega = 0.5 * np.array([rate[2, 1] - rate[1, 2], rate[0, 2] - rate[2, 0],
                                rate[1, 0] - rate[0, 1]])
        scale = 1.0 + np.max(np.abs(twist))
        assert np.allclose((p1 - behind.p) / (2.0 * STEP), twist[3:], rtol=0.0,
                           atol=1e-6 * scale)
        assert np.allclose(omega, twist[:3], rtol=0.0, atol=1e-6 * scale)
        assert np.allclose((twist1 - behind.twist) / (2.0 * STEP), accel, rtol=0.0,
                           atol=1e-5 * (1.0 + np.max(np.abs(accel))))
        assert np.allclose(R @ R.T, np.eye(3), atol=1e-12) and np.all(np.isfinite(p))


def test_sections_frames_and_modes_are_one_api(model):
    """section_pose and section_jacobian are section_kinematics' R, p and J (one frame
    convention: the base frame, the world's with a floating base); frame_placements holds
    the sections at x = 0 and x = length of every link; modes_of counts and names each
    link's elastic coordinates as mode_names does (``<link>_<name>``)."""
    data = model.create_data()
    q, v, _ = state(model)
    links = model.frame_placements(data, q)
    assert [np.shape(a) for a in links] == [(len(model.link_names), 3, 3),
                                            (len(model.link_names), 3)] * 2
    for link, name in enumerate(model.link_names):
        length = model.links[link].length
        for x, R0, p0 in ((0.0, links[0], links[1]), (length, links[2], links[3])):
            here = model.section_kinematics(data, q, v, link, x)
            R, p, J = here.R.copy(), here.p.copy(), here.J.copy()
            assert np.allclose(R0[link], R, rtol=0.0, atol=1e-12)
            assert np.allclose(p0[link], p, rtol=0.0, atol=1e-12)
            pose = model.section_pose(data, q, link, x)
            assert np.allclose(pose[0], R, rtol=0.0, atol=1e-14)
            assert np.allclose(pose[1], p, rtol=0.0, atol=1e-14)
            assert np.allclose(model.section_jacobian(data, q, link, x), J, rtol=0.0,
                               atol=1e-13 * (1.0 + np.max(np.abs(J))))
    names = [f'{name}_{mode}' for link, name in enumerate(model.link_names)
             for mode in model.modes_of(link)[1]]
    assert tuple(names) == tuple(model.mode_names)
    assert sum(model.modes_of(link)[0] for link in range(len(model.link_names))) == \
        len(model.mode_names)


def test_a_cosserat_chain_built_from_classes_names_its_joints_as_told():
    """One set of names (a joint coordinate named after the joint from a file is named
    the same from the classes): a `LinkPart`'s ``joint_name`` names its
    coordinate; without one it is ``<link>_joint``."""
    from flexible_manipulator.mechanics.model.chain import Chain
    from flexible_manipulator.mechanics.model.link_part import LinkPart
    named = Chain([LinkPart('upper', None, length=0.3, joint_name='shoulder'),
                   LinkPart('fore', None, length=0.2)])
    assert named.joint_names == ('shoulder', 'fore_joint')
    assert named.coordinate_names == ('shoulder', 'fore_joint')
