"""Fixed-step explicit Runge-Kutta integrators for x' = f(t, x).

An s-stage scheme with Butcher tableau (A, b, c) advances one step h by

    k_j = f(t + c_j h, x + h sum_{l<j} A_jl k_l),    x <- x + h sum_j b_j k_j.

Order p means a global error O(h^p). Stage buffers are allocated once per integrator.
"""

import numpy as np

# name: (A, b, c, order)
TABLEAUS = {
    'euler': ([[]], [1.0], [0.0], 1),
    'heun': ([[], [1.0]], [0.5, 0.5], [0.0, 1.0], 2),
    'rk3': ([[], [0.5], [-1.0, 2.0]], [1.0 / 6.0, 2.0 / 3.0, 1.0 / 6.0], [0.0, 0.5, 1.0], 3),
    'rk4': ([[], [0.5], [0.0, 0.5], [0.0, 0.0, 1.0]],
            [1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0], [0.0, 0.5, 0.5, 1.0], 4),
}


class ExplicitRungeKutta:
    """Explicit Runge-Kutta stepper of a fixed tableau on vectors of a fixed size."""

    def __init__(self, method, size):
        """Prepare a stepper; ``method`` is one of `TABLEAUS`, ``size`` the state length."""
        if method not in TABLEAUS:
            raise ValueError(f"unknown integrator '{method}'; choose one of {sorted(TABLEAUS)}")
        self.method = method
        self.a, self.b, self.c, self.order = TABLEAUS[method]
        self._stages = np.zeros((len(self.b), size))
        self._trial = np.zeros(size)

    def step(self, rhs, t, x, h):
        """Advance ``x`` in place by one step ``h`` from time ``t``.

        ``rhs(t, x, out)`` writes f(t, x) into ``out``.
        """
        k, trial = self._stages, self._trial
        for j, row in enumerate(self.a):
            trial[:] = x
            for m, a_jm in enumerate(row):
                if a_jm != 0.0:
                    trial += (h * a_jm) * k[m]
            rhs(t + self.c[j] * h, trial, k[j])
        for j, b_j in enumerate(self.b):
            x += (h * b_j) * k[j]
        return x
