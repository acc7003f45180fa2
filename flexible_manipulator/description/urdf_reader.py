"""Read a URDF into the chain's description: the package's one URDF reader.

`urdf.py` writes a model's robot description; this module reads a user's URDF text (after
any xacro expansion, done by ``model_config``) with the standard library's ``xml.etree``
(`parse`) and maps its serial chain from a root link to a tip link onto ``link_description.Link`` s
(`serial_chain`):

* each moving joint of the chain (revolute, continuous, prismatic) drives one link of the
  model, named after its child link; fixed joints inside the chain are merged: the child's
  inertia is folded into the body it is fixed to and its frame kept as a
  ``link_description.FixedFrame`` (same link and joint names) for TF and the robot description;
* a rigid link's frame is its URDF frame and its length is 0 (its tip frame is its frame):
  the next joint's origin is the URDF's, composed through the merged fixed joints;
* a link of a kind that is not slender (``elastic``, ``LinkKind.slender``) is mapped as
  a rigid link, its kind's fields added;
* a flexible link (``elastic``: a beam or a rod, and optionally its own rigid hub in place
  of the URDF inertial) runs along the x axis of the frame
  F = U R, U its URDF frame and R the smallest rotation turning U's x axis toward where the
  link ends (the next moving joint's origin, the tip link's for the last link;
  `mechanics.lie.so3_aligning`): its length is the distance to that point; the joint
  axis, the inertia and the next joint's origin are re-expressed in F, named
  ``<U>_beam`` or ``<U>_rod``; U hangs on F as a fixed frame (joint ``<U>_mount``). What
  hangs on U (its inertia, its branches) stays at the joint, on the link's hub; the links
  merged after U on the way to the next joint follow the tip frame, and their inertia is
  the link's payload;
* branches off the chain are rigid payloads of the body they hang on: their joints locked
  at 0 (clamped into their limits; mimic relations are not applied), their inertia folded
  in, their frames kept as fixed frames.

Refused, each with the element named (`URDFError`): XML that does not parse, a document
that is not one tree of links, numbers that are not finite, a missing ``<inertial>`` on a
link a joint of the chain moves, a floating or planar joint or a mimic joint inside the
chain, an axis that is not a unit vector (to 1e-5), a revolute or prismatic joint of the
chain without ``<limit>`` or with lower >= upper, effort or velocity limits <= 0, negative
damping or friction, an inertia tensor that is not positive semidefinite.
"""

import copy
from dataclasses import dataclass
import math
import xml.etree.ElementTree as ET

import numpy as np

from ..mechanics import lie
from ..mechanics.link_description import FixedFrame, Joint, Link, RigidBody
from ..mechanics.links import kind_of
from ..mechanics.model.link_part import rigid_inertia

MOVING = ('revolute', 'continuous', 'prismatic')
JOINT_TYPES = MOVING + ('fixed', 'floating', 'planar')
AXIS_TOLERANCE = 1e-5          # |norm - 1| of an axis (exporters round to ~6 digits)


class URDFError(ValueError):
    """A URDF the chain model cannot take; the message names the element at fault.

    ``field``: the model file's field at fault when it is one (``root``, ``tip``,
    ``flexible.<link>``), else None (the URDF itself).
    """

    def __init__(self, message, field=None):
        """Keep the message and the field."""
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class UrdfLink:
    """A ``<link>``: its body in its frame (None without ``<inertial>``), its geometry.

    ``geometry``: its ``<visual>`` and ``<collision>`` elements as text (for the robot
    description); ``visual``: the shape of its first visual, ``('cylinder', radius,
    length)``, ``('box', x, y, z)`` or ``('sphere', radius)`` [m], None for any other (a
    mesh) or one without positive finite sizes (the model does not need it: not refused).
    """

    name: str
    body: object
    geometry: str
    visual: tuple = None


@dataclass(frozen=True)
class UrdfJoint:
    """A ``<joint>``: origin (4x4 in the parent link's frame), axis, limits, dynamics.

    ``limit``: the ``<limit>`` attributes given ({'lower': ..., ...}), None without one.
    """

    name: str
    type: str
    parent: str
    child: str
    origin: np.ndarray
    axis: np.ndarray
    limit: dict
    damping: float
    friction: float
    mimic: bool

    def locked(self):
        """Pose of the child in the parent at the joint's locked coordinate (a branch's).

        0, clamped into [lower, upper] when the joint has limits; floating and planar
        joints at their origin.
        """
        q = 0.0
        if self.type in ('revolute', 'prismatic') and self.limit is not None:
            q = min(max(0.0, self.limit.get('lower', 0.0)), self.limit.get('upper', 0.0))
        norm = np.linalg.norm(self.axis)
        if q == 0.0 or norm == 0.0 or self.type not in MOVING:
            return self.origin
        twist = np.zeros(6)             # (angular, linear)
        start = 3 if self.type == 'prismatic' else 0
        twist[start:start + 3] = q * self.axis / norm
        return lie.se3_compose(self.origin, lie.se3_exp(twist))


