"""Mixed chains: Cosserat rods, floating-frame beams and rigid links, on a fixed or floating base.

References, none from this code's own output: the NumPy reference chain
(``mechanics.reference.cosserat_chain``, body by body), which the compiled walk must
reproduce to round-off on beams and rigid links too (the walk on those is checked against
Pinocchio in test_chain_pinocchio.py and closed forms in test_flexible_validation.py);
Lagrange's
equations (finite differences of M and of the potential energy); conservation of the
world momentum under internal forces and of energy without damping.
"""

import math
import os

import numpy as np
import pytest
import yaml

from flexible_manipulator.mechanics import lie
from flexible_manipulator.mechanics.link_description import Beam, Joint, Link, RigidBody
from flexible_manipulator.mechanics.links import chain_from_links
from flexible_manipulator.mechanics.model.chain import Chain
from flexible_manipulator.mechanics.simulation import Simulation
from flexible_manipulator.model_config import load_model, model_from_dict
from flexible_manipulator.mechanics.reference import cosserat_chain as reference_chain

MODELS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'config',
                      'models')
SATELLITE = os.path.join(MODELS, 'satellite_soft_boom.yaml')
INERTIA = ((1e-3, 0.0, 0.0), (0.0, 1e-3, 0.0), (0.0, 0.0, 1e-3))
BASE = RigidBody(40.0, (0.02, -0.01, 0.03),
                 ((2.0, 0.1, 0.0), (0.1, 3.0, -0.2), (0.0, -0.2, 2.5)))


def beam_links():
    """Floating-frame and rigid links: modes in both planes, a turned joint, a prismatic
    joint, a beam without modes (a rigid rod), hubs off the joint axis and payloads."""
    return [Link('boom', Joint('j1', axis=(0, 0, 1), xyz=(0.1, 0.0, 0.0), damping=0.1,
                               armature=0.01), 0.8,
                 RigidBody(2.0, (0.01, 0.0, 0.0), INERTIA),
                 Beam(0.5, (20.0, 30.0), (2, 1), damping_ratio=0.02),
                 RigidBody(0.3, (0.01, 0.0, 0.0), INERTIA)),
            Link('arm', Joint('j2', axis=(0, 1, 0), rpy=(0.1, 0.2, 0.3)), 0.6, RigidBody(0.5),
                 Beam(0.4, (15.0, 15.0), (2, 0), damping_ratio=0.01)),
            Link('slide', Joint('j3', type='prismatic', axis=(1, 0, 0)), 0.3,
                 RigidBody(0.2, (0.1, 0.0, 0.0), INERTIA)),
            Link('stub', Joint('j4', axis=(0, 0, 1)), 0.4, RigidBody(0.1),
                 Beam(0.3, (5.0, 5.0), (0, 0)))]


def random_state(model, seed, scale=0.3):
    """Random coordinates (a unit quaternion for a floating base) and velocities."""
    rng = np.random.default_rng(seed)
    q = model.neutral_configuration()
    chain = model.nv - 6 if model.floating_base is not None else model.nv
    q[:chain] += scale * rng.normal(size=chain)
    if model.floating_base is not None:
        quat = rng.normal(size=4)
        q[chain:chain + 3] = rng.normal(size=3)
        q[chain + 3:] = quat / np.linalg.norm(quat)
    return q, rng.normal(size=model.nv), rng.normal(size=model.nu)


