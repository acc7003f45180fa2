"""Fixed-step integrators for x' = f(x, u) with u held constant, compiled with numba.

Explicit Runge-Kutta (``euler``, ``heun``, ``rk3``, ``rk4``): an s-stage scheme with
Butcher tableau (A, b, c) advances one step h by

    k_j = f(x + h sum_{l<j} A_jl k_l),    x <- x + h sum_j b_j k_j,

with a global error O(h^p) for order p; its stability limit is h |lambda| <~ 2.8 (rk4) for
the fastest mode lambda, so stiff elastic modes force small steps.

Linearly implicit ``ros2`` (Verwer, Spee, Blom & Hundsdorfer 1999), for stiff elastic
modes: with gamma = 1 + 1/sqrt(2) and W = I - gamma h J for an approximation J of df/dx,

    W k1 = f(x_n),    W k2 = f(x_n + h k1) - 2 k1,    x_n+1 = x_n + h (3 k1 + k2) / 2.

It is second order for any J (a W-method) and L-stable when J is exact, so only accuracy
limits the step. The model supplies J implicitly through two functions: ``factor(model,
data, gh)`` prepares W from the state of the last f evaluation, ``solve(model, data, gh, r,
out)`` writes W^-1 r.

The right-hand side is a compiled function ``rhs(model, data, x, u, out) -> bool`` (False
when the model cannot be evaluated, e.g. a singular mass matrix); the steppers return False
on such a failure or when the state stops being finite, leaving x partly advanced (the
caller restores its copy). They allocate nothing: stage buffers come from the caller.
"""

import math

import numba
import numpy as np

# name: (A, b, c, order)
TABLEAUS = {
    'euler': ([[]], [1.0], [0.0], 1),
    'heun': ([[], [1.0]], [0.5, 0.5], [0.0, 1.0], 2),
    'rk3': ([[], [0.5], [-1.0, 2.0]], [1.0 / 6.0, 2.0 / 3.0, 1.0 / 6.0], [0.0, 0.5, 1.0], 3),
    'rk4': ([[], [0.5], [0.0, 0.5], [0.0, 0.0, 1.0]],
            [1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0], [0.0, 0.5, 0.5, 1.0], 4),
}
IMPLICIT = {'ros2': 2}
METHODS = tuple(TABLEAUS) + tuple(IMPLICIT)
ROS2_GAMMA = 1.0 + 1.0 / math.sqrt(2.0)

_jit = numba.njit(cache=True, nogil=True, _nrt=False)
# The steppers are templates: a model's kernel module instantiates them with its own
# compiled right-hand side as a global (see chain_kernels.explicit_steps). Passing the
# right-hand side as a run-time argument instead breaks numba's on-disk cache.
_template = numba.njit(nogil=True, _nrt=False, inline='always')


def tableau_arrays(method):
    """Butcher tableau of an explicit method as arrays (A lower triangular s x s, b)."""
    a_rows, b, _, _ = TABLEAUS[method]
    stages = len(b)
    a = np.zeros((stages, stages))
    for j, row in enumerate(a_rows):
        a[j, :len(row)] = row
    return a, np.array(b, dtype=float)


@_jit
def _finite(x):
    for i in range(x.shape[0]):
        if not math.isfinite(x[i]):
            return False
    return True


@_template
def explicit_steps(rhs, model, data, x, u, h, count, a, b, stages, trial):
    """Advance x in place by ``count`` explicit Runge-Kutta steps of size h."""
    s, n = b.shape[0], x.shape[0]
    for _ in range(count):
        for j in range(s):
            for i in range(n):
                acc = x[i]
                for m in range(j):
                    acc += h * a[j, m] * stages[m, i]
                trial[i] = acc
            if not rhs(model, data, trial, u, stages[j]):
                return False
        for i in range(n):
            acc = 0.0
            for j in range(s):
                acc += b[j] * stages[j, i]
            x[i] += h * acc
    return _finite(x)


@_template
def ros2_steps(rhs, factor, solve, model, data, x, u, h, count, stages, trial):
    """Advance x in place by ``count`` steps of the linearly implicit ROS2 scheme."""
    n = x.shape[0]
    gh = ROS2_GAMMA * h
    f0, k1, k2 = stages[0], stages[1], stages[2]
    for _ in range(count):
        if not rhs(model, data, x, u, f0):
            return False
        if not factor(model, data, gh):
            return False
        solve(model, data, gh, f0, k1)
        for i in range(n):
            trial[i] = x[i] + h * k1[i]
        if not rhs(model, data, trial, u, f0):
            return False
        for i in range(n):
            f0[i] -= 2.0 * k1[i]
        solve(model, data, gh, f0, k2)
        for i in range(n):
            x[i] += h * (1.5 * k1[i] + 0.5 * k2[i])
    return _finite(x)


class Stepper:
    """A named method bound to one compiled model: ``advance(x, u, h, count) -> bool``.

    The model object must provide ``arrays`` (its constant tuple) and the compiled
    instances ``explicit_kernel(arrays, data, x, u, h, count, a, b, stages, trial)`` and
    ``ros2_kernel(arrays, data, x, u, h, count, stages, trial)`` of the templates above.
    """

    def __init__(self, model, data, method, size):
        """Allocate the stage buffers of ``method`` for a state of ``size`` entries."""
        if method not in METHODS:
            raise ValueError(f"unknown integrator '{method}'; choose one of {list(METHODS)}")
        self.method, self.model, self.data = method, model, data
        self.order = TABLEAUS[method][3] if method in TABLEAUS else IMPLICIT[method]
        if method in TABLEAUS:
            self._a, self._b = tableau_arrays(method)
            self._stages = np.zeros((self._b.size, size))
        else:
            self._stages = np.zeros((3, size))
        self._trial = np.zeros(size)

    def advance(self, x, u, h, count):
        """Advance x in place by ``count`` steps of h; False if the state became invalid."""
        m = self.model
        if self.method in TABLEAUS:
            return m.explicit_kernel(m.arrays, self.data, x, u, h, count, self._a, self._b,
                                     self._stages, self._trial)
        return m.ros2_kernel(m.arrays, self.data, x, u, h, count, self._stages, self._trial)
