"""Compiled kernels of the serial chain: recursive Newton-Euler with floating-frame links.

Conventions (Boyer & Primault): twists and wrenches are angular first, in body (link frame)
components. A twist (w, v) is the angular velocity [rad/s] and the velocity of the frame
origin [m/s]; an acceleration (dw, dv) is the time derivative of those body components;
a wrench (m, f) is a moment about the frame origin [N m] and a force [N].

Elementary motion of a child frame c relative to its parent P, with pose (R, p) of c in P
and unit twist xi of coordinate s (revolute: xi = (e, 0); prismatic: xi = (0, e)):

    V_c  = Ad^-1_(R,p) V_P + xi s',
    A_c  = Ad^-1_(R,p) A_P + xi s'' + ad_(V_c) (xi s'),
    Ad^-1_(R,p) (w, v) = (R^T w, R^T (v + w x p)),   ad_(w,v)(a, b) = (w x a, w x b + v x a),

and a wrench goes back from c to P as (m_P, f_P) = (R m + p x R f, R f).

A flexible link j carries modal coordinates q (count m_j); each mode bends the link along
its y or z axis. A section at abscissa x has the displacement

    u(x, q) = (-1/2 q^T G(x) q,  sum_{k in y} W_k(x) q_k,  sum_{k in z} W_k(x) q_k),

(G(x) = 0 when geometric stiffening is off: the linear floating-frame model) and the tip
frame is Trans(L e1 + u(L, q)) Rot(e3, psi_z) Rot(e2, psi_y) with psi_z = sum_{y} W_k'(L) q_k,
psi_y = -sum_{z} W_k'(L) q_k. The link's mass is a set of quadrature points on the centre
line (mass w_i at x_i) plus a rigid body attached to the link frame (hub, clamp, motor) and
a rigid payload attached to the tip frame. The absolute acceleration of a beam point is

    a_i = gamma + dw x r_i + w x (w x r_i) + 2 w x u_i' + u_i'',   gamma = dv + w x v,

and its inertial load enters the link wrench as (r_i x w_i a_i, w_i a_i) and the modal
equation k as w_i (du_i/dq_k) . a_i. The modal equation adds K_k q_k + D_k q_k'.

Everything is written with explicit loops on preallocated arrays so that the kernels
compile with numba and allocate nothing per call.
"""

import math

from . import compiled, group_kernels, integrators

JOINT_REVOLUTE = 0
JOINT_PRISMATIC = 1

compiled.drop_stale_cache(__file__, 'compiled.py', 'group_kernels.py', 'integrators.py')
_jit, _inline = compiled.jit, compiled.inline      # see `compiled`


@_jit
def _cross(a, b, out):
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@_jit
def _axis_rotation(axis, angle, out):
    """Rodrigues: R = I + sin(angle) [e]x + (1 - cos(angle)) [e]x^2 for a unit axis e."""
    c, s = math.cos(angle), math.sin(angle)
    t = 1.0 - c
    x, y, z = axis[0], axis[1], axis[2]
    out[0, 0] = c + t * x * x
    out[0, 1] = t * x * y - s * z
    out[0, 2] = t * x * z + s * y
    out[1, 0] = t * x * y + s * z
    out[1, 1] = c + t * y * y
    out[1, 2] = t * y * z - s * x
    out[2, 0] = t * x * z - s * y
    out[2, 1] = t * y * z + s * x
    out[2, 2] = c + t * z * z


@_jit
def _transport_twist(R, p, w, v, w_out, v_out, tmp):
    """(w_out, v_out) = Ad^-1_(R,p) (w, v) = (R^T w, R^T (v + w x p))."""
    _cross(w, p, tmp)
    for i in range(3):
        w_out[i] = R[0, i] * w[0] + R[1, i] * w[1] + R[2, i] * w[2]
        v_out[i] = (R[0, i] * (v[0] + tmp[0]) + R[1, i] * (v[1] + tmp[1])
                    + R[2, i] * (v[2] + tmp[2]))


@_jit
def _transport_wrench(R, p, m, f, m_out, f_out, tmp):
    """(m_out, f_out) = (R m + p x R f, R f): a child-frame wrench in the parent frame."""
    for i in range(3):
        f_out[i] = R[i, 0] * f[0] + R[i, 1] * f[1] + R[i, 2] * f[2]
    _cross(p, f_out, tmp)
    for i in range(3):
        m_out[i] = R[i, 0] * m[0] + R[i, 1] * m[1] + R[i, 2] * m[2] + tmp[i]


