"""Spatial algebra on 3-vectors and 3 x 3 rotations, written out for numba.

Conventions (Boyer & Primault): twists and wrenches are angular first, in body (frame)
components. A twist (w, v) is the angular velocity [rad/s] and the velocity of the frame
origin [m/s]; an acceleration (dw, dv) is the time derivative of those body components; a
wrench (m, f) is a moment about the frame origin [N m] and a force [N].

For a child frame c at pose (R, p) in its parent P:

    Ad^-1_(R,p) (w, v) = (R^T w, R^T (v + w x p))       (twist of P in c's axes),
    (m_P, f_P) = (R m + p x R f, R f)                    (wrench of c carried to P),
    ad_(w,v)(a, b) = (w x a, w x b + v x a).

The compiled SE(3) algebra of the chain model's kernels lives here (the tangent map J_r
of a Magnus step and its rate too); ``group_kernels`` holds
the quaternion and SO(3) pieces of the steppers, ``lie`` the readable NumPy forms the
tests check them against. Every kernel writes into preallocated ``out`` arrays and
allocates nothing.
"""

import math

import numpy as np

from .. import compiled

_jit, _inline = compiled.jit, compiled.inline


@_jit
def cross(a, b, out):
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@_jit
def transport_twist(R, p, w, v, w_out, v_out, tmp):
    """(w_out, v_out) = Ad^-1_(R,p) (w, v) = (R^T w, R^T (v + w x p))."""
    cross(w, p, tmp)
    for i in range(3):
        w_out[i] = R[0, i] * w[0] + R[1, i] * w[1] + R[2, i] * w[2]
        v_out[i] = (R[0, i] * (v[0] + tmp[0]) + R[1, i] * (v[1] + tmp[1])
                    + R[2, i] * (v[2] + tmp[2]))


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


@_inline
def _block(inertia, ro, co):
    """Return the 3 x 3 block of ``inertia`` at (ro, co), row-major as 9 scalars."""
    return (inertia[ro, co], inertia[ro, co + 1], inertia[ro, co + 2],
            inertia[ro + 1, co], inertia[ro + 1, co + 1], inertia[ro + 1, co + 2],
            inertia[ro + 2, co], inertia[ro + 2, co + 1], inertia[ro + 2, co + 2])


@_inline
def _rotated(R, x):
    """Return R X R^T for a 3 x 3 block X, both row-major as 9 scalars."""
    x00, x01, x02, x10, x11, x12, x20, x21, x22 = x
    r00, r01, r02 = R[0, 0], R[0, 1], R[0, 2]
    r10, r11, r12 = R[1, 0], R[1, 1], R[1, 2]
    r20, r21, r22 = R[2, 0], R[2, 1], R[2, 2]
    # T = R X, then T R^T
    t00 = r00 * x00 + r01 * x10 + r02 * x20
    t01 = r00 * x01 + r01 * x11 + r02 * x21
    t02 = r00 * x02 + r01 * x12 + r02 * x22
    t10 = r10 * x00 + r11 * x10 + r12 * x20
    t11 = r10 * x01 + r11 * x11 + r12 * x21
    t12 = r10 * x02 + r11 * x12 + r12 * x22
    t20 = r20 * x00 + r21 * x10 + r22 * x20
    t21 = r20 * x01 + r21 * x11 + r22 * x21
    t22 = r20 * x02 + r21 * x12 + r22 * x22
    return (t00 * r00 + t01 * r01 + t02 * r02, t00 * r10 + t01 * r11 + t02 * r12,
            t00 * r20 + t01 * r21 + t02 * r22,
            t10 * r00 + t11 * r01 + t12 * r02, t10 * r10 + t11 * r11 + t12 * r12,
            t10 * r20 + t11 * r21 + t12 * r22,
            t20 * r00 + t21 * r01 + t22 * r02, t20 * r10 + t21 * r11 + t22 * r12,
            t20 * r20 + t21 * r21 + t22 * r22)


