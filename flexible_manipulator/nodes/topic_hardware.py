"""The plant as the robot of ros2_control's topic-based hardware interface.

``joint_state_topic_hardware_interface/JointStateTopicSystem`` (ros-controls'
topic_based_hardware_interfaces) lets a ``controller_manager`` drive hardware that speaks
ROS topics: each update it publishes the joints' commands as a ``sensor_msgs/JointState``
(names, and one entry per joint in the field of its command interface: ``effort`` for
an effort interface) on ``joint_commands_topic`` (default ``/robot_joint_commands``), and
reads the robot's ``sensor_msgs/JointState`` (matched by name) from ``joint_states_topic``
(default ``/robot_joint_states``, read with sensor-data QoS: a reliable publisher matches
it). With the plant's ``ros2_control_topics`` on, the plant is that robot: commands in
(effort interfaces), its joint states out on the second topic as well as on
``/joint_states`` (which a ``joint_state_broadcaster`` would otherwise collide with).

A command goes through the plant's own intake (`SimulatedPlant.on_command_data`): the same
validation, effort limits, command timeout and lock-step answer as a
``Float64MultiArray`` on ``effort_controller/commands``. What is particular to the
message is checked here, and a bad one is rejected with a reason (the last valid command
stays in force): a joint name that is not the model's, a joint of the model missing, a
name twice, or no ``effort`` entry per name (the ros2_control block gave a joint a
position or velocity command interface: the simulated arm takes efforts).
"""

import numpy as np
from sensor_msgs.msg import JointState

from . import common
from .name_map import NameMap, Problem
from ..settings import Setting

SETTINGS = (
    Setting('ros2_control_topics', False,
            "Serve the topic interface of ros2_control's joint_state_topic_hardware_interface "
            '(effort commands as sensor_msgs/JointState by joint name, joint states out), '
            'beside effort_controller/commands.'),
    Setting('ros2_control_commands_topic', '/robot_joint_commands',
            'Topic of the hardware interface\'s commands (its joint_commands_topic).'),
    Setting('ros2_control_states_topic', '/robot_joint_states',
            'Topic the hardware interface reads the joint states from (its '
            'joint_states_topic).'))


def command_entries(msg, names):
    """Return the efforts of ``msg`` in the order of ``names``, or (None, the problem).

    ``names``: a `name_map.NameMap` of the joints of the plant's command entries (its
    ``joints`` parameter), without extras: a command for a joint the plant does not have
    is refused, not ignored.
    """
    match = names.match(msg.name)
    if isinstance(match, Problem):
        if match.kind == 'missing':
            return None, f'no command for joint {match.name!r}'
        return None, match.text('joint', names.names)
    efforts = np.zeros(len(names.names))
    if not match.pick(msg.effort, efforts):
        return None, (f'{len(msg.effort)} effort entries for {match.count} joints (give each '
                      'joint an effort command interface in the <ros2_control> block)')
    return efforts.tolist(), None


class TopicHardware:
    """The plant's side of the topic-based hardware interface (module doc)."""

    def __init__(self, plant, parameters):
        """Subscribe to the commands and create the states' publisher on ``plant``."""
        self.plant = plant
        self.names = NameMap(plant.model.joint_names[i] for i in plant.command_index)
        self.states_pub = common.quiet_publisher(plant, JointState,
                                                 parameters['ros2_control_states_topic'])
        common.quiet_subscription(plant, JointState, parameters['ros2_control_commands_topic'],
                                  self.on_command)

    def on_command(self, msg):
        """Take one command message through the plant's intake, or reject it."""
        efforts, problem = command_entries(msg, self.names)
        if efforts is None:
            self.plant.reject('ros2_control', f'on the ros2_control topic: {problem}')
            return
        self.plant.on_command_data(efforts)
