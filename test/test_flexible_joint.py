"""The flexible joint link kind (`mechanics.links.flexible_joint`): Spong's elastic joint.

Expected values, none from this code's own output:

* one flexible joint, no gravity, link inertia J_l about the axis (the parallel-axis
  theorem on the model file's body and payload), rotor J_m, gear stiffness k: the
  kinetic energy (J_m theta'^2 + J_l (theta' + delta')^2) / 2 gives M = [[J_m + J_l,
  J_l], [J_l, J_l]] and K = diag(0, k); the motor clamped vibrates at sqrt(k / J_l), the
  motor free at sqrt(k (1/J_m + 1/J_l)) (Spong 1987; two inertias on a torsion spring);
* the same frequencies from a simulated free vibration: the period of the deflection
  between its zero crossings;
* on a URDF arm, a flexible joint at rest in its gear (delta = 0) moves the links beyond
  it as the rigid arm's joint does: the rigid model's M and gravity with J_m on the
  motor's diagonal, and its rigid twin is the rigid arm with J_m as armature;
* the NumPy reference of the walk (``mechanics.reference.cosserat_chain``) for M, h and
  the sections of a chain mixing the kind with beams, rods and rigid links; the TF
  transforms composed equal the section poses.
"""

import math
import os

import numpy as np
import pytest
import yaml

from flexible_manipulator.config_checks import ConfigError
from flexible_manipulator.description.urdf import joint_frames
from flexible_manipulator.identification.measurements import mode_unit
from flexible_manipulator.mechanics import lie
from flexible_manipulator.mechanics.links import kind_of
from flexible_manipulator.mechanics.perturbation import payload_alone
from flexible_manipulator.mechanics.reference import cosserat_chain as reference
from flexible_manipulator.mechanics.simulation import Simulation
from flexible_manipulator.model_config import load_model, model_from_dict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UR5E = os.path.join(ROOT, 'config', 'models', 'ur5e_flexible_forearm.yaml')
GEARED = os.path.join(ROOT, 'config', 'models', 'ur5e_flexible_joints.yaml')

# One link on a flexible joint about z: a 2 kg body with its centre at 0.25 m on x, izz
# 0.05 kg m^2 about that centre, and a 0.5 kg payload at the tip (0.5 m), izz 0.002.
LENGTH, MASS, COM_X, IZZ = 0.5, 2.0, 0.25, 0.05
PAYLOAD, PAYLOAD_IZZ = 0.5, 0.002
STIFFNESS, ROTOR = 300.0, 0.1          # N m/rad, kg m^2
LINK_INERTIA = IZZ + MASS * COM_X ** 2 + PAYLOAD_IZZ + PAYLOAD * LENGTH ** 2  # J_l [kg m^2]


def one_joint(damping=0.0):
    """The model file's mapping of one link behind a flexible joint, without gravity."""
    return {'name': 'geared', 'type': 'serial_chain', 'gravity': [0.0, 0.0, 0.0],
            'links': [{'name': 'arm', 'length': LENGTH, 'mass': MASS, 'com': [COM_X, 0, 0],
                       'inertia': [0.001, 0.04, IZZ, 0, 0, 0],
                       'payload': {'mass': PAYLOAD, 'inertia': [1e-4, 1e-4, PAYLOAD_IZZ,
                                                                0, 0, 0]},
                       'joint': {'name': 'motor', 'axis': [0, 0, 1], 'effort_limit': 10.0,
                                 'velocity_limit': 10.0},
                       'flexible_joint': {'stiffness': STIFFNESS, 'damping': damping,
                                          'rotor_inertia': ROTOR}}]}


@pytest.fixture(scope='module')
def geared(tmp_path_factory):
    """One flexible joint, read from a model file."""
    path = tmp_path_factory.mktemp('models') / 'geared.yaml'
    path.write_text(yaml.safe_dump(one_joint()))
    return load_model(str(path))


