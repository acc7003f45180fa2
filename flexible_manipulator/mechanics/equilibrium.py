"""Static equilibrium of a chain with its joints held: the one statics solver.

With the joint coordinates theta held (by the joint efforts), the elastic coordinates e
(assumed modes or Cosserat strains) at rest solve the elastic rows of

    r(e) = K_e e + g_e(theta, e) - sum_l J_l(q)^T W_l = 0,

elastic forces K_e e, gravity g_e (the bias forces h(q, 0) without K q; left out with
``gravity=False``) and loads W_l (``Load``: a moment and a force [N m, N] at a section, a
dead load fixed in base-frame axes or a ``follower`` fixed in the section's axes; J_l the
section's Jacobian, ``section_jacobian``). Newton's method from the elastic part of the
given q, with the Jacobian dr/de by central differences and each step halved until |r|
decreases (a line search: a soft link that sags most of its length converges from
straight), in load ``increments`` (the loads and gravity scaled by k / increments, each
solve started from the last) so that large loads follow the equilibrium branch from the
straight link (an end moment rolls a rod into a circle).

It returns only within its residual: |r|_inf <= tolerance * scale, scale the largest of
the elastic, gravity and load forces |K_e e|_inf, |g_e|_inf, |sum J^T W|_inf at the
solution (relative: a soft rod's forces are small; no absolute floor), else it raises
`StaticsError` naming the load factor and the residual (the arm has no rest there: a
buckled or overloaded link). Gravity normal to the plane of motion gives e = 0; a
floating-frame link in a vertical plane sags slightly; a soft Cosserat link a lot
(``two_link_soft``: ~80 % of its length).
"""

from collections import namedtuple

import numpy as np

# Central-difference step of the Jacobian, relative to max(1, |e_i|).
DIFFERENCE_STEP = 1e-6

Load = namedtuple('Load', 'link abscissa wrench follower')
Load.__doc__ = ('A wrench (moment, force) [N m, N] at the section ``abscissa`` [m] of link '
                '``link``: in the section\'s axes if ``follower``, else base-frame axes.')


class StaticsError(ValueError):
    """No static equilibrium within the stated residual (module doc)."""


def generalized_load(model, data, q, loads):
    """sum_l J_l^T W_l (nv): the loads as generalized forces at q (module doc).

    J_l maps v to the section's (omega, p') in base-frame axes, so a wrench (moment m,
    force f) in those axes does the virtual work (m, f) . J_l dq; a follower's is R (m, f).
    """
    force = np.zeros(model.nv)
    for load in loads:
        R, _ = model.section_pose(data, q, load.link, load.abscissa)
        wrench = np.asarray(load.wrench, dtype=float).reshape(6)
        if load.follower:
            wrench = np.concatenate([R @ wrench[:3], R @ wrench[3:]])
        force += model.section_jacobian(data, q, load.link, load.abscissa).T @ wrench
    return force


def static_equilibrium(model, q, data=None, loads=(), gravity=True, increments=1,
                       iterations=50, tolerance=1e-10):
    """Return a copy of q whose elastic part is at rest with the joints of q held.

    ``model``: a fixed-base chain model (joints first, then nv - n_joints elastic
    coordinates); ``data``: its workspace (one is made if None); ``loads``: `Load` list;
    ``gravity``: include the model's gravity. Each increment's Newton solve ends when
    |r|_inf <= ``tolerance`` * scale (module doc); raises `StaticsError` if ``iterations``
    steps do not get there.
    """
    q = np.array(q, dtype=float)
    n, nv = model.n_joints, model.nv
    if nv == n:
        return q
    if model.nq != nv:
        raise ValueError(f'model {model.name!r}: static equilibrium needs a fixed base')
    data = model.create_data() if data is None else data
    stiffness = model.elastic_coefficients()[0][n:]
    zero = np.zeros(nv)
    loads = [Load(*load) for load in loads]

    def forces(e, factor):
        """(r, scale) at e for the load factor: the residual and its force scale."""
        q[n:] = e
        elastic = stiffness * e
        weight = (model.bias_forces(data, q, zero)[n:] - elastic) if gravity else 0.0 * e
        scaled = [load._replace(wrench=factor * np.asarray(load.wrench, dtype=float))
                  for load in loads]
        applied = generalized_load(model, data, q, scaled)[n:] if loads else 0.0 * e
        residual = elastic + factor * weight - applied
        scale = max(np.abs(elastic).max(), factor * np.abs(weight).max(),
                    np.abs(applied).max())
        return residual, scale

    e = q[n:].copy()
    for step in range(1, increments + 1):
        factor = step / increments
        e, residual = _newton(forces, e, factor, iterations, tolerance)
        if residual is not None:
            q[n:] = e
            raise StaticsError(
                f'model {model.name!r}: no static equilibrium of the elastic coordinates '
                f'with the joints held at {np.round(q[:n], 4).tolist()} at load factor '
                f'{factor:.3g} (residual {residual:.3g} after {iterations} Newton steps)')
    q[n:] = e
    return q


def _newton(forces, e, factor, iterations, tolerance):
    """Newton's method with a halving line search (module doc).

    Returns (e, None) at convergence, (e, |r|_inf) if it failed.
    """
    r, scale = forces(e, factor)
    for _ in range(iterations):
        if not np.all(np.isfinite(r)):
            break
        if np.abs(r).max() <= tolerance * scale:
            return e, None
        jacobian = np.zeros((e.size, e.size))
        for k in range(e.size):
            h = DIFFERENCE_STEP * max(1.0, abs(e[k]))
            trial = e.copy()
            trial[k] += h
            plus = forces(trial, factor)[0]
            trial[k] -= 2.0 * h
            jacobian[:, k] = (plus - forces(trial, factor)[0]) / (2.0 * h)
        try:
            step = -np.linalg.solve(jacobian, r)
        except np.linalg.LinAlgError:
            break
        norm, fraction = np.abs(r).max(), 1.0
        while fraction > 1e-3:
            trial = forces(e + fraction * step, factor)[0]
            if np.all(np.isfinite(trial)) and np.abs(trial).max() < norm:
                break
            fraction *= 0.5
        e = e + fraction * step
        r, scale = forces(e, factor)
    return e, float(np.abs(r).max()) if np.all(np.isfinite(r)) else float('inf')


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
