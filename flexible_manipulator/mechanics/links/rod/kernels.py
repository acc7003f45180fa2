"""The Cosserat rod's steps in the walk (numba): Magnus steps between its nodes.

Link j's rod has ``model.segment_count[j]`` segments from ``segment_start[j]``; a segment
of length h with the strain basis B1, B2 at its two Gauss points steps by exp(Omega),
Omega = h/2 (xi1 + xi2) + sqrt(3) h^2 / 12 ad_xi1 xi2 (fourth-order Magnus), and adds
its columns S = J_r(Omega) dOmega/dq to J, its twist and its bias (`step`); the section
inertia at each node is a body (``bodies.body``). The equations are in
``cosserat.rod``'s module doc, their NumPy form in ``reference.cosserat_rod``.
"""

import math

import numpy as np

from ... import compiled
from ...chain_kernels.spatial import ad_apply, cross, se3_exp
from ...cosserat.bodies import body
from ...cosserat.frame_steps import add_motion, compose_pose, transport
from ...cosserat.layout import DATA_TYPE, MODEL_TYPE
from ...tuple_tables import unpack
from .layout import MAX_TERMS

_jit, _inline = compiled.jit, compiled.inline
SQRT3_12 = math.sqrt(3.0) / 12.0
# (-1)^n / (n+1)!, the coefficients of J_r(Omega) = sum_n (-1)^n ad_Omega^n / (n+1)!
SERIES_COEFFICIENTS = np.array([(-1.0) ** n / math.factorial(n + 1)
                                for n in range(MAX_TERMS + 2)])


@_jit
def series_terms(omega):
    """Terms n of the series in ad_Omega: the first with (2 |Omega|_1)^n / (n+1)! < 1e-17.

    |ad_Omega| <= 2 |Omega|_1 (in the 1-norm of twists), so the neglected tail of
    sum_n ad_Omega^n / (n+1)! is below ~1e-17 of its first term.
    """
    size = 0.0
    for i in range(6):
        size += abs(omega[i])
    size *= 2.0
    bound = 1.0
    for n in range(1, MAX_TERMS):
        bound *= size / (n + 1)
        if bound < 1e-17:
            return n
    return MAX_TERMS - 1


