"""Build mechanical models from YAML files, refusing bad files with the field at fault.

A model file of ``type: serial_chain`` describes one serial chain (see
``config/models/*.yaml``)::

    name: two_link_flexible
    type: serial_chain
    gravity: [0, 0, -9.81]          # world frame [m/s^2]
    base: {frame: base_link, xyz: [0, 0, 0], rpy: [1.5708, 0, 0]}  # pose in the world
    # or a free-floating base (initial pose xyz/rpy, its rigid body about the base frame):
    # base: {frame: base_link, floating: true, mass: 50, com: [0, 0, 0], inertia: [...]}
    tool_frame: tool0
    geometric_stiffening: true      # foreshortening kinematics (see mechanics.chain)
    links:
      - name: upper_arm
        joint: {name: shoulder, type: revolute, axis: [0, 0, 1], xyz: [0, 0, 0],
                rpy: [0, 0, 0], damping: 0.0, armature: 0.0, effort_limit: 40.0,
                velocity_limit: 8.0, lower: -3.14, upper: 3.14}
                # optional: friction (Coulomb level [N m or N], default 0) and
                # friction_velocity (its regularization v_s, mechanics.friction)
        length: 0.5                  # m, joint to tip frame along the link's x axis
                                     # (a rigid link may have 0: its tip is its joint)
        mass: 0.2                    # rigid part at the link frame (hub, clamp) [kg]
        com: [0.0, 0.0, 0.0]         # m, link frame
        inertia: [ixx, iyy, izz, ixy, ixz, iyz]   # about the centre of mass [kg m^2]
        beam:                        # optional: a flexible link
          linear_density: 0.405      # rho A [kg/m]
          bending_stiffness: [4.7, 50.0]   # EI along y, along z [N m^2]
          modes: [3, 0]              # assumed modes along y, along z
          damping_ratio: 0.01
          section: {shape: rectangle, width: 0.03, height: 0.003}   # optional: drawn only
                                     # (URDF visual, browser view); or {shape: circle, radius}
        payload: {mass: 0.1, com: [0, 0, 0], inertia: [...]}   # rigid, at the tip frame
        frames: 4                    # section frames along the link on TF

A link may instead be a geometrically exact (Cosserat) rod, ``rod:`` in place of ``beam:``
(rods, beams and rigid links then mix in one chain, on a fixed or a floating base; a rod's
joint may be ``type: fixed``, a clamp)::

        rod:
          material: {density: 1100, young_modulus: 2.0e6, shear_modulus: 6.7e5}  # SI
          section: {shape: circle, radius: 0.015}    # or {shape: rectangle, width, height}
          strains: {bending_z: 4, extension: 1}     # active strains: Legendre order each
          points: 12                  # optional: Gauss nodes (default 2 (p + 1) + 2;
                                      # they cap the accuracy near 1e-5, not the order:
                                      # raise them to go finer, doc/models.md)
          damping_time: 0.0           # optional: Kelvin-Voigt relaxation time [s]
          rest_curvature: [0, 0, 0]   # optional: torsion, bending_y, bending_z at rest [1/m]

A chain may instead be a URDF's (``urdf:`` in place of ``links:``, ``tool_frame`` and
``base.frame``: the URDF's root and tip links are the base and tool frames), with what
bends said per URDF link (doc/models.md, "Your own robot: a URDF";
``description.urdf_reader``)::

    urdf: ../urdf/arm.urdf          # relative to this file, package://pkg/path, or '-'
                                    # (the robot_description topic, read by a node);
                                    # .xacro / .urdf.xacro files are expanded with xacro
    xacro_args: {prefix: ''}        # optional: the xacro file's $(arg ...) values
    root: base_link                 # optional: default the URDF's root link
    tip: tool0                      # optional: default the one leaf behind the most joints
    actuated: [joint1, joint2]      # optional: default (and only) every moving joint
    payload: {mass, com, inertia}   # optional: a tool or load in the tip link's frame (the
                                    # uncertainty's payload factor scales it)
    armature: 0.1                   # optional: reflected rotor inertia [kg m^2], one for
                                    # every joint or {joint: value} (others 0)
    friction: {elbow_joint: 2.0}    # optional: Coulomb friction level [N m], the same way
                                    # (others: the URDF's <dynamics friction>)
    friction_velocity: 0.01         # optional: its regularization v_s [rad/s], the same
                                    # way (mechanics.friction)
    inertials:                      # optional: values in place of a URDF link's <inertial>
      upper_arm_link: {mass: 8.4}   # mass [kg], com [m], inertia [ixx, iyy, izz, ixy, ixz,
                                    # iyz] about the com [kg m^2], in the link's frame;
                                    # those left out stay the URDF's (what identify writes)
    base: {floating: false, xyz: [0, 0, 0], rpy: [0, 0, 0]}   # as above; a floating
                                    # base's body is the URDF root's
    flexible:
      forearm_link:                 # a URDF link a moving joint of the chain drives
        beam: {...}                 # or rod: {...}, the blocks above; it runs from its
                                    # joint to the next joint's origin (its length)
        hub: {mass, com, inertia}   # optional: its rigid part in the link's frame, in
                                    # place of the URDF <inertial> (the whole link's)
        frames: 3                   # optional: section frames on TF

Files of ``type: servo_rigid_body`` or ``type: servo_sleigh`` describe a servoconstraint
system instead (see `servo_model_from_dict`).

Every error is a `ConfigError` whose message starts with the dotted path of the field
(``links[1].beam.linear_density``) and says what was expected.
"""

