"""The flexible joint: a motor, an elastic gear, then a rigid link (Spong's model).

The joint's coordinate theta is the motor's angle (reflected through the gear, what its
encoder measures and its torque u drives); the gear is a torsional spring k [N m/rad]
and damper d [N m s/rad] between the motor and the link, so the link turns by theta +
delta about the same axis, delta the gear's deflection, the link's one elastic
coordinate. The rotor's inertia J_m [kg m^2] (reflected: N^2 times the rotor's own)
spins with theta: Spong's assumption that the rotor's kinetic energy is its own spin's,
J_m theta'^2 / 2, so it adds J_m on theta's diagonal of M (the joint's armature); the
rotor's mass and its other moments belong to the body that carries the motor. The link
beyond the gear is rigid (its ``body`` and ``payload`` as a rigid link's). One joint,
link inertia J_l about the axis, no gravity:

    J_m theta'' + k (theta - theta_l) + d (theta' - theta_l') = u,
    J_l theta_l'' + k (theta_l - theta) + d (theta_l' - theta') = 0,   theta_l = theta + delta,

whose undamped frequencies are sqrt(k / J_l) with the motor clamped and
sqrt(k (1/J_m + 1/J_l)) with it free (M. W. Spong, "Modeling and control of elastic joint
robots", J. Dyn. Sys. Meas. Control 109, 1987). A prismatic joint takes the same form
along its axis: k [N/m], d [N s/m], J_m the reflected mass [kg].
"""

from dataclasses import dataclass, replace
import math

import numpy as np

from ... import lie
from ..rigid import RigidStep
from . import layout
from .layout import CODE


@dataclass(frozen=True)
class FlexibleJoint:
    """The gear of a flexible joint: stiffness [N m/rad], damping [N m s/rad], rotor [kg m^2]."""

    stiffness: float
    damping: float = 0.0
    rotor_inertia: float = 0.0


class FlexibleJointKind(RigidStep):
    """`links.LinkKind` of a link behind a flexible joint (``link_description.Link.element``).

    Beyond the gear its part is a rigid step (`rigid.RigidStep`); k, d and J_m are in
    fields every link has (its coordinate's stiffness and damping, the joint's armature).
    """

    name = 'flexible_joint'
    key = 'flexible_joint'      # {stiffness, damping, rotor_inertia} under a link
    layout = layout
    code = CODE                 # its ``link_kind`` in the kernels (``layout``)
    slender = False             # a URDF link keeps its frame: the gear turns it
    frequency_meaning = 'the motor clamped'
    fewer_modes = 'make the gears stiff in the control model (control_modes: 0)'

    def matches(self, link):
        """Return True for a link whose element is a `FlexibleJoint`."""
        return isinstance(link.element, FlexibleJoint)

    def parser(self, block, field):
        """Return the function of the length giving the link's `FlexibleJoint`.

        Keys: ``stiffness`` k > 0, ``rotor_inertia`` J_m > 0 (M is singular without it:
        its determinant is J_m J_l on one joint), ``damping`` d >= 0 (default 0).
        """
        from ....config_checks import check_keys, number     # the model file's checks
        check_keys(block, field, required=('stiffness', 'rotor_inertia'),
                   optional=('damping',))
        gear = FlexibleJoint(
            number(block['stiffness'], f'{field}.stiffness', 0.0, strict_minimum=True),
            number(block.get('damping', 0.0), f'{field}.damping', 0.0),
            number(block['rotor_inertia'], f'{field}.rotor_inertia', 0.0,
                   strict_minimum=True))
        return lambda length: {'element': gear}

    def element(self, link):
        """Return None: no slender element; the link's inertia is its body's."""
        return None

    def outline(self, link):
        """Return None: drawn as a rigid link."""
        return None

    def is_flexible(self, link):
        """Return True: the gear's deflection is an elastic coordinate."""
        return True

    def sections_move(self, link):
        """Return False: its sections are fixed in its link frame, which the gear turns."""
        return False

    def unit(self, link, name):
        """Return the deflection's unit: 'rad' (a revolute joint) or 'm' (a prismatic one)."""
        return 'm' if link.joint.type == 'prismatic' else 'rad'

    def amplitude(self, link, name):
        """Return the range of the deflection: half a turn (or the link's length)."""
        if link.joint.type == 'prismatic':
            return link.length, ' m', 'the link moved by its length off its motor'
        return math.pi, ' rad', 'the link half a turn off its motor'

    def sag(self, link, gravity):
        """Return 0: the gear's spring is linear at any deflection, the link rigid."""
        return 0.0

    def scaled(self, link, stiffness, damping):
        """Return the gear with its stiffness and damping scaled."""
        gear = link.element
        return {'element': replace(gear, stiffness=gear.stiffness * stiffness,
                                   damping=gear.damping * damping)}

    def reduced(self, link, modes):
        """Return no change for a mode or more (one coordinate), else the rigid twin."""
        return {} if modes >= 1 else self.rigid_twin(link)

    def rigid_twin(self, link):
        """Return a stiff gear: a rigid link whose joint carries the rotor as armature."""
        return {'element': None, 'joint': replace(
            link.joint, armature=link.joint.armature + link.element.rotor_inertia)}

    # -- the chain model's part (``model.link_part.LinkPart``) --------------------------
    def part(self, link, stiffening):
        """Return the part's fields: the gear, and the rotor's inertia on the joint."""
        return {'element': link.element, 'armature': link.element.rotor_inertia}

    def coordinate_names(self, part):
        """Return ['deflection']: the gear's delta."""
        return ['deflection']

    def size(self, part):
        """Return 1 elastic coordinate."""
        return 1

    def elastic(self, part):
        """Return the gear's stiffness k and damping d (1 x 1)."""
        return np.array([[part.element.stiffness]]), np.array([[part.element.damping]])

    def frequencies(self, part):
        """Return None: sqrt(k / M_kk) from the chain's M (the motor clamped)."""
        return None

    def bodies(self, part, hub, payload):
        """Return no hub, and the hub with the payload at the tip frame: the link's body.

        The link's body turns with the gear, so it rides behind the deflection: the tip
        frame is that frame moved by d = (length, 0, 0); with Y (w, v) = (w, v - w x d)
        the transport of a twist from the tip frame back, an inertia I at the joint frame
        is Y^T I Y at the tip (exact; one body per link, as a rigid link's).
        """
        move = np.eye(6)
        move[3:, :3] = lie.hat3((part.length, 0.0, 0.0))         # v + d x w
        return np.zeros((6, 6)), move.T @ hub @ move + payload


KIND = FlexibleJointKind()