@pytest.mark.parametrize('floating', [False, True])
@pytest.mark.parametrize('stiffening', [True, False])
def test_beam_and_rigid_links_equal_the_floating_frame_chain(floating, stiffening):
    """A chain of floating-frame and rigid links, built from a model's links either way
    (`chain_from_links`, `Chain.from_links`): the compiled walk's M and h equal the
    NumPy reference's, and v', energy, tip frames and sections agree, to round-off."""
    base = BASE if floating else None
    pose = dict(base_xyz=(0.1, 0.2, 0.3), base_rpy=(0.3, 0.2, 0.1))
    gravity = (0.0, -3.0, -9.81)
    serial = chain_from_links('arm', beam_links(), gravity_base=gravity, floating_base=base,
                              geometric_stiffening=stiffening, **pose)
    mixed = Chain.from_links('arm', beam_links(), gravity, floating_base=base,
                             geometric_stiffening=stiffening, **pose)
    assert mixed.coordinate_names == serial.coordinate_names and mixed.nq == serial.nq
    np.testing.assert_allclose(mixed.neutral_configuration(), serial.neutral_configuration(),
                               atol=1e-15)
    sdata, mdata = serial.create_data(), mixed.create_data()
    for seed in range(3):
        q, v, u = random_state(serial, seed)
        mass = serial.mass_matrix(sdata, q)
        bias = serial.bias_forces(sdata, q, v)
        acceleration = serial.forward_dynamics(sdata, q, v, u)
        for M in (reference_chain.mass_matrix(mixed, q), mixed.mass_matrix(mdata, q)):
            np.testing.assert_allclose(M, mass, atol=1e-13 * np.abs(mass).max())
        for h in (reference_chain.bias_forces(mixed, q, v), mixed.bias_forces(mdata, q, v)):
            np.testing.assert_allclose(h, bias, atol=1e-13 * np.abs(bias).max())
        np.testing.assert_allclose(mixed.forward_dynamics(mdata, q, v, u), acceleration,
                                   atol=1e-11 * np.abs(acceleration).max())
        assert mixed.potential_energy(mdata, q) == pytest.approx(
            serial.potential_energy(sdata, q), rel=1e-13)
        for j in (0, 1):
            R, p = serial.section_pose(sdata, q, j, serial.links[j].length)
            tip = reference_chain.section_pose(mixed, q, j, serial.links[j].length)
            np.testing.assert_allclose(tip[:3, :3], R, atol=1e-14)   # the world's axes
            np.testing.assert_allclose(tip[:3, 3], p, atol=1e-14)
            for x in (0.0, 0.5 * serial.links[j].length):
                ours, theirs = (model.section_kinematics(data, q, v, j, x)
                                for model, data in ((mixed, mdata), (serial, sdata)))
                for a, b in zip(ours, theirs):
                    np.testing.assert_allclose(a, b, atol=1e-12 * (1 + np.abs(b).max()))
            for a, b in zip(mixed.frame_placements(mdata, q), serial.frame_placements(sdata, q)):
                np.testing.assert_allclose(a, b, atol=1e-13)


def satellite(damped=True):
    """config/models/satellite_soft_boom.yaml, without its damping if not ``damped``."""
    spec = yaml.safe_load(open(SATELLITE))
    if not damped:
        for link in spec['links']:
            link['joint']['damping'] = 0.0
            for part, key in (('rod', 'damping_time'), ('beam', 'damping_ratio')):
                if part in link:
                    link[part][key] = 0.0
    return model_from_dict(spec)


def test_the_satellite_file_is_one_mixed_chain_on_a_floating_base():
    """The model file builds a rod, a beam and a rigid link on a free-floating base: the
    coordinates are named by link, strain and mode, and the base's pose comes last."""
    model = load_model(SATELLITE)
    assert model.kind == 'serial_chain' and model.floating_base.mass == 40.0
    assert model.joint_names == ('slew', 'elbow', 'wrist')
    assert model.mode_names[:3] == ('boom_torsion_0', 'boom_torsion_1', 'boom_bending_y_0')
    assert model.mode_names[-4:] == ('arm_y1', 'arm_y2', 'arm_z1', 'arm_z2')
    assert (model.nq, model.nv) == (3 + 10 + 4 + 7, 3 + 10 + 4 + 6)
    np.testing.assert_array_equal(model.neutral_configuration()[-4:], [1.0, 0.0, 0.0, 0.0])


