"""A URDF as the model's rigid skeleton (``urdf:`` in a model file, description.urdf_reader).

Where the expected values come from:

* rigid limit: Pinocchio 4's own URDF parser (``buildModelFromUrdf``) on the same file, an
  independent reader and independent dynamics: the mass matrix (CRBA), the bias forces
  (nonLinearEffects plus D v, D the URDF's joint damping as Pinocchio reads it: the
  project's convention tau = u - D v, which Pinocchio's ABA leaves out), the forward
  dynamics (ABA of u - D v) and the placement of every URDF link (oMf of its body frame),
  at random states, to 1e-10 of max(1, |Pinocchio's|); branches off the chain locked by
  Pinocchio's own ``buildReducedModel`` at the locked coordinates the module states;
* a flexible link: the same chain written by hand as a model file, the rotation and the
  re-expressed axis, inertia and origins derived in the docstrings here, to round-off;
* a xacro file: the URDF it was written from;
* the shipped example: energy and the vertical angular momentum over 0.5 s (mechanics);
* refusals: the documented one-line error naming the element.
"""

import io
import math
import os
import re
import warnings

import numpy as np
import pinocchio
import pytest
import yaml
import yourdfpy

from flexible_manipulator.description.urdf import joint_frames, urdf
from flexible_manipulator.mechanics import lie
from flexible_manipulator.mechanics.simulation import Simulation
from flexible_manipulator.model_config import (ConfigError, load_model, model_from_dict,
                                               ModelWarning)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
URDFS = os.path.join(REPO, 'config', 'urdf')
EXAMPLE = os.path.join(REPO, 'config', 'models', 'ur5e_flexible_forearm.yaml')
TOL = 1e-10
STATES = 10

# A chain that exercises the mapping: a fixed pedestal before the first joint, a
# continuous joint, an oblique axis, inertial origins turned by rpy, a fixed link with
# inertia between two moving joints, a prismatic joint, joint damping, a fixed branch
# (camera) and a moving one (flap, its limits [0.2, 1]: locked at 0.2, with a link fixed
# on it), a tool frame past the last joint. The tip (tool) is inferred: the one leaf behind
# four moving joints (flap_tip: three, camera: one).
SYNTHETIC = '''<?xml version="1.0"?>
<robot name="synthetic">
  <material name="red"><color rgba="1 0 0 1"/></material>
  <link name="base">
    <inertial><mass value="5"/><origin xyz="0 0 0.05"/>
      <inertia ixx="0.05" ixy="0" ixz="0" iyy="0.05" iyz="0" izz="0.08"/></inertial>
  </link>
  <link name="pedestal">
    <inertial><mass value="1.5"/><origin xyz="0.01 0 0.1" rpy="0.2 0 0"/>
      <inertia ixx="0.01" ixy="0.001" ixz="0" iyy="0.012" iyz="0" izz="0.004"/></inertial>
  </link>
  <link name="l1">
    <inertial><mass value="2.0"/><origin xyz="0.02 0.01 0.1" rpy="0.1 0.2 0.3"/>
      <inertia ixx="0.02" ixy="0.001" ixz="-0.002" iyy="0.03" iyz="0.0005" izz="0.01"/></inertial>
    <visual><geometry><box size="0.1 0.1 0.2"/></geometry><material name="red"/></visual>
  </link>
  <link name="camera">
    <inertial><mass value="0.3"/><origin xyz="0.02 0 0"/>
      <inertia ixx="1e-4" ixy="0" ixz="0" iyy="2e-4" iyz="0" izz="2e-4"/></inertial>
  </link>
  <link name="l2">
    <inertial><mass value="1.2"/><origin xyz="0.2 0 0.01" rpy="0 0.1 0"/>
      <inertia ixx="0.002" ixy="0" ixz="0.0001" iyy="0.02" iyz="0" izz="0.021"/></inertial>
  </link>
  <link name="flap">
    <inertial><mass value="0.2"/><origin xyz="0 0.05 0.01"/>
      <inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="1e-4"/></inertial>
  </link>
  <link name="flap_tip"/>
  <link name="l2_cover">
    <inertial><mass value="0.5"/><origin xyz="0.03 0 0" rpy="0 0 0.4"/>
      <inertia ixx="5e-4" ixy="0" ixz="0" iyy="6e-4" iyz="0" izz="7e-4"/></inertial>
  </link>
  <link name="l3">
    <inertial><mass value="0.8"/><origin xyz="0.05 0.01 0"/>
      <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.004" iyz="0" izz="0.004"/></inertial>
  </link>
  <link name="l4">
    <inertial><mass value="0.4"/><origin xyz="0.07 0 0.01" rpy="0 0 -0.3"/>
      <inertia ixx="2e-4" ixy="1e-5" ixz="0" iyy="0.002" iyz="0" izz="0.002"/></inertial>
  </link>
  <link name="tool"/>
  <joint name="pedestal_joint" type="fixed">
    <parent link="base"/><child link="pedestal"/><origin xyz="0.1 0 0.2" rpy="0 0 0.3"/>
  </joint>
  <joint name="j1" type="continuous">
    <parent link="pedestal"/><child link="l1"/><origin xyz="0 0 0.1"/><axis xyz="0 0 1"/>
    <limit effort="50" velocity="3"/><dynamics damping="0.5"/>
  </joint>
  <joint name="camera_joint" type="fixed">
    <parent link="l1"/><child link="camera"/><origin xyz="0 0.1 0.2" rpy="0 0.3 0"/>
  </joint>
  <joint name="j2" type="revolute">
    <parent link="l1"/><child link="l2"/><origin xyz="0.05 0 0.3" rpy="1.2 0 0.4"/>
    <axis xyz="0 0.6 0.8"/><limit lower="-2" upper="2" effort="40" velocity="2"/>
    <dynamics damping="0.2" friction="0"/>
  </joint>
  <joint name="flap_joint" type="revolute">
    <parent link="l2"/><child link="flap"/><origin xyz="0.2 0.05 0"/><axis xyz="1 0 0"/>
    <limit lower="0.2" upper="1" effort="1" velocity="1"/>
  </joint>
  <joint name="flap_tip_joint" type="fixed">
    <parent link="flap"/><child link="flap_tip"/><origin xyz="0 0.1 0"/>
  </joint>
  <joint name="l2_cover_joint" type="fixed">
    <parent link="l2"/><child link="l2_cover"/><origin xyz="0.4 0 0" rpy="0 0.5 0"/>
  </joint>
  <joint name="j3" type="prismatic">
    <parent link="l2_cover"/><child link="l3"/><origin xyz="0.1 0.02 0" rpy="0 0 0.7"/>
    <axis xyz="1 0 0"/><limit lower="-0.1" upper="0.3" effort="100" velocity="1"/>
    <dynamics damping="3"/>
  </joint>
  <joint name="j4" type="revolute">
    <parent link="l3"/><child link="l4"/><origin xyz="0.2 0 0" rpy="0 -0.6 0"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="10" velocity="5"/>
  </joint>
  <joint name="tool_joint" type="fixed">
    <parent link="l4"/><child link="tool"/><origin xyz="0.15 0 0"/>
  </joint>
</robot>
'''
LOCKED = {'flap_joint': 0.2}        # 0 clamped into its limits [0.2, 1]


