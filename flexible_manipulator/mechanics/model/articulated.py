"""Articulated-body forward dynamics of a Cosserat chain: O(n) in links (numba).

Each link j is one articulated unit hanging from its handle H_j, the parent's tip frame
(the base frame for the first link), with k_j local coordinates (its joint's, then its
strains or modes; ``Workspace.aba_cols``). Pass 1 walks every link alone (`kernels._link`
from H_j with the pose the identity, J and alpha zero and eta the absolute twist), and
adds each body b (pose g_b relative to H_j, X_b = Ad_{g_b^-1}, local Jacobian J_b, bias
c_b, inertia I_b, gyroscopic wrench f_b = I_b c_b - ad*_{eta_b} I_b eta_b) to

    M_HH = sum X_b^T I_b X_b,  M_Hl = sum X_b^T I_b J_b,  M_ll = sum J_b^T I_b J_b,
    p_H = sum X_b^T f_b,       p_l = sum J_b^T f_b,

the link's equations  M_ll q_l'' + M_Hl^T a_H + p_l = tau_l  and its wrench at H_j,
f_H = M_HH a_H + M_Hl q_l'' + p_H (a_H: the handle's acceleration, gravity an upward
base acceleration). Pass 2, from the tip inwards, adds the child's articulated inertia
I^A and bias p^A as a body at the tip frame T_j (X_T, J_T, c_T from pass 1; its wrench
I^A c_T + p^A), then condenses the local coordinates, D = M_ll + armature,
u = tau_l - p_l (tau_l: the joint's effort less its friction, -K q - D v of the strains),

    I^A_H = M_HH - M_Hl D^-1 M_Hl^T,    p^A_H = p_H + M_Hl D^-1 u.

Pass 3, outwards: q_l'' = D^-1 (u - M_Hl^T a_H), a_T = X_T a_H + J_T q_l'' + c_T. A
free-floating base closes the recursion: (I_0 + I^A) a_0 + f_0 + p^A = 0, its twist
rate a_0 + (0, R^T g). Cost: sum over bodies of O(k_j^2), and O(k_j^3) per link.
"""

import numpy as np

from .. import compiled, group_kernels, integrators
from ..chain_kernels.linalg import cholesky_factor, cholesky_substitute
from ..chain_kernels.steppers import tangent_rates
from ..friction import smooth_sign
from ..chain_kernels.spatial import adinv_apply, coad_apply
from ..tuple_tables import unpack
from .bodies import add_to_link, ARTICULATED
from .kernels import _link, at_handle, at_tip, dexpinv_on_tables, integrate_on_tables
from .layout import DATA_TYPE, MODEL_TYPE

_jit, _inline = compiled.jit, compiled.inline


@_jit        # not inlined: called by the entry and the explicit steppers
def forward_dynamics(model_table, data_table, q, v, u):
    """Write v' into data.acceleration (module doc); False if a link's D is not SPD."""
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    nv = model.stiffness.shape[0]
    n = model.joint_motion.shape[0]
    J = data.J
    for r in range(6):
        for c in range(nv):
            J[r, c] = 0.0
        data.eta[r] = 0.0
    if model.floating:
        b = nv - 6
        for i in range(6):
            data.eta[i] = v[b + i]
    count = 0
    for j in range(n):           # pass 1: each link from its handle, alone
        at_handle(data, j, count)
        for i in range(6):
            data.alpha[i] = 0.0
            for c in range(6):
                data.aba_HH[j, i, c] = 0.0
        for a in range(data.aba_pl.shape[1]):
            for i in range(6):
                data.aba_Hl[j, i, a] = 0.0
            for c in range(data.aba_pl.shape[1]):
                data.aba_ll[j, a, c] = 0.0
        # n - n: an int64 zero; a literal 0 would compile a second `_link` (kernels module)
        count = _link(model_table, data_table, j, q, v, n - n, np.int64(ARTICULATED))
        at_tip(data, j, count)
        for i in range(6):
            data.aba_Tc[j, i] = data.alpha[i]
    for j in range(n - 1, -1, -1):          # pass 2: condense each link, tip inwards
        k = data.aba_count[j]
        if j < n - 1:
            _add_child(data_table, j, k)
        if not _condense(model_table, data_table, j, k, q, v, u):
            return False
    a = data.aba_a
    if model.floating:
        if not _floating_base(model_table, data_table, q, v):
            return False
    else:
        for i in range(3):
            a[i] = 0.0
            a[3 + i] = -(model.base_R[0, i] * model.gravity[0]
                         + model.base_R[1, i] * model.gravity[1]
                         + model.base_R[2, i] * model.gravity[2])
    for j in range(n):                      # pass 3: accelerations, outwards
        _accelerate(data_table, j, data.aba_count[j])
    return True


@_jit
def _add_child(data_table, j, k):
    """Add the child's articulated inertia and bias, a body at link j's tip frame."""
    data = unpack(data_table, DATA_TYPE)
    for r in range(6):
        acc = data.aba_pA[r]
        for i in range(6):
            acc += data.aba_IA[r, i] * data.aba_Tc[j, i]
        data.aba_f[r] = acc                        # I^A c_T + p^A
    add_to_link(data.aba_IA, np.int64(6), data.aba_TR[j], data.aba_Tp[j], data.aba_TJ[j], k,
                data.aba_f, data_table, j)


