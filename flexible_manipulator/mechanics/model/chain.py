"""The one chain model (`Chain`): rigid, floating-frame and Cosserat links in any mix.

Link j, in order from the base: a fixed offset from the parent's tip frame (the
base frame for the first link), a revolute, prismatic or fixed joint about ``axis``
(coordinate theta_j, joint frame = offset * exp(theta_j axis)), a rigid hub at the joint
frame, then a Cosserat rod (``rod.CosseratRod``, its root at the joint frame, E_1 along
the link), a floating-frame beam (``modal_beam.ModalBeam``) or a rigid step to the tip,
and a rigid payload at its tip frame, the parent of the next link. Coordinates: the n joint
coordinates first, then each link's strain coordinates (``StrainBasis.names``), so
nq = nv = n + sum of the links' basis sizes (then a floating base's pose).

The model API runs on compiled kernels: ``kernels`` (M and h summed over the bodies,
section frames, TF transforms, energy, steppers) and ``articulated`` (the O(n) forward
dynamics); ``layout`` holds their arrays. The readable NumPy form of the same equations
is ``mechanics.reference.cosserat_chain`` (tests only).
"""

from collections import namedtuple
import dataclasses

import numpy as np
import transforms3d

from .. import arguments, lie
from .. import compiled
from ..friction import FRICTION_VELOCITY, friction_forces
from ..links import kind_of
from ..links.rod import KIND as rod_kind
from . import articulated, kernels
from .arrays import model_arrays, workspace
from .frame_transforms import FrameTransforms
from .layout import MODEL_LAYOUT, data_table
from .link_part import FIXED, LinkPart, rigid_inertia

# Links and, with that many links or more, coordinates from which the articulated
# recursion beats the composite solve (`default_algorithm`): measured with 2 modes per
# link (bench_scaling.py) and on rigid arms, composite faster at 12 joints, the
# articulated one at 18.
ARTICULATED_FROM_LINKS = 4
ARTICULATED_FROM_COORDINATES = 14
SectionKinematics = namedtuple('SectionKinematics', 'R p J twist accel')
SectionKinematics.__doc__ = ('Result of `Chain.section_kinematics`: pose (R, p), '
                             "Jacobian J, twist J v and J' v (two halves of one array).")


def default_algorithm(links, nv):
    """Return the forward dynamics a chain of ``links`` links and nv coordinates runs.

    'articulated' (O(n) in links) from ARTICULATED_FROM_LINKS links and
    ARTICULATED_FROM_COORDINATES coordinates on, else 'composite' (M, h and a Cholesky
    solve), the faster one on both sides (measured: bench/README.md, "Toward one walk").
    """
    return ('articulated' if links >= ARTICULATED_FROM_LINKS
            and nv >= ARTICULATED_FROM_COORDINATES else 'composite')