@_inline
def _add_shifted(p, a, b, c, out):
    """out[:6, :6] += Sh^T [[A, B], [B^T, C]] Sh, Sh = [[1, 0], [-hat(p), 1]] (blocks 9-tuples).

    With E = hat(p) C, F_r = B_r x p, G_r = E_r x p (rows r): [[A - F - F^T - G, B + E],
    [(B + E)^T, C]].
    """
    p0, p1, p2 = p[0], p[1], p[2]
    c00, c01, c02, c10, c11, c12, c20, c21, c22 = c
    b00, b01, b02, b10, b11, b12, b20, b21, b22 = b
    # E = hat(p) C, column by column (p x C_col)
    e00, e10, e20 = p1 * c20 - p2 * c10, p2 * c00 - p0 * c20, p0 * c10 - p1 * c00
    e01, e11, e21 = p1 * c21 - p2 * c11, p2 * c01 - p0 * c21, p0 * c11 - p1 * c01
    e02, e12, e22 = p1 * c22 - p2 * c12, p2 * c02 - p0 * c22, p0 * c12 - p1 * c02
    # F_r = B_r x p and G_r = E_r x p, rows
    f00, f01, f02 = b01 * p2 - b02 * p1, b02 * p0 - b00 * p2, b00 * p1 - b01 * p0
    f10, f11, f12 = b11 * p2 - b12 * p1, b12 * p0 - b10 * p2, b10 * p1 - b11 * p0
    f20, f21, f22 = b21 * p2 - b22 * p1, b22 * p0 - b20 * p2, b20 * p1 - b21 * p0
    g00, g01, g02 = e01 * p2 - e02 * p1, e02 * p0 - e00 * p2, e00 * p1 - e01 * p0
    g10, g11, g12 = e11 * p2 - e12 * p1, e12 * p0 - e10 * p2, e10 * p1 - e11 * p0
    g20, g21, g22 = e21 * p2 - e22 * p1, e22 * p0 - e20 * p2, e20 * p1 - e21 * p0
    a00, a01, a02, a10, a11, a12, a20, a21, a22 = a
    out[0, 0] += a00 - 2.0 * f00 - g00
    out[0, 1] += a01 - f01 - f10 - g01
    out[0, 2] += a02 - f02 - f20 - g02
    out[1, 0] += a10 - f10 - f01 - g10
    out[1, 1] += a11 - 2.0 * f11 - g11
    out[1, 2] += a12 - f12 - f21 - g12
    out[2, 0] += a20 - f20 - f02 - g20
    out[2, 1] += a21 - f21 - f12 - g21
    out[2, 2] += a22 - 2.0 * f22 - g22
    u00, u01, u02 = b00 + e00, b01 + e01, b02 + e02
    u10, u11, u12 = b10 + e10, b11 + e11, b12 + e12
    u20, u21, u22 = b20 + e20, b21 + e21, b22 + e22
    out[0, 3] += u00
    out[0, 4] += u01
    out[0, 5] += u02
    out[1, 3] += u10
    out[1, 4] += u11
    out[1, 5] += u12
    out[2, 3] += u20
    out[2, 4] += u21
    out[2, 5] += u22
    out[3, 0] += u00
    out[4, 0] += u01
    out[5, 0] += u02
    out[3, 1] += u10
    out[4, 1] += u11
    out[5, 1] += u12
    out[3, 2] += u20
    out[4, 2] += u21
    out[5, 2] += u22
    out[3, 3] += c00
    out[3, 4] += c01
    out[3, 5] += c02
    out[4, 3] += c10
    out[4, 4] += c11
    out[4, 5] += c12
    out[5, 3] += c20
    out[5, 4] += c21
    out[5, 5] += c22


@_inline
def add_transformed_inertia(R, p, inertia, out):
    """out[:6, :6] += X^T I X for X = Ad^-1_(R,p) and a symmetric 6 x 6 I (angular first).

    A (possibly articulated) inertia of a child frame expressed at its parent, by 3 x 3
    blocks: X = diag(R^T, R^T) [[1, 0], [-hat(p), 1]], so I's blocks [[A, B], [B^T, C]]
    are rotated to R A R^T, R B R^T, R C R^T and then shifted by p (`_add_shifted`):
    about 220 multiply-adds in registers instead of the dense product's 432.
    """
    _add_shifted(p, _rotated(R, _block(inertia, 0, 0)), _rotated(R, _block(inertia, 0, 3)),
                 _rotated(R, _block(inertia, 3, 3)), out)


