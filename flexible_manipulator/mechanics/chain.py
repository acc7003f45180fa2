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
damping ratio zeta: D_k = 2 zeta omega_k rho A L) and joint viscous friction.

With ``geometric_stiffening`` the sections of a bent beam move inward by the
foreshortening u_1 = -1/2 q^T G(x) q (inextensible centre line), which couples axial
inertia loads (centrifugal, gravity, payload) to bending: the rotating-beam stiffening.
Without it the model is the classical linear floating-frame model, which diverges when
spun up fast (Kane, Ryan & Banerjee 1987).

`SerialChain` holds the constant description and its flattened arrays; `create_data()`
returns a `ChainData` workspace that every algorithm writes into, so a hot loop allocates
nothing (Pinocchio's model/data split). The algorithms live in `chain_kernels`, one per module.
"""

from collections import namedtuple
import dataclasses
from dataclasses import dataclass, field
import math

import numpy as np
import transforms3d

from . import arguments, chain_kernels as kernels, compiled
from .chain_kernels import entries
from .chain_layout import MODEL_LAYOUT, WORKSPACE, ChainData, ModelArrays, data_table
from .tuple_tables import allocate
from .modal_beam import ModalBeam


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
class Link:
    """One link of the chain and the joint that drives it."""

    name: str
    joint: Joint
    length: float
    body: RigidBody = field(default_factory=RigidBody)
    beam: Beam = None
    payload: RigidBody = field(default_factory=RigidBody)
    frames: int = 0                           # section frames on TF between root and tip
    rod: object = None                        # a cosserat.rod.CosseratRod (Cosserat chains)


# Links from which the articulated-body algorithm is faster than the composite mass
# matrix (measured with 2 modes per link, bench/bench_scaling.py).
ARTICULATED_FROM_LINKS = 4

SectionKinematics = namedtuple('SectionKinematics', 'R p J twist accel')
SectionKinematics.__doc__ = ('Result of `SerialChain.section_kinematics`: pose (R, p), '
                             "Jacobian J, twist J v and J' v (two halves of one array).")


@dataclass(frozen=True)
class SectionTable:
    """Mode values at one abscissa x of a link: W_k(x), W_k'(x) and G(x) (see beam_modes)."""

    link: int
    x: float
    phi: np.ndarray
    slope: np.ndarray
    g: np.ndarray


class SerialChain:
    """Constant description of a serial chain of rigid and flexible links."""

    # what `mode_frequencies` are, and how to keep fewer coordinates (advice in messages)
    MODE_FREQUENCY_MEANING = 'clamped-free'
    FEWER_MODES = 'keep fewer modes per link in the control model (control_modes)'

    def __init__(self, name, links, gravity_base=(0.0, 0.0, 0.0), base_frame='base_link',
                 base_xyz=(0.0, 0.0, 0.0), base_rpy=(0.0, 0.0, 0.0), tool_frame='tool0',
                 geometric_stiffening=True, floating_base=None):
        """Build the model and its flattened arrays.

        :param links: sequence of `Link`, from the base outwards.
        :param gravity_base: gravity acceleration in base-frame components [m/s^2] (world
            components for a floating base).
        :param base_xyz, base_rpy: pose of the base frame in the world [m, rad], for TF
            and the robot description (the initial pose of a floating base).
        :param geometric_stiffening: include the foreshortening kinematics (see module).
        :param floating_base: None for a base fixed in the world, else the `RigidBody` of a
            free-floating base (a spacecraft, a mobile platform in free flight).
        """
        self.name = name
        self.links = tuple(links)
        self.base_frame = base_frame
        self.base_xyz = np.array(base_xyz, dtype=float)
        self.base_rpy = np.array(base_rpy, dtype=float)
        self.tool_frame = tool_frame
        self.geometric_stiffening = bool(geometric_stiffening)
        self.gravity_base = np.array(gravity_base, dtype=float)
        n = len(self.links)
        self.n_joints = self.nu = n
        self.joint_names = tuple(link.joint.name for link in self.links)
        self.link_names = tuple(link.name for link in self.links)
        self.mode_names = tuple(f'{link.name}_{name}' for j, link in enumerate(self.links)
                                for name in self.modes_of(j)[1])
        self.n_modes = len(self.mode_names)
        self.floating_base = floating_base
        self.nq = self.nv = n + self.n_modes
        # Forward dynamics of `forward_dynamics` and the explicit steppers: 'composite'
        # (M and a Cholesky solve) or 'articulated' (O(n)); may be set after construction.
        self.dynamics_algorithm = ('articulated' if n >= ARTICULATED_FROM_LINKS
                                   else 'composite')
        self.coordinate_names = self.joint_names + self.mode_names
        if floating_base is not None:
            self.nq, self.nv = self.nq + 7, self.nv + 6
        joints = [link.joint for link in self.links]
        self.effort_limit = np.array([j.effort_limit for j in joints])
        self.velocity_limit = np.array([j.velocity_limit for j in joints])
        self.lower = np.array([j.lower for j in joints])
        self.upper = np.array([j.upper for j in joints])
        self.mode_frequencies = np.zeros(self.n_modes)   # clamped-free omega_k [rad/s]
        # Widest modal block of any link: the padded size of every per-link mode table.
        self.max_link_modes = max([1] + [self.modes_of(j)[0] for j in range(n)])
        self._sections, self._beams = {}, {}
        self._entries = {}
        self.arrays = self._flatten()
        self._table = MODEL_LAYOUT.table(self.arrays)      # addresses of self.arrays
        self._shapes = ((self.nq,), (self.nv,), (self.nu,))   # q, v, u

    def neutral_configuration(self):
        """Coordinates with zero joint angles, straight links and the base at its pose.

        A floating base's coordinates come after the chain's: position [m] in the world,
        then the unit quaternion (w, x, y, z) of its orientation (from base_xyz, base_rpy).
        """
        q = np.zeros(self.nq)
        if self.floating_base is not None:
            b = self.nv - 6
            q[b:b + 3] = self.base_xyz
            q[b + 3:] = transforms3d.euler.euler2quat(*self.base_rpy, axes='sxyz')
        return q

    def with_modes(self, modes):
        """Return the same chain with at most ``modes`` assumed modes per plane of each link.

        ``modes = 0`` is the rigid twin (every beam a rigid rod of the same mass). Modal
        coordinates keep their names (``<link>_y1`` ...), so a state of this chain maps
        onto the reduced one by name.
        """
        links = [dataclasses.replace(link, beam=dataclasses.replace(
            link.beam, modes=tuple(min(int(modes), count) for count in link.beam.modes)))
            if link.beam is not None else link for link in self.links]
        return SerialChain(self.name, links, self.gravity_base, self.base_frame, self.base_xyz,
                           self.base_rpy, self.tool_frame, self.geometric_stiffening,
                           self.floating_base)

    def rigid_twin(self):
        """Return the same chain with every beam a rigid rod (zero modes): joints only."""
        return self.with_modes(0)

    # -- construction ----------------------------------------------------------------
    def modes_of(self, link_index):
        """Return (count, names) of a link's elastic coordinates (0, () if rigid).

        Names without the link's prefix (``mode_names`` holds ``<link>_<name>``): ``y1``,
        ``y2``, ..., ``z1``: the assumed modes bending in the link's x-y, then x-z plane.
        """
        beam = self.links[link_index].beam
        if beam is None:
            return 0, ()
        return sum(beam.modes), tuple(f'{plane}{k + 1}' for plane, count in
                                      zip('yz', beam.modes) for k in range(count))

    def mode_start(self, link_index):
        """Index in v of the first modal coordinate of a link (modes follow all joints)."""
        return int(self.arrays.mode_start[link_index])

    def joint_axis(self, link_index):
        """Return the unit axis of a link's joint in its joint frame (3)."""
        return self.arrays.joint_axis[link_index].copy()

    def elastic_coefficients(self):
        """Diagonal stiffness K and viscous damping D per velocity coordinate (nv each).

        Joints: no stiffness, the joint friction [N m s/rad or N s/m]; modes: K_k [N m] and
        D_k = 2 zeta omega_k rho A L [N m s]. Copies.
        """
        return self.arrays.stiffness.copy(), self.arrays.damping.copy()

    def _beam(self, link_index):
        """``modal_beam.ModalBeam`` of a link's beam (None for a rigid link), cached."""
        if link_index not in self._beams:
            link = self.links[link_index]
            self._beams[link_index] = (None if link.beam is None else ModalBeam(
                link.beam, link.length, self.geometric_stiffening))
        return self._beams[link_index]

    def _flatten(self):
        n = len(self.links)
        kmax = self.max_link_modes
        points = [self._beam(j).x.size if self.modes_of(j)[0] else 0 for j in range(n)]
        total = sum(points)
        a = ModelArrays(
            joint_type=np.zeros(n, dtype=np.int64), joint_axis=np.zeros((n, 3)),
            joint_R0=np.zeros((n, 3, 3)), joint_p0=np.zeros((n, 3)),
            armature=np.zeros(n), mass=np.zeros(n),
            first_moment=np.zeros((n, 3)), inertia=np.zeros((n, 3, 3)),
            payload_mass=np.zeros(n), payload_first_moment=np.zeros((n, 3)),
            payload_inertia=np.zeros((n, 3, 3)), length=np.zeros(n),
            mode_start=np.zeros(n, dtype=np.int64), mode_count=np.zeros(n, dtype=np.int64),
            # Diagonal stiffness and viscous damping per coordinate: zero stiffness and the
            # joint friction on joints, K_k and 2 zeta omega_k rho A L on modes.
            mode_plane=np.ones((n, kmax), dtype=np.int64), stiffness=np.zeros(self.nv),
            damping=np.zeros(self.nv), point_start=np.zeros(n + 1, dtype=np.int64),
            point_x=np.zeros(total), point_mass=np.zeros(total),
            point_phi=np.zeros((total, kmax)), point_g=np.zeros((total, kmax, kmax)),
            tip_phi=np.zeros((n, kmax)), tip_slope=np.zeros((n, kmax)),
            tip_g=np.zeros((n, kmax, kmax)), gravity=self.gravity_base.copy(),
            floating=int(self.floating_base is not None), base_mass=0.0,
            base_first_moment=np.zeros(3), base_inertia=np.zeros((3, 3)),
            body_spatial=np.zeros((n, 6, 6)), payload_spatial=np.zeros((n, 6, 6)),
            base_spatial=np.zeros((6, 6)))
        if self.floating_base is not None:
            base = self.floating_base
            a = a._replace(base_mass=float(base.mass), base_first_moment=base.first_moment(),
                           base_inertia=base.inertia_about_origin())
            a.base_spatial[:] = kernels.spatial_inertia(a.base_mass, a.base_first_moment,
                                                        a.base_inertia)
        mode_start, point = n, 0
        for j, link in enumerate(self.links):
            joint = link.joint
            a.joint_type[j] = (kernels.JOINT_REVOLUTE if joint.type == 'revolute'
                               else kernels.JOINT_PRISMATIC)
            axis = np.asarray(joint.axis, dtype=float)
            a.joint_axis[j] = axis / np.linalg.norm(axis)
            a.joint_R0[j] = transforms3d.euler.euler2mat(*joint.rpy, axes='sxyz')
            a.joint_p0[j] = joint.xyz
            a.damping[j] = joint.damping
            a.armature[j] = joint.armature
            a.mass[j] = link.body.mass
            a.first_moment[j] = link.body.first_moment()
            a.inertia[j] = link.body.inertia_about_origin()
            count, names = self.modes_of(j)
            if link.beam is not None and count == 0:
                # A beam without modes is a rigid rod: fold it into the rigid part.
                mass, first_moment, inertia = link.beam.as_rod(link.length)
                a.mass[j] += mass
                a.first_moment[j] += first_moment
                a.inertia[j] += inertia
            a.payload_mass[j] = link.payload.mass
            a.payload_first_moment[j] = link.payload.first_moment()
            a.payload_inertia[j] = link.payload.inertia_about_origin()
            a.length[j] = link.length
            a.point_start[j] = point
            a.mode_start[j] = mode_start
            a.mode_count[j] = count
            if count:
                beam = self._beam(j)
                span = slice(point, point + points[j])
                a.point_x[span] = beam.x
                a.point_mass[span] = beam.mass
                a.mode_plane[j, :count] = [1 if name[0] == 'y' else 2 for name in names]
                self.mode_frequencies[mode_start - n:mode_start - n + count] = beam.frequencies
                modes = slice(mode_start, mode_start + count)
                a.stiffness[modes] = beam.stiffness
                a.damping[modes] = beam.damping
                a.point_phi[span, :count] = beam.phi
                a.point_g[span, :count, :count] = beam.g
                tip = self.section(j, link.length)
                a.tip_phi[j], a.tip_slope[j], a.tip_g[j] = tip.phi, tip.slope, tip.g
            point += points[j]
            mode_start += count
        a.point_start[n] = point
        for j in range(n):
            a.body_spatial[j] = kernels.spatial_inertia(a.mass[j], a.first_moment[j],
                                                        a.inertia[j])
            a.payload_spatial[j] = kernels.spatial_inertia(
                a.payload_mass[j], a.payload_first_moment[j], a.payload_inertia[j])
        return a

    # -- workspace -------------------------------------------------------------------
    def create_data(self):
        """Return a fresh workspace for this model (all buffers allocated here, once)."""
        k = self.max_link_modes
        data = allocate(ChainData, WORKSPACE,
                        {'n': self.n_joints, 'nv': self.nv, 'k': k, '6+k': 6 + k})
        data.eye3[:] = np.eye(3)
        data_table(data)
        return data

    # -- sections --------------------------------------------------------------------
    def section(self, link_index, x):
        """Mode tables of the section at abscissa x [m] of a link (cached)."""
        link_index = arguments.link_index(link_index, len(self.links), self.name)
        link = self.links[link_index]
        x = arguments.abscissa(x, link.length, link.name)
        key = (link_index, x)
        table = self._sections.get(key)
        if table is None:
            kmax = self.max_link_modes
            count, _ = self.modes_of(link_index)
            phi, slope, g = np.zeros(kmax), np.zeros(kmax), np.zeros((kmax, kmax))
            if count:
                phi[:count], slope[:count], g[:count, :count] = self._beam(link_index).section(x)
            table = SectionTable(link_index, float(x), phi, slope, g)
            self._sections[key] = table
        return table

    # -- algorithms ------------------------------------------------------------------
    # Compiled steppers on this model's equations (see integrators.Stepper). The explicit
    # schemes take the articulated-body algorithm from ARTICULATED_FROM_LINKS links on,
    # where it is the faster (bench/bench_scaling.py); the implicit one needs M itself.
    rosenbrock_kernel = staticmethod(entries.rosenbrock_steps)

    @property
    def explicit_kernel(self):
        """Compiled explicit stepper for `dynamics_algorithm`."""
        if self.dynamics_algorithm == 'articulated':
            return entries.explicit_steps_articulated
        return entries.explicit_steps

    def kernel_inputs(self, data):
        """Return the model's and ``data``'s tables: the first two arguments of its entries."""
        return self._table, data_table(data)

    def _run(self, kernel, data, *args):
        """Run an entry of `chain_kernels.entries` on this model's table and ``data``'s.

        Through the entry's compiled machine code (`compiled.entry_point`): every argument
        is passed, defaults included, and arrays are float64 C-contiguous (the public
        methods coerce them), so that every call has the types of the first.
        """
        return run_entry(self, kernel, data_table(data), *args)

    def _q(self, q):
        return arguments.vector('q', q, self.nq, self.name, 'coordinates (nq)')

    def _v(self, name, v):
        return arguments.vector(name, v, self.nv, self.name, 'velocity entries (nv)')

    def rnea(self, data, q, v, a, out=None):
        """Inverse dynamics M a + h(q, v) [joint efforts; modal residuals] (nv).

        Returns a copy of data.tau, or writes it into ``out`` (nv) and returns ``out``.
        """
        self._run(entries.rnea, data, self._q(q), self._v('v', v), self._v('a', a), 1.0,
                  True, False)
        return arguments.result(data.tau, out, 'rnea')

    def mass_matrix(self, data, q, out=None):
        """Mass matrix M(q) (nv x nv), symmetric positive definite.

        Returns a copy of data.mass, or writes it into ``out`` and returns ``out``.
        """
        self._run(entries.mass_matrix, data, self._q(q), False)
        return arguments.result(data.mass, out, 'mass_matrix')

    def bias_forces(self, data, q, v, out=None):
        """Bias forces h(q, v) = rnea(q, v, 0) (nv): a copy of data.tau, or into ``out``."""
        data.zero_nv[:] = 0.0
        self._run(entries.rnea, data, self._q(q), self._v('v', v), data.zero_nv, 1.0, True,
                  False)
        return arguments.result(data.tau, out, 'bias_forces')

    def mass_and_bias(self, data, q, v, mass_out=None, bias_out=None):
        """(M(q), h(q, v)): `mass_matrix` and `bias_forces` (two kernels: CRBA and RNEA)."""
        return self.mass_matrix(data, q, mass_out), self.bias_forces(data, q, v, bias_out)

    def forward_dynamics(self, data, q, v, u, out=None):
        """Accelerations M^-1 (B u - h) (nv): a copy of data.acceleration, or into ``out``.

        ``u``: the nu actuator efforts. By `dynamics_algorithm`, the faster for this chain:
        `articulated_forward_dynamics` from ARTICULATED_FROM_LINKS links on, else
        `composite_forward_dynamics`. Raises `numpy.linalg.LinAlgError` if the chain's
        inertia is not positive definite at q.
        """
        if self.dynamics_algorithm == 'articulated':
            return self._dynamics(entries.articulated_forward_dynamics, 'articulated inertia',
                                  data, q, v, u, out)
        return self._dynamics(entries.forward_dynamics, 'mass matrix', data, q, v, u, out)

    def composite_forward_dynamics(self, data, q, v, u, out=None):
        """`forward_dynamics` by the composite mass matrix and a Cholesky solve.

        Raises `numpy.linalg.LinAlgError` if M is not positive definite at q.
        """
        return self._dynamics(entries.forward_dynamics, 'mass matrix', data, q, v, u, out)

    def articulated_forward_dynamics(self, data, q, v, u, out=None):
        """`forward_dynamics` by the articulated-body algorithm (`chain_kernels.aba`).

        O(n) in links, the same accelerations. Raises `numpy.linalg.LinAlgError` if an
        articulated inertia is not positive definite at q.
        """
        return self._dynamics(entries.articulated_forward_dynamics, 'articulated inertia',
                              data, q, v, u, out)

    def _dynamics(self, kernel, what, data, q, v, u, out):
        return run_dynamics(self, kernel, what, data, data_table, q, v, u, out)

    def input_matrix(self):
        """B (nv x nu): actuator efforts act on the joints only."""
        return np.eye(self.nv, self.nu)

    def frame_placements(self, data, q):
        """Poses in the base frame (the world with a floating base) of all link and tip frames.

        Returns copies of (link_R, link_p, tip_R, tip_p): n x 3 x 3 and n x 3 [m].
        """
        q = self._q(q)
        self._run(entries.placements, data, q)
        result = arguments.result
        link_R, link_p, tip_R, tip_p = (result(data.link_R, None, 'frame_placements'),
                                        result(data.link_p, None, 'frame_placements'),
                                        result(data.tip_R, None, 'frame_placements'),
                                        result(data.tip_pos, None, 'frame_placements'))
        if self.floating_base is not None:
            for j in range(len(self.links)):
                self._in_world(q, (link_R[j], link_p[j]))
                self._in_world(q, (tip_R[j], tip_p[j]))
        return link_R, link_p, tip_R, tip_p

    def _in_world(self, q, pose=None, motions=()):
        """Turn a floating base's section quantities from base to world components, in place.

        The kernels give a section's pose relative to the base frame and its absolute
        motion (J, twist, J' v) in base axes: with the base at (R_B, p_B), R <- R_B R,
        p <- p_B + R_B p and every 3-row block of a motion is turned by R_B.
        """
        b = self.nv - 6
        R_B = transforms3d.quaternions.quat2mat(q[b + 3:b + 7])
        if pose is not None:
            pose[0][:] = R_B @ pose[0]
            pose[1][:] = q[b:b + 3] + R_B @ pose[1]
        for motion in motions:
            motion[:3] = R_B @ motion[:3]
            motion[3:] = R_B @ motion[3:]

    def section_pose(self, data, q, link_index, x):
        """Orientation R (3x3) and position p (3) [m] of a material section at x [m].

        In the base frame (the world with a floating base).
        """
        table = self.section(link_index, x)
        q = self._q(q)
        R, p = np.zeros((3, 3)), np.zeros(3)
        self._run(entries.section_placement, data, int(link_index), table.x, table.phi,
                  table.slope, table.g, q, R, p)
        if self.floating_base is not None:
            self._in_world(q, (R, p))
        arguments.checked(p, 'section_pose')
        return arguments.checked(R, 'section_pose'), p

    def section_jacobian(self, data, q, link_index, x):
        """Jacobian (6 x nv, angular rows first) of a section frame: v to (omega, p').

        Base-frame components (the world's with a floating base).
        """
        q = self._q(q)
        table = self.section(link_index, x)
        R, p = np.zeros((3, 3)), np.zeros(3)
        self._run(entries.section_placement, data, int(link_index), table.x, table.phi,
                  table.slope, table.g, q, R, p)
        J = np.zeros((6, self.nv))
        self._run(entries.section_jacobian, data, int(link_index), table.x, table.phi,
                  table.slope, table.g, q, R, J)
        if self.floating_base is not None:
            self._in_world(q, motions=(J,))
        return arguments.checked(J, 'section_jacobian')

    def section_kinematics(self, data, q, v, link_index, x, out=None):
        """Pose, Jacobian, twist and velocity-product acceleration of a section, one call.

        Returns a `SectionKinematics` (R, p, J, twist, accel): R (3x3) and p (3) in the
        base frame (the world with a floating base), J (6 x nv, angular rows first), twist
        = J v = (w, p') [rad/s, m/s] and accel = J' v = (w', p'') [rad/s^2, m/s^2] at zero
        generalized acceleration and without gravity (the section's acceleration is
        J q'' + accel), in the same components. The kernel writes into new arrays, or into
        ``out``, the result of an earlier call on this model (a hot loop then allocates
        nothing).
        """
        table = self.section(link_index, x)
        if out is None:
            motion = np.zeros(12)
            out = SectionKinematics(np.zeros((3, 3)), np.zeros(3), np.zeros((6, self.nv)),
                                    motion[:6], motion[6:])
        elif not (isinstance(out, SectionKinematics) and out.J.shape == (6, self.nv)):
            raise ValueError(f'out: section_kinematics writes into the result of an earlier '
                             f'call on {self.name!r}, got {type(out).__name__}')
        q = self._q(q)
        self._run(entries.section_kinematics, data, int(link_index), table.x, table.phi,
                  table.slope, table.g, q, self._v('v', v), out.R, out.p, out.J,
                  out.twist.base)
        if self.floating_base is not None:
            self._in_world(q, (out.R, out.p), (out.J, out.twist, out.accel))
        for array in (out.R, out.p, out.J, out.twist, out.accel):
            arguments.checked(array, 'section_kinematics')
        return out

    def base_momentum(self, data, q, v):
        """Momentum of a free-floating system in the world: (angular about the origin, linear).

        The base rows of M v are the momentum at the base frame in base axes, (L_b, P_b)
        [N m s, N s]; in the world P = R P_b and L_O = R L_b + p x R P_b. Conserved without
        gravity and external forces (joint efforts are internal).
        """
        if self.floating_base is None:
            raise ValueError(f'{self.name!r} has a fixed base: its momentum is not conserved')
        b = self.nv - 6
        h = self.mass_matrix(data, q)[b:] @ v
        p, quat = q[b:b + 3], q[b + 3:b + 7]
        R = transforms3d.quaternions.quat2mat(quat)
        linear = R @ h[3:]
        return np.concatenate([R @ h[:3] + np.cross(p, linear), linear])

    def frame_transforms(self, entries):
        """Prepare `FrameTransforms` for entries (link index, abscissa or None for the joint)."""
        return FrameTransforms(self, entries)

    def kinetic_energy(self, data, q, v):
        """T = v^T M(q) v / 2 [J]."""
        v = self._v('v', v)
        return arguments.finite_value(0.5 * float(v @ self.mass_matrix(data, q) @ v),
                                      'kinetic_energy')

    def potential_energy(self, data, q):
        """Gravity plus elastic energy [J], zero at the base origin and undeformed links."""
        return arguments.finite_value(self._run(entries.potential_energy, data, self._q(q)),
                                      'potential_energy')


def run_entry(model, kernel, table, *args):
    """Run ``kernel`` on ``model``'s constants table and a workspace ``table``.

    Through the kernel's compiled machine code (`compiled.entry_point`, kept in
    ``model._entries``): every call passes arguments of the types of the first.
    """
    entry = model._entries.get(kernel)
    if entry is None:
        entry = model._entries[kernel] = compiled.entry_point(kernel, model._table, table,
                                                              *args)
    return entry(model._table, table, *args)


def run_dynamics(model, kernel, what, data, table_of, q, v, u, out):
    """Run a forward-dynamics entry of ``model`` from Python: checks, call, result.

    Shared by the chain classes: ``model`` has ``_table`` (its constants' table),
    ``_entries`` (the compiled entry points by kernel), ``_shapes`` ((nq,), (nv,), (nu,)),
    ``nq``, ``nv``, ``nu`` and ``name``; ``table_of(data)`` gives the workspace's table;
    ``what`` names the inertia whose factorization may fail. Written out, since the whole
    kernel of a 6-joint arm takes ~4 us: the common case (float64 C-contiguous vectors of
    the right sizes) is checked at once, anything else goes through `arguments.vector`
    (conversion or a message naming it). Raises `numpy.linalg.LinAlgError` when the kernel
    reports the inertia not positive definite.
    """
    name, shapes = model.name, model._shapes
    if not (q.__class__ is v.__class__ is u.__class__ is np.ndarray
            and q.dtype is v.dtype is u.dtype is arguments.FLOAT
            and (q.shape, v.shape, u.shape) == shapes
            and q.strides == v.strides == u.strides == arguments.UNIT_STRIDE):
        vector = arguments.vector
        q = vector('q', q, model.nq, name, 'coordinates (nq)')
        v = vector('v', v, model.nv, name, 'velocity entries (nv)')
        u = vector('u', u, model.nu, name, 'actuator efforts (nu)')
    try:
        table = data.table
    except AttributeError:
        table = table_of(data)
    positive = run_entry(model, kernel, table, q, v, u)
    if not (positive and arguments.finite(data.acceleration)):
        # The fast path did not look at the values: a non-finite one is named first.
        vector = arguments.vector
        vector('q', q, model.nq, name, 'coordinates (nq)')
        vector('v', v, model.nv, name, 'velocity entries (nv)')
        vector('u', u, model.nu, name, 'actuator efforts (nu)')
        if not positive:
            raise np.linalg.LinAlgError(f'{"an " if what[0] == "a" else "the "}{what} of '
                                        f'{name!r} is not positive definite at q = '
                                        f'{q.tolist()}')
        return arguments.result(data.acceleration, out, 'forward_dynamics')
    return arguments.copied(data.acceleration, out, 'forward_dynamics')   # checked above


class FrameTransforms:
    """Parent-to-child transforms of a fixed list of moving frames, computed in one call.

    Entry (j, None) is joint j (link frame j in the tip frame of link j-1); (j, x) is the
    section at abscissa x of link j in link frame j. After ``update(data, q)``, ``R[i]``,
    its unit quaternion ``quat[i]`` (w, x, y, z; w >= 0) and ``p[i]`` hold entry i.
    """

    def __init__(self, model, entries):
        """Tabulate the mode values of every section entry once."""
        count = len(entries)
        kmax = model.max_link_modes
        self.model = model
        self.links = np.array([j for j, _ in entries], dtype=np.int64)
        self.xs = np.array([0.0 if x is None else x for _, x in entries])
        self.is_section = np.array([x is not None for _, x in entries], dtype=np.int64)
        self.phi, self.slope = np.zeros((count, kmax)), np.zeros((count, kmax))
        self.g = np.zeros((count, kmax, kmax))
        for i, (j, x) in enumerate(entries):
            if x is not None:
                table = model.section(j, x)
                self.phi[i], self.slope[i], self.g[i] = table.phi, table.slope, table.g
        self.R, self.p = np.zeros((count, 3, 3)), np.zeros((count, 3))
        self.quat = np.zeros((count, 4))

    def update(self, data, q):
        """Compute every transform at coordinates q."""
        q = self.model._q(q)
        self.model._run(entries.local_transforms, data, q, self.links, self.xs,
                        self.is_section, self.phi, self.slope, self.g, self.R, self.p,
                        self.quat)
