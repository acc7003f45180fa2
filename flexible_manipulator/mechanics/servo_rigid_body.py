"""The generalized Suslov top: a rigid body about a fixed point with a Beghin servoconstraint.

Kozlov, "The dynamics of systems with servoconstraints. I" (RCD 20(3), 2015), sections 5
and 8; the equations, the realizations and the outputs are those of `servo`.

The paper frame of the rigid body (Kozlov section 5): e3 = a/|a|, e2 along the part of b
orthogonal to a (any unit vector orthogonal to a when b || a), e1 = e2 x e3; there
a = (0, 0, |a|), b = (0, b2, b3) and the paper's formulas (5.2)-(5.16) apply.
"""

import numpy as np

from . import servo_kernels as kernels
from .servo import (SO3_STRUCTURE, UNIT_QUATERNION_TOLERANCE,
                    ServoSystem, finite_array, spd_matrix, unit_vector)

# Relative tolerance of the case tests (b || a, a an eigenvector of I, (5.15)-(5.16), ...).
CASE_TOLERANCE = 1e-9


class ServoRigidBody(ServoSystem):
    """Rigid body about a fixed point with the servoconstraint <a, w> = 0 (so(3)).

    q = unit quaternion (w, x, y, z) body -> world (nq = 4), v = body angular velocity
    (nv = 3). Euler's equations I w' + w x I w = gamma x c_g + lambda b with
    gamma = R^T e_z (world up in body axes) and V = <c_g, gamma>.

    Case attributes (Kozlov sections 5, 8; relative tolerance ``CASE_TOLERANCE``):
    ``classical`` (b || a), ``axis_is_principal`` (I a || a), ``heavy`` (c_g != 0),
    ``k_case`` (I'12 = I'13 = 0), ``invariant_measure`` ((5.15)-(5.16), values in
    ``measure_conditions``), ``kharlamova`` (Theorem 7); the paper frame ``paper_frame``
    (columns e1, e2, e3) with ``paper_inertia`` = P^T I P and ``paper_b`` = (0, b2, b3).
    """

    kind = 'rigid_body'
    frame = 'body'
    coordinate_names = ('qw', 'qx', 'qy', 'qz')
    velocity_names = ('wx', 'wy', 'wz')
    _speed_units = 'rad/s'

    def __init__(self, name, inertia, a, b, weight_moment=(0.0, 0.0, 0.0),
                 realization='servo', stabilization=0.0, omega_max=1e3,
                 position=(0.0, 0.0, 0.0)):
        """Build the model; ValueError (RealizabilityError) naming the field at fault.

        :param inertia: 3x3 inertia tensor about the fixed point, body axes [kg m^2], SPD.
        :param a: constraint axis (unit vector, body axes); the constraint is <a, w> = 0.
        :param b: control-torque axis (unit vector, body axes); the torque is lambda b [N m].
        :param weight_moment: c_g = weight x centre-of-mass vector, body axes [N m].
        :param realization: 'servo' (plant enforces the constraint) or 'free' (input u).
        :param stabilization: Baumgarte gain k [1/s]: <a, w> decays as e^{-k t}.
        :param omega_max: blow-up threshold on |w| [rad/s].
        :param position: fixed point in the world [m] (for TF).
        """
        self.inertia = spd_matrix(inertia, 'inertia')
        self.weight_moment = finite_array(weight_moment, 'weight_moment', (3,))
        self.position = finite_array(position, 'position', (3,))
        self.nq = 4
        a, b = unit_vector(a, 'a'), unit_vector(b, 'b')
        self._setup(name, kernels.KIND_RIGID_BODY, SO3_STRUCTURE, self.inertia, a, b,
                    realization, stabilization, omega_max, 'a', 'b',
                    weight_moment=self.weight_moment)
        self._classify()
        self._finish()

    def _classify(self):
        """Paper frame, special cases of Kozlov sections 5 and 8, and their integrals."""
        e3 = self.a_unit
        normal = self.b - (self.b @ e3) * e3
        scale_b = np.linalg.norm(self.b)
        self.classical = bool(np.linalg.norm(normal) <= CASE_TOLERANCE * scale_b)
        if self.classical:
            # any unit vector orthogonal to a
            trial = np.eye(3)[int(np.argmin(np.abs(e3)))]
            normal = trial - (trial @ e3) * e3
        e2 = normal / np.linalg.norm(normal)
        e1 = np.cross(e2, e3)
        self.paper_frame = np.column_stack([e1, e2, e3])
        P = self.paper_frame
        Ip = P.T @ self.inertia @ P
        bp = P.T @ self.b
        bp[0] = 0.0
        self.paper_inertia, self.paper_b = Ip, bp
        scale_i = np.abs(self.inertia).max()
        heavy = bool(np.linalg.norm(self.weight_moment) > 0.0)
        self.heavy = heavy
        Ia = self.inertia @ e3
        self.axis_is_principal = bool(
            np.linalg.norm(Ia - (e3 @ Ia) * e3) <= CASE_TOLERANCE * scale_i)
        integrals = self._integrals
        if self.axis_is_principal and not self.classical and not heavy:
            c = np.cross(self.b, e3)
            integrals.append(('linear_integral',
                              lambda q, v, data: float(self.inertia @ v @ c)))
        self.k_case = bool(not self.classical and not heavy
                           and max(abs(Ip[0, 1]), abs(Ip[0, 2])) <= CASE_TOLERANCE * scale_i)
        if self.k_case:
            I11, I22, I23 = Ip[0, 0], Ip[1, 1], Ip[1, 2]
            b2, b3 = bp[1], bp[2]
            k1 = I11 * (b2 * (I11 - I22) - b3 * I23)
            k2 = -I23 * (b3 * I22 - b2 * I23)

            def quadratic_integral(q, v, data):
                w = P.T @ v
                return float(k1 * w[0] ** 2 + k2 * w[1] ** 2)
            integrals.append(('quadratic_integral_K', quadratic_integral))
        self.measure_conditions = self.invariant_measure_conditions()
        self.invariant_measure = bool(
            not self.classical
            and max(abs(c) for c in self.measure_conditions)
            <= CASE_TOLERANCE * scale_i ** 2 * scale_b)
        if self.invariant_measure and not heavy:
            def cubic_integral(q, v, data):
                # after outputs() evaluated the dynamics at (q, v): data.wdot = w'
                return float(e3 @ np.cross(v, data.wdot)) / 3.0
            integrals.append(('cubic_integral', cubic_integral))
        c_g = self.weight_moment
        scale_c = np.linalg.norm(c_g)
        self.kharlamova = bool(heavy and self.axis_is_principal
                               and abs(c_g @ e3) <= CASE_TOLERANCE * scale_c
                               and abs(c_g @ self.b) <= CASE_TOLERANCE * scale_c * scale_b)
        if self.kharlamova:
            integrals.append(('kharlamova_integral',
                              lambda q, v, data: float(self.inertia @ v @ c_g)))
        if heavy:
            integrals.append(('gamma_norm',
                              lambda q, v, data: float(np.linalg.norm(self._gamma(q)))))

    def invariant_measure_conditions(self):
        """Left sides of (5.15) and (5.16) in the paper frame (zero: area-preserving flow)."""
        Ip, (_, b2, b3) = self.paper_inertia, self.paper_b
        I11, I22, I12, I13, I23 = Ip[0, 0], Ip[1, 1], Ip[0, 1], Ip[0, 2], Ip[1, 2]
        c15 = b2 * (I11 ** 2 - I11 * I22 + 2 * I12 ** 2 + I13 ** 2) + b3 * (I12 * I13 - I11 * I23)
        c16 = b2 * (I11 * I12 + I12 * I22 + I13 * I23) + b3 * (I13 * I22 - I12 * I23)
        return float(c15), float(c16)

    def reduced_velocity(self, v):
        """(w'1, w'2) of w in the paper frame (w'3 = <a, w>/|a| is the residual)."""
        return (self.paper_frame.T @ np.asarray(v, dtype=float))[:2]

    def neutral_configuration(self):
        """Identity attitude (1, 0, 0, 0)."""
        return np.array([1.0, 0.0, 0.0, 0.0])

    def check_state(self, q, v):
        """As `ServoSystem.check_state`, and the quaternion must be unit (to 1e-6)."""
        super().check_state(q, v)
        norm = float(np.linalg.norm(q))
        if abs(norm - 1.0) > UNIT_QUATERNION_TOLERANCE:
            raise ValueError(f'q: the attitude quaternion must be unit, got norm {norm:.9g}')

    def set_initial_state(self, q=None, v=None):
        """As `ServoSystem.set_initial_state`; the quaternion is then normalized exactly."""
        super().set_initial_state(q, v)
        self.initial_q = self.initial_q / np.linalg.norm(self.initial_q)

    def _rotation(self, q):
        w, x, y, z = np.asarray(q, dtype=float)
        return np.array([
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])

    def _gamma(self, q):
        """Return gamma = R(q)^T e_z, world up in body axes (q as stored, not renormalized)."""
        return self._rotation(q)[2].copy()

    def potential_energy(self, q):
        """V = <c_g, gamma> [J]: weight times the height of the centre of mass."""
        return float(self.weight_moment @ self._gamma(q))

    def pose(self, q):
        """Attitude R(q) (quaternion normalized) and the fixed point's position."""
        q = np.asarray(q, dtype=float)
        return self._rotation(q / np.linalg.norm(q)), self.position.copy()

    def body_twist(self, q, v):
        """(w, 0): the body frame's origin is the fixed point."""
        return np.array(v, dtype=float), np.zeros(3)
