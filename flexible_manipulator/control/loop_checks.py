"""Start-up stability checks of the sampled control loop (``program_controller``).

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
"""

import numpy as np

from ..mechanics.equilibrium import static_equilibrium
from .programs import POSITION
from .realization import symmetric_sqrt
from .stabilization import critical_period, velocity_critical_period
from .zero_dynamics import linearize

STABILITY_TOLERANCE = 1e-7   # spectral radius 1 + tol (or growth rate tol) is "marginal"


def row_critical_period(stabilization, row, scheme):
    """Critical period [s] of one row under ``scheme``."""
    if stabilization.order[row] == POSITION:
        return critical_period(stabilization.alpha[row], stabilization.beta[row], scheme)
    return velocity_critical_period(stabilization.gamma[row], scheme)


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

    def __init__(self, full, control, joints, period, realization):
        """Linearize both models at rest at the joint angles ``joints``."""
        import scipy.linalg
        n = full.n_joints
        self.full, self.control, self.period = full, control, float(period)
        names = list(full.coordinate_names)
        self.P = np.zeros((control.nv, full.nv))
        for j, name in enumerate(control.coordinate_names):
            self.P[j, names.index(name)] = 1.0
        qc = control.neutral_configuration().astype(float)
        qc[:n] = joints
        qc = static_equilibrium(control, qc)
        # The control model's rest, by name, is the first guess of the full model's.
        self.q0 = static_equilibrium(full, self.P.T @ qc)
        M, D, K, B = linearize(full, self.q0)
        Mc, Dc, Kc, Bc = linearize(control, qc)
        self.Mc, self.Bc, self.realization = Mc, Bc, realization
        self.Mc_inv = np.linalg.inv(Mc)
        self.free_x, self.free_v = -self.Mc_inv @ Kc, -self.Mc_inv @ Dc
        nv, nu = full.nv, B.shape[1]
        M_inv = np.linalg.inv(M)
        self.A = np.zeros((2 * nv, 2 * nv))
        self.A[:nv, nv:] = np.eye(nv)
        self.A[nv:, :nv] = -M_inv @ K
        self.A[nv:, nv:] = -M_inv @ D
        self.Bz = np.zeros((2 * nv, nu))
        self.Bz[nv:] = M_inv @ B
        augmented = np.zeros((2 * nv + nu, 2 * nv + nu))
        augmented[:2 * nv, :2 * nv] = self.A * self.period
        augmented[:2 * nv, 2 * nv:] = self.Bz * self.period
        exponential = scipy.linalg.expm(augmented)
        self.Phi = exponential[:2 * nv, :2 * nv]
        self.Gamma = exponential[:2 * nv, 2 * nv:]

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

    def radius(self, C, kp, kd, delay=0):
        """Spectral radius of the sampled (ZOH) closed loop (< 1: stable).

        With ``delay`` > 0 the largest radius over input delays of 0..delay periods (the
        effort computed from z_k applied over period k + d: state (z_k, ..., z_(k-d))).
        """
        gain = self.Gamma @ self.feedback(C, kp, kd)
        size = self.Phi.shape[0]
        worst = 0.0
        for d in range(delay + 1):
            closed = np.zeros((size * (d + 1), size * (d + 1)))
            closed[:size, :size] = self.Phi
            closed[:size, size * d:] += gain
            for i in range(d):
                closed[size * (i + 1):size * (i + 2), size * i:size * (i + 1)] = np.eye(size)
            worst = max(worst, float(np.max(np.abs(np.linalg.eigvals(closed)))))
        return worst

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
        if getattr(self.control, 'kind', None) == 'cosserat_chain':
            what = 'one strain coordinate alone'
            fewer = ('leave the stiff strains out of the control model (control_modes: k keeps '
                     'torsion and bending to k coefficients, drops extension and shear)')
        else:
            what = 'clamped-free'
            fewer = 'keep fewer modes per link in the control model (control_modes)'
        return (f'the control model\'s fastest mode ({what} {fastest:.4g} rad/s, omega T = '
                f'{fastest * self.period:.3g}) is too fast for it; {fewer} or shorten the '
                'period')