@_jit
def ad_apply(x, y, out):
    """Write ad_x y = (w_x * w_y, w_x * v_y - w_y * v_x) for twists (w, v); out not x, y."""
    out[0] = x[1] * y[2] - x[2] * y[1]
    out[1] = x[2] * y[0] - x[0] * y[2]
    out[2] = x[0] * y[1] - x[1] * y[0]
    out[3] = x[1] * y[5] - x[2] * y[4] - (y[1] * x[5] - y[2] * x[4])
    out[4] = x[2] * y[3] - x[0] * y[5] - (y[2] * x[3] - y[0] * x[5])
    out[5] = x[0] * y[4] - x[1] * y[3] - (y[0] * x[4] - y[1] * x[3])


@_inline
def ad_tuple(x, y):
    """Return ad_x y (`ad_apply`) for 6-tuples x, y, as six scalars (kept in registers)."""
    return (x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0],
            x[1] * y[5] - x[2] * y[4] - (y[1] * x[5] - y[2] * x[4]),
            x[2] * y[3] - x[0] * y[5] - (y[2] * x[3] - y[0] * x[5]),
            x[0] * y[4] - x[1] * y[3] - (y[0] * x[4] - y[1] * x[3]))


@_jit
def coad_apply(x, f, out):
    """Write ad*_x f = (m * w + n * v, n * w) for a twist x = (w, v), wrench f = (m, n)."""
    out[0] = f[1] * x[2] - f[2] * x[1] + f[4] * x[5] - f[5] * x[4]
    out[1] = f[2] * x[0] - f[0] * x[2] + f[5] * x[3] - f[3] * x[5]
    out[2] = f[0] * x[1] - f[1] * x[0] + f[3] * x[4] - f[4] * x[3]
    out[3] = f[4] * x[2] - f[5] * x[1]
    out[4] = f[5] * x[0] - f[3] * x[2]
    out[5] = f[3] * x[1] - f[4] * x[0]


@_jit
def se3_exp(omega, R, p):
    """R = exp(hat(w)) (Rodrigues), p = J_l(w) v for omega = (w, v) [rad, m].

    Coefficients sin t/t, (1 - cos t)/t^2, (t - sin t)/t^3 from their series below 0.1 rad.
    """
    t2 = omega[0] * omega[0] + omega[1] * omega[1] + omega[2] * omega[2]
    t = math.sqrt(t2)
    if t < 0.1:
        a = 1.0 - t2 / 6.0 * (1.0 - t2 / 20.0 * (1.0 - t2 / 42.0 * (1.0 - t2 / 72.0)))
        b = 0.5 * (1.0 - t2 / 12.0 * (1.0 - t2 / 30.0 * (1.0 - t2 / 56.0 * (1.0 - t2 / 90.0))))
        c = (1.0 - t2 / 20.0 * (1.0 - t2 / 42.0 * (1.0 - t2 / 72.0 * (1.0 - t2 / 110.0)))) / 6.0
    else:
        s = math.sin(t)
        half = math.sin(0.5 * t)
        a, b, c = s / t, 2.0 * half * half / t2, (t - s) / (t2 * t)
    w0, w1, w2 = omega[0], omega[1], omega[2]
    # hat(w)^2 = w w^T - t^2 I
    for r in range(3):
        for col in range(3):
            R[r, col] = b * omega[r] * omega[col]
        R[r, r] += 1.0 - b * t2
    R[0, 1] -= a * w2
    R[0, 2] += a * w1
    R[1, 0] += a * w2
    R[1, 2] -= a * w0
    R[2, 0] -= a * w1
    R[2, 1] += a * w0
    v0, v1, v2 = omega[3], omega[4], omega[5]
    wv = w0 * v0 + w1 * v1 + w2 * v2
    cx0, cx1, cx2 = w1 * v2 - w2 * v1, w2 * v0 - w0 * v2, w0 * v1 - w1 * v0
    # J_l v = v + b w x v + c w x (w x v),  w x (w x v) = w (w.v) - t^2 v
    p[0] = v0 + b * cx0 + c * (w0 * wv - t2 * v0)
    p[1] = v1 + b * cx1 + c * (w1 * wv - t2 * v1)
    p[2] = v2 + b * cx2 + c * (w2 * wv - t2 * v2)


@_jit
def adinv_apply(R, p, x, out, carry):
    """Write Ad_g^-1 x for g = (R, p) into out (`transport_twist`); out may be x.

    ``carry``: (9,) scratch (a copy of x, then the transport's own).
    """
    for i in range(6):
        carry[i] = x[i]
    transport_twist(R, p, carry[:3], carry[3:6], out[:3], out[3:], carry[6:])