@_jit
def right_jacobian_coefficients(omega, out):
    """Write (b, c1, c2, c3) of J_r(Omega) for the rotation angle t = |w| of omega = (w, v).

    b = (1 - cos t)/t^2, c1 = (t - sin t)/t^3, c2 = (t^2 + 2 cos t - 2)/(2 t^4),
    c3 = (2 t - 3 sin t + t cos t)/(2 t^5); from their series below 0.1 rad (they cancel).
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


@_jit
def right_jacobian_apply(omega, coefficients, x, out, work):
    """Write J_r(Omega) x = [[A, 0], [Q_r, A]] x, closed form (``lie.se3_right_jacobian``).

    With P = hat(w), R = hat(v) of Omega = (w, v) and ``coefficients`` (b, c1, c2, c3)
    (`right_jacobian_coefficients`): A = I - b P + c1 P^2 and
    Q_r = -R/2 + c1 (PR + RP - PRP) + c2 (3 PRP - PPR - RPP) + c3 (PRPP + PPRP)
    (Barfoot's Q at (-w, -v)). ``work``: (10, 3) scratch; out must not be x.
    """
    b, c1, c2, c3 = coefficients[0], coefficients[1], coefficients[2], coefficients[3]
    w, v = omega[:3], omega[3:]
    xa, xl = x[:3], x[3:]
    px, ppx, rx, prx, rpx, prpx, pprx, rppx, prppx, pprpx = (
        work[0], work[1], work[2], work[3], work[4], work[5], work[6], work[7], work[8],
        work[9])
    cross(w, xa, px)
    cross(w, px, ppx)
    cross(v, xa, rx)
    cross(w, rx, prx)
    cross(v, px, rpx)
    cross(w, rpx, prpx)
    cross(w, prx, pprx)
    cross(v, ppx, rppx)
    cross(w, rppx, prppx)
    cross(w, prpx, pprpx)
    for i in range(3):
        out[i] = xa[i] - b * px[i] + c1 * ppx[i]
        out[3 + i] = (-0.5 * rx[i] + c1 * (prx[i] + rpx[i] - prpx[i])
                      + c2 * (3.0 * prpx[i] - pprx[i] - rppx[i]) + c3 * (prppx[i] + pprpx[i]))
    cross(w, xl, px)
    cross(w, px, ppx)
    for i in range(3):
        out[3 + i] += xl[i] - b * px[i] + c1 * ppx[i]


@_jit
def right_jacobian_rate(omega, terms, rate, out, powers, partial, nxt):
    """Write (d/dt J_r(Omega)) Omega' for Omega' = ``rate`` (``reference.cosserat_rod``'s).

    With y_m = ad_Omega^m Omega' (rows of ``powers``) and c_n = (-1)^n/(n+1)!:
    out = sum_j ad_Omega^j z_j, z_j = ad_Omega' sum_{m>=1} c_{m+j+1} y_m, by Horner's rule.
    """
    used = terms + 1
    for i in range(6):
        powers[0, i] = rate[i]
    for m in range(1, used):
        ad_apply(omega, powers[m - 1], powers[m])
    for i in range(6):
        out[i] = 0.0
    for j in range(used - 1, -1, -1):
        for i in range(6):
            partial[i] = 0.0
        for m in range(1, used - j):
            c = SERIES_COEFFICIENTS[m + j + 1]
            for i in range(6):
                partial[i] += c * powers[m, i]
        ad_apply(omega, out, nxt)
        ad_apply(rate, partial, out)
        for i in range(6):
            out[i] += nxt[i]


@_jit        # not inlined: one copy for every walk (compile time)
def step(h, B1, B2, reference, data_table, start, m, q, v):
    """One Magnus step of length h (strains q[start:start+m]): transport and add S, s, c.

    B1, B2: the strain basis at its two Gauss points; ``reference``: the unstrained twist
    (rest curvatures, 1, 0, 0).
    """
    data = unpack(data_table, DATA_TYPE)
    c = SQRT3_12 * h * h
    xi1, xi2, d1, d2 = data.xi1, data.xi2, data.d1, data.d2
    for i in range(6):
        a1 = reference[i]
        a2 = reference[i]
        r1 = 0.0
        r2 = 0.0
        for col in range(m):
            a1 += B1[i, col] * q[start + col]
            a2 += B2[i, col] * q[start + col]
            r1 += B1[i, col] * v[start + col]
            r2 += B2[i, col] * v[start + col]
        xi1[i], xi2[i], d1[i], d2[i] = a1, a2, r1, r2
    omega = data.omega
    ad_apply(xi1, xi2, data.t1)
    for i in range(6):
        omega[i] = 0.5 * h * (xi1[i] + xi2[i]) + c * data.t1[i]
    # Phi = h/2 (B1 + B2) + c (ad_xi1 B2 - ad_xi2 B1), column by column; rate = Phi v
    phi, rate = data.phi, data.rate
    for i in range(6):
        rate[i] = 0.0
    for col in range(m):
        for i in range(6):
            data.t2[i] = B2[i, col]
            data.t3[i] = B1[i, col]
        ad_apply(xi1, data.t2, data.t1)
        ad_apply(xi2, data.t3, data.column)
        for i in range(6):
            value = 0.5 * h * (B1[i, col] + B2[i, col]) + c * (data.t1[i] - data.column[i])
            phi[i, col] = value
            rate[i] += value * v[start + col]
    terms = series_terms(omega)
    right_jacobian_coefficients(omega, data.coefficients)
    se3_exp(omega, data.R, data.p)
    transport(data.R, data.p, data, data.count[0])
    # S = J_r(Omega) Phi into J's columns; s = J_r rate; bias J_r drift + D(Omega, rate)
    for col in range(m):
        for i in range(6):
            data.t2[i] = phi[i, col]
        right_jacobian_apply(omega, data.coefficients, data.t2, data.t3, data.work)
        for i in range(6):
            data.J[i, start + col] += data.t3[i]
    right_jacobian_apply(omega, data.coefficients, rate, data.s, data.work)
    add_motion(data, data.s)
    ad_apply(d1, d2, data.t2)
    for i in range(6):
        data.t2[i] *= 2.0 * c
    right_jacobian_apply(omega, data.coefficients, data.t2, data.t3, data.work)
    right_jacobian_rate(omega, terms, rate, data.t1, data.powers, data.partial, data.column)
    for i in range(6):
        data.alpha[i] += data.t3[i] + data.t1[i]


@_jit        # not inlined: one copy for every section of the transforms
def pose_step(h, B1, B2, reference, data_table, start, m, q):
    """Move pose_R, pose_p by exp(Omega), the step of `step` without the rest.

    Omega = h/2 (xi1 + xi2) + sqrt(3) h^2 / 12 ad_xi1 xi2 from the strains at the two
    Gauss points; no Jacobian, twist or bias (the transforms need poses only).
    """
    data = unpack(data_table, DATA_TYPE)
    xi1, xi2 = data.xi1, data.xi2
    for i in range(6):
        a1 = reference[i]
        a2 = reference[i]
        for col in range(m):
            a1 += B1[i, col] * q[start + col]
            a2 += B2[i, col] * q[start + col]
        xi1[i], xi2[i] = a1, a2
    c = SQRT3_12 * h * h
    ad_apply(xi1, xi2, data.t1)
    for i in range(6):
        data.omega[i] = 0.5 * h * (xi1[i] + xi2[i]) + c * data.t1[i]
    se3_exp(data.omega, data.R, data.p)
    compose_pose(data.R, data.p, data)


@_jit        # not inlined: one copy for every walk (compile time)
def walk(model_table, data_table, j, start, m, q, v, count, bodies):
    """Walk link j's rod from its joint frame to its tip: each segment, then its node's body.

    ``count``: the active columns, the rod's strains (start .. start + m) the last m of
    them, zero in J until the first segment adds them; ``bodies`` as ``kernels._link``.
    """
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    data.count[0] = count - m            # the new strain columns are zero until added
    for k in range(model.segment_start[j], model.segment_start[j] + model.segment_count[j]):
        step(model.seg_h[k], model.seg_B1[k], model.seg_B2[k], model.seg_reference[k],
             data_table, start, m, q, v)
        data.count[0] = count
        if bodies and model.node_inertia[k, 5, 5] > 0.0:
            body(model_table, model.node_inertia[k], data_table, count, j, bodies)


@_inline
def to_section(model_table, data_table, j, start, m, count, segments, h, B1, B2, q, v):
    """Walk link j's rod from its joint frame to a section, without bodies.

    ``segments`` whole segments, then the partial step of length h (B1, B2: its basis at
    its Gauss points).
    """
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    data.count[0] = count - m
    first = model.segment_start[j]
    for k in range(first, first + segments):
        step(model.seg_h[k], model.seg_B1[k], model.seg_B2[k], model.seg_reference[k],
             data_table, start, m, q, v)
        data.count[0] = count
    if h > 0.0:
        step(h, B1, B2, model.seg_reference[first], data_table, start, m, q, v)


@_inline
def section_pose(model_table, data_table, j, start, m, segments, h, B1, B2, q):
    """Move the pose only to a section of link j's rod (`to_section` without J or twist)."""
    model = unpack(model_table, MODEL_TYPE)
    first = model.segment_start[j]
    for k in range(first, first + segments):
        pose_step(model.seg_h[k], model.seg_B1[k], model.seg_B2[k], model.seg_reference[k],
                  data_table, start, m, q)
    if h > 0.0:
        pose_step(h, B1, B2, model.seg_reference[first], data_table, start, m, q)