def test_one_flexible_joint_has_spongs_mass_stiffness_and_frequencies(geared):
    """M = [[J_m + J_l, J_l], [J_l, J_l]], K = diag(0, k); the eigenvalues of M^-1 K are
    0 (the free rotation) and k (1/J_m + 1/J_l), and the deflection alone (the motor
    clamped: its row and column dropped) k / J_l."""
    assert kind_of(geared.links[0]).name == 'flexible_joint'
    assert geared.coordinate_names == ('motor', 'arm_deflection')
    M = geared.mass_matrix(geared.create_data(), geared.neutral_configuration())
    J_l = LINK_INERTIA
    np.testing.assert_allclose(M, [[ROTOR + J_l, J_l], [J_l, J_l]], rtol=1e-13)
    stiffness, damping = geared.elastic_coefficients()
    np.testing.assert_array_equal(stiffness, [0.0, STIFFNESS])
    eigenvalues = np.sort(np.linalg.eigvals(np.linalg.solve(M, np.diag(stiffness))).real)
    assert eigenvalues[0] == pytest.approx(0.0, abs=1e-9)
    assert math.sqrt(eigenvalues[1]) == pytest.approx(
        math.sqrt(STIFFNESS * (1 / ROTOR + 1 / J_l)), rel=1e-12)
    assert math.sqrt(stiffness[1] / M[1, 1]) == pytest.approx(math.sqrt(STIFFNESS / J_l),
                                                              rel=1e-12)
    # the chain's own frequency scale of the coordinate: the motor clamped
    assert geared.mode_frequencies[0] == pytest.approx(math.sqrt(STIFFNESS / J_l), rel=1e-12)


def test_a_prismatic_flexible_joint_is_a_linear_spring_in_series():
    """Along a prismatic joint the gear is a linear spring k [N/m] between the motor's
    reflected mass m_m and the link's mass m_l (body and payload): M = [[m_m + m_l, m_l],
    [m_l, m_l]], gravity along the axis loads the spring with m_l g, and the free motor
    vibrates at sqrt(k (1/m_m + 1/m_l)), the deflection's range the link's length."""
    spec = one_joint()
    spec['gravity'] = [-9.8, 0.0, 0.0]
    spec['links'][0]['joint'].update(type='prismatic', axis=[1, 0, 0])
    model = model_from_dict(spec)
    link = model.links[0]
    assert kind_of(link).unit(link, 'deflection') == 'm'
    assert kind_of(link).amplitude(link, 'deflection')[:2] == (LENGTH, ' m')
    q = model.neutral_configuration()
    M = model.mass_matrix(model.create_data(), q)
    m_l = MASS + PAYLOAD
    np.testing.assert_allclose(M, [[ROTOR + m_l, m_l], [m_l, m_l]], rtol=1e-13)
    g = model.bias_forces(model.create_data(), q, np.zeros(2))
    np.testing.assert_allclose(g, [9.8 * m_l, 9.8 * m_l], rtol=1e-13)
    stiffness, _ = model.elastic_coefficients()
    eigenvalues = np.sort(np.linalg.eigvals(np.linalg.solve(M, np.diag(stiffness))).real)
    expected = math.sqrt(STIFFNESS * (1 / ROTOR + 1 / m_l))
    assert math.sqrt(eigenvalues[1]) == pytest.approx(expected, rel=1e-12)


def crossing_frequency(times, signal):
    """Return pi / (mean time between zero crossings) [rad/s] (crossings interpolated)."""
    signs = np.signbit(signal)
    index = np.nonzero(signs[1:] != signs[:-1])[0]
    crossings = times[index] - signal[index] * (times[index + 1] - times[index]) / (
        signal[index + 1] - signal[index])
    assert crossings.size >= 6
    return math.pi * (crossings.size - 1) / (crossings[-1] - crossings[0])


@pytest.mark.parametrize('motor', ['free', 'clamped'])
def test_a_simulated_free_vibration_has_the_closed_form_frequency(geared, motor):
    """From delta = 0.01 rad at rest, no damping: with no motor torque the deflection
    vibrates at sqrt(k (1/J_m + 1/J_l)); with the torque u = -k delta that holds the motor
    (its equation J_m theta'' = u + k delta), at sqrt(k / J_l) and the motor stays put.
    Periods from the zero crossings of delta over 1 s of RK4 steps of h = 0.1 ms, the
    torque held over each step."""
    step, start, count = 1e-4, 0.01, 10000
    simulation = Simulation(geared, step, q0=[0.0, start])
    times, deflection, motor_angle = np.zeros(count), np.zeros(count), np.zeros(count)
    for i in range(count):
        times[i] = simulation.time
        motor_angle[i], deflection[i] = simulation.q
        effort = -STIFFNESS * deflection[i] if motor == 'clamped' else 0.0
        simulation.advance([effort], step)
    expected = (math.sqrt(STIFFNESS / LINK_INERTIA) if motor == 'clamped'
                else math.sqrt(STIFFNESS * (1 / ROTOR + 1 / LINK_INERTIA)))
    assert crossing_frequency(times, deflection) == pytest.approx(expected, rel=1e-5)
    if motor == 'clamped':
        # The held torque lags k delta by half a step on average: J_m theta'' ~ k h delta'
        # / 2, so theta drifts by at most k h delta_0 T / (2 J_m) over T = 1 s (bound
        # doubled); a free motor swings by 2 delta_0 J_l / (J_m + J_l), 5 times more.
        assert np.max(np.abs(motor_angle)) < STIFFNESS * step * start * 1.0 / ROTOR
    else:                       # the momentum (J_m + J_l) theta' + J_l delta' stays zero
        ratio = LINK_INERTIA / (ROTOR + LINK_INERTIA)
        np.testing.assert_allclose(motor_angle, -ratio * (deflection - start), atol=1e-9)