@_jit
def adinv_columns(R, p, J, cols, count):
    """Ad_g^-1 on the columns ``cols[:count]`` of J (6 x nv), in place (`transport_twist`).

    R and p held in registers over the columns: the walk's costliest transport.
    """
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = (R[0, 0], R[0, 1], R[0, 2], R[1, 0], R[1, 1],
                                                   R[1, 2], R[2, 0], R[2, 1], R[2, 2])
    p0, p1, p2 = p[0], p[1], p[2]
    for k in range(count):
        c = cols[k]
        w0, w1, w2 = J[0, c], J[1, c], J[2, c]
        v0 = J[3, c] + w1 * p2 - w2 * p1
        v1 = J[4, c] + w2 * p0 - w0 * p2
        v2 = J[5, c] + w0 * p1 - w1 * p0
        J[0, c] = r00 * w0 + r10 * w1 + r20 * w2
        J[1, c] = r01 * w0 + r11 * w1 + r21 * w2
        J[2, c] = r02 * w0 + r12 * w1 + r22 * w2
        J[3, c] = r00 * v0 + r10 * v1 + r20 * v2
        J[4, c] = r01 * v0 + r11 * v1 + r21 * v2
        J[5, c] = r02 * v0 + r12 * v1 + r22 * v2


@_inline
def _cross(a0, a1, a2, b0, b1, b2):
    """Return a x b as three scalars."""
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@_inline
def _cross_with(a0, a1, a2, b):
    """Return a x b for a 3-tuple b, as three scalars."""
    return a1 * b[2] - a2 * b[1], a2 * b[0] - a0 * b[2], a0 * b[1] - a1 * b[0]


@_inline
def _q_products(w0, w1, w2, v0, v1, v2, x0, x1, x2):
    """Return Px, PPx, Rx, PRx, RPx, PRPx, PPRx, RPPx, PRPPx, PPRPx (3-tuples) for x.

    P = hat(w), R = hat(v): the products J_r's blocks are made of (`right_jacobian_blocks`),
    and its rate's terms at x = w' (`right_jacobian_rate`).
    """
    px = _cross(w0, w1, w2, x0, x1, x2)
    ppx = _cross_with(w0, w1, w2, px)
    rx = _cross(v0, v1, v2, x0, x1, x2)
    prx = _cross_with(w0, w1, w2, rx)
    rpx = _cross_with(v0, v1, v2, px)
    prpx = _cross_with(w0, w1, w2, rpx)
    pprx = _cross_with(w0, w1, w2, prx)
    rppx = _cross_with(v0, v1, v2, ppx)
    prppx = _cross_with(w0, w1, w2, rppx)
    pprpx = _cross_with(w0, w1, w2, prpx)
    return px, ppx, rx, prx, rpx, prpx, pprx, rppx, prppx, pprpx


# Series in s = t^2 of c2 = sum_k>=2 (-1)^k s^(k-2) / (2k)! and c3 = sum_k>=2 (-1)^k (k-1)
# s^(k-2) / (2k+1)! (`right_jacobian_coefficients`), differentiated: their rates d/ds for
# s < 1, to 1e-20 with k <= 11 (the closed forms lose digits to cancellation as s -> 0).
C2_RATE_SERIES = np.array([(-1.0) ** k * (k - 2) / math.factorial(2 * k) for k in range(3, 12)])
C3_RATE_SERIES = np.array([(-1.0) ** k * (k - 1) * (k - 2) / math.factorial(2 * k + 1)
                           for k in range(3, 12)])


