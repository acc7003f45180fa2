"""Build mechanical models from YAML files, refusing bad files with the field at fault.

A model file describes one mechanism (see ``config/models/*.yaml``)::

    name: two_link_rigid
    type: planar_chain          # the only type so far
    gravity: [0, 0, -9.81]      # world frame [m/s^2]
    base: {frame: base_link, xyz: [0, 0, 0], rpy: [1.5708, 0, 0]}  # pose in the world
    tool_frame: tool0
    links:
      - {name: link1, joint: shoulder, length: 0.5, mass: 1.0, com: 0.25, inertia: 0.02,
         damping: 0.0, effort_limit: 40.0, velocity_limit: 8.0, lower: -3.14, upper: 3.14}

Every error is a `ConfigError` whose message starts with the dotted path of the field
(``links[1].length``) and says what was expected.
"""

import math
import os

import numpy as np
import transforms3d
import yaml

from .mechanics.planar_chain import PlanarChainModel, RigidLink


class ConfigError(ValueError):
    """A configuration value is missing, of the wrong kind or out of range."""


def load_yaml(path):
    """Read a YAML mapping from ``path``; syntax errors become `ConfigError`."""
    try:
        with open(path, encoding='utf-8') as stream:
            content = yaml.safe_load(stream)
    except OSError as error:
        raise ConfigError(f'{path}: cannot read model file ({error.strerror})') from error
    except yaml.YAMLError as error:
        raise ConfigError(f'{path}: not valid YAML: {error}') from error
    if not isinstance(content, dict):
        raise ConfigError(f'{path}: expected a mapping at the top level, got '
                          f'{type(content).__name__}')
    return content