def chain_spec(urdf_value, **fields):
    """A model file of ``urdf:`` (gravity tilted off the axes, to load every joint)."""
    return dict({'name': 'from_urdf', 'type': 'serial_chain', 'urdf': urdf_value,
                 'gravity': [0.4, -1.1, -9.7]}, **fields)


def synthetic_path(tmp_path):
    path = tmp_path / 'synthetic.urdf'
    path.write_text(SYNTHETIC)
    return str(path)


class Twin:
    """Our model of a URDF and Pinocchio's, with the map between their states.

    ``P`` maps our velocities to Pinocchio's (v_pin = P v): joints by name, a floating
    base's twist (ours: angular, linear; Pinocchio's free flyer: linear, angular).
    """

    def __init__(self, path, spec):
        self.model = model_from_dict(spec, 'twin')
        self.data = self.model.create_data()
        floating = self.model.floating_base is not None
        full = (pinocchio.buildModelFromUrdf(path, pinocchio.JointModelFreeFlyer()) if floating
                else pinocchio.buildModelFromUrdf(path))
        chain = set(self.model.joint_names) | {'root_joint'}
        locked = [name for name in full.names[1:] if name not in chain]
        reference = pinocchio.neutral(full)
        for name in locked:
            joint = full.joints[full.getJointId(name)]
            reference[joint.idx_q] = LOCKED.get(name, 0.0)
        self.pin = pinocchio.buildReducedModel(full, [full.getJointId(n) for n in locked],
                                               reference)
        # Pinocchio's root is the world with a free flyer, else the base: gravity turned
        # into the base by the base's rpy (Pinocchio's own rpyToMatrix)
        gravity = np.asarray(spec['gravity'], dtype=float)
        if not floating:
            rpy = spec.get('base', {}).get('rpy', [0.0, 0.0, 0.0])
            gravity = pinocchio.rpy.rpyToMatrix(*rpy).T @ gravity
        self.pin.gravity = pinocchio.Motion(gravity, np.zeros(3))
        self.pdata = self.pin.createData()
        nv, n = self.model.nv, self.model.n_joints
        self.P = np.zeros((nv, nv))
        for i, name in enumerate(self.model.joint_names):
            self.P[self.pin.joints[self.pin.getJointId(name)].idx_v, i] = 1.0
        if floating:
            start = self.pin.joints[self.pin.getJointId('root_joint')].idx_v
            for k in range(3):
                self.P[start + k, n + 3 + k] = self.P[start + 3 + k, n + k] = 1.0
        self.damping = self.P.T @ np.diag(self.pin.damping) @ self.P

    def pin_q(self, q):
        """Pinocchio's configuration of our q (continuous joints as cos, sin)."""
        out = pinocchio.neutral(self.pin)
        for i, name in enumerate(self.model.joint_names):
            joint = self.pin.joints[self.pin.getJointId(name)]
            if joint.nq == 2:
                out[joint.idx_q:joint.idx_q + 2] = math.cos(q[i]), math.sin(q[i])
            else:
                out[joint.idx_q] = q[i]
        if self.model.floating_base is not None:
            b, start = self.model.nv - 6, self.pin.joints[
                self.pin.getJointId('root_joint')].idx_q
            out[start:start + 3] = q[b:b + 3]
            out[start + 3:start + 6], out[start + 6] = q[b + 4:b + 7], q[b + 3]
        return out

    def states(self, seed):
        """Random (q, v, u): joints within their limits (at most +-pi), a unit quaternion."""
        rng = np.random.default_rng(seed)
        model = self.model
        for _ in range(STATES):
            q = model.neutral_configuration()
            q[:model.n_joints] = rng.uniform(np.maximum(model.lower, -np.pi),
                                             np.minimum(model.upper, np.pi))
            if model.floating_base is not None:
                b = model.nv - 6
                quat = rng.normal(size=4)
                q[b:b + 3], q[b + 3:] = rng.normal(size=3), quat / np.linalg.norm(quat)
            yield q, rng.normal(0.0, 2.0, model.nv), rng.normal(0.0, 10.0, model.nu)


def error(ours, expected):
    """Largest difference relative to max(1, |expected|)."""
    expected = np.asarray(expected, dtype=float)
    return float(np.max(np.abs(np.asarray(ours) - expected))
                 / max(1.0, float(np.max(np.abs(expected)))))


def tf_poses(model, data, q):
    """Every frame of the robot description in the base frame (the world with a floating
    base), composed from the transforms the plant publishes: ``joint_frames``' fixed ones,
    ``frame_transforms``' moving ones (and a floating base's pose from q)."""
    frames = [f for f in joint_frames(model) if f.kind != 'base' and f.parent != 'world']
    moving = [f for f in frames if f.moving]
    transforms = model.frame_transforms([(f.link, f.x if f.kind == 'section' else None)
                                         for f in moving])
    transforms.update(data, q)
    local = {f.child: (f.parent, lie.se3_from_origin(f.xyz, f.rpy))
             for f in frames if not f.moving}
    for frame, R, p in zip(moving, transforms.R, transforms.p):
        pose = np.eye(4)
        pose[:3, :3], pose[:3, 3] = R, p
        local[frame.child] = (frame.parent, pose)
    poses = {model.base_frame: model.base_pose(q) if model.floating_base is not None
             else np.eye(4)}

    def world(name):
        if name not in poses:
            parent, pose = local[name]
            poses[name] = world(parent) @ pose
        return poses[name]
    for name in local:
        world(name)
    return poses


