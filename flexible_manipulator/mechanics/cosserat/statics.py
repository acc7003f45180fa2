"""Static equilibrium of a Cosserat chain with its joints held: large deflection, roll-up.

With the joint coordinates held, the strain coordinates q_e solve the strain rows of

    h(q, 0) = K q + g(q) = sum_l J_l(q)^T W_l(q)

(gravity g, elastic K q; end or section loads W_l as body wrenches at their sections,
J_l their body Jacobians). A load is a ``Load``: a wrench (moment, force) [N m, N] at the
section X [m] of link j, either ``follower`` (fixed in the section frame: the roll-up
moment) or fixed in the world (a dead load). Solved by MINPACK's hybrid Powell method
(``scipy.optimize.root``: a difference Jacobian, then rank-one updates) in load
increments, so that large loads follow the equilibrium branch from the straight beam.
"""

from collections import namedtuple

import numpy as np
from scipy import optimize

Load = namedtuple('Load', 'link abscissa wrench follower')
Load.__doc__ = 'A wrench (moment, force) [N m, N] at the section ``abscissa`` [m] of ``link``.'


def generalized_load(chain, q, loads):
    """sum_l J_l^T W_l (nv): the loads as generalized forces at q."""
    force = np.zeros(chain.nv)
    for load in loads:
        wrench = np.asarray(load.wrench, dtype=float)
        if not load.follower:
            R = chain.section_pose(q, load.link, load.abscissa)[:3, :3]
            wrench = np.concatenate([R.T @ wrench[:3], R.T @ wrench[3:]])
        force += chain.section_jacobian(q, load.link, load.abscissa).T @ wrench
    return force


def static_equilibrium(chain, q_start, loads=(), gravity=True, increments=4, tolerance=1e-12,
                       restarts=3):
    """Return q at equilibrium: the joints of ``q_start`` held, its strains the first guess.

    ``tolerance``: relative change of the strains between iterations at convergence
    (MINPACK's xtol); a residual of the strain rows at most 1e-9 of the elastic forces
    max|K q| also counts (relative: a soft rod's forces are small). MINPACK may stop short
    ("not making good progress": its rank-one updates have spoilt the Jacobian); it is then
    restarted from where it stopped, with a fresh difference Jacobian, up to ``restarts``
    times. Raises RuntimeError naming the load factor and the residual if neither test is
    met.
    """
    q = np.array(q_start, dtype=float)
    strains = slice(chain.n_joints, chain.nv)
    zero = np.zeros(chain.nv)
    data = chain.create_data()
    stiffness = chain.stiffness[strains, strains]

    def residual(x, factor):
        q[strains] = x
        scaled = [load._replace(wrench=factor * np.asarray(load.wrench, dtype=float))
                  for load in loads]
        full = chain.bias_forces(data, q, zero, gravity=gravity)
        return (full - generalized_load(chain, q, scaled))[strains]

    x = q[strains].copy()
    for step in range(1, increments + 1):
        factor = step / increments
        for attempt in range(restarts + 1):
            solution = optimize.root(residual, x, args=(factor,), method='hybr',
                                     options={'xtol': tolerance})
            x = solution.x
            error = np.abs(solution.fun).max()
            if solution.success or error <= 1e-9 * np.abs(stiffness @ x).max():
                break
        else:
            raise RuntimeError(f'static equilibrium: no convergence at load factor {factor:.2f}'
                               f' (residual {error:.3g}, elastic forces '
                               f'{np.abs(stiffness @ x).max():.3g}: {solution.message})')
    q[strains] = x
    return q