def number(value, field, minimum=-math.inf, strict_minimum=False, allow_infinite=False):
    """Return ``value`` as a float, checking that it is a real number in range."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f'{field}: expected a number, got {value!r}')
    value = float(value)
    if math.isnan(value) or (math.isinf(value) and not allow_infinite):
        raise ConfigError(f'{field}: expected a finite number, got {value}')
    if value < minimum or (strict_minimum and value == minimum):
        bound = '>' if strict_minimum else '>='
        raise ConfigError(f'{field}: must be {bound} {minimum:g}, got {value:g}')
    return value


def vector(value, field, size):
    """Return ``value`` as a float array of ``size`` finite numbers."""
    if not isinstance(value, (list, tuple)) or len(value) != size:
        raise ConfigError(f'{field}: expected a list of {size} numbers, got {value!r}')
    return np.array([number(item, f'{field}[{i}]') for i, item in enumerate(value)])


def name(value, field):
    """Return ``value`` if it is a usable ROS name component (frame, joint or link name)."""
    if not isinstance(value, str) or not value or not value.replace('_', 'a').isalnum():
        raise ConfigError(f'{field}: expected a non-empty name of letters, digits and '
                          f"underscores, got {value!r}")
    return value


def check_keys(mapping, field, required, optional=()):
    """Refuse a mapping with missing required keys or keys nobody reads (typos)."""
    if not isinstance(mapping, dict):
        raise ConfigError(f'{field}: expected a mapping, got {mapping!r}')
    prefix = f'{field}.' if field else ''
    for key in required:
        if key not in mapping:
            raise ConfigError(f'{prefix}{key}: required field is missing')
    unknown = sorted(set(mapping) - set(required) - set(optional))
    if unknown:
        raise ConfigError(f'{prefix}{unknown[0]}: unknown field (allowed: '
                          f'{", ".join(sorted(set(required) | set(optional)))})')


def _link(spec, field):
    check_keys(spec, field,
               required=('name', 'joint', 'length', 'mass', 'com', 'inertia', 'effort_limit',
                         'velocity_limit'),
               optional=('damping', 'lower', 'upper'))
    link = RigidLink(
        name=name(spec['name'], f'{field}.name'),
        joint=name(spec['joint'], f'{field}.joint'),
        length=number(spec['length'], f'{field}.length', 0.0, strict_minimum=True),
        mass=number(spec['mass'], f'{field}.mass', 0.0, strict_minimum=True),
        com=number(spec['com'], f'{field}.com'),
        inertia=number(spec['inertia'], f'{field}.inertia', 0.0),
        damping=number(spec.get('damping', 0.0), f'{field}.damping', 0.0),
        effort_limit=number(spec['effort_limit'], f'{field}.effort_limit', 0.0,
                            strict_minimum=True),
        velocity_limit=number(spec['velocity_limit'], f'{field}.velocity_limit', 0.0,
                              strict_minimum=True),
        lower=number(spec.get('lower', -math.inf), f'{field}.lower', allow_infinite=True),
        upper=number(spec.get('upper', math.inf), f'{field}.upper', allow_infinite=True),
    )
    if link.inertia + link.mass * link.com ** 2 <= 0.0:
        # Otherwise the mass matrix is singular whenever this link's joint moves alone.
        raise ConfigError(f'{field}.inertia: the link has no rotational inertia about its joint '
                          '(inertia + mass com^2 must be > 0)')
    if not link.lower < link.upper:
        raise ConfigError(f'{field}.lower: must be below upper ({link.upper:g}), got '
                          f'{link.lower:g}')
    return link


MODEL_TYPES = ('planar_chain',)


def model_from_dict(spec, source='model'):
    """Build a model from a parsed model file; ``source`` names it in error messages."""
    try:
        check_keys(spec, '', required=('name', 'type', 'links'),
                   optional=('gravity', 'base', 'tool_frame', 'description'))
        name(spec['name'], 'name')
        if spec['type'] not in MODEL_TYPES:
            raise ConfigError(f"type: unknown model type {spec['type']!r} (known: "
                              f"{', '.join(MODEL_TYPES)})")
        base = spec.get('base', {})
        check_keys(base, 'base', required=(), optional=('frame', 'xyz', 'rpy'))
        base_frame = name(base.get('frame', 'base_link'), 'base.frame')
        base_xyz = vector(base.get('xyz', [0.0, 0.0, 0.0]), 'base.xyz', 3)
        base_rpy = vector(base.get('rpy', [0.0, 0.0, 0.0]), 'base.rpy', 3)
        gravity_world = vector(spec.get('gravity', [0.0, 0.0, -9.80665]), 'gravity', 3)
        tool_frame = name(spec.get('tool_frame', 'tool0'), 'tool_frame')
        if tool_frame == base_frame:
            raise ConfigError(f'tool_frame: must differ from base.frame ({base_frame!r})')
        links = spec['links']
        if not isinstance(links, list) or not links:
            raise ConfigError(f'links: expected a non-empty list of links, got {links!r}')
        chain = [_link(item, f'links[{i}]') for i, item in enumerate(links)]
        frames, joints = {base_frame, tool_frame}, set()
        for i, link in enumerate(chain):
            if link.name in frames:
                raise ConfigError(f'links[{i}].name: frame name {link.name!r} is used twice')
            if link.joint in joints:
                raise ConfigError(f'links[{i}].joint: joint name {link.joint!r} is used twice')
            frames.add(link.name)
            joints.add(link.joint)
    except ConfigError as error:
        raise ConfigError(f'{source}: {error}') from None
    # URDF rpy: fixed-axis roll, pitch, yaw, i.e. R = Rz(yaw) Ry(pitch) Rx(roll).
    base_rotation = transforms3d.euler.euler2mat(*base_rpy, axes='sxyz')
    return PlanarChainModel(spec['name'], chain, gravity_base=base_rotation.T @ gravity_world,
                            base_frame=base_frame, base_xyz=base_xyz, base_rpy=base_rpy,
                            tool_frame=tool_frame)


def resolve_model_path(model, share_directory=None):
    """Path of a model file: absolute, relative to the cwd, or a name in ``config/models``."""
    if os.path.isabs(model) or os.path.exists(model):
        return model
    if share_directory is None:
        from ament_index_python.packages import get_package_share_directory
        share_directory = get_package_share_directory('flexible_manipulator')
    filename = model if model.endswith('.yaml') else model + '.yaml'
    return os.path.join(share_directory, 'config', 'models', filename)


def load_model(path):
    """Build the model described by the YAML file at ``path``."""
    return model_from_dict(load_yaml(path), source=path)
