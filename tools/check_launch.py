"""Run one of the package's launch files with the real launch and launch_ros, then stop it.

``launch`` and ``launch_ros`` are not on PyPI, so CI cannot run the launch files; this is
the manual check (doc/setup.md, "Checking the launch files by hand"). With launch and
launch_ros importable (a ROS 2 install, or built from their sources beside .venv)::

    python tools/check_launch.py launch/sim.launch.py 15 rviz:=true

starts the launch file with the given arguments, lets it run for the given wall seconds,
then shuts it down as Ctrl-C would, and exits with the launch service's code. Keep DDS on
this host (FASTDDS_BUILTIN_TRANSPORTS=SHM, ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST) and
pick a private ROS_DOMAIN_ID.
"""

import sys

from launch import LaunchDescription, LaunchService
from launch.actions import IncludeLaunchDescription, Shutdown, TimerAction
from launch.launch_description_sources import PythonLaunchDescriptionSource


def main(argv):
    """Run ``argv[0]`` (a launch file) for ``argv[1]`` seconds with ``name:=value`` args."""
    path, seconds = argv[0], float(argv[1])
    arguments = [item.split(':=', 1) for item in argv[2:]]
    service = LaunchService()
    service.include_launch_description(LaunchDescription([
        IncludeLaunchDescription(PythonLaunchDescriptionSource(path),
                                 launch_arguments=arguments),
        TimerAction(period=seconds, actions=[Shutdown(reason='check over')]),
    ]))
    return service.run()


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