def test_a_mixed_chain_on_a_floating_base_is_lagrangian():
    """Kernels = reference; Jacobians = pose derivatives; velocity terms = M' v - 1/2
    d(v^T M v)/dq and gravity = dU/dq on the chain's coordinates (the base's six by the
    exponential map in body axes)."""
    model = satellite()
    model.gravity = np.array([0.5, -2.0, -9.81])     # the file's is zero: make it count
    model.arrays.gravity[:] = model.gravity         # in place: the kernels' table points there
    data = model.create_data()
    q, v, u = random_state(model, 5)
    M = reference_chain.mass_matrix(model, q)
    np.testing.assert_allclose(model.mass_matrix(data, q), M, atol=1e-13 * np.abs(M).max())
    h = reference_chain.bias_forces(model, q, v)
    np.testing.assert_allclose(model.bias_forces(data, q, v), h, atol=1e-12 * np.abs(h).max())
    np.testing.assert_allclose(model.forward_dynamics(data, q, v, u),
                               reference_chain.forward_dynamics(model, q, v, u), rtol=1e-9,
                               atol=1e-9)

    def moved(q, step):           # q "+" step: chain coordinates add, the base on SE(3)
        out = q.copy()
        b = model.nv - 6
        out[:b] += step[:b]
        pose = model.base_pose(q) @ lie.se3_exp(step[b:])
        out[b:b + 3] = pose[:3, 3]
        out[b + 3:] = lie.quat_from_matrix(pose[:3, :3])
        return out
    eps = 1e-6
    for j, X in [(0, 0.5), (1, 0.6), (2, 0.1)]:
        def pose(q, j, X):
            return reference_chain.section_pose(model, q, j, X)
        rate = (pose(moved(q, eps * v), j, X) - pose(moved(q, -eps * v), j, X))
        twist = lie.se3_vee(np.linalg.inv(pose(q, j, X)) @ rate / (2 * eps))
        np.testing.assert_allclose(reference_chain.section_jacobian(model, q, j, X) @ v, twist,
                                   atol=1e-7)
    unit = np.eye(model.nv)
    chain = model.nv - 6
    potential = np.array([(model.potential_energy(data, moved(q, 1e-5 * e))
                           - model.potential_energy(data, moved(q, -1e-5 * e))) / 2e-5
                          for e in unit])
    elastic = model.stiffness @ model._shape(q)
    gravity = reference_chain.bias_forces(model, q, np.zeros(model.nv)) - elastic
    np.testing.assert_allclose(gravity, potential - elastic,
                               atol=1e-6 * np.abs(gravity).max())
    m_rate = (reference_chain.mass_matrix(model, moved(q, eps * v))
              - reference_chain.mass_matrix(model, moved(q, -eps * v))) / (2 * eps)
    gradient = np.array([(v @ reference_chain.mass_matrix(model, moved(q, eps * e)) @ v
                          - v @ reference_chain.mass_matrix(model, moved(q, -eps * e)) @ v)
                         / (2 * eps)
                         for e in unit[:chain]])
    velocity_terms = (reference_chain.bias_forces(model, q, v, gravity=False) - elastic
                      - model.damping @ v)
    np.testing.assert_allclose(velocity_terms[:chain], (m_rate @ v)[:chain] - 0.5 * gradient,
                               atol=1e-6 * np.abs(velocity_terms).max())


def slew(model, step, duration=1.0):
    """The satellite slewing its boom and arm by joint torques (internal forces), rk4."""
    q0, v0 = model.neutral_configuration(), np.zeros(model.nv)
    v0[-6:] = [0.05, -0.1, 0.2, 0.01, 0.02, 0.0]
    sim = Simulation(model, step, 'rk4', q0, v0)
    data = model.create_data()
    p0 = model.base_momentum(data, sim.q, sim.v).copy()
    drift, bend = 0.0, 0.0
    for k in range(int(round(duration / 0.01))):
        t = 0.01 * k
        sim.advance([2.0 * math.sin(4.0 * t), -0.5 * math.cos(5.0 * t), 0.1], 0.01)
        drift = max(drift, np.max(np.abs(model.base_momentum(data, sim.q, sim.v) - p0)))
        bend = max(bend, np.max(np.abs(sim.q[5:13])))
    return drift, np.max(np.abs(p0)), bend, sim


def test_a_floating_mixed_chain_conserves_momentum_under_joint_torques():
    """Joint torques are internal: the world momentum (angular about the origin, linear)
    keeps its value to ~1e-9 of its size over 1 s of slewing, and the rk4 residual falls
    by ~2^4 when the step is halved (a discretization error, not a modelling one), while
    the boom bends by large curvatures (> 0.5 rad/m)."""
    model = satellite()
    drift, size, bend, _ = slew(model, 2e-4)
    finer = slew(model, 1e-4)[0]
    assert bend > 0.5
    assert drift < 1e-8 * size
    assert drift / finer > 8.0


def test_a_floating_mixed_chain_conserves_energy_without_damping():
    """Without damping or input, T + U of the tumbling, vibrating satellite stays constant."""
    model = satellite(damped=False)
    q0, v0 = model.neutral_configuration(), np.zeros(model.nv)
    v0[:3] = [1.0, -0.5, 2.0]
    v0[-6:] = [0.3, -0.2, 0.4, 0.1, 0.0, 0.05]
    sim, data = Simulation(model, 1e-4, 'rk4', q0, v0), model.create_data()

    def energy():
        return model.kinetic_energy(data, sim.q, sim.v) + model.potential_energy(data, sim.q)
    e0, change = energy(), 0.0
    for _ in range(50):
        sim.advance(np.zeros(3), 0.01)
        change = max(change, abs(energy() - e0))
    assert np.max(np.abs(sim.q[3:17])) > 0.05        # the links do bend
    assert change < 1e-8 * e0


