"""Kinematics and inertial loads of a floating-frame beam section (assumed modes).

A flexible link j carries modal coordinates q (count m_j); each mode bends the link along
its y or z axis. A section at abscissa x has the displacement

    u(x, q) = (-1/2 q^T G(x) q,  sum_{k in y} W_k(x) q_k,  sum_{k in z} W_k(x) q_k),

(G(x) = 0 when geometric stiffening is off: the linear floating-frame model) and the
section frame is Trans(x e1 + u(x, q)) Rot(e3, psi_z) Rot(e2, psi_y) with
psi_z = sum_{y} W_k'(x) q_k, psi_y = -sum_{z} W_k'(x) q_k; the tip frame is the section at
x = L. The link's mass is a set of quadrature points on the centre line (mass w_i at x_i)
plus a rigid body attached to the link frame (hub, clamp, motor) and a rigid payload
attached to the tip frame. The absolute acceleration of a beam point is

    a_i = gamma + dw x r_i + w x (w x r_i) + 2 w x u_i' + u_i'',   gamma = dv + w x v,

and its inertial load enters the link wrench as (r_i x w_i a_i, w_i a_i) and the modal
equation k as w_i (du_i/dq_k) . a_i.
"""

from .. import compiled
from .spatial import cross, rotate_step, transport_wrench

_jit, _inline = compiled.jit, compiled.inline


@_jit
def section_displacement(phi, g, plane, start, count, q, v, a, u, du, ddu, gq):
    """Displacement u, rate u' and acceleration u'' of one section, and gq = G q.

    phi: mode values W_k(x); g: foreshortening matrix G(x); plane[k]: 1 (y) or 2 (z).
    """
    u[0] = u[1] = u[2] = 0.0
    du[0] = du[1] = du[2] = 0.0
    ddu[0] = ddu[1] = ddu[2] = 0.0
    for k in range(count):
        axis = plane[k]
        u[axis] += phi[k] * q[start + k]
        du[axis] += phi[k] * v[start + k]
        ddu[axis] += phi[k] * a[start + k]
    quad = 0.0
    rate = 0.0
    accel = 0.0
    for k in range(count):
        s = 0.0
        for m in range(count):
            s += g[k, m] * q[start + m]
        gq[k] = s
        quad += s * q[start + k]
        rate += s * v[start + k]
        accel += s * a[start + k]
    # d/dt(q^T G q / 2) = q'^T G q; d2/dt2 = q''^T G q + q'^T G q'.
    vgv = 0.0
    for k in range(count):
        s = 0.0
        for m in range(count):
            s += g[k, m] * v[start + m]
        vgv += s * v[start + k]
    u[0] -= 0.5 * quad
    du[0] -= rate
    ddu[0] -= accel + vgv


@_jit
def section_position(phi, g, plane, start, count, q, u, gq):
    """Displacement u of one section and gq = G q (`section_displacement` at rest)."""
    u[0] = u[1] = u[2] = 0.0
    quad = 0.0
    for k in range(count):
        u[plane[k]] += phi[k] * q[start + k]
        s = 0.0
        for m in range(count):
            s += g[k, m] * q[start + m]
        gq[k] = s
        quad += s * q[start + k]
    u[0] -= 0.5 * quad


@_inline
def _bending_angles(model, j, slope, q, v, a, out):
    """Section rotations: out = (psi_z, psi_z', psi_z'', psi_y, psi_y', psi_y'').

    psi_z = sum over y-modes of W_k'(x) q_k; psi_y = -sum over z-modes of W_k'(x) q_k.
    """
    for i in range(6):
        out[i] = 0.0
    start = model.mode_start[j]
    for k in range(model.mode_count[j]):
        if model.mode_plane[j, k] == 1:      # bending along y: rotation about z
            out[0] += slope[k] * q[start + k]
            out[1] += slope[k] * v[start + k]
            out[2] += slope[k] * a[start + k]
        else:                                # bending along z: rotation about -y
            out[3] -= slope[k] * q[start + k]
            out[4] -= slope[k] * v[start + k]
            out[5] -= slope[k] * a[start + k]