import contextlib
import dataclasses
import difflib
import math
import os
import warnings

import numpy as np
import transforms3d
import yaml

from .mechanics.beam_modes import MAX_MODES
from .mechanics.chain import Beam, Joint, Link, RigidBody
from .mechanics.friction import FRICTION_VELOCITY
from .mechanics.links import chain_from_links, kind_of
from .mechanics.cosserat.rod import CosseratRod, Section
from .mechanics.cosserat.strain_basis import StrainBasis
from .mechanics.servo import REALIZATIONS, ServoRigidBody, ServoSleigh
from .description import urdf_reader


class ConfigError(ValueError):
    """A configuration value is missing, of the wrong kind or out of range."""


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


@contextlib.contextmanager
def naming(field):
    """Turn a failure of the arithmetic on a block's values into a ConfigError naming it.

    Values that pass each field's own check can still be absurd together (a radius of
    1e300 m overflows its area; 1e-300 m divides by zero): the block is then named.
    """
    try:
        yield
    except ConfigError:
        raise
    except (ArithmeticError, ValueError) as error:
        raise ConfigError(f'{field}: {type(error).__name__}: {error}') from None


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
    """Refuse a mapping with keys nobody reads (typos) or missing required keys.

    Unknown keys are reported first, with the closest allowed key: a misspelled required
    key would otherwise be reported as the correct key missing.
    """
    if not isinstance(mapping, dict):
        raise ConfigError(f'{field}: expected a mapping, got {mapping!r}')
    prefix = f'{field}.' if field else ''
    allowed = sorted(set(required) | set(optional))
    unknown = sorted(set(mapping) - set(allowed), key=str)
    if unknown:
        close = difflib.get_close_matches(str(unknown[0]), allowed, n=1)
        hint = f'did you mean {close[0]!r}? ' if close else ''
        raise ConfigError(f'{prefix}{unknown[0]}: unknown field ({hint}allowed: '
                          f'{", ".join(allowed)})')
    for key in required:
        if key not in mapping:
            raise ConfigError(f'{prefix}{key}: required field is missing')


def _inertia(values, field):
    """3x3 inertia tensor from [ixx, iyy, izz, ixy, ixz, iyz], checked positive semidefinite."""
    ixx, iyy, izz, ixy, ixz, iyz = vector(values, field, 6)
    tensor = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    if np.linalg.eigvalsh(tensor).min() < -1e-12 * max(1.0, abs(tensor).max()):
        raise ConfigError(f'{field}: inertia tensor is not positive semidefinite')
    return tuple(map(tuple, tensor))


def _body(spec, field):
    check_keys(spec, field, required=(), optional=('mass', 'com', 'inertia'))
    return RigidBody(mass=number(spec.get('mass', 0.0), f'{field}.mass', 0.0),
                     com=tuple(vector(spec.get('com', [0.0, 0.0, 0.0]), f'{field}.com', 3)),
                     inertia=_inertia(spec.get('inertia', [0.0] * 6), f'{field}.inertia'))


