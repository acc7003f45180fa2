"""Rest of a flexible arm with its joints held: the static equilibrium of its elastic rows.

With the joint coordinates theta held (by the joint efforts), the elastic coordinates e
(assumed modes or Cosserat strains) of an arm at rest solve the elastic rows of the bias
forces h(q, v) at v = 0,

    h_e(theta, e) = K_e e + g_e(theta, e) = 0    (elastic forces balance gravity),

solved by Newton's method from the elastic part of the given q, with the Jacobian
dh_e/de by central differences and each step halved until |h_e| decreases (a line search:
a soft link that sags most of its length converges from straight). Gravity normal to the
plane of motion gives e = 0; a floating-frame link in a vertical plane sags slightly; a
soft Cosserat link a lot (``two_link_soft``: ~80 % of its length).
"""

import numpy as np

# Central-difference step of the Jacobian, relative to max(1, |e_i|).
DIFFERENCE_STEP = 1e-6


def static_equilibrium(model, q, data=None, iterations=50, tolerance=1e-11):
    """Return a copy of q whose elastic part is at rest with the joints of q held.

    ``model``: a fixed-base chain (joints first, then nv - n_joints elastic coordinates);
    ``data``: its workspace (one is made if None). Converged when a full Newton step
    changes e by at most ``tolerance`` (1 + |e|_inf) or |h_e|_inf falls to ``tolerance``
    times the elastic force scale (1 + |K_e e|_inf + |h_e(e_0)|_inf). Raises ValueError
    naming the residual if neither is reached (the arm has no rest there: a buckled or
    overloaded link).
    """
    q = np.array(q, dtype=float)
    n, nv = model.n_joints, model.nv
    if nv == n:
        return q
    data = model.create_data() if data is None else data
    stiffness = model.elastic_coefficients()[0][n:]
    zero = np.zeros(nv)

    def residual(e):
        q[n:] = e
        return model.bias_forces(data, q, zero)[n:].copy()

    e = q[n:].copy()
    r = residual(e)
    scale = 1.0 + np.abs(r).max()
    for _ in range(iterations):
        if not np.all(np.isfinite(r)):
            break
        if np.abs(r).max() <= tolerance * (scale + np.abs(stiffness * e).max()):
            q[n:] = e
            return q
        q[n:] = e
        jacobian = elastic_jacobian(model, q, data, range(n, nv))
        try:
            step = -np.linalg.solve(jacobian, r)
        except np.linalg.LinAlgError:
            break
        norm, fraction = np.abs(r).max(), 1.0
        while fraction > 1e-3:
            trial = residual(e + fraction * step)
            if np.all(np.isfinite(trial)) and np.abs(trial).max() < norm:
                break
            fraction *= 0.5
        e += fraction * step
        r = residual(e)
        if fraction == 1.0 and np.abs(step).max() <= tolerance * (1.0 + np.abs(e).max()):
            q[n:] = e
            return q
    raise ValueError(f'model {model.name!r}: no static equilibrium of the elastic '
                     f'coordinates with the joints held at '
                     f'{np.round(q[:n], 4).tolist()} (residual {np.abs(r).max():.3g} after '
                     f'{iterations} Newton steps)')


def elastic_jacobian(model, q, data, columns):
    """Return dh_e/dq_c at (q, v = 0) by central differences: (nv - n) x len(columns)."""
    n, nv = model.n_joints, model.nv
    zero, q = np.zeros(nv), np.array(q, dtype=float)
    columns = list(columns)
    out = np.zeros((nv - n, len(columns)))
    for k, i in enumerate(columns):
        step = DIFFERENCE_STEP * max(1.0, abs(q[i]))
        value = q[i]
        q[i] = value + step
        plus = model.bias_forces(data, q, zero)[n:].copy()
        q[i] = value - step
        out[:, k] = (plus - model.bias_forces(data, q, zero)[n:]) / (2.0 * step)
        q[i] = value
    return out


def rest_sensitivity(model, q, data=None):
    """Return de/dtheta ((nv - n) x n) of the elastic coordinates of a rest q.

    From h_e(theta, e(theta)) = 0: de/dtheta = -(dh_e/de)^-1 dh_e/dtheta (both by central
    differences). A point p(theta, e) of the arm at rest then moves with the joints as
    dp/dtheta = J_theta + J_e de/dtheta (what a solve for joints at rest needs).
    """
    n, nv = model.n_joints, model.nv
    data = model.create_data() if data is None else data
    return -np.linalg.solve(elastic_jacobian(model, q, data, range(n, nv)),
                            elastic_jacobian(model, q, data, range(n)))
