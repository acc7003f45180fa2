"""Compiled numerical cores of the controller tick: the servo solve and the modal step.

Each is a few small dense solves (nv <= a few tens) that NumPy would run as ~30 calls,
each mostly call overhead; compiled, they are one call. They use
LAPACK through numba (``compiled.allocating``: small temporaries allocated per call), so a
singular matrix raises ``numpy.linalg.LinAlgError`` as NumPy would. The Python classes
that own the workspaces and the diagnostics are ``realization.ServoRealization`` and
``elastic_estimator.ElasticStateEstimator``; the equations are in their module docs.
"""

import math

import numpy as np

from ..mechanics import compiled

# report slots of servo_solve
RANK, SIGMA_MAX, SIGMA_MIN, DAMPING, RESIDUAL, CONSTRAINT_ERROR = range(6)


@compiled.allocating
def servo_solve(M, h, A, b, B, preferred, use_preferred, limit, rcond, condition_limit,
                solution, gain, deficit, unsaturated, effort, clipped, acceleration,
                constraint_error, report):
    """Servo realization of A q'' = b on M q'' + h = B u with |u| <= limit (one tick).

    M (nv x nv), h (nv), A (m x nv), b (m), B (nv x nu); ``preferred`` (nu) is added in
    the null space of A M^-1 B when ``use_preferred``. Writes, with a = -M^-1 h:

        solution = M^-1 [B, -h],  gain = A M^-1 B (m x nu),  deficit = b - A a,
        unsaturated = V diag(w) U^T deficit (+ null-space part of ``preferred``),
        w_i = s_i / (s_i^2 + lambda^2) on the rank's directions, 0 beyond,
        lambda^2 = eps^2 - sigma_min^2 if sigma_min < eps = sigma_max / condition_limit,
        effort = clip(unsaturated, -limit, limit), clipped = effort != unsaturated,
        acceleration = M^-1 (B effort - h), constraint_error = gain effort - deficit,

    and ``report`` [rank, sigma_max, sigma_min, lambda, |gain unsaturated - deficit|,
    |constraint_error|] (slots named at module level). Rank: singular values above
    rcond * sigma_max.
    """
    nv, nu = B.shape
    m = A.shape[0]
    rhs = np.empty((nv, nu + 1))
    for r in range(nv):
        for c in range(nu):
            rhs[r, c] = B[r, c]
        rhs[r, nu] = -h[r]
    solution[:, :] = np.linalg.solve(M, rhs)
    for i in range(m):
        for c in range(nu + 1):
            acc = 0.0
            for k in range(nv):
                acc += A[i, k] * solution[k, c]
            if c < nu:
                gain[i, c] = acc
            else:
                deficit[i] = b[i] - acc
    u_, s, vt = np.linalg.svd(gain, full_matrices=False)
    count = s.size
    rank = 0
    if count > 0 and s[0] > 0.0:
        for i in range(count):
            if s[i] > rcond * s[0]:
                rank += 1
    sigma_max = s[0] if count > 0 else 0.0
    sigma_min = s[m - 1] if count >= m else 0.0
    eps = sigma_max / condition_limit
    damping2 = max(eps * eps - sigma_min * sigma_min, 0.0) if sigma_min < eps else 0.0
    unsaturated[:] = 0.0
    for i in range(rank):
        projection = 0.0
        for r in range(m):
            projection += u_[r, i] * deficit[r]
        weight = s[i] / (s[i] * s[i] + damping2) * projection
        for c in range(nu):
            unsaturated[c] += vt[i, c] * weight
    if use_preferred:
        for c in range(nu):
            unsaturated[c] += preferred[c]
        for i in range(rank):
            along = 0.0
            for c in range(nu):
                along += vt[i, c] * preferred[c]
            for c in range(nu):
                unsaturated[c] -= vt[i, c] * along
    residual = 0.0
    error = 0.0
    for i in range(m):
        achieved = 0.0
        for c in range(nu):
            achieved += gain[i, c] * unsaturated[c]
        residual += (achieved - deficit[i]) ** 2
    for c in range(nu):
        effort[c] = min(max(unsaturated[c], -limit[c]), limit[c])
        clipped[c] = effort[c] != unsaturated[c]
    for i in range(m):
        achieved = 0.0
        for c in range(nu):
            achieved += gain[i, c] * effort[c]
        constraint_error[i] = achieved - deficit[i]
        error += constraint_error[i] ** 2
    for r in range(nv):
        acc = solution[r, nu]
        for c in range(nu):
            acc += solution[r, c] * effort[c]
        acceleration[r] = acc
    report[RANK] = rank
    report[SIGMA_MAX] = sigma_max
    report[SIGMA_MIN] = sigma_min
    report[DAMPING] = math.sqrt(damping2)
    report[RESIDUAL] = math.sqrt(residual)
    report[CONSTRAINT_ERROR] = math.sqrt(error)


@compiled.allocating
def theta_modal_step(mass, bias, n, joint_acceleration, dt, theta, lhs_diagonal, w_factor,
                     eta, w):
    """One theta-method step of the modal rows (eta, w = eta') over ``dt`` [s], in place.

    ``mass``, ``bias``: M(q), h(q, v) at the start of the step, joints first (n of them);
    with the diagonal modal damping D and stiffness K, ``lhs_diagonal`` = theta dt D +
    theta^2 dt^2 K and ``w_factor`` = theta dt D - theta (1 - theta) dt^2 K:

        (M_ee + theta dt D + theta^2 dt^2 K) w+ = M_ee w + w_factor w
                                                  - dt (M_e,theta a + h_e),
        eta+ = eta + dt (theta w+ + (1 - theta) w)

    (theta = 1/2: the trapezoidal rule). A non-finite M, h or state makes (eta, w) NaN (as
    NumPy's solve would) for the caller's finiteness checks to catch; LAPACK refuses such
    input.
    """
    count = eta.size
    lhs = np.empty((count, count))
    rhs = np.empty(count)
    for i in range(count):
        load = bias[n + i]
        for j in range(n):
            load += mass[n + i, j] * joint_acceleration[j]
        acc = -dt * load + w_factor[i] * w[i]
        for k in range(count):
            lhs[i, k] = mass[n + i, n + k]
            acc += mass[n + i, n + k] * w[k]
        lhs[i, i] += lhs_diagonal[i]
        rhs[i] = acc
    if not (np.all(np.isfinite(lhs)) and np.all(np.isfinite(rhs))):
        eta[:] = np.nan
        w[:] = np.nan
        return
    w_next = np.linalg.solve(lhs, rhs)
    for i in range(count):
        eta[i] += dt * (theta * w_next[i] + (1.0 - theta) * w[i])
        w[i] = w_next[i]