def test_the_gear_damps_at_its_closed_form_rate():
    """With a gear damper d and the motor free the deflection decays as a damped
    oscillator of J = (1/J_m + 1/J_l)^-1, k and d: the eigenvalues of the first-order
    system are -d/2J +- i sqrt(k/J - (d/2J)^2)."""
    model = model_from_dict(one_joint(damping=0.5))
    M = model.mass_matrix(model.create_data(), model.neutral_configuration())
    stiffness, damping = model.elastic_coefficients()
    A = np.block([[np.zeros((2, 2)), np.eye(2)],
                  [-np.linalg.solve(M, np.diag(stiffness)),
                   -np.linalg.solve(M, np.diag(damping))]])
    roots = np.linalg.eigvals(A)
    oscillating = roots[np.abs(roots.imag) > 1e-6]
    reduced = 1.0 / (1.0 / ROTOR + 1.0 / LINK_INERTIA)
    rate = 0.5 / (2.0 * reduced)
    np.testing.assert_allclose(oscillating.real, -rate, rtol=1e-10)
    np.testing.assert_allclose(np.abs(oscillating.imag),
                               math.sqrt(STIFFNESS / reduced - rate ** 2), rtol=1e-10)


def test_model_file_errors_name_the_field():
    """A flexible_joint block's keys are checked by name, one kind's block per link."""
    cases = [({'damping': 1.0, 'rotor_inertia': 0.1},
              'links[0].flexible_joint.stiffness: required field is missing'),
             ({'stiffness': 300.0, 'rotor_inertia': 0.0},
              'links[0].flexible_joint.rotor_inertia: must be > 0'),
             ({'stiffness': 300.0, 'rotor_inertia': 0.1, 'damping': -1.0},
              'links[0].flexible_joint.damping: must be >= 0'),
             ({'stiffness': 300.0, 'rotor_inertia': 0.1, 'stifness': 1.0},
              "links[0].flexible_joint.stifness: unknown field (did you mean 'stiffness'?")]
    for block, message in cases:
        spec = one_joint()
        spec['links'][0]['flexible_joint'] = block
        with pytest.raises(ConfigError) as caught:
            model_from_dict(spec, 'bad')
        assert message in str(caught.value)
    spec = one_joint()
    spec['links'][0]['beam'] = {'linear_density': 0.3, 'bending_stiffness': [5.0, 5.0],
                                'modes': [1, 0]}
    with pytest.raises(ConfigError, match=r'links\[0\]\.beam: a link has one of the blocks '
                       r'rod, beam, flexible_joint, got beam and flexible_joint'):
        model_from_dict(spec, 'bad')


def ur5e(flexible):
    """The UR5e file's mapping with its ``flexible:`` entries replaced (None: rigid)."""
    spec = yaml.safe_load(open(UR5E))
    spec['urdf'] = os.path.join(os.path.dirname(UR5E), spec['urdf'])
    spec.pop('flexible')
    if flexible:
        spec['flexible'] = flexible
    return spec