JOINT_TYPES = ('revolute', 'prismatic', 'fixed')      # fixed: Cosserat rods only


def _joint(spec, field):
    check_keys(spec, field, required=('name', 'effort_limit', 'velocity_limit'),
               optional=('type', 'axis', 'xyz', 'rpy', 'damping', 'armature', 'friction',
                         'friction_velocity', 'lower', 'upper'))
    kind = spec.get('type', 'revolute')
    if kind not in JOINT_TYPES:
        raise ConfigError(f'{field}.type: unknown joint type {kind!r} (known: '
                          f'{", ".join(JOINT_TYPES)})')
    axis = vector(spec.get('axis', [0.0, 0.0, 1.0]), f'{field}.axis', 3)
    if abs(np.linalg.norm(axis) - 1.0) > 1e-6:
        raise ConfigError(f'{field}.axis: must be a unit vector, got {axis.tolist()} '
                          f'(norm {np.linalg.norm(axis):.6g})')
    joint = Joint(
        name=name(spec['name'], f'{field}.name'), type=kind, axis=tuple(axis),
        xyz=tuple(vector(spec.get('xyz', [0.0, 0.0, 0.0]), f'{field}.xyz', 3)),
        rpy=tuple(vector(spec.get('rpy', [0.0, 0.0, 0.0]), f'{field}.rpy', 3)),
        damping=number(spec.get('damping', 0.0), f'{field}.damping', 0.0),
        armature=number(spec.get('armature', 0.0), f'{field}.armature', 0.0),
        friction=number(spec.get('friction', 0.0), f'{field}.friction', 0.0),
        friction_velocity=number(spec.get('friction_velocity', FRICTION_VELOCITY),
                                 f'{field}.friction_velocity', 0.0, strict_minimum=True),
        effort_limit=number(spec['effort_limit'], f'{field}.effort_limit', 0.0,
                            strict_minimum=True),
        velocity_limit=number(spec['velocity_limit'], f'{field}.velocity_limit', 0.0,
                              strict_minimum=True),
        lower=number(spec.get('lower', -math.inf), f'{field}.lower', allow_infinite=True),
        upper=number(spec.get('upper', math.inf), f'{field}.upper', allow_infinite=True))
    if not joint.lower < joint.upper:
        raise ConfigError(f'{field}.lower: must be below upper ({joint.upper:g}), got '
                          f'{joint.lower:g}')
    return joint


def _beam(spec, field):
    check_keys(spec, field, required=('linear_density', 'bending_stiffness', 'modes'),
               optional=('damping_ratio', 'quadrature_points', 'section'))
    density = number(spec['linear_density'], f'{field}.linear_density', 0.0,
                     strict_minimum=True)
    stiffness = vector(spec['bending_stiffness'], f'{field}.bending_stiffness', 2)
    for i, value in enumerate(stiffness):
        if not value > 0.0:
            raise ConfigError(f'{field}.bending_stiffness[{i}]: must be > 0, got {value:g}')
    modes = spec['modes']
    if (not isinstance(modes, list) or len(modes) != 2
            or not all(isinstance(m, int) and not isinstance(m, bool) for m in modes)):
        raise ConfigError(f'{field}.modes: expected two mode counts [along y, along z], '
                          f'got {modes!r}')
    for i, count in enumerate(modes):
        if not 0 <= count <= MAX_MODES:
            raise ConfigError(f'{field}.modes[{i}]: mode count must be between 0 and '
                              f'{MAX_MODES}, got {count}')
    points = spec.get('quadrature_points', 0)
    if isinstance(points, bool) or not isinstance(points, int) or not 0 <= points <= 200:
        raise ConfigError(f'{field}.quadrature_points: expected an integer from 0 '
                          f'(automatic) to 200, got {points!r}')
    return Beam(linear_density=density, bending_stiffness=tuple(stiffness), modes=tuple(modes),
                damping_ratio=number(spec.get('damping_ratio', 0.0), f'{field}.damping_ratio',
                                     0.0),
                quadrature_points=points,
                shape=_outline(spec['section'], f'{field}.section') if 'section' in spec
                else None)


