"""Generalized mass matrix M(q) of the flexible chain, composite form.

M(q) = sum_j E_j^T M_j E_j with E_j the map from the generalized velocities to
eta_j = (twist of link frame j, modal rates of link j) and M_j the generalized mass of
link j (beam points, rigid body, payload seen through the tip map).
"""

from .. import compiled
from ..chain_layout import DATA_TYPE, MODEL_TYPE
from ..tuple_tables import unpack
from .spatial import add_shifted_inertia, add_transformed_inertia, compose
from .linalg import add_projected, product
from .beam_section import section_position
from .kinematics import JOINT_REVOLUTE, forward_pass

_jit, _inline = compiled.jit, compiled.inline


@_inline
def _beam_mass(model, data, j, q, M):
    """Generalized mass of the beam of link j, written into M ((6+m) square, m its modes).

    With Gamma_i = [-hat(r_i), I, S_i] the map from eta = (w, v, q') to the velocity of beam
    point i (S_i = du_i/dq, column k: s_k = W_k(x_i) e_plane(k) - (G_i q)_k e1), the beam's
    kinetic energy is 1/2 eta^T (sum_i w_i Gamma_i^T Gamma_i) eta, the paper's generalized
    mass of the floating-frame body (3.31). Its blocks, accumulated point by point:

        ww: sum w (|r|^2 I - r r^T),  wv: hat(sum w r),  wq_k: sum w r x s_k,
        vv: (sum w) I,  vq_k: sum w s_k,  qq_kl: sum w s_k . s_l.
    """
    count = model.mode_count[j]
    size = 6 + count
    start = model.mode_start[j]
    for r in range(size):
        for c in range(size):
            M[r, c] = 0.0
    r, gq, S = data.point_r, data.point_gq, data.point_dudq
    mass = 0.0
    for point in range(model.point_start[j], model.point_start[j + 1]):
        section_position(model.point_phi[point], model.point_g[point], model.mode_plane[j],
                         start, count, q, r, gq)
        r[0] += model.point_x[point]
        w = model.point_mass[point]
        mass += w
        for a_ in range(3):
            M[3 + a_, 0] += w * r[a_]            # first moment, spread below
            for b_ in range(a_, 3):
                M[a_, b_] -= w * r[a_] * r[b_]
        rr = r[0] * r[0] + r[1] * r[1] + r[2] * r[2]
        for a_ in range(3):
            M[a_, a_] += w * rr
        for k in range(count):
            S[0, k] = -gq[k]
            S[1, k] = 0.0
            S[2, k] = 0.0
            S[model.mode_plane[j, k], k] += model.point_phi[point, k]
            s0, s1, s2 = S[0, k], S[1, k], S[2, k]
            M[0, 6 + k] += w * (r[1] * s2 - r[2] * s1)
            M[1, 6 + k] += w * (r[2] * s0 - r[0] * s2)
            M[2, 6 + k] += w * (r[0] * s1 - r[1] * s0)
            M[3, 6 + k] += w * s0
            M[4, 6 + k] += w * s1
            M[5, 6 + k] += w * s2
            for m in range(k + 1):
                M[6 + m, 6 + k] += w * (S[0, m] * s0 + S[1, m] * s1 + S[2, m] * s2)
    c0, c1, c2 = M[3, 0], M[4, 0], M[5, 0]
    M[3, 0] = M[4, 0] = M[5, 0] = 0.0
    M[0, 4], M[0, 5], M[1, 3], M[1, 5], M[2, 3], M[2, 4] = -c2, c1, c2, -c0, -c1, c0
    for a_ in range(3):
        M[3 + a_, 3 + a_] = mass
    for a_ in range(size):
        for b_ in range(a_):
            M[a_, b_] = M[b_, a_]


@_inline
def tip_map(model, data, j, T):
    """T (6 x (6+m)): tip twist (tip axes) of link j from eta = (w, v, q') of its link frame.

    Link columns: Ad^-1 of the tip pose (R, p) = (Rz Ry, tip_p), i.e. (R^T w, R^T (v + w x p)).
    Mode k: rotation rate Ry^T e3 W_k'(L) (y-modes) or -e2 W_k'(L) (z-modes), and the
    translation rate R^T (W_k(L) e_plane - (G q)_k e1).
    """
    count = model.mode_count[j]
    R, p = data.scratch_R, data.tip_p[j]
    Ry = data.tip_Ry[j]
    compose(data.tip_Rz[j], data.zero3, Ry, data.zero3, R, data.scratch_a)
    for r in range(6):
        for c in range(6 + count):
            T[r, c] = 0.0
    for r in range(3):
        for c in range(3):
            T[r, c] = R[c, r]
            T[3 + r, 3 + c] = R[c, r]
        # -R^T hat(p): row r is -(R^T)_r . hat(p) = (p x R[:, r])
        T[3 + r, 0] = p[1] * R[2, r] - p[2] * R[1, r]
        T[3 + r, 1] = p[2] * R[0, r] - p[0] * R[2, r]
        T[3 + r, 2] = p[0] * R[1, r] - p[1] * R[0, r]
    gq = data.tip_gq[j]
    for k in range(count):
        plane = model.mode_plane[j, k]
        slope, phi = model.tip_slope[j, k], model.tip_phi[j, k]
        for r in range(3):
            if plane == 1:
                T[r, 6 + k] = Ry[2, r] * slope
            T[3 + r, 6 + k] = R[plane, r] * phi - R[0, r] * gq[k]
        if plane == 2:
            T[1, 6 + k] = -slope


