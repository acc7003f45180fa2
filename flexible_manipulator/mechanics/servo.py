"""Systems with a Beghin servoconstraint: the generalized Suslov top and the Chaplygin sleigh.

Kozlov, "The dynamics of systems with servoconstraints. I" (RCD 20(3), 2015). A
left-invariant system on a Lie group G (here SO(3) or SE(2)) with kinetic energy
T = <I w, w>/2 and the left-invariant constraint <a, w> = 0 realized by a controlled force
lambda b along a PRESCRIBED covector b (the servo, or control, direction):

    m' = ad*_w m + F(q) + lambda b,   m = I w,   <a, w> = 0.            (2.4)

* b parallel to a is the classical (ideal, Chetaev) nonholonomic constraint: the reaction
  does no work and T + V is conserved. Note the classical case is b || a, not b || I a.
* Otherwise the reaction works: d(T + V)/dt = lambda <b, w>; the generic reduced system
  (a homogeneous quadratic ODE in the constraint plane) blows up in finite time.
* Realizability (2.5): <I^-1 a, b> != 0; lambda is then
  lambda = -(<I^-1 a, ad*_w m + F> + k <a, w>) / <I^-1 a, b>, where the optional
  Baumgarte gain k >= 0 makes the constraint residual decay as e^{-k t}.

Realization ``servo``: the plant itself enforces the constraint (nu = 0). Realization
``free``: no constraint, the plant takes one input u, the magnitude of the force along b,
from an external controller that may realize the same constraint (nu = 1).

`servo_rigid_body.ServoRigidBody` (g = so(3)): the generalized Suslov problem (Kozlov
section 5), heavy when the weight moment c_g is not zero (section 8).
`servo_sleigh.ServoSleigh` (g = se(2), basis (rot, u, v)): the servo-sleigh (sections 6, 7),
with the centre of mass offset along the running axis (an extension of the paper; the
classical sleigh with an offset tends to straight motion). This module holds what both
share: `ServoSystem`, the kernels' tables and the checks of the parameters.

Each model exposes the outputs ``output_names``: lambda, T, V, T + V, the control power
lambda <b, w>, the residual <a, w>, the margin <I^-1 a, b>, then the first integrals the
paper proves for the configured case (conserved while the constraint holds; for a ``free``
plant, while its controller realizes the constraint along b):

* ``linear_integral`` <I w, b x a/|a|> (rigid body, a an eigenvector of I, b not || a,
  no gravity; Kozlov's (b2 I11 - b1 I12) w1 + (b2 I12 - b1 I22) w2 in the paper frame);
* ``quadratic_integral_K``: K of (5.11) (rigid body, I'12 = I'13 = 0 in the paper frame,
  b not || a, no gravity);
* ``cubic_integral`` H = <a/|a|, w x w'>/3 (rigid body, (5.15)-(5.16) hold, b not || a, no
  gravity): the reduced flow is then area preserving and Hamiltonian with the cubic H;
* ``kharlamova_integral`` <I w, c_g> (heavy body, Theorem 7: I a || a, c_g _|_ a, c_g _|_ b);
* ``gamma_norm`` |R^T e_z| (heavy body: the unit vertical in body axes);
* ``sleigh_integral`` beta u - alpha omega (sleigh on a horizontal plane, offset 0, not
  classical; (6.4)).

"""

import math

import numpy as np

from . import arguments, servo_kernels as kernels
from .tuple_tables import allocate, record

# A margin |<I^-1 a, b>| below this fraction of |a| |b| |I^-1| is refused as unrealizable.
REALIZABILITY_TOLERANCE = 1e-9
UNIT_QUATERNION_TOLERANCE = 1e-6
UNIT_VECTOR_TOLERANCE = 1e-9        # |a|, |b| of the rigid body's axes
REALIZATIONS = ('servo', 'free')
BASE_OUTPUTS = ('lambda', 'kinetic_energy', 'potential_energy', 'energy', 'control_power',
                'residual', 'margin')


def _structure_so3():
    """C[i, j, k] = c^i_jk = eps_jki: [e1, e2] = e3 and cyclic, so ad*_w m = m x w."""
    C = np.zeros((3, 3, 3))
    for i, j, k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
        C[k, i, j], C[k, j, i] = 1.0, -1.0
    return C