@_jit
def _rigid_wrench(mass, first_moment, inertia, w, dw, gamma, m_out, f_out, t1, t2):
    """Inertial wrench about the frame origin of a rigid body, added to (m_out, f_out).

    f = m gamma + dw x (m c) + w x (w x (m c)),   m = I_O dw + w x (I_O w) + (m c) x gamma,
    with m c the first moment and I_O the inertia tensor about the frame origin.
    """
    if mass == 0.0:
        return
    _cross(dw, first_moment, t1)
    _cross(w, first_moment, t2)
    for i in range(3):
        f_out[i] += mass * gamma[i] + t1[i]
    _cross(w, t2, t1)
    for i in range(3):
        f_out[i] += t1[i]
    for i in range(3):
        t2[i] = inertia[i, 0] * w[0] + inertia[i, 1] * w[1] + inertia[i, 2] * w[2]
    _cross(w, t2, t1)
    _cross(first_moment, gamma, t2)
    for i in range(3):
        m_out[i] += (inertia[i, 0] * dw[0] + inertia[i, 1] * dw[1] + inertia[i, 2] * dw[2]
                     + t1[i] + t2[i])


@_jit
def _section_displacement(phi, g, plane, start, count, q, v, a, u, du, ddu, gq):
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


@_inline
def _base_motion(model, data, q, v, a, gravity_scale, orientation_ready):
    """Twist and acceleration of the base frame (data.base_*), gravity included.

    A fixed base is at rest with dv = -g. A floating base (coordinates after the chain's:
    position p [m] in the world and unit quaternion, then its body twist (w, v) and the
    derivatives of those body components) has dv = v' - R^T g, R its orientation.
    """
    g, R = model.gravity, data.base_R
    if model.floating:
        b = model.stiffness.shape[0] - 6
        if not orientation_ready:
            group_kernels.quat_to_matrix(q[b + 3:b + 7], R)
        for i in range(3):
            data.base_w[i] = v[b + i]
            data.base_v[i] = v[b + 3 + i]
            data.base_dw[i] = a[b + i]
            data.base_dv[i] = a[b + 3 + i] - gravity_scale * (R[0, i] * g[0] + R[1, i] * g[1]
                                                              + R[2, i] * g[2])
    else:
        for i in range(3):
            data.base_w[i] = 0.0
            data.base_v[i] = 0.0
            data.base_dw[i] = 0.0
            data.base_dv[i] = -gravity_scale * g[i]


@_jit
def _section_position(phi, g, plane, start, count, q, u, gq):
    """Displacement u of one section and gq = G q (`_section_displacement` at rest)."""
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
def forward_pass(model, data, q, v, a, gravity_scale, joint_poses_ready=False):
    """Twists and accelerations of every link frame and tip frame (base to tip).

    Writes data.w, v, dw, dv (link frames) and data.tip_* (tip frames), body components;
    gravity enters as an upward acceleration ``-gravity_scale g`` of the base.
    ``joint_poses_ready`` reuses the joint and tip rotations of a previous pass at the same q.
    """
    n = model.joint_type.shape[0]
    w = data.w
    vv = data.v
    dw = data.dw
    dv = data.dv
    t1, t2 = data.t1, data.t2
    # Base frame: fixed, or the floating base's twist; gravity enters as an upward
    # acceleration of the base (body components).
    pw, pv, pdw, pdv = data.pw, data.pv, data.pdw, data.pdv
    _base_motion(model, data, q, v, a, gravity_scale, joint_poses_ready)
    for i in range(3):
        pw[i] = data.base_w[i]
        pv[i] = data.base_v[i]
        pdw[i] = data.base_dw[i]
        pdv[i] = data.base_dv[i]
    for j in range(n):
        # -- joint j: fixed origin, then the joint motion ------------------------------
        R = data.joint_R[j]
        p = data.joint_p[j]
        axis = model.joint_axis[j]
        if joint_poses_ready:
            pass
        elif model.joint_type[j] == JOINT_REVOLUTE:
            # R = R0 Rot(axis, q_j), p = p0
            _axis_rotation(axis, q[j], data.rot)
            for r in range(3):
                for c in range(3):
                    R[r, c] = (model.joint_R0[j, r, 0] * data.rot[0, c]
                               + model.joint_R0[j, r, 1] * data.rot[1, c]
                               + model.joint_R0[j, r, 2] * data.rot[2, c])
                p[r] = model.joint_p0[j, r]
        else:
            for r in range(3):
                for c in range(3):
                    R[r, c] = model.joint_R0[j, r, c]
                p[r] = model.joint_p0[j, r] + q[j] * (model.joint_R0[j, r, 0] * axis[0]
                                                      + model.joint_R0[j, r, 1] * axis[1]
                                                      + model.joint_R0[j, r, 2] * axis[2])
        _transport_twist(R, p, pw, pv, w[j], vv[j], t1)
        _transport_twist(R, p, pdw, pdv, dw[j], dv[j], t1)
        sd, sdd = v[j], a[j]
        if model.joint_type[j] == JOINT_REVOLUTE:
            for i in range(3):
                w[j, i] += axis[i] * sd
                dw[j, i] += axis[i] * sdd
            # ad_(V_c)(e s', 0) = (w x e s', v x e s')
            _cross(w[j], axis, t1)
            _cross(vv[j], axis, t2)
            for i in range(3):
                dw[j, i] += t1[i] * sd
                dv[j, i] += t2[i] * sd
        else:
            for i in range(3):
                vv[j, i] += axis[i] * sd
                dv[j, i] += axis[i] * sdd
            _cross(w[j], axis, t1)
            for i in range(3):
                dv[j, i] += t1[i] * sd
        _tip_forward(model, data, j, q, v, a, joint_poses_ready)
        for i in range(3):
            pw[i] = data.tip_w[j, i]
            pv[i] = data.tip_v[j, i]
            pdw[i] = data.tip_dw[j, i]
            pdv[i] = data.tip_dv[j, i]


