"""Fixed-step integrators for x' = f(x, u) with u held constant, compiled with numba.

Explicit Runge-Kutta (``euler``, ``heun``, ``rk3``, ``rk4``): an s-stage scheme with
Butcher tableau (A, b, c) advances one step h by

    k_j = f(x + h sum_{l<j} A_jl k_l),    x <- x + h sum_j b_j k_j,

with a global error O(h^p) for order p; its stability limit is h |lambda| <~ 2.8 (rk4) for
the fastest mode lambda, so stiff elastic modes force small steps.

Linearly implicit Rosenbrock-W methods, for stiff elastic modes. With W = I - gamma h J
for an approximation J of df/dx (the model's elastic and damping part, exact on it), an
s-stage scheme advances one step by

    W k_j = f(x_n + h sum_{l<j} a_jl k_l) + sum_{l<j} c_jl k_l,   x_n+1 = x_n + h sum_j b_j k_j,

one factorization of W per step, one f evaluation and one solve per stage. The papers give
the methods in their Gamma form, (I - gamma h J) K_j = h f(x_n + sum alpha_jl K_l)
+ h J sum_{l<j} gamma_jl K_l, x_n+1 = x_n + sum beta_j K_j; with G = (gamma_jl) (gamma on the
diagonal) the form above, which needs no product with J, is a = gamma alpha G^-1,
c = I - gamma G^-1, b = gamma beta G^-1 (Hairer & Wanner, "Solving ODEs II", IV.7,
(7.21) scaled by gamma h), computed once by `rosenbrock_tableau`:

- ``rosenbrock2``: ROS2 of Verwer, Spee, Blom & Hundsdorfer (SIAM J. Sci. Comput. 20, 1999;
  called ``ros2`` before, a name that read as ROS 2), 2 stages, gamma = 1 + 1/sqrt(2):
  W k1 = f(x_n), W k2 = f(x_n + h k1) - 2 k1, x_n+1 = x_n + h (3 k1 + k2) / 2. Second order
  for any J, L-stable when J is exact.
- ``rosenbrock3``: ROS34PW2 of Rang & Angermann (BIT Numer. Math. 45, 2005), 4 stages,
  gamma = 0.4358665215..., third order for any J (a W-method: the geometric and gravity
  terms that J leaves out cost no order), L-stable and stiffly accurate (beta_j = alpha_sj +
  gamma_sj: R(infinity) = 0, a stiff mode's transient is damped out as by implicit Euler).

The model supplies J implicitly through two functions: ``factor(model, data, gh)``
prepares W from the state of the last f evaluation, ``solve(model, data, gh, r, out)``
writes W^-1 r.

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
# name: (gamma, alpha (strictly lower, rows), Gamma's off-diagonal (strictly lower, rows),
# beta, order), in the papers' Gamma form (module doc; `rosenbrock_tableau` converts)
_ROS2_GAMMA = 1.0 + 1.0 / math.sqrt(2.0)
_ROS34PW2_GAMMA = 4.3586652150845900e-01
IMPLICIT = {
    'rosenbrock2': (_ROS2_GAMMA, [[], [1.0]], [[], [-2.0 * _ROS2_GAMMA]], [0.5, 0.5], 2),
    'rosenbrock3': (
        _ROS34PW2_GAMMA,
        [[], [8.7173304301691801e-01], [8.4457060015369423e-01, -1.1299064236484185e-01],
         [0.0, 0.0, 1.0]],
        [[], [-8.7173304301691801e-01], [-9.0338057013044082e-01, 5.4180672388095326e-02],
         [2.4212380706095346e-01, -1.2232505839045147e+00, 5.4526025533510214e-01]],
        [2.4212380706095346e-01, -1.2232505839045147e+00, 1.5452602553351020e+00,
         _ROS34PW2_GAMMA], 3),
}
METHODS = tuple(TABLEAUS) + tuple(IMPLICIT)
RENAMED = {'ros2': 'rosenbrock2'}      # old name: new name (old names go in the next release)

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


def rosenbrock_tableau(method):
    """Return (a, c, b, gamma) of a method of `IMPLICIT` in the form the stepper runs."""
    gamma, alpha_rows, gamma_rows, beta, _ = IMPLICIT[method]
    stages = len(beta)
    alpha, big_gamma = np.zeros((stages, stages)), gamma * np.eye(stages)
    for j in range(stages):
        alpha[j, :j] = alpha_rows[j]
        big_gamma[j, :j] = gamma_rows[j]
    inverse = np.linalg.inv(big_gamma)
    a = gamma * alpha @ inverse
    c = np.eye(stages) - gamma * inverse
    b = gamma * np.array(beta) @ inverse
    return np.tril(a, -1), np.tril(c, -1), b, gamma


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
def rosenbrock_steps(rhs, factor, solve, integrate, dexpinv, model, data, x, u, h, count, a, c,
                     b, gamma, stages, trial, theta):
    """Advance x in place by ``count`` steps of a Rosenbrock-W scheme (a, c, b, gamma).

    ``stages``: s + 1 rows, row 0 the right-hand side, row j + 1 the stage k_j. Every stage
    evaluates ``rhs`` at one call site (stage 0 at x, the others at the trial point): numba
    inlines the whole right-hand side at every call site, and a second site doubled the
    kernel's compile time for nothing. W is factored once per step, after the first
    evaluation (its M is that of x_n).
    """
    s, n = b.shape[0], theta.shape[0]
    gh = gamma * h
    f = stages[0]
    for _ in range(count):
        for j in range(s):
            for i in range(n):
                acc = 0.0
                for m in range(j):
                    acc += a[j, m] * stages[m + 1, i]
                theta[i] = h * acc
            if j > 0:
                integrate(model, x, theta, trial)
            at = x if j == 0 else trial
            if not rhs(model, data, at, u, f):
                return False
            if j == 0:
                if not factor(model, data, gh):
                    return False
            else:
                dexpinv(model, theta, f)
            for i in range(n):
                acc = f[i]
                for m in range(j):
                    acc += c[j, m] * stages[m + 1, i]
                f[i] = acc
            solve(model, data, gh, f, stages[j + 1])
        for i in range(n):
            acc = 0.0
            for j in range(s):
                acc += b[j] * stages[j + 1, i]
            theta[i] = h * acc
        integrate(model, x, theta, trial)
        for i in range(x.shape[0]):
            x[i] = trial[i]
    return _finite(x)


def renamed_message(field, old, new):
    """Say that ``old``, a value of ``field``, is renamed ``new``."""
    return (f'{field}: {old!r} is renamed {new!r} (the two-stage Rosenbrock method); the old '
            f'name will be refused in the next release')


class Stepper:
    """A named method bound to one compiled model: ``advance(x, u, h, count) -> bool``.

    The model object must provide ``nq``, ``nv``, ``kernel_inputs(data)`` (the kernels'
    first two arguments: its constants and the workspace ``data``, as tuples or as their
    tables) and the compiled instances ``explicit_kernel(model, data, x, u, h, count, a, b,
    stages, trial, theta)`` and ``rosenbrock_kernel(model, data, x, u, h, count, a, c, b,
    gamma, stages, trial, theta)`` of the templates above. ``x`` and ``u`` must be float64
    arrays of the model's sizes.
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
        self.order = (TABLEAUS if method in TABLEAUS else IMPLICIT)[method][-1]
        tangent = 2 * model.nv
        x, u = np.zeros(model.nq + model.nv), np.zeros(model.nu)
        self._trial, self._theta = np.zeros_like(x), np.zeros(tangent)
        if method in TABLEAUS:
            self._a, self._b = tableau_arrays(method)
            self._stages = np.zeros((self._b.size, tangent))
            self._extra = (self._a, self._b, self._stages, self._trial, self._theta)
            kernel = model.explicit_kernel
        else:
            a, c, b, gamma = rosenbrock_tableau(method)
            self._stages = np.zeros((b.size + 1, tangent))
            self._extra = (a, c, b, gamma, self._stages, self._trial, self._theta)
            kernel = model.rosenbrock_kernel
        self._inputs = model.kernel_inputs(data)
        self._kernel = compiled.entry_point(kernel, *self._inputs, x, u, 0.0, 0, *self._extra)

    def advance(self, x, u, h, count):
        """Advance x in place by ``count`` steps of h; False if the state became invalid."""
        model, data = self._inputs
        return self._kernel(model, data, x, u, float(h), int(count), *self._extra)