@_inline
def add_tip_projected(data, j, count, T, IT, K):
    """K += T^T I_T T: an inertia I_T (6 x 6) at the tip of link j seen from its eta.

    T = `tip_map` of link j ((6 x (6+m)), m = ``count`` modes). Its link columns are
    Ad^-1 of the tip pose (R, data.tip_p[j]), so that block is `add_transformed_inertia`;
    the modal columns T_q go through W = I_T T_q (data.scratch_T).
    """
    if count == 0:              # no bending: the tip frame is only translated
        add_shifted_inertia(data.tip_p[j], IT, K)
        return
    R, W = data.scratch_R, data.scratch_T
    for r in range(3):
        for c in range(3):
            R[r, c] = T[c, r]
    add_transformed_inertia(R, data.tip_p[j], IT, K)
    for k in range(count):
        for r in range(6):
            s = 0.0
            for b in range(6):
                s += IT[r, b] * T[b, 6 + k]
            W[r, k] = s
        for a in range(6 + k + 1):
            s = 0.0
            for r in range(6):
                s += T[r, a] * W[r, k]
            K[a, 6 + k] += s
            if a != 6 + k:
                K[6 + k, a] += s


@_inline
def link_inertia(model, data, j, q):
    """data.link_mass[j]: generalized mass of link j in eta = (w, v, q') of its link frame.

    Beam (`_beam_mass`) + rigid body at the link frame + payload at the tip frame
    (T^T I_payload T with T = `tip_map`, already in data.tip_map).
    """
    count = model.mode_count[j]
    M = data.link_mass[j]
    if count > 0:
        _beam_mass(model, data, j, q, M)
    else:
        for r in range(6):
            for c in range(6):
                M[r, c] = 0.0
    for r in range(6):
        for c in range(6):
            M[r, c] += model.body_spatial[j, r, c]
    if model.payload_mass[j] == 0.0:
        return
    add_tip_projected(data, j, count, data.tip_map, model.payload_spatial[j], M)


@_jit
def link_mass(model_table, data_table, j, q):
    """Tip map T_j (data.tip_map) and generalized mass M_j (data.link_mass[j]) of link j.

    A compiled unit on the tables (`tuple_tables`): the mass matrix and the articulated
    body's local terms call it. Needs the joint and tip poses of a pass at q.
    """
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    tip_map(model, data, j, data.tip_map)
    link_inertia(model, data, j, q)


@_jit
def mass_matrix(model_table, data_table, q, poses_ready):
    """M(q) = sum_j E_j^T M_j E_j, the composite form of the kinetic energy.

    E_j (6+m_j rows) maps the generalized velocities to eta_j = (twist of link frame j in its
    axes, modal rates of link j) and M_j is that link's generalized mass (`link_inertia`).
    The twist rows come from the base outwards: J_j = Ad^-1(joint j) J_tip(j-1) + xi_j e_j^T,
    J_tip(j) = T_j [J_j; modes of j] (`tip_map`); a floating base contributes its body with
    J = [I 0] on its velocity. ``poses_ready``: joint and tip poses of a pass at q are in data.
    On the tables of the constants and the workspace (`tuple_tables`).

    Writes data.mass, with the armature added on the joint diagonal.
    """
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    nv = data.mass.shape[0]
    n = model.joint_type.shape[0]
    M, J, E, W = data.mass, data.link_jac, data.link_E, data.scratch_E
    zero = data.zero_nv
    if not poses_ready:
        for k in range(nv):
            zero[k] = 0.0
        forward_pass(model_table, data_table, q, zero, zero, 0.0, bool(False))
    for r in range(nv):
        for c in range(nv):
            M[r, c] = 0.0
    for r in range(6):
        for c in range(nv):
            J[r, c] = 0.0
    if model.floating:
        b = nv - 6
        for r in range(6):
            J[r, b + r] = 1.0
        add_projected(J, 6, nv, model.base_spatial, W, M)
    for j in range(n):
        # J <- Ad^-1(joint j) J + xi_j e_j^T: twist of link frame j per unit velocity.
        R, p = data.joint_R[j], data.joint_p[j]
        for c in range(nv):
            w0, w1, w2 = J[0, c], J[1, c], J[2, c]
            # (R^T w, R^T (v + w x p))
            u0 = J[3, c] + w1 * p[2] - w2 * p[1]
            u1 = J[4, c] + w2 * p[0] - w0 * p[2]
            u2 = J[5, c] + w0 * p[1] - w1 * p[0]
            for i in range(3):
                J[i, c] = R[0, i] * w0 + R[1, i] * w1 + R[2, i] * w2
                J[3 + i, c] = R[0, i] * u0 + R[1, i] * u1 + R[2, i] * u2
        axis = model.joint_axis[j]
        offset = 0 if model.joint_type[j] == JOINT_REVOLUTE else 3
        for i in range(3):
            J[offset + i, j] += axis[i]
        count, start = model.mode_count[j], model.mode_start[j]
        rows = 6 + count
        for r in range(6):
            for c in range(nv):
                E[r, c] = J[r, c]
        for k in range(count):
            for c in range(nv):
                E[6 + k, c] = 0.0
            E[6 + k, start + k] = 1.0
        link_mass(model_table, data_table, j, q)
        add_projected(E, rows, nv, data.link_mass[j], W, M)
        # J <- T_j E: twist of the tip frame, the parent of joint j+1.
        product(data.tip_map, E, 6, rows, nv, J)
    for j in range(n):
        M[j, j] += model.armature[j]
