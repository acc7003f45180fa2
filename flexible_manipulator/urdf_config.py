"""A model file's ``urdf:`` chain: a URDF (xacro expanded) with what bends said per link.

The keys (`URDF_KEYS`) are described in `model_config`'s docstring and doc/models.md
("Your own robot: a URDF"); the URDF itself is read by `description.urdf_reader`.
"""

import dataclasses
import difflib
import os

import numpy as np

from .config_checks import check_keys, ConfigError, naming, number
from .config_files import package_share_directory
from .description import urdf_reader
from .link_config import check_rigid_body, parse_beam, parse_body, parse_rod, parse_section
from .mechanics.chain import RigidBody


URDF_KEYS = ('urdf', 'xacro_args', 'root', 'tip', 'flexible', 'actuated', 'payload',
             'armature', 'friction', 'friction_velocity', 'inertials')
INERTIAL_KEYS = ('mass', 'com', 'inertia')


def urdf_robot(spec, directory=None, robot_description=None):
    """Read a model file's ``urdf:`` (xacro expanded): (``urdf_reader.Robot``, its origin).

    The robot as the URDF holds it (``inertials:`` not applied). ``directory``,
    ``robot_description``: as `model_from_dict`'s. Errors: `ConfigError` naming the field.
    """
    args = spec.get('xacro_args', {})
    if not isinstance(args, dict):
        raise ConfigError(f'xacro_args: expected a mapping name: value, got {args!r}')
    for key, value in args.items():
        if not isinstance(key, str) or isinstance(value, (dict, list)) or value is None:
            raise ConfigError(f'xacro_args.{key}: expected a name and a text or number value, '
                              f'got {value!r}')
    text, where = _urdf_text(spec['urdf'], directory, robot_description,
                             {key: str(value) for key, value in args.items()})
    try:
        return urdf_reader.parse(text), where
    except urdf_reader.URDFError as error:
        raise ConfigError(f'urdf: {where}: {error}') from None


def urdf_inertial(link):
    """Return a URDF link's body as a model file writes one: {mass [kg], com [m], inertia}.

    ``inertia``: [ixx, iyy, izz, ixy, ixz, iyz] about the centre of mass in the link's
    frame [kg m^2]; a link without ``<inertial>`` has the empty body (all 0).
    """
    body = link.body if link.body is not None else RigidBody()
    tensor = np.asarray(body.inertia, dtype=float)
    return {'mass': float(body.mass), 'com': [float(c) for c in body.com],
            'inertia': [float(tensor[i, j]) for i, j in
                        ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))]}


def _apply_inertials(spec, robot, flexible):
    """Replace the URDF inertials named by the file's ``inertials:`` (module doc)."""
    inertials = spec.get('inertials', {})
    if not isinstance(inertials, dict):
        raise ConfigError(f'inertials: expected a mapping URDF link: {{mass, com, inertia}}, '
                          f'got {inertials!r}')
    for link, values in inertials.items():
        field = f'inertials.{link}'
        if link not in robot.links:
            close = difflib.get_close_matches(str(link), list(robot.links), n=1)
            hint = f' (did you mean {close[0]!r}?)' if close else ''
            raise ConfigError(f'{field}: no link {link!r} in the URDF{hint}')
        check_keys(values, field, required=(), optional=INERTIAL_KEYS)
        if isinstance(flexible.get(link), dict) and 'hub' in flexible[link]:
            raise ConfigError(f'{field}: flexible.{link}.hub replaces this link\'s <inertial>: '
                              'give its values there')
        merged = dict(urdf_inertial(robot.links[link]), **values)
        robot.links[link] = dataclasses.replace(robot.links[link], body=parse_body(merged, field))


def urdf_chain(spec, directory=None, robot_description=None):
    """Read the chain of a model file's ``urdf:`` (module doc): a ``urdf_reader.UrdfChain``.

    Errors: `ConfigError` naming the model file's field, or ``urdf: <file>: <element>``.
    """
    robot, where = urdf_robot(spec, directory, robot_description)
    ends = {}
    for key in ('root', 'tip'):
        if key in spec:
            if not isinstance(spec[key], str) or not spec[key]:
                raise ConfigError(f'{key}: expected a URDF link name, got {spec[key]!r}')
            ends[key] = spec[key]
    flexible = spec.get('flexible', {})
    if not isinstance(flexible, dict):
        raise ConfigError(f'flexible: expected a mapping URDF link: {{beam: ...}} or '
                          f'{{rod: ...}}, got {flexible!r}')
    elastic = {str(link): _elastic(block, f'flexible.{link}')
               for link, block in flexible.items()}
    _apply_inertials(spec, robot, flexible)
    try:
        payload = parse_body(spec['payload'], 'payload') if 'payload' in spec else None
        read = urdf_reader.serial_chain(robot, elastic=elastic, payload=payload, **ends)
    except urdf_reader.URDFError as error:
        raise ConfigError(f'{error.field}: {error}' if error.field
                          else f'urdf: {where}: {error}') from None
    moving = [link.joint.name for link in read.links]
    actuated = spec.get('actuated', moving)
    if not isinstance(actuated, list) or not all(isinstance(j, str) for j in actuated):
        raise ConfigError(f'actuated: expected a list of joint names, got {actuated!r}')
    for i, joint in enumerate(actuated):
        if joint not in moving:
            raise ConfigError(f'actuated[{i}]: no moving joint {joint!r} in the chain (its '
                              f'moving joints: {", ".join(moving)})')
    passive = [joint for joint in moving if joint not in actuated]
    if passive:
        raise ConfigError(f'actuated: joint {passive[0]!r} is left out, but the chain model '
                          'drives every moving joint of the chain (passive joints are not '
                          'supported): list it, or make it fixed in the URDF')
    for link in read.links:
        inertial = f'urdf: {where}: link {link.name!r} <inertial>'
        check_rigid_body(link, inertial, inertial)
    joints = {link.joint.name: link.joint for link in read.links}
    armature = _per_joint(spec, 'armature', {joint: 0.0 for joint in moving})
    friction = _per_joint(spec, 'friction', {name: joint.friction
                                             for name, joint in joints.items()})
    velocity = _per_joint(spec, 'friction_velocity', {name: joint.friction_velocity
                                                      for name, joint in joints.items()},
                          strict=True)
    read.links[:] = [dataclasses.replace(link, joint=dataclasses.replace(
        link.joint, armature=armature[link.joint.name], friction=friction[link.joint.name],
        friction_velocity=velocity[link.joint.name])) for link in read.links]
    return read