def largest_differences(twin, seed=0):
    """Largest relative differences of M, h, v' and the URDF links' poses over the states."""
    model, data, pin = twin.model, twin.data, twin.pin
    worst = dict.fromkeys(('M', 'h', 'aba', 'frames'), 0.0)
    links = [f.name for f in pin.frames if f.type == pinocchio.FrameType.BODY]
    for q, v, u in twin.states(seed):
        qp, vp, P = twin.pin_q(q), twin.P @ v, twin.P
        M = pinocchio.crba(pin, twin.pdata, qp)
        M = np.triu(M) + np.triu(M, 1).T
        worst['M'] = max(worst['M'], error(model.mass_matrix(data, q), P.T @ M @ P))
        nle = P.T @ pinocchio.nonLinearEffects(pin, twin.pdata, qp, vp)
        worst['h'] = max(worst['h'], error(model.bias_forces(data, q, v),
                                           nle + twin.damping @ v))
        force = model.input_matrix() @ u - twin.damping @ v
        expected = P.T @ pinocchio.aba(pin, twin.pdata, qp, vp, P @ force)
        worst['aba'] = max(worst['aba'], error(model.forward_dynamics(data, q, v, u), expected))
        pinocchio.framesForwardKinematics(pin, twin.pdata, qp)
        poses = tf_poses(model, data, q)
        for name in links:
            placement = twin.pdata.oMf[pin.getFrameId(name, pinocchio.FrameType.BODY)]
            worst['frames'] = max(worst['frames'], error(poses[name], placement.homogeneous))
    return worst, links


# Largest differences measured (Pinocchio 4.1, 100 states): 5e-16 to 1e-14
# (doc/models.md, "Your own robot").
@pytest.mark.parametrize('name, fields', [
    ('ur5e_like', {}),
    ('ur5e_like', {'base': {'xyz': [0.3, -0.2, 1.0], 'rpy': [0.3, -0.5, 2.0]}}),
    ('panda_like', {'tip': 'panda_hand_tcp'}),
    ('synthetic', {}),
    ('synthetic', {'base': {'floating': True, 'xyz': [0.1, 0.2, 0.3], 'rpy': [0.1, 0.2, 0.3]}}),
], ids=['ur5e_like', 'ur5e_like_base_turned', 'panda_like', 'synthetic', 'synthetic_floating'])
def test_rigid_model_equals_pinocchio_on_the_same_urdf(name, fields, tmp_path):
    """M, h, forward dynamics and every URDF link's placement equal Pinocchio's (module doc).

    The joints, limits and damping read are the URDF's: Pinocchio's damping (its own
    reading) is what h and the accelerations are checked with; every link of the URDF,
    branch ones included, is a frame of the model's TF with its URDF name.
    """
    path = (synthetic_path(tmp_path) if name == 'synthetic'
            else os.path.join(URDFS, name + '.urdf'))
    twin = Twin(path, chain_spec(path, **fields))
    worst, links = largest_differences(twin)
    assert set(links) == set(yourdfpy.URDF.load(path, load_meshes=False,
                                                build_scene_graph=False).link_map)
    assert max(worst.values()) <= TOL, worst
    model = twin.model
    assert model.n_joints == {'ur5e_like': 6, 'panda_like': 7, 'synthetic': 4}[name]
    assert model.effort_limit.tolist() == list(twin.pin.effortLimit[
        [twin.pin.joints[twin.pin.getJointId(j)].idx_v for j in model.joint_names]])
    if name == 'synthetic':
        assert model.damping.diagonal()[:4].tolist() == [0.5, 0.2, 3.0, 0.0]
        assert model.joint_names == ('j1', 'j2', 'j3', 'j4')
        assert model.tool_frame == 'tool' and model.base_frame == 'base'


def test_the_generated_description_keeps_the_urdf_names(tmp_path):
    """The robot description of a URDF model has every link and joint of the URDF, parents
    as in the URDF except a chain joint after merged links (it hangs on the previous link's
    tip frame), and yourdfpy's forward kinematics of it puts every URDF link where Pinocchio
    does on the original file (expected: Pinocchio, as above)."""
    path = synthetic_path(tmp_path)
    twin = Twin(path, chain_spec(path))
    source = yourdfpy.URDF.load(path, load_meshes=False, build_scene_graph=False)
    written = yourdfpy.URDF.load(io.StringIO(urdf(twin.model)),
                                 load_meshes=False, build_scene_graph=True)
    assert written.validate()
    assert set(source.link_map) <= set(written.link_map)
    assert set(source.joint_map) <= set(written.joint_map)
    chain = {'j1': 'base', 'j2': 'l1_tip', 'j3': 'l2_tip', 'j4': 'l3_tip'}
    for name, joint in source.joint_map.items():
        assert written.joint_map[name].parent == chain.get(name, joint.parent), name
        assert written.joint_map[name].child == joint.child
    assert written.actuated_joint_names == ['j1', 'j2', 'j3', 'j4']
    assert written.joint_map['j1'].type == 'continuous'
    assert 'box' in urdf(twin.model) and 'rgba="1 0 0 1"' in urdf(twin.model)  # l1's visual
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = rng.uniform(-1.0, 1.0, 4) * [1, 1, 0.1, 1]
        written.update_cfg(dict(zip(twin.model.joint_names, q)))
        pinocchio.framesForwardKinematics(twin.pin, twin.pdata, twin.pin_q(q))
        for name in source.link_map:
            placement = twin.pdata.oMf[twin.pin.getFrameId(name, pinocchio.FrameType.BODY)]
            assert error(written.get_transform(name, 'base'), placement.homogeneous) < 1e-12


def test_a_urdf_rooted_at_world_is_the_world():
    """A URDF whose root is ``world`` (fixed to base_link, as many are) on a fixed base at
    the identity: its root is the world frame, not a frame mounted in it (no world -> world
    transform); the description has one ``world`` link and parses (yourdfpy)."""
    text = open(os.path.join(URDFS, 'ur5e_like.urdf')).read().replace(
        '<link name="base_link"/>', '<link name="world"/><link name="base_link"/><joint '
        'name="world_joint" type="fixed"><parent link="world"/><child link="base_link"/>'
        '<origin xyz="0 0 0.8"/></joint>')
    model = model_from_dict(chain_spec('-'), robot_description=lambda: text)
    assert model.base_frame == 'world'
    frames = joint_frames(model)
    assert [f.child for f in frames if f.parent == 'world'] == ['shoulder_link', 'base_link']
    written = yourdfpy.URDF.load(io.StringIO(urdf(model)), load_meshes=False,
                                 build_scene_graph=True)
    assert written.validate() and written.base_link == 'world'
    assert written.get_transform('base_link', 'world')[2, 3] == pytest.approx(0.8)


