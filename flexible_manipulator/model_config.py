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
    geometric_stiffening: true      # foreshortening kinematics (see mechanics.link_description)
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

Or a rigid link behind a flexible joint, ``flexible_joint:`` in place of ``beam:`` (Spong's
elastic gear, ``mechanics.links.flexible_joint``: the joint's coordinate is the motor's
angle, the link's elastic coordinate ``<link>_deflection`` the gear's)::

        flexible_joint:
          stiffness: 20000.0          # gear stiffness k [N m/rad] (> 0)
          damping: 5.0                # optional: gear damping d [N m s/rad] (default 0)
          rotor_inertia: 0.2          # reflected rotor inertia J_m [kg m^2] (> 0), on the
                                      # motor's angle, added to the joint's armature

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
                                    # joint to the next joint's origin (its length);
                                    # or flexible_joint: {...}: the link stays rigid in
                                    # its URDF frame, behind an elastic gear
        hub: {mass, com, inertia}   # optional: its rigid part in the link's frame, in
                                    # place of the URDF <inertial> (the whole link's)
        frames: 3                   # optional: section frames on TF

Files of ``type: servo_rigid_body`` or ``type: servo_sleigh`` describe a servoconstraint
system instead (see `servo_model_from_dict`).

Every error is a `ConfigError` whose message starts with the dotted path of the field
(``links[1].beam.linear_density``) and says what was expected.
"""

import os
import warnings

import numpy as np
import transforms3d

from .config_checks import check_keys, ConfigError, name, naming, vector
from .link_config import parse_body, parse_link
from .mechanics.links import chain_from_links, kind_of
from .servo_config import SERVO_TYPES, servo_model_from_dict
from .urdf_config import URDF_KEYS, urdf_chain
# Re-exported: the names scripts and tests take from here.
from .config_files import (load_yaml, resolve_config_path,  # noqa: F401
                           resolve_model_path)
from .urdf_config import urdf_inertial, urdf_robot  # noqa: F401

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
        base_body = (parse_body({k: base[k] for k in body_keys}, 'base') if floating else None)
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
                    chain.append(parse_link(item, f'links[{i}]'))
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


def load_model(path, robot_description=None):
    """Build the model described by the YAML file at ``path``.

    A ``urdf:`` path in it is relative to the file's directory; ``robot_description``: a
    function returning the URDF text for ``urdf: '-'`` (`model_from_dict`).
    """
    return model_from_dict(load_yaml(path), source=path,
                           directory=os.path.dirname(os.path.abspath(path)),
                           robot_description=robot_description)
