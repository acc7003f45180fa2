"""Fixed-step integrators for x' = f(x, u) with u held constant, compiled with numba.

Explicit Runge-Kutta (``euler``, ``heun``, ``rk3``, ``rk4``): an s-stage scheme with
Butcher tableau (A, b, c) advances one step h by

    k_j = f(x + h sum_{l<j} A_jl k_l),    x <- x + h sum_j b_j k_j,

with a global error O(h^p) for order p; its stability limit is h |lambda| <~ 2.8 (rk4) for
the fastest mode lambda, so stiff elastic modes force small steps.

Linearly implicit ``rosenbrock2`` (the two-stage Rosenbrock method ROS2 of Verwer, Spee,
Blom & Hundsdorfer 1999; called ``ros2`` before, a name that read as ROS 2), for stiff elastic
modes: with gamma = 1 + 1/sqrt(2) and W = I - gamma h J for an approximation J of df/dx,

    W k1 = f(x_n),    W k2 = f(x_n + h k1) - 2 k1,    x_n+1 = x_n + h (3 k1 + k2) / 2.

It is second order for any J (a W-method) and L-stable when J is exact, so only accuracy
limits the step. The model supplies J implicitly through two functions: ``factor(model,
data, gh)`` prepares W from the state of the last f evaluation, ``solve(model, data, gh, r,
out)`` writes W^-1 r.

States on Lie groups (Runge-Kutta-Munthe-Kaas). The state x = (q, v) holds nq coordinates
(e.g. a unit quaternion) and nv velocities; every stage works in the tangent space of
dimension 2 nv. The right-hand side is a compiled function ``rhs(model, data, x, u, out) ->
bool`` writing out = (q' as a tangent vector, v') (False when the model cannot be
evaluated, e.g. a singular mass matrix). The model also supplies the group hooks
``integrate(model, x, theta, out)``, out = x "+" theta (the exponential map on the group
part, addition elsewhere), and ``dexpinv(model, theta, k)``, which maps a stage derivative
evaluated at x "+" theta into the tangent of theta in place (J_r(theta)^-1 on a rotation
block, the identity elsewhere). With these, a stage reads

    theta_j = h sum_{l<j} A_jl k_l,   k_j = dexpinv_theta_j f(x + theta_j),
    x <- x + h sum_j b_j k_j,

which keeps the order of the tableau and stays on the group to round-off: no drift of a
quaternion's norm, no projection needed. Vector-space models use `vector_integrate` and
`vector_dexpinv`, for which the scheme is the classical one.

The steppers return False on a model failure or when the state stops being finite, leaving
x partly advanced (the caller restores its copy). They allocate nothing: stage buffers come
from the caller.
"""

import math
import warnings

import numpy as np

from . import compiled

# name: (A, b, c, order)
TABLEAUS = {
    'euler': ([[]], [1.0], [0.0], 1),
    'heun': ([[], [1.0]], [0.5, 0.5], [0.0, 1.0], 2),
    'rk3': ([[], [0.5], [-1.0, 2.0]], [1.0 / 6.0, 2.0 / 3.0, 1.0 / 6.0], [0.0, 0.5, 1.0], 3),
    'rk4': ([[], [0.5], [0.0, 0.5], [0.0, 0.0, 1.0]],
            [1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0], [0.0, 0.5, 0.5, 1.0], 4),
}
IMPLICIT = {'rosenbrock2': 2}
METHODS = tuple(TABLEAUS) + tuple(IMPLICIT)
RENAMED = {'ros2': 'rosenbrock2'}      # old name: new name (old names go in the next release)
ROSENBROCK_GAMMA = 1.0 + 1.0 / math.sqrt(2.0)

# The steppers are templates: a model's kernel module instantiates them with its own
# compiled right-hand side and group hooks as globals (see chain_kernels.steppers).
_jit, _template = compiled.jit, compiled.template


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
def vector_integrate(model, x, theta, out):
    """Vector-space states: out = x + theta (the group hook of a model with nq == nv)."""
    for i in range(x.shape[0]):
        out[i] = x[i] + theta[i]


@_template
def vector_dexpinv(model, theta, k):
    """Vector-space states: the tangent map is the identity."""


