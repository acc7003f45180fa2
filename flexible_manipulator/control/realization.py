"""Realization of stabilized program constraints A q'' = b by forces and actuator efforts.

The plant is M(q) q'' + h(q, v) = B u (M: nv x nv SPD, h: bias forces [N, N m], B: nv x nu
input matrix, u: efforts). The free acceleration is a = M^-1 f with f = -h (plus any
secondary force, see below); A (m x nv) and b (m) come from ``programs`` and
``stabilization``.

Ideal realization (Gauss, Udwadia-Kalaba), for a plant that can apply any generalized force:
the realized q'' minimizes the Gauss function (q'' - a)^T M (q'' - a) subject to A q'' = b,

    q'' = a + M^-1/2 (A M^-1/2)^+ (b - A a)                         (Moore-Penrose form)
        = a + M^-1/2 P B_m^T (b - A a),  P = (B_m^T B_m + V V^T)^-1  (orthogonal complement,
          B_m = A M^-1/2, V: basis of null(B_m); Udwadia 2005, needs full row rank)
        = solution of [[M, A^T], [A, 0]] (q'', -mu) = (f, b)         (Lagrange multipliers)

The constraint force M (q'' - a) = A^T mu does no work on admissible accelerations, and the
Moore-Penrose form also holds for redundant (rank-deficient but consistent) rows.
Redundancy (m < nv) is resolved by a secondary force Q_s, e.g. joint damping toward a
posture Q_s = K_p (q_0 - q) - K_d v (`posture_force`): with f = -h + Q_s the realized q''
is the one closest (M-norm) to the motion Q_s would produce, so Q_s acts only in the
directions the program leaves free. Efforts follow from B u = M q'' + h.

Servo (Beghin) realization, for underactuated plants (flexible modes are not actuated):
the control force is restricted to the input directions, B u, and u solves

    (A M^-1 B) u = b - A a,   a = -M^-1 h                           (Kozlov's (1.2)-(1.3))

realizable iff A M^-1 B (m x nu) has full row rank m (for one row and one input:
<A, M^-1 N> != 0). Every tick reports its singular values; below sigma_max /
condition_limit the solve switches to damped least squares
u = V diag(s/(s^2 + lambda^2)) U^T (b - A a), lambda^2 = eps^2 - sigma_min^2,
eps = sigma_max / condition_limit (continuous at the threshold), and the status says so.
The internal (zero) dynamics this leaves are analysed in ``zero_dynamics``.

Saturation: efforts are clipped to +-effort_limit; the status lists the clipped inputs and
the constraint-acceleration error |A q''_clipped - b| that results.
"""

import numpy as np

from .control_kernels import (CONSTRAINT_ERROR, DAMPING, RANK, RESIDUAL, SIGMA_MAX, SIGMA_MIN,
                              servo_solve)
from .limits import clip


class RealizabilityError(ValueError):
    """The program cannot be realized by the given forces (A M^-1 B lacks row rank)."""


