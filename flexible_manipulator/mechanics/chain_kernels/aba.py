"""Articulated-body forward dynamics of the flexible chain: O(n) in links, O(m^3) per link.

Featherstone's algorithm in body twists (angular first), extended to floating-frame
flexible links by condensing each link's modal coordinates the way a joint coordinate is
condensed. Link j moves with eta_j = (V_j, q_j'), V_j the twist of its link frame and q_j
its m_j modal coordinates; its tip frame moves with V_T = T_j eta_j (`mass_matrix.tip_map`)
and accelerates with A_T = T_j eta_j' + a_T, a_T the part from the velocities alone. With
M_j its generalized mass (`mass_matrix.link_inertia`) and b_j its generalized velocity
forces plus K q + D q' on the modes (the local Newton-Euler of `rnea` with zero link and
modal accelerations), the link's equations are

    M_j eta_j' + b_j = [W_j; 0] - T_j^T F_j,

W_j the wrench the joint applies at the link frame and F_j the wrench the outboard chain
takes at the tip frame. Backward pass, tip to base, with the outboard chain already
reduced to F_j = I_T A_T + p_T:

    K = M_j + T^T I_T T,   r = b_j + T^T (I_T a_T + p_T),
    modes:  q'' = -K_qq^-1 (K_qV A + r_q)                           (Y_j = K_qq^-1 K_qV)
    link:   W_j = I_A A + p_A,  I_A = K_VV - K_Vq Y_j,  p_A = r_V - K_Vq K_qq^-1 r_q,
    joint:  U = I_A xi, D = xi^T U + armature, ubar = u - d s' - xi^T p_A - U^T c,
            s'' = (ubar - U^T X A_T,parent) / D,
    parent: I_T = X^T (I_A - U U^T / D) X,  p_T = X^T (p_A + I_A c + U ubar / D),

with xi the joint's unit twist, c = ad_V (xi s') its velocity product and X = Ad^-1 of
the joint's pose (R, p) in the parent tip frame. Forward pass, base to tip: A = X A_T +
xi s'' + c, q'' = -(Y_j A + K_qq^-1 r_q), A_T = T (A, q'') + a_T. Gravity enters as the
upward acceleration -g of the base; a free-floating base closes the backward pass with
its own body: (I_base + I_T) A_base + p_base + p_T = 0.
"""

from .. import compiled
from ..chain_layout import DATA_TYPE, MODEL_TYPE
from ..tuple_tables import unpack
from .beam_section import beam_wrench, tip_backward, tip_forward
from .kinematics import JOINT_REVOLUTE, forward_pass
from .linalg import cholesky_factor, cholesky_substitute
from .mass_matrix import add_tip_projected, link_mass
from .spatial import (add_transformed_inertia, cross, rigid_wrench, transport_twist,
                      transport_wrench)

_jit, _inline = compiled.jit, compiled.inline


@_inline
def _local_terms(model_table, data_table, model, data, j, q, v):
    """Tip map T_j, velocity tip acceleration a_T, joint velocity product c and b_j.

    Needs the twists of a `forward_pass` at (q, v). Writes data.aba_T[j], aba_aT[j],
    aba_c[j], aba_r[j] (b_j: link-frame wrench, then modal forces with K q + D q') and
    data.link_mass[j] (M_j).
    """
    count, start = model.mode_count[j], model.mode_start[j]
    link_mass(model_table, data_table, j, q)
    T = data.aba_T[j]
    for r in range(6):
        for c in range(6 + count):
            T[r, c] = data.tip_map[r, c]
    # Joint velocity product c = ad_V (xi s'): revolute (w x e s', v x e s'),
    # prismatic (0, w x e s'); w, v of the link frame (w x e is the same before or after
    # adding e s').
    axis, sd, c = model.joint_axis[j], v[j], data.aba_c[j]
    t1 = data.scratch_a
    cross(data.w[j], axis, t1)
    if model.joint_type[j] == JOINT_REVOLUTE:
        for i in range(3):
            c[i] = t1[i] * sd
        cross(data.v[j], axis, t1)
        for i in range(3):
            c[3 + i] = t1[i] * sd
    else:
        for i in range(3):
            c[i] = 0.0
            c[3 + i] = t1[i] * sd
    # Local Newton-Euler at zero link-frame and modal accelerations.
    zero = data.zero_nv
    for i in range(3):
        data.dw[j, i] = 0.0
        data.dv[j, i] = 0.0
    tip_forward(model, data, j, q, v, zero, True)
    aT = data.aba_aT[j]
    for i in range(3):
        aT[i] = data.tip_dw[j, i]
        aT[3 + i] = data.tip_dv[j, i]
    mw, fw, tau = data.outboard_m, data.outboard_f, data.tau
    t2, t3 = data.scratch_b, data.scratch_c
    for i in range(3):
        mw[i] = 0.0
        fw[i] = 0.0
    for k in range(count):
        tau[start + k] = 0.0
    cross(data.tip_w[j], data.tip_v[j], t3)
    for i in range(3):
        t3[i] += data.tip_dv[j, i]
    rigid_wrench(model.payload_mass[j], model.payload_first_moment[j],
                 model.payload_inertia[j], data.tip_w[j], data.tip_dw[j], t3, mw, fw, t1, t2)
    tip_backward(model, data, j, q, mw, fw, tau)
    cross(data.w[j], data.v[j], t3)             # gamma = dv + w x v with dv = 0
    rigid_wrench(model.mass[j], model.first_moment[j], model.inertia[j], data.w[j],
                 data.dw[j], t3, mw, fw, t1, t2)
    beam_wrench(model, data, j, q, v, zero, t3, mw, fw, tau)
    r = data.aba_r[j]
    for i in range(3):
        r[i] = mw[i]
        r[3 + i] = fw[i]
    for k in range(count):
        i = start + k
        r[6 + k] = tau[i] + model.stiffness[i] * q[i] + model.damping[i] * v[i]