@_jit
def right_jacobian_coefficients(omega, out):
    """Write (b, c1, c2, c3, dc2/ds, dc3/ds) of J_r(Omega), t = |w| of omega = (w, v), s = t^2.

    b = (1 - cos t)/t^2, c1 = (t - sin t)/t^3, c2 = (t^2 + 2 cos t - 2)/(2 t^4),
    c3 = (2 t - 3 sin t + t cos t)/(2 t^5), from their series below 0.1 rad (they cancel);
    their rates in s (for J_r's time derivative, `right_jacobian_rate`): db/ds = c2 - c1/2,
    dc1/ds = -c3, dc2/ds = (c1/2 - 2 c2)/s, dc3/ds = (c1/2 - c2 - 5 c3)/(2 s), the last two
    from their series below 1 rad.
    """
    t2 = omega[0] * omega[0] + omega[1] * omega[1] + omega[2] * omega[2]
    if t2 < 0.01:
        out[0] = 0.5 - t2 * (1.0 / 24.0 - t2 * (1.0 / 720.0 - t2 * (1.0 / 40320.0)))
        out[1] = 1.0 / 6.0 - t2 * (1.0 / 120.0 - t2 * (1.0 / 5040.0 - t2 / 362880.0))
        out[2] = 1.0 / 24.0 - t2 * (1.0 / 720.0 - t2 * (1.0 / 40320.0 - t2 / 3628800.0))
        out[3] = 1.0 / 120.0 - t2 * (1.0 / 2520.0 - t2 * (1.0 / 120960.0 - t2 / 9979200.0))
    else:
        t = math.sqrt(t2)
        half = math.sin(0.5 * t)
        out[0] = 2.0 * half * half / t2
        out[1] = (t - math.sin(t)) / (t2 * t)
        out[2] = (0.5 - out[0]) / t2
        out[3] = (3.0 * out[1] - out[0]) / (2.0 * t2)
    if t2 < 1.0:
        d2 = 0.0
        d3 = 0.0
        for k in range(C2_RATE_SERIES.shape[0] - 1, -1, -1):
            d2 = d2 * t2 + C2_RATE_SERIES[k]
            d3 = d3 * t2 + C3_RATE_SERIES[k]
        out[4], out[5] = d2, d3
    else:
        out[4] = (0.5 * out[1] - 2.0 * out[2]) / t2
        out[5] = (0.5 * out[1] - out[2] - 5.0 * out[3]) / (2.0 * t2)


@_jit
def right_jacobian_blocks(omega, coefficients, blocks):
    """Write J_r(Omega)'s blocks A (blocks[0]) and Q_r (blocks[1]): J_r = [[A, 0], [Q_r, A]].

    With P = hat(w), R = hat(v) of Omega = (w, v) and ``coefficients`` (b, c1, c2, c3)
    (`right_jacobian_coefficients`): A = I - b P + c1 P^2 and
    Q_r = -R/2 + c1 (PR + RP - PRP) + c2 (3 PRP - PPR - RPP) + c3 (PRPP + PPRP)
    (Barfoot's Q at (-w, -v)), built column by column (Q_r e_i by cross products). Once per
    Magnus step; `right_jacobian_apply` then costs 27 multiply-adds a vector.
    """
    b, c1, c2, c3 = coefficients[0], coefficients[1], coefficients[2], coefficients[3]
    w0, w1, w2, v0, v1, v2 = omega[0], omega[1], omega[2], omega[3], omega[4], omega[5]
    for i in range(3):
        x0, x1, x2 = 1.0 if i == 0 else 0.0, 1.0 if i == 1 else 0.0, 1.0 if i == 2 else 0.0
        px, ppx, rx, prx, rpx, prpx, pprx, rppx, prppx, pprpx = _q_products(
            w0, w1, w2, v0, v1, v2, x0, x1, x2)
        for r in range(3):
            blocks[0, r, i] = (1.0 if r == i else 0.0) - b * px[r] + c1 * ppx[r]
            blocks[1, r, i] = (-0.5 * rx[r] + c1 * (prx[r] + rpx[r] - prpx[r])
                               + c2 * (3.0 * prpx[r] - pprx[r] - rppx[r])
                               + c3 * (prppx[r] + pprpx[r]))


@_jit
def right_jacobian_apply(blocks, x, out):
    """Write J_r(Omega) x = (A x_w, Q_r x_w + A x_v) from `right_jacobian_blocks`; out not x."""
    A, Q = blocks[0], blocks[1]
    x0, x1, x2, x3, x4, x5 = x[0], x[1], x[2], x[3], x[4], x[5]
    for r in range(3):
        out[r] = A[r, 0] * x0 + A[r, 1] * x1 + A[r, 2] * x2
        out[3 + r] = (Q[r, 0] * x0 + Q[r, 1] * x1 + Q[r, 2] * x2
                      + A[r, 0] * x3 + A[r, 1] * x4 + A[r, 2] * x5)


