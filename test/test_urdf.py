"""Tests of the generated robot description, parsed by an independent URDF library.

yourdfpy parses the URDF and does its own forward kinematics. For planar chains the
expected poses are computed here in closed form (URDF rpy convention, planar kinematics);
for spatial rigid chains yourdfpy must agree with the model's ``frame_placements`` (itself
checked against the closed form on the planar chains). Inertial values are the parallel-axis
theorem written out here.
"""

import io
import math
from pathlib import Path

import numpy as np
import pytest
import yourdfpy

from flexible_manipulator.description.urdf import joint_frames, urdf
from flexible_manipulator.mechanics.link_description import Beam, Joint, Link, RigidBody
from flexible_manipulator.mechanics.links import chain_from_links
from flexible_manipulator.model_config import load_model

MODELS = Path(__file__).resolve().parents[1] / 'config' / 'models'
SHIPPED = ['two_link_rigid', 'two_link_flexible', 'three_link_spatial_flexible']


def shipped(name):
    return load_model(str(MODELS / f'{name}.yaml'))


def parse(model):
    """Parse urdf(model) with yourdfpy (scene graph for FK, no meshes needed)."""
    return yourdfpy.URDF.load(io.StringIO(urdf(model)), build_scene_graph=True,
                              load_meshes=False)


def rpy_matrix(roll, pitch, yaw):
    """URDF <origin rpy>: fixed-axis roll, pitch, yaw, R = Rz(yaw) Ry(pitch) Rx(roll)."""
    cr, sr, cp, sp, cy, sy = (math.cos(roll), math.sin(roll), math.cos(pitch),
                              math.sin(pitch), math.cos(yaw), math.sin(yaw))
    rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return rz @ ry @ rx


def pose(rotation, position):
    out = np.eye(4)
    out[:3, :3], out[:3, 3] = rotation, position
    return out


def base_pose(model):
    """Pose world <- base: the base xyz/rpy."""
    return pose(rpy_matrix(*model.base_rpy), model.base_xyz)


def planar_frames_in_world(model, q):
    """Closed-form world poses {frame: 4x4} of a planar chain (all axes base z, no offsets).

    Link frame j sits at sum_{i<j} l_i (cos theta_i, sin theta_i, 0) rotated by
    theta_j = q_1 + ... + q_j about z; its section at abscissa x is x further along its
    x axis; its tip is at x = l_j; the tool is the last tip.
    """
    theta = np.cumsum(q)
    frames, origin = {}, np.zeros(3)
    for j, link in enumerate(model.links):
        c, s = math.cos(theta[j]), math.sin(theta[j])
        rotation = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        frames[link.name] = pose(rotation, origin)
        for k in range(link.frames):
            x = (k + 1) * link.length / (link.frames + 1)
            frames[f'{link.name}_s{k + 1}'] = pose(rotation, origin + x * rotation[:, 0])
        origin = origin + link.length * rotation[:, 0]
        frames[f'{link.name}_tip'] = pose(rotation, origin)
    frames[model.tool_frame] = frames[f'{model.links[-1].name}_tip']
    return {name: base_pose(model) @ value for name, value in frames.items()}


def rigid(name, joint, length, mass, com, inertia, frames=0, **joint_args):
    """Make a rigid link; ``inertia`` is (ixx, iyy, izz, ixy, ixz, iyz) about the COM."""
    ixx, iyy, izz, ixy, ixz, iyz = inertia
    tensor = ((ixx, ixy, ixz), (ixy, iyy, iyz), (ixz, iyz, izz))
    return Link(name, Joint(joint, **joint_args), length,
                body=RigidBody(mass, com, tensor), frames=frames)


def general_model():
    """Three planar links, a base pose with all rpy angles non-zero, one unbounded joint."""
    return chain_from_links('three_link', [
        rigid('l1', 'j1', 0.7, 1.0, (0.3, 0.02, -0.01), (1e-3, 0.05, 0.05, 1e-4, 0, 2e-4),
              damping=0.1, effort_limit=30.0, velocity_limit=5.0, lower=-2.0, upper=2.5),
        rigid('l2', 'j2', 0.45, 0.6, (0.2, 0, 0), (1e-4, 0.02, 0.02, 0, 0, 0), frames=3,
              effort_limit=15.0, velocity_limit=6.0),  # continuous joint
        rigid('l3', 'j3', 0.3, 0.3, (0.15, 0, 0), (1e-4, 0.004, 0.004, 0, 0, 0), frames=1,
              damping=0.02, effort_limit=5.0, velocity_limit=9.0, lower=-1.0, upper=1.0)],
        base_frame='shoulder_mount', base_xyz=(0.2, -0.4, 1.3), base_rpy=(0.4, -0.7, 2.1),
        tool_frame='gripper')