@_template
def explicit_steps(rhs, integrate, dexpinv, model, data, x, u, h, count, a, b, stages, trial,
                   theta):
    """Advance x in place by ``count`` explicit Runge-Kutta-Munthe-Kaas steps of size h."""
    s, n = b.shape[0], theta.shape[0]
    for _ in range(count):
        for j in range(s):
            for i in range(n):
                acc = 0.0
                for m in range(j):
                    acc += a[j, m] * stages[m, i]
                theta[i] = h * acc
            integrate(model, x, theta, trial)
            if not rhs(model, data, trial, u, stages[j]):
                return False
            if j > 0:
                dexpinv(model, theta, stages[j])
        for i in range(n):
            acc = 0.0
            for j in range(s):
                acc += b[j] * stages[j, i]
            theta[i] = h * acc
        integrate(model, x, theta, trial)
        for i in range(x.shape[0]):
            x[i] = trial[i]
    return _finite(x)


@_template
def rosenbrock_steps(rhs, factor, solve, integrate, dexpinv, model, data, x, u, h, count,
                     stages, trial, theta):
    """Advance x in place by ``count`` steps of the linearly implicit ROS2 scheme.

    Both stages evaluate ``rhs`` at one call site (stage 0 at x, stage 1 at the trial
    point): numba inlines the whole right-hand side at every call site, and a second site
    doubled the kernel's compile time for nothing.
    """
    n = theta.shape[0]
    gh = ROSENBROCK_GAMMA * h
    f0, k1, k2 = stages[0], stages[1], stages[2]
    for _ in range(count):
        for stage in range(2):
            at = x if stage == 0 else trial
            if not rhs(model, data, at, u, f0):
                return False
            if stage == 0:
                if not factor(model, data, gh):
                    return False
                solve(model, data, gh, f0, k1)
                for i in range(n):
                    theta[i] = h * k1[i]
            else:
                dexpinv(model, theta, f0)
                for i in range(n):
                    f0[i] -= 2.0 * k1[i]
                solve(model, data, gh, f0, k2)
                for i in range(n):
                    theta[i] = h * (1.5 * k1[i] + 0.5 * k2[i])
            integrate(model, x, theta, trial)
        for i in range(x.shape[0]):
            x[i] = trial[i]
    return _finite(x)


def renamed_message(field, old, new):
    """Say that ``old``, a value of ``field``, is now called ``new``."""
    return (f'{field}: {old!r} is renamed {new!r} (the two-stage Rosenbrock method); the old '
            f'name will be refused in the next release')


class Stepper:
    """A named method bound to one compiled model: ``advance(x, u, h, count) -> bool``.

    The model object must provide ``nq``, ``nv``, ``kernel_inputs(data)`` (the kernels'
    first two arguments: its constants and the workspace ``data``, as tuples or as their
    tables) and the compiled instances ``explicit_kernel(model, data, x, u, h, count, a, b,
    stages, trial, theta)`` and ``rosenbrock_kernel(model, data, x, u, h, count, stages,
    trial, theta)`` of the templates above. ``x`` and ``u`` must be float64 arrays of the
    model's sizes.
    """

    def __init__(self, model, data, method):
        """Allocate the stage buffers of ``method`` and bind its compiled kernel."""
        if method in RENAMED:
            warnings.warn(renamed_message('integrator', method, RENAMED[method]), FutureWarning,
                          stacklevel=3)
            method = RENAMED[method]
        if method not in METHODS:
            raise ValueError(f"unknown integrator '{method}'; choose one of {list(METHODS)}")
        self.method, self.model, self.data = method, model, data
        self.order = TABLEAUS[method][3] if method in TABLEAUS else IMPLICIT[method]
        tangent = 2 * model.nv
        x, u = np.zeros(model.nq + model.nv), np.zeros(model.nu)
        self._trial, self._theta = np.zeros_like(x), np.zeros(tangent)
        if method in TABLEAUS:
            self._a, self._b = tableau_arrays(method)
            self._stages = np.zeros((self._b.size, tangent))
            self._extra = (self._a, self._b, self._stages, self._trial, self._theta)
            kernel = model.explicit_kernel
        else:
            self._stages = np.zeros((3, tangent))
            self._extra = (self._stages, self._trial, self._theta)
            kernel = model.rosenbrock_kernel
        self._inputs = model.kernel_inputs(data)
        self._kernel = compiled.entry_point(kernel, *self._inputs, x, u, 0.0, 0, *self._extra)

    def advance(self, x, u, h, count):
        """Advance x in place by ``count`` steps of h; False if the state became invalid."""
        model, data = self._inputs
        return self._kernel(model, data, x, u, float(h), int(count), *self._extra)
