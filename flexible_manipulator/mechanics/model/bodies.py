"""What a body adds where the walk passes it (`body`, by the walk's ``bodies`` mode).

M and h, its link's articulated sums, the gravity energy or its inverse-dynamics wrench.

A body of inertia I (6 x 6 at the current frame, angular first) with twist eta and bias
alpha adds J^T I J to M and J^T (I alpha - ad*_eta I eta) to h on the active columns
(`accumulate`); in a link-local walk (articulated pass 1, inverse dynamics) it adds to
its link's sums at the handle (`add_to_link`, `add_force_to_link`; ``articulated`` doc).
"""

import numpy as np

from .. import compiled
from ..chain_kernels.spatial import add_transformed_inertia, coad_apply
from ..tuple_tables import unpack
from .layout import DATA_TYPE, MODEL_TYPE

_jit, _inline = compiled.jit, compiled.inline
# What the walk (``kernels._link``) does with the bodies it passes. Callers pass
# np.int64(...) of these: a literal int would compile one `_link` per value (numba types
# constants as literals).
FRAMES_ONLY, MASS_AND_BIAS, ARTICULATED, POTENTIAL, INVERSE = 0, 1, 2, 3, 4


@_inline
def inertial_wrench(inertia, data):
    """Return data.t1 = I alpha - ad*_eta I eta: the body's wrench at zero v' (t2, t3 used)."""
    force, momentum, twist_load = data.t1, data.t2, data.t3
    for r in range(6):
        acc_f = 0.0
        acc_m = 0.0
        for i in range(6):
            acc_f += inertia[r, i] * data.alpha[i]
            acc_m += inertia[r, i] * data.eta[i]
        force[r] = acc_f
        momentum[r] = acc_m
    coad_apply(data.eta, momentum, twist_load)
    for r in range(6):
        force[r] -= twist_load[r]
    return force


@_jit        # not inlined: one copy for every body (compile time)
def accumulate(inertia, data_table, count):
    """Add J^T I J to M and J^T (I alpha - ad*_eta I eta) on the active columns.

    A diagonal I (a rod's section, in its principal axes) takes 6 products a column for
    I J instead of 36; each column of J is held in registers against the others.
    """
    data = unpack(data_table, DATA_TYPE)
    J, IJ, cols = data.J, data.IJ, data.cols
    if _is_diagonal(inertia):
        d0, d1, d2 = inertia[0, 0], inertia[1, 1], inertia[2, 2]
        d3, d4, d5 = inertia[3, 3], inertia[4, 4], inertia[5, 5]
        for k in range(count):
            c = cols[k]
            IJ[0, c] = d0 * J[0, c]
            IJ[1, c] = d1 * J[1, c]
            IJ[2, c] = d2 * J[2, c]
            IJ[3, c] = d3 * J[3, c]
            IJ[4, c] = d4 * J[4, c]
            IJ[5, c] = d5 * J[5, c]
    else:
        for k in range(count):
            c = cols[k]
            for r in range(6):
                acc = 0.0
                for i in range(6):
                    acc += inertia[r, i] * J[i, c]
                IJ[r, c] = acc
    for a_ in range(count):
        ca = cols[a_]
        j0, j1, j2, j3, j4, j5 = J[0, ca], J[1, ca], J[2, ca], J[3, ca], J[4, ca], J[5, ca]
        for b_ in range(a_, count):
            cb = cols[b_]
            acc = (j0 * IJ[0, cb] + j1 * IJ[1, cb] + j2 * IJ[2, cb] + j3 * IJ[3, cb]
                   + j4 * IJ[4, cb] + j5 * IJ[5, cb])
            data.mass[ca, cb] += acc
            if cb != ca:
                data.mass[cb, ca] += acc
    add_projected(J, cols, count, inertial_wrench(inertia, data), data.bias)


@_inline
def _is_diagonal(inertia):
    """Return True if the 6 x 6 ``inertia`` has no off-diagonal entry."""
    for r in range(6):
        for c in range(6):
            if r != c and inertia[r, c] != 0.0:
                return False
    return True


@_inline
def add_projected(J, cols, count, force, bias):
    """Add J^T force to bias on the active columns cols[:count] (a body's generalized force)."""
    for k in range(count):
        c = cols[k]
        acc = 0.0
        for r in range(6):
            acc += J[r, c] * force[r]
        bias[c] += acc


@_inline
def to_handle(R, p, m0, m1, m2, f0, f1, f2):
    """Return X^T (m, f) = (R m + p x R f, R f), X = Ad^-1 of (R, p), as six scalars."""
    g0 = R[0, 0] * f0 + R[0, 1] * f1 + R[0, 2] * f2
    g1 = R[1, 0] * f0 + R[1, 1] * f1 + R[1, 2] * f2
    g2 = R[2, 0] * f0 + R[2, 1] * f1 + R[2, 2] * f2
    return (R[0, 0] * m0 + R[0, 1] * m1 + R[0, 2] * m2 + p[1] * g2 - p[2] * g1,
            R[1, 0] * m0 + R[1, 1] * m1 + R[1, 2] * m2 + p[2] * g0 - p[0] * g2,
            R[2, 0] * m0 + R[2, 1] * m1 + R[2, 2] * m2 + p[0] * g1 - p[1] * g0, g0, g1, g2)


