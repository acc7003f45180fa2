"""The Cosserat rod's steps in the walk (numba): Magnus steps between its nodes.

Link j's rod has ``model.segment_count[j]`` segments from ``segment_start[j]``; a segment
of length h with the strain basis B1, B2 at its two Gauss points steps by exp(Omega),
Omega = h/2 (xi1 + xi2) + sqrt(3) h^2 / 12 ad_xi1 xi2 (fourth-order Magnus), and adds
its columns S = J_r(Omega) dOmega/dq to J, its twist and its bias (`step`); the section
inertia at each node is a body (``bodies.body``). The equations are in
``cosserat.rod``'s module doc, their NumPy form in ``reference.cosserat_rod``.
"""

import math

from ... import compiled
from ...chain_kernels.spatial import (ad_apply, ad_tuple, right_jacobian_apply,
                                      right_jacobian_blocks, right_jacobian_coefficients,
                                      right_jacobian_rate, se3_exp)
from ...model.bodies import body
from ...model.frame_steps import add_motion, compose_pose, transport
from ...model.layout import DATA_TYPE, MODEL_TYPE
from ...tuple_tables import unpack

_jit, _inline = compiled.jit, compiled.inline
SQRT3_12 = math.sqrt(3.0) / 12.0


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
    # Phi = h/2 (B1 + B2) + c (ad_xi1 B2 - ad_xi2 B1), column by column; rate = Phi v.
    # Scalars in registers: the per-column calls and copies cost more than the products.
    phi, rate = data.phi, data.rate
    x1 = (xi1[0], xi1[1], xi1[2], xi1[3], xi1[4], xi1[5])
    x2 = (xi2[0], xi2[1], xi2[2], xi2[3], xi2[4], xi2[5])
    half = 0.5 * h
    for i in range(6):
        rate[i] = 0.0
    for col in range(m):
        b1 = (B1[0, col], B1[1, col], B1[2, col], B1[3, col], B1[4, col], B1[5, col])
        b2 = (B2[0, col], B2[1, col], B2[2, col], B2[3, col], B2[4, col], B2[5, col])
        t = ad_tuple(x1, b2)
        u = ad_tuple(x2, b1)
        rate_col = v[start + col]
        for i in range(6):
            value = half * (b1[i] + b2[i]) + c * (t[i] - u[i])
            phi[i, col] = value
            rate[i] += value * rate_col
    right_jacobian_coefficients(omega, data.coefficients)
    right_jacobian_blocks(omega, data.coefficients, data.jacobian)
    se3_exp(omega, data.R, data.p)
    transport(data.R, data.p, data, data.count[0])
    # S = J_r(Omega) Phi into J's columns; s = J_r rate; bias J_r drift + D(Omega, rate)
    A, Q = data.jacobian[0], data.jacobian[1]
    a00, a01, a02, a10, a11, a12, a20, a21, a22 = (A[0, 0], A[0, 1], A[0, 2], A[1, 0], A[1, 1],
                                                   A[1, 2], A[2, 0], A[2, 1], A[2, 2])
    q00, q01, q02, q10, q11, q12, q20, q21, q22 = (Q[0, 0], Q[0, 1], Q[0, 2], Q[1, 0], Q[1, 1],
                                                   Q[1, 2], Q[2, 0], Q[2, 1], Q[2, 2])
    J = data.J
    for col in range(m):
        p0, p1, p2, p3, p4, p5 = (phi[0, col], phi[1, col], phi[2, col], phi[3, col],
                                  phi[4, col], phi[5, col])
        k = start + col
        J[0, k] += a00 * p0 + a01 * p1 + a02 * p2
        J[1, k] += a10 * p0 + a11 * p1 + a12 * p2
        J[2, k] += a20 * p0 + a21 * p1 + a22 * p2
        J[3, k] += q00 * p0 + q01 * p1 + q02 * p2 + a00 * p3 + a01 * p4 + a02 * p5
        J[4, k] += q10 * p0 + q11 * p1 + q12 * p2 + a10 * p3 + a11 * p4 + a12 * p5
        J[5, k] += q20 * p0 + q21 * p1 + q22 * p2 + a20 * p3 + a21 * p4 + a22 * p5
    right_jacobian_apply(data.jacobian, rate, data.s)
    add_motion(data, data.s)
    ad_apply(d1, d2, data.t2)
    for i in range(6):
        data.t2[i] *= 2.0 * c
    right_jacobian_apply(data.jacobian, data.t2, data.t3)
    right_jacobian_rate(omega, data.coefficients, rate, data.t1)
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
def to_section(model, data, data_table, j, start, m, count, segments, h, B1, B2, q, v):
    """Walk link j's rod from its joint frame to a section, without bodies.

    ``segments`` whole segments, then the partial step of length h (B1, B2: its basis at
    its Gauss points); ``model``, ``data``: the unpacked tables (an inlined step unpacks
    none: each unpack adds to its caller's compile time).
    """
    data.count[0] = count - m
    first = model.segment_start[j]
    for k in range(first, first + segments):
        step(model.seg_h[k], model.seg_B1[k], model.seg_B2[k], model.seg_reference[k],
             data_table, start, m, q, v)
        data.count[0] = count
    if h > 0.0:
        step(h, B1, B2, model.seg_reference[first], data_table, start, m, q, v)


@_inline
def section_pose(model, data_table, j, start, m, segments, h, B1, B2, q):
    """Move the pose only to a section of link j's rod (`to_section` without J or twist)."""
    first = model.segment_start[j]
    for k in range(first, first + segments):
        pose_step(model.seg_h[k], model.seg_B1[k], model.seg_B2[k], model.seg_reference[k],
                  data_table, start, m, q)
    if h > 0.0:
        pose_step(h, B1, B2, model.seg_reference[first], data_table, start, m, q)
