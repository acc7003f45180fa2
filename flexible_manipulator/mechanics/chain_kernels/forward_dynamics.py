"""Forward dynamics of the flexible chain: v' = M(q)^-1 (B u - h(q, v)).

h comes from `rnea` at zero acceleration, M from `mass_matrix`; the solve is a Cholesky
factorization (O(nv^3)).
"""

from .. import compiled
from ..chain_layout import DATA_TYPE
from ..tuple_tables import unpack
from .linalg import cholesky_factor, cholesky_substitute
from .rnea import rnea
from .mass_matrix import mass_matrix

_jit = compiled.jit


@_jit
def forward_dynamics(model_table, data_table, q, v, u):
    """Accelerations v' = M^-1 (B u - h(q, v)); writes data.acceleration.

    On the tables of the constants and the workspace (`tuple_tables`). B u puts the
    actuator efforts ``u`` on the joints (modes are not actuated). Returns False when M is
    not positive definite (the caller reports it).
    """
    data = unpack(data_table, DATA_TYPE)
    nv = v.shape[0]
    zero = data.zero_nv
    for k in range(nv):
        zero[k] = 0.0
    rnea(model_table, data_table, q, v, zero, 1.0, bool(True), bool(False))
    rhs = data.rhs
    for k in range(nv):
        rhs[k] = -data.tau[k]
    for k in range(u.shape[0]):
        rhs[k] += u[k]
    mass_matrix(model_table, data_table, q, bool(True))
    if not cholesky_factor(data.mass, data.chol, nv):
        return False
    cholesky_substitute(data.chol, rhs, data.acceleration, nv)
    return True