# -- a flexible link: the same chain written by hand ----------------------------------------

# l2 is made flexible: the next joint (j3, behind the fixed l2_end) sits at (0, 0, 0.3) in
# l2's frame, so the beam runs along l2's z axis, 0.3 m long.
FLEX = '''<?xml version="1.0"?>
<robot name="flex">
  <link name="base"/>
  <link name="l1"><inertial><mass value="1.0"/><origin xyz="0 0 0.1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.002"/></inertial></link>
  <link name="l2"><inertial><mass value="0.4"/><origin xyz="0 0 0.15"/>
    <inertia ixx="0.01" ixy="0.001" ixz="0" iyy="0.02" iyz="0" izz="0.005"/></inertial></link>
  <link name="l2_end"><inertial><mass value="0.2"/><origin xyz="0 0 0.01"/>
    <inertia ixx="1e-4" ixy="0" ixz="0" iyy="2e-4" iyz="0" izz="3e-4"/></inertial></link>
  <link name="l3"><inertial><mass value="0.3"/><origin xyz="0.1 0 0"/>
    <inertia ixx="1e-4" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>
  <link name="tool"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
    <origin xyz="0 0 0.1"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="20" velocity="4"/><dynamics damping="0.1"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/>
    <origin xyz="0 0 0.5"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="20" velocity="4"/></joint>
  <joint name="l2_end_joint" type="fixed"><parent link="l2"/><child link="l2_end"/>
    <origin xyz="0 0 0.3"/></joint>
  <joint name="j3" type="revolute"><parent link="l2_end"/><child link="l3"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="20" velocity="4"/></joint>
  <joint name="tool_joint" type="fixed"><parent link="l3"/><child link="tool"/>
    <origin xyz="0.1 0 0"/></joint>
</robot>
'''
BEAM = {'linear_density': 0.8, 'bending_stiffness': [30.0, 50.0], 'modes': [2, 1],
        'damping_ratio': 0.02}
ROD = {'material': {'density': 1100.0, 'young_modulus': 2.0e7, 'shear_modulus': 6.7e6},
       'section': {'shape': 'circle', 'radius': 0.02},
       'strains': {'bending_y': 2, 'bending_z': 1, 'torsion': 1}}
QUARTER = math.pi / 2


def by_hand(element):
    """The FLEX chain written by hand, l2 flexible (``element``: {'beam': ...} or {'rod': ...}).

    l2's beam frame F = U R with R = Ry(-pi/2), the smallest rotation taking x to z (about
    x cross z = -y): its joint origin becomes rpy (0, -pi/2, 0); the axis R^T (0, 1, 0) =
    (0, 1, 0); R^T = Ry(pi/2) maps (x, y, z) to (z, y, -x), so l2's centre of mass
    (0, 0, 0.15) is (0.15, 0, 0) in F and its inertia (ixx, iyy, izz, ixy, ixz, iyz) =
    (0.01, 0.02, 0.005, 0.001, 0, 0) is (izz, iyy, ixx, iyz, -ixz, -ixy) = (0.005, 0.02, 0.01,
    0, 0, -0.001). l2_end sits at F's tip (x = 0.3) turned by R^T: its body is the payload,
    com R^T (0, 0, 0.01) = (0.01, 0, 0), inertia diag(3e-4, 2e-4, 1e-4); j3's origin in the
    tip frame is R^T: rpy (0, pi/2, 0). Rigid links have length 0.
    """
    joint = {'effort_limit': 20.0, 'velocity_limit': 4.0, 'lower': -3.0, 'upper': 3.0}
    return {'name': 'flex', 'type': 'serial_chain', 'gravity': [0.3, 0.2, -9.8],
            'base': {'frame': 'base'}, 'tool_frame': 'tool_hand',
            'links': [
                {'name': 'l1', 'length': 0.0, 'mass': 1.0, 'com': [0, 0, 0.1],
                 'inertia': [0.01, 0.01, 0.002, 0, 0, 0],
                 'joint': dict(joint, name='j1', axis=[0, 0, 1], xyz=[0, 0, 0.1],
                               damping=0.1)},
                dict({'name': f'l2_{next(iter(element))}', 'length': 0.3, 'mass': 0.4,
                      'com': [0.15, 0, 0], 'inertia': [0.005, 0.02, 0.01, 0, 0, -0.001],
                      'payload': {'mass': 0.2, 'com': [0.01, 0, 0],
                                  'inertia': [3e-4, 2e-4, 1e-4, 0, 0, 0]},
                      'joint': dict(joint, name='j2', axis=[0, 1, 0], xyz=[0, 0, 0.5],
                                    rpy=[0, -QUARTER, 0])}, **element),
                {'name': 'l3', 'length': 0.0, 'mass': 0.3, 'com': [0.1, 0, 0],
                 'inertia': [1e-4, 0.001, 0.001, 0, 0, 0],
                 'joint': dict(joint, name='j3', axis=[0, 1, 0], rpy=[0, QUARTER, 0])}]}


