"""Servoconstraint closed loop: ``ros2 launch flexible_manipulator servo_closed_loop.launch.py``.

The nodes of ``flexible_manipulator.graph.SERVO_CLOSED_LOOP`` with config/servo_closed_loop.yaml:
a free servo plant in lockstep (no constraint, one input along b) and the servo controller,
which realizes the model's servoconstraint along b and so reproduces the
``servo`` model of the same body.

Arguments: ``model:=sleigh_free_actuated`` picks another free model of config/models for
both nodes (they must load the same file); ``servo_gain:=<1/s>`` sets the controller's
gamma; ``params_file:=...`` replaces config/servo_closed_loop.yaml; ``rviz:=true`` opens
RViz on the simulated time the plant publishes on /clock; ``record:=FILE`` records the
topics to an MCAP file (``plot FILE`` draws it); ``view:=true`` shows the graph in a web
browser.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from flexible_manipulator import graph
from flexible_manipulator.launch_actions import (params_file as launch_params_file,
                                                 optional_recorder, optional_rviz, optional_view,
                                                 record_argument, view_argument)


def closed_loop_nodes(context):
    """Nodes of graph.SERVO_CLOSED_LOOP; the model (both) and gain override the file if given."""
    params_file = launch_params_file(context)
    model = LaunchConfiguration('model').perform(context)
    gain = LaunchConfiguration('servo_gain').perform(context)
    nodes = []
    for spec in graph.SERVO_CLOSED_LOOP:
        overrides = {'use_sim_time': spec.sim_time}
        if model:
            overrides['model'] = model
        if gain and spec.name == 'controller':
            overrides['servo_gain'] = float(gain)
        nodes.append(Node(package=graph.PACKAGE, executable=spec.executable, name=spec.name,
                          output='screen', parameters=[params_file, overrides]))
    return nodes


def generate_launch_description():
    """Free servo plant and controller from config/servo_closed_loop.yaml, optional RViz."""
    share = get_package_share_directory(graph.PACKAGE)
    return LaunchDescription([
        DeclareLaunchArgument('model', default_value='',
                              description='Free model (realization: free) in config/models or '
                                          'a path, for both nodes (empty: the parameter file '
                                          'decides).'),
        DeclareLaunchArgument('servo_gain', default_value='',
                              description='Controller gain gamma [1/s] (empty: the parameter '
                                          'file decides).'),
        DeclareLaunchArgument('rviz', default_value='false', description='Open RViz.'),
        DeclareLaunchArgument('params_file',
                              default_value=os.path.join(share, 'config',
                                                         graph.SERVO_CLOSED_LOOP_PARAMETERS),
                              description='Parameter file of the plant and the controller.'),
        OpaqueFunction(function=closed_loop_nodes),
        optional_rviz('servo.rviz'),
        record_argument(),
        optional_recorder(),
        *view_argument(),
        optional_view(),
    ])