class RealizationStatus:
    """Diagnostics of the last realization; ``message`` explains anything not ``ok``.

    ``code``: 'exact' | 'redundant' (dependent but consistent rows, realized exactly) |
    'damped' (near-singular A M^-1 B, damped least squares) | 'inconsistent' (rows
    contradict each other) | 'unrealizable' (the forces cannot realize the rows).
    """

    def __init__(self, nu, kind):
        """Allocate the per-input flags."""
        self.kind = kind
        self.code = 'exact'
        self.rank = 0
        self.size = 0
        self.sigma_min = 0.0
        self.sigma_max = 0.0
        self.damping = 0.0
        self.residual = 0.0
        self.constraint_error = 0.0
        self.missing_force = 0.0
        self.clipped = np.zeros(nu, dtype=bool)

    @property
    def saturated(self):
        """True if any effort was clipped."""
        return bool(self.clipped.any())

    @property
    def condition(self):
        """sigma_max / sigma_min of the realization matrix (inf when singular)."""
        return self.sigma_max / self.sigma_min if self.sigma_min > 0.0 else np.inf

    @property
    def ok(self):
        """True if the rows were realized exactly and no effort was clipped."""
        return self.code in ('exact', 'redundant') and not self.saturated

    @property
    def message(self):
        """One line per problem, naming it and its size."""
        matrix = 'A M^-1 B' if self.kind == 'servo' else 'A M^-1/2'
        lines = []
        if self.code == 'redundant':
            lines.append(f'{self.size - self.rank} of {self.size} constraint rows are '
                         f'dependent (rank {self.rank}); realized with the pseudo-inverse')
        elif self.code == 'damped':
            lines.append(f'near-singular program: sigma_min({matrix}) = {self.sigma_min:.3g} '
                         f'(condition {self.condition:.3g}); damped least squares with '
                         f'lambda = {self.damping:.3g} leaves a constraint-acceleration '
                         f'error {self.residual:.3g}')
        elif self.code == 'inconsistent':
            lines.append(f'inconsistent constraint rows (rank {self.rank} of {self.size}): '
                         f'least-squares residual |A q\'\' - b| = {self.residual:.3g}')
        elif self.code == 'unrealizable':
            if self.missing_force > 0.0:
                lines.append(f'not realizable by the actuators: the ideal constraint force '
                             f'needs {self.missing_force:.3g} outside the range of B '
                             '(unactuated coordinates); use the servo realization')
            else:
                lines.append(f'not realizable along the input directions: {matrix} has rank '
                             f'{self.rank} < {self.size} rows (sigma_min '
                             f'{self.sigma_min:.3g}); constraint-acceleration error '
                             f'{self.residual:.3g}')
        if self.saturated:
            lines.append(f'efforts clipped on inputs {np.flatnonzero(self.clipped).tolist()}: '
                         f'constraint-acceleration error {self.constraint_error:.3g}')
        return '; '.join(lines) if lines else 'ok'


def symmetric_sqrt(M):
    """Return (M^1/2, M^-1/2) of a symmetric positive definite M (eigendecomposition)."""
    values, vectors = np.linalg.eigh(M)
    if values[0] <= 0.0:
        raise np.linalg.LinAlgError(f'mass matrix is not positive definite (smallest '
                                    f'eigenvalue {values[0]:.3g})')
    root = np.sqrt(values)
    return (vectors * root) @ vectors.T, (vectors / root) @ vectors.T


def _rank(singular_values, rcond):
    if singular_values.size == 0 or singular_values[0] == 0.0:
        return 0
    return int(np.count_nonzero(singular_values > rcond * singular_values[0]))


def gauss_acceleration(M, force, A, b, rcond=1e-10):
    """Udwadia-Kalaba q'' = a + M^-1/2 (A M^-1/2)^+ (b - A a), a = M^-1 force (module doc)."""
    _, inv_root = symmetric_sqrt(M)
    a = inv_root @ (inv_root @ force)
    return a + inv_root @ (np.linalg.pinv(A @ inv_root, rcond=rcond) @ (b - A @ a))


def complement_acceleration(M, force, A, b, rcond=1e-10):
    """Udwadia's pseudo-inverse-free form q'' = a + M^-1/2 (B^T B + V V^T)^-1 B^T (b - A a).

    B = A M^-1/2 must have full row rank; V (nv x (nv - m)) spans its null space.
    """
    _, inv_root = symmetric_sqrt(M)
    a = inv_root @ (inv_root @ force)
    Bm = A @ inv_root
    _, s, vt = np.linalg.svd(Bm)
    rank = _rank(s, rcond)
    if rank < A.shape[0]:
        raise ValueError(f'the orthogonal-complement form needs constraint rows of full rank:'
                         f' rank {rank} < {A.shape[0]} rows')
    V = vt[rank:].T
    P = np.linalg.inv(Bm.T @ Bm + V @ V.T)
    return a + inv_root @ (P @ (Bm.T @ (b - A @ a)))


def lagrange_acceleration(M, force, A, b, rcond=1e-10):
    """Solve [[M, A^T], [A, 0]] (q'', -mu) = (force, b); return (q'', mu).

    M q'' = force + A^T mu. Raises ValueError if the rows are dependent (the system is
    singular); the Moore-Penrose form handles that case.
    """
    nv, m = M.shape[0], A.shape[0]
    s = np.linalg.svd(A @ np.linalg.solve(M, A.T), compute_uv=False)
    if _rank(s, rcond) < m:
        raise ValueError(f'A M^-1 A^T is singular (rank {_rank(s, rcond)} < {m} rows): the '
                         'constraint rows are dependent; use gauss_acceleration')
    kkt = np.zeros((nv + m, nv + m))
    kkt[:nv, :nv], kkt[:nv, nv:], kkt[nv:, :nv] = M, A.T, A
    solution = np.linalg.solve(kkt, np.concatenate([force, b]))
    return solution[:nv], -solution[nv:]