def spatial_model():
    """Rigid spatial chain: tilted axes, joint origin offsets, a prismatic joint, a rod beam."""
    axis = (0.6, 0.0, 0.8)
    return chain_from_links('spatial', [
        rigid('a', 'ja', 0.4, 1.0, (0.2, 0.01, 0.0), (1e-3, 0.02, 0.02, 0, 0, 0),
              axis=axis, xyz=(0.1, 0.2, 0.05), rpy=(0.3, -0.2, 0.5), effort_limit=9.0,
              velocity_limit=2.0, lower=-3.0, upper=3.0),
        rigid('b', 'jb', 0.3, 0.5, (0.1, 0, 0), (1e-4, 1e-3, 1e-3, 0, 0, 0), frames=2,
              type='prismatic', axis=(1.0, 0.0, 0.0), rpy=(0.0, 0.4, 0.0), effort_limit=9.0,
              velocity_limit=2.0, lower=-0.2, upper=0.3),
        Link('c', Joint('jc', axis=(0.0, 1.0, 0.0), xyz=(0.0, 0.0, 0.05), rpy=(0.2, 0, 0)),
             0.35, body=RigidBody(0.1, (0.0, 0.0, 0.01), np.diag([1e-5, 1e-5, 1e-5])),
             beam=Beam(0.5, (10.0, 10.0), modes=(0, 0)), frames=2)],
        base_xyz=(0.1, 0.0, 0.3), base_rpy=(0.1, 0.2, -0.3))


def test_shipped_rigid_model_joints_and_limits():
    """Joint names, types, axes, parents and limits equal the model's (from the YAML file)."""
    model = shipped('two_link_rigid')
    robot = parse(model)
    assert robot.robot.name == 'two_link_rigid'
    assert robot.validate()
    assert robot.base_link == 'world'
    assert robot.actuated_joint_names == ['shoulder', 'elbow']
    joints = robot.joint_map
    for name, parent, child in [('base_link_mount', 'world', 'base_link'),
                                ('upper_arm_tip_section', 'upper_arm', 'upper_arm_tip'),
                                ('forearm_tip_section', 'forearm', 'forearm_tip'),
                                ('tool0_mount', 'forearm_tip', 'tool0')]:
        assert (joints[name].type, joints[name].parent, joints[name].child) == (
            'fixed', parent, child)
    parents = ['base_link', 'upper_arm_tip']
    for i, link in enumerate(model.links):
        joint, spec = joints[link.joint.name], link.joint
        assert joint.type == 'revolute'
        assert (joint.parent, joint.child) == (parents[i], link.name)
        np.testing.assert_array_equal(joint.axis, [0.0, 0.0, 1.0])
        assert joint.limit.lower == spec.lower and joint.limit.upper == spec.upper
        assert joint.limit.effort == spec.effort_limit
        assert joint.limit.velocity == spec.velocity_limit
        assert float(joint.dynamics.damping) == spec.damping


def test_inertial_parameters_match_model():
    """Each link's <inertial>: mass, COM and inertia about the COM (rigid links as given)."""
    model = general_model()
    robot = parse(model)
    for link in model.links:
        inertial = robot.link_map[link.name].inertial
        assert inertial.mass == pytest.approx(link.body.mass, rel=1e-12)
        np.testing.assert_allclose(inertial.origin[:3, 3], link.body.com, atol=1e-12)
        np.testing.assert_allclose(inertial.origin[:3, :3], np.eye(3), atol=1e-12)
        # urdf() adds 1e-9 kg m^2 to the diagonal (consumers want it strictly positive).
        np.testing.assert_allclose(inertial.inertia, link.body.inertia, rtol=0, atol=2e-9)