@_inline
def _backward(model, data, j, u, v, has_child):
    """Reduce link j and its outboard chain to (I_T, p_T) at the parent's tip frame."""
    count = model.mode_count[j]
    size = 6 + count
    K, r, T, IT, pT = data.aba_K, data.aba_rhs, data.aba_T[j], data.aba_IT, data.aba_pT
    M = data.link_mass[j]
    for a in range(size):
        r[a] = data.aba_r[j, a]
        for b in range(size):
            K[a, b] = M[a, b]
    if has_child:
        add_tip_projected(data, j, count, T, IT, K)
        t6 = data.aba_t6
        for a in range(6):
            s = pT[a]
            for b in range(6):
                s += IT[a, b] * data.aba_aT[j, b]
            t6[a] = s
        for c in range(size):
            s = 0.0
            for a in range(6):
                s += T[a, c] * t6[a]
            r[c] += s
    IA, pA = data.aba_IA, data.aba_pA
    for a in range(6):
        pA[a] = r[a]
        for b in range(6):
            IA[a, b] = K[a, b]
    if count > 0:
        Kqq, L, Y, y = data.aba_Kqq, data.aba_L, data.aba_Y[j], data.aba_y[j]
        for a in range(count):
            for b in range(count):
                Kqq[a, b] = K[6 + a, 6 + b]
        if not cholesky_factor(Kqq, L, count):
            return False
        col, sol = data.aba_col, data.aba_sol
        for b in range(6):                       # Y = K_qq^-1 K_qV, column by column
            for a in range(count):
                col[a] = K[6 + a, b]
            cholesky_substitute(L, col, sol, count)
            for a in range(count):
                Y[a, b] = sol[a]
        for a in range(count):
            col[a] = r[6 + a]
        cholesky_substitute(L, col, sol, count)
        for a in range(count):
            y[a] = sol[a]
        for a in range(6):
            for b in range(6):
                s = 0.0
                for k in range(count):
                    s += K[a, 6 + k] * Y[k, b]
                IA[a, b] -= s
            s = 0.0
            for k in range(count):
                s += K[a, 6 + k] * y[k]
            pA[a] -= s
    # Joint condensation.
    xi, U, c = data.aba_xi, data.aba_U[j], data.aba_c[j]
    offset = 0 if model.joint_type[j] == JOINT_REVOLUTE else 3
    for a in range(6):
        xi[a] = 0.0
    for a in range(3):
        xi[offset + a] = model.joint_axis[j, a]
    D = model.armature[j]
    ubar = u[j] - model.damping[j] * v[j]
    for a in range(6):
        s = 0.0
        for b in range(6):
            s += IA[a, b] * xi[b]
        U[a] = s
        D += xi[a] * s
        ubar -= xi[a] * pA[a] + s * c[a]
    if not D > 0.0:
        return False
    data.aba_D[j] = D
    data.aba_ubar[j] = ubar
    # Articulated inertia and bias at the link frame, then at the parent's tip frame.
    Ia, pa = data.aba_Ia, data.aba_pa
    for a in range(6):
        s = 0.0
        for b in range(6):
            Ia[a, b] = IA[a, b] - U[a] * U[b] / D
            s += IA[a, b] * c[b]
        pa[a] = pA[a] + s + U[a] * ubar / D
    for a in range(6):
        for b in range(6):
            IT[a, b] = 0.0
    add_transformed_inertia(data.joint_R[j], data.joint_p[j], Ia, IT)
    transport_wrench(data.joint_R[j], data.joint_p[j], pa[:3], pa[3:], pT[:3], pT[3:],
                     data.scratch_a)
    return True