@pytest.mark.parametrize('kind, element', [('beam', BEAM), ('rod', ROD)])
def test_a_flexible_link_equals_the_same_chain_written_by_hand(kind, element, tmp_path):
    """Read with l2 flexible, the FLEX URDF gives the model written by hand (`by_hand`): the
    same coordinates, M, h, forward dynamics and section frames at random states (modal
    coordinates too) to round-off; l2's own frame hangs on F turned by R^T = Ry(pi/2) and
    l2_end on F's tip (the hand-derived poses)."""
    path = tmp_path / 'flex.urdf'
    path.write_text(FLEX)
    ours = model_from_dict({'name': 'flex', 'type': 'serial_chain', 'urdf': str(path),
                            'gravity': [0.3, 0.2, -9.8], 'flexible': {'l2': {kind: element}}})
    hand = model_from_dict(by_hand({kind: element}))
    assert ours.coordinate_names == hand.coordinate_names
    assert ours.link_names == ('l1', f'l2_{kind}', 'l3')
    assert ours.links[1].length == pytest.approx(0.3, abs=1e-15)
    attached = {f.name: f for f in ours.links[1].attached}
    assert (attached['l2'].parent, attached['l2'].joint) == (f'l2_{kind}', 'l2_mount')
    assert (attached['l2_end'].parent, attached['l2_end'].joint) == (
        f'l2_{kind}_tip', 'l2_end_joint')
    for frame in attached.values():
        np.testing.assert_allclose(frame.xyz, 0.0, atol=1e-15)
        np.testing.assert_allclose(frame.rpy, [0.0, QUARTER, 0.0], atol=1e-15)
    d1, d2 = ours.create_data(), hand.create_data()
    rng = np.random.default_rng(4)
    for _ in range(STATES):
        q = rng.normal(0.0, 0.05, ours.nq)
        q[:3] = rng.uniform(-2.0, 2.0, 3)
        v, u = rng.normal(0.0, 1.0, ours.nv), rng.normal(0.0, 3.0, ours.nu)
        assert error(ours.mass_matrix(d1, q), hand.mass_matrix(d2, q)) < 1e-13
        assert error(ours.bias_forces(d1, q, v), hand.bias_forces(d2, q, v)) < 1e-13
        assert error(ours.forward_dynamics(d1, q, v, u),
                     hand.forward_dynamics(d2, q, v, u)) < 1e-12
        for j, link in enumerate(hand.parts):
            for x in (0.0, 0.5 * link.length, link.length):
                for a, b in zip(ours.section_pose(d1, q, j, x), hand.section_pose(d2, q, j, x)):
                    assert error(a, b) < 1e-14
        poses = tf_poses(ours, d1, q)
        R, p = hand.section_pose(d2, q, 1, 0.0)
        turned = np.eye(4)
        turned[:3, :3] = lie.so3_exp((0.0, QUARTER, 0.0))        # Ry(pi/2)
        assert error(poses['l2'], lie.se3_compose(pose_of(R, p), turned)) < 1e-14
        R, p = hand.section_pose(d2, q, 2, 0.0)
        assert error(poses['tool'], lie.se3_compose(pose_of(R, p), lie.se3_from_origin(
            (0.1, 0, 0), (0, 0, 0)))) < 1e-14


def pose_of(R, p):
    out = np.eye(4)
    out[:3, :3], out[:3, 3] = R, p
    return out


def test_a_link_pointing_back_turns_half_about_z(tmp_path):
    """UR5e-like forearm: its next joint sits at (-0.3922, 0, 0) (the URDF's a3), opposite
    to x: F is U turned by pi about z (the documented choice when no smallest turn exists),
    length 0.3922 m; the joint axis z stays z, forearm_link hangs on F turned back by pi."""
    model = load_model(EXAMPLE)
    link = model.links[2]
    assert (link.name, link.length) == ('forearm_link_beam', pytest.approx(0.3922, abs=1e-15))
    np.testing.assert_allclose(link.joint.axis, [0, 0, 1], atol=1e-15)
    own = lie.se3_from_origin(link.attached[0].xyz, link.attached[0].rpy)
    np.testing.assert_allclose(own[:3, :3], np.diag([-1.0, -1.0, 1.0]), atol=1e-15)
    # its hub: the file's 2.65 kg at (0, 0, 0.0265) in forearm_link, (0, 0, 0.0265) in F too
    assert link.body.mass == 2.65
    np.testing.assert_allclose(link.body.com, [0.0, 0.0, 0.0265], atol=1e-15)


def test_xacro_expands_to_the_same_model():
    """config/urdf/ur5e_like.urdf.xacro (DH parameters and published centres of mass, the
    inertial origins computed by xacro) gives the model of ur5e_like.urdf (written out by
    hand from the same numbers) to round-off."""
    spec = chain_spec(os.path.join(URDFS, 'ur5e_like.urdf.xacro'))
    expanded, written = model_from_dict(spec), model_from_dict(
        chain_spec(os.path.join(URDFS, 'ur5e_like.urdf')))
    assert expanded.joint_names == written.joint_names
    assert [f.child for f in joint_frames(expanded)] == [f.child for f in joint_frames(written)]
    d1, d2 = expanded.create_data(), written.create_data()
    rng = np.random.default_rng(8)
    for _ in range(STATES):
        q, v, u = rng.uniform(-3, 3, 6), rng.normal(size=6), rng.normal(size=6)
        assert error(expanded.mass_matrix(d1, q), written.mass_matrix(d2, q)) < 1e-14
        assert error(expanded.bias_forces(d1, q, v), written.bias_forces(d2, q, v)) < 1e-13
        assert error(expanded.forward_dynamics(d1, q, v, u),
                     written.forward_dynamics(d2, q, v, u)) < 1e-12
        a, b = tf_poses(expanded, d1, q), tf_poses(written, d2, q)
        assert max(error(a[name], b[name]) for name in b) < 1e-14


def test_xacro_arguments_and_find(tmp_path, monkeypatch):
    """xacro_args reach the file's $(arg ...); $(find flexible_manipulator) resolves to the
    package's share directory, here the source checkout (no AMENT_PREFIX_PATH); another
    package's $(find) is a one-line error naming it."""
    monkeypatch.delenv('AMENT_PREFIX_PATH', raising=False)
    (tmp_path / 'arm.urdf.xacro').write_text(
        '<robot name="arm" xmlns:xacro="http://www.ros.org/wiki/xacro">'
        '<xacro:arg name="reach" default="0.3"/>'
        '<xacro:include filename="$(find flexible_manipulator)/config/urdf/'
        'ur5e_like.urdf.xacro"/>'
        '<link name="extra"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" '
        'iyy="0.01" iyz="0" izz="0.01"/></inertial></link>'
        '<joint name="extra_joint" type="revolute"><parent link="tool0"/>'
        '<child link="extra"/><origin xyz="$(arg reach) 0 0"/><axis xyz="0 0 1"/>'
        '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>')
    model = model_from_dict(chain_spec(str(tmp_path / 'arm.urdf.xacro'),
                                       xacro_args={'reach': 0.25}))
    assert model.joint_names[-1] == 'extra_joint'
    assert model.links[-1].joint.xyz[0] == pytest.approx(0.25)
    (tmp_path / 'other.urdf.xacro').write_text(
        '<robot name="o" xmlns:xacro="http://www.ros.org/wiki/xacro">'
        '<xacro:include filename="$(find no_such_package)/x.xacro"/></robot>')
    with pytest.raises(ConfigError, match="^fx: urdf: package 'no_such_package' not found"):
        model_from_dict(chain_spec(str(tmp_path / 'other.urdf.xacro')), 'fx')