@_jit
def _condense(model_table, data_table, j, k, q, v, u):
    """Condense link j's local coordinates into I^A, p^A at its handle; False if D is not SPD.

    Keeps D^-1 u (aba_y) and D^-1 M_Hl^T (aba_W) for pass 3.
    """
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    ll, Hl, L = data.aba_ll[j], data.aba_Hl[j], data.aba_L[j]
    rhs, sol = data.aba_rhs, data.aba_sol
    for a in range(k):
        c = data.aba_cols[j, a]
        if c == model.joint_index[j]:
            ll[a, a] += model.armature[j]
        effort = u[c] if c < u.shape[0] else 0.0
        rhs[a] = effort - model.stiffness[c] * q[c] - model.damping[c] * v[c] \
            - model.friction[c] * smooth_sign(v[c], model.friction_velocity[c]) \
            - data.aba_pl[j, a]
    if not cholesky_factor(ll, L, k):
        return False
    cholesky_substitute(L, rhs, sol, k)
    for a in range(k):
        data.aba_y[j, a] = sol[a]
    for r in range(6):
        for a in range(k):
            rhs[a] = Hl[r, a]
        cholesky_substitute(L, rhs, sol, k)
        for a in range(k):
            data.aba_W[j, a, r] = sol[a]
    for r in range(6):
        acc = data.aba_pH[j, r]
        for a in range(k):
            acc += Hl[r, a] * data.aba_y[j, a]
        data.aba_pA[r] = acc
        for c in range(6):
            acc = data.aba_HH[j, r, c]
            for a in range(k):
                acc -= Hl[r, a] * data.aba_W[j, a, c]
            data.aba_IA[r, c] = acc
    return True


@_jit
def _floating_base(model_table, data_table, q, v):
    """Solve the free base: (I_0 + I^A) a_0 = -(f_0 + p^A); its twist rate a_0 + (0, R^T g)."""
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    nv = model.stiffness.shape[0]
    b = nv - 6
    IA, pA, a = data.aba_IA, data.aba_pA, data.aba_a
    group_kernels.quat_to_matrix(q[b + 3:b + 7], data.base_R)
    for r in range(6):
        acc = 0.0
        for i in range(6):
            IA[r, i] += model.base_inertia[r, i]
            acc += model.base_inertia[r, i] * v[b + i]
        data.t2[r] = acc
    coad_apply(v[b:], data.t2, data.t3)
    for r in range(6):
        data.aba_f[r] = data.t3[r] - pA[r]        # -(f_0 + p^A), f_0 = -ad* I eta
    if not cholesky_factor(IA, data.aba_L6, 6):
        return False
    cholesky_substitute(data.aba_L6, data.aba_f, a, 6)
    for i in range(6):
        data.acceleration[b + i] = a[i]
    for i in range(3):
        data.acceleration[b + 3 + i] += (data.base_R[0, i] * model.gravity[0]
                                         + data.base_R[1, i] * model.gravity[1]
                                         + data.base_R[2, i] * model.gravity[2])
    return True


@_jit
def _accelerate(data_table, j, k):
    """Pass 3 on link j: q_l'' = D^-1 u - D^-1 M_Hl^T a_H; a <- X_T a + J_T q_l'' + c_T."""
    data = unpack(data_table, DATA_TYPE)
    a = data.aba_a
    for r in range(k):
        acc = data.aba_y[j, r]
        for c in range(6):
            acc -= data.aba_W[j, r, c] * a[c]
        data.aba_sol[r] = acc
        data.acceleration[data.aba_cols[j, r]] = acc
    adinv_apply(data.aba_TR[j], data.aba_Tp[j], a, a, data.carry)
    for i in range(6):
        acc = data.aba_Tc[j, i]
        for r in range(k):
            acc += data.aba_TJ[j, i, r] * data.aba_sol[r]
        a[i] += acc


@_jit
def forward_dynamics_entry(model_table, data_table, q, v, u):
    """`forward_dynamics` from Python, on the tables of the model and its workspace."""
    return forward_dynamics(model_table, data_table, q, v, u)


@_inline
def rhs(model_table, data_table, x, u, out):
    """Write (q', v') into out for x = (q, v) by the recursion; False if a D is singular."""
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    nv = model.stiffness.shape[0]
    nq = x.shape[0] - nv
    ok = forward_dynamics(model_table, data_table, x[:nq], x[nq:], u)
    tangent_rates(model, data, x, out)
    return ok


@_jit
def explicit_steps(model_table, data_table, x, u, h, count, a, b, stages, trial, theta):
    """`integrators.explicit_steps` on the Cosserat chain, v' by the recursion (O(n)).

    On the tables of the chain's arrays.
    """
    return integrators.explicit_steps(rhs, integrate_on_tables, dexpinv_on_tables,
                                      model_table, data_table, x, u, h, count, a, b, stages,
                                      trial, theta)