def _outline(shape, field):
    """Return a section's outline: ('circle', r) or ('rectangle', width, height) [m]."""
    kind = shape.get('shape') if isinstance(shape, dict) else None
    if kind == 'circle':
        check_keys(shape, field, required=('shape', 'radius'))
        return ('circle', number(shape['radius'], f'{field}.radius', 0.0, strict_minimum=True))
    if kind == 'rectangle':
        check_keys(shape, field, required=('shape', 'width', 'height'))
        return ('rectangle', *(number(shape[key], f'{field}.{key}', 0.0, strict_minimum=True)
                               for key in ('width', 'height')))
    raise ConfigError(f'{field}.shape: expected circle or rectangle, got {kind!r}')


def _section(spec, field):
    """Section constants of a rod's material and shape (`cosserat.rod.Section`).

    Circle of radius r: A = pi r^2, I_y = I_z = pi r^4/4, torsion J = pi r^4/2, Cowper's
    shear coefficient k = 6 (1 + nu)/(7 + 6 nu). Rectangle ``width`` (along y) x ``height``
    (along z): I_y = w h^3/12, I_z = h w^3/12, J = a b^3 (1/3 - 0.21 (b/a)(1 - b^4/12a^4))
    (a >= b its sides), k = 10 (1 + nu)/(12 + 11 nu); nu = E/(2 G) - 1.
    """
    check_keys(spec, field, required=('material', 'section', 'strains'),
               optional=('points', 'damping_time', 'rest_curvature'))
    material, shape = spec['material'], spec['section']
    check_keys(material, f'{field}.material',
               required=('density', 'young_modulus', 'shear_modulus'))
    rho, young, shear = (number(material[key], f'{field}.material.{key}', 0.0,
                                strict_minimum=True)
                         for key in ('density', 'young_modulus', 'shear_modulus'))
    poisson = young / (2.0 * shear) - 1.0
    if not -1.0 < poisson <= 0.5:
        raise ConfigError(f'{field}.material.shear_modulus: E/(2G) - 1 = {poisson:.3g} is not '
                          'a Poisson ratio in (-1, 0.5]')
    outline = _outline(shape, f'{field}.section')
    if outline[0] == 'circle':
        r = outline[1]
        area, bend_y = math.pi * r ** 2, math.pi * r ** 4 / 4.0
        bend_z, torsion = bend_y, 2.0 * bend_y
        factor = 6.0 * (1.0 + poisson) / (7.0 + 6.0 * poisson)
    else:
        w, h = outline[1:]
        area, bend_y, bend_z = w * h, w * h ** 3 / 12.0, h * w ** 3 / 12.0
        a, b = max(w, h), min(w, h)
        torsion = a * b ** 3 * (1.0 / 3.0 - 0.21 * b / a * (1.0 - b ** 4 / (12.0 * a ** 4)))
        factor = 10.0 * (1.0 + poisson) / (12.0 + 11.0 * poisson)
    damping = number(spec.get('damping_time', 0.0), f'{field}.damping_time', 0.0)
    return Section(rho * area, rho * np.array([bend_y + bend_z, bend_y, bend_z]),
                   [shear * torsion, young * bend_y, young * bend_z, young * area,
                    factor * shear * area, factor * shear * area], damping, shape=outline)


def _rod(spec, field, length):
    section = _section(spec, field)
    strains = spec['strains']
    if not isinstance(strains, dict):
        raise ConfigError(f'{field}.strains: expected a mapping strain: order, got {strains!r}')
    points = spec.get('points')
    if points is not None and (isinstance(points, bool) or not isinstance(points, int)
                               or not 1 <= points <= 200):
        raise ConfigError(f'{field}.points: expected an integer from 1 to 200, got {points!r}')
    curvature = spec.get('rest_curvature', [0.0, 0.0, 0.0])
    if not isinstance(curvature, list) or len(curvature) != 3:
        raise ConfigError(f'{field}.rest_curvature: expected [torsion, bending_y, bending_z] '
                          f'[1/m], got {curvature!r}')
    curvature = [number(value, f'{field}.rest_curvature[{i}]', -math.inf, False, False)
                 for i, value in enumerate(curvature)]
    try:
        basis = StrainBasis(strains, length)
    except ValueError as error:
        raise ConfigError(f'{field}.strains: {error}') from None
    try:
        return CosseratRod(basis, section, points, curvature)
    except ValueError as error:
        raise ConfigError(f'{field}.points: {error}') from None


