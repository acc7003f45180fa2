"""The plant node on a model file of a URDF, over real DDS.

The shipped example (config/models/ur5e_flexible_forearm.yaml: the UR5e-like URDF with a
flexible forearm) runs from its file, and from the URDF published on /robot_description
(``urdf: '-'``). Expected values: the URDF's joint and link names (the file), and the
poses the model computes (validated against Pinocchio and a hand-written chain in
test_urdf_model.py) at the state the plant publishes, composed from the published TF;
the refusal's text is the documented one (doc/models.md).
"""

import io
import os

import numpy as np
import pytest
import yaml

from conftest import CONFIG, PLANT
from test_ros_plant import stamp_key, to_matrix
from test_urdf_model import tf_poses

pytestmark = [pytest.mark.ros, pytest.mark.timeout(150)]

EXAMPLE = os.path.join(CONFIG, 'models', 'ur5e_flexible_forearm.yaml')
URDF = os.path.join(CONFIG, 'urdf', 'ur5e_like.urdf')
JOINTS = ['shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint', 'wrist_1_joint',
          'wrist_2_joint', 'wrist_3_joint']
START = ('initial_positions', '[0.3,-1.0,1.2,-0.5,0.8,0.0]')


def latched():
    from rclpy.qos import DurabilityPolicy, QoSProfile
    return QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)


def from_topic(tmp_path):
    """The example model file with ``urdf: '-'`` (the robot_description topic)."""
    spec = yaml.safe_load(open(EXAMPLE))
    spec['urdf'] = '-'
    path = tmp_path / 'from_topic.yaml'
    path.write_text(yaml.safe_dump(spec))
    return str(path)


def subscribe_state(probe):
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage
    return (probe.subscribe(TFMessage, '/tf_static', latched()),
            probe.subscribe(TFMessage, '/tf'), probe.subscribe(JointState, '/joint_states'),
            probe.subscribe(JointState, '/modal_states'))


def test_the_plant_runs_the_urdf_example_with_the_urdf_names(probe, start_node):
    """From its file: the robot description keeps the URDF's links and joints; the joint
    states name the URDF's joints; world -> tool0, forearm_link and wrist_1_link composed
    from /tf_static and /tf are the model's poses at the published joint and modal
    coordinates (to 1e-9 m and rad)."""
    import yourdfpy
    from std_msgs.msg import String
    from flexible_manipulator.model_config import load_model
    description = probe.subscribe(String, '/robot_description', latched())
    static, dynamic, states, modes = subscribe_state(probe)
    start_node(PLANT, params_file=None,
               parameters=[('model', EXAMPLE), START, ('tf_period', '0.0')])
    probe.spin_until(lambda: description and static and len(states) >= 20, 60,
                     'robot description, tf_static and joint states')
    source = yourdfpy.URDF.load(URDF, load_meshes=False, build_scene_graph=False)
    written = yourdfpy.URDF.load(io.StringIO(description[0].data), load_meshes=False,
                                 build_collision_scene_graph=False)
    assert set(source.link_map) <= set(written.link_map)
    assert set(source.joint_map) <= set(written.joint_map)
    moved = [name for name in written.actuated_joint_names    # not the beam's sections
             if written.joint_map[name].type != 'floating']
    assert moved == JOINTS
    assert list(states[-1].name) == JOINTS
    model = load_model(EXAMPLE)
    data = model.create_data()
    edges = {t.child_frame_id: (t.header.frame_id, to_matrix(t.transform))
             for msg in static for t in msg.transforms}
    moving, elastic = {}, {stamp_key(m.header): m.position for m in modes}
    for msg in dynamic:
        for t in msg.transforms:
            moving.setdefault(stamp_key(t.header), {})[t.child_frame_id] = (
                t.header.frame_id, to_matrix(t.transform))
    checked = 0
    for state in states[-10:]:
        key = stamp_key(state.header)
        if key not in moving or key not in elastic:
            continue
        tree = dict(edges, **moving[key])
        q = np.concatenate([state.position, elastic[key]])
        expected = tf_poses(model, data, q)
        for name in ('tool0', 'forearm_link', 'wrist_1_link', 'forearm_link_beam_tip'):
            frame, pose = name, np.eye(4)
            while frame != 'world':
                parent, local = tree[frame]
                pose, frame = local @ pose, parent
            np.testing.assert_allclose(pose, expected[name], rtol=0, atol=1e-9, err_msg=name)
        checked += 1
    assert checked >= 5, 'too few /tf messages matched a joint-state stamp'


def test_the_plant_reads_the_urdf_on_robot_description(probe, start_node, tmp_path):
    """``urdf: '-'``: the plant takes the URDF latched on /robot_description, runs the arm
    with its joint names and TF, and publishes no description of its own (one publisher on
    the topic: the probe's)."""
    from std_msgs.msg import String
    publisher = probe.node.create_publisher(String, '/robot_description', latched())
    publisher.publish(String(data=open(URDF).read()))
    static, _, states, _ = subscribe_state(probe)
    plant = start_node(PLANT, params_file=None, parameters=[('model', from_topic(tmp_path)),
                                                            START])
    probe.spin_until(lambda: static and len(states) >= 10, 60, 'tf_static and joint states')
    assert list(states[-1].name) == JOINTS
    frames = {t.child_frame_id for msg in static for t in msg.transforms}
    assert {'tool0', 'flange', 'base', 'forearm_link', 'base_link'} <= frames
    assert probe.node.count_publishers('/robot_description') == 1
    assert plant.alive()


def test_the_plant_refuses_when_no_robot_description_comes(start_node, tmp_path):
    """``urdf: '-'`` and nothing on /robot_description: after the documented 10 s the
    plant exits 2 with one line saying what it waited for."""
    plant = start_node(PLANT, params_file=None, parameters=[('model', from_topic(tmp_path))])
    assert plant.wait(90) == 2
    assert ("urdf: '-': no robot description on /robot_description within 10 s"
            in plant.output())