def posture_force(q, v, posture, stiffness, damping, out=None):
    """Secondary force Q_s = K_p (q_0 - q) - K_d v [N m] (joint damping toward a posture).

    Gains are per coordinate (zero on coordinates to leave alone, e.g. flexible modes).
    """
    out = np.empty_like(v) if out is None else out
    np.subtract(posture, q, out=out)
    out *= stiffness
    out -= damping * v
    return out


class _Realization:
    def __init__(self, nv, nu, size, effort_limit, kind):
        self.nv, self.nu, self.size = int(nv), int(nu), int(size)
        self.effort_limit = np.broadcast_to(np.asarray(effort_limit, dtype=float),
                                            (self.nu,)).copy()
        self.effort = np.zeros(self.nu)
        self.unsaturated = np.zeros(self.nu)
        self.acceleration = np.zeros(self.nv)
        self.constraint_error = np.zeros(self.size)
        self.status = RealizationStatus(self.nu, kind)

    def _saturate(self):
        clip(self.unsaturated, -self.effort_limit, self.effort_limit, self.effort,
             self.status.clipped)


class IdealRealization(_Realization):
    """Gauss / Udwadia-Kalaba realization (module doc) with effort limits and diagnostics.

    After ``realize``: ``acceleration`` is q'' with the clipped efforts, ``generalized_force``
    the ideal generalized force B u = M q''_ideal + h, ``effort`` the clipped u, ``status``.
    """

    def __init__(self, nv, nu, size, effort_limit=np.inf, rcond=1e-10, tolerance=1e-9):
        """Allocate for nv velocities, nu inputs and ``size`` constraint rows.

        ``rcond``: relative singular-value cut-off of A M^-1/2; ``tolerance``: relative
        residual above which rows count as inconsistent or forces as unrealizable.
        """
        super().__init__(nv, nu, size, effort_limit, 'ideal')
        self.rcond, self.tolerance = rcond, tolerance
        self.ideal_acceleration = np.zeros(self.nv)
        self.generalized_force = np.zeros(self.nv)
        self._force = np.zeros(self.nv)

    def realize(self, M, h, A, b, B=None, secondary_force=None):
        """Realize A q'' = b on M q'' + h = B u; return the clipped efforts u."""
        status = self.status
        np.negative(h, out=self._force)
        if secondary_force is not None:
            self._force += secondary_force
        _, inv_root = symmetric_sqrt(M)
        a = inv_root @ (inv_root @ self._force)
        u_, s, vt = np.linalg.svd(A @ inv_root, full_matrices=False)
        rank = _rank(s, self.rcond)
        status.size, status.rank, status.damping, status.missing_force = self.size, rank, 0.0, 0.0
        status.sigma_max = float(s[0]) if s.size else 0.0
        status.sigma_min = float(s[self.size - 1]) if s.size >= self.size else 0.0
        deficit = b - A @ a
        y = vt[:rank].T @ ((u_[:, :rank].T @ deficit) / s[:rank])
        np.add(a, inv_root @ y, out=self.ideal_acceleration)
        status.residual = float(np.linalg.norm(A @ self.ideal_acceleration - b))
        scale = np.linalg.norm(b) + np.linalg.norm(A @ a) + 1e-300
        if status.residual > self.tolerance * scale:
            status.code = 'inconsistent'
        else:
            status.code = 'redundant' if rank < self.size else 'exact'
        np.matmul(M, self.ideal_acceleration, out=self.generalized_force)
        self.generalized_force += h
        self._efforts(B)
        self._saturate()
        self._achieved(M, h, A, b, B)
        return self.effort

    def _efforts(self, B):
        Q = self.generalized_force
        if B is None:
            self.unsaturated[:] = Q
            return
        u, *_ = np.linalg.lstsq(B, Q, rcond=None)
        self.unsaturated[:] = u
        missing = float(np.linalg.norm(B @ u - Q))
        if missing > self.tolerance * (np.linalg.norm(Q) + 1e-300):
            self.status.code, self.status.missing_force = 'unrealizable', missing

    def _achieved(self, M, h, A, b, B):
        applied = self.effort if B is None else B @ self.effort
        self.acceleration[:] = np.linalg.solve(M, applied - h)
        np.matmul(A, self.acceleration, out=self.constraint_error)
        self.constraint_error -= b
        self.status.constraint_error = float(np.linalg.norm(self.constraint_error))