def _per_joint(spec, field, defaults, strict=False):
    """Read a per-joint number of a URDF model file: one for every joint, or joint: value.

    ``armature`` (the reflected rotor inertia [kg m^2 or kg] a URDF has no element for),
    ``friction`` (the Coulomb level [N m or N], in place of the URDF's ``<dynamics
    friction>``), ``friction_velocity`` (its v_s [rad/s or m/s], > 0: ``strict``):
    joints not named keep ``defaults`` (joint: value, every moving joint of the chain).
    """
    if field not in spec:
        return dict(defaults)
    value, joints = spec[field], list(defaults)
    if isinstance(value, dict):
        for joint in value:
            if joint not in defaults:
                raise ConfigError(f'{field}.{joint}: no moving joint {joint!r} in the chain '
                                  f'(its moving joints: {", ".join(joints)})')
        return {joint: (number(value[joint], f'{field}.{joint}', 0.0, strict_minimum=strict)
                        if joint in value else defaults[joint]) for joint in joints}
    value = number(value, field, 0.0, strict_minimum=strict)
    return {joint: value for joint in joints}


def _elastic(spec, field):
    """Parse a ``flexible:`` entry: return the function of the length giving Link fields."""
    check_keys(spec, field, required=(), optional=('beam', 'rod', 'frames', 'hub'))
    if ('beam' in spec) == ('rod' in spec):
        raise ConfigError(f'{field}: expected a beam: (floating frame) or a rod: (Cosserat) '
                          'block, one of the two')
    frames = spec.get('frames', 0)
    if isinstance(frames, bool) or not isinstance(frames, int) or not 0 <= frames <= 50:
        raise ConfigError(f'{field}.frames: expected an integer from 0 to 50, got {frames!r}')
    common = dict(frames=frames)
    if 'hub' in spec:
        common['hub'] = parse_body(spec['hub'], f'{field}.hub')
    if 'beam' in spec:
        beam = parse_beam(spec['beam'], f'{field}.beam')
        return lambda length: dict(common, beam=beam)

    def rod(length):
        with naming(f'{field}.rod'):
            return dict(common, rod=parse_rod(spec['rod'], f'{field}.rod', length))
    with naming(f'{field}.rod'):
        parse_section(spec['rod'], f'{field}.rod')       # its errors now, not at the length
    return rod


def _urdf_text(value, directory, robot_description, args):
    """(URDF text, where it came from) of a ``urdf:`` value (file, package:// or '-')."""
    if not isinstance(value, str) or not value:
        raise ConfigError("urdf: expected a file path, a package:// URI or '-' (the "
                          f'robot_description topic), got {value!r}')
    if value == '-':
        if args:
            raise ConfigError("xacro_args: the URDF of '-' (robot_description) is expanded")
        if robot_description is None:
            raise ConfigError("urdf: '-' reads the robot_description topic: only a node "
                              '(plant, controller) loads this model file')
        text = robot_description()
        if not isinstance(text, str):
            raise ConfigError(f"urdf: '-': expected the URDF text, got {type(text).__name__}")
        return text, "'-' (robot_description)"
    if value.startswith('package://'):
        package, _, rest = value[len('package://'):].partition('/')
        path = os.path.join(package_share_directory(package), rest)
    else:
        path = os.path.join(directory or os.getcwd(), os.path.expanduser(value))
    if path.endswith('.xacro'):
        return _xacro(path, args), path
    if args:
        raise ConfigError(f'xacro_args: {path} is not a .xacro file')
    try:
        with open(path, encoding='utf-8') as stream:
            return stream.read(), path
    except OSError as error:
        raise ConfigError(f'urdf: cannot read {path} ({error.strerror})') from None
    except UnicodeDecodeError as error:
        raise ConfigError(f'urdf: {path}: not UTF-8 text ({error.reason})') from None


def _xacro(path, args):
    """Expand a .xacro file with the xacro package; $(find) through `package_share_directory`."""
    try:
        import xacro
        from xacro import substitution_args
    except ImportError:
        raise ConfigError(f'urdf: {path}: a .xacro file needs the xacro package (pip install '
                          'xacro)') from None
    if not os.path.isfile(path):
        raise ConfigError(f'urdf: cannot read {path} (No such file or directory)')
    failures = []

    def find(package):
        try:
            return package_share_directory(package)
        except ConfigError as error:
            failures.append(str(error))
            raise

    saved = substitution_args._eval_find
    substitution_args._eval_find = find
    try:
        document = xacro.process_file(path, mappings=args)
    except Exception as error:           # xacro evaluates the file's Python expressions
        reason = failures[0] if failures else f'xacro: {" ".join(str(error).split())}'
        raise ConfigError(f'{reason} (expanding {path})' if failures
                          else f'urdf: {path}: {reason}') from None
    finally:
        substitution_args._eval_find = saved
    return document.toxml()