@_inline
def _base_acceleration(model, data, q, v, A):
    """Acceleration A of the base frame (body components, gravity as -g); False if singular.

    Fixed base: (0, -g). Free-floating base: (I_base + I_T) A + p_base + p_T = 0 with the
    base body's velocity-product wrench p_base.
    """
    g = model.gravity
    if not model.floating:
        for i in range(3):
            A[i] = 0.0
            A[3 + i] = -g[i]
        return True
    t1, t2, t3 = data.scratch_a, data.scratch_b, data.scratch_c
    m, f = data.outboard_m, data.outboard_f
    for i in range(3):
        m[i] = data.aba_pT[i]
        f[i] = data.aba_pT[3 + i]
    zero = data.zero3
    cross(data.base_w, data.base_v, t3)
    rigid_wrench(model.base_mass, model.base_first_moment, model.base_inertia, data.base_w,
                 zero, t3, m, f, t1, t2)
    K, L, rhs = data.aba_IA, data.aba_Lb, data.aba_t6
    for a in range(6):
        rhs[a] = -(m[a] if a < 3 else f[a - 3])
        for b in range(6):
            K[a, b] = model.base_spatial[a, b] + data.aba_IT[a, b]
    if not cholesky_factor(K, L, 6):
        return False
    cholesky_substitute(L, rhs, A, 6)
    return True


@_jit
def _local_sweep(model_table, data_table, q, v):
    """`_local_terms` of every link (after a `forward_pass` at (q, v)); on the tables."""
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    for j in range(model.joint_type.shape[0]):
        _local_terms(model_table, data_table, model, data, j, q, v)


@_jit
def _backward_sweep(model_table, data_table, u, v):
    """`_backward` from the last link to the first; False if a link is singular."""
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    n = model.joint_type.shape[0]
    for j in range(n - 1, -1, -1):
        if not _backward(model, data, j, u, v, j < n - 1):
            return False
    return True


@_jit
def articulated_forward_dynamics(model_table, data_table, q, v, u):
    """Accelerations v' = M^-1 (B u - h) by the articulated-body algorithm (module doc).

    On the tables of the constants and the workspace (`tuple_tables`). Writes
    data.acceleration; returns False when a condensed inertia is not positive definite
    (the caller reports it), as `forward_dynamics` does for M. Three compiled sweeps
    (kinematics, local terms, backward) and the forward one here.
    """
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    n = model.joint_type.shape[0]
    nv = model.stiffness.shape[0]
    zero = data.zero_nv
    for k in range(nv):
        zero[k] = 0.0
    # twists, poses; base_R and base twist
    forward_pass(model_table, data_table, q, v, zero, 0.0, bool(False))
    _local_sweep(model_table, data_table, q, v)
    if not _backward_sweep(model_table, data_table, u, v):
        return False
    A, acc = data.aba_A, data.acceleration
    if n == 0:
        for a in range(6):
            data.aba_pT[a] = 0.0
            for b in range(6):
                data.aba_IT[a, b] = 0.0
    if not _base_acceleration(model, data, q, v, A):
        return False
    if model.floating:
        b, R, g = nv - 6, data.base_R, model.gravity
        for i in range(3):
            acc[b + i] = A[i]
            acc[b + 3 + i] = A[3 + i] + (R[0, i] * g[0] + R[1, i] * g[1] + R[2, i] * g[2])
    AL, XA = data.aba_AL, data.aba_XA
    for j in range(n):
        transport_twist(data.joint_R[j], data.joint_p[j], A[:3], A[3:], XA[:3], XA[3:],
                        data.scratch_a)
        U, c = data.aba_U[j], data.aba_c[j]
        s = data.aba_ubar[j]
        for a in range(6):
            s -= U[a] * XA[a]
        sdd = s / data.aba_D[j]
        acc[j] = sdd
        offset = 0 if model.joint_type[j] == JOINT_REVOLUTE else 3
        for a in range(6):
            AL[a] = XA[a] + c[a]
        for a in range(3):
            AL[offset + a] += model.joint_axis[j, a] * sdd
        count, start = model.mode_count[j], model.mode_start[j]
        Y, y = data.aba_Y[j], data.aba_y[j]
        for k in range(count):
            s = y[k]
            for a in range(6):
                s += Y[k, a] * AL[a]
            acc[start + k] = -s
        T, aT = data.aba_T[j], data.aba_aT[j]
        for r in range(6):
            s = aT[r]
            for a in range(6):
                s += T[r, a] * AL[a]
            for k in range(count):
                s += T[r, 6 + k] * acc[start + k]
            A[r] = s
    return True