@_inline
def rnea(model, data, q, v, a, gravity_scale, with_elastic, joint_poses_ready=False):
    """Inverse dynamics: generalized forces that produce accelerations ``a`` at (q, v).

    Writes data.tau (length nv): joint efforts [N m or N] for the first n entries, then the
    modal residuals (generalized forces the modes would need [N m]). ``gravity_scale``
    multiplies gravity (0 or 1); ``with_elastic`` adds stiffness, damping and armature terms.
    ``joint_poses_ready`` reuses the joint and tip rotations of a previous pass at q.
    """
    n = model.joint_type.shape[0]
    forward_pass(model, data, q, v, a, gravity_scale, joint_poses_ready)
    w, vv, dw, dv = data.w, data.v, data.dw, data.dv
    t1, t2, t3 = data.t1, data.t2, data.t3
    tau = data.tau
    mw, fw = data.mw, data.fw      # wrench transmitted by the outboard chain, current frame
    mw2, fw2 = data.mw2, data.fw2
    for i in range(3):
        mw[i] = 0.0
        fw[i] = 0.0
    for j in range(n - 1, -1, -1):
        start = model.mode_start[j]
        count = model.mode_count[j]
        for k in range(count):
            tau[start + k] = 0.0
        # Payload at the tip frame.
        for i in range(3):
            t3[i] = data.tip_dv[j, i]
        _cross(data.tip_w[j], data.tip_v[j], t1)
        for i in range(3):
            t3[i] += t1[i]
        _rigid_wrench(model.payload_mass[j], model.payload_first_moment[j],
                      model.payload_inertia[j], data.tip_w[j], data.tip_dw[j], t3, mw, fw,
                      t1, t2)
        _tip_backward(model, data, j, q, mw, fw, tau)
        # Link body: rigid part and beam points, in the link frame.
        _cross(w[j], vv[j], t3)
        for i in range(3):
            t3[i] += dv[j, i]           # gamma = dv + w x v
        _rigid_wrench(model.mass[j], model.first_moment[j], model.inertia[j], w[j], dw[j],
                      t3, mw, fw, t1, t2)
        _beam_wrench(model, data, j, q, v, a, t3, mw, fw, tau)   # no points: no beam
        if with_elastic:
            for i in range(start, start + count):
                tau[i] += model.stiffness[i] * q[i] + model.damping[i] * v[i]
        axis = model.joint_axis[j]
        if model.joint_type[j] == JOINT_REVOLUTE:
            tau[j] = axis[0] * mw[0] + axis[1] * mw[1] + axis[2] * mw[2]
        else:
            tau[j] = axis[0] * fw[0] + axis[1] * fw[1] + axis[2] * fw[2]
        if with_elastic:
            tau[j] += model.damping[j] * v[j] + model.armature[j] * a[j]
        _transport_wrench(data.joint_R[j], data.joint_p[j], mw, fw, mw2, fw2, t1)
        for i in range(3):
            mw[i] = mw2[i]
            fw[i] = fw2[i]
    if model.floating:
        # The base's generalized force is the wrench the whole system needs at the base
        # frame: the outboard chain's (now in base axes) plus the base body's own.
        _cross(data.base_w, data.base_v, t3)
        for i in range(3):
            t3[i] += data.base_dv[i]
        _rigid_wrench(model.base_mass, model.base_first_moment, model.base_inertia,
                      data.base_w, data.base_dw, t3, mw, fw, t1, t2)
        b = model.stiffness.shape[0] - 6
        for i in range(3):
            tau[b + i] = mw[i]
            tau[b + 3 + i] = fw[i]