def test_beam_link_inertial_is_body_plus_uniform_rod():
    """Body plus rod (rho A L at L/2, rho A L^3/12 about y and z): combined COM inertia."""
    link = spatial_model().links[2]
    inertial = parse(spatial_model()).link_map['c'].inertial
    m, c = link.body.mass, np.asarray(link.body.com)
    rod_m, rod_c = 0.5 * 0.35, np.array([0.175, 0.0, 0.0])
    total = m + rod_m
    com = (m * c + rod_m * rod_c) / total
    rod_i = np.diag([0.0, rod_m * 0.35 ** 2 / 12, rod_m * 0.35 ** 2 / 12])

    def shift(mass, d):
        return mass * (d @ d * np.eye(3) - np.outer(d, d))
    expected = (np.asarray(link.body.inertia) + shift(m, c - com) + rod_i
                + shift(rod_m, rod_c - com))
    assert inertial.mass == pytest.approx(total, rel=1e-12)
    np.testing.assert_allclose(inertial.origin[:3, 3], com, atol=1e-12)
    np.testing.assert_allclose(inertial.inertia, expected, rtol=0, atol=2e-9)


def test_unbounded_joint_is_continuous():
    """A joint with infinite lower/upper becomes 'continuous'; bounded ones 'revolute'."""
    robot = parse(general_model())
    assert robot.actuated_joint_names == ['j1', 'j2', 'j3']
    assert [robot.joint_map[name].type for name in ('j1', 'j2', 'j3')] == [
        'revolute', 'continuous', 'revolute']
    assert (robot.joint_map['j3'].limit.lower, robot.joint_map['j3'].limit.upper) == (-1, 1)


@pytest.mark.parametrize('make_model', [lambda: shipped('two_link_rigid'), general_model],
                         ids=['two_link_rigid', 'three_link_general_base'])
def test_forward_kinematics_matches_closed_form(make_model):
    """World poses of yourdfpy and of frame_placements equal the closed form on random q.

    yourdfpy: every link, section, tip and tool frame; frame_placements (composed with the
    base pose): every link and tip frame.
    """
    model = make_model()
    robot = parse(model)
    data = model.create_data()
    rng = np.random.default_rng(5)
    for _ in range(5):
        q = rng.uniform(-1.0, 1.0, model.nq)
        expected = planar_frames_in_world(model, q)
        robot.update_cfg(dict(zip(model.joint_names, q)))
        for name, value in expected.items():
            np.testing.assert_allclose(robot.get_transform(name, 'world'), value, rtol=0,
                                       atol=1e-12, err_msg=name)
        link_R, link_p, tip_R, tip_p = model.frame_placements(data, q)
        for j, link in enumerate(model.links):
            for name, placement in [(link.name, pose(link_R[j], link_p[j])),
                                    (f'{link.name}_tip', pose(tip_R[j], tip_p[j]))]:
                np.testing.assert_allclose(base_pose(model) @ placement, expected[name],
                                           rtol=0, atol=1e-12, err_msg=name)


def rigid_cases():
    return [shipped('two_link_rigid'), general_model(), spatial_model(),
            shipped('three_link_spatial_flexible').rigid_twin()]


@pytest.mark.parametrize('model', rigid_cases(),
                         ids=['two_link_rigid', 'general', 'spatial', 'three_link_rigid_twin'])
def test_forward_kinematics_matches_frame_placements(model):
    """On rigid chains yourdfpy's world poses equal the model's, on random q in limits.

    Every URDF frame below the base (link, section, tip, tool) equals base pose @
    frame_placements (links, tips, tool) or @ section_pose (sections).
    """
    robot = parse(model)
    data = model.create_data()
    frames = joint_frames(model)
    assert all(frame.kind != 'section' for frame in frames)
    rng = np.random.default_rng(11)
    for _ in range(5):
        q = rng.uniform(np.maximum(model.lower, -2.0), np.minimum(model.upper, 2.0))
        robot.update_cfg(dict(zip(model.joint_names, q)))
        link_R, link_p, tip_R, tip_p = model.frame_placements(data, q)
        link_R, link_p, tip_R, tip_p = (a.copy() for a in (link_R, link_p, tip_R, tip_p))
        expected = {model.tool_frame: pose(tip_R[-1], tip_p[-1])}
        for j, link in enumerate(model.links):
            expected[link.name] = pose(link_R[j], link_p[j])
            expected[f'{link.name}_tip'] = pose(tip_R[j], tip_p[j])
        for frame in frames:
            if frame.link >= 0 and frame.x > 0.0 and frame.child not in expected:
                expected[frame.child] = pose(*model.section_pose(data, q, frame.link, frame.x))
        assert len(expected) == len(frames) - 1  # every frame below the base
        for name, value in expected.items():
            np.testing.assert_allclose(robot.get_transform(name, 'world'),
                                       base_pose(model) @ value, rtol=0, atol=1e-12,
                                       err_msg=name)