def test_package_uri_and_relative_paths(monkeypatch):
    """A package:// URI of this package and a path relative to the model file's directory
    name the same file (the shipped example's ../urdf/ur5e_like.urdf)."""
    monkeypatch.delenv('AMENT_PREFIX_PATH', raising=False)
    spec = yaml.safe_load(open(EXAMPLE))
    spec['urdf'] = 'package://flexible_manipulator/config/urdf/ur5e_like.urdf'
    by_uri, by_file = model_from_dict(spec), load_model(EXAMPLE)
    assert by_uri.coordinate_names == by_file.coordinate_names
    q = np.linspace(-1.0, 1.0, by_file.nq)
    assert error(by_uri.mass_matrix(by_uri.create_data(), q),
                 by_file.mass_matrix(by_file.create_data(), q)) == 0.0


def test_robot_description_text_from_a_function():
    """urdf: '-' takes the text from the caller's function (a node's /robot_description);
    without one it is refused, naming the field."""
    spec = yaml.safe_load(open(EXAMPLE))
    spec['urdf'] = '-'
    text = open(os.path.join(URDFS, 'ur5e_like.urdf')).read()
    model = model_from_dict(spec, robot_description=lambda: text)
    assert model.n_joints == 6 and model.n_modes == 4
    with pytest.raises(ConfigError, match="^model: urdf: '-' reads the robot_description "):
        model_from_dict(spec)


def test_the_shipped_example_simulates_half_a_second():
    """config/models/ur5e_flexible_forearm.yaml loads and falls under gravity for 0.5 s at
    the plant's default step (rk4, 0.5 ms). Expected from mechanics: the energy does not
    grow (only the beam's modal damping acts) and the angular momentum about the vertical
    pan axis, M v's pan entry, stays zero (gravity is vertical, the pan joint free and
    undamped)."""
    model = load_model(EXAMPLE)
    assert model.n_modes == 4 and model.tool_frame == 'tool0'
    data = model.create_data()
    q, v = model.neutral_configuration(), np.zeros(model.nv)
    q[:6] = [0.3, -1.0, 1.2, -0.5, 0.8, 0.0]

    def energy(q, v):
        return model.kinetic_energy(data, q, v) + model.potential_energy(data, q)
    start = energy(q, v)
    simulation = Simulation(model, 5e-4, 'rk4', q, v)
    simulation.advance(np.zeros(model.nu), 0.5)
    q, v = simulation.q, simulation.v
    assert np.all(np.isfinite(q)) and np.max(np.abs(v[:6])) > 1.0       # it moved
    assert energy(q, v) <= start + 1e-9 * abs(start)
    momentum = model.mass_matrix(data, q) @ v
    assert abs(momentum[0]) < 1e-9 * np.max(np.abs(momentum))


def test_a_program_row_on_a_rigid_urdf_link_is_its_origin():
    """A point row on a rigid link of a URDF (length 0: only its origin, x = 0) reads the
    link frame's origin, named as a tip; on the flexible forearm it reads the section at
    fraction x L (expected: the model's section_pose at those abscissae)."""
    from flexible_manipulator.control.program_config import parse_program
    model = load_model(EXAMPLE)
    spec = {'gains': {'alpha': 10.0}, 'rows': [
        {'type': 'point', 'link': 'wrist_3_link', 'axes': ['x', 'y', 'z'],
         'reference': {'type': 'constant', 'value': [0.3, 0.1, 0.4]}},
        {'type': 'point', 'link': 'forearm_link_beam', 'fraction': 0.5, 'axes': ['z'],
         'reference': {'type': 'constant', 'value': [0.2]}}]}
    program = parse_program(model, spec, 'tool', model.rigid_twin())
    assert program.row_names == ['wrist_3_link_tip_x', 'wrist_3_link_tip_y',
                                 'wrist_3_link_tip_z', 'forearm_link_beam_0.5L_z']
    assert [row.program.abscissa for row in program.rows] == [0.0, pytest.approx(0.1961)]


def test_coulomb_friction_is_read_and_the_model_file_overrides_it(tmp_path):
    """A chain joint's <dynamics friction> is its Coulomb level in the model (no warning);
    the model file's ``friction:`` replaces it (one number, or joint: value, the others
    keeping the URDF's), ``friction_velocity:`` its v_s; a bad value is one line naming
    the field. The model's h(q, v) then holds F_c tanh(v / v_s) on that joint: the bias
    at v minus the frictionless model's (the same URDF with friction 0) is exactly that."""
    path = tmp_path / 'friction.urdf'
    path.write_text(SYNTHETIC.replace('damping="0.2" friction="0"',
                                      'damping="0.2" friction="1.5"'))
    with warnings.catch_warnings():
        warnings.simplefilter('error', ModelWarning)
        model = model_from_dict(chain_spec(str(path)))
    j2 = model.joint_names.index('j2')
    assert model.friction[j2] == 1.5 and model.friction.sum() == 1.5
    assert model.friction_velocity[j2] == 0.01
    frictionless = model_from_dict(chain_spec(synthetic_path(tmp_path)))
    rng = np.random.default_rng(3)
    q, v = model.neutral_configuration(), rng.normal(0.0, 0.02, model.nv)
    difference = (model.bias_forces(model.create_data(), q, v)
                  - frictionless.bias_forces(frictionless.create_data(), q, v))
    expected = np.zeros(model.nv)
    expected[j2] = 1.5 * np.tanh(v[j2] / 0.01)
    assert np.abs(difference - expected).max() < 1e-12
    overlay = model_from_dict(chain_spec(str(path), friction={'j1': 0.7},
                                         friction_velocity=0.05))
    assert overlay.friction[[0, j2]].tolist() == [0.7, 1.5]
    assert np.all(overlay.friction_velocity[:model.n_joints] == 0.05)
    every = model_from_dict(chain_spec(str(path), friction=0.25))
    assert np.all(every.friction[:model.n_joints] == 0.25)
    for fields, message in (
            ({'friction': -1.0}, 'friction: must be >= 0, got -1'),
            ({'friction': {'j2': -0.5}}, 'friction.j2: must be >= 0, got -0.5'),
            ({'friction': {'j9': 1.0}}, "friction.j9: no moving joint 'j9' in the chain"),
            ({'friction_velocity': 0.0}, 'friction_velocity: must be > 0, got 0')):
        with pytest.raises(ConfigError) as caught:
            model_from_dict(chain_spec(str(path), **fields), 'bad')
        assert '\n' not in str(caught.value)
        assert str(caught.value).startswith('bad: ' + message), str(caught.value)


