"""Spatial algebra on 3-vectors and 3 x 3 rotations, written out for numba.

Conventions (Boyer & Primault): twists and wrenches are angular first, in body (frame)
components. A twist (w, v) is the angular velocity [rad/s] and the velocity of the frame
origin [m/s]; an acceleration (dw, dv) is the time derivative of those body components; a
wrench (m, f) is a moment about the frame origin [N m] and a force [N].

For a child frame c at pose (R, p) in its parent P:

    Ad^-1_(R,p) (w, v) = (R^T w, R^T (v + w x p))       (twist of P in c's axes),
    (m_P, f_P) = (R m + p x R f, R f)                    (wrench of c carried to P),
    ad_(w,v)(a, b) = (w x a, w x b + v x a).

Every kernel writes into preallocated ``out`` arrays and allocates nothing.
"""

import math

from .. import compiled

_jit = compiled.jit


@_jit
def cross(a, b, out):
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@_jit
def axis_rotation(axis, angle, out):
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
def rotate_step(axis_index, angle, rate, accel, w, v, dw, dv, Rot, t1, reuse):
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


@_jit
def transport_twist(R, p, w, v, w_out, v_out, tmp):
    """(w_out, v_out) = Ad^-1_(R,p) (w, v) = (R^T w, R^T (v + w x p))."""
    cross(w, p, tmp)
    for i in range(3):
        w_out[i] = R[0, i] * w[0] + R[1, i] * w[1] + R[2, i] * w[2]
        v_out[i] = (R[0, i] * (v[0] + tmp[0]) + R[1, i] * (v[1] + tmp[1])
                    + R[2, i] * (v[2] + tmp[2]))


@_jit
def transport_wrench(R, p, m, f, m_out, f_out, tmp):
    """(m_out, f_out) = (R m + p x R f, R f): a child-frame wrench in the parent frame."""
    for i in range(3):
        f_out[i] = R[i, 0] * f[0] + R[i, 1] * f[1] + R[i, 2] * f[2]
    cross(p, f_out, tmp)
    for i in range(3):
        m_out[i] = R[i, 0] * m[0] + R[i, 1] * m[1] + R[i, 2] * m[2] + tmp[i]


@_jit
def rigid_wrench(mass, first_moment, inertia, w, dw, gamma, m_out, f_out, t1, t2):
    """Inertial wrench about the frame origin of a rigid body, added to (m_out, f_out).

    f = m gamma + dw x (m c) + w x (w x (m c)),   m = I_O dw + w x (I_O w) + (m c) x gamma,
    with m c the first moment and I_O the inertia tensor about the frame origin.
    """
    if mass == 0.0:
        return
    cross(dw, first_moment, t1)
    cross(w, first_moment, t2)
    for i in range(3):
        f_out[i] += mass * gamma[i] + t1[i]
    cross(w, t2, t1)
    for i in range(3):
        f_out[i] += t1[i]
    for i in range(3):
        t2[i] = inertia[i, 0] * w[0] + inertia[i, 1] * w[1] + inertia[i, 2] * w[2]
    cross(w, t2, t1)
    cross(first_moment, gamma, t2)
    for i in range(3):
        m_out[i] += (inertia[i, 0] * dw[0] + inertia[i, 1] * dw[1] + inertia[i, 2] * dw[2]
                     + t1[i] + t2[i])


@_jit
def compose(Ra, pa, Rb, pb, R_out, p_out):
    """(R_out, p_out) = (Ra Rb, Ra pb + pa)."""
    for r in range(3):
        for c in range(3):
            R_out[r, c] = Ra[r, 0] * Rb[0, c] + Ra[r, 1] * Rb[1, c] + Ra[r, 2] * Rb[2, c]
        p_out[r] = Ra[r, 0] * pb[0] + Ra[r, 1] * pb[1] + Ra[r, 2] * pb[2] + pa[r]


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


@_jit
def add_transformed_inertia(R, p, inertia, J, out):
    """out[:6, :6] += X^T I X for X = Ad^-1_(R,p) and a symmetric 6 x 6 I (angular first).

    A (possibly articulated) inertia of a child frame expressed at its parent, by 3 x 3
    blocks: X = diag(R^T, R^T) [[1, 0], [-hat(p), 1]], so with I = [[A, B], [B^T, C]]
    rotated to [[A', B'], [B'^T, C']] = [[R A R^T, R B R^T], [., R C R^T]],

        X^T I X = [[A' - F - F^T - G, B' + E], [(B' + E)^T, C']],
        E = hat(p) C',  F_r = B'_r x p,  G_r = E_r x p  (rows r),

    about 220 multiply-adds instead of the dense product's 432. J: 6 x 6 scratch (A', B'
    and C' in its blocks; its lower-left block holds the products, then E).
    """
    for ro, co in ((0, 0), (0, 3), (3, 3)):          # blocks A, B, C
        for r in range(3):                           # (block R^T) into J[3:, :3]
            for c in range(3):
                J[3 + r, c] = (inertia[ro + r, co] * R[c, 0] + inertia[ro + r, co + 1] * R[c, 1]
                               + inertia[ro + r, co + 2] * R[c, 2])
        for r in range(3):
            for c in range(3):
                J[ro + r, co + c] = R[r, 0] * J[3, c] + R[r, 1] * J[4, c] + R[r, 2] * J[5, c]
    p0, p1, p2 = p[0], p[1], p[2]
    for c in range(3):                               # E = hat(p) C', column c
        c0, c1, c2 = J[3, 3 + c], J[4, 3 + c], J[5, 3 + c]
        e0, e1, e2 = p1 * c2 - p2 * c1, p2 * c0 - p0 * c2, p0 * c1 - p1 * c0
        J[3, c], J[4, c], J[5, c] = e0, e1, e2
        b0, b1, b2 = J[0, 3 + c] + e0, J[1, 3 + c] + e1, J[2, 3 + c] + e2
        out[0, 3 + c] += b0
        out[1, 3 + c] += b1
        out[2, 3 + c] += b2
        out[3 + c, 0] += b0
        out[3 + c, 1] += b1
        out[3 + c, 2] += b2
        for r in range(3):
            out[3 + r, 3 + c] += J[3 + r, 3 + c]
    for r in range(3):
        b0, b1, b2 = J[r, 3], J[r, 4], J[r, 5]
        e0, e1, e2 = J[3 + r, 0], J[3 + r, 1], J[3 + r, 2]
        out[r, 0] += J[r, 0] - (e1 * p2 - e2 * p1)  # A' - G
        out[r, 1] += J[r, 1] - (e2 * p0 - e0 * p2)
        out[r, 2] += J[r, 2] - (e0 * p1 - e1 * p0)
        J[r, 3], J[r, 4], J[r, 5] = b1 * p2 - b2 * p1, b2 * p0 - b0 * p2, b0 * p1 - b1 * p0
    for r in range(3):                               # - F - F^T (F_r now in J[r, 3:])
        for c in range(3):
            out[r, c] -= J[r, 3 + c] + J[c, 3 + r]
