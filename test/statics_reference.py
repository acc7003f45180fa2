"""An independent solve of a chain's rest, for the tests: MINPACK's hybrid method.

The elastic rows of h(q, 0) = 0 (gravity and elastic forces, joints held) solved by
``scipy.optimize.root(method='hybr')`` (a difference Jacobian, then rank-one updates;
restarted with a fresh Jacobian where it stops short), a different method from the
package's Newton solver (`mechanics.equilibrium.static_equilibrium`) that the tests check
against it. Test-only: nothing at run time uses it.
"""

import numpy as np
from scipy import optimize


def minpack_rest(model, q, restarts=3):
    """Return q with its elastic part at rest under gravity, its joints held."""
    q = np.array(q, dtype=float)
    n, zero, data = model.n_joints, np.zeros(model.nv), model.create_data()

    def residual(e):
        q[n:] = e
        return model.bias_forces(data, q, zero)[n:].copy()

    e = q[n:].copy()
    for _ in range(restarts + 1):
        solution = optimize.root(residual, e, method='hybr', options={'xtol': 1e-13})
        e = solution.x
        if solution.success:
            break
    q[n:] = e
    return q
