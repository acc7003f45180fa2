"""Simulated flexible arm and its controller: ``ros2 launch flexible_manipulator sim.launch.py``.

The plant integrates config/models/two_link_flexible.yaml; the controller realizes the
programs of config/programs_two_link_flexible.yaml through the servo realization (joint
torques only, the first mode of each link modelled, modal states measured), by default the
lambda-point of the forearm on a circle (config/sim.yaml).

Arguments (each, when given, overrides the parameter file; left out, the file decides):
``rviz:=true`` opens RViz with the package's configuration (without rviz2 installed, a
warning and the rest of the graph); ``timing_mode:=lockstep`` runs the closed loop as fast
as the computer allows;
``active_program:=<name>`` starts another program of the program file;
``params_file:=...`` replaces config/sim.yaml; ``record:=FILE`` records the topics to an
MCAP file (``plot FILE`` draws it); ``view:=true`` shows the graph in a web browser
(``view_port:=8080``); ``composed:=false`` runs the plant and the controller in one process
each instead of composed in one (`nodes.container`, as ``bringup`` runs them: the
lock-step loop about twice as fast). RViz runs on simulated time (/clock from
the plant); the plant stamps its messages with its own simulated time and the controller
keeps time by the stamps of the states it answers (graph.NodeSpec.sim_time). The same
graph starts without launch through ``bringup``.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import evaluate_condition_expression
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from flexible_manipulator import graph
from flexible_manipulator.launch_actions import (params_file as launch_params_file,
                                                 given_overrides, optional_recorder, optional_rviz,
                                                 optional_view, record_argument, view_argument)


def simulation_nodes(context):
    """Nodes of graph.SIMULATION with the file's parameters and the given overrides."""
    params_file = launch_params_file(context)
    given = {'plant': given_overrides(context, ['timing_mode']),
             'controller': given_overrides(context, ['active_program'])}
    if evaluate_condition_expression(context, [LaunchConfiguration('composed')]):
        return [Node(package=graph.PACKAGE, executable='container', output='screen',
                     arguments=[spec.executable for spec in graph.SIMULATION],
                     ros_arguments=graph.container_ros_arguments(graph.SIMULATION,
                                                                 params_file, given))]
    nodes = []
    for spec in graph.SIMULATION:
        overrides = {'use_sim_time': True} if spec.sim_time else {}
        overrides.update(given.get(spec.name, {}))
        nodes.append(Node(package=graph.PACKAGE, executable=spec.executable, name=spec.name,
                          output='screen', parameters=[params_file, overrides]))
    return nodes


def generate_launch_description():
    """Plant and controller from config/sim.yaml, optional RViz."""
    share = get_package_share_directory(graph.PACKAGE)
    return LaunchDescription([
        DeclareLaunchArgument('rviz', default_value='false', description='Open RViz.'),
        DeclareLaunchArgument('timing_mode', default_value='',
                              description='Plant timing: realtime or lockstep (empty: the '
                                          'parameter file decides).'),
        DeclareLaunchArgument('active_program', default_value='',
                              description='Program of the controller (empty: the parameter '
                                          'file decides).'),
        DeclareLaunchArgument('params_file',
                              default_value=os.path.join(share, 'config',
                                                         graph.SIMULATION_PARAMETERS),
                              description='Parameter file of the plant and the controller.'),
        DeclareLaunchArgument('composed', default_value='true',
                              description='Plant and controller in one process (false: one '
                                          'process each).'),
        OpaqueFunction(function=simulation_nodes),
        optional_rviz('flexible_manipulator.rviz'),
        record_argument(),
        optional_recorder(),
        *view_argument(),
        optional_view(),
    ])