def realizability(M, A, B):
    """Singular values (descending) of A M^-1 B: all m must be nonzero to realize m rows."""
    return np.linalg.svd(A @ np.linalg.solve(M, B), compute_uv=False)


def dependent_rows(A, rtol=1e-9):
    """Return (rank, indices of the rows of A that add no rank to the rows before them).

    Gram-Schmidt in row order: a row whose part orthogonal to the kept rows is below
    ``rtol`` times its own norm (a zero row included) is dependent.
    """
    basis, dependent = [], []
    for i, row in enumerate(np.asarray(A, dtype=float)):
        rest = row.copy()
        for b in basis:
            rest -= (rest @ b) * b
        size = np.linalg.norm(rest)
        if size <= rtol * np.linalg.norm(row):
            dependent.append(i)
        else:
            basis.append(rest / size)
    return len(basis), dependent


def check_realizability(M, A, B, rcond=1e-9):
    """Raise RealizabilityError unless A M^-1 B (m x nu) has full row rank m."""
    m = A.shape[0]
    s = realizability(M, A, B)
    sigma_min = s[m - 1] if s.size >= m else 0.0
    if s.size < m or s[0] == 0.0 or sigma_min <= rcond * s[0]:
        detail = (f'det(A M^-1 B) = {np.linalg.det(A @ np.linalg.solve(M, B)):.3g}'
                  if m == B.shape[1] else f'singular values {np.round(s, 12).tolist()}')
        raise RealizabilityError(
            f'program not realizable along the input directions: A M^-1 B ({m}x{B.shape[1]})'
            f' has rank < {m} ({detail}); the servo condition <A, M^-1 B> != 0 fails')


class ServoRealization(_Realization):
    """Servo (Beghin) realization along the input directions B (module doc).

    After ``realize``: ``acceleration`` is q'' with the clipped efforts, ``effort`` the
    clipped u, ``unsaturated`` before clipping, ``status`` the diagnostics.
    """

    def __init__(self, nv, nu, size, effort_limit=np.inf, rcond=1e-9, condition_limit=1e4,
                 strict=False):
        """Allocate for nv velocities, nu inputs and ``size`` rows.

        ``rcond``: relative singular value below which A M^-1 B counts as rank deficient;
        ``condition_limit``: condition number above which the solve is damped;
        ``strict``: raise RealizabilityError instead of reporting an unrealizable tick.
        """
        super().__init__(nv, nu, size, effort_limit, 'servo')
        self.rcond, self.condition_limit, self.strict = rcond, condition_limit, strict
        self._solution = np.zeros((self.nv, self.nu + 1))
        self.gain = np.zeros((self.size, self.nu))
        self.deficit = np.zeros(self.size)
        self._no_preference = np.zeros(self.nu)
        self._report = np.zeros(6)

    def realize(self, M, h, A, b, B, preferred_effort=None):
        """Realize A q'' = b with forces B u; return the clipped efforts u.

        ``preferred_effort`` (nu), if given, is added in the null space of A M^-1 B (it
        changes nothing in A q'' when m < nu: a secondary objective for spare inputs).
        The numbers are computed by ``control_kernels.servo_solve`` (one compiled call).
        """
        status, report = self.status, self._report
        use_preferred = preferred_effort is not None
        servo_solve(M, h, A, b, B, preferred_effort if use_preferred else self._no_preference,
                    use_preferred, self.effort_limit, self.rcond, self.condition_limit,
                    self._solution, self.gain, self.deficit, self.unsaturated, self.effort,
                    status.clipped, self.acceleration, self.constraint_error, report)
        status.size, status.missing_force = self.size, 0.0
        status.rank = int(report[RANK])
        status.sigma_max, status.sigma_min = float(report[SIGMA_MAX]), float(report[SIGMA_MIN])
        status.damping, status.residual = float(report[DAMPING]), float(report[RESIDUAL])
        status.constraint_error = float(report[CONSTRAINT_ERROR])
        realizable = status.rank == self.size
        if not realizable and self.strict:
            check_realizability(M, A, B, self.rcond)
        status.code = ('unrealizable' if not realizable else
                       'damped' if status.damping > 0.0 else 'exact')
        return self.effort