def mixed_arm():
    """A fixed-base mixed chain: a Cosserat rod (all six strains), a floating-frame beam
    and a rigid link, each with its joint (revolute about three axes, prismatic)."""
    spec = yaml.safe_load(open(SATELLITE))
    del spec['base']['floating'], spec['base']['mass'], spec['base']['com']
    del spec['base']['inertia']
    spec['gravity'] = [0.0, 0.0, -9.81]
    spec['links'][0]['rod']['strains'] = {'torsion': 1, 'bending_y': 2, 'bending_z': 2,
                                          'extension': 1, 'shear_y': 0, 'shear_z': 1}
    spec['links'][2]['joint']['type'] = 'prismatic'
    return model_from_dict(spec)


@pytest.mark.parametrize('build', [mixed_arm, satellite])
def test_compiled_section_kinematics_equal_the_reference(build):
    """The compiled pass to a section (rod, beam and rigid links, fixed and floating base):
    its pose and Jacobian equal the NumPy reference's (`reference_section_pose`,
    `reference_section_jacobian`) and J' v equals a central difference of J along v."""
    model = build()
    data = model.create_data()
    q, v, _ = random_state(model, 7, scale=0.2)
    for j, X in [(0, 0.0), (0, 0.33), (0, 0.8), (1, 0.0), (1, 0.25), (1, 0.6), (2, 0.07)]:
        out = model.section_kinematics(data, q, v, j, X)
        pose = reference_chain.section_pose(model, q, j, X)
        np.testing.assert_allclose(out.R, pose[:3, :3], atol=1e-13)
        np.testing.assert_allclose(out.p, pose[:3, 3], atol=1e-13)
        body = reference_chain.section_jacobian(model, q, j, X)
        np.testing.assert_allclose(out.J[:3], pose[:3, :3] @ body[:3], atol=1e-12)
        np.testing.assert_allclose(out.J[3:], pose[:3, :3] @ body[3:], atol=1e-12)
        np.testing.assert_allclose(out.twist, out.J @ v, atol=1e-12)
        if model.floating_base is None:
            eps = 1e-6
            rate = (model.section_kinematics(data, q + eps * v, v, j, X).J
                    - model.section_kinematics(data, q - eps * v, v, j, X).J) @ v / (2 * eps)
            out = model.section_kinematics(data, q, v, j, X)
            np.testing.assert_allclose(out.accel, rate, atol=1e-6 * max(1.0, np.abs(rate).max()))


def long_chain(links, floating):
    """``links`` links cycling through a rod (three strains), a beam and a rigid link,
    joints about turned axes, on a fixed or (``floating``) free-floating base."""
    rod = {'material': {'density': 1100.0, 'young_modulus': 2e6, 'shear_modulus': 6.667e5},
           'section': {'shape': 'circle', 'radius': 0.012},
           'strains': {'bending_y': 2, 'bending_z': 1, 'torsion': 1}, 'damping_time': 0.01}
    beam = {'linear_density': 0.3, 'bending_stiffness': [5.0, 8.0], 'modes': [2, 1]}
    spec = {'name': 'long', 'type': 'serial_chain', 'gravity': [0.0, -2.0, -9.81], 'links': []}
    for j in range(links):
        link = {'name': f'l{j}', 'length': 0.2, 'mass': 0.05, 'inertia': [1e-4] * 3 + [0] * 3,
                'joint': {'name': f'j{j}', 'axis': [0.0, 1.0, 0.0] if j % 2 else [0, 0, 1.0],
                          'rpy': [0.1 * j, 0.0, 0.2], 'damping': 0.01, 'armature': 1e-3,
                          'effort_limit': 10.0, 'velocity_limit': 5.0}}
        link.update([{'rod': rod}, {'beam': beam}, {}][j % 3])
        spec['links'].append(link)
    if floating:
        spec['base'] = {'frame': 'base_link', 'floating': True, 'mass': 5.0,
                        'com': [0.01, 0.0, -0.02], 'inertia': [0.1, 0.2, 0.3, 0.0, 0.0, 0.0]}
    return model_from_dict(spec)