@_inline
def section_forward(model, data, j, x, phi, slope, g, q, v, a, p, gq, angles, Rz, Ry,
                    w, vv, dw, dv, reuse=False):
    """Pose, twist and acceleration of the section frame at abscissa x of link j.

    Needs the link frame's motion in data.w/v/dw/dv[j] (from `forward_pass`). The section
    frame is Trans(x e1 + u(x, q)) Rot(e3, psi_z) Rot(e2, psi_y) in the link frame; on
    return p is its origin in the link frame, Rz and Ry its two rotations, gq = G(x) q, and
    (w, vv, dw, dv) its twist and acceleration in its own axes. ``reuse`` takes Rz and Ry
    from a previous call at the same q.
    """
    pd, pdd = data.scratch_b, data.scratch_c
    section_displacement(phi, g, model.mode_plane[j], model.mode_start[j],
                         model.mode_count[j], q, v, a, p, pd, pdd, gq)
    p[0] += x
    # Translation by p(t): w_T = w, v_T = v + w x p + p', dw_T = dw,
    # dv_T = dv + dw x p + p'' + w x p'
    cross(data.w[j], p, data.scratch_a)
    for i in range(3):
        w[i] = data.w[j, i]
        dw[i] = data.dw[j, i]
        vv[i] = data.v[j, i] + data.scratch_a[i] + pd[i]
    cross(data.dw[j], p, data.scratch_a)
    for i in range(3):
        dv[i] = data.dv[j, i] + data.scratch_a[i] + pdd[i]
    cross(data.w[j], pd, data.scratch_a)
    for i in range(3):
        dv[i] += data.scratch_a[i]
    if model.mode_count[j] == 0:        # no modes, no bending: the rotations are identity
        if not reuse:
            for r in range(3):
                for c in range(3):
                    Rz[r, c] = Ry[r, c] = 1.0 if r == c else 0.0
            for i in range(6):
                angles[i] = 0.0
        return
    _bending_angles(model, j, slope, q, v, a, angles)
    rotate_step(2, angles[0], angles[1], angles[2], w, vv, dw, dv, Rz, data.scratch_a, reuse)
    rotate_step(1, angles[3], angles[4], angles[5], w, vv, dw, dv, Ry, data.scratch_a, reuse)


@_inline
def tip_forward(model, data, j, q, v, a, reuse):
    """Pose, twist and acceleration of the tip frame of link j (the section at x = L)."""
    section_forward(model, data, j, model.length[j], model.tip_phi[j], model.tip_slope[j],
                    model.tip_g[j], q, v, a, data.tip_p[j], data.tip_gq[j], data.tip_angles[j],
                    data.tip_Rz[j], data.tip_Ry[j], data.tip_w[j], data.tip_v[j],
                    data.tip_dw[j], data.tip_dv[j], reuse)


@_inline
def tip_backward(model, data, j, q, mw, fw, tau):
    """Carry the tip wrench of link j back to its link frame; add its modal forces to tau."""
    start = model.mode_start[j]
    count = model.mode_count[j]
    t1, m2, f2 = data.scratch_a, data.carried_m, data.carried_f
    # Through Rot(e2, psi_y): generalized force e2 . m on psi_y = -sum_z W_k'(L) q_k.
    for k in range(count):
        if model.mode_plane[j, k] == 2:
            tau[start + k] -= mw[1] * model.tip_slope[j, k]
    zero = data.zero3
    transport_wrench(data.tip_Ry[j], zero, mw, fw, m2, f2, t1)
    for k in range(count):
        if model.mode_plane[j, k] == 1:
            tau[start + k] += m2[2] * model.tip_slope[j, k]
    transport_wrench(data.tip_Rz[j], zero, m2, f2, mw, fw, t1)
    # Through the translation u(L, q): generalized force (du/dq_k) . f.
    gq = data.tip_gq[j]
    for k in range(count):
        tau[start + k] += (model.tip_phi[j, k] * fw[model.mode_plane[j, k]]
                           - gq[k] * fw[0])
    cross(data.tip_p[j], fw, t1)
    for i in range(3):
        mw[i] += t1[i]


@_inline
def beam_wrench(model, data, j, q, v, a, gamma, mw, fw, tau):
    """Add the inertial loads of the beam points of link j (see the module docstring)."""
    start = model.mode_start[j]
    count = model.mode_count[j]
    w, dw = data.w[j], data.dw[j]
    r, du, ddu, acc = data.point_r, data.point_du, data.point_ddu, data.point_load
    t1, gq = data.scratch_a, data.point_gq
    for point in range(model.point_start[j], model.point_start[j + 1]):
        section_displacement(model.point_phi[point], model.point_g[point],
                             model.mode_plane[j], start, count, q, v, a, r, du, ddu, gq)
        r[0] += model.point_x[point]
        weight = model.point_mass[point]
        # a = gamma + dw x r + w x (w x r) + 2 w x u' + u''
        cross(dw, r, acc)
        for i in range(3):
            acc[i] += gamma[i] + ddu[i]
        cross(w, r, t1)
        cross(w, t1, data.scratch_b)
        for i in range(3):
            acc[i] += data.scratch_b[i]
        cross(w, du, t1)
        for i in range(3):
            acc[i] = weight * (acc[i] + 2.0 * t1[i])
            fw[i] += acc[i]
        cross(r, acc, t1)
        for i in range(3):
            mw[i] += t1[i]
        for k in range(count):
            tau[start + k] += (model.point_phi[point, k] * acc[model.mode_plane[j, k]]
                               - gq[k] * acc[0])
