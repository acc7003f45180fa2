"""Servoconstraint plant: ``ros2 launch flexible_manipulator servo.launch.py``.

Arguments: ``model:=suslov_servo_generic`` picks a system of config/models (default: the
one in the parameter file, the servo-sleigh); ``timing_mode:=lockstep`` advances one period
per command (for a controller of a free plant); ``params_file:=...`` replaces
config/servo.yaml; ``rviz:=true`` opens RViz, on the simulated time that the plant
publishes on /clock; ``record:=FILE`` records the topics to an MCAP file (``plot FILE``
draws it); ``view:=true`` shows it in a web browser. Without ``launch``, the same node and
parameter file start with ``servo_plant --ros-args --params-file
<share>/config/servo.yaml``.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch_ros.actions import Node

from flexible_manipulator import graph
from flexible_manipulator.launch_actions import (params_file as launch_params_file,
                                                 given_overrides, optional_recorder, optional_rviz,
                                                 optional_view, record_argument, view_argument)


def servo_nodes(context):
    """Nodes of graph.SERVO; model and timing mode override the file only when given."""
    overrides = given_overrides(context, ['model', 'timing_mode'])
    params_file = launch_params_file(context)
    return [Node(package=graph.PACKAGE, executable=spec.executable, name=spec.name,
                 output='screen',
                 parameters=[params_file, {**overrides, 'use_sim_time': spec.sim_time}])
            for spec in graph.SERVO]


def generate_launch_description():
    """Servo plant from config/servo.yaml, optional RViz."""
    share = get_package_share_directory(graph.PACKAGE)
    return LaunchDescription([
        DeclareLaunchArgument('model', default_value='',
                              description='Model name in config/models or a path '
                                          '(empty: the parameter file decides).'),
        DeclareLaunchArgument('timing_mode', default_value='',
                              description='realtime or lockstep (empty: the parameter file '
                                          'decides).'),
        DeclareLaunchArgument('rviz', default_value='false', description='Open RViz.'),
        DeclareLaunchArgument('params_file',
                              default_value=os.path.join(share, 'config',
                                                         graph.SERVO_PARAMETERS),
                              description='Parameter file of the servo plant.'),
        OpaqueFunction(function=servo_nodes),
        optional_rviz('servo.rviz'),
        record_argument(),
        optional_recorder(),
        *view_argument(),
        optional_view(),
    ])
