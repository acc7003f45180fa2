"""Linearized step and measurement of the elastic-state observer, and its Kalman gain.

The observer (``elastic_estimator``) estimates x = (eta, eta') of all modes of the full
model. Linearized at rest at q (``zero_dynamics.linearize``: M, D, K; the diagonal K_d
and D of ``elastic_coefficients``), one step of its theta-method (weight c = ``THETA``)
over the period T, with the mean joint acceleration a over the step and
W = c T D + c^2 T^2 K_d, is

    (M_ee + W) w+ = (M_ee + c T D - c (1 - c) T^2 K_d - T D) w
                    - T (M_e,theta a + K_e,theta theta + K_ee eta),
    eta+ = eta + T (c w+ + (1 - c) w),

i.e. x+ = E x + G_a (theta'_k - theta'_(k-1)) + G_theta theta (`StepMatrices`).

Measurement: the joint rows of the model over the same step, whose modal acceleration is
the step's mean (w+ - w) / T. With u the effort applied over the step,

    nu = B_theta u - M_theta,theta a - M_theta,e (w+ - w) / T - h_theta(q, v)

[N m or N], zero on the model with the true x. Linearized: nu = H (x - xhat) + nu_0 with

    H = M_theta,e [A_eta, A_w - 1] / T + [K_theta,e, D_theta,e],

A_eta, A_w the rows of w+ in E. Using the step's own modal acceleration, not that of the
continuous equations at the step's start, keeps the measurement consistent with the
prediction: with the continuous form the loop of the demo arm's joint programs has a
spectral radius of 1 + 2e-6 at zero delay, with the step's form 0.9994 (as with the modes
measured).

Gain: the steady-state Kalman gain of the predictor form xhat_(k+1) = E xhat_k + ... +
L nu_k, L = E P H^T (H P H^T + R)^-1, P the solution of the discrete algebraic Riccati
equation (``scipy.linalg.solve_discrete_are``); the error obeys e+ = (E - L H) e. The
covariances are derived from what the controller declares:

* R (the joints' torque residual): effort noise sigma_u [N m] per joint, the velocity
  noise sigma_v [rad/s] through a = (theta'_k - theta'_(k-1)) / T (variance 2 sigma_v^2 /
  T^2 through the coefficient A_a of a in nu), and the declared armature and friction
  ranges (a torque error eps_J J a_max and eps_f f(v_max) per joint, f(v) = d v + F_c
  tanh(v / v_s) the joint's viscous and Coulomb friction, ``Chain.joint_friction``):
  R = diag(sigma_u^2 + (eps_J J a_max)^2 + (eps_f f(v_max))^2) + 2 sigma_v^2 / T^2 A_a A_a^T;
* Q (the modal rows): a modal acceleration error eps M_ee^-1 |M_e,theta| a_max held over
  a step (velocity error per step, squared), eps the largest relative half-width of the
  declared stiffness and payload ranges and at least `MODEL_ERROR_FLOOR` (the assumed
  modes and the linearized step are themselves approximations); a_max = |M_theta,theta^-1|
  u_max, the joint accelerations the effort limits give.

The gain is designed at the program's rest, where the start-up checks linearize
(``loop_checks.LinearLoop`` includes it).
"""

from collections import namedtuple

import numpy as np

from ..mechanics.equilibrium import static_equilibrium
from ..mechanics.perturbation import perturbed
from ..config_checks import ConfigError, number
from .zero_dynamics import linearize

# Implicit weight of the theta-method step (``elastic_estimator``'s module doc).
THETA = 0.6
# Relative model error the observer allows for when the declared set is narrower.
MODEL_ERROR_FLOOR = 0.1

StepMatrices = namedtuple('StepMatrices', 'E G_a G_theta H A_a A_theta A_rate B_theta')
StepMatrices.__doc__ = (
    'The observer linearized at rest over one period (module doc): x+ = E x + G_a '
    '(theta\'_k - theta\'_(k-1)) + G_theta theta; nu = B_theta u - A_a a - H xhat - A_theta '
    'theta - A_rate theta\' (a the mean joint acceleration over the step).')

ObserverGain = namedtuple('ObserverGain', 'L covariance step')
ObserverGain.__doc__ = ('The Kalman gain L (2 m x n), the innovation covariance H P H^T + R '
                        '(n x n, what nu is expected to be under the declared noise) and the '
                        '`StepMatrices` it was designed on.')

NoiseModel = namedtuple('NoiseModel', 'velocity_noise effort_noise')
NoiseModel.__doc__ = ('What the observer assumes of the measurements: velocity noise '
                      '[rad/s] and effort noise (fraction of each joint\'s effort limit).')
DEFAULT_NOISE = NoiseModel(velocity_noise=1e-3, effort_noise=0.01)