@pytest.mark.parametrize('floating', [False, True])
def test_the_articulated_recursion_equals_the_composite_solve_on_a_long_chain(floating):
    """Twelve mixed links: v' of the O(n) articulated-body recursion equals M^-1 (B u - h)
    (the composite solve, checked against the NumPy reference above) to round-off."""
    model = long_chain(12, floating)
    assert model.kind == 'serial_chain' and model.dynamics_algorithm == 'articulated'
    data = model.create_data()
    for seed in range(3):
        q, v, u = random_state(model, seed)
        expected = model.composite_forward_dynamics(data, q, v, u).copy()
        ours = model.articulated_forward_dynamics(data, q, v, u)
        np.testing.assert_allclose(ours, expected, atol=1e-10 * np.abs(expected).max())
        np.testing.assert_array_equal(model.forward_dynamics(data, q, v, u), ours)


@pytest.mark.parametrize('algorithm', ['composite', 'articulated'])
def test_a_massless_moving_link_is_refused_by_both_algorithms(algorithm):
    """A link with no mass on a moving joint has no inertia for its coordinate: both
    forward dynamics raise LinAlgError naming the model, not return a non-finite v'."""
    from flexible_manipulator.mechanics.model.link_part import LinkPart, rigid_inertia
    hub = rigid_inertia(1.0, (0.1, 0.0, 0.0), np.eye(3) * 1e-3)
    model = Chain([LinkPart('a', None, length=0.3, hub=hub),
                   LinkPart('b', None, length=0.2)], name='massless')
    with pytest.raises(np.linalg.LinAlgError, match="'massless'"):
        getattr(model, f'{algorithm}_forward_dynamics')(
            model.create_data(), np.zeros(2), np.zeros(2), np.zeros(2))


@pytest.mark.parametrize('floating', [False, True])
def test_the_explicit_stepper_on_the_recursion_follows_the_composite_one(floating):
    """rk4 on twelve mixed links: the O(n) stepper's state after 50 steps of 0.1 ms equals
    the composite stepper's (the same scheme, v' equal to round-off) to 1e-9."""
    model = long_chain(12, floating)
    q0, v0, u = random_state(model, 7, scale=0.1)
    states = []
    for algorithm in ('composite', 'articulated'):
        model.dynamics_algorithm = algorithm
        simulation = Simulation(model, 1e-4, 'rk4', q0, v0)
        simulation.advance(u, 0.005)
        states.append(np.concatenate([simulation.q, simulation.v]))
    np.testing.assert_allclose(states[1], states[0], atol=1e-9 * np.abs(states[0]).max())


COSSERAT_FILES = ('satellite_soft_boom', 'two_link_soft', 'two_link_spatial_soft')


@pytest.mark.parametrize('name', COSSERAT_FILES)
def test_the_compiled_frames_and_energy_equal_the_reference(name):
    """What the plant publishes each tick (TF's parent-to-child transforms, the potential
    energy) comes from the kernels; both equal the NumPy reference (`forward_pass`, the
    rods' Magnus steps composed here) to round-off at random states."""
    model = load_model(os.path.join(MODELS, f'{name}.yaml'))
    data = model.create_data()
    entries = [(j, None) for j in range(len(model.parts))] + [
        (j, s * model.parts[j].length) for j in range(len(model.parts))
        for s in (0.0, 0.37, 1.0)]
    transforms = model.frame_transforms(entries)
    for seed in range(2):
        q, _, _ = random_state(model, seed)
        assert model.potential_energy(data, q) == pytest.approx(
            reference_chain.potential_energy(model, q), rel=1e-13, abs=1e-13)
        transforms.update(data, q)
        for i, (j, x) in enumerate(entries):
            link = model.parts[j]
            if x is None:
                expected = link.offset @ model._joint_pose(j, q)
            else:
                expected = (np.linalg.inv(reference_chain.section_pose(model, q, j, 0.0))
                            @ reference_chain.section_pose(model, q, j, x))
            np.testing.assert_allclose(transforms.R[i], expected[:3, :3], atol=1e-13)
            np.testing.assert_allclose(transforms.p[i], expected[:3, 3], atol=1e-13)
            np.testing.assert_allclose(transforms.quat[i],
                                       lie.quat_from_matrix(expected[:3, :3]), atol=1e-12)