def _structure_se2():
    """se(2) in the basis (rot, u, v): [rot, u] = v, [rot, v] = -u, [u, v] = 0."""
    C = np.zeros((3, 3, 3))
    C[2, 0, 1], C[2, 1, 0] = 1.0, -1.0
    C[1, 0, 2], C[1, 2, 0] = -1.0, 1.0
    return C


SO3_STRUCTURE = _structure_so3()
SE2_STRUCTURE = _structure_se2()

# The constants the kernels (`servo_kernels`) read, one line per field (the convention of
# `tuple_tables`: name, kind and extents, meaning); vectors are on the algebra g or its
# dual g* in the basis of `servo_kernels`' module doc.
SERVO_MODEL = (
    ('kind', 'i8', 'servo_kernels.KIND_RIGID_BODY (so(3)) or KIND_SLEIGH (se(2))'),
    ('free', 'i8', '1: lambda is the input u[0] (realization free); 0: the servo law'),
    ('structure', 'f8 3 3 3', 'structure constants C[i, j, k] = c^i_jk of g'),
    ('inertia', 'f8 3 3', 'inertia I on g [kg m^2, kg] (SPD)'),
    ('inertia_inv', 'f8 3 3', 'its inverse'),
    ('a', 'f8 3', 'covector of the servoconstraint <a, w> = 0, as given'),
    ('b', 'f8 3', 'covector along which the control force lambda b acts, as given'),
    ('inertia_inv_a', 'f8 3', 'I^-1 a'),
    ('margin', 'f8', 'realizability margin <I^-1 a, b> (not zero)'),
    ('stabilization', 'f8', 'Baumgarte gain k of d<a, w>/dt = -k <a, w> [1/s]'),
    ('omega_max', 'f8', 'the largest |w| integrated: beyond it a step fails (blow-up)'),
    ('weight_moment', 'f8 3', 'rigid body: c_g, the weight times the centre of mass (body '
     'axes) [N m]'),
    ('load', 'f8', 'sleigh: p = m g sin(slope), the weight along the incline [N]'),
    ('offset', 'f8', 'sleigh: the centre of mass eps ahead of the blade point [m]'),
)
ServoArrays = record('ServoArrays', SERVO_MODEL, 'Constants of a servo system '
                     '(`SERVO_MODEL`).', __name__)

# The workspace of the kernels, one line per field (all scratch between calls).
SERVO_WORKSPACE = (
    ('momentum', '3', 'momentum m = I w in g*'),
    ('load', '3', 'ad*_w m + F(q): the load before the control force'),
    ('force', '3', 'external load F(q) (gravity) in g*'),
    ('total', '3', 'the load plus the control force lambda b'),
    ('wdot', '3', "velocity rate w' = I^-1 total"),
    ('lam', '1', 'the control force magnitude lambda'),
    ('rot', '3 3', 'rigid body: rotation body -> world of q'),
    ('gamma', '3', 'rigid body: world up R^T e_z in body axes'),
)
ServoData = record('ServoData', SERVO_WORKSPACE, 'Workspace of a servo system '
                   '(`SERVO_WORKSPACE`).', __name__)


class RealizabilityError(ValueError):
    """The control direction b cannot enforce the constraint: <I^-1 a, b> = 0."""


