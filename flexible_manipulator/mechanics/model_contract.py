"""The chain model's contract: what every chain model exposes, stated once.

`ChainModel` is what the simulation, the plants, the controllers and the descriptions use
of a chain model, whatever its links (rigid, floating-frame modal beams, Cosserat rods) and
its base (fixed or free-floating). One class implements it for every link kind:
``model.chain.Chain``, which ``model_config.load_model`` and
``links.chain_from_links`` build. The contract test (test/test_model_contract.py) checks
every chain model file of config/models/ and seeded random mixed chains against it.

Coordinates: q (nq) holds the joint coordinates first (n_joints, model joint order), then
the links' elastic coordinates (modal amplitudes or strain coefficients, `coordinate_names`
order), then a floating base's position [m] and unit quaternion (w, x, y, z); v (nv) the
same with the base's twist (6) in place of the last two. Units: SI, radians. Inputs u
(nu): one effort per actuated joint [N m or N].

Each method takes ``data`` (the workspace of `create_data`, reused call after call) and
returns a new array the caller owns, or writes ``out`` when given; a wrong size or a
non-finite argument is a ValueError naming the argument.

Frames: "base frame" components are the model's base frame (the world's with a floating
base); a section is the material frame at abscissa x [m] along a link (x = 0: the link's
joint frame, x = length: its tip frame).
"""

from typing import Protocol, runtime_checkable


@runtime_checkable
class ChainModel(Protocol):
    """What every chain model provides (module doc); SI units."""

    name: str                  # the model's name (model file's ``name``)
    n_joints: int              # joints, first in q and v
    nq: int                    # configuration size
    nv: int                    # velocity size (nq - 1 with a floating base's quaternion)
    nu: int                    # inputs (actuated joints)
    coordinate_names: tuple    # names of the velocity coordinates, joints first: nv, or
    #                            nv - 6 with a floating base (its twist has no names)
    joint_names: tuple         # the joints' names (n_joints)
    effort_limit: object       # per input [N m or N] (nu)
    velocity_limit: object     # per joint [rad/s or m/s] (n_joints)
    mode_frequencies: object   # per elastic coordinate: its clamped frequency [rad/s]

    def create_data(self):
        """Return a new workspace for the methods below."""

    def neutral_configuration(self):
        """Return q at the joints' zero, undeformed links, the base at its origin (nq)."""

    def mass_matrix(self, data, q, out=None):
        """Return M(q) (nv x nv), symmetric positive definite [kg, kg m, kg m^2]."""

    def bias_forces(self, data, q, v, out=None):
        """Return h(q, v) (nv): Coriolis, centrifugal, gravity, elastic, damping and friction.

        M(q) v' + h(q, v) = B u is the equation of motion; h(q, 0) is the gradient of
        `potential_energy` (gravity and elastic forces).
        """

    def mass_and_bias(self, data, q, v, mass_out=None, bias_out=None):
        """Return (M(q), h(q, v)): `mass_matrix` and `bias_forces` at one state, one call.

        A computed-torque tick needs both; a model whose walk yields both at once (the
        Cosserat chain's) computes them in one pass.
        """

    def rnea(self, data, q, v, a, out=None):
        """Return the inverse dynamics M(q) a + h(q, v) (nv) for accelerations ``a`` (nv).

        On the joints the efforts that produce ``a``; on the elastic coordinates the
        residual of their equations.
        """

    def forward_dynamics(self, data, q, v, u, out=None):
        """Return v' = M(q)^-1 (B u - h(q, v)) (nv) for the inputs ``u`` (nu)."""

    def input_matrix(self):
        """Return B (nv x nu): where each input acts (a copy)."""

    def elastic_coefficients(self):
        """Return the diagonal stiffness and viscous damping per coordinate (nv each).

        Joints: zero stiffness, their viscous friction; elastic coordinates: their modal
        or strain stiffness and damping. Copies.
        """

    def joint_friction(self, v):
        """Return the joints' friction forces in h (n_joints) at velocities ``v``.

        Viscous and Coulomb, D v + F_c tanh(v / v_s) (``mechanics.friction``); ``v``: the
        joints' velocities or the whole v.
        """

    def kinetic_energy(self, data, q, v):
        """Return T = v^T M(q) v / 2 [J]."""

    def potential_energy(self, data, q):
        """Return the gravity and elastic energy [J]."""

    def modes_of(self, link_index):
        """Return (count, names) of a link's elastic coordinates.

        Names without the link's prefix (``y1``: an assumed mode; ``bending_z_0``: a strain
        coefficient); ``mode_names`` holds ``<link>_<name>``.
        """

    def frame_placements(self, data, q):
        """Return (link_R, link_p, tip_R, tip_p): every link's joint and tip frame.

        In the base frame (n x 3 x 3 and n x 3 [m]): the sections at x = 0 and x = length.
        """

    def section_pose(self, data, q, link_index, x):
        """Return (R, p): the section at x [m] along a link in the base frame (3 x 3, 3)."""

    def section_jacobian(self, data, q, link_index, x):
        """Return J (6 x nv) of the section at x [m]: v to (omega, p') in the base frame.

        Angular rows first; J is `section_kinematics`' J.
        """

    def section_kinematics(self, data, q, v, link_index, x, out=None):
        """Return (R, p, J, twist, accel) of the section at x [m] along a link.

        R (3 x 3) and p (3) in base-frame components (the world's with a floating base),
        J (6 x nv) mapping v to (omega, p') with the angular rows first, twist = J v and
        accel = J' v at zero generalized acceleration, without gravity.
        """

    def with_modes(self, modes):
        """Return the model with at most ``modes`` elastic coordinates per link and plane."""

    def rigid_twin(self):
        """Return the rigid model of the same links (no elastic coordinates), or None."""