def test_a_urdf_overlay_puts_a_gear_behind_a_joint_of_the_rigid_arm():
    """flexible: {upper_arm_link: {flexible_joint: ...}} on the UR5e: the link keeps its
    URDF name and frame; at delta = 0 the motor's and the deflection's rows of M are the
    rigid arm's row of that joint (J_m added on the motor's diagonal), gravity the same;
    the rigid twin is the rigid arm with J_m more armature; its unit is the radian; its
    elastic coordinate keeps the payload's regressor from the bare chain (whose inverse
    dynamics would miss it)."""
    gear = {'stiffness': 2.0e4, 'damping': 5.0, 'rotor_inertia': 0.2}
    model = model_from_dict(ur5e({'upper_arm_link': {'flexible_joint': gear}}), 'ur5e')
    rigid = model_from_dict(ur5e(None), 'ur5e')
    j = model.link_names.index('upper_arm_link')
    assert [kind_of(link).name for link in model.links].count('flexible_joint') == 1
    assert model.link_names == rigid.link_names and model.nv == rigid.nv + 1
    assert model.mode_names == ('upper_arm_link_deflection',)
    assert mode_unit(model, 'upper_arm_link_deflection') == 'rad'
    link = model.links[j]       # elastic, but its sections ride on its link frame (TF)
    assert kind_of(link).is_flexible(link) and not kind_of(link).sections_move(link)
    assert payload_alone(model) is None and payload_alone(rigid) is not None
    q = np.random.default_rng(2).uniform(-1.0, 1.0, rigid.nq)
    full = np.append(q, 0.0)
    M, M_rigid = (m.mass_matrix(m.create_data(), x) for m, x in ((model, full), (rigid, q)))
    expected = M_rigid.copy()
    expected[j, j] += gear['rotor_inertia']
    n = rigid.nv
    np.testing.assert_allclose(M[:n, :n], expected, rtol=1e-12, atol=1e-12)
    link_side = M_rigid[j].copy()           # delta moves what theta moves but the rotor
    link_side[j] -= rigid.links[j].joint.armature
    np.testing.assert_allclose(M[n, :n], link_side, rtol=1e-12, atol=1e-12)
    assert M[n, n] == pytest.approx(link_side[j], rel=1e-12)
    g, g_rigid = (m.bias_forces(m.create_data(), x, np.zeros(m.nv))
                  for m, x in ((model, full), (rigid, q)))
    np.testing.assert_allclose(g[:n], g_rigid, rtol=1e-12, atol=1e-10)
    assert g[n] == pytest.approx(g_rigid[j], rel=1e-12)
    twin = model.rigid_twin()
    np.testing.assert_allclose(twin.mass_matrix(twin.create_data(), q), expected, rtol=1e-12,
                               atol=1e-12)


def test_the_shipped_geared_arm_is_the_rigid_arm_with_two_gear_springs():
    """config/models/ur5e_flexible_joints.yaml: gears behind the shoulder and the elbow;
    its rigid twin is the URDF's rigid arm with every motor's 0.1 kg m^2 as armature (the
    file's armature and rotor inertias); the gear modes its comment states (11 and 61 Hz,
    damping ratios near 0.04) are those of the deflections' block of M and K, the arm at
    zero and the motors clamped; it simulates a second under gravity, every motor held by
    its gravity torque at the start, to finite states."""
    spec = yaml.safe_load(open(GEARED))
    model = load_model(GEARED)
    assert model.mode_names == ('upper_arm_link_deflection', 'forearm_link_deflection')
    rigid_spec = ur5e(None)
    rigid_spec.update(armature=0.1, payload=spec['payload'])
    rigid = model_from_dict(rigid_spec, 'ur5e')
    twin, n = model.rigid_twin(), rigid.nv
    q = np.random.default_rng(4).uniform(-1.0, 1.0, n)
    np.testing.assert_allclose(twin.mass_matrix(twin.create_data(), q),
                               rigid.mass_matrix(rigid.create_data(), q), rtol=1e-12,
                               atol=1e-12)
    M = model.mass_matrix(model.create_data(), np.zeros(model.nq))
    stiffness, damping = model.elastic_coefficients()
    block = np.linalg.solve(M[n:, n:], np.diag(stiffness[n:]))
    hertz = np.sqrt(np.sort(np.linalg.eigvals(block).real)) / (2 * math.pi)
    np.testing.assert_allclose(hertz, [11.0, 61.0], rtol=0.05)
    ratios = damping[n:] / (2.0 * np.sqrt(stiffness[n:] * np.diag(M[n:, n:])))
    np.testing.assert_allclose(ratios, 0.04, rtol=0.1)
    q0 = np.zeros(model.nq)
    held = model.bias_forces(model.create_data(), q0, np.zeros(model.nv))[:n]
    sim = Simulation(model, 1e-4, 'rk4', q0, np.zeros(model.nv))
    sim.advance(held, 1.0)
    assert np.isfinite(sim.q).all() and np.isfinite(sim.v).all()


