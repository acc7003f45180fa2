"""Controller alone for a real arm: ``ros2 launch flexible_manipulator hil.launch.py``.

Hardware in the loop: the arm's driver (for example ros2_control with a
joint_state_broadcaster and an effort forward_command_controller) publishes the joint
states and takes the efforts; this file starts only the controller of
``flexible_manipulator.graph.HARDWARE_IN_THE_LOOP`` with config/hil.yaml (modal coordinates
estimated from the joint motion, the arm held while not tracking (``safe_action: hold``),
starts disabled).

Arguments (empty: the parameter file decides):

* ``joint_states_topic`` (default ``/joint_states``), ``effort_command_topic`` (default
  ``/effort_controller/commands``): the driver's topics (remappings);
* ``effort_limits``, ``effort_rate_limits``, ``velocity_limits``: per joint, as YAML lists
  (``effort_limits:='[4.0, 2.0]'``) [N m, N m/s, rad/s];
* ``joints``: order of the effort entries (YAML list); ``model``: the arm's model file;
  ``program_file``, ``active_program``; ``control_period`` [s]; ``state_timeout`` [s];
  a ``model`` that is not the parameter file's leaves out the file's values for its own
  arm (`flexible_manipulator.hil_config.ARM_PARAMETERS`: joints, limits, analysis pose,
  programs, the law): the controller takes them from the model (effort limits at the
  file's ``effort_limit_fraction`` of the model's, a hold and a joint program generated
  when no ``program_file`` is given; doc/hil.md);
* ``params_file``: replaces config/hil.yaml;
* ``record:=FILE``: record the run to an MCAP file (plot it with ``plot FILE``).

The controller keeps time by the stamps of the joint states it answers (and wall-clock
timers for its watchdog and diagnostics), so it needs no clock of its own.

Without ``launch`` the same node starts with ``controller --ros-args --params-file
<share>/config/hil.yaml -r joint_states:=<topic> -r effort_controller/commands:=<topic>
-p effort_limits:='[4.0, 2.0]'``.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, LogInfo, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
import yaml

from flexible_manipulator import graph
from flexible_manipulator.hil_config import for_model
from flexible_manipulator.launch_actions import (params_file as launch_params_file,
                                                 optional_recorder, optional_view, record_argument,
                                                 view_argument)

LIST_ARGUMENTS = ('effort_limits', 'effort_rate_limits', 'velocity_limits', 'joints')
NUMBER_ARGUMENTS = ('control_period', 'state_timeout')
TEXT_ARGUMENTS = ('model', 'program_file', 'active_program')


def controller_nodes(context):
    """Return the controller with the file's parameters, overridden by the arguments."""
    overrides = {}
    for name in LIST_ARGUMENTS:
        value = LaunchConfiguration(name).perform(context).strip()
        if value:
            items = yaml.safe_load(value)
            if not isinstance(items, list) or not items:
                raise ValueError(f'launch argument {name}: expected a YAML list such as '
                                 f"'[4.0, 2.0]', got {value!r}")
            overrides[name] = ([str(x) for x in items] if name == 'joints'
                               else [float(x) for x in items])
    for name in NUMBER_ARGUMENTS:
        value = LaunchConfiguration(name).perform(context).strip()
        if value:
            overrides[name] = float(value)
    for name in TEXT_ARGUMENTS:
        value = LaunchConfiguration(name).perform(context).strip()
        if value:
            overrides[name] = value
    remappings = [('joint_states', LaunchConfiguration('joint_states_topic').perform(context)),
                  ('effort_controller/commands',
                   LaunchConfiguration('effort_command_topic').perform(context))]
    params_file = launch_params_file(context)
    actions, parameters = [], [params_file, overrides]
    if 'model' in overrides:
        # Another arm than the file's: the file's values for its own arm are left out.
        values, dropped = for_model(params_file, overrides['model'])
        if dropped:
            parameters = [values, overrides]
            actions.append(LogInfo(msg=f"model {overrides['model']}: not the parameter "
                                       f"file's, so its {', '.join(dropped)} are not used "
                                       '(the model and the controller decide them)'))
    return actions + [Node(package=graph.PACKAGE, executable=spec.executable, name=spec.name,
                           output='screen', parameters=parameters, remappings=remappings)
                      for spec in graph.HARDWARE_IN_THE_LOOP]


def generate_launch_description():
    """Start the controller of graph.HARDWARE_IN_THE_LOOP with config/hil.yaml."""
    share = get_package_share_directory(graph.PACKAGE)
    arguments = [
        DeclareLaunchArgument('joint_states_topic', default_value='/joint_states',
                              description="The arm driver's joint state topic."),
        DeclareLaunchArgument('effort_command_topic',
                              default_value='/effort_controller/commands',
                              description="The arm's effort command topic (Float64MultiArray)."),
        DeclareLaunchArgument('params_file',
                              default_value=os.path.join(share, 'config',
                                                         graph.HIL_PARAMETERS),
                              description='Parameter file of the controller.'),
    ]
    for name in LIST_ARGUMENTS + NUMBER_ARGUMENTS + TEXT_ARGUMENTS:
        arguments.append(DeclareLaunchArgument(
            name, default_value='', description=f'Override {name} (empty: the parameter '
                                                'file decides).'))
    return LaunchDescription([*arguments, OpaqueFunction(function=controller_nodes),
                              record_argument(), optional_recorder(), *view_argument(),
                              optional_view()])
