"""Program constraints: the motion to realize, written as constraint rows on (q, v, t).

A program of m rows fills preallocated buffers at every ``evaluate(t, q, v)``:

* position rows (holonomic, ``order`` 2): phi(q, t) = 0 with
      jacobian J = d phi/dq,   rate = phi' = J v + phi_t,
      phi'' = J q'' + bias,    bias = J' v + 2 phi_qt v + phi_tt
  (everything in phi'' that does not multiply q'');
* velocity rows (nonholonomic, ``order`` 1): psi = A(q, t) v + b(q, t) = 0 with
      jacobian A,   phi = psi,   psi' = A q'' + bias,   bias = A' v + b',
  and ``rate`` unused (zero).

Units follow the rows: m for point positions, rad for angles, m/s or rad/s for velocity
rows; ``bias`` has the units of phi''. The stabilization (``stabilization``) turns these
rows into A q'' = b and the realization (``realization``) into efforts.

Arm programs use the chain model API: ``section_pose``, ``section_jacobian`` (6 x nv,
angular rows first, base-frame components, linear rows = velocity of the section origin)
and ``section_motion`` (pose, twist J v and J' v of a section).

Two programs serve the program-constraint controller (``program_controller``):
`HoldProgram` keeps joints at the angles captured when a program starts, and
`LambdaPointProgram` is the lambda-point, the redefined output y_j = theta_j +
w_j(lambda L_j)/(lambda L_j) of a flexible arm (``zero_dynamics.link_angle_output``)
carried through the rigid twin's kinematics: the point of the rigid arm at joint angles y
(for one link on a hub, the point x = lambda L to first order). Its zero dynamics are those
of the redefined joint outputs, stable for lambda < lambda*.
"""

import math

import numpy as np

from ..mechanics import lie
from .trajectories import ConstantReference
from .zero_dynamics import link_angle_output

POSITION, VELOCITY = 2, 1


class Program:
    """Buffers and the common interface of every program (see module docstring)."""

    def __init__(self, size, nv, order):
        """Allocate the buffers of ``size`` rows on ``nv`` velocities; order 2 or 1."""
        if size < 1:
            raise ValueError(f'a program needs at least one row, got {size}')
        self.size, self.nv = int(size), int(nv)
        self.order = np.full(self.size, order, dtype=np.int64)
        self.phi = np.zeros(self.size)
        self.rate = np.zeros(self.size)
        self.jacobian = np.zeros((self.size, self.nv))
        self.bias = np.zeros(self.size)

    def evaluate(self, t, q, v):
        """Fill phi, rate, jacobian and bias at time ``t`` and state (q, v); return self."""
        raise NotImplementedError


class LinearProgram(Program):
    """phi = C q - r(t): a fixed combination of coordinates follows a reference.

    J = C, phi' = C v - r', bias = -r'' (C is constant). Joint programs, and the
    redefined outputs of `zero_dynamics.link_angle_output`, are of this kind.
    """

    def __init__(self, selection, reference):
        """Set C (m x nv) and a reference with evaluate(t) -> (r, r', r'') of size m."""
        selection = np.atleast_2d(np.asarray(selection, dtype=float))
        super().__init__(selection.shape[0], selection.shape[1], POSITION)
        self.jacobian[:] = selection
        self.reference = reference

    def evaluate(self, t, q, v):
        """Fill the rows (see class docstring)."""
        r, dr, ddr = self.reference.evaluate(t)
        np.matmul(self.jacobian, q, out=self.phi)
        self.phi -= r
        np.matmul(self.jacobian, v, out=self.rate)
        self.rate -= dr
        np.negative(ddr, out=self.bias)
        return self


class JointProgram(LinearProgram):
    """phi = q[joints] - q_d(t): selected coordinates follow a joint-space reference.

    The reference is e.g. `joint_program.SinusoidalJointProgram` or a
    `trajectories.Trajectory` of a `trajectories.SplinePath` through joint waypoints.
    """

    def __init__(self, nv, joints, reference):
        """Select coordinates ``joints`` (indices) of a model with ``nv`` velocities."""
        joints = list(joints)
        selection = np.zeros((len(joints), nv))
        selection[np.arange(len(joints)), joints] = 1.0
        super().__init__(selection, reference)
        self.joints = joints


class HoldProgram(JointProgram):
    """phi = q[joints] - q_hold: hold the joints where the program starts (``capture``)."""

    def __init__(self, nv, joints):
        """Select the coordinates ``joints`` (indices); the held values start at zero."""
        super().__init__(nv, joints, ConstantReference(np.zeros(len(joints))))

    def capture(self, q):
        """Hold the current values of the selected coordinates of ``q``."""
        self.reference.position[:] = np.asarray(q)[self.joints]


