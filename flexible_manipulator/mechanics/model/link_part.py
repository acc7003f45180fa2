"""One link of the chain model (`LinkPart`): its joint, hub, payload and its kind's part.

A link of any kind (``links.KINDS``) becomes one `LinkPart` of a `chain.Chain`: a fixed
offset from the parent's tip frame, a revolute, prismatic or fixed joint about ``axis``,
a rigid hub at the joint frame, the kind's part (a Cosserat rod, a floating-frame beam, a
rigid step or another kind's element) and a rigid payload at its tip frame. Its 6 x 6
inertias are `rigid_inertia`'s (angular first).
"""

import math

import numpy as np

from .. import arguments, lie
from ..chain_kernels.spatial import spatial_inertia
from ..cosserat.rod import CosseratRod
from ..friction import FRICTION_VELOCITY
from ..link_description import RigidBody
from ..links import kind_of

REVOLUTE, PRISMATIC, FIXED = 'revolute', 'prismatic', 'fixed'


def rigid_inertia(mass, com, inertia):
    """6 x 6 inertia [[I_O, m hat(c)], [m hat(c)^T, m I]] about a frame, angular first.

    ``inertia``: 3 x 3 about the centre of mass ``com`` (in the frame) [kg m^2]; the
    chain's `spatial.spatial_inertia` of its `RigidBody`.
    """
    body = RigidBody(float(mass), tuple(np.asarray(com, dtype=float)), inertia)
    return np.array(spatial_inertia(body.mass, body.first_moment(),
                                    body.inertia_about_origin()))


class LinkPart:
    """One link of a ``Chain``, of any kind: offset, joint, hub, its kind's part, payload.

    Its ``kind`` (``links.kind_of``: its ``rod``, ``beam`` or ``element``) answers what the
    model asks of it (module doc). ``rod``: its ``CosseratRod``, or None for a rigid link
    of ``length`` [m] (its tip frame at (length, 0, 0) of the joint frame) or, with
    ``beam`` (a ``modal_beam.ModalBeam``), a floating-frame link of that length: point
    masses on the centre line displaced by the assumed modes, the tip frame displaced and
    turned by them (the reference's ``modal_steps``); ``offset``: 4x4 pose of the joint
    frame at zero joint coordinate in the parent's tip frame; ``joint``: REVOLUTE,
    PRISMATIC or FIXED (a clamp: no coordinate); ``axis``: unit axis in the joint frame;
    ``hub``, ``payload``: 6 x 6 inertias (``rigid_inertia``) at the joint and tip frames;
    ``damping`` [N m s/rad or N s/m] and ``armature`` [kg m^2 or kg] of the joint;
    ``joint_name``: the name of its coordinate (a model file's joint name; ``<name>_joint``
    if None); ``friction`` [N m or N] and ``friction_velocity`` [rad/s or m/s]: its Coulomb
    friction level and regularization (``mechanics.friction``); ``element``: the element of
    another kind (``link_description.Link.element``).
    """

    def __init__(self, name, rod, joint=REVOLUTE, axis=(0.0, 0.0, 1.0), offset=None,
                 hub=None, payload=None, damping=0.0, armature=0.0, length=None, beam=None,
                 joint_name=None, friction=0.0, friction_velocity=FRICTION_VELOCITY,
                 element=None):
        """Check the joint type, the axis and the rod."""
        if rod is not None and not isinstance(rod, CosseratRod):
            raise TypeError(f'link {name!r}: rod must be a CosseratRod or None')
        if rod is None and not (length is not None and length >= 0.0):
            raise ValueError(f'link {name!r}: a rigid link needs its length >= 0')
        if beam is not None and (rod is not None or not np.isclose(beam.length, length)):
            raise ValueError(f'link {name!r}: a modal beam needs no rod and the link\'s length')
        if joint not in (REVOLUTE, PRISMATIC, FIXED):
            raise ValueError(f'link {name!r}: joint must be {REVOLUTE!r}, {PRISMATIC!r} or '
                             f'{FIXED!r}, got {joint!r}')
        axis = np.asarray(axis, dtype=float)
        if axis.shape != (3,) or not np.isclose(np.linalg.norm(axis), 1.0):
            raise ValueError(f'link {name!r}: axis must be a unit 3-vector, got {axis}')
        self.name, self.rod, self.joint, self.axis = name, rod, joint, axis
        self.joint_name = f'{name}_joint' if joint_name is None else str(joint_name)
        self.beam = beam if beam is not None and beam.count else None
        self.element = element              # another kind's element (``link_description.Link``'s)
        self.length = rod.length if rod is not None else float(length)
        self.kind = kind_of(self)           # its `links.LinkKind` (``links.KINDS``)
        self.size = self.kind.size(self)
        self.offset = np.eye(4) if offset is None else np.asarray(offset, dtype=float)
        self.hub, self.payload = self.kind.bodies(
            self, np.zeros((6, 6)) if hub is None else np.asarray(hub, dtype=float),
            np.zeros((6, 6)) if payload is None else np.asarray(payload, dtype=float))
        self.damping, self.armature = float(damping), float(armature)
        self.friction, self.friction_velocity = float(friction), float(friction_velocity)
        if not (self.friction >= 0.0 and math.isfinite(self.friction)
                and self.friction_velocity > 0.0 and math.isfinite(self.friction_velocity)):
            raise ValueError(f'link {name!r}: joint friction must be >= 0 and its '
                             f'friction_velocity > 0, got {friction!r} and '
                             f'{friction_velocity!r}')
        self.motion = np.zeros(6)            # the joint's twist per unit rate, joint frame
        if joint == REVOLUTE:
            self.motion[:3] = axis
        elif joint == PRISMATIC:
            self.motion[3:] = axis

    def coordinate_names(self):
        """Names of the link's elastic coordinates: the rod's strains or the beam's modes."""
        return self.kind.coordinate_names(self)

    def joint_pose(self, theta):
        """exp(theta hat(motion)): the joint's motion at coordinate ``theta``."""
        return lie.se3_exp(theta * self.motion)

    def node_inertias(self):
        """Section inertia carried at the end of each segment (zero at the tip)."""
        return self.kind.node_inertias(self)

    def point_inertias(self):
        """Inertias (points, 6, 6) of a modal beam's point masses at their frames."""
        return self.kind.point_inertias(self)

    def check_abscissa(self, X):
        """Raise ValueError naming the link unless 0 <= X <= length [m]."""
        arguments.abscissa(X, self.length, self.name)