def _link(spec, field):
    check_keys(spec, field, required=('name', 'joint', 'length'),
               optional=('mass', 'com', 'inertia', 'beam', 'rod', 'payload', 'frames'))
    body = _body({k: spec[k] for k in ('mass', 'com', 'inertia') if k in spec}, field)
    beam = _beam(spec['beam'], f'{field}.beam') if 'beam' in spec else None
    # A rigid link may have no length (its tip frame is its joint frame: a URDF's links);
    # a beam or a rod needs one.
    length = number(spec['length'], f'{field}.length', 0.0,
                    strict_minimum='beam' in spec or 'rod' in spec)
    if 'rod' in spec and beam is not None:
        raise ConfigError(f'{field}.rod: a link has a beam (floating frame) or a rod '
                          '(Cosserat), not both')
    rod = _rod(spec['rod'], f'{field}.rod', length) if 'rod' in spec else None
    frames = spec.get('frames', 0)
    if isinstance(frames, bool) or not isinstance(frames, int) or not 0 <= frames <= 50:
        raise ConfigError(f'{field}.frames: expected an integer from 0 to 50, got {frames!r}')
    link = Link(name=name(spec['name'], f'{field}.name'),
                joint=_joint(spec['joint'], f'{field}.joint'), length=length,
                body=body, beam=beam,
                payload=_body(spec.get('payload', {}), f'{field}.payload'), frames=frames,
                rod=rod)
    if link.joint.type == 'fixed' and rod is None:
        raise ConfigError(f'{field}.joint.type: a fixed joint (a clamp) is for a Cosserat '
                          'link (rod:)')
    _check_rigid_body(link, f'{field}.inertia', f'{field}.mass')
    return link


def _check_rigid_body(link, inertia_field, mass_field):
    """Refuse a rigid link whose body leaves its joint without inertia.

    Otherwise the mass matrix is singular whenever this link's joint moves alone.
    """
    if kind_of(link).name != 'rigid':
        return
    axis = np.asarray(link.joint.axis)
    if link.joint.type == 'revolute' and axis @ link.body.inertia_about_origin() @ axis <= 0.0:
        raise ConfigError(f'{inertia_field}: the link has no rotational inertia about its '
                          'joint axis')
    if link.joint.type == 'prismatic' and link.body.mass <= 0.0:
        raise ConfigError(f'{mass_field}: a link on a prismatic joint needs mass > 0')


SERVO_TYPES = ('servo_rigid_body', 'servo_sleigh')
MODEL_TYPES = ('serial_chain',) + SERVO_TYPES