class _SectionProgram(Program):
    """A program on the section at abscissa x [m] of one link of a chain model."""

    def __init__(self, model, link, abscissa, size, order=POSITION):
        length = model.links[link].length
        if not 0.0 <= abscissa <= length:
            raise ValueError(f'abscissa {abscissa} m is outside link {link} (0 to {length} m)')
        super().__init__(size, model.nv, order)
        self.model = model
        self.data = model.create_data()
        self.link = int(link)
        self.abscissa = float(abscissa)
        self._kinematics = None           # (R, p, J, twist, accel), rewritten by each call

    def section(self, q, v):
        """Pose, twist, J'v and Jacobian (R, p, twist, accel, J), base frame, angular first.

        Views into the program's workspace, valid until the next call.
        """
        self._kinematics = self.model.section_kinematics(self.data, q, v, self.link,
                                                         self.abscissa, self._kinematics)
        R, p, J, twist, accel = self._kinematics
        return R, p, twist, accel, J


class PointProgram(_SectionProgram):
    """phi = S (p(q) - p_d(t)): a material point of a link follows a path.

    p is the origin of the section at abscissa x of the link (x = L: the tip; x = lambda L:
    the lambda-point, a redefined output, see `zero_dynamics`), in base-frame components
    [m]; S selects ``axes`` (e.g. (0, 1) for a planar arm). With J_p the linear rows of the
    section Jacobian,

        J = S J_p,   phi' = S (J_p v - p_d'),   bias = S (J_p' v - p_d'').
    """

    def __init__(self, model, link, abscissa, reference, axes=(0, 1, 2)):
        """Set the point (link index, abscissa [m]), the reference and the selected axes."""
        self.axes = np.array(axes, dtype=np.int64)
        super().__init__(model, link, abscissa, self.axes.size)
        self.reference = reference
        self._linear = 3 + self.axes

    def evaluate(self, t, q, v):
        """Fill the rows (see class docstring)."""
        _, p, twist, accel, J = self.section(q, v)
        r, dr, ddr = self.reference.evaluate(t)
        np.subtract(p[self.axes], r, out=self.phi)
        np.subtract(twist[self._linear], dr, out=self.rate)
        np.subtract(accel[self._linear], ddr, out=self.bias)
        self.jacobian[:] = J[self._linear]
        return self


class FramePointProgram(PointProgram):
    """phi = S (p + R c - p_d(t)): the origin of a frame fixed to a section follows a path.

    The frame (a tool frame, a URDF link merged into a body) sits at ``offset`` c [m] in
    the section frame (R, p) at abscissa x of a link; with r = R c, its origin moves as

        p_f = p + r,   p_f' = p' + omega x r,
        J = S (J_p - [r]x J_w),   bias = S (J_p' v + omega'_b x r + omega x (omega x r)
                                            - p_d''),

    (J_w, J_p) the angular and linear rows of the section Jacobian, (omega'_b, J_p' v) its
    J' v. On a flexible link, or one after it, the section's motion carries the elastic
    coordinates: the offset rides on it rigidly.
    """

    def __init__(self, model, link, abscissa, offset, reference, axes=(0, 1, 2)):
        """Set the section (link index, abscissa [m]), the offset c (3) [m] in its frame."""
        super().__init__(model, link, abscissa, reference, axes)
        self.offset = np.array(offset, dtype=float).reshape(3)
        self._r = np.zeros(3)
        self._full = np.zeros(3)
        self._jacobian = np.zeros((3, self.nv))

    def evaluate(self, t, q, v):
        """Fill the rows (see class docstring)."""
        R, p, twist, accel, J = self.section(q, v)
        r, axes = self._r, self.axes
        np.matmul(R, self.offset, out=r)
        omega = twist[:3]
        ref, dref, ddref = self.reference.evaluate(t)
        np.add(p, r, out=self._full)
        np.subtract(self._full[axes], ref, out=self.phi)
        cross = lie.cross3
        self._full[:] = twist[3:] + cross(omega, r)
        np.subtract(self._full[axes], dref, out=self.rate)
        self._full[:] = accel[3:] + cross(accel[:3], r) + cross(omega, cross(omega, r))
        np.subtract(self._full[axes], ddref, out=self.bias)
        # omega x r = -[r]x omega: the rows J_p - [r]x J_w
        self._jacobian[:] = J[3:]
        self._jacobian -= lie.hat3(r) @ J[:3]
        self.jacobian[:] = self._jacobian[axes]
        return self