def mixed_chain():
    """A chain of every kind: a rod, a beam, a flexible joint (with a payload), a rigid link."""
    base = {'effort_limit': 10.0, 'velocity_limit': 6.0}
    return model_from_dict({
        'name': 'mixed', 'type': 'serial_chain', 'gravity': [0.0, -3.0, -9.80665],
        'links': [
            {'name': 'soft', 'length': 0.3, 'mass': 0.1, 'inertia': [1e-4] * 3 + [0] * 3,
             'joint': dict(base, name='j0', axis=[0, 0, 1]),
             'rod': {'material': {'density': 1100.0, 'young_modulus': 2e6,
                                  'shear_modulus': 6.667e5},
                     'section': {'shape': 'circle', 'radius': 0.015},
                     'strains': {'bending_y': 1, 'bending_z': 1}}},
            {'name': 'geared', 'length': 0.4, 'mass': 0.8, 'com': [0.2, 0.01, 0.0],
             'inertia': [1e-3, 1e-2, 1e-2, 1e-4, 0, 0],
             'payload': {'mass': 0.2, 'com': [0.0, 0.0, 0.02],
                         'inertia': [1e-4] * 3 + [0] * 3},
             'joint': dict(base, name='j1', axis=[0, 1, 0], rpy=[0.3, 0.0, 0.2]),
             'flexible_joint': {'stiffness': 80.0, 'damping': 0.3, 'rotor_inertia': 0.02}},
            {'name': 'beam', 'length': 0.4, 'mass': 0.2, 'inertia': [1e-4] * 3 + [0] * 3,
             'joint': dict(base, name='j2', axis=[0, 0, 1]),
             'beam': {'linear_density': 0.3, 'bending_stiffness': [5.0, 50.0],
                      'modes': [2, 1], 'damping_ratio': 0.01}},
            {'name': 'tool', 'length': 0.1, 'mass': 0.1, 'com': [0.05, 0, 0],
             'inertia': [1e-4] * 3 + [0] * 3,
             'joint': dict(base, name='j3', type='prismatic', axis=[1, 0, 0])}]})


def test_the_compiled_walk_equals_the_reference_on_a_chain_of_every_kind():
    """M, h, v' and the section poses and Jacobians of the kernels equal the NumPy
    reference's, body by body, on a chain mixing the flexible joint with the other kinds;
    the TF transforms (joint, then section) composed are the section poses."""
    model = mixed_chain()
    kinds = [kind_of(link).name for link in model.links]
    assert kinds == ['rod', 'flexible_joint', 'beam', 'rigid']
    data = model.create_data()
    rng = np.random.default_rng(4)
    q, v, u = (rng.uniform(-0.5, 0.5, n) for n in (model.nq, model.nv, model.nu))
    np.testing.assert_allclose(model.mass_matrix(data, q), reference.mass_matrix(model, q),
                               rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(model.bias_forces(data, q, v),
                               reference.bias_forces(model, q, v), rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(model.forward_dynamics(data, q, v, u),
                               reference.forward_dynamics(model, q, v, u), rtol=1e-9,
                               atol=1e-10)
    frames = joint_frames(model)
    moving = [f for f in frames if f.moving]
    transforms = model.frame_transforms([(f.link, f.x if f.kind == 'section' else None)
                                         for f in moving])
    transforms.update(data, q)
    pose = {'world': np.eye(4)}
    for frame in frames:
        step = lie.se3_from_origin(frame.xyz, frame.rpy)
        if frame.moving:
            i = moving.index(frame)
            step[:3, :3], step[:3, 3] = transforms.R[i], transforms.p[i]
        pose[frame.child] = pose[frame.parent] @ step
    for j, link in enumerate(model.links):
        for x in (0.0, 0.5 * link.length, link.length):
            expected = reference.section_pose(model, q, j, x)
            R, p = model.section_pose(data, q, j, x)
            np.testing.assert_allclose(R, expected[:3, :3], atol=1e-12)
            np.testing.assert_allclose(p, expected[:3, 3], atol=1e-12)
            np.testing.assert_allclose(model.section_jacobian(data, q, j, x),
                                       np.kron(np.eye(2), expected[:3, :3])
                                       @ reference.section_jacobian(model, q, j, x),
                                       atol=1e-11)
        for frame, x in ((link.name, 0.0), (f'{link.name}_tip', link.length)):
            np.testing.assert_allclose(pose[frame], reference.section_pose(model, q, j, x),
                                       atol=1e-12)
