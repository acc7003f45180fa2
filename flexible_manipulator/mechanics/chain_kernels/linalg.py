"""Dense linear algebra on preallocated arrays: products, congruences, Cholesky.

Small (nv <= a few tens) and written out so that the kernels that call them compile into
one function with numba and allocate nothing per call.
"""

import math

from .. import compiled

_jit = compiled.jit


@_jit
def cholesky_factor(M, L, n):
    """Lower-triangular L with L L^T = M on the leading n x n block; False if not SPD."""
    for c in range(n):
        s = M[c, c]
        for k in range(c):
            s -= L[c, k] * L[c, k]
        if not s > 0.0:
            return False
        L[c, c] = math.sqrt(s)
        for r in range(c + 1, n):
            s = M[r, c]
            for k in range(c):
                s -= L[r, k] * L[c, k]
            L[r, c] = s / L[c, c]
    return True


@_jit
def cholesky_substitute(L, b, out, n):
    """Solve L L^T x = b on the leading n entries by forward and back substitution."""
    for r in range(n):
        s = b[r]
        for k in range(r):
            s -= L[r, k] * out[k]
        out[r] = s / L[r, r]
    for r in range(n - 1, -1, -1):
        s = out[r]
        for k in range(r + 1, n):
            s -= L[k, r] * out[k]
        out[r] = s / L[r, r]