# -- refusals ------------------------------------------------------------------------------

def refusal(text, match, **fields):
    """The ConfigError of the SYNTHETIC chain edited to ``text``, matched at its start."""
    with pytest.raises(ConfigError) as caught:
        model_from_dict(chain_spec('-', **fields), 'bad', robot_description=lambda: text)
    message = str(caught.value)
    assert '\n' not in message
    assert message.startswith('bad: ' + match), message
    return message


def test_refusals_name_the_element():
    """Each refusal of the module doc, one line naming the element (or the model file's
    field) at fault."""
    edit = SYNTHETIC.replace
    refusal(re.sub(r'(<link name="l3">)\s*<inertial>.*?</inertial>', r'\1', SYNTHETIC,
                   flags=re.S), "urdf: '-' (robot_description): link 'l3': no <inertial> "
            "(joint 'j3' moves it)")
    refusal(edit('name="j3" type="prismatic"', 'name="j3" type="floating"'),
            "urdf: '-' (robot_description): joint 'j3': a floating joint inside the chain")
    refusal(edit('name="j3" type="prismatic"', 'name="j3" type="planar"'),
            "urdf: '-' (robot_description): joint 'j3': a planar joint inside the chain")
    refusal(edit('<dynamics damping="3"/>', '<dynamics damping="3"/><mimic joint="j2"/>'),
            "urdf: '-' (robot_description): joint 'j3' <mimic>: a mimic joint")
    refusal(edit('<axis xyz="0 0.6 0.8"/>', '<axis xyz="0 0.6 0.9"/>'),
            "urdf: '-' (robot_description): joint 'j2' <axis xyz=\"0 0.6 0.9\">: not a unit "
            "vector")
    refusal(edit('<axis xyz="0 0.6 0.8"/>', '<axis xyz="0 0 0"/>'),
            "urdf: '-' (robot_description): joint 'j2' <axis xyz=\"0 0 0\">: not a unit vector "
            "(norm 0)")
    refusal(SYNTHETIC, "flexible.nowhere: no link 'nowhere' in the URDF",
            flexible={'nowhere': {'beam': BEAM}})
    refusal(SYNTHETIC, "flexible.camera: link 'camera' is not in the chain 'base' -> 'tool'",
            flexible={'camera': {'beam': BEAM}})
    refusal(SYNTHETIC, "flexible.l2_cover: link 'l2_cover' is fixed to its parent",
            flexible={'l2_cover': {'beam': BEAM}})
    refusal('<robot><link name="a"></robot>', "urdf: '-' (robot_description): not "
            'well-formed XML: mismatched tag')
    refusal('not xml at all', "urdf: '-' (robot_description): not well-formed XML")
    refusal('<model/>', "urdf: '-' (robot_description): <model>: expected a <robot> document")
    refusal(edit('<parent link="l3"/>', '<parent link="l33"/>'),
            "urdf: '-' (robot_description): joint 'j4': <parent link='l33'>: no such <link>")


def test_more_refusals_name_the_element():
    """Limits, damping, numbers, inertia, the tree, the tip and root, actuated joints."""
    edit = SYNTHETIC.replace
    where = "urdf: '-' (robot_description): "
    refusal(edit('<limit lower="-2" upper="2" effort="40" velocity="2"/>', ''),
            where + "joint 'j2': a revolute joint needs <limit>")
    refusal(edit('lower="-2" upper="2"', 'lower="2" upper="-2"'),
            where + "joint 'j2' <limit>: lower (2) must be below upper (-2)")
    refusal(edit('effort="40"', 'effort="0"'), where + "joint 'j2' <limit effort=\"0\">: must "
            'be > 0')
    refusal(edit('<dynamics damping="3"/>', '<dynamics damping="-3"/>'),
            where + "joint 'j3' <dynamics damping=\"-3\">: must be >= 0")
    refusal(edit('<dynamics damping="3"/>', '<dynamics damping="3" friction="-2"/>'),
            where + "joint 'j3' <dynamics friction=\"-2\">: must be >= 0")
    refusal(edit('<mass value="0.8"/>', '<mass value="heavy"/>'),
            where + "link 'l3' <inertial>: <mass value='heavy'>: expected 1 finite number")
    refusal(edit('<origin xyz="0.2 0 0" rpy="0 -0.6 0"/>', '<origin xyz="0.2 0 nan"/>'),
            where + "joint 'j4': <origin xyz='0.2 0 nan'>: expected 3 finite numbers")
    refusal(edit('ixx="0.001" ixy="0" ixz="0" iyy="0.004"', 'ixx="-0.001" ixy="0" ixz="0" '
                 'iyy="0.004"'), where + "link 'l3' <inertial>: <inertia>: not positive "
            'semidefinite')
    refusal(edit('<parent link="l3"/><child link="l4"/>', '<parent link="l3"/><child '
                 'link="l2"/>'), where + "link 'l2': child of two joints ('j2', 'j4')")
    refusal(edit('<link name="tool"/>', '<link name="tool"/><link name="stray"/>'),
            where + "expected one root link (the child of no joint), found 2: 'base', 'stray'")
    refusal(SYNTHETIC, "tip: link 'base' is not under the root 'l2'", root='l2', tip='base')
    refusal(SYNTHETIC, "root: no link 'nowhere' in the URDF", root='nowhere')
    refusal(edit('<link name="flap_tip"/>', '<link name="flap_tip"/><link name="x"/>').replace(
        '<joint name="tool_joint"', '<joint name="x_joint" type="revolute"><parent '
        'link="flap_tip"/><child link="x"/><limit lower="-1" upper="1" effort="1" '
        'velocity="1"/></joint><joint name="tool_joint"'),
        "tip: the tree under 'base' ends in 2 links behind 4 moving joints each ('tool', 'x')")
    refusal(SYNTHETIC, "actuated: joint 'j3' is left out", actuated=['j1', 'j2', 'j4'])
    refusal(SYNTHETIC, "actuated[0]: no moving joint 'flap_joint' in the chain",
            actuated=['flap_joint'])
    refusal(SYNTHETIC, "flexible.l4: link 'l4' has no length for a beam or a rod (the tip "
            'link, where the last link ends, is its own frame', tip='l4',
            flexible={'l4': {'beam': BEAM}})
    refusal(SYNTHETIC, 'links: a model file takes links: or urdf:, not both', links=[])
    refusal(SYNTHETIC, "base.frame: with urdf: the base is the chain's root link",
            base={'frame': 'b'})
    refusal(edit('"camera"', '"l2_tip"'), "urdf: frame name 'l2_tip' is used twice")
    refusal(SYNTHETIC, 'flexible.l2: expected one block of a link kind (rod, beam, '
            'flexible_joint), got 0', flexible={'l2': {'frames': 2}})


