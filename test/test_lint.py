"""The standard checks an ament_python package ships, as plain pytest.

flake8 (ament_flake8's line length 99), pep257 docstrings (ament_pep257's convention),
a valid format-3 package.xml (catkin_pkg, the parser colcon and rosdep use), and launch
files that compile.
"""

import os
import py_compile
import subprocess
import sys

import pytest

from conftest import REPO

PYTHON_DIRS = [p for p in ('flexible_manipulator', 'launch', 'test', 'bench', 'tools', 'examples',
                           'setup.py') if os.path.exists(os.path.join(REPO, p))]


@pytest.mark.linter
def test_flake8():
    """No flake8 findings in the package, launch files, tests and benchmarks."""
    result = subprocess.run([sys.executable, '-m', 'flake8', *PYTHON_DIRS], cwd=REPO,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.linter
def test_pep257():
    """Docstrings follow pep257 as ament_pep257 checks it (same ignore list)."""
    ignore = 'D100,D101,D102,D103,D104,D105,D106,D107,D404'
    result = subprocess.run([sys.executable, '-m', 'pydocstyle', '--convention=pep257',
                             f'--add-ignore={ignore}',
                             'flexible_manipulator', 'launch'], cwd=REPO,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.linter
def test_package_xml_is_a_valid_format_3_manifest():
    """catkin_pkg parses package.xml as format 3 with the declared run dependencies."""
    from catkin_pkg.package import parse_package
    package = parse_package(os.path.join(REPO, 'package.xml'))
    package.validate()
    assert package.package_format == 3 and package.name == 'flexible_manipulator'
    exec_deps = {d.name for d in package.exec_depends}
    for needed in ('rclpy', 'sensor_msgs', 'geometry_msgs', 'tf2_msgs', 'std_msgs', 'std_srvs',
                   'rosgraph_msgs', 'visualization_msgs', 'diagnostic_msgs', 'launch',
                   'launch_ros', 'python3-numpy', 'python3-scipy', 'python3-transforms3d'):
        assert needed in exec_deps, needed
    assert package.get_build_type() == 'ament_python'


@pytest.mark.linter
def test_launch_files_compile_and_start_the_shared_graph():
    """Launch files are valid Python and build their nodes from flexible_manipulator.graph."""
    launch_dir = os.path.join(REPO, 'launch')
    files = [f for f in os.listdir(launch_dir) if f.endswith('.launch.py')]
    assert 'sim.launch.py' in files
    for name in files:
        py_compile.compile(os.path.join(launch_dir, name), doraise=True)
    with open(os.path.join(launch_dir, 'sim.launch.py')) as stream:
        source = stream.read()
    assert 'graph.SIMULATION' in source and "'use_sim_time': True" in source