def parse_noise(value, field='observer_noise'):
    """Return a `NoiseModel` from None (`DEFAULT_NOISE`), a NoiseModel or a mapping.

    ConfigError naming the field unless both entries are finite and positive.
    """
    if value is None:
        return DEFAULT_NOISE
    if isinstance(value, NoiseModel):
        value = value._asdict()
    if not isinstance(value, dict) or set(map(str, value)) - set(NoiseModel._fields):
        raise ConfigError(f'{field}: expected a mapping with {", ".join(NoiseModel._fields)}, '
                          f'got {value!r}')
    entries = {}
    for name in NoiseModel._fields:
        entries[name] = number(value.get(name, getattr(DEFAULT_NOISE, name)),
                               f'{field}.{name}', 0.0, strict_minimum=True,
                               allow_infinite=False)
    return NoiseModel(**entries)


def step_matrices(model, q, period):
    """Return the `StepMatrices` of ``model`` at rest at ``q`` over ``period`` [s]."""
    n, T, c = model.n_joints, float(period), THETA
    M, D, K, B = linearize(model, q)
    stiffness, damping = (values[n:] for values in model.elastic_coefficients())
    Mee, Met, Mte = M[n:, n:], M[n:, :n], M[:n, n:]
    m = Mee.shape[0]
    lhs = Mee + np.diag(c * T * damping + (c * T) ** 2 * stiffness)
    w_factor = np.diag(c * T * damping - c * (1.0 - c) * T * T * stiffness)
    solve = np.linalg.inv(lhs)
    # w+ = Aw w + Aeta eta + Ga a + Gth theta
    Aw = solve @ (Mee + w_factor - T * D[n:, n:])
    Aeta = -T * solve @ K[n:, n:]
    Ga = -T * solve @ Met
    Gth = -T * solve @ K[n:, :n]
    E = np.zeros((2 * m, 2 * m))
    E[m:, :m], E[m:, m:] = Aeta, Aw
    E[:m, :m] = np.eye(m) + c * T * Aeta
    E[:m, m:] = c * T * Aw + (1.0 - c) * T * np.eye(m)
    G_a = np.vstack([c * T * Ga, Ga]) / T        # per unit velocity change
    G_theta = np.vstack([c * T * Gth, Gth])
    H = np.hstack([Mte @ Aeta / T + K[:n, n:], Mte @ (Aw - np.eye(m)) / T + D[:n, n:]])
    A_a = M[:n, :n] + Mte @ Ga / T
    A_theta = Mte @ Gth / T + K[:n, :n]
    return StepMatrices(E, G_a, G_theta, H, A_a, A_theta, D[:n, :n], B[:n])


def relative_error(ranges, factors):
    """Largest relative half-width max(hi - 1, 1 - lo) of ``factors`` in ``ranges``."""
    widths = [max(hi - 1.0, 1.0 - lo) for factor, (lo, hi) in ranges.items()
              if factor in factors]
    return max(widths, default=0.0)


def kalman_gain(model, q, period, effort_limit, velocity_limit, ranges, noise=DEFAULT_NOISE):
    """Return the `ObserverGain` at rest at ``q`` (module doc).

    ``effort_limit``, ``velocity_limit``: per joint (the controller's); ``ranges``: the
    declared uncertainty {factor: (lo, hi)}; ``noise``: `NoiseModel`.
    """
    import scipy.linalg
    n, T = model.n_joints, float(period)
    q = static_equilibrium(model, np.asarray(q, dtype=float))
    step = step_matrices(model, q, T)
    M = model.mass_matrix(model.create_data(), q).copy()
    m = step.E.shape[0] // 2
    u_max = np.asarray(effort_limit, dtype=float)[:n]
    a_max = np.abs(np.linalg.inv(M[:n, :n])) @ u_max
    v_max = np.asarray(velocity_limit, dtype=float)[:n]
    v_max = np.where(np.isfinite(v_max), v_max, 0.0)
    # The armature J: what doubling it adds to the joints' diagonal of M.
    doubled = perturbed(model, armature=2.0)
    armature = np.diag(doubled.mass_matrix(doubled.create_data(), q))[:n] - np.diag(M)[:n]
    friction = model.joint_friction(v_max)      # viscous and Coulomb, at the velocity limits
    sigma = (noise.effort_noise * u_max) ** 2
    sigma += (relative_error(ranges, ('armature',)) * armature * a_max) ** 2
    sigma += (relative_error(ranges, ('friction',)) * friction) ** 2
    R = np.diag(sigma) + 2.0 * noise.velocity_noise ** 2 / T ** 2 * step.A_a @ step.A_a.T
    eps = max(relative_error(ranges, ('stiffness', 'payload')), MODEL_ERROR_FLOOR)
    modal = np.abs(np.linalg.solve(M[n:, n:], M[n:, :n])) @ a_max
    Q = np.zeros((2 * m, 2 * m))
    Q[m:, m:] = np.diag((eps * modal * T) ** 2)
    P = scipy.linalg.solve_discrete_are(step.E.T, step.H.T, Q, R)
    covariance = step.H @ P @ step.H.T + R
    L = step.E @ P @ step.H.T @ np.linalg.inv(covariance)
    return ObserverGain(L, covariance, step)