def test_shipped_model_tool_position_in_world_x_z_plane():
    """The shipped arm moves in the world x-z plane, shoulder 1 m up (see the YAML file).

    With rpy = (pi/2, 0, 0) base x is world x and base y is world z, so the tool is at
    world (l1 cos q1 + l2 cos(q1+q2), 0, 1 + l1 sin q1 + l2 sin(q1+q2)).
    """
    robot = parse(shipped('two_link_rigid'))
    q1, q2 = 0.6, -1.1
    robot.update_cfg({'shoulder': q1, 'elbow': q2})
    position = robot.get_transform('tool0', 'world')[:3, 3]
    expected = [0.5 * math.cos(q1) + 0.4 * math.cos(q1 + q2), 0.0,
                1.0 + 0.5 * math.sin(q1) + 0.4 * math.sin(q1 + q2)]
    np.testing.assert_allclose(position, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize('name', SHIPPED)
def test_shipped_models_parse(name):
    """Every shipped model gives a valid URDF: one link per frame, one joint per transform."""
    model = shipped(name)
    robot = parse(model)
    assert robot.robot.name == name
    assert robot.validate()
    assert robot.base_link == 'world'
    frames = joint_frames(model)
    assert [j.name for j in robot.robot.joints] == [f.joint for f in frames]
    assert sorted(robot.link_map) == sorted(['world'] + [f.child for f in frames])
    for frame in frames:
        joint = robot.joint_map[frame.joint]
        assert (joint.parent, joint.child) == (frame.parent, frame.child)


@pytest.mark.parametrize('name', ['two_link_flexible', 'three_link_spatial_flexible'])
def test_flexible_model_frame_joints(name):
    """Section and tip frames of flexible links float; model joints are revolute.

    The floating joints (published by the plant) have origins x = k L / (F + 1) and L on
    the link's x axis; model joints are 'continuous' when unbounded.
    """
    model = shipped(name)
    joints = parse(model).joint_map
    parent = model.base_frame
    for link in model.links:
        joint = joints[link.joint.name]
        unbounded = math.isinf(link.joint.lower) and math.isinf(link.joint.upper)
        assert joint.type == ('continuous' if unbounded else 'revolute')
        assert joint.parent == parent
        flexible = link.beam is not None and sum(link.beam.modes) > 0
        children = [f'{link.name}_s{k}' for k in range(1, link.frames + 1)]
        for k, child in enumerate(children + [f'{link.name}_tip']):
            section = joints[f'{child}_section']
            assert section.type == ('floating' if flexible else 'fixed'), child
            assert (section.parent, section.child) == (link.name, child)
            np.testing.assert_allclose(section.origin, pose(
                np.eye(3), [(k + 1) * link.length / (link.frames + 1), 0, 0]), atol=1e-15)
        parent = f'{link.name}_tip'
    assert joints[f'{model.tool_frame}_mount'].type == 'fixed'
    assert joints[f'{model.tool_frame}_mount'].parent == parent
    frames = joint_frames(model)
    assert {f.joint for f in frames if f.kind == 'section'} == {
        j.name for j in joints.values() if j.type == 'floating'}
    assert [f.link for f in frames if f.kind == 'joint'] == list(range(len(model.links)))
    assert not any(f.moving for f in frames if f.kind == 'fixed')


@pytest.mark.parametrize('make_model', [lambda n=name: shipped(n) for name in SHIPPED]
                         + [spatial_model], ids=SHIPPED + ['spatial'])
def test_urdf_total_mass_equals_model_mass(make_model):
    """Sum of the URDF link masses = rigid bodies + beams (rho A L) + payloads."""
    model = make_model()
    robot = parse(model)
    expected = sum(link.body.mass + link.payload.mass
                   + (link.beam.linear_density * link.length if link.beam else 0.0)
                   for link in model.links)
    actual = sum(link.inertial.mass for link in robot.robot.links if link.inertial)
    assert actual == pytest.approx(expected, rel=1e-12)
