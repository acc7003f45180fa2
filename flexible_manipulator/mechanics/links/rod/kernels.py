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
from ...chain_kernels.spatial import (ad_apply, right_jacobian_apply,
                                      right_jacobian_coefficients, right_jacobian_rate, se3_exp,
                                      series_terms)
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