def model_from_dict(spec, source='model', directory=None, robot_description=None):
    """Build a model from a parsed model file; ``source`` names it in error messages.

    A chain may come from a URDF (``urdf:``, `urdf_chain`): ``directory`` is where a
    relative path starts (the model file's; default the working directory) and
    ``robot_description`` a function returning the URDF text for ``urdf: '-'`` (the
    robot_description topic, read by a node).
    """
    kind = spec.get('type', MODEL_TYPES[0]) if isinstance(spec, dict) else MODEL_TYPES[0]
    if kind in SERVO_TYPES:
        return servo_model_from_dict(spec, source)
    if kind not in MODEL_TYPES:      # before the chain's fields, which would not apply
        raise ConfigError(f'{source}: type: unknown model type {kind!r} (known: '
                          f'{", ".join(MODEL_TYPES)})')
    from_urdf = isinstance(spec, dict) and 'urdf' in spec
    try:
        if from_urdf and 'links' in spec:
            raise ConfigError('links: a model file takes links: or urdf:, not both')
        check_keys(spec, '', required=('name', 'type', 'urdf' if from_urdf else 'links'),
                   optional=('gravity', 'base', 'description', 'geometric_stiffening')
                   + (URDF_KEYS if from_urdf else ('tool_frame',)))
        name(spec['name'], 'name')
        if spec['type'] not in MODEL_TYPES:
            raise ConfigError(f"type: unknown model type {spec['type']!r} (known: "
                              f"{', '.join(MODEL_TYPES)})")
        base = spec.get('base', {})
        check_keys(base, 'base', required=(),
                   optional=('frame', 'xyz', 'rpy', 'floating', 'mass', 'com', 'inertia'))
        floating = base.get('floating', False)
        if not isinstance(floating, bool):
            raise ConfigError(f'base.floating: expected true or false, got {floating!r}')
        body_keys = sorted({'mass', 'com', 'inertia'} & set(base))
        if from_urdf and (body_keys or 'frame' in base):
            raise ConfigError(f'base.{"frame" if "frame" in base else body_keys[0]}: with '
                              "urdf: the base is the chain's root link and its body the "
                              "URDF's (root:)")
        if body_keys and not floating:
            raise ConfigError(f'base.{body_keys[0]}: only a floating base has a body '
                              '(set base.floating: true)')
        base_body = (_body({k: base[k] for k in body_keys}, 'base') if floating else None)
        base_frame = name(base.get('frame', 'base_link'), 'base.frame')
        base_xyz = vector(base.get('xyz', [0.0, 0.0, 0.0]), 'base.xyz', 3)
        base_rpy = vector(base.get('rpy', [0.0, 0.0, 0.0]), 'base.rpy', 3)
        gravity_world = vector(spec.get('gravity', [0.0, 0.0, -9.80665]), 'gravity', 3)
        tool_frame = name(spec.get('tool_frame', 'tool0'), 'tool_frame')
        stiffening = spec.get('geometric_stiffening', True)
        if not isinstance(stiffening, bool):
            raise ConfigError(f'geometric_stiffening: expected true or false, got '
                              f'{stiffening!r}')
        if from_urdf:
            with naming('urdf'):
                read = urdf_chain(spec, directory, robot_description)
            chain, base_frame, tool_frame = read.links, read.base_frame, read.tool_frame
            base_body = read.base_body if floating else None
            for note in read.notes:
                warnings.warn(f'{source}: urdf: {note}', ModelWarning, stacklevel=2)
            # the tool frame is the tip link: a frame of the chain already
            _check_names(chain, [base_frame], lambda i: ('urdf', 'urdf'))
        else:
            if tool_frame == base_frame:
                raise ConfigError(f'tool_frame: must differ from base.frame ({base_frame!r})')
            links = spec['links']
            if not isinstance(links, list) or not links:
                raise ConfigError(f'links: expected a non-empty list of links, got {links!r}')
            chain = []
            for i, item in enumerate(links):
                with naming(f'links[{i}]'):
                    chain.append(_link(item, f'links[{i}]'))
            _check_names(chain, [base_frame, tool_frame],
                         lambda i: (f'links[{i}].name', f'links[{i}].joint.name'))
    except ConfigError as error:
        raise ConfigError(f'{source}: {error}') from None
    # URDF rpy: fixed-axis roll, pitch, yaw, i.e. R = Rz(yaw) Ry(pitch) Rx(roll).
    # A floating base sees gravity through its own orientation, so it stays in world axes.
    base_rotation = transforms3d.euler.euler2mat(*base_rpy, axes='sxyz')
    gravity = gravity_world if floating else base_rotation.T @ gravity_world
    for i, link in enumerate(chain):
        with naming(f'{source}: links[{i}]'):
            _check_sag(link, float(np.linalg.norm(gravity_world)), f'{source}: links[{i}]')
    with naming(f'{source}: links'):
        return chain_from_links(spec['name'], chain, gravity, base_frame=base_frame,
                                base_xyz=base_xyz, base_rpy=base_rpy, tool_frame=tool_frame,
                                geometric_stiffening=stiffening, floating_base=base_body)


