"""The chain's first-order equations x' = f(x, u) and its compiled time steppers.

x = (q, v); f = (q', M^-1 (B u - h)); the state moves on R^n (or SO(3) x R^3 for a floating
base's pose), so a stepper also needs the group's "+" and the inverse right Jacobian. The
steppers themselves are the templates of `integrators`, instantiated here with the chain's
functions; ``rosenbrock_steps`` treats the elastic forces implicitly through `stiff_factor` and
`stiff_solve`.

The steppers are compiled units on the tables of the model's constants and workspace
(`tuple_tables`) and call the forward dynamics as a compiled unit: its code is compiled
once, not again inside each stepper. The helpers on the tuples (`tangent_rates`,
`integrate`, `dexpinv`, `stiff_factor`, `stiff_solve`) also serve the Cosserat chain's
steppers; the ``*_on_tables`` hooks hand them the tuples rebuilt from the tables.
"""

from .. import compiled, group_kernels, integrators
from ..chain_layout import DATA_TYPE, MODEL_TYPE
from ..tuple_tables import unpack
from .linalg import cholesky_factor, cholesky_substitute
from .aba import articulated_forward_dynamics
from .forward_dynamics import forward_dynamics

_jit, _inline = compiled.jit, compiled.inline


@_inline
def tangent_rates(model, data, x, out):
    """Write out = (q', v') with v' = data.acceleration (module doc of `rhs`)."""
    nv = model.stiffness.shape[0]
    nq = x.shape[0] - nv
    v = x[nq:]
    for i in range(nv):
        out[i] = v[i]
        out[nv + i] = data.acceleration[i]
    if model.floating:
        b, R = nv - 6, data.base_R
        for i in range(3):
            out[b + 3 + i] = R[i, 0] * v[b + 3] + R[i, 1] * v[b + 4] + R[i, 2] * v[b + 5]


@_inline
def rhs(model_table, data_table, x, u, out):
    """Tangent state derivative out = (q', M^-1 (B u - h)) of x = (q, v); False if M singular.

    q' is v, except for a floating base: its rotation rate is the body angular velocity w
    and its position rate the world velocity R v_body (see `integrate`). The composite
    mass matrix and a Cholesky solve (`forward_dynamics`); the implicit stepper reuses M.
    """
    model = unpack(model_table, MODEL_TYPE)
    nq = x.shape[0] - model.stiffness.shape[0]
    ok = forward_dynamics(model_table, data_table, x[:nq], x[nq:], u)
    tangent_rates(model, unpack(data_table, DATA_TYPE), x, out)
    return ok


@_inline
def rhs_articulated(model_table, data_table, x, u, out):
    """`rhs` by the articulated-body algorithm (`aba`): O(n) in links, no mass matrix."""
    model = unpack(model_table, MODEL_TYPE)
    nq = x.shape[0] - model.stiffness.shape[0]
    ok = articulated_forward_dynamics(model_table, data_table, x[:nq], x[nq:], u)
    tangent_rates(model, unpack(data_table, DATA_TYPE), x, out)
    return ok


@_inline
def integrate(model, x, theta, out):
    """Write x "+" theta into out (theta: 2 nv tangent entries, ordered as `rhs` writes).

    Chain coordinates and all velocities add; a floating base moves on SO(3) x R^3: its
    position adds the world increment, its quaternion becomes q exp(theta_w).
    """
    nv = model.stiffness.shape[0]
    nq = x.shape[0] - nv
    if model.floating:
        b = nv - 6
        for i in range(b):
            out[i] = x[i] + theta[i]
        for i in range(3):
            out[b + i] = x[b + i] + theta[b + 3 + i]
        group_kernels.quat_exp_multiply(x[b + 3:b + 7], theta[b:b + 3], out[b + 3:b + 7])
    else:
        for i in range(nq):
            out[i] = x[i] + theta[i]
    for i in range(nv):
        out[nq + i] = x[nq + i] + theta[nv + i]


@_inline
def dexpinv(model, theta, k):
    """Map a stage derivative into the tangent at theta: J_r^-1 on a floating base's rotation."""
    if model.floating:
        b = model.stiffness.shape[0] - 6
        group_kernels.so3_dexpinv(theta[b:b + 3], k[b:b + 3])


@_inline
def stiff_factor(model, data, gh):
    """Factor W_v = M + gh D + gh^2 K with M from the last `rhs` call (see stiff_solve)."""
    nv = data.mass.shape[0]
    for r in range(nv):
        for c in range(nv):
            data.stiff_M[r, c] = data.mass[r, c]
            data.stiff_W[r, c] = data.mass[r, c]
        data.stiff_W[r, r] += gh * model.damping[r] + gh * gh * model.stiffness[r]
    return cholesky_factor(data.stiff_W, data.stiff_chol, nv)


@_inline
def stiff_solve(model, data, gh, r, out):
    """Write (I - gh J)^-1 r into out; J = [[0, I], [-M^-1 K, -M^-1 D]] (elastic df/dx).

    Block elimination: (M + gh D + gh^2 K) k_v = M r_v - gh K r_q,  k_q = r_q + gh k_v.
    """
    nv = data.stiff_M.shape[0]
    for i in range(nv):
        acc = 0.0
        for c in range(nv):
            acc += data.stiff_M[i, c] * r[nv + c]
        data.stiff_rhs[i] = acc - gh * model.stiffness[i] * r[i]
    cholesky_substitute(data.stiff_chol, data.stiff_rhs, data.stiff_sol, nv)
    for i in range(nv):
        out[nv + i] = data.stiff_sol[i]
        out[i] = r[i] + gh * data.stiff_sol[i]


@_inline
def integrate_on_tables(model_table, x, theta, out):
    """`integrate` on the model's table."""
    integrate(unpack(model_table, MODEL_TYPE), x, theta, out)


@_inline
def dexpinv_on_tables(model_table, theta, k):
    """`dexpinv` on the model's table."""
    dexpinv(unpack(model_table, MODEL_TYPE), theta, k)


@_inline
def stiff_factor_on_tables(model_table, data_table, gh):
    """`stiff_factor` on the tables."""
    return stiff_factor(unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE), gh)


@_inline
def stiff_solve_on_tables(model_table, data_table, gh, r, out):
    """`stiff_solve` on the tables."""
    stiff_solve(unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE), gh, r, out)


@_jit
def explicit_steps(model_table, data_table, x, u, h, count, a, b, stages, trial, theta):
    """`integrators.explicit_steps` on the chain's equations of motion (on the tables)."""
    return integrators.explicit_steps(rhs, integrate_on_tables, dexpinv_on_tables,
                                      model_table, data_table, x, u, h, count, a, b, stages,
                                      trial, theta)


@_jit
def explicit_steps_articulated(model_table, data_table, x, u, h, count, a, b, stages, trial,
                               theta):
    """`integrators.explicit_steps` on the chain's equations by `rhs_articulated`."""
    return integrators.explicit_steps(rhs_articulated, integrate_on_tables, dexpinv_on_tables,
                                      model_table, data_table, x, u, h, count, a, b, stages,
                                      trial, theta)


@_jit
def rosenbrock_steps(model_table, data_table, x, u, h, count, stages, trial, theta):
    """`integrators.rosenbrock_steps` on the chain's equations, elastic part implicit."""
    return integrators.rosenbrock_steps(rhs, stiff_factor_on_tables, stiff_solve_on_tables,
                                        integrate_on_tables, dexpinv_on_tables, model_table,
                                        data_table, x, u, h, count, stages, trial, theta)
