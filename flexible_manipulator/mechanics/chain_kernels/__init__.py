"""Compiled algebra the chain model's kernels share (numba, no allocation per call).

* `spatial`: twists, wrenches, rotations, SE(3) exponential and adjoints, inertia
  transforms by 3 x 3 blocks;
* `linalg`: products, congruences, Cholesky factor and solve;
* `steppers`: the tangent rates, the group "+", and the implicit elastic solve that the
  chain model's time steppers are built from (``model.kernels``).

Everything is written with explicit loops on preallocated arrays (see `compiled`).
"""
