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


def static_equilibrium(chain, q_start, loads=(), gravity=True, increments=4, tolerance=1e-12):
    """Return q at equilibrium: the joints of ``q_start`` held, its strains the first guess.

    ``tolerance``: relative change of the strains between iterations at convergence
    (MINPACK's xtol); a residual below 1e-9 of the elastic forces also counts. Raises
    RuntimeError naming the load factor and the residual if neither is reached.
    """
    q = np.array(q_start, dtype=float)
    strains = slice(chain.n_joints, chain.nv)
    zero = np.zeros(chain.nv)
    data = chain.create_data()

    def residual(x, factor):
        q[strains] = x
        scaled = [load._replace(wrench=factor * np.asarray(load.wrench, dtype=float))
                  for load in loads]
        full = chain.bias_forces(data, q, zero, gravity=gravity)
        return (full - generalized_load(chain, q, scaled))[strains]

    x = q[strains].copy()
    for step in range(1, increments + 1):
        factor = step / increments
        solution = optimize.root(residual, x, args=(factor,), method='hybr',
                                 options={'xtol': tolerance})
        # MINPACK stops "without progress" when the residual is already at round-off.
        balance = 1.0 + np.abs(chain.stiffness[strains, strains] @ solution.x).max()
        if not (solution.success or np.abs(solution.fun).max() <= 1e-9 * balance):
            raise RuntimeError(f'static equilibrium: no convergence at load factor {factor:.2f}'
                               f' (residual {np.abs(solution.fun).max():.3g}: '
                               f'{solution.message})')
        x = solution.x
    q[strains] = x
    return q