class LambdaPointProgram(Program):
    """phi = S (p_r(C q) - p_d(t)): the lambda-point, a redefined (minimum-phase) output.

    y = C q are the redefined joint outputs y_j = theta_j + w_j(lambda L_j)/(lambda L_j)
    (C = ``zero_dynamics.link_angle_output``, constant); p_r(y) is a point of the rigid
    twin at joint angles y (``point``: a `PointProgram` on the rigid twin). Hence

        J = S J_r(y) C,   phi' = S (J_r y' - p_d'),   bias = S (J_r' y' - p_d''),

    the rigid point program's rows evaluated at (C q, C v) with its Jacobian times C.
    """

    def __init__(self, model, point, lambdas):
        """Wrap ``point`` (on ``model.rigid_twin()``); ``lambdas``: one or one per link."""
        self.selection = link_angle_output(model, lambdas)
        super().__init__(point.size, model.nv, POSITION)
        self.point = point
        self.reference = point.reference
        self.lambdas = np.broadcast_to(np.asarray(lambdas, dtype=float),
                                       (model.n_joints,)).copy()
        self._y = np.zeros(model.n_joints)
        self._dy = np.zeros(model.n_joints)

    def evaluate(self, t, q, v):
        """Fill the rows (see class docstring)."""
        np.matmul(self.selection, q, out=self._y)
        np.matmul(self.selection, v, out=self._dy)
        p = self.point.evaluate(t, self._y, self._dy)
        self.phi[:] = p.phi
        self.rate[:] = p.rate
        self.bias[:] = p.bias
        np.matmul(p.jacobian, self.selection, out=self.jacobian)
        return self


class PlanarAngleProgram(_SectionProgram):
    """phi = wrap(theta(q) - theta_d(t)): angle of a section about a base axis e_k [rad].

    With (i, j) = (k+1, k+2) mod 3, theta = atan2(R_ji, R_ii) is the rotation of the
    section's i axis about e_k. For planar motion (omega parallel to e_k) theta' = e_k .
    omega, hence J = e_k^T J_w (angular rows), bias = e_k . omega'_bias - theta_d''.
    The difference is wrapped to (-pi, pi] so that multi-turn references work.
    """

    def __init__(self, model, link, abscissa, reference, axis=2):
        """Set the section, a reference of size 1 and the rotation axis index k."""
        super().__init__(model, link, abscissa, 1)
        self.reference = reference
        self.axis = int(axis)
        self._i, self._j = (self.axis + 1) % 3, (self.axis + 2) % 3

    def evaluate(self, t, q, v):
        """Fill the row (see class docstring)."""
        R, _, twist, accel, J = self.section(q, v)
        r, dr, ddr = self.reference.evaluate(t)
        theta = math.atan2(R[self._j, self._i], R[self._i, self._i])
        self.phi[0] = math.remainder(theta - r[0], 2.0 * math.pi)
        self.rate[0] = twist[self.axis] - dr[0]
        self.bias[0] = accel[self.axis] - ddr[0]
        self.jacobian[0] = J[self.axis]
        return self


def _dexpinv_coefficient(angle):
    """c(t) = 1/t^2 - (1 + cos t)/(2 t sin t); series 1/12 + t^2/720 + ... below 0.3 rad."""
    if angle < 0.3:
        a2 = angle * angle
        return 1.0 / 12.0 + a2 * (1.0 / 720.0 + a2 * (1.0 / 30240.0 + a2 / 1209600.0))
    return 1.0 / angle ** 2 - (1.0 + math.cos(angle)) / (2.0 * angle * math.sin(angle))


def _dexpinv_coefficient_rate(angle):
    """dc/dt for c(t) = 1/t^2 - (1 + cos t)/(2 t sin t), the [e]^2 coefficient of J_l^-1.

    c'(t) = -2/t^3 + cot(t/2)/(2 t^2) + csc^2(t/2)/(4 t); below 0.3 rad its series
    t/360 + t^3/7560 + t^5/201600 avoids the cancellation of the closed form.
    """
    if angle < 0.3:
        a2 = angle * angle
        return angle * (1.0 / 360.0 + a2 * (1.0 / 7560.0 + a2 / 201600.0))
    half = 0.5 * angle
    return (-2.0 / angle ** 3 + 1.0 / (2.0 * angle * angle * math.tan(half))
            + 1.0 / (4.0 * angle * math.sin(half) ** 2))