def _check_names(chain, frames, fields):
    """Refuse a frame or a joint name used twice in the robot description (TF tree).

    ``frames``: the frames besides the links' (base, tool); each link owns its frame,
    ``<name>_tip``, ``<name>_s<k>`` and its attached frames; ``fields(i)``: the fields
    (frame, joint) of link i named in the error.
    """
    frames = set(frames)
    joints = set()
    for i, link in enumerate(chain):
        frame_field, joint_field = fields(i)
        owned = ([link.name, f'{link.name}_tip']
                 + [f'{link.name}_s{k + 1}' for k in range(link.frames)]
                 + [frame.name for frame in link.attached])
        for frame in owned:
            if frame in frames:
                raise ConfigError(f'{frame_field}: frame name {frame!r} is used twice')
            frames.add(frame)
        for joint in [link.joint.name] + [frame.joint for frame in link.attached]:
            if joint in joints:
                raise ConfigError(f'{joint_field}: joint name {joint!r} is used twice')
            joints.add(joint)


# -- a URDF as the chain's rigid skeleton (description.urdf_reader) -------------------------

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
        robot.links[link] = dataclasses.replace(robot.links[link], body=_body(merged, field))


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
        payload = _body(spec['payload'], 'payload') if 'payload' in spec else None
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
        _check_rigid_body(link, inertial, inertial)
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
        common['hub'] = _body(spec['hub'], f'{field}.hub')
    if 'beam' in spec:
        beam = _beam(spec['beam'], f'{field}.beam')
        return lambda length: dict(common, beam=beam)

    def rod(length):
        with naming(f'{field}.rod'):
            return dict(common, rod=_rod(spec['rod'], f'{field}.rod', length))
    with naming(f'{field}.rod'):
        _section(spec['rod'], f'{field}.rod')       # its errors now, not at the length
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


# Largest gravity sag / length for which the floating-frame model (moderate deflections,
# second-order foreshortening) is trusted; past the link's length it is not physical.
SAG_VALIDITY = 0.1


def _check_sag(link, gravity, field):
    """Refuse a link that sags past its length under gravity; warn past `SAG_VALIDITY`."""
    sag = kind_of(link).sag(link, gravity)
    ratio = sag / link.length if sag > 0.0 else 0.0       # a rigid link may have no length
    if ratio > 1.0:
        raise ConfigError(
            f'{field}.beam: the link would sag {ratio:.3g} times its length {link.length} m '
            'under gravity (w L^4/8EI + P L^3/3EI): not a physical beam for this model; '
            'check linear_density, bending_stiffness and the payload')
    if ratio > SAG_VALIDITY:
        warnings.warn(
            f'{field}.beam: sags {100 * ratio:.3g} % of its length under gravity, past the '
            f'{100 * SAG_VALIDITY:g} % for which the floating-frame model (moderate '
            'deflections) is trusted; a geometrically exact (Cosserat) link is the remedy',
            ModelWarning, stacklevel=3)


class ModelWarning(UserWarning):
    """A model that loads but lies outside the validity of its equations."""


# -- servoconstraint systems (mechanics.servo) ----------------------------------------------

_SERVO_COMMON = ('description', 'realization', 'stabilization', 'omega_max', 'initial')


def _servo_options(spec):
    """Keyword arguments shared by both servo models (realization, stabilization, omega_max)."""
    realization = spec.get('realization', 'servo')
    if realization not in REALIZATIONS:
        raise ConfigError(f'realization: expected one of {", ".join(REALIZATIONS)}, got '
                          f'{realization!r}')
    return dict(realization=realization,
                stabilization=number(spec.get('stabilization', 0.0), 'stabilization', 0.0),
                omega_max=number(spec.get('omega_max', 1e3), 'omega_max', 0.0,
                                 strict_minimum=True))


def _servo_initial(model, spec):
    """Set the model's initial state from ``initial: {q: [...], v: [...]}`` (checked)."""
    initial = spec.get('initial', {})
    check_keys(initial, 'initial', required=(), optional=('q', 'v'))
    q = (vector(initial['q'], 'initial.q', model.nq) if 'q' in initial
         else model.neutral_configuration())
    v = vector(initial['v'], 'initial.v', model.nv) if 'v' in initial else np.zeros(model.nv)
    try:
        model.set_initial_state(q, v)
    except ValueError as error:
        raise ConfigError(f'initial.{error}') from None
    residual = float(model.a @ v)
    if (model.realization == 'servo' and model.stabilization == 0.0
            and abs(residual) > 1e-9 * np.linalg.norm(model.a) * max(1.0, np.linalg.norm(v))):
        raise ConfigError(f'initial.v: violates the constraint <a, v> = 0 (residual '
                          f'{residual:.6g}); without stabilization the residual would stay; '
                          f'start on the constraint or set stabilization > 0')