@dataclass(frozen=True)
class Robot:
    """A parsed URDF.

    ``links`` and ``joints`` by name, the tree (``parent_joint``: child link -> its joint;
    ``child_joints``: link -> its joints, document order), its ``root``.
    """

    name: str
    links: dict
    joints: dict
    parent_joint: dict
    child_joints: dict
    root: str

    def below(self, link):
        """Names of ``link`` and every link under it."""
        out, stack = [], [link]
        while stack:
            name = stack.pop()
            out.append(name)
            stack += [self.joints[j].child for j in self.child_joints[name]]
        return out

    def path(self, root, tip):
        """Joints from ``root`` down to ``tip`` (``tip`` under ``root``)."""
        joints, name = [], tip
        while name != root:
            joint = self.joints[self.parent_joint[name]]
            joints.append(joint)
            name = joint.parent
        return joints[::-1]


@dataclass(frozen=True)
class UrdfChain:
    """What `serial_chain` returns.

    The model's ``links`` (``link_description.Link``), ``base_frame`` (the root link),
    ``tool_frame`` (the tip link), ``base_body`` (the root and what is fixed to it, in the
    root frame: a floating base's body) and ``notes`` (what the URDF says that the model
    leaves out; nothing at present: ``<dynamics friction>`` is the joint's Coulomb
    friction).
    """

    links: list
    base_frame: str
    tool_frame: str
    base_body: RigidBody
    notes: list


def _shown(text, limit=40):
    """``text`` quoted, cut at ``limit`` characters."""
    return repr(text if len(text) <= limit else text[:limit] + '...')


def _numbers(element, attribute, where, count, default=None):
    """Return the ``count`` finite numbers of an attribute (``default`` when absent)."""
    text = element.get(attribute)
    if text is None:
        if default is None:
            raise URDFError(f'{where}: <{element.tag}> has no {attribute}')
        return np.array(default, dtype=float)
    parts = text.split()
    try:
        values = [float(part) for part in parts]
    except ValueError:
        values = None
    if values is None or len(values) != count or not all(map(math.isfinite, values)):
        raise URDFError(f'{where}: <{element.tag} {attribute}={_shown(text)}>: expected '
                        f'{count} finite number{"s" if count > 1 else ""}')
    return np.array(values)


def _number(element, attribute, where, default=None):
    return float(_numbers(element, attribute, where, 1, None if default is None
                          else [default])[0])


def _origin(element, where):
    """Pose of the ``<origin>`` child of ``element`` (identity without one)."""
    origin = element.find('origin')
    if origin is None:
        return np.eye(4)
    return lie.se3_from_origin(_numbers(origin, 'xyz', where, 3, [0.0] * 3),
                               _numbers(origin, 'rpy', where, 3, [0.0] * 3))