def finite_number(value, field, minimum=None, strict=False):
    """Return value as a float, a ValueError naming ``field`` if not finite or in range."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f'{field}: expected a number, got {value!r}') from None
    if not math.isfinite(number):
        raise ValueError(f'{field}: expected a finite number, got {number}')
    if minimum is not None and (number < minimum or (strict and number == minimum)):
        raise ValueError(f"{field}: must be {'>' if strict else '>='} {minimum:g}, "
                         f'got {number:g}')
    return number


def finite_array(value, field, shape):
    """Return value as a float array of ``shape``, a ValueError naming ``field`` if not."""
    try:
        array = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f'{field}: expected numbers of shape {shape}, got {value!r}') from None
    if array.shape != shape:
        raise ValueError(f'{field}: expected shape {shape}, got {array.shape}')
    if not np.all(np.isfinite(array)):
        raise ValueError(f'{field}: expected finite numbers, got {array.tolist()}')
    return array


def nonzero_vector(value, field):
    vector = finite_array(value, field, (3,))
    if not np.linalg.norm(vector) > 0.0:
        raise ValueError(f'{field}: must not be the zero vector')
    return vector


def unit_vector(value, field):
    """Return a body axis, checked finite, non-zero and of unit length (a typo is refused)."""
    vector = nonzero_vector(value, field)
    norm = float(np.linalg.norm(vector))
    if abs(norm - 1.0) > UNIT_VECTOR_TOLERANCE:
        raise ValueError(f'{field}: must be a unit vector, got |{field}| = {norm:.9g} '
                         f'(divide it by its norm)')
    return vector


def spd_matrix(value, field):
    """Return a symmetric positive definite 3x3 matrix, a ValueError naming ``field``."""
    matrix = finite_array(value, field, (3, 3))
    scale = np.abs(matrix).max()
    if not scale > 0.0 or np.abs(matrix - matrix.T).max() > 1e-12 * scale:
        raise ValueError(f'{field}: must be a nonzero symmetric matrix, got {matrix.tolist()}')
    matrix = 0.5 * (matrix + matrix.T)
    smallest = np.linalg.eigvalsh(matrix).min()
    if not smallest > 1e-12 * scale:
        raise ValueError(f'{field}: must be positive definite (smallest eigenvalue '
                         f'{smallest:.6g}), got {matrix.tolist()}')
    return matrix


class ServoSystem:
    """Left-invariant system on so(3) or se(2) with the servoconstraint <a, w> = 0.

    Not built directly: see `servo_rigid_body.ServoRigidBody` and
    `servo_sleigh.ServoSleigh`. Attributes: ``name``,
    ``kind``, ``realization``, sizes ``nq``, ``nv``, ``nu``, ``coordinate_names``,
    ``velocity_names``, ``frame`` (TF child frame), ``inertia_matrix`` (I on the algebra,
    n x n), ``a`` and ``b`` as given (``a_unit``, ``b_unit``: normalized copies), ``margin``
    <I^-1 a, b> (a, b as given), ``stabilization`` k [1/s], ``omega_max``, ``output_names``,
    ``initial_q``, ``initial_v`` (neutral and zero unless set by `set_initial_state`), and
    ``kernel_inputs``/``explicit_kernel``/``rosenbrock_kernel`` for `integrators.Stepper`.
    """

    kind = None
    frame = None
    coordinate_names = ()
    velocity_names = ()
    explicit_kernel = staticmethod(kernels.explicit_steps)
    rosenbrock_kernel = staticmethod(kernels.rosenbrock_steps)

    def kernel_inputs(self, data):
        """Return the first two arguments of the kernels: the constant tuple and ``data``."""
        return self.arrays, data

    def _setup(self, name, kind_code, structure, inertia, a, b, realization, stabilization,
               omega_max, a_field, b_field, weight_moment=(0.0, 0.0, 0.0), load=0.0,
               offset=0.0):
        """Validate the common parameters and build the kernels' constant arrays."""
        if not isinstance(name, str) or not name:
            raise ValueError(f'name: expected a non-empty string, got {name!r}')
        if realization not in REALIZATIONS:
            raise ValueError(f'realization: expected one of {", ".join(REALIZATIONS)}, got '
                             f'{realization!r}')
        self.name = name
        self.realization = realization
        self.nv = 3
        self.nu = 1 if realization == 'free' else 0
        self._zero_input = np.zeros(self.nu)
        self.stabilization = finite_number(stabilization, 'stabilization', 0.0)
        self.omega_max = finite_number(omega_max, 'omega_max', 0.0, strict=True)
        self.inertia_matrix = inertia
        self.inertia_inv = np.linalg.inv(inertia)
        self.a = nonzero_vector(a, a_field)
        self.b = nonzero_vector(b, b_field)
        self.a_unit = self.a / np.linalg.norm(self.a)
        self.b_unit = self.b / np.linalg.norm(self.b)
        self.margin = float(self.a @ self.inertia_inv @ self.b)
        bound = (REALIZABILITY_TOLERANCE * np.linalg.norm(self.a) * np.linalg.norm(self.b)
                 * np.linalg.norm(self.inertia_inv, 2))
        if not abs(self.margin) > bound:
            raise RealizabilityError(
                f'{b_field}: realizability margin <I^-1 a, b> = {self.margin:.3g} is zero '
                f'(|margin| <= {bound:.3g}): a force along b = {self.b.tolist()} cannot '
                f'enforce <a, w> = 0 for a = {self.a.tolist()}')
        self.arrays = ServoArrays(
            kind=kind_code, free=int(realization == 'free'), structure=structure.copy(),
            inertia=inertia.copy(), inertia_inv=self.inertia_inv.copy(), a=self.a.copy(),
            b=self.b.copy(), inertia_inv_a=self.inertia_inv @ self.a, margin=self.margin,
            stabilization=self.stabilization, omega_max=self.omega_max,
            weight_moment=np.array(weight_moment, dtype=float), load=float(load),
            offset=float(offset))
        # The subclass appends (name, function(q, w, data)) pairs of its integrals.
        self._integrals = []

    def _finish(self):
        self.output_names = BASE_OUTPUTS + tuple(name for name, _ in self._integrals)
        self.initial_q = self.neutral_configuration()
        self.initial_v = np.zeros(self.nv)

    # -- workspace, state -----------------------------------------------------------------
    def create_data(self):
        """Return a fresh workspace (all buffers allocated here, once)."""
        return allocate(ServoData, SERVO_WORKSPACE, {})

    def neutral_configuration(self):
        """Identity attitude, or the sleigh at the origin heading along x."""
        raise NotImplementedError

    def _state(self, q, v):
        """(q, v) as float64 vectors of sizes (nq, nv), or a ValueError naming the wrong one."""
        return (arguments.vector('q', q, self.nq, self.name, 'coordinates (nq)'),
                arguments.vector('v', v, self.nv, self.name, 'velocity entries (nv)'))

    def _input(self, u):
        if self.nu == 0:
            return np.zeros(0)
        value = np.zeros(1) if u is None else np.asarray(u, dtype=float).reshape(-1)
        if value.shape != (1,):
            raise ValueError(f'input: expected one value (magnitude along b), got {u!r}')
        return value

    def check_state(self, q, v):
        """Raise ValueError naming the problem if (q, v) cannot be simulated."""
        q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
        if q.shape != (self.nq,):
            raise ValueError(f'q: expected {self.nq} coordinates {self.coordinate_names}, got '
                             f'shape {q.shape}')
        if v.shape != (self.nv,):
            raise ValueError(f'v: expected {self.nv} velocities {self.velocity_names}, got '
                             f'shape {v.shape}')
        for label, values, names in (('q', q, self.coordinate_names),
                                     ('v', v, self.velocity_names)):
            for value, entry in zip(values, names):
                if not math.isfinite(value):
                    raise ValueError(f'{label}: {entry} is not finite ({value})')
        speed = float(np.linalg.norm(v))
        if speed > self.omega_max:
            raise ValueError(f'v: |v| = {speed:.6g} exceeds omega_max = {self.omega_max:g}')

    def set_initial_state(self, q=None, v=None):
        """Set ``initial_q``/``initial_v`` (neutral, zero when None) after `check_state`."""
        q = self.neutral_configuration() if q is None else np.array(q, dtype=float)
        v = np.zeros(self.nv) if v is None else np.array(v, dtype=float)
        self.check_state(q, v)
        self.initial_q, self.initial_v = q, v

    def failure(self, q, v):
        """Explain why the integration cannot continue from (or just after) the state (q, v).

        The right-hand side fails only when |v| exceeds omega_max or is not finite; called
        on the last good state after a failed step, this reports the blow-up.
        """
        q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
        units = self._speed_units
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
            return f'state not finite: q = {q.tolist()}, v = {v.tolist()}'
        speed = float(np.linalg.norm(v))
        if speed > self.omega_max:
            return (f'blow-up: |w| = {speed:.3g} {units} exceeds omega_max = '
                    f'{self.omega_max:.3g} {units}')
        return (f'blow-up: |w| exceeded omega_max = {self.omega_max:.3g} {units} after the '
                f'last good state (|w| = {speed:.3g} {units} there): the velocity escapes to '
                f'infinity in finite time')

    # -- dynamics and outputs ---------------------------------------------------------------
    def acceleration(self, data, q, v, u=None):
        """Return (w', lambda) at (q, v) with input u (``free``), no blow-up check."""
        q, v = self._state(q, v)
        lam = kernels.evaluate(self.arrays, data, q, v, self._input(u))
        return data.wdot.copy(), float(lam)

    def kinetic_energy(self, v):
        """T = <I w, w>/2 [J]."""
        v = np.asarray(v, dtype=float)
        return 0.5 * float(v @ self.inertia_matrix @ v)

    def potential_energy(self, q):
        """Gravity potential V(q) [J] (zero without gravity)."""
        raise NotImplementedError

    def project_velocity(self, v):
        """Velocity on the constraint reached by an impulse along b: v - <a,v>/margin I^-1 b."""
        v = np.asarray(v, dtype=float)
        return v - (self.a @ v) / self.margin * (self.inertia_inv @ self.b)

    def outputs(self, data, q, v, u=None):
        """Values in ``output_names`` order (lambda: the input u for a ``free`` plant)."""
        q, v = self._state(q, v)
        lam = float(kernels.evaluate(self.arrays, data, q, v, self._input(u)))
        kinetic = self.kinetic_energy(v)
        potential = self.potential_energy(q)
        values = [lam, kinetic, potential, kinetic + potential, lam * float(self.b @ v),
                  float(self.a @ v), self.margin]
        values += [function(q, v, data) for _, function in self._integrals]
        return np.array(values)

    def pose(self, q):
        """Body frame in the world: (R 3x3, p 3)."""
        raise NotImplementedError

    def body_twist(self, q, v):
        """Angular and linear velocity of the body frame in body axes [rad/s, m/s]."""
        raise NotImplementedError

    # -- dynamics interface of the arm models (for the program-constraint controller) -----
    # In the velocity coordinates v = w of the model the equations (2.4) read
    #     I w' + h(q, w) = B u,   h = -(ad*_w (I w) + F(q)),
    # with B = b (one column) for a ``free`` plant, whose input u is the magnitude of the
    # force along b, and B empty (nv x 0) for a ``servo`` plant, whose reaction lambda b is
    # internal: there M^-1 (B u - h) is the unconstrained acceleration, and the plant's own
    # is M^-1 (lambda b - h). The constraint <a, w> = 0 is the velocity row A = a^T,
    # offset 0, the program a controller realizes along B.
    def mass_matrix(self, data, q, out=None):
        """Return M = I (nv x nv, constant: the inertia on the algebra), a copy or ``out``."""
        return arguments.result(self.inertia_matrix, out, 'mass_matrix')

    def bias_forces(self, data, q, v, out=None):
        """Return h(q, v) = -(ad*_w (I w) + F(q)) (gyroscopic and gravity/incline terms).

        Writes the workspace as `acceleration` does (with zero input); returns a new array,
        or writes into ``out`` (nv) and returns it.
        """
        q, v = self._state(q, v)
        kernels.evaluate(self.arrays, data, q, v, self._zero_input)
        if out is None:
            return -data.load
        return np.negative(arguments.result(data.load, out, 'bias_forces'), out=out)

    def input_matrix(self):
        """Return B (nv x nu): the column b for a ``free`` plant, nv x 0 for a ``servo`` one."""
        return self.b.reshape(self.nv, 1)[:, :self.nu].copy()

    def constraint_rows(self, q, v):
        """Return (A, offset) of the constraint A v + offset = 0: (a^T as 1 x nv, [0])."""
        return self.a.reshape(1, self.nv).copy(), np.zeros(1)

    @property
    def effort_limit(self):
        """Bound on each of the nu inputs [N m or N]: infinite (servo models have none)."""
        return np.full(self.nu, np.inf)