def servo_model_from_dict(spec, source='model'):
    """Build a `ServoRigidBody` or `ServoSleigh` from a parsed model file.

    ``type: servo_rigid_body``::

        inertia: [ixx, iyy, izz, ixy, ixz, iyz]   # about the fixed point, body axes [kg m^2]
        a: [0, 0, 1]                   # constraint covector: <a, w> = 0
        b: [0, 0.6, 0.8]               # control-torque direction: torque lambda b [N m]
        weight_moment: [0, 0, 0]       # c_g = weight x centre of mass (body) [N m]
        position: [0, 0, 1]            # fixed point in the world [m]
        initial: {q: [1, 0, 0, 0], v: [wx, wy, wz]}   # quaternion (w, x, y, z), rad/s

    ``type: servo_sleigh``::

        mass: 2.0                      # kg
        inertia: 0.05                  # about the vertical through the blade point O [kg m^2]
        control: [a_s, b_s, c_s]       # force lambda (a_s along u, b_s normal), torque lambda c_s
        offset: 0.0                    # centre of mass on the running axis [m]
        slope: 0.0                     # inclination of the plane [rad]
        initial: {q: [x, y, phi], v: [omega, u, v_lat]}

    Both take ``realization`` (servo | free), ``stabilization`` (Baumgarte gain [1/s]),
    ``omega_max`` (blow-up threshold) and ``description``. A ``servo`` model started off its
    constraint needs ``stabilization`` > 0. Errors are `ConfigError` naming the field.
    """
    kind = spec['type']
    try:
        if kind == 'servo_rigid_body':
            check_keys(spec, '', required=('name', 'type', 'inertia', 'a', 'b'),
                       optional=_SERVO_COMMON + ('weight_moment', 'position'))
            ixx, iyy, izz, ixy, ixz, iyz = vector(spec['inertia'], 'inertia', 6)
            model = ServoRigidBody(
                name(spec['name'], 'name'),
                inertia=[[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]],
                a=vector(spec['a'], 'a', 3), b=vector(spec['b'], 'b', 3),
                weight_moment=vector(spec.get('weight_moment', [0.0] * 3), 'weight_moment', 3),
                position=vector(spec.get('position', [0.0] * 3), 'position', 3),
                **_servo_options(spec))
        else:
            check_keys(spec, '', required=('name', 'type', 'mass', 'inertia', 'control'),
                       optional=_SERVO_COMMON + ('offset', 'slope'))
            model = ServoSleigh(
                name(spec['name'], 'name'),
                mass=number(spec['mass'], 'mass', 0.0, strict_minimum=True),
                inertia=number(spec['inertia'], 'inertia', 0.0, strict_minimum=True),
                control=vector(spec['control'], 'control', 3),
                offset=number(spec.get('offset', 0.0), 'offset'),
                slope=number(spec.get('slope', 0.0), 'slope'), **_servo_options(spec))
        _servo_initial(model, spec)
    except ConfigError as error:
        raise ConfigError(f'{source}: {error}') from None
    except ValueError as error:          # the model's own checks name the field first
        raise ConfigError(f'{source}: {error}') from None
    except ArithmeticError as error:     # values so far out that the checks overflow
        raise ConfigError(f'{source}: {kind}: the values overflow the model\'s arithmetic '
                          f'({type(error).__name__}: {error})') from None
    return model


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


def load_model(path, robot_description=None):
    """Build the model described by the YAML file at ``path``.

    A ``urdf:`` path in it is relative to the file's directory; ``robot_description``: a
    function returning the URDF text for ``urdf: '-'`` (`model_from_dict`).
    """
    return model_from_dict(load_yaml(path), source=path,
                           directory=os.path.dirname(os.path.abspath(path)),
                           robot_description=robot_description)
