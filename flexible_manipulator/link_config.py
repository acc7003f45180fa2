"""A model file's ``links:`` blocks (`model_config`): joint, rigid body, beam, rod, link.

Each parser takes the block and its dotted field path and returns the mechanics object
(`mechanics.chain`'s `Joint`, `RigidBody`, `Beam`, `Link`; `cosserat.rod.CosseratRod`), or
raises `ConfigError` naming the field at fault. The ``urdf:`` chains (`urdf_config`) use the
body, beam and rod parsers for their ``flexible:`` and ``inertials:`` entries.
"""

import math

import numpy as np

from .config_checks import check_keys, ConfigError, name, number, vector
from .mechanics.beam_modes import MAX_MODES
from .mechanics.chain import Beam, Joint, Link, RigidBody
from .mechanics.cosserat.rod import CosseratRod, Section
from .mechanics.cosserat.strain_basis import StrainBasis
from .mechanics.friction import FRICTION_VELOCITY
from .mechanics.links import kind_of


def _inertia(values, field):
    """3x3 inertia tensor from [ixx, iyy, izz, ixy, ixz, iyz], checked positive semidefinite."""
    ixx, iyy, izz, ixy, ixz, iyz = vector(values, field, 6)
    tensor = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    if np.linalg.eigvalsh(tensor).min() < -1e-12 * max(1.0, abs(tensor).max()):
        raise ConfigError(f'{field}: inertia tensor is not positive semidefinite')
    return tuple(map(tuple, tensor))


def parse_body(spec, field):
    """Return the `RigidBody` of a block {mass, com, inertia} (each optional, default 0)."""
    check_keys(spec, field, required=(), optional=('mass', 'com', 'inertia'))
    return RigidBody(mass=number(spec.get('mass', 0.0), f'{field}.mass', 0.0),
                     com=tuple(vector(spec.get('com', [0.0, 0.0, 0.0]), f'{field}.com', 3)),
                     inertia=_inertia(spec.get('inertia', [0.0] * 6), f'{field}.inertia'))


JOINT_TYPES = ('revolute', 'prismatic', 'fixed')      # fixed: Cosserat rods only


def parse_joint(spec, field):
    """Return the `Joint` of a link's ``joint:`` block (type, axis, pose, limits, friction)."""
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


def parse_beam(spec, field):
    """Return the `Beam` of a ``beam:`` block (a floating-frame flexible link)."""
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
                shape=parse_outline(spec['section'], f'{field}.section') if 'section' in spec
                else None)


def parse_outline(shape, field):
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


def parse_section(spec, field):
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
    outline = parse_outline(shape, f'{field}.section')
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


def parse_rod(spec, field, length):
    """Return the `CosseratRod` of a ``rod:`` block for a link of ``length`` [m]."""
    section = parse_section(spec, field)
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


def parse_link(spec, field):
    """Return the `Link` of one entry of ``links:`` (module doc of `model_config`)."""
    check_keys(spec, field, required=('name', 'joint', 'length'),
               optional=('mass', 'com', 'inertia', 'beam', 'rod', 'payload', 'frames'))
    body = parse_body({k: spec[k] for k in ('mass', 'com', 'inertia') if k in spec}, field)
    beam = parse_beam(spec['beam'], f'{field}.beam') if 'beam' in spec else None
    # A rigid link may have no length (its tip frame is its joint frame: a URDF's links);
    # a beam or a rod needs one.
    length = number(spec['length'], f'{field}.length', 0.0,
                    strict_minimum='beam' in spec or 'rod' in spec)
    if 'rod' in spec and beam is not None:
        raise ConfigError(f'{field}.rod: a link has a beam (floating frame) or a rod '
                          '(Cosserat), not both')
    rod = parse_rod(spec['rod'], f'{field}.rod', length) if 'rod' in spec else None
    frames = spec.get('frames', 0)
    if isinstance(frames, bool) or not isinstance(frames, int) or not 0 <= frames <= 50:
        raise ConfigError(f'{field}.frames: expected an integer from 0 to 50, got {frames!r}')
    link = Link(name=name(spec['name'], f'{field}.name'),
                joint=parse_joint(spec['joint'], f'{field}.joint'), length=length,
                body=body, beam=beam,
                payload=parse_body(spec.get('payload', {}), f'{field}.payload'), frames=frames,
                rod=rod)
    if link.joint.type == 'fixed' and rod is None:
        raise ConfigError(f'{field}.joint.type: a fixed joint (a clamp) is for a Cosserat '
                          'link (rod:)')
    check_rigid_body(link, f'{field}.inertia', f'{field}.mass')
    return link


def check_rigid_body(link, inertia_field, mass_field):
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