@_jit
def _rotate_step(axis_index, angle, rate, accel, w, v, dw, dv, Rot, t1, reuse):
    """Child frame rotated by ``angle`` about its parent's e_(axis_index); updates in place.

    w <- R^T w + e s',  v <- R^T v,  dw <- R^T dw + e s'' + w x e s',  dv <- R^T dv + v x e s'.
    With ``reuse`` the rotation Rot of a previous pass at the same angle is read, not built.
    """
    a0 = (axis_index + 1) % 3
    a1 = (axis_index + 2) % 3
    if reuse:
        c, s = Rot[a0, a0], Rot[a1, a0]
    else:
        c, s = math.cos(angle), math.sin(angle)
        for r in range(3):
            for k in range(3):
                Rot[r, k] = 0.0
        Rot[axis_index, axis_index] = 1.0
        Rot[a0, a0] = c
        Rot[a1, a1] = c
        Rot[a1, a0] = s
        Rot[a0, a1] = -s
    for vec in (w, v, dw, dv):
        x0 = c * vec[a0] + s * vec[a1]     # R^T vec in the plane of rotation
        x1 = -s * vec[a0] + c * vec[a1]
        vec[a0] = x0
        vec[a1] = x1
    w[axis_index] += rate
    dw[axis_index] += accel
    # w x (e rate) and v x (e rate), with e the unit vector along axis_index.
    t1[axis_index] = 0.0
    t1[a0] = w[a1] * rate
    t1[a1] = -w[a0] * rate
    dw[a0] += t1[a0]
    dw[a1] += t1[a1]
    dv[a0] += v[a1] * rate
    dv[a1] -= v[a0] * rate


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
    pd, pdd = data.t2, data.t3
    _section_displacement(phi, g, model.mode_plane[j], model.mode_start[j],
                          model.mode_count[j], q, v, a, p, pd, pdd, gq)
    p[0] += x
    # Translation by p(t): w_T = w, v_T = v + w x p + p', dw_T = dw,
    # dv_T = dv + dw x p + p'' + w x p'
    _cross(data.w[j], p, data.t1)
    for i in range(3):
        w[i] = data.w[j, i]
        dw[i] = data.dw[j, i]
        vv[i] = data.v[j, i] + data.t1[i] + pd[i]
    _cross(data.dw[j], p, data.t1)
    for i in range(3):
        dv[i] = data.dv[j, i] + data.t1[i] + pdd[i]
    _cross(data.w[j], pd, data.t1)
    for i in range(3):
        dv[i] += data.t1[i]
    _bending_angles(model, j, slope, q, v, a, angles)
    _rotate_step(2, angles[0], angles[1], angles[2], w, vv, dw, dv, Rz, data.t1, reuse)
    _rotate_step(1, angles[3], angles[4], angles[5], w, vv, dw, dv, Ry, data.t1, reuse)


@_inline
def _tip_forward(model, data, j, q, v, a, reuse):
    """Pose, twist and acceleration of the tip frame of link j (the section at x = L)."""
    section_forward(model, data, j, model.length[j], model.tip_phi[j], model.tip_slope[j],
                    model.tip_g[j], q, v, a, data.tip_p[j], data.tip_gq[j], data.angles[j],
                    data.tip_Rz[j], data.tip_Ry[j], data.tip_w[j], data.tip_v[j],
                    data.tip_dw[j], data.tip_dv[j], reuse)


@_inline
def _tip_backward(model, data, j, q, mw, fw, tau):
    """Carry the tip wrench of link j back to its link frame; add its modal forces to tau."""
    start = model.mode_start[j]
    count = model.mode_count[j]
    t1, m2, f2 = data.t1, data.mw2, data.fw2
    # Through Rot(e2, psi_y): generalized force e2 . m on psi_y = -sum_z W_k'(L) q_k.
    for k in range(count):
        if model.mode_plane[j, k] == 2:
            tau[start + k] -= mw[1] * model.tip_slope[j, k]
    zero = data.zero3
    _transport_wrench(data.tip_Ry[j], zero, mw, fw, m2, f2, t1)
    for k in range(count):
        if model.mode_plane[j, k] == 1:
            tau[start + k] += m2[2] * model.tip_slope[j, k]
    _transport_wrench(data.tip_Rz[j], zero, m2, f2, mw, fw, t1)
    # Through the translation u(L, q): generalized force (du/dq_k) . f.
    gq = data.tip_gq[j]
    for k in range(count):
        tau[start + k] += (model.tip_phi[j, k] * fw[model.mode_plane[j, k]]
                           - gq[k] * fw[0])
    _cross(data.tip_p[j], fw, t1)
    for i in range(3):
        mw[i] += t1[i]


