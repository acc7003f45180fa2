"""Start-up stability checks of the sampled control loop (``controller_setup``).

Both run when a program is built, before the first tick:

* per-row discrete bound: each row's error dynamics under its gains, held over the control
  period T by the hold scheme (``stabilization``; ZOH, position row:
  T < min(1/alpha, 4 alpha/beta^2)); `row_critical_period` is one row's longest stable
  period [s];
* the linearized closed loop (`LinearLoop`): the full plant M x'' + D x' + K x = B u at
  rest (``zero_dynamics.linearize``) under the control law linearized on the control model
  (all modes, fewer modes per link, or the rigid twin), with z = (x, x'):

      z' = A z + B_z u (continuous),    z_{k+1} = (Phi + Gamma F) z_k (ZOH over T),

  u = F z, the input applied 0 to ``delay`` periods late. The sampled loop is stable if its
  spectral radius is at most 1 + `STABILITY_TOLERANCE` (``radius``), the continuous one if
  its largest real part is at most `STABILITY_TOLERANCE` [1/s] (``growth``). A sampled
  servo law that inverts fast, lightly damped modes can be unstable at periods far shorter
  than those modes' periods (``mode_hint`` says so).

The plant need not be the model: ``LinearLoop(plant, control, ..., model=model)`` puts a
plant whose parameters differ (``mechanics.perturbation``) under the law built on
``model`` (the robustness check, ``uncertainty``). With the elastic state estimated, the
law's modal coordinates are those of the observer (``elastic_estimator``), whose
linearization at rest (``observer_design``) is part of the loop (`LinearLoop.radius`,
``observer``).
"""

import copy

import numpy as np

from ..mechanics.equilibrium import static_equilibrium
from .model_cache import kept
from .programs import POSITION
from .realization import symmetric_sqrt
from .stabilization import critical_period, velocity_critical_period
from .zero_dynamics import linearize

STABILITY_TOLERANCE = 1e-7   # spectral radius 1 + tol (or growth rate tol) is "marginal"


def stable(radius):
    """Tell whether a spectral radius means a stable sampled loop, to the tolerance."""
    return radius <= 1.0 + STABILITY_TOLERANCE


def row_critical_period(stabilization, row, scheme):
    """Critical period [s] of one row under ``scheme``."""
    if stabilization.order[row] == POSITION:
        return critical_period(stabilization.alpha[row], stabilization.beta[row], scheme)
    return velocity_critical_period(stabilization.gamma[row], scheme)


def margin_radius(poles, damping=0.0):
    """Return max |z| exp(zeta_m |Log z|) over the nonzero ``poles`` z (discrete).

    At most 1 exactly when every pole, s = Log(z) / T, has -Re s >= zeta_m |s|: damped by
    at least ``damping`` = zeta_m; with 0, the spectral radius.
    """
    poles = np.asarray(poles)
    poles = poles[np.abs(poles) > 1e-12]
    if poles.size == 0:
        return 0.0
    if damping == 0.0:
        return float(np.max(np.abs(poles)))
    return float(np.max(np.abs(poles) * np.exp(damping * np.abs(np.log(poles.astype(complex))))))


def _rest(control, q):
    """Return the control model's rest near ``q``: (q0, M, D, K, B, M^-1) there."""
    q0 = static_equilibrium(control, q)
    M, D, K, B = linearize(control, q0)
    return q0, M, D, K, B, np.linalg.inv(M)


def _moving(full, guess):
    """Return (q0, A, B_z) of the plant at its rest near ``guess`` (`LinearLoop` doc)."""
    q0 = static_equilibrium(full, guess)
    M, D, K, B = linearize(full, q0)
    nv, nu = full.nv, B.shape[1]
    M_inv = np.linalg.inv(M)
    A = np.zeros((2 * nv, 2 * nv))
    A[:nv, nv:] = np.eye(nv)
    A[nv:, :nv] = -M_inv @ K
    A[nv:, nv:] = -M_inv @ D
    Bz = np.zeros((2 * nv, nu))
    Bz[nv:] = M_inv @ B
    return q0, A, Bz


