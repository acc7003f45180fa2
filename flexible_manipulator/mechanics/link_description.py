"""Serial chains of rigid and flexible links: model description, workspace and algorithms.

A chain is a sequence of links, each driven by one joint (revolute or prismatic) whose
fixed origin is given in the tip frame of the previous link (the base frame for the first
one), as a URDF joint origin is. Each link frame sits at its joint; its x axis runs along
the link to the tip frame at x = length. A link owns

* a rigid body attached to its link frame (hub, clamp, motor; may be massless),
* optionally a uniform Euler-Bernoulli beam along x, clamped in the link frame (floating
  frame of reference), described by assumed clamped-free modes bending along y and/or z,
* optionally a rigid payload attached to its tip frame.

Generalized coordinates are x = (theta_1..theta_n, q_1..q_m): the joint coordinates [rad or
m] first, then the modal coordinates of every flexible link in link order [m of tip
deflection per unit mode, as W_k(L) = +-2], y-plane modes before z-plane modes. The
equations of motion are

    M(x) x'' + h(x, x') = B u,    B = [I_n; 0],

where h gathers Coriolis, centrifugal, gravity, elastic K q, structural damping (modal
damping ratio zeta: D_k = 2 zeta omega_k rho A L) and joint friction, viscous D v and
Coulomb (regularized, `friction`).

With ``geometric_stiffening`` the sections of a bent beam move inward by the
foreshortening u_1 = -1/2 q^T G(x) q (inextensible centre line), which couples axial
inertia loads (centrifugal, gravity, payload) to bending: the rotating-beam stiffening.
Without it the model is the classical linear floating-frame model, which diverges when
spun up fast (Kane, Ryan & Banerjee 1987).

This module holds the description (`Link`, `Joint`, `RigidBody`, `Beam`); the one chain
model of every link kind is ``model.chain.Chain`` (built by `links.chain_from_links`),
its kernels in ``model``.
"""

from dataclasses import dataclass, field
import math

import numpy as np

from .friction import FRICTION_VELOCITY


@dataclass(frozen=True)
class RigidBody:
    """Mass [kg], centre of mass [m] and inertia tensor about the centre of mass [kg m^2]."""

    mass: float = 0.0
    com: tuple = (0.0, 0.0, 0.0)
    inertia: tuple = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))

    def first_moment(self):
        """Return m c [kg m]."""
        return self.mass * np.asarray(self.com, dtype=float)

    def inertia_about_origin(self):
        """I_O = I_C + m (|c|^2 I - c c^T) [kg m^2] (parallel-axis theorem)."""
        c = np.asarray(self.com, dtype=float)
        return np.asarray(self.inertia, dtype=float) + self.mass * (c @ c * np.eye(3)
                                                                    - np.outer(c, c))


@dataclass(frozen=True)
class Joint:
    """A one-degree-of-freedom joint: origin in the parent tip frame, then motion along axis."""

    name: str
    type: str = 'revolute'            # revolute | prismatic
    axis: tuple = (0.0, 0.0, 1.0)     # unit vector in the joint frame
    xyz: tuple = (0.0, 0.0, 0.0)      # origin position [m]
    rpy: tuple = (0.0, 0.0, 0.0)      # origin orientation, URDF fixed-axis roll-pitch-yaw [rad]
    damping: float = 0.0              # viscous friction [N m s/rad or N s/m]
    armature: float = 0.0             # reflected rotor inertia [kg m^2 or kg]
    friction: float = 0.0             # Coulomb friction level F_c [N m or N] (`friction`)
    friction_velocity: float = FRICTION_VELOCITY   # its regularization v_s [rad/s or m/s]
    effort_limit: float = math.inf
    velocity_limit: float = math.inf
    lower: float = -math.inf
    upper: float = math.inf


@dataclass(frozen=True)
class Beam:
    """Uniform Euler-Bernoulli beam along the link's x axis, clamped at the link frame."""

    linear_density: float                     # rho A [kg/m]
    bending_stiffness: tuple                  # (EI for bending along y, along z) [N m^2]
    modes: tuple = (2, 0)                     # assumed modes along (y, z)
    damping_ratio: float = 0.0                # modal damping ratio zeta [-]
    quadrature_points: int = 0                # mass points on the centre line; 0: automatic
    # The section drawn (URDF visual, browser view), ('circle', r) or ('rectangle', width,
    # height) [m]; None: unknown. Not in the dynamics: rho A and EI are.
    shape: tuple = None

    def point_count(self):
        """Return the number of Gauss points for the mass integrals.

        8 + 2 max(modes) integrates the products of the mode shapes to ~1e-12 relative.
        """
        return self.quadrature_points or 8 + 2 * max(self.modes)

    def as_rod(self, length):
        """Return the undeformed beam as a rigid slender rod: (mass, first moment, inertia).

        Mass rho A L [kg] at L/2 on the x axis, first moment (rho A L^2 / 2, 0, 0) [kg m]
        and inertia about the link origin diag(0, m L^2/3, m L^2/3) [kg m^2]: what a beam
        without modes is in the dynamics, and what the URDF shows for every beam.
        """
        mass = self.linear_density * length
        return (mass, np.array([0.5 * mass * length, 0.0, 0.0]),
                np.diag([0.0, mass * length ** 2 / 3, mass * length ** 2 / 3]))


@dataclass(frozen=True)
class FixedFrame:
    """A frame fixed to a link for TF and the robot description only (no dynamics).

    A URDF link merged into a body of the chain (``description.urdf_reader``): its pose
    ``xyz``, ``rpy`` (URDF origin convention) in its ``parent`` frame, which is a frame of
    the link that carries it (``<name>``, ``<name>_tip``), the base frame (on the first
    link), or a frame attached before it; ``joint`` names the transform, ``geometry``
    holds the URDF ``<visual>`` and ``<collision>`` elements the description copies.
    """

    name: str
    joint: str
    parent: str
    xyz: tuple = (0.0, 0.0, 0.0)
    rpy: tuple = (0.0, 0.0, 0.0)
    geometry: str = ''


@dataclass(frozen=True)
class Link:
    """One link of the chain and the joint that drives it.

    ``attached``: `FixedFrame` s that ride on the link (a URDF's merged links);
    ``geometry``: URDF ``<visual>``/``<collision>`` elements of the link frame, copied into
    the robot description in place of the default bar ('' for the bar).
    """

    name: str
    joint: Joint
    length: float
    body: RigidBody = field(default_factory=RigidBody)
    beam: Beam = None
    payload: RigidBody = field(default_factory=RigidBody)
    frames: int = 0                           # section frames on TF between root and tip
    rod: object = None                        # a cosserat.rod.CosseratRod (Cosserat chains)
    attached: tuple = ()
    geometry: str = ''
    # The element of a registered kind (``links.KINDS``) without a field of its own here;
    # None for rigid links, beams and rods.
    element: object = None
