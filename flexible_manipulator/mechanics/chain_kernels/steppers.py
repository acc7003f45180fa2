"""Pieces of a chain's compiled time steppers, on its constant and workspace tuples.

x = (q, v); x' = (q', M^-1 (B u - h)); the state moves on R^n (or SO(3) x R^3 for a
floating base's pose), so a stepper also needs the group's "+" (`integrate`) and the
inverse right Jacobian (`dexpinv`); the linearly implicit stepper treats the elastic forces
implicitly through `stiff_factor` and `stiff_solve`. The chain model's steppers
(``model.kernels``, ``model.articulated``) instantiate the templates of
`integrators` with these, through their ``*_on_tables`` hooks.
"""

from .. import compiled, group_kernels
from ..friction import friction_damper
from .linalg import cholesky_factor, cholesky_substitute

_inline = compiled.inline


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
    """Factor W_v = M + gh D + gh^2 K with M from the last `rhs` call (see stiff_solve).

    D holds the joints' Coulomb friction as a damper C_f too, at that call's v and v'
    (`friction_damper`).
    """
    nv = data.mass.shape[0]
    for r in range(nv):
        for c in range(nv):
            data.stiff_M[r, c] = data.mass[r, c]
            data.stiff_W[r, c] = data.mass[r, c]
        damper = model.damping[r]
        if model.friction[r] > 0.0:
            damper += friction_damper(model.friction[r], model.friction_velocity[r],
                                      data.velocity[r], data.acceleration[r], gh)
        data.stiff_W[r, r] += gh * damper + gh * gh * model.stiffness[r]
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