def _held(A, Bz, period):
    """Return (Phi, Gamma): z' = A z + B_z u held over ``period`` (ZOH, `LinearLoop` doc)."""
    import scipy.linalg
    size, nu = A.shape[0], Bz.shape[1]
    augmented = np.zeros((size + nu, size + nu))
    augmented[:size, :size] = A * period
    augmented[:size, size:] = Bz * period
    exponential = scipy.linalg.expm(augmented)
    return exponential[:size, :size], exponential[:size, size:]


class LinearLoop:
    """The closed loop linearized at rest, for the start-up check (module doc).

    Plant: the full model M x'' + D x' + K x = B u at rest at q0, its elastic coordinates
    at their static equilibrium with the joints held (``zero_dynamics.linearize``,
    `equilibrium.static_equilibrium`). Control law on the control model, coordinates
    x_c = P x (P selects the modelled coordinates by name), for rows with Jacobian C at
    q0, a constant reference and gains K_p = diag(beta^2), K_d = diag(2 alpha):

        u = R (b - C a),   b = -K_p C x_c - K_d C x_c',   a = -M_c^-1 (K_c x_c + D_c x_c'),

    R = (C M_c^-1 B_c)^+ (servo) or B_c^+ M_c^1/2 (C M_c^-1/2)^+ (ideal, Gauss). With
    z = (x, x'): z' = A z + B_z u in continuous time; held over the period T (ZOH),
    z_{k+1} = (Phi + Gamma F) z_k with Phi = e^(A T), Gamma = int_0^T e^(A s) ds B_z
    (one matrix exponential of the augmented [[A, B_z], [0, 0]] T).
    """

    def __init__(self, full, control, joints, period, realization, model=None):
        """Linearize the plant ``full`` and the control model at rest at ``joints``.

        ``model``: the full model the controller holds (its estimator's), when the plant
        differs from it (same coordinate names); None: the plant is the model.
        """
        n = full.n_joints
        self.control, self.period, self.n = control, float(period), n
        names = list(full.coordinate_names)
        self.P = np.zeros((control.nv, full.nv))
        for j, name in enumerate(control.coordinate_names):
            self.P[j, names.index(name)] = 1.0
        qc = control.neutral_configuration().astype(float)
        qc[:n] = joints
        qc, Mc, Dc, Kc, Bc, self.Mc_inv = kept(control, ('control rest', qc.tobytes()),
                                               lambda: _rest(control, qc))
        # The control model's rest, by name, is the first guess of the full model's.
        self._guess = self.P.T @ qc
        self._estimator = (full if model is None else model, self._guess)
        self.Mc, self.Kc, self.Bc, self.realization = Mc, Kc, Bc, realization
        self.free_x, self.free_v = -self.Mc_inv @ Kc, -self.Mc_inv @ Dc
        self._plant(full)

    def for_plant(self, plant):
        """Put the same law (control model, estimator) on another plant, by coordinate name.

        Only the plant is linearized again: what the robustness check varies.
        """
        loop = copy.copy(self)
        loop._plant(plant)
        return loop

    def _plant(self, full):
        """Linearize the plant at its rest and hold it over the period (class doc)."""
        self.full = full
        guess = self._guess.tobytes()
        q0, self.A, self.Bz = kept(full, ('plant rest', guess), lambda: _moving(full, self._guess))
        self.q0 = q0.copy()
        self.Phi, self.Gamma = kept(full, ('held', guess, self.period),
                                    lambda: _held(self.A, self.Bz, self.period))

    def embed(self, C):
        """Rows on control coordinates as rows on the full model's coordinates."""
        return C @ self.P

    def feedback(self, C, kp, kd):
        """F (nu x 2 nv) with u = F z (class doc)."""
        if self.realization == 'servo':
            R = np.linalg.pinv(C @ self.Mc_inv @ self.Bc)
        else:
            root, inv_root = symmetric_sqrt(self.Mc)
            R = np.linalg.pinv(self.Bc) @ root @ np.linalg.pinv(C @ inv_root)
        gain_x = R @ (-kp @ C - C @ self.free_x) @ self.P
        gain_v = R @ (-kd @ C - C @ self.free_v) @ self.P
        return np.hstack([gain_x, gain_v])

    def radius(self, C, kp, kd, delay=0, observer=None, damping=0.0):
        """Spectral radius of the sampled (ZOH) closed loop (< 1: stable).

        ``damping``: the least damping ratio every pole must have, as in `dynamic_radius`
        (the figure is then at most 1 exactly when every pole is damped by that much).

        With ``delay`` > 0 the largest radius over input delays of 0..delay periods (the
        effort computed at tick k applied over period k + d). ``observer``: the law's
        modal coordinates are the elastic-state observer's, with this
        `observer_design.ObserverGain` (designed on the controller's model; a zero L is
        the uncorrected estimator), else the plant's (measured).
        """
        F = self.feedback(C, kp, kd)
        if observer is None:
            gain = self.Gamma @ F
            size = self.Phi.shape[0]
            worst = 0.0
            for d in range(delay + 1):
                closed = np.zeros((size * (d + 1), size * (d + 1)))
                closed[:size, :size] = self.Phi
                closed[:size, size * d:] += gain
                for i in range(d):
                    closed[size * (i + 1):size * (i + 2), size * i:size * (i + 1)] = \
                        np.eye(size)
                worst = max(worst, margin_radius(np.linalg.eigvals(closed), damping))
            return worst
        return max(self._estimated_radius(F, d, observer, damping) for d in range(delay + 1))

    def _selection(self, m):
        """S (2 m_c x 2 m): the control model's modes out of the estimator's (eta, eta')."""
        model, n = self._estimator[0], self.n
        names = list(model.coordinate_names)
        S = np.zeros((2 * (self.control.nv - n), 2 * m))
        for j, name in enumerate(self.control.coordinate_names[n:]):
            i = names.index(name) - n
            S[j, i] = S[self.control.nv - n + j, m + i] = 1.0
        return S

    def _estimated_radius(self, F, d, observer, damping=0.0):
        """Spectral radius of the loop with the observer, input ``d`` periods late.

        Loop state at tick k: s_k = (z_k, theta_(k-1), theta'_(k-1), xhat_(k-1), u_(k-1),
        ..., u_(k-1-d)). The observer (``observer_design``: E, G_a, G_theta, the innovation
        nu = B_theta u - A_a a - H xhat - A_theta theta - A_rate theta' of the step from
        k - 1 with the effort applied over it, u_(k-1-d), and a = (theta'_k -
        theta'_(k-1)) / T) gives xhat_k = E xhat_(k-1) + G_a (theta'_k - theta'_(k-1)) +
        G_theta theta_(k-1) + L nu; then u_k = F_j z_k + F_e S xhat_k (S picks the control
        model's modes), z_(k+1) = Phi z_k + Gamma u_(k-d).
        """
        step, L = observer.step, observer.L
        E, T = step.E, self.period
        n, nv = self.n, self.full.nv
        size, nu, m2 = self.Phi.shape[0], F.shape[0], E.shape[0]
        S = self._selection(m2 // 2)
        # Feedback split: joints of the plant's state, modes of the estimate (in the
        # control model's order: positions then velocities).
        F_joint = np.zeros((nu, size))
        F_joint[:, :n] = F[:, :n]
        F_joint[:, nv:nv + n] = F[:, nv:nv + n]
        F_mode = np.hstack([F[:, :nv] @ self.P.T[:, n:], F[:, nv:] @ self.P.T[:, n:]])
        i_th, i_dth, i_x = size, size + n, size + 2 * n
        i_u = i_x + m2
        total = i_u + nu * (d + 1)
        # nu_(k-1) = N s_k
        N = np.zeros((n, total))
        N[:, i_u + nu * d:] = step.B_theta
        N[:, nv:nv + n] -= step.A_a / T
        N[:, i_dth:i_x] += step.A_a / T - step.A_rate
        N[:, i_th:i_dth] -= step.A_theta
        N[:, i_x:i_u] -= step.H
        # xhat_k = X s_k
        X = L @ N
        X[:, i_x:i_u] += E
        X[:, nv:nv + n] += step.G_a                 # theta'_k from z_k
        X[:, i_dth:i_x] -= step.G_a
        X[:, i_th:i_dth] += step.G_theta
        U = F_joint @ np.eye(size, total) + F_mode @ S @ X     # u_k = U s_k
        closed = np.zeros((total, total))
        closed[:size, :size] = self.Phi
        closed[:size] += self.Gamma @ (U if d == 0 else np.eye(nu, total, i_u + nu * (d - 1)))
        closed[i_th:i_th + n, :n] = np.eye(n)                  # theta_k
        closed[i_dth:i_dth + n, nv:nv + n] = np.eye(n)         # theta'_k
        closed[i_x:i_u] = X
        closed[i_u:i_u + nu] = U
        for i in range(1, d + 1):
            closed[i_u + nu * i:i_u + nu * (i + 1), i_u + nu * (i - 1):i_u + nu * i] = \
                np.eye(nu)
        return margin_radius(np.linalg.eigvals(closed), damping)

    def dynamic_radius(self, system, delay=0, damping=0.0):
        """Largest margin radius of the loop under a discrete law on the measured joints.

        ``system`` = (A, B, C, D): the law's states x_(k+1) = A x_k + B y_k on the plant's
        joints y = (theta, theta') and its effort u_k = C x_k + D y_k (A may be 0 x 0: a
        static law), applied d = 0..``delay`` periods late (the largest over d, as
        `radius`). ``damping``: the least damping ratio zeta_m every pole must have; the
        figure is max |z| exp(zeta_m |Log z|) over the poles z, at most 1 exactly when
        each has s = Log(z) / T with -Re s >= zeta_m |s| (zeta_m = 0: the spectral radius).
        """
        return max(margin_radius(poles, damping) for poles in self.dynamic_poles(system, delay))

    def dynamic_poles(self, system, delay=0):
        """Return the poles z (nonzero) of the loop of `dynamic_radius`, one array per d."""
        A, B, C, D = system
        n, nv, size = self.n, self.full.nv, self.Phi.shape[0]
        nu, ns = D.shape[0], A.shape[0]
        Y = np.zeros((2 * n, size))            # y = Y z
        Y[:n, :n] = np.eye(n)
        Y[n:, nv:nv + n] = np.eye(n)
        result = []
        for d in range(delay + 1):
            total = size + ns + d * nu
            out = np.zeros((nu, total))            # u_k = out s_k
            out[:, :size] = D @ Y
            out[:, size:size + ns] = C
            closed = np.zeros((total, total))
            closed[:size, :size] = self.Phi
            applied = out if d == 0 else np.eye(nu, total, size + ns + nu * (d - 1))
            closed[:size] += self.Gamma @ applied
            closed[size:size + ns, :size] = B @ Y
            closed[size:size + ns, size:size + ns] = A
            for i in range(d):
                rows = slice(size + ns + nu * i, size + ns + nu * (i + 1))
                closed[rows] = out if i == 0 else np.eye(nu, total, size + ns + nu * (i - 1))
            poles = np.linalg.eigvals(closed)
            result.append(poles[np.abs(poles) > 1e-12])
        return result

    def joint_feedback(self, kp, kd):
        """Return the ideal realization's joint law as (A, B, C, D) for `dynamic_radius`.

        Rows theta = theta_ref with gains ``kp``, ``kd``: no states, D = [F_theta,
        F_theta'].
        """
        n, nv = self.n, self.full.nv
        F = self.feedback(np.eye(n, self.control.nv), kp, kd)
        D = np.hstack([F[:, :n], F[:, nv:nv + n]])
        return np.zeros((0, 0)), np.zeros((0, 2 * n)), np.zeros((D.shape[0], 0)), D

    def growth(self, C, kp, kd):
        """Largest real part of the continuous closed loop's eigenvalues [1/s]."""
        closed = self.A + self.Bz @ self.feedback(C, kp, kd)
        return float(np.max(np.linalg.eigvals(closed).real))

    def describe_radius(self, radius, delay=0):
        """Why a sampled loop is refused."""
        lag = f', input delay up to {delay} periods' if delay else ''
        return (f'the sampled closed loop is unstable: spectral radius {radius:.6g} > 1 at '
                f'period {self.period:g} s (ZOH{lag}; plant: the full model, '
                f'{self.full.nv - self.full.nu} modes; control law on '
                f'{self.control.nv - self.control.n_joints} modelled modes)')

    def mode_hint(self):
        """Advice when even lambda -> 0 is unstable: the modelled modes are too fast."""
        fastest = float(np.max(self.control.mode_frequencies))
        what, fewer = self.control.MODE_FREQUENCY_MEANING, self.control.FEWER_MODES
        return (f'the control model\'s fastest mode ({what} {fastest:.4g} rad/s, omega T = '
                f'{fastest * self.period:.3g}) is too fast for it; {fewer} or shorten the '
                'period')
