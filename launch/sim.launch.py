"""Simulated arm and its controller: ``ros2 launch flexible_manipulator sim.launch.py``.

Arguments: ``rviz:=true`` opens RViz with the package's configuration;
``timing_mode:=lockstep`` runs the closed loop as fast as the computer allows;
``params_file:=...`` replaces config/sim.yaml. Every node runs on simulated time (/clock
from the plant). The same graph starts without launch through the ``bringup`` executable.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from flexible_manipulator import graph


def generate_launch_description():
    """Plant and controller from config/sim.yaml, optional RViz."""
    share = get_package_share_directory(graph.PACKAGE)
    params_file = LaunchConfiguration('params_file')
    timing_mode = LaunchConfiguration('timing_mode')
    nodes = [
        Node(package=graph.PACKAGE, executable=spec.executable, name=spec.name, output='screen',
             parameters=[params_file, {'use_sim_time': True}]
             + ([{'timing_mode': timing_mode}] if spec.name == 'plant' else []))
        for spec in graph.SIMULATION
    ]
    rviz = Node(package='rviz2', executable='rviz2', name='rviz2', output='screen',
                arguments=['-d', os.path.join(share, 'config', 'flexible_manipulator.rviz')],
                parameters=[{'use_sim_time': True}],
                condition=IfCondition(LaunchConfiguration('rviz')))
    return LaunchDescription([
        DeclareLaunchArgument('rviz', default_value='false', description='Open RViz.'),
        DeclareLaunchArgument('timing_mode', default_value='realtime',
                              description='Plant timing: realtime or lockstep.'),
        DeclareLaunchArgument('params_file',
                              default_value=os.path.join(share, 'config',
                                                         graph.SIMULATION_PARAMETERS),
                              description='Parameter file of the plant and the controller.'),
        *nodes,
        rviz,
    ])
