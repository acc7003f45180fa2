"""The ROS-free core imports without ROS: dynamics and control never import rclpy.

Expected: every module of `mechanics`, `control`, `description`, `identification` and
`view` (the browser view's scene, geometry and panel; `nodes.view_node` feeds it),
plus `model_config` (and the modules it reads model files with: `config_checks`,
`config_files`, `link_config`, `urdf_config`, `servo_config`), `settings`, `graph`,
`compile_kernels`, `plant_config`, `closed_loop`, the learning environments (`envs`),
the studies (`studies`: a ROS graph run starts bringup as a process) and the
recording's reader and figures, imports in a fresh interpreter in which importing
rclpy, ament_index_python, any rosidl package or any message package raises ImportError
(so a module-level ROS import anywhere in the core fails the test, and a lazily imported
one is not loaded). Only `nodes` and the recorder may talk to ROS. Where a pip-only
requirement is not installed (`PIP_ONLY`: a ROS 2 install without
requirements-ros.txt), the modules that import it
are left out (the view without viser, the studies' table and runner without pyarrow).
"""

import glob
import importlib.util
import os
import subprocess
import sys

from conftest import REPO

CORE = ('flexible_manipulator.mechanics', 'flexible_manipulator.control',
        'flexible_manipulator.description', 'flexible_manipulator.identification',
        'flexible_manipulator.envs', 'flexible_manipulator.studies',
        'flexible_manipulator.view')
SINGLE = ('flexible_manipulator.model_config', 'flexible_manipulator.config_checks',
          'flexible_manipulator.config_files', 'flexible_manipulator.link_config',
          'flexible_manipulator.urdf_config', 'flexible_manipulator.servo_config',
          'flexible_manipulator.settings',
          'flexible_manipulator.doc_blocks',
          'flexible_manipulator.graph', 'flexible_manipulator.compile_kernels',
          'flexible_manipulator.plant_config', 'flexible_manipulator.closed_loop',
          'flexible_manipulator.recording.series', 'flexible_manipulator.recording.figures')

PIP_ONLY = ('viser', 'pyarrow')       # imported at module level by view, studies

PROBE = r'''
import importlib, importlib.abc, pkgutil, sys

BLOCKED = ('rclpy', 'ament_index_python', 'rosidl', 'rmw', 'builtin_interfaces')


class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.split('.')[0]
        if top.startswith(BLOCKED) or top.endswith('_msgs'):
            raise ImportError(f'ROS module {name!r} imported by the ROS-free core')
        return None


sys.meta_path.insert(0, Block())
names = list(SINGLE)
for package in CORE:
    module = importlib.import_module(package)
    names += [info.name for info in pkgutil.walk_packages(module.__path__, package + '.')]
for name in names:
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name.split('.')[0] not in MISSING:
            raise
ros = sorted(m for m in sys.modules if m.split('.')[0].startswith(BLOCKED))
assert not ros, ros
print(len(names))
'''


def test_core_modules_import_with_ros_blocked():
    missing = [m for m in PIP_ONLY if importlib.util.find_spec(m) is None]
    code = f'CORE = {CORE!r}\nSINGLE = {SINGLE!r}\nMISSING = {missing!r}\n' + PROBE
    result = subprocess.run([sys.executable, '-c', code], cwd=REPO, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert int(result.stdout.split()[-1]) > 30      # the walk found the modules


def test_the_probe_fails_when_a_core_module_imports_rclpy(tmp_path):
    """The same probe on a package that imports rclpy fails (the block is effective)."""
    package = tmp_path / 'fake_core'
    package.mkdir()
    (package / '__init__.py').write_text('')
    (package / 'law.py').write_text('import rclpy\n')
    code = "CORE = ('fake_core',)\nSINGLE = ()\nMISSING = []\n" + PROBE
    result = subprocess.run([sys.executable, '-c', code], cwd=tmp_path, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode != 0
    assert "ROS module 'rclpy' imported by the ROS-free core" in result.stderr


RUN_TIME = r'''
import importlib, pkgutil, sys
import flexible_manipulator
names = [info.name for info in pkgutil.walk_packages(flexible_manipulator.__path__,
                                                      'flexible_manipulator.')
         if not info.name.startswith(('flexible_manipulator.mechanics.reference',
                                      'flexible_manipulator.launch_actions'))]
# launch_actions needs `launch`, which the package indexes do not hold (doc/testing.md)
for name in names:
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name.split('.')[0] not in MISSING:
            raise
# (the walk itself imports the empty package to list it; its modules must stay unloaded)
loaded = sorted(m for m in sys.modules
                if m.startswith('flexible_manipulator.mechanics.reference.'))
assert not loaded, loaded
print(len(names))
'''


def test_no_run_time_module_imports_the_reference_code():
    """Every module of the package but `mechanics.reference` (nodes, plant, controller,
    kernels) imports without loading the reference implementations: what the tests check
    the kernels against stays off the tick path (the NumPy reference must not run in a
    plant)."""
    missing = [m for m in PIP_ONLY if importlib.util.find_spec(m) is None]
    result = subprocess.run([sys.executable, '-c', f'MISSING = {missing!r}\n' + RUN_TIME],
                            cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert int(result.stdout.split()[-1]) > 60


MAX_LINES = 600
# Modules allowed past MAX_LINES, each with why it is not split.
LONG_MODULES = {}


def test_no_module_is_longer_than_the_limit():
    """Every module of the package has at most `MAX_LINES` lines, but `LONG_MODULES`.

    A longer module holds more than one concept: split it along its seams. An exempt
    module that has come under the limit leaves the list.
    """
    lengths = {}
    for path in glob.glob(os.path.join(REPO, 'flexible_manipulator', '**', '*.py'),
                          recursive=True):
        with open(path, encoding='utf-8') as stream:
            lengths[os.path.relpath(path, REPO)] = sum(1 for _ in stream)
    assert len(lengths) > 100                   # the walk found the package
    long = sorted(f'{path}: {n} lines' for path, n in lengths.items()
                  if n > MAX_LINES and path not in LONG_MODULES)
    assert not long, f'modules past {MAX_LINES} lines: {long}'
    short = sorted(path for path in LONG_MODULES if lengths.get(path, 0) <= MAX_LINES)
    assert not short, f'exempt modules now within {MAX_LINES} lines (unlist them): {short}'
