"""Configuration files: YAML read, and the paths of this package's and ROS packages' files.

A file named without a path is looked up in the package's share directory (installed, or
the source checkout without ROS); ``package://`` URIs and xacro's ``$(find package)`` are
resolved through the ament index (`package_share_directory`).
"""

import os

import yaml

from .config_checks import ConfigError


def load_yaml(path, what='model file'):
    """Read a YAML mapping from ``path`` (a ``what``); syntax errors become `ConfigError`."""
    try:
        with open(path, encoding='utf-8') as stream:
            content = yaml.safe_load(stream)
    except OSError as error:
        raise ConfigError(f'{path}: cannot read {what} ({error.strerror})') from error
    except yaml.YAMLError as error:
        raise ConfigError(f'{path}: not valid YAML: {error}') from error
    if not isinstance(content, dict):
        raise ConfigError(f'{path}: expected a mapping at the top level, got '
                          f'{type(content).__name__}')
    return content


def resolve_config_path(name, subdirectory, share_directory=None):
    """Path of a YAML file: absolute, relative to the cwd, or a name in ``subdirectory``.

    ``subdirectory`` is relative to the package's share directory (``config/models``),
    found through the ament index; without ROS (a plain Python environment) it is the
    source checkout's. The ``.yaml`` suffix may be left out of a name.
    """
    if os.path.isabs(name) or os.path.exists(name):
        return name
    if share_directory is None:
        share_directory = _share_directory()
    filename = name if name.endswith('.yaml') else name + '.yaml'
    return os.path.join(share_directory, subdirectory, filename)


def _share_directory():
    """Return the package's installed share directory, else the source checkout's."""
    try:
        from ament_index_python.packages import (get_package_share_directory,
                                                 PackageNotFoundError)
    except ImportError:
        pass
    else:
        try:
            return get_package_share_directory('flexible_manipulator')
        except (PackageNotFoundError, OSError):     # not installed, or no AMENT_PREFIX_PATH
            pass
    checkout = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if os.path.isdir(os.path.join(checkout, 'config')):
        return checkout
    raise ConfigError('cannot find the package\'s config/: source a ROS 2 workspace that '
                      'installs flexible_manipulator, or give a file path')


def resolve_model_path(model, share_directory=None):
    """Path of a model file: absolute, relative to the cwd, or a name in ``config/models``."""
    return resolve_config_path(model, os.path.join('config', 'models'), share_directory)


def package_share_directory(package):
    """Share directory of a ROS package (package:// URIs, xacro's $(find package)).

    This package's own is found without ROS (`_share_directory`); another one needs the
    ament index of a sourced ROS 2 workspace.
    """
    if package == 'flexible_manipulator':
        return _share_directory()
    try:
        from ament_index_python.packages import get_package_share_directory
    except ImportError:
        get_package_share_directory = None
    try:
        if get_package_share_directory is not None:
            return get_package_share_directory(package)
    except (LookupError, OSError, ValueError):      # unknown, or no AMENT_PREFIX_PATH
        pass
    raise ConfigError(f'urdf: package {package!r} not found: without a sourced ROS 2 '
                      "workspace only flexible_manipulator's own files resolve; give a path")
