"""Forward dynamics of the flexible chain: v' = M(q)^-1 (B u - h(q, v)).

h comes from `rnea` at zero acceleration, M from `mass_matrix`; the solve is a Cholesky
factorization (O(nv^3)).
"""

from .. import compiled
from .linalg import cholesky_factor, cholesky_substitute
from .rnea import rnea
from .mass_matrix import mass_matrix

_inline = compiled.inline


@_inline
def forward_dynamics(model, data, q, v, u):
    """Accelerations v' = M^-1 (B u - h(q, v)); writes data.acceleration.

    B u puts the actuator efforts ``u`` on the joints (modes are not actuated). Returns
    False when M is not positive definite (the caller reports it).
    """
    nv = v.shape[0]
    zero = data.zero_nv
    for k in range(nv):
        zero[k] = 0.0
    rnea(model, data, q, v, zero, 1.0, True)
    rhs = data.rhs
    for k in range(nv):
        rhs[k] = -data.tau[k]
    for k in range(u.shape[0]):
        rhs[k] += u[k]
    mass_matrix(model, data, q, True)
    if not cholesky_factor(data.mass, data.chol, nv):
        return False
    cholesky_substitute(data.chol, rhs, data.acceleration, nv)
    return True