@_jit
def right_jacobian_rate(omega, coefficients, rate, out):
    """Write (d/dt J_r(Omega)) Omega' for Omega' = ``rate``, closed form.

    J_r's blocks (`right_jacobian_blocks`) differentiated along Omega' = (x, u): with
    X = hat(x), U = hat(u) the rates of P, R, and the coefficients' rates k' = (dk/ds) s',
    s' = 2 w.x (`right_jacobian_coefficients`), out = (A' x, Q_r' x + A' u) where

        A' y = -b' P y - b X y + c1' P^2 y + c1 (X P + P X) y,

    and Q_r' x is the product rule on each term of Q_r, the terms with X x = 0 left out.
    The reference (``reference.cosserat_rod.right_jacobian_rate``) sums the series of
    J_r = sum_n (-1)^n ad_Omega^n / (n+1)! instead.
    """
    b, c1, c2, c3 = coefficients[0], coefficients[1], coefficients[2], coefficients[3]
    w0, w1, w2, v0, v1, v2 = omega[0], omega[1], omega[2], omega[3], omega[4], omega[5]
    x0, x1, x2, u0, u1, u2 = rate[0], rate[1], rate[2], rate[3], rate[4], rate[5]
    ds = 2.0 * (w0 * x0 + w1 * x1 + w2 * x2)
    db, dc1 = (c2 - 0.5 * c1) * ds, -c3 * ds
    dc2, dc3 = coefficients[4] * ds, coefficients[5] * ds
    px, ppx, rx, prx, rpx, prpx, pprx, rppx, prppx, pprpx = _q_products(
        w0, w1, w2, v0, v1, v2, x0, x1, x2)
    # the rates' products: X y = x x y, U y = u x y
    ux = _cross(u0, u1, u2, x0, x1, x2)                 # U x
    xpx = _cross_with(x0, x1, x2, px)                   # X P x
    xrx = _cross_with(x0, x1, x2, rx)                   # X R x
    pux = _cross_with(w0, w1, w2, ux)                   # P U x
    upx = _cross_with(u0, u1, u2, px)                   # U P x
    xrpx = _cross_with(x0, x1, x2, rpx)                 # X R P x
    pupx = _cross_with(w0, w1, w2, upx)                 # P U P x
    xprx = _cross_with(x0, x1, x2, prx)                 # X P R x
    pxrx = _cross_with(w0, w1, w2, xrx)                 # P X R x
    ppux = _cross_with(w0, w1, w2, pux)                 # P P U x
    uppx = _cross_with(u0, u1, u2, ppx)                 # U P P x
    rxpx = _cross_with(v0, v1, v2, xpx)                 # R X P x
    xrppx = _cross_with(x0, x1, x2, rppx)               # X R P P x
    puppx = _cross_with(w0, w1, w2, uppx)               # P U P P x
    prxpx = _cross_with(w0, w1, w2, rxpx)               # P R X P x
    xprpx = _cross_with(x0, x1, x2, prpx)               # X P R P x
    pxrpx = _cross_with(w0, w1, w2, xrpx)               # P X R P x
    ppupx = _cross_with(w0, w1, w2, pupx)               # P P U P x
    # A' u
    pu = _cross(w0, w1, w2, u0, u1, u2)
    ppu = _cross_with(w0, w1, w2, pu)
    xu = _cross(x0, x1, x2, u0, u1, u2)
    xpu = _cross_with(x0, x1, x2, pu)
    pxu = _cross_with(w0, w1, w2, xu)
    for r in range(3):
        out[r] = -db * px[r] + dc1 * ppx[r] + c1 * xpx[r]
        out[3 + r] = (-0.5 * ux[r]
                      + dc1 * (prx[r] + rpx[r] - prpx[r])
                      + c1 * (xrx[r] + pux[r] + upx[r] - xrpx[r] - pupx[r])
                      + dc2 * (3.0 * prpx[r] - pprx[r] - rppx[r])
                      + c2 * (3.0 * (xrpx[r] + pupx[r]) - xprx[r] - pxrx[r] - ppux[r]
                              - uppx[r] - rxpx[r])
                      + dc3 * (prppx[r] + pprpx[r])
                      + c3 * (xrppx[r] + puppx[r] + prxpx[r] + xprpx[r] + pxrpx[r] + ppupx[r])
                      - db * pu[r] - b * xu[r] + dc1 * ppu[r] + c1 * (xpu[r] + pxu[r]))