@_jit
def add_to_link(inertia, size, R, p, J, k, force, data_table, j):
    """Add a body or a modal link frame to link j's articulated sums (``articulated`` doc).

    ``inertia`` (size x size): a body's 6 x 6 inertia, or a modal link's generalized mass
    in (w, v, q') of its frame (size = 6 + modes; `points`); (R, p) its pose
    relative to the handle, X = Ad^-1 of it; J (size x k) its local Jacobian (the modal
    rows select the link's modal rates); ``force`` (size) its wrench at zero local and
    handle acceleration (a body's inertial wrench, I^A c_T + p^A of a child). With X
    padded by zero rows: M_HH += X^T I X (`add_transformed_inertia`, by 3 x 3 blocks),
    M_Hl += X^T I J, M_ll += J^T I J, and the force's share (`add_force_to_link`).
    """
    data = unpack(data_table, DATA_TYPE)
    IJ, Hl, ll = data.aba_IJT, data.aba_Hl[j], data.aba_ll[j]
    add_transformed_inertia(R, p, inertia, data.aba_HH[j])
    for a in range(k):
        for r in range(size):
            acc = 0.0
            for i in range(size):
                acc += inertia[r, i] * J[i, a]
            IJ[r, a] = acc
        h0, h1, h2, h3, h4, h5 = to_handle(R, p, IJ[0, a], IJ[1, a], IJ[2, a], IJ[3, a],
                                           IJ[4, a], IJ[5, a])
        Hl[0, a] += h0
        Hl[1, a] += h1
        Hl[2, a] += h2
        Hl[3, a] += h3
        Hl[4, a] += h4
        Hl[5, a] += h5
    for a in range(k):
        for b in range(k):
            acc = 0.0
            for i in range(size):
                acc += J[i, a] * IJ[i, b]
            ll[a, b] += acc
    add_force_to_link(size, R, p, J, k, force, data_table, j)


@_jit
def add_force_to_link(size, R, p, J, k, force, data_table, j):
    """Add ``force`` (size rows) at pose (R, p) to link j: p_H += X^T force, p_l += J^T force.

    The same frames and shapes as `add_to_link`: the body's share of the link's handle
    wrench and local generalized forces (articulated pass 1, and inverse dynamics).
    """
    data = unpack(data_table, DATA_TYPE)
    pH = data.aba_pH[j]
    h0, h1, h2, h3, h4, h5 = to_handle(R, p, force[0], force[1], force[2], force[3],
                                       force[4], force[5])
    pH[0] += h0
    pH[1] += h1
    pH[2] += h2
    pH[3] += h3
    pH[4] += h4
    pH[5] += h5
    for a in range(k):
        acc = 0.0
        for i in range(size):
            acc += J[i, a] * force[i]
        data.aba_pl[j, a] += acc


@_jit        # not inlined: one copy for every body (compile time)
def accumulate_local(inertia, data_table, count, j):
    """Add a body at the current frame to link j's articulated sums (`add_to_link`).

    Its pose relative to the link's handle is data.pose_R, pose_p; J's columns
    cols[:count] are its local Jacobian, eta its twist, alpha its bias c_b.
    """
    data = unpack(data_table, DATA_TYPE)
    for a in range(count):
        for i in range(6):
            data.aba_J[i, a] = data.J[i, data.cols[a]]
    add_to_link(inertia, np.int64(6), data.pose_R, data.pose_p, data.aba_J, count,
                inertial_wrench(inertia, data), data_table, j)


@_inline
def body(model_table, inertia, data_table, count, j, bodies):
    """Add a body to M and h (``bodies`` 1), link j's articulated sums (2) or the energy.

    3: the gravity energy -m g . c, c its centre of mass in the world (hat(c_b) m = I_12).
    A body without inertia (an empty payload or hub) adds nothing and is skipped: an
    inertia is positive semi-definite, so a zero diagonal makes it zero.
    """
    for i in range(6):
        if inertia[i, i] != 0.0:
            break
    else:
        return
    if bodies == 1:
        accumulate(inertia, data_table, count)
    elif bodies == 2:
        accumulate_local(inertia, data_table, count, j)
    elif bodies == 3:
        add_potential(model_table, inertia, data_table)
    else:
        accumulate_inverse(inertia, data_table, count, j)


@_jit        # not inlined: one copy for every body (compile time)
def accumulate_inverse(inertia, data_table, count, j):
    """Add a body's f = I (alpha + J a) - ad*_eta I eta to link j's p_H and p_l (RNEA).

    In the link-local walk of `inverse_dynamics`: alpha already holds the handle's
    acceleration carried to the body, J a (a = data.given) adds the link's own
    coordinates' share; the pose is relative to the handle (`add_force_to_link`).
    """
    data = unpack(data_table, DATA_TYPE)
    J, cols, ja = data.J, data.cols, data.column
    force = inertial_wrench(inertia, data)
    for i in range(6):
        acc = 0.0
        for k in range(count):
            acc += J[i, cols[k]] * data.given[cols[k]]
            data.aba_J[i, k] = J[i, cols[k]]
        ja[i] = acc
    for r in range(6):
        acc = 0.0
        for i in range(6):
            acc += inertia[r, i] * ja[i]
        force[r] += acc
    add_force_to_link(np.int64(6), data.pose_R, data.pose_p, data.aba_J, count, force,
                      data_table, j)


@_jit
def add_potential(model_table, inertia, data_table):
    """Add -m g . (R c + p) of a body at the current pose (R, p) to data.energy[0]."""
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    mass = inertia[5, 5]
    if mass > 0.0:
        c0, c1, c2 = inertia[2, 4] / mass, inertia[0, 5] / mass, inertia[1, 3] / mass
        for i in range(3):
            position = (data.pose_p[i] + data.pose_R[i, 0] * c0 + data.pose_R[i, 1] * c1
                        + data.pose_R[i, 2] * c2)
            data.energy[0] -= mass * model.gravity[i] * position