@_inline
def _beam_wrench(model, data, j, q, v, a, gamma, mw, fw, tau):
    """Add the inertial loads of the beam points of link j (see the module docstring)."""
    start = model.mode_start[j]
    count = model.mode_count[j]
    w, dw = data.w[j], data.dw[j]
    r, du, ddu, acc, t1, gq = data.r, data.du, data.ddu, data.acc, data.t1, data.gq
    for point in range(model.point_start[j], model.point_start[j + 1]):
        _section_displacement(model.point_phi[point], model.point_g[point],
                              model.mode_plane[j], start, count, q, v, a, r, du, ddu, gq)
        r[0] += model.point_x[point]
        weight = model.point_mass[point]
        # a = gamma + dw x r + w x (w x r) + 2 w x u' + u''
        _cross(dw, r, acc)
        for i in range(3):
            acc[i] += gamma[i] + ddu[i]
        _cross(w, r, t1)
        _cross(w, t1, data.t2)
        for i in range(3):
            acc[i] += data.t2[i]
        _cross(w, du, t1)
        for i in range(3):
            acc[i] = weight * (acc[i] + 2.0 * t1[i])
            fw[i] += acc[i]
        _cross(r, acc, t1)
        for i in range(3):
            mw[i] += t1[i]
        for k in range(count):
            tau[start + k] += (model.point_phi[point, k] * acc[model.mode_plane[j, k]]
                               - gq[k] * acc[0])


