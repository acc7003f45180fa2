"""Launch actions the package's launch files share (imported by launch files only).

* `optional_rviz`: RViz when ``rviz:=true`` and the ``rviz2`` package is installed; a
  warning, and the rest of the graph, when it is not (not the whole launch failing on
  "package 'rviz2' not found");
* `given_overrides`: the launch arguments the user gave, so that an argument left empty
  leaves the parameter file in charge;
* `record_argument`, `optional_recorder`: ``record:=FILE`` records the graph's topics to
  an MCAP file (`recording.recorder`);
* `view_argument`, `optional_view`: ``view:=true`` shows the graph in a web browser
  (`nodes.view_node`; ``view_port:=8080``).
"""

import os

from ament_index_python.packages import get_package_share_directory, PackageNotFoundError
from launch.actions import DeclareLaunchArgument, LogInfo, OpaqueFunction
from launch.conditions import evaluate_condition_expression
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from . import graph


def params_file(context):
    """Return the ``params_file`` argument as a path (a path, or a name in config/).

    ``params_file:=sim_soft`` is config/sim_soft.yaml of the installed package.
    """
    from .config_files import resolve_config_path
    return resolve_config_path(LaunchConfiguration('params_file').perform(context), 'config',
                               get_package_share_directory(graph.PACKAGE))


def optional_rviz(config_name):
    """Start RViz on simulated time with ``config/<config_name>``, if asked and installed."""
    def start(context):
        if not evaluate_condition_expression(context, [LaunchConfiguration('rviz')]):
            return []
        try:
            get_package_share_directory('rviz2')
        except PackageNotFoundError:
            return [LogInfo(msg="rviz:=true, but the rviz2 package is not installed (sudo apt "
                                "install ros-$ROS_DISTRO-rviz2): the other nodes run without "
                                "it")]
        config = os.path.join(get_package_share_directory(graph.PACKAGE), 'config',
                              config_name)
        return [Node(package='rviz2', executable='rviz2', name='rviz2', output='screen',
                     arguments=['-d', config], parameters=[{'use_sim_time': True}])]
    return OpaqueFunction(function=start)


def record_argument():
    """Declare ``record`` (an MCAP file; empty: no recording)."""
    return DeclareLaunchArgument('record', default_value='',
                                 description='Record the topics to this MCAP file (empty: '
                                             'no recording); plot it with the plot command.')


def optional_recorder():
    """Start the recorder (`graph.RECORDER`) when ``record`` names a file."""
    def start(context):
        path = LaunchConfiguration('record').perform(context).strip()
        if not path:
            return []
        spec = graph.RECORDER
        return [Node(package=graph.PACKAGE, executable=spec.executable, name=spec.name,
                     output='screen', parameters=[{'path': os.path.abspath(path)}])]
    return OpaqueFunction(function=start)


def view_argument():
    """Declare ``view`` (true: start the browser view) and ``view_port``."""
    return [DeclareLaunchArgument('view', default_value='false',
                                  description='Show the graph in a web browser.'),
            DeclareLaunchArgument('view_port', default_value='8080',
                                  description='Port of the browser view.')]


def optional_view():
    """Start the view node (`graph.VIEW`) when ``view:=true``."""
    def start(context):
        if not evaluate_condition_expression(context, [LaunchConfiguration('view')]):
            return []
        spec = graph.VIEW
        port = int(LaunchConfiguration('view_port').perform(context))
        return [Node(package=graph.PACKAGE, executable=spec.executable, name=spec.name,
                     output='screen', parameters=[{'port': port}])]
    return OpaqueFunction(function=start)


def given_overrides(context, names):
    """Return {name: value} of the launch arguments among ``names`` that are not empty."""
    values = {name: LaunchConfiguration(name).perform(context).strip() for name in names}
    return {name: value for name, value in values.items() if value}
