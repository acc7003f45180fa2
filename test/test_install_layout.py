"""The set-up's prefix is a valid ament prefix, laid out as `colcon build --symlink-install`.

Expected (the layout ros2launch and launch_ros search, and that colcon produces): every
file of launch/ and config/ is found by a walk of the package's share directory that does
not follow directory links (ros2launch's search), and every console script of setup.py is
an executable at <prefix>/lib/flexible_manipulator/<name> (where `ros2 run` and
launch_ros's Node look).
"""

import os
import re

from ament_index_python.packages import get_package_prefix, get_package_share_directory

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def files_under(root, directory):
    """Relative paths of the files below ``root/directory``, found by walking ``root``
    without following directory links (as ros2launch searches a share directory)."""
    found = set()
    for path, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != '__pycache__']
        found |= {os.path.relpath(os.path.join(path, f), root) for f in files}
    return {f for f in found if f.startswith(directory + os.sep)}


def test_share_directory_holds_every_launch_and_config_file():
    share = get_package_share_directory('flexible_manipulator')
    for directory in ('launch', 'config'):
        expected = files_under(REPO, directory)
        assert expected, directory
        assert files_under(share, directory) >= expected
    assert os.path.isfile(os.path.join(share, 'package.xml'))


def test_every_console_script_is_where_ros2_run_looks():
    with open(os.path.join(REPO, 'setup.py')) as stream:
        names = re.findall(r"'(\w+) = flexible_manipulator[.\w]+:\w+'", stream.read())
    assert {'plant', 'controller', 'bringup', 'servo_plant', 'servo_controller',
            'container'} <= set(names)
    lib = os.path.join(get_package_prefix('flexible_manipulator'), 'lib', 'flexible_manipulator')
    for name in names:
        path = os.path.join(lib, name)
        assert os.path.isfile(path) and os.access(path, os.X_OK), path