def spatial_inertia(mass, first_moment, inertia):
    """[[I_O, hat(m c)], [-hat(m c), m I]] (6 x 6, NumPy): a rigid body at the frame origin.

    For the twist (w, v) its kinetic energy is 1/2 (w.I_O w + 2 w.(m c x v) + m v.v); I_O is
    the inertia about the origin and m c the first moment.
    """
    c = first_moment
    hat = [[0.0, -c[2], c[1]], [c[2], 0.0, -c[0]], [-c[1], c[0], 0.0]]
    out = [[0.0] * 6 for _ in range(6)]
    for r in range(3):
        for k in range(3):
            out[r][k] = inertia[r][k]
            out[r][3 + k] = hat[r][k]
            out[3 + r][k] = -hat[r][k]
        out[3 + r][3 + r] = mass
    return out


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
    r, gq, S = data.r, data.gq, data.gamma
    mass = 0.0
    for point in range(model.point_start[j], model.point_start[j + 1]):
        _section_position(model.point_phi[point], model.point_g[point], model.mode_plane[j],
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
def _tip_map(model, data, j, T):
    """T (6 x (6+m)): tip twist (tip axes) of link j from eta = (w, v, q') of its link frame.

    Link columns: Ad^-1 of the tip pose (R, p) = (Rz Ry, tip_p), i.e. (R^T w, R^T (v + w x p)).
    Mode k: rotation rate Ry^T e3 W_k'(L) (y-modes) or -e2 W_k'(L) (z-modes), and the
    translation rate R^T (W_k(L) e_plane - (G q)_k e1).
    """
    count = model.mode_count[j]
    R, p = data.rot, data.tip_p[j]
    Ry = data.tip_Ry[j]
    _compose(data.tip_Rz[j], data.zero3, Ry, data.zero3, R, data.t1)
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
def _link_inertia(model, data, j, q):
    """data.link_mass[j]: generalized mass of link j in eta = (w, v, q') of its link frame.

    Beam (`_beam_mass`) + rigid body at the link frame + payload at the tip frame
    (T^T I_payload T with T = `_tip_map`, already in data.tip_map).
    """
    count = model.mode_count[j]
    size = 6 + count
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
    _add_projected(data.tip_map, 6, size, model.payload_spatial[j], data.tip_work, M)


@_jit
def _product(A, B, rows, inner, cols, out):
    """out[:rows, :cols] = A[:rows, :inner] B[:inner, :cols]."""
    for r in range(rows):
        for c in range(cols):
            acc = 0.0
            for k in range(inner):
                acc += A[r, k] * B[k, c]
            out[r, c] = acc


@_jit
def _add_projected(E, rows, cols, M_link, W, M):
    """M[:cols, :cols] += E^T M_link E for E (rows x cols); W = M_link E is scratch."""
    _product(M_link, E, rows, rows, cols, W)
    for a_ in range(cols):
        for b_ in range(a_, cols):
            acc = 0.0
            for r in range(rows):
                acc += E[r, a_] * W[r, b_]
            M[a_, b_] += acc
            if b_ != a_:
                M[b_, a_] += acc


@_inline
def mass_matrix(model, data, q, poses_ready=False):
    """M(q) = sum_j E_j^T M_j E_j, the composite form of the kinetic energy.

    E_j (6+m_j rows) maps the generalized velocities to eta_j = (twist of link frame j in its
    axes, modal rates of link j) and M_j is that link's generalized mass (`_link_inertia`).
    The twist rows come from the base outwards: J_j = Ad^-1(joint j) J_tip(j-1) + xi_j e_j^T,
    J_tip(j) = T_j [J_j; modes of j] (`_tip_map`); a floating base contributes its body with
    J = [I 0] on its velocity. ``poses_ready``: joint and tip poses of a pass at q are in data.

    Writes data.mass, with the armature added on the joint diagonal.
    """
    nv = data.mass.shape[0]
    n = model.joint_type.shape[0]
    M, J, E, W = data.mass, data.jac, data.jac_ext, data.jac_work
    zero = data.zero_nv
    if not poses_ready:
        for k in range(nv):
            zero[k] = 0.0
        forward_pass(model, data, q, zero, zero, 0.0)
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
        _add_projected(J, 6, nv, model.base_spatial, W, M)
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
        _tip_map(model, data, j, data.tip_map)
        _link_inertia(model, data, j, q)
        _add_projected(E, rows, nv, data.link_mass[j], W, M)
        # J <- T_j E: twist of the tip frame, the parent of joint j+1.
        _product(data.tip_map, E, 6, rows, nv, J)
    for j in range(n):
        M[j, j] += model.armature[j]


@_jit
def cholesky_factor(M, L):
    """Lower-triangular L with L L^T = M; returns False if M is not positive definite."""
    n = M.shape[0]
    for c in range(n):
        s = M[c, c]
        for k in range(c):
            s -= L[c, k] * L[c, k]
        if not s > 0.0:
            return False
        L[c, c] = math.sqrt(s)
        for r in range(c + 1, n):
            s = M[r, c]
            for k in range(c):
                s -= L[r, k] * L[c, k]
            L[r, c] = s / L[c, c]
    return True


@_jit
def cholesky_substitute(L, b, out):
    """Solve L L^T x = b by forward and back substitution into ``out``."""
    n = L.shape[0]
    for r in range(n):
        s = b[r]
        for k in range(r):
            s -= L[r, k] * out[k]
        out[r] = s / L[r, r]
    for r in range(n - 1, -1, -1):
        s = out[r]
        for k in range(r + 1, n):
            s -= L[k, r] * out[k]
        out[r] = s / L[r, r]


@_inline
def forward_dynamics(model, data, q, v, u):
    """Accelerations v' = M^-1 (B u - h(q, v)); writes data.acceleration.

    B u puts the actuator efforts ``u`` on the joints (modes are not actuated). Returns
    False when M is not positive definite (the caller reports it).
    """
    nv = v.shape[0]
    zero = data.zero_nv
    for k in range(nv):
        zero[k] = 0.0
    rnea(model, data, q, v, zero, 1.0, True)
    rhs = data.rhs
    for k in range(nv):
        rhs[k] = -data.tau[k]
    for k in range(u.shape[0]):
        rhs[k] += u[k]
    mass_matrix(model, data, q, True)
    if not cholesky_factor(data.mass, data.chol):
        return False
    cholesky_substitute(data.chol, rhs, data.acceleration)
    return True


@_inline
def rhs(model, data, x, u, out):
    """Tangent state derivative out = (q', M^-1 (B u - h)) of x = (q, v); False if M singular.

    q' is v, except for a floating base: its rotation rate is the body angular velocity w
    and its position rate the world velocity R v_body (see `integrate`).
    """
    nv = model.stiffness.shape[0]
    nq = x.shape[0] - nv
    q, v = x[:nq], x[nq:]
    ok = forward_dynamics(model, data, q, v, u)
    for i in range(nv):
        out[i] = v[i]
        out[nv + i] = data.acceleration[i]
    if model.floating:
        b, R = nv - 6, data.base_R
        for i in range(3):
            out[b + 3 + i] = R[i, 0] * v[b + 3] + R[i, 1] * v[b + 4] + R[i, 2] * v[b + 5]
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
            data.mass_n[r, c] = data.mass[r, c]
            data.wmat[r, c] = data.mass[r, c]
        data.wmat[r, r] += gh * model.damping[r] + gh * gh * model.stiffness[r]
    return cholesky_factor(data.wmat, data.wchol)


@_inline
def stiff_solve(model, data, gh, r, out):
    """Write (I - gh J)^-1 r into out; J = [[0, I], [-M^-1 K, -M^-1 D]] (elastic df/dx).

    Block elimination: (M + gh D + gh^2 K) k_v = M r_v - gh K r_q,  k_q = r_q + gh k_v.
    """
    nv = data.mass_n.shape[0]
    for i in range(nv):
        acc = 0.0
        for c in range(nv):
            acc += data.mass_n[i, c] * r[nv + c]
        data.wrhs[i] = acc - gh * model.stiffness[i] * r[i]
    cholesky_substitute(data.wchol, data.wrhs, data.wsol)
    for i in range(nv):
        out[nv + i] = data.wsol[i]
        out[i] = r[i] + gh * data.wsol[i]


@_jit
def _compose(Ra, pa, Rb, pb, R_out, p_out):
    """(R_out, p_out) = (Ra Rb, Ra pb + pa)."""
    for r in range(3):
        for c in range(3):
            R_out[r, c] = Ra[r, 0] * Rb[0, c] + Ra[r, 1] * Rb[1, c] + Ra[r, 2] * Rb[2, c]
        p_out[r] = Ra[r, 0] * pb[0] + Ra[r, 1] * pb[1] + Ra[r, 2] * pb[2] + pa[r]


@_inline
def placements(model, data, q):
    """Poses in the base frame of every link frame (data.link_R, link_p) and tip frame.

    Also leaves the link and tip motions of a chain at rest in data (zero velocity).
    """
    n = model.joint_type.shape[0]
    zero = data.zero_nv
    for k in range(zero.shape[0]):
        zero[k] = 0.0
    forward_pass(model, data, q, zero, zero, 0.0)
    R_prev, p_prev = data.eye3, data.zero3
    for j in range(n):
        _compose(R_prev, p_prev, data.joint_R[j], data.joint_p[j], data.link_R[j],
                 data.link_p[j])
        _compose(data.tip_Rz[j], data.zero3, data.tip_Ry[j], data.zero3, data.rot, data.t1)
        _compose(data.link_R[j], data.link_p[j], data.rot, data.tip_p[j], data.tip_R[j],
                 data.tip_pos[j])
        R_prev, p_prev = data.tip_R[j], data.tip_pos[j]


@_inline
def section_placement(model, data, j, x, phi, slope, g, q, R_out, p_out):
    """Pose in the base frame of the section at abscissa x of link j (after `placements`)."""
    zero = data.zero_nv
    section_forward(model, data, j, x, phi, slope, g, q, zero, zero, data.sec_p, data.gq,
                    data.sec_angles, data.sec_Rz, data.sec_Ry, data.sec_w, data.sec_v,
                    data.sec_dw, data.sec_dv)
    _compose(data.sec_Rz, data.zero3, data.sec_Ry, data.zero3, data.rot, data.t1)
    _compose(data.link_R[j], data.link_p[j], data.rot, data.sec_p, R_out, p_out)


@_inline
def section_jacobian(model, data, j, x, phi, slope, g, q, R_sec, J):
    """Jacobian J (6 x nv) of the section frame at x of link j, base-frame components.

    Column k is (angular velocity, velocity of the section origin) for v = e_k; R_sec is the
    section's orientation in the base frame (from `section_placement`).
    """
    nv = J.shape[1]
    unit, zero = data.unit_nv, data.rhs
    for k in range(nv):
        unit[k] = 0.0
        zero[k] = 0.0
    for k in range(nv):
        unit[k] = 1.0
        forward_pass(model, data, q, unit, zero, 0.0)
        section_forward(model, data, j, x, phi, slope, g, q, unit, zero, data.sec_p, data.gq,
                        data.sec_angles, data.sec_Rz, data.sec_Ry, data.sec_w, data.sec_v,
                        data.sec_dw, data.sec_dv)
        for r in range(3):
            J[r, k] = (R_sec[r, 0] * data.sec_w[0] + R_sec[r, 1] * data.sec_w[1]
                       + R_sec[r, 2] * data.sec_w[2])
            J[3 + r, k] = (R_sec[r, 0] * data.sec_v[0] + R_sec[r, 1] * data.sec_v[1]
                           + R_sec[r, 2] * data.sec_v[2])
        unit[k] = 0.0


@_inline
def section_motion(model, data, j, x, phi, slope, g, q, v, R_sec, out):
    """Twist J v and acceleration J' v of the section at x of link j (base-frame axes).

    out = (w, p', w', p'') [rad/s, m/s, rad/s^2, m/s^2] of the section frame and its origin
    at zero generalized acceleration and without gravity, i.e. the terms of the second
    derivative of a point program that do not depend on q''. R_sec: the section's
    orientation in the base frame (from `section_placement`). The base must be fixed (for
    a floating base these are rates of base-frame components).
    """
    zero = data.rhs
    for k in range(zero.shape[0]):
        zero[k] = 0.0
    forward_pass(model, data, q, v, zero, 0.0)
    section_forward(model, data, j, x, phi, slope, g, q, v, zero, data.sec_p, data.gq,
                    data.sec_angles, data.sec_Rz, data.sec_Ry, data.sec_w, data.sec_v,
                    data.sec_dw, data.sec_dv)
    # classical acceleration of the origin = R (v' + w x v) in body components
    _cross(data.sec_w, data.sec_v, data.t1)
    for i in range(3):
        data.t1[i] += data.sec_dv[i]
    for r in range(3):
        out[r] = (R_sec[r, 0] * data.sec_w[0] + R_sec[r, 1] * data.sec_w[1]
                  + R_sec[r, 2] * data.sec_w[2])
        out[3 + r] = (R_sec[r, 0] * data.sec_v[0] + R_sec[r, 1] * data.sec_v[1]
                      + R_sec[r, 2] * data.sec_v[2])
        out[6 + r] = (R_sec[r, 0] * data.sec_dw[0] + R_sec[r, 1] * data.sec_dw[1]
                      + R_sec[r, 2] * data.sec_dw[2])
        out[9 + r] = (R_sec[r, 0] * data.t1[0] + R_sec[r, 1] * data.t1[1]
                      + R_sec[r, 2] * data.t1[2])


@_jit
def section_kinematics(model, data, j, x, phi, slope, g, q, v, R_out, p_out, J, motion):
    """Pose (R_out, p_out), Jacobian J and (J v, J' v) of the section at x of link j.

    One call for what a task-space program needs each tick (see `section_jacobian` and
    `section_motion`); base-frame components, angular first.
    """
    placements(model, data, q)
    section_placement(model, data, j, x, phi, slope, g, q, R_out, p_out)
    section_jacobian(model, data, j, x, phi, slope, g, q, R_out, J)
    section_motion(model, data, j, x, phi, slope, g, q, v, R_out, motion)


@_jit
def _gravity_work(g, R, p, mass, first_moment):
    """Return g . (m p + R (m c)): minus the gravity potential of a body at pose (R, p)."""
    s = 0.0
    for r in range(3):
        s += g[r] * (mass * p[r] + R[r, 0] * first_moment[0] + R[r, 1] * first_moment[1]
                     + R[r, 2] * first_moment[2])
    return s


@_inline
def potential_energy(model, data, q):
    """V = -sum m g . p_C (all rigid bodies, payloads, beam points) + q^T K q / 2 [J].

    Positions are taken in the base frame; a floating base at (R, p) adds -m_total g . p and
    sees gravity as R^T g.
    """
    placements(model, data, q)
    g, R, g0 = data.base_g, data.base_R, model.gravity
    for i in range(3):
        g[i] = R[0, i] * g0[0] + R[1, i] * g0[1] + R[2, i] * g0[2] if model.floating else g0[i]
    energy = 0.0
    total = 0.0
    if model.floating:
        energy -= _gravity_work(g, data.eye3, data.zero3, model.base_mass,
                                model.base_first_moment)
        total = model.base_mass
    for j in range(model.joint_type.shape[0]):
        total += model.mass[j] + model.payload_mass[j]
        energy -= _gravity_work(g, data.link_R[j], data.link_p[j], model.mass[j],
                                model.first_moment[j])
        energy -= _gravity_work(g, data.tip_R[j], data.tip_pos[j], model.payload_mass[j],
                                model.payload_first_moment[j])
        start = model.mode_start[j]
        count = model.mode_count[j]
        for point in range(model.point_start[j], model.point_start[j + 1]):
            _section_position(model.point_phi[point], model.point_g[point],
                              model.mode_plane[j], start, count, q, data.r, data.gq)
            data.r[0] += model.point_x[point]
            weight = model.point_mass[point]
            for i in range(3):
                data.r[i] *= weight       # first moment of the point about the link frame
            energy -= _gravity_work(g, data.link_R[j], data.link_p[j], weight, data.r)
            total += weight
        for k in range(count):
            energy += 0.5 * model.stiffness[start + k] * q[start + k] ** 2
    if model.floating:
        b = model.stiffness.shape[0] - 6
        for i in range(3):
            energy -= total * model.gravity[i] * q[b + i]
    return energy


@_inline
def local_transforms(model, data, q, links, xs, is_section, phi, slope, g, R_out, p_out,
                     quat_out):
    """Parent-to-child transforms of a list of moving frames (for TF), one compiled call.

    Entry i is joint ``links[i]`` (its link frame in the parent tip frame) when
    is_section[i] is 0, else the section at abscissa xs[i] in its link frame. Writes the
    rotation R_out[i], its unit quaternion quat_out[i] (w, x, y, z) and the position p_out[i].
    """
    placements(model, data, q)
    zero = data.zero_nv
    for i in range(links.shape[0]):
        j = links[i]
        if is_section[i] == 0:
            for r in range(3):
                for c in range(3):
                    R_out[i, r, c] = data.joint_R[j, r, c]
                p_out[i, r] = data.joint_p[j, r]
        else:
            section_forward(model, data, j, xs[i], phi[i], slope[i], g[i], q, zero, zero,
                            p_out[i], data.gq, data.sec_angles, data.sec_Rz, data.sec_Ry,
                            data.sec_w, data.sec_v, data.sec_dw, data.sec_dv)
            _compose(data.sec_Rz, data.zero3, data.sec_Ry, data.zero3, R_out[i], data.t1)
        group_kernels.matrix_to_quat(R_out[i], quat_out[i])


@_jit
def explicit_steps(model, data, x, u, h, count, a, b, stages, trial, theta):
    """`integrators.explicit_steps` on the chain's equations of motion."""
    return integrators.explicit_steps(rhs, integrate, dexpinv, model, data, x, u, h, count, a,
                                      b, stages, trial, theta)


@_jit
def ros2_steps(model, data, x, u, h, count, stages, trial, theta):
    """`integrators.ros2_steps` on the chain's equations, elastic part implicit."""
    return integrators.ros2_steps(rhs, stiff_factor, stiff_solve, integrate, dexpinv, model,
                                  data, x, u, h, count, stages, trial, theta)