class OrientationProgram(_SectionProgram):
    """phi = log(R_d^T R) (rotation vector, 3 rows [rad]): a section follows R_d(t).

    With E = R_d^T R, E' E^-1 = [w_e]x, w_e = R_d^T (omega - omega_d), and the left
    Jacobian J_l of SO(3) (see mechanics.lie): phi' = J_l(phi)^-1 w_e. Hence

        J = J_l^-1 R_d^T J_w,
        bias = J_l^-1 R_d^T (omega'_bias - omega_d' - omega_d x (omega - omega_d))
               + (d/dt J_l^-1) w_e,
        d/dt J_l^-1 = -[phi']/2 + c' [phi]^2 + c ([phi'][phi] + [phi][phi']),

    c = 1/t^2 - (1 + cos t)/(2 t sin t), t = |phi|. Valid for rotation errors below pi.
    """

    def __init__(self, model, link, abscissa, reference):
        """Set the section and a reference evaluate(t) -> (R_d, omega_d, omega_d')."""
        super().__init__(model, link, abscissa, 3)
        self.reference = reference
        self._w = np.zeros(3)
        self._b = np.zeros(3)

    def evaluate(self, t, q, v):
        """Fill the rows (see class docstring)."""
        R, _, twist, accel, J = self.section(q, v)
        Rd, wd, dwd = self.reference.evaluate(t)
        e = lie.so3_log(Rd.T @ R)
        jinv = lie.so3_left_jacobian_inv(e)
        we = Rd.T @ (twist[:3] - wd)
        de = jinv @ we
        angle = math.sqrt(float(e @ e))
        c = _dexpinv_coefficient(angle)
        dc = _dexpinv_coefficient_rate(angle) * (float(e @ de) / angle if angle > 0 else 0.0)
        e_we = np.cross(e, we)
        djinv_we = (-0.5 * np.cross(de, we) + dc * np.cross(e, e_we)
                    + c * (np.cross(de, e_we) + np.cross(e, np.cross(de, we))))
        self._b[:] = accel[:3] - dwd - np.cross(wd, twist[:3] - wd)
        self.phi[:] = e
        self.rate[:] = de
        np.matmul(jinv, Rd.T @ self._b, out=self.bias)
        self.bias += djinv_we
        np.matmul(jinv @ Rd.T, J[:3], out=self.jacobian)
        return self


class VelocityProgram(Program):
    """psi = A(q, t) v + b(q, t) = 0: nonholonomic (velocity) rows.

    ``rows(t, q, v, matrix, offset, bias)`` fills A (m x nv), b (m) and bias = A' v + b'
    (m) in place. Examples: the sleigh's lateral blade velocity -x' sin(theta) + y'
    cos(theta) = 0 (A = (-sin theta, cos theta, 0), bias = -theta'(x' cos theta + y' sin
    theta)), or a rigid body's <a, omega> = 0 (see `ConstantVelocityProgram`).
    """

    def __init__(self, nv, size, rows):
        """Set the number of velocities, rows and the filling function."""
        super().__init__(size, nv, VELOCITY)
        self.rows = rows
        self.offset = np.zeros(self.size)

    def evaluate(self, t, q, v):
        """Fill the rows (see class docstring); ``rate`` stays zero."""
        self.rows(t, q, v, self.jacobian, self.offset, self.bias)
        np.matmul(self.jacobian, v, out=self.phi)
        self.phi += self.offset
        return self


class ConstantVelocityProgram(VelocityProgram):
    """psi = A v + b with constant A and b (bias 0), e.g. <a, omega> = 0 with A = a^T."""

    def __init__(self, matrix, offset=None):
        """Set A (m x nv) and b (m, default zero)."""
        matrix = np.atleast_2d(np.asarray(matrix, dtype=float))
        super().__init__(matrix.shape[1], matrix.shape[0], self._constant_rows)
        self.jacobian[:] = matrix
        if offset is not None:
            self.offset[:] = offset

    @staticmethod
    def _constant_rows(t, q, v, matrix, offset, bias):
        """Nothing changes: A and b were set once, A' v + b' = 0."""


class StackedProgram(Program):
    """Several programs on the same model stacked into one, rows in the given order."""

    def __init__(self, programs):
        """Stack ``programs`` (all on the same number of velocities)."""
        programs = list(programs)
        if not programs:
            raise ValueError('a stacked program needs at least one program')
        sizes = {p.nv for p in programs}
        if len(sizes) != 1:
            raise ValueError(f'stacked programs act on different numbers of velocities: '
                             f'{sorted(sizes)}')
        super().__init__(sum(p.size for p in programs), programs[0].nv, POSITION)
        self.programs = programs
        self.slices = []
        start = 0
        for p in programs:
            self.slices.append(slice(start, start + p.size))
            self.order[start:start + p.size] = p.order
            start += p.size

    def evaluate(self, t, q, v):
        """Evaluate every program and copy its rows into place."""
        for rows, p in zip(self.slices, self.programs):
            p.evaluate(t, q, v)
            self.phi[rows] = p.phi
            self.rate[rows] = p.rate
            self.jacobian[rows] = p.jacobian
            self.bias[rows] = p.bias
        return self