class Chain:
    """The chain model of every link kind: a serial chain of ``LinkPart`` (module doc).

    ``base``: 4x4 pose of the base frame in the world; ``gravity``: world gravity [m/s^2].
    Built from a model file (`from_links`), it also carries the description the nodes use,
    as the one chain model: ``name``, ``links`` (``link_description.Link``), ``joint_names``
    (moving joints), ``mode_names`` (the strain coordinates, ``<link>_<strain>_<order>``,
    e.g. ``forearm_bending_z_0``), ``base_frame``, ``base_xyz``, ``base_rpy``,
    ``tool_frame``, joint limits.
    """

    kind = 'serial_chain'       # the model file's type
    # what `mode_frequencies` are, and how to keep fewer coordinates (advice in messages):
    # the kind's own when one kind has elastic coordinates, else (mixed) the rod's
    MODE_FREQUENCY_MEANING = rod_kind.frequency_meaning
    FEWER_MODES = rod_kind.fewer_modes

    def __init__(self, parts, base=None, gravity=(0.0, 0.0, -9.80665), name='chain',
                 floating_base=None):
        """Lay out the coordinates: joints first, then each link's strains (then the base's).

        ``floating_base``: None for a base fixed at ``base``, else the
        ``link_description.RigidBody`` of a free-floating base (its inertia about the base
        frame), whose pose then is
        state: position [m] and unit quaternion (w, x, y, z) after the chain's coordinates
        in q, body angular and linear velocity [rad/s, m/s] after them in v (the layout of
        the model contract); ``base`` is its initial pose and gravity stays in world
        axes.
        """
        if not parts:
            raise ValueError('a chain needs at least one link')
        self.name = name
        self.floating_base = floating_base
        self.base_inertia = (None if floating_base is None else rigid_inertia(
            floating_base.mass, floating_base.com, floating_base.inertia))
        self.parts = list(parts)
        self.base = np.eye(4) if base is None else np.asarray(base, dtype=float)
        self.gravity = np.asarray(gravity, dtype=float)
        # the moving joints' coordinates come first, in link order; -1: a fixed joint
        self.joint_index, moving = [], 0
        for link in self.parts:
            self.joint_index.append(moving if link.joint != FIXED else -1)
            moving += link.joint != FIXED
        self.n_joints = moving
        starts, start = [], self.n_joints
        for link in self.parts:
            starts.append(start)
            start += link.size
        self.strain_start, self.strain_end = starts, start
        self.nq = self.nv = start
        if floating_base is not None:
            self.nq, self.nv = start + 7, start + 6
        self.nu = self.n_joints
        self.coordinate_names = tuple([link.joint_name for link in self.parts
                                       if link.joint != FIXED]
                                      + [f'{link.name}_{name}' for link in self.parts
                                         for name in link.coordinate_names()])
        self.stiffness = np.zeros((self.nv, self.nv))
        self.damping = np.zeros((self.nv, self.nv))
        # Coulomb friction per coordinate (`friction`): level F_c, zero off the joints, and
        # v_s (the default where there is no joint: any v_s > 0 leaves a zero level zero)
        self.friction = np.zeros(self.nv)
        self.friction_velocity = np.full(self.nv, FRICTION_VELOCITY)
        for j, link in enumerate(self.parts):
            cols = self._strains(j)
            self.stiffness[cols, cols], self.damping[cols, cols] = link.kind.elastic(link)
            if self.joint_index[j] >= 0:
                self.damping[self.joint_index[j], self.joint_index[j]] = link.damping
                self.friction[self.joint_index[j]] = link.friction
                self.friction_velocity[self.joint_index[j]] = link.friction_velocity
        self.arrays = model_arrays(self)
        self._table = MODEL_LAYOUT.table(self.arrays)      # addresses of self.arrays
        self._entries = {}
        self._shapes = ((self.nq,), (self.nv,), (self.nu,))   # q, v, u (`_dynamics`)
        self._rnea_shapes = ((self.nq,), (self.nv,), (self.nv,))     # q, v, a (`rnea`)
        # Forward dynamics of the model API: 'composite' or 'articulated' (O(n)); may be set
        # after construction (`default_algorithm`).
        self.dynamics_algorithm = default_algorithm(len(self.parts), self.nv)
        self._section_tables = {}
        self._zero = np.zeros(self.nv)
        moving = [link for link in self.parts if link.joint != FIXED]
        self.joint_names = tuple(link.joint_name for link in moving)
        self.link_names = tuple(link.name for link in self.parts)
        self.mode_names = tuple(self.coordinate_names[self.n_joints:])
        self.n_modes = len(self.mode_names)
        self._mode_frequencies = None
        kinds = {part.kind for part in self.parts if part.size}
        if len(kinds) == 1:             # one kind of elastic coordinates: its meaning
            kind, = kinds
            self.MODE_FREQUENCY_MEANING = kind.frequency_meaning
            self.FEWER_MODES = kind.fewer_modes
        self.links, self.base_frame, self.tool_frame = None, 'base_link', 'tool0'
        self.geometric_stiffening = True
        self.base_xyz, self.base_rpy = np.zeros(3), np.zeros(3)
        self.gravity_base = self.gravity
        self.effort_limit = self.velocity_limit = np.full(self.n_joints, np.inf)
        self.lower, self.upper = np.full(self.n_joints, -np.inf), np.full(self.n_joints, np.inf)

    @classmethod
    def from_links(cls, name, links, gravity_base, base_frame='base_link',
                   base_xyz=(0.0, 0.0, 0.0), base_rpy=(0.0, 0.0, 0.0), tool_frame='tool0',
                   geometric_stiffening=True, floating_base=None):
        """Build the chain of a model file's ``link_description.Link`` list: links of any kinds.

        Each link's kind gives its part (``links.LinkKind.part``): a link with a ``rod``
        is a Cosserat link, one with a ``beam`` a floating-frame link
        (``modal_beam.ModalBeam``; with ``geometric_stiffening`` its foreshortening; a beam
        without modes is a rigid slender rod), others are rigid. Dynamics in the base
        frame (``gravity_base`` in its components [m/s^2]; in world components for a
        ``floating_base``, ``link_description.RigidBody``); base_xyz and base_rpy place the base in
        the world (the initial pose of a floating one).
        """
        parts = []
        for link in links:
            joint = link.joint
            offset = np.eye(4)
            offset[:3, :3] = transforms3d.euler.euler2mat(*joint.rpy, axes='sxyz')
            offset[:3, 3] = joint.xyz
            fields = dict(kind_of(link).part(link, geometric_stiffening))
            hub = (rigid_inertia(link.body.mass, link.body.com, link.body.inertia)
                   + fields.pop('hub', 0.0))
            armature = joint.armature + fields.pop('armature', 0.0)
            axis = np.asarray(joint.axis, dtype=float)      # a URDF axis: its direction
            parts.append(LinkPart(
                link.name, fields.pop('rod', None), joint.type, axis / np.linalg.norm(axis),
                offset, hub,
                rigid_inertia(link.payload.mass, link.payload.com, link.payload.inertia),
                joint.damping, armature, link.length, joint_name=joint.name,
                friction=joint.friction, friction_velocity=joint.friction_velocity,
                **fields))
        base = np.eye(4)
        base[:3, :3] = transforms3d.euler.euler2mat(*base_rpy, axes='sxyz')
        base[:3, 3] = base_xyz
        chain = cls(parts, base if floating_base is not None else None, gravity_base, name,
                    floating_base)
        chain.geometric_stiffening = bool(geometric_stiffening)
        moving = [link.joint for link in links if link.joint.type != FIXED]
        chain.links = tuple(links)
        chain.base_frame, chain.tool_frame = base_frame, tool_frame
        chain.base_xyz = np.array(base_xyz, dtype=float)
        chain.base_rpy = np.array(base_rpy, dtype=float)
        chain.effort_limit = np.array([joint.effort_limit for joint in moving])
        chain.velocity_limit = np.array([joint.velocity_limit for joint in moving])
        chain.lower = np.array([joint.lower for joint in moving])
        chain.upper = np.array([joint.upper for joint in moving])
        return chain

    def with_modes(self, modes):
        """Return the chain keeping at most ``modes`` coordinates per curvature strain.

        A control model (a beam keeps at most ``modes`` per plane): torsion and
        bending keep their Legendre orders 0 .. modes - 1 (the L2 projection of the strain:
        the basis is orthogonal), extension and shear are dropped (inextensible,
        unshearable: their fast modes are left unmodelled); same section and Gauss points.
        Coordinates keep their names, so a state of this chain maps onto the reduced one by
        name; ``modes = 0`` is the rigid twin (`rigid_twin`). Only for chains built by
        `from_links`; ValueError if a rod has no curvature strain to keep.
        """
        modes = int(modes)
        if modes <= 0:
            return self.rigid_twin()
        if self.links is None:
            raise ValueError(f'{self.name!r}: a reduced chain needs the model file\'s links '
                             '(Chain.from_links)')
        return self._rebuilt([dataclasses.replace(link, **kind_of(link).reduced(link, modes))
                              for link in self.links])

    def _rebuilt(self, links):
        """Build the chain of the same base and options with other ``link_description.Link`` s."""
        return Chain.from_links(self.name, links, self.gravity_base, self.base_frame,
                                self.base_xyz, self.base_rpy, self.tool_frame,
                                self.geometric_stiffening, self.floating_base)

    def rigid_twin(self):
        """Return the chain with every rod a rigid slender rod of the same mass: joints only.

        Rod j becomes a beam without modes of the rod's rho A, that is mass rho A L at L/2
        with the slender rod's inertia (``Beam.as_rod``), as a beam's rigid twin.
        Only for chains built from a model file (`from_links`) without fixed joints or
        pre-curved rods.
        """
        if self.links is None:
            raise ValueError(f'{self.name!r}: a rigid twin needs the model file\'s links '
                             '(Chain.from_links)')
        if self.n_joints != len(self.parts):
            raise ValueError(f'{self.name!r}: the rigid twin of a chain with fixed joints '
                             '(clamps) is not built: merge the clamped rods into one link')
        try:
            links = [dataclasses.replace(link, **kind_of(link).rigid_twin(link))
                     for link in self.links]
        except ValueError as error:
            raise ValueError(f'{self.name!r}: {error}') from None
        return self._rebuilt(links)

    def modes_of(self, link_index):
        """Return (count, names) of a link's elastic coordinates (0, () if rigid).

        Names without the link's prefix (``mode_names`` holds ``<link>_<name>``): a rod's
        strains (``bending_z_0``), a beam's modes (``y1``).
        """
        link = self.parts[link_index]
        return link.size, tuple(link.coordinate_names())

    @property
    def mode_frequencies(self):
        """Per elastic coordinate, a frequency [rad/s]: a scale for rates and periods.

        A beam's mode: its clamped-free omega_k; a rod's strain coordinate k: sqrt(K_kk /
        M_kk) at q = 0, the coordinate alone with the joints and the other strains held
        (not an eigenvalue of the chain). Computed once.
        """
        if self._mode_frequencies is None:
            n = self.n_joints
            mass = np.diag(self.mass_matrix(self.create_data(), self.neutral_configuration()))[n:]
            mass = mass[:self.n_modes]
            self._mode_frequencies = np.sqrt(np.diag(self.stiffness)[n:n + self.n_modes] / mass)
            for j, part in enumerate(self.parts):     # a kind's own: a beam's clamped-free
                own = part.kind.frequencies(part)
                if own is not None:
                    start = self.strain_start[j] - n
                    self._mode_frequencies[start:start + part.size] = own
        return self._mode_frequencies

    def mode_start(self, link_index):
        """Index in v of a link's first strain coordinate (strains follow all joints)."""
        return self.strain_start[link_index]

    def joint_axis(self, link_index):
        """Return the unit axis of a link's joint in its joint frame (3)."""
        return self.parts[link_index].axis.copy()

    def input_matrix(self):
        """B (nv x nu): efforts act on the moving joints' coordinates (the first nu)."""
        return np.eye(self.nv, self.nu)

    def elastic_coefficients(self):
        """Diagonal stiffness and damping per coordinate (joints: 0 and joint damping)."""
        return self.arrays.stiffness.copy(), self.arrays.damping.copy()

    def joint_friction(self, v):
        """Return the joints' friction forces D v + F_c tanh(v / v_s) (n) at velocities v.

        ``v``: the joints' velocities (n) or the model's (nv): the share of h(q, v) the
        joints' viscous and Coulomb friction make (``mechanics.friction``).
        """
        n = self.n_joints
        v = np.asarray(v, dtype=float)[:n]
        return (self.arrays.damping[:n] * v
                + friction_forces(self.friction[:n], self.friction_velocity[:n], v))

    def frame_transforms(self, entries):
        """`FrameTransforms` for entries (link index, abscissa or None for the joint)."""
        return FrameTransforms(self, entries)

    def _shape(self, q):
        """Return the coordinates K acts on (nv): q with a floating base's pose zeroed."""
        shape = np.zeros(self.nv)
        shape[:self.strain_end] = q[:self.strain_end]
        return shape

    def _strains(self, j):
        start = self.strain_start[j]
        return slice(start, start + self.parts[j].size)

    def _check(self, q, v=None):
        """(q, v) as float64 vectors of the model's sizes (`arguments.vector`)."""
        q = arguments.vector('q', q, self.nq, self.name, 'coordinates (nq)')
        if v is not None:
            v = arguments.vector('v', v, self.nv, self.name, 'velocities (nv)')
        return q, v

    def base_pose(self, q):
        """World pose (4x4) of the base frame: fixed, or a floating base's (p, quaternion)."""
        if self.floating_base is None:
            return self.base.copy()
        b = self.nv - 6
        pose = np.eye(4)
        pose[:3, :3] = transforms3d.quaternions.quat2mat(q[b + 3:b + 7])
        pose[:3, 3] = q[b:b + 3]
        return pose

    # -- the kernels' model API (data = create_data(); Simulation's Stepper hooks) ----------
    rosenbrock_kernel = staticmethod(kernels.rosenbrock_steps)    # needs M itself

    @property
    def explicit_kernel(self):
        """Compiled explicit stepper for `dynamics_algorithm`."""
        if self.dynamics_algorithm == 'articulated':
            return articulated.explicit_steps
        return kernels.explicit_steps

    def create_data(self):
        """Workspace of the kernels (`layout.Workspace`)."""
        return workspace(self.nv, self.arrays.seg_B1.shape[2], len(self.parts))

    def kernel_inputs(self, data):
        """Return the model's and ``data``'s tables: the first two arguments of its kernels."""
        return self._table, data_table(data)

    def _run(self, kernel, data, *args):
        """Run a kernel on this model's table and ``data``'s.

        Through the kernel's compiled machine code (`compiled.entry_point`, kept in
        ``_entries``): every call passes arguments of the types of the first.
        """
        table = data_table(data)
        entry = self._entries.get(kernel)
        if entry is None:
            entry = self._entries[kernel] = compiled.entry_point(kernel, self._table, table,
                                                                 *args)
        return entry(self._table, table, *args)

    def neutral_configuration(self):
        """Joints at zero, links straight and unstrained; a floating base at its pose."""
        q = np.zeros(self.nq)
        if self.floating_base is not None:
            b = self.nv - 6
            q[b:b + 3] = self.base[:3, 3]
            q[b + 3:] = lie.quat_from_matrix(self.base[:3, :3])
        return q

    def mass_matrix(self, data, q, out=None):
        """M(q) (nv x nv) [kg m^2, kg, ...]; ``out`` (if given) receives it."""
        q, _ = self._check(q)
        self._run(kernels.mass_bias_entry, data, q, self._zero, False)
        return arguments.result(data.mass, out, 'mass_matrix')

    def bias_forces(self, data, q, v, out=None):
        """h(q, v) = C(q, v) v + g(q) + K q + D v (nv) [N m, N]."""
        q, v = self._check(q, v)
        self._run(kernels.mass_bias_entry, data, q, v, True)
        return arguments.result(data.bias, out, 'bias_forces')

    def rnea(self, data, q, v, a, out=None):
        """Inverse dynamics M(q) a + h(q, v) (nv) [N m, N]: the efforts for accelerations a.

        One walk as recursive Newton-Euler (the kernels' ``inverse_dynamics``); on the elastic
        coordinates the residual forces. ``out`` (if given) receives it.
        """
        if not self._plain(q, v, a, self._rnea_shapes):
            q, v, a = self._accelerations(q, v, a)
        self._run(kernels.inverse_entry, data, q, v, a)
        if not arguments.finite(data.bias):
            self._accelerations(q, v, a)      # the plain path did not look at the values
            return arguments.result(data.bias, out, 'rnea')
        return arguments.copied(data.bias, out, 'rnea')       # checked

    def _accelerations(self, q, v, a):
        """(q, v, a) as float64 vectors of the model's sizes, or ValueError naming one."""
        q, v = self._check(q, v)
        return q, v, arguments.vector('a', a, self.nv, self.name, 'accelerations (nv)')

    @staticmethod
    def _plain(q, v, w, shapes):
        """Tell whether q, v, w are float64 unit-stride vectors of ``shapes``: the common case.

        Checked at once, since a kernel of a 6-joint arm takes a few us; anything else
        goes through `arguments.vector` (conversion or a message naming it).
        """
        return (q.__class__ is v.__class__ is w.__class__ is np.ndarray
                and q.dtype is v.dtype is w.dtype is arguments.FLOAT
                and (q.shape, v.shape, w.shape) == shapes
                and q.strides == v.strides == w.strides == arguments.UNIT_STRIDE)

    def mass_and_bias(self, data, q, v, mass_out=None, bias_out=None):
        """(M(q), h(q, v)) from one walk of the chain (`mass_matrix`, `bias_forces`)."""
        q, v = self._check(q, v)
        self._run(kernels.mass_bias_entry, data, q, v, True)
        return (arguments.result(data.mass, mass_out, 'mass_matrix'),
                arguments.result(data.bias, bias_out, 'bias_forces'))

    def forward_dynamics(self, data, q, v, u, out=None):
        """Return v' = M^-1 (B u - h) for the efforts u (nu) on the joints.

        By `dynamics_algorithm`: 'composite' (M, h and a Cholesky solve, O(n^3) in links)
        or 'articulated' (``articulated``: O(n)).
        """
        if self.dynamics_algorithm == 'articulated':
            return self.articulated_forward_dynamics(data, q, v, u, out)
        return self.composite_forward_dynamics(data, q, v, u, out)

    def composite_forward_dynamics(self, data, q, v, u, out=None):
        """`forward_dynamics` by M, h and a Cholesky solve."""
        return self._dynamics(kernels.forward_dynamics_entry, data, q, v, u, out)

    def articulated_forward_dynamics(self, data, q, v, u, out=None):
        """`forward_dynamics` by the articulated-body recursion (O(n) in links)."""
        return self._dynamics(articulated.forward_dynamics_entry, data, q, v, u, out)

    def _dynamics(self, kernel, data, q, v, u, out):
        """Run a forward-dynamics entry from Python: checks, call, result.

        The common case checked at once (`_plain`). Raises `numpy.linalg.LinAlgError` when
        the kernel reports the inertia it factors (the mass matrix, or a link's articulated
        inertia) not positive definite.
        """
        if not self._plain(q, v, u, self._shapes):
            q, v, u = self._vectors(q, v, u)
        positive = self._run(kernel, data, q, v, u)
        if not (positive and arguments.finite(data.acceleration)):
            self._vectors(q, v, u)      # the fast path did not look at the values
            if not positive:
                what = ('the mass matrix' if kernel is kernels.forward_dynamics_entry
                        else 'an articulated inertia')
                raise np.linalg.LinAlgError(f'{what} of {self.name!r} is not positive '
                                            f'definite at q = {q.tolist()}')
            return arguments.result(data.acceleration, out, 'forward_dynamics')
        return arguments.copied(data.acceleration, out, 'forward_dynamics')   # checked

    def _vectors(self, q, v, u):
        """(q, v, u) as float64 vectors of the model's sizes, or ValueError naming one."""
        return (arguments.vector('q', q, self.nq, self.name, 'coordinates (nq)'),
                arguments.vector('v', v, self.nv, self.name, 'velocity entries (nv)'),
                arguments.vector('u', u, self.nu, self.name, 'actuator efforts (nu)'))

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

    def kinetic_energy(self, data, q, v):
        """T = v^T M(q) v / 2 [J] (the kernels' M)."""
        q, v = self._check(q, v)
        return arguments.finite_value(0.5 * float(v @ self.mass_matrix(data, q) @ v),
                                      'kinetic_energy')

    def potential_energy(self, data, q):
        """Elastic (1/2) q^T K q plus gravity -sum_b m_b g . c_b [J] (compiled)."""
        q, _ = self._check(q)
        energy = self._run(kernels.potential_energy, data, q, self._zero)
        return arguments.finite_value(float(energy), 'potential_energy')

    def section_pose(self, data, q, link_index, x):
        """Orientation R (3x3) and position p (3) [m] of the section at x [m] of a link.

        Base-frame components (the world's with a floating base), as
        the model contract's; the compiled pass of `section_kinematics`.
        """
        here = self.section_kinematics(data, q, self._zero, link_index, x)
        return here.R, here.p

    def section_jacobian(self, data, q, link_index, x):
        """Jacobian (6 x nv, angular rows first, base-frame components) of a section frame.

        It maps v to (omega, p') of the section at x [m] of a link (`section_kinematics`).
        """
        return self.section_kinematics(data, q, self._zero, link_index, x).J

    def frame_placements(self, data, q):
        """Poses in the base frame of all link frames and tip frames.

        Returns (link_R, link_p, tip_R, tip_p): n x 3 x 3 and n x 3 [m], the sections at
        x = 0 and x = length of every link (`section_pose`).
        """
        count = len(self.parts)
        link_R, tip_R = np.zeros((count, 3, 3)), np.zeros((count, 3, 3))
        link_p, tip_p = np.zeros((count, 3)), np.zeros((count, 3))
        for j, link in enumerate(self.parts):
            link_R[j], link_p[j] = self.section_pose(data, q, j, 0.0)
            tip_R[j], tip_p[j] = self.section_pose(data, q, j, link.length)
        return link_R, link_p, tip_R, tip_p

    def section_kinematics(self, data, q, v, link_index, x, out=None):
        """Pose, Jacobian, twist and J' v of a section in base-frame components, one call.

        The model contract's ``section_kinematics`` (what the controller's program
        rows read): a `chain.SectionKinematics` (R, p, J, twist, accel), J (6 x nv) with
        angular rows first mapping v to (omega, p') [rad/s, m/s] in base components (world
        ones on a floating base), and accel = J' v (omega', p'') at zero generalized
        acceleration, without gravity. With R the section's orientation and the body
        Jacobian J_b, twist eta_b = (w_b, u_b) and bias alpha_b = J_b' v of the compiled
        pass to the section (`kernels.section_kinematics`),

            J = diag(R, R) J_b,   accel = (R w_b', R (w_b x u_b + u_b')),   eta_b' = alpha_b.

        ``out``, the result of an earlier call, receives the result.
        """
        q, v = self._check(q, v)
        if out is None:
            motion = np.zeros(12)
            out = SectionKinematics(np.zeros((3, 3)), np.zeros(3), np.zeros((6, self.nv)),
                                    motion[:6], motion[6:])
        motion = out.twist.base
        if motion is None or motion.shape != (12,) or out.accel.base is not motion:
            motion = np.zeros(12)           # an ``out`` built elsewhere: write, then copy
        if not self._run(kernels.section_kinematics, data, q, v, int(link_index),
                         *self.section_table(link_index, x), out.R, out.p, out.J, motion):
            for array in (out.R, out.p, out.J, motion):
                arguments.checked(array, 'section_kinematics')
        # The kernel's own check sums its outputs under fastmath's reassociation, which
        # can let an overflowing twist (|v| ~ 1e162) through: the 12 numbers of the motion
        # are checked here too.
        arguments.checked(motion, 'section_kinematics')
        if motion is not out.twist.base:
            out.twist[:] = motion[:6]
            out.accel[:] = motion[6:]
        return out

    def section_table(self, link_index, x):
        """Constant arguments of `kernels.section_kinematics` for the section at x [m] (cached).

        (segments, h, B1, B2, phi, slope, g, x): a rod's whole segments before x and the
        partial step to it; a modal link's mode tables at x; a rigid link's step h = x.
        """
        j = arguments.link_index(link_index, len(self.parts), self.name)
        key = (j, arguments.abscissa(x, self.parts[j].length, self.parts[j].name))
        table = self._section_tables.get(key)
        if table is None:
            link = self.parts[key[0]]
            link.check_abscissa(key[1])
            width = self.arrays.seg_B1.shape[2]
            B1, B2 = np.zeros((6, width)), np.zeros((6, width))
            phi, slope, g = np.zeros(width), np.zeros(width), np.zeros((width, width))
            segments, h = link.kind.section_table(link, key[1], B1, B2, phi, slope, g)
            table = self._section_tables[key] = (segments, h, B1, B2, phi, slope, g, key[1])
        return table

    def _joint_pose(self, j, q):
        """Pose of link j's joint motion at q (the identity for a fixed joint)."""
        i = self.joint_index[j]
        return self.parts[j].joint_pose(q[i]) if i >= 0 else np.eye(4)
