"""Tests of the generated robot description, parsed by an independent URDF library.

yourdfpy parses the URDF and does its own forward kinematics; the expected poses are
computed here in closed form (URDF rpy convention, planar two/three-link kinematics).
"""

import io
import math
from pathlib import Path

import numpy as np
import pytest
import yourdfpy

from flexible_manipulator.description.urdf import urdf
from flexible_manipulator.mechanics.planar_chain import PlanarChainModel, RigidLink
from flexible_manipulator.model_config import load_model

MODEL_FILE = Path(__file__).resolve().parents[1] / 'config' / 'models' / 'two_link_rigid.yaml'


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


def tool_in_world(model, q):
    """Closed-form world pose of the tool frame (4x4).

    In the base frame the tool sits at (sum l_i cos theta_i, sum l_i sin theta_i, 0),
    rotated by theta_n = sum q about the base z axis; world <- base is the base xyz/rpy.
    """
    theta = np.cumsum(q)
    planar = np.eye(4)
    planar[0, 3] = np.sum(model.length * np.cos(theta))
    planar[1, 3] = np.sum(model.length * np.sin(theta))
    planar[:2, :2] = [[math.cos(theta[-1]), -math.sin(theta[-1])],
                      [math.sin(theta[-1]), math.cos(theta[-1])]]
    base = np.eye(4)
    base[:3, :3] = rpy_matrix(*model.base_rpy)
    base[:3, 3] = model.base_xyz
    return base @ planar


def general_model():
    """Three links, a base pose with all rpy angles non-zero, one unbounded joint."""
    return PlanarChainModel('three_link', [
        RigidLink('l1', 'j1', 0.7, 1.0, 0.3, 0.05, 0.1, 30.0, 5.0, -2.0, 2.5),
        RigidLink('l2', 'j2', 0.45, 0.6, 0.2, 0.02, 0.0, 15.0, 6.0),  # continuous joint
        RigidLink('l3', 'j3', 0.3, 0.3, 0.15, 0.004, 0.02, 5.0, 9.0, -1.0, 1.0)],
        base_frame='shoulder_mount', base_xyz=(0.2, -0.4, 1.3), base_rpy=(0.4, -0.7, 2.1),
        tool_frame='gripper')


def test_shipped_model_joints_and_limits():
    """Joint names, types, axes, parents and limits equal the model's (from the YAML file)."""
    model = load_model(str(MODEL_FILE))
    robot = parse(model)
    assert robot.robot.name == 'two_link_rigid'
    assert robot.validate()
    assert robot.base_link == 'world'
    assert robot.actuated_joint_names == ['shoulder', 'elbow']
    joints = robot.joint_map
    assert (joints['base_link_mount'].type, joints['base_link_mount'].parent,
            joints['base_link_mount'].child) == ('fixed', 'world', 'base_link')
    assert (joints['tool0_mount'].type, joints['tool0_mount'].parent,
            joints['tool0_mount'].child) == ('fixed', 'forearm', 'tool0')
    parents = ['base_link', 'upper_arm']
    for i, link in enumerate(model.links):
        joint = joints[link.joint]
        assert joint.type == 'revolute'
        assert (joint.parent, joint.child) == (parents[i], link.name)
        np.testing.assert_array_equal(joint.axis, [0.0, 0.0, 1.0])
        assert joint.limit.lower == link.lower and joint.limit.upper == link.upper
        assert joint.limit.effort == link.effort_limit
        assert joint.limit.velocity == link.velocity_limit
        assert float(joint.dynamics.damping) == link.damping


def test_inertial_parameters_match_model():
    """Each link's <inertial>: mass, COM at (c, 0, 0) and izz = I about the COM."""
    model = general_model()
    robot = parse(model)
    for link in model.links:
        inertial = robot.link_map[link.name].inertial
        assert inertial.mass == pytest.approx(link.mass, rel=1e-9)
        np.testing.assert_allclose(inertial.origin[:3, 3], [link.com, 0.0, 0.0], atol=1e-12)
        assert inertial.inertia[2, 2] == pytest.approx(link.inertia, rel=1e-8)


def test_unbounded_joint_is_continuous():
    """A joint with infinite lower/upper becomes 'continuous'; bounded ones 'revolute'."""
    model = general_model()
    robot = parse(model)
    assert robot.actuated_joint_names == ['j1', 'j2', 'j3']
    assert [robot.joint_map[name].type for name in ('j1', 'j2', 'j3')] == [
        'revolute', 'continuous', 'revolute']
    assert (robot.joint_map['j3'].limit.lower, robot.joint_map['j3'].limit.upper) == (-1, 1)


@pytest.mark.parametrize('make_model', [lambda: load_model(str(MODEL_FILE)), general_model],
                         ids=['two_link_rigid', 'three_link_general_base'])
def test_forward_kinematics_matches_closed_form(make_model):
    """The world->tool transform of yourdfpy equals the closed-form pose on random q.

    Tolerance 1e-7: urdf() writes numbers with 9 significant digits, so the base roll of
    the shipped model (pi/2) is rounded by ~3e-9 rad.
    """
    model = make_model()
    robot = parse(model)
    rng = np.random.default_rng(5)
    for _ in range(5):
        q = rng.uniform(-1.0, 1.0, model.nq)
        robot.update_cfg(dict(zip(model.joint_names, q)))
        actual = robot.get_transform(model.tool_frame, 'world')
        np.testing.assert_allclose(actual, tool_in_world(model, q), rtol=0, atol=1e-7)


def test_shipped_model_tool_position_in_world_x_z_plane():
    """The shipped arm moves in the world x-z plane, shoulder 1 m up (see the YAML file).

    With rpy = (pi/2, 0, 0) base x is world x and base y is world z, so the tool is at
    world (l1 cos q1 + l2 cos(q1+q2), 0, 1 + l1 sin q1 + l2 sin(q1+q2)).
    """
    robot = parse(load_model(str(MODEL_FILE)))
    q1, q2 = 0.6, -1.1
    robot.update_cfg({'shoulder': q1, 'elbow': q2})
    position = robot.get_transform('tool0', 'world')[:3, 3]
    expected = [0.5 * math.cos(q1) + 0.4 * math.cos(q1 + q2), 0.0,
                1.0 + 0.5 * math.sin(q1) + 0.4 * math.sin(q1 + q2)]
    np.testing.assert_allclose(position, expected, rtol=0, atol=1e-7)