def _inertial(element, where):
    """Return the ``<inertial>`` as a `RigidBody` in the link frame (inertia about the COM)."""
    where = f'{where} <inertial>'
    mass_element = element.find('mass')
    inertia_element = element.find('inertia')
    for tag, found in (('mass', mass_element), ('inertia', inertia_element)):
        if found is None:
            raise URDFError(f'{where}: no <{tag}>')
    mass = _number(mass_element, 'value', where)
    if mass < 0.0:
        raise URDFError(f'{where}: <mass value="{mass:g}">: must be >= 0')
    ixx, ixy, ixz, iyy, iyz, izz = (_number(inertia_element, key, where) for key in
                                    ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz'))
    tensor = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    if np.linalg.eigvalsh(tensor).min() < -1e-12 * max(1.0, abs(tensor).max()):
        raise URDFError(f'{where}: <inertia>: not positive semidefinite')
    pose = _origin(element, where)
    R = pose[:3, :3]
    return RigidBody(mass, tuple(pose[:3, 3]), tuple(map(tuple, R @ tensor @ R.T)))


def _geometry(element, materials):
    """Return the ``<visual>``, ``<collision>`` elements as text, named materials written out."""
    parts = []
    for child in element:
        if child.tag not in ('visual', 'collision'):
            continue
        child = copy.deepcopy(child)
        for material in child.iter('material'):
            known = materials.get(material.get('name'))
            if len(material) == 0 and known is not None:
                material.extend(copy.deepcopy(list(known)))
        parts.append('    ' + ET.tostring(child, encoding='unicode').strip() + '\n')
    return ''.join(parts)


# The attributes of each visual shape read (`UrdfLink.visual`) and how many numbers they hold.
VISUAL_SIZES = {'cylinder': (('radius', 'length'), 2), 'box': (('size',), 3),
                'sphere': (('radius',), 1)}


def _visual(element):
    """Return the shape of a ``<link>``'s first ``<visual>`` (`UrdfLink`), or None."""
    geometry = element.find('visual/geometry')
    if geometry is None or len(geometry) == 0 or geometry[0].tag not in VISUAL_SIZES:
        return None
    shape = geometry[0]
    keys, count = VISUAL_SIZES[shape.tag]
    try:
        sizes = [float(x) for key in keys for x in (shape.get(key) or 'nan').split()]
    except ValueError:
        return None
    if len(sizes) != count or not all(math.isfinite(x) and x > 0 for x in sizes):
        return None
    return (shape.tag, *sizes)


def _name(element, where):
    name = element.get('name')
    if not name or not name.strip() or name != name.strip():
        raise URDFError(f'{where}: <{element.tag} name={name!r}>: expected a name without '
                        'surrounding spaces')
    return name


def _joint(element, links):
    """Read a `UrdfJoint` from its element; its links must exist."""
    name = _name(element, '<joint>')
    where = f'joint {name!r}'
    kind = element.get('type')
    if kind not in JOINT_TYPES:
        raise URDFError(f'{where}: unknown type {kind!r} (known: {", ".join(JOINT_TYPES)})')
    ends = []
    for tag in ('parent', 'child'):
        end = element.find(tag)
        link = None if end is None else end.get('link')
        if link not in links:
            raise URDFError(f'{where}: <{tag} link={link!r}>: no such <link>')
        ends.append(link)
    axis_element = element.find('axis')
    axis = (np.array([1.0, 0.0, 0.0]) if axis_element is None
            else _numbers(axis_element, 'xyz', where, 3, [1.0, 0.0, 0.0]))
    limit_element = element.find('limit')
    limit = None
    if limit_element is not None:
        limit = {key: _number(limit_element, key, where) for key in
                 ('lower', 'upper', 'effort', 'velocity') if key in limit_element.attrib}
    dynamics = element.find('dynamics')
    damping, friction = ((0.0, 0.0) if dynamics is None else
                         (_number(dynamics, 'damping', where, 0.0),
                          _number(dynamics, 'friction', where, 0.0)))
    return UrdfJoint(name, kind, ends[0], ends[1], _origin(element, where), axis, limit,
                     damping, friction, element.find('mimic') is not None)


def parse(text):
    """Parse URDF ``text`` into a `Robot`; `URDFError` naming the element if it cannot."""
    try:
        document = ET.fromstring(text)
    except ET.ParseError as error:
        raise URDFError(f'not well-formed XML: {error}') from None
    if document.tag != 'robot':
        raise URDFError(f'<{document.tag}>: expected a <robot> document')
    materials = {m.get('name'): m for m in document.findall('material')}
    links, joints = {}, {}
    for element in document.findall('link'):
        name = _name(element, '<link>')
        if name in links:
            raise URDFError(f'link {name!r}: defined twice')
        inertials = element.findall('inertial')
        if len(inertials) > 1:
            raise URDFError(f'link {name!r}: more than one <inertial>')
        body = _inertial(inertials[0], f'link {name!r}') if inertials else None
        links[name] = UrdfLink(name, body, _geometry(element, materials), _visual(element))
    if not links:
        raise URDFError('<robot>: no <link>')
    for element in document.findall('joint'):
        joint = _joint(element, links)
        if joint.name in joints:
            raise URDFError(f'joint {joint.name!r}: defined twice')
        joints[joint.name] = joint
    parent_joint, child_joints = {}, {name: [] for name in links}
    for joint in joints.values():
        if joint.child in parent_joint:
            raise URDFError(f'link {joint.child!r}: child of two joints '
                            f'({parent_joint[joint.child]!r}, {joint.name!r}): not a tree')
        parent_joint[joint.child] = joint.name
        child_joints[joint.parent].append(joint.name)
    roots = [name for name in links if name not in parent_joint]
    if len(roots) != 1:
        raise URDFError(f'expected one root link (the child of no joint), found {len(roots)}'
                        f'{": " + ", ".join(map(repr, roots[:5])) if roots else ""}')
    robot = Robot(document.get('name', ''), links, joints, parent_joint, child_joints,
                  roots[0])
    reached = set(robot.below(roots[0]))     # a cycle hangs on no root
    if len(reached) != len(links):
        lost = sorted(set(links) - reached)
        raise URDFError(f'links {", ".join(map(repr, lost[:5]))} are not connected to the '
                        f'root {roots[0]!r} (a cycle)')
    return robot


def _lumped(bodies):
    """One `RigidBody` of (body or None, pose in the common frame) pairs, by 6x6 inertias.

    Each body's inertia S at its own frame seen from the common one:
    Ad_{g^-1}^T S Ad_{g^-1}, g its pose (`lie` conventions, angular first).
    """
    total = np.zeros((6, 6))
    for body, pose in bodies:
        if body is not None:
            move = lie.se3_adjoint_inv(pose)
            total += move.T @ rigid_inertia(body.mass, body.com, body.inertia) @ move
    mass = total[3, 3]
    com = lie.vee3(total[:3, 3:]) / mass if mass > 0.0 else np.zeros(3)
    inertia = total[:3, :3] - mass * (com @ com * np.eye(3) - np.outer(com, com))
    return RigidBody(float(mass), tuple(map(float, com)),
                     tuple(tuple(map(float, row)) for row in 0.5 * (inertia + inertia.T)))


def _inferred_tip(robot, root):
    """Return the one leaf under ``root`` behind the most moving joints, else `URDFError`."""
    leaves = [name for name in robot.below(root) if not robot.child_joints[name]]
    counts = {leaf: sum(j.type != 'fixed' for j in robot.path(root, leaf)) for leaf in leaves}
    most = max(counts.values())
    best = sorted(leaf for leaf, count in counts.items() if count == most)
    if len(best) > 1:
        raise URDFError(f'the tree under {root!r} ends in {len(best)} links behind {most} '
                        f'moving joints each ({", ".join(map(repr, best[:5]))}): name the '
                        "chain's tip link", 'tip')
    return best[0]


def _check_chain_joint(joint, robot):
    """Refuse a joint of the chain the model cannot take; return (Joint fields, notes)."""
    where = f'joint {joint.name!r}'
    if joint.type in ('floating', 'planar'):
        raise URDFError(f'{where}: a {joint.type} joint inside the chain (only revolute, '
                        'continuous, prismatic and fixed joints)')
    if joint.mimic:
        raise URDFError(f'{where} <mimic>: a mimic joint inside the chain (not supported)')
    if joint.type == 'fixed':
        return None, []
    norm = float(np.linalg.norm(joint.axis))
    if abs(norm - 1.0) > AXIS_TOLERANCE:
        raise URDFError(f'{where} <axis xyz="{" ".join(f"{x:g}" for x in joint.axis)}">: not '
                        f'a unit vector (norm {norm:.6g})')
    if robot.links[joint.child].body is None:
        raise URDFError(f'link {joint.child!r}: no <inertial> (joint {joint.name!r} moves it)')
    limit = joint.limit
    if joint.type != 'continuous' and limit is None:
        raise URDFError(f'{where}: a {joint.type} joint needs <limit>')
    limit = limit or {}
    fields = dict(lower=-math.inf, upper=math.inf)
    if joint.type != 'continuous':
        fields = dict(lower=limit.get('lower', 0.0), upper=limit.get('upper', 0.0))
        if not fields['lower'] < fields['upper']:
            raise URDFError(f'{where} <limit>: lower ({fields["lower"]:g}) must be below '
                            f'upper ({fields["upper"]:g})')
    for key, name in (('effort', 'effort_limit'), ('velocity', 'velocity_limit')):
        value = limit.get(key, math.inf if joint.type == 'continuous' else None)
        if value is None:
            raise URDFError(f'{where} <limit>: no {key}')
        if not value > 0.0:
            raise URDFError(f'{where} <limit {key}="{value:g}">: must be > 0')
        fields[name] = value
    for key in ('damping', 'friction'):
        if getattr(joint, key) < 0.0:
            raise URDFError(f'{where} <dynamics {key}="{getattr(joint, key):g}">: must be >= 0')
    return dict(fields, axis=joint.axis / norm, damping=joint.damping, friction=joint.friction,
                type='prismatic' if joint.type == 'prismatic' else 'revolute'), []


def _branches(robot, link, pose, on_path):
    """List what hangs on ``link`` off the chain: [(UrdfJoint, child's pose in the frame)].

    ``pose``: ``link``'s pose in the common frame; joints locked (`UrdfJoint.locked`).
    """
    out = []
    for name in robot.child_joints[link]:
        joint = robot.joints[name]
        if joint.child in on_path:
            continue
        child = lie.se3_compose(pose, joint.locked())
        out.append((joint, child))
        out += _branches(robot, joint.child, child, on_path)
    return out


def _frame(name, joint, parent, pose, geometry):
    xyz, rpy = lie.se3_origin(pose)
    return FixedFrame(name, joint, parent, tuple(map(float, xyz)), tuple(map(float, rpy)),
                      geometry)


def serial_chain(robot, root=None, tip=None, elastic=None, payload=None):
    """Map the chain from ``root`` to ``tip`` of a `Robot` onto links (module doc).

    The links are ``link_description.Link`` s.

    ``root``: default the URDF's root; ``tip``: default the one leaf under the root behind
    the most moving joints. ``elastic``: {URDF link name: function(length [m]) returning the
    ``link_description.Link`` fields that make it flexible (``beam``, ``rod`` or another kind's
    ``element``, ``frames``; its attribute ``slender`` False for a kind the reader maps
    as a rigid link) and
    optionally ``hub``, a `RigidBody` in the URDF link's frame that replaces its
    ``<inertial>`` (the link's rigid part when the URDF's inertia is the whole link's)}.
    ``payload``: a `RigidBody` in the ``tip`` link's frame (a tool or a load the URDF does
    not hold), added to the last link's ``payload`` (what a perturbation's payload factor
    scales). Returns a `UrdfChain`.
    """
    elastic, load = elastic or {}, payload
    root = robot.root if root is None else root
    if root not in robot.links:
        raise URDFError(f'no link {root!r} in the URDF', 'root')
    if tip is None:
        tip = _inferred_tip(robot, root)
    elif tip not in robot.links:
        raise URDFError(f'no link {tip!r} in the URDF', 'tip')
    elif tip not in robot.below(root):
        raise URDFError(f'link {tip!r} is not under the root {root!r}', 'tip')
    path = robot.path(root, tip)
    names = [root] + [joint.child for joint in path]
    on_path = set(names)
    checked, notes = [], []
    for joint in path:
        fields, said = _check_chain_joint(joint, robot)
        checked.append(fields)
        notes += said
    starts = [k for k, joint in enumerate(path) if joint.type in MOVING]
    if not starts:
        raise URDFError(f'no moving joint between the root {root!r} and the tip {tip!r}')
    for name in elastic:
        field = f'flexible.{name}'
        if name not in robot.links:
            raise URDFError(f'no link {name!r} in the URDF', field)
        if name not in on_path:
            raise URDFError(f'link {name!r} is not in the chain {root!r} -> {tip!r}', field)
        if name == root or robot.joints[robot.parent_joint[name]].type == 'fixed':
            raise URDFError(f'link {name!r} is fixed to its parent: only a link that a '
                            'joint of the chain moves can be flexible', field)
    # Groups: the base (root and what is fixed to it), then each moving joint's child
    # and the links fixed after it, up to the next moving joint.
    bounds = [0] + [k + 1 for k in starts] + [len(names)]
    groups = [names[a:b] for a, b in zip(bounds, bounds[1:])]
    links, attached = [], []
    to_tip, poses = np.eye(4), {}          # the previous group's tip frame <- its frame U
    for g, group in enumerate(groups):
        owner = group[0]
        poses = {owner: np.eye(4)}          # each link of the group in U
        for name in group[1:]:
            joint = robot.joints[robot.parent_joint[name]]
            poses[name] = lie.se3_compose(poses[joint.parent], joint.origin)
        hub = [(robot.links[owner].body, np.eye(4))]
        tip_side = [(robot.links[name].body, poses[name]) for name in group[1:]]
        frames = []
        for name in group:
            for joint, pose in _branches(robot, name, poses[name], on_path):
                (hub if name == owner else tip_side).append(
                    (robot.links[joint.child].body, pose))
                frames.append(_frame(joint.child, joint.name, joint.parent, joint.locked(),
                                     robot.links[joint.child].geometry))
        if g == 0:                          # the base: root frame = base frame
            base_body = _lumped(hub + tip_side)
            frames = [_frame(name, robot.parent_joint[name], robot.joints[
                robot.parent_joint[name]].parent, robot.joints[robot.parent_joint[name]].origin,
                robot.links[name].geometry) for name in group[1:]] + frames
            attached, to_tip, previous = frames, np.eye(4), poses
            continue
        joint = path[starts[g - 1]]
        fields = checked[starts[g - 1]]
        if g < len(groups) - 1:             # where the link ends: the next joint's origin
            following = path[starts[g]]
            end = lie.se3_compose(poses[following.parent], following.origin)
        else:
            end = poses[tip]
        offset = lie.se3_compose(lie.se3_compose(to_tip, previous[joint.parent]), joint.origin)
        geometry = robot.links[owner].geometry
        if owner in elastic and getattr(elastic[owner], 'slender', True):
            length = float(np.linalg.norm(end[:3, 3]))
            if length < 1e-9:
                where = ('the tip link, where the last link ends, is its own frame: name '
                         'a tip link fixed past it' if g == len(groups) - 1 else
                         f'the next joint {path[starts[g]].name!r} sits at its origin')
                raise URDFError(f'link {owner!r} has no length for a beam or a rod ({where})',
                                f'flexible.{owner}')
            turn = lie.so3_aligning(end[:3, 3])
            changes = dict(elastic[owner](length))
            own = changes.pop('hub', None)      # the link's own rigid part, if not the URDF's
            if own is not None:
                hub[0] = (own, np.eye(4))
            name = f'{owner}_{kind_of(Link(owner, Joint(owner), length, **changes)).name}'
            in_frame = np.eye(4)            # pose of U in F
            in_frame[:3, :3] = turn.T
            to_tip = lie.se3_compose(lie.se3_from_origin((-length, 0.0, 0.0), (0, 0, 0)),
                                     in_frame)
            offset = lie.se3_compose(offset, lie.se3_inverse(in_frame))
            body = _lumped([(b, lie.se3_compose(in_frame, p)) for b, p in hub])
            link_payload = _lumped([(b, lie.se3_compose(to_tip, p)) for b, p in tip_side])
            frames.insert(0, _frame(owner, f'{owner}_mount', name, in_frame, geometry))
            for position, member in enumerate(group[1:], 1):
                member_joint = robot.joints[robot.parent_joint[member]]
                parent, pose = member_joint.parent, member_joint.origin
                if parent == owner:             # on the way to the next joint: the tip's
                    parent = f'{name}_tip'
                    pose = lie.se3_compose(to_tip, poses[member])
                frames.insert(position, _frame(member, member_joint.name, parent, pose,
                                               robot.links[member].geometry))
            axis = turn.T @ fields['axis']
            geometry = ''
        else:           # rigid, or of a kind not slender: its URDF frame, length 0
            changes = dict(elastic[owner](0.0)) if owner in elastic else {}
            own = changes.pop('hub', None)
            if own is not None:
                hub[0] = (own, np.eye(4))
            name, length, to_tip = owner, 0.0, np.eye(4)
            body, link_payload = _lumped(hub + tip_side), RigidBody()
            frames = [_frame(member, robot.parent_joint[member],
                             robot.joints[robot.parent_joint[member]].parent,
                             robot.joints[robot.parent_joint[member]].origin,
                             robot.links[member].geometry) for member in group[1:]] + frames
            axis = fields['axis']
        payload = link_payload
        if load is not None and g == len(groups) - 1:
            # The tip link's pose in the last link's tip frame: the same for every kind.
            payload = _lumped([(load, lie.se3_compose(to_tip, poses[tip])),
                               (link_payload, np.eye(4))])
        xyz, rpy = lie.se3_origin(offset)
        model_joint = Joint(joint.name, fields['type'], tuple(map(float, axis)),
                            tuple(map(float, xyz)), tuple(map(float, rpy)),
                            damping=fields['damping'], friction=fields['friction'],
                            effort_limit=fields['effort_limit'],
                            velocity_limit=fields['velocity_limit'], lower=fields['lower'],
                            upper=fields['upper'])
        links.append(Link(name, model_joint, length, body=body, payload=payload,
                          attached=tuple(attached + frames), geometry=geometry, **changes))
        attached, previous = [], poses
    return UrdfChain(links, root, tip, base_body, notes)