LOAD = {'mass': 1.7, 'com': [0.01, -0.02, 0.05], 'inertia': [0.004, 0.005, 0.003, 1e-4, 0.0,
                                                             -2e-4]}
LOAD_LINK = '''  <link name="load">
    <inertial><origin xyz="0.01 -0.02 0.05" rpy="0 0 0"/><mass value="1.7"/>
      <inertia ixx="0.004" iyy="0.005" izz="0.003" ixy="1e-4" ixz="0.0" iyz="-2e-4"/>
    </inertial>
  </link>
  <joint name="load_joint" type="fixed"><parent link="tool0"/><child link="load"/>
    <origin xyz="0 0 0" rpy="0 0 0"/></joint>
</robot>'''


@pytest.mark.parametrize('flexible', [{}, {'forearm_link': {'beam': BEAM}},
                                      {'wrist_3_link': {'beam': BEAM}}])
def test_a_declared_payload_is_the_same_load_fixed_to_the_tip_in_the_urdf(flexible,
                                                                          tmp_path):
    """``payload:`` (a body in the tip link's frame) gives the same M and h as that body
    written into the URDF as a link fixed to tool0 (a branch, lumped by the reader's own
    rule): a rigid last link and a flexible last link (wrist_3 as a beam) alike. Then the
    uncertainty's payload factor scales it: at x2 the model equals the one with a payload
    of twice the mass and inertia (mechanics/perturbation.py), and a URDF model with no
    declared payload is unchanged by the factor (its tool links are the link's own body)."""
    from flexible_manipulator.mechanics.perturbation import perturbed
    path = os.path.join(URDFS, 'ur5e_like.urdf')
    loaded = tmp_path / 'loaded.urdf'
    loaded.write_text(open(path).read().replace('</robot>', LOAD_LINK))
    declared = model_from_dict(chain_spec(path, tip='tool0', payload=LOAD, flexible=flexible))
    written = model_from_dict(chain_spec(str(loaded), tip='tool0', flexible=flexible))
    bare = model_from_dict(chain_spec(path, tip='tool0', flexible=flexible))
    double = model_from_dict(chain_spec(path, tip='tool0', flexible=flexible, payload=dict(
        LOAD, mass=2 * LOAD['mass'], inertia=[2 * x for x in LOAD['inertia']])))
    rng = np.random.default_rng(4)
    pairs = [(declared, written), (perturbed(declared, payload=2.0), double),
             (perturbed(bare, payload=2.0), bare)]
    for ours, reference in pairs:
        data, other = ours.create_data(), reference.create_data()
        for _ in range(3):
            q = reference.neutral_configuration().astype(float)
            q[:6] = rng.uniform(-2.0, 2.0, 6)
            q[6:] = rng.uniform(-1e-3, 1e-3, q.size - 6)
            v = rng.uniform(-1.0, 1.0, reference.nv)
            np.testing.assert_allclose(ours.mass_matrix(data, q), reference.mass_matrix(
                other, q), rtol=1e-10, atol=1e-10)
            np.testing.assert_allclose(ours.bias_forces(data, q, v), reference.bias_forces(
                other, q, v), rtol=1e-10, atol=1e-9)
    assert not np.allclose(declared.mass_matrix(declared.create_data(), q),
                           bare.mass_matrix(bare.create_data(), q))


def test_a_bad_payload_names_its_field():
    """A payload that is no body, or a negative mass, is refused naming ``payload``."""
    path = os.path.join(URDFS, 'ur5e_like.urdf')
    for payload, match in [(5.0, 'payload'), ({'mass': -1.0}, 'payload.mass'),
                           ({'mass': 1.0, 'colour': 'red'}, 'payload')]:
        with pytest.raises(ConfigError, match=match):
            model_from_dict(chain_spec(path, payload=payload))


def test_armature_adds_the_reflected_rotor_inertia_to_its_joint():
    """``armature:`` (one value, or per joint) adds a to the joint's diagonal entry of M
    and nothing else (the rotor spins with the joint through its gear: kinetic energy
    a theta'^2 / 2); h is unchanged (no velocity product, no gravity of a rotor on its
    axis). Unknown joints and negative values are refused naming the field."""
    path = os.path.join(URDFS, 'ur5e_like.urdf')
    bare = model_from_dict(chain_spec(path))
    every = model_from_dict(chain_spec(path, armature=0.1))
    some = model_from_dict(chain_spec(path, armature={'elbow_joint': 0.3, 'wrist_3_joint': 0.05}))
    rng = np.random.default_rng(7)
    q, v = rng.uniform(-2.0, 2.0, 6), rng.uniform(-1.0, 1.0, 6)
    M = bare.mass_matrix(bare.create_data(), q)
    np.testing.assert_allclose(every.mass_matrix(every.create_data(), q), M + 0.1 * np.eye(6),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(some.mass_matrix(some.create_data(), q),
                               M + np.diag([0.0, 0.0, 0.3, 0.0, 0.0, 0.05]), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(every.bias_forces(every.create_data(), q, v),
                               bare.bias_forces(bare.create_data(), q, v), rtol=1e-12,
                               atol=1e-12)
    for armature, match in [({'knee': 0.1}, "armature.knee: no moving joint 'knee'"),
                            (-0.1, 'armature'), ({'elbow_joint': 'x'}, 'armature.elbow_joint')]:
        with pytest.raises(ConfigError, match=match):
            model_from_dict(chain_spec(path, armature=armature))
