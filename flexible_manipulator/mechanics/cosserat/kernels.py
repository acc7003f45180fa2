"""Compiled forward dynamics and time steppers of a Cosserat chain (numba, no allocation).

The same equations as the NumPy reference (``mechanics.reference.cosserat_chain``, module
docs of ``rod`` and ``chain``), written on preallocated arrays: one forward pass over the
joints and the Magnus steps of every rod carries the frame's body Jacobian J (6 x nv),
twist eta and bias acceleration alpha, and each body with inertia I adds

    M += J^T I J,    h += J^T (I alpha - ad*_eta I eta)

on the columns that can be non-zero (the coordinates of the links passed so far). Then
v' = M^-1 (B u - h) by Cholesky. A floating-frame link (``modal_beam``) adds its point
masses summed in its frame, a generalized body of the frame's twist and its modal rates
(`_modal_points`); its tip frame is reached by the displacement and the two bending turns. A
free-floating base is the first body (its twist is v's last six entries); the steppers
then move its pose on SO(3) x R^3 (``chain_kernels.steppers.integrate``). The rate of
the tangent map J_r(Omega) =
sum_n (-ad_Omega)^n/(n+1)! is summed as a series on vectors to round-off (the
per-segment rotation stays below ~1 rad); J_r itself in closed form. K and D are
diagonal (Legendre strains on a uniform section), so the chain's linearly implicit
stepper hooks apply unchanged.
"""

import math

import numpy as np

from .. import compiled, group_kernels, integrators
from ..chain_kernels.linalg import cholesky_factor, cholesky_substitute
from ..chain_kernels.spatial import (ad_apply, add_transformed_inertia, adinv_apply,
                                     adinv_columns, coad_apply, compose, cross, se3_exp)
from ..chain_kernels.steppers import dexpinv, integrate, stiff_factor, stiff_solve, tangent_rates
from ..tuple_tables import unpack
from .layout import DATA_TYPE, MAX_TERMS, MODEL_TYPE

_jit, _inline = compiled.jit, compiled.inline
# What `_link` does with the bodies it walks past. Callers pass np.int64(...) of these: a
# literal int would compile one `_link` per value (numba types constants as literals).
FRAMES_ONLY, MASS_AND_BIAS, ARTICULATED, POTENTIAL, INVERSE = 0, 1, 2, 3, 4
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


@_inline
def _inertial_wrench(inertia, data):
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
def _accumulate(inertia, data_table, count):
    """Add J^T I J to M and J^T (I alpha - ad*_eta I eta) on the active columns."""
    data = unpack(data_table, DATA_TYPE)
    J, IJ, cols = data.J, data.IJ, data.cols
    for k in range(count):
        c = cols[k]
        for r in range(6):
            acc = 0.0
            for i in range(6):
                acc += inertia[r, i] * J[i, c]
            IJ[r, c] = acc
    for a_ in range(count):
        ca = cols[a_]
        for b_ in range(a_, count):
            cb = cols[b_]
            acc = 0.0
            for r in range(6):
                acc += J[r, ca] * IJ[r, cb]
            data.mass[ca, cb] += acc
            if cb != ca:
                data.mass[cb, ca] += acc
    _add_projected(J, cols, count, _inertial_wrench(inertia, data), data.bias)


@_inline
def _add_projected(J, cols, count, force, bias):
    """Add J^T force to bias on the active columns cols[:count] (a body's generalized force)."""
    for k in range(count):
        c = cols[k]
        acc = 0.0
        for r in range(6):
            acc += J[r, c] * force[r]
        bias[c] += acc


@_inline
def _to_handle(R, p, m0, m1, m2, f0, f1, f2):
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
    in (w, v, q') of its frame (size = 6 + modes; `_modal_points`); (R, p) its pose
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
        h0, h1, h2, h3, h4, h5 = _to_handle(R, p, IJ[0, a], IJ[1, a], IJ[2, a], IJ[3, a],
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
    h0, h1, h2, h3, h4, h5 = _to_handle(R, p, force[0], force[1], force[2], force[3],
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
def _accumulate_local(inertia, data_table, count, j):
    """Add a body at the current frame to link j's articulated sums (`add_to_link`).

    Its pose relative to the link's handle is data.pose_R, pose_p; J's columns
    cols[:count] are its local Jacobian, eta its twist, alpha its bias c_b.
    """
    data = unpack(data_table, DATA_TYPE)
    for a in range(count):
        for i in range(6):
            data.aba_J[i, a] = data.J[i, data.cols[a]]
    add_to_link(inertia, np.int64(6), data.pose_R, data.pose_p, data.aba_J, count,
                _inertial_wrench(inertia, data), data_table, j)


@_inline
def _body(model_table, inertia, data_table, count, j, bodies):
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
        _accumulate(inertia, data_table, count)
    elif bodies == 2:
        _accumulate_local(inertia, data_table, count, j)
    elif bodies == 3:
        _add_potential(model_table, inertia, data_table)
    else:
        _accumulate_inverse(inertia, data_table, count, j)


@_jit        # not inlined: one copy for every body (compile time)
def _accumulate_inverse(inertia, data_table, count, j):
    """Add a body's f = I (alpha + J a) - ad*_eta I eta to link j's p_H and p_l (RNEA).

    In the link-local walk of `inverse_dynamics`: alpha already holds the handle's
    acceleration carried to the body, J a (a = data.given) adds the link's own
    coordinates' share; the pose is relative to the handle (`add_force_to_link`).
    """
    data = unpack(data_table, DATA_TYPE)
    J, cols, ja = data.J, data.cols, data.column
    force = _inertial_wrench(inertia, data)
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
def _add_potential(model_table, inertia, data_table):
    """Add -m g . (R c + p) of a body at the current pose (R, p) to data.energy[0]."""
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    mass = inertia[5, 5]
    if mass > 0.0:
        c0, c1, c2 = inertia[2, 4] / mass, inertia[0, 5] / mass, inertia[1, 3] / mass
        for i in range(3):
            position = (data.pose_p[i] + data.pose_R[i, 0] * c0 + data.pose_R[i, 1] * c1
                        + data.pose_R[i, 2] * c2)
            data.energy[0] -= mass * model.gravity[i] * position


@_inline
def _transport(R, p, data, count):
    """Carry J, eta, alpha and the pose to the frame g = (R, p) relative to the current one."""
    _compose_pose(R, p, data)
    adinv_columns(R, p, data.J, data.cols, count, data.column, data.carry)
    adinv_apply(R, p, data.eta, data.eta, data.carry)
    adinv_apply(R, p, data.alpha, data.alpha, data.carry)


@_inline
def _translate(p0, p1, p2, data, count):
    """`_transport` by a pure translation p: (w, v) -> (w, v + w x p), pose_p += pose_R p."""
    for i in range(3):
        data.pose_p[i] += data.pose_R[i, 0] * p0 + data.pose_R[i, 1] * p1 + data.pose_R[i, 2] * p2
    for k in range(count):
        c = data.cols[k]
        _translate_twist(p0, p1, p2, data.J[:, c])
    _translate_twist(p0, p1, p2, data.eta)
    _translate_twist(p0, p1, p2, data.alpha)


@_inline
def _translate_twist(p0, p1, p2, x):
    """Move a twist x = (w, v) to (w, v + w x p), in place."""
    w0, w1, w2 = x[0], x[1], x[2]
    x[3] += w1 * p2 - w2 * p1
    x[4] += w2 * p0 - w0 * p2
    x[5] += w0 * p1 - w1 * p0


@_inline
def _compose_pose(R, p, data):
    """Move the current pose (pose_R, pose_p) by g = (R, p) relative to it."""
    for i in range(3):
        acc = data.pose_p[i]
        for c in range(3):
            acc += data.pose_R[i, c] * p[c]
        data.carry[i] = acc
    for i in range(3):
        data.pose_p[i] = data.carry[i]
        for c in range(3):
            data.carry[3 + c] = (data.pose_R[i, 0] * R[0, c] + data.pose_R[i, 1] * R[1, c]
                                 + data.pose_R[i, 2] * R[2, c])
        for c in range(3):
            data.pose_R[i, c] = data.carry[3 + c]


@_inline
def _add_motion(data, s):
    """Add s to eta and ad_eta s to alpha (a relative twist s added in the current frame)."""
    for i in range(6):
        data.eta[i] += s[i]
    ad_apply(data.eta, s, data.t1)
    for i in range(6):
        data.alpha[i] += data.t1[i]


@_jit        # not inlined: one copy for every walk (compile time)
def _rod_segment(h, B1, B2, reference, data_table, start, m, q, v):
    """One Magnus step of length h (strains q[start:start+m]): transport and add S, s, c.

    B1, B2: the strain basis at its two Gauss points; ``reference``: the unstrained twist.
    Without strains (m = 0: a rigid link's step to its tip) the step is the constant
    exp(h reference): S, s and c vanish, and the series of J_r are skipped.
    """
    data = unpack(data_table, DATA_TYPE)
    if m == 0:
        if reference[0] == 0.0 and reference[1] == 0.0 and reference[2] == 0.0:
            _translate(h * reference[3], h * reference[4], h * reference[5], data,
                       data.count[0])
            return
        for i in range(6):
            data.omega[i] = h * reference[i]
        se3_exp(data.omega, data.R, data.p)
        _transport(data.R, data.p, data, data.count[0])
        return
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
    _transport(data.R, data.p, data, data.count[0])
    # S = J_r(Omega) Phi into J's columns; s = J_r rate; bias J_r drift + D(Omega, rate)
    for col in range(m):
        for i in range(6):
            data.t2[i] = phi[i, col]
        right_jacobian_apply(omega, data.coefficients, data.t2, data.t3, data.work)
        for i in range(6):
            data.J[i, start + col] += data.t3[i]
    right_jacobian_apply(omega, data.coefficients, rate, data.s, data.work)
    _add_motion(data, data.s)
    ad_apply(d1, d2, data.t2)
    for i in range(6):
        data.t2[i] *= 2.0 * c
    right_jacobian_apply(omega, data.coefficients, data.t2, data.t3, data.work)
    right_jacobian_rate(omega, terms, rate, data.t1, data.powers, data.partial, data.column)
    for i in range(6):
        data.alpha[i] += data.t3[i] + data.t1[i]


@_jit        # not inlined: one copy for points, tips and sections (compile time)
def _modal_shift(model_table, data_table, j, start, m, x, phi, g, q, v, count):
    """Step to a modal section at x: Trans(x e1 + u(x, q)) (``modal_beam``), its S and c.

    u = (-1/2 q^T G q, W q on y-modes, W q on z-modes); S columns (0, du/dq_k) =
    (0, W_k e_plane - (G q)_k e1); c = (0, -(q'^T G q') e1).
    """
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    plane = model.mode_plane[j]
    vgv = _modal_offset(plane, start, m, x, phi, g, q, v, data.gq, data.p, data.beam_rd)
    for i in range(3):
        data.s[i] = 0.0
        data.s[3 + i] = data.beam_rd[i]
        for col in range(3):
            data.R[i, col] = 1.0 if i == col else 0.0
    _transport(data.R, data.p, data, count)
    for k in range(m):
        c = start + k
        data.J[3 + plane[k], c] += phi[k]
        data.J[3, c] -= data.gq[k]
    _add_motion(data, data.s)
    data.alpha[3] -= vgv


@_inline
def _modal_offset(plane, start, m, x, phi, g, q, v, gq, r, rd):
    """Write a modal section's offset r = x e1 + u(x, q), its rate rd = S q' and G q.

    u = (-1/2 q^T G q, W q on y-modes, W q on z-modes) (``modal_beam``); returns q'^T G q'.
    """
    quad = 0.0
    vgv = 0.0
    r[0], r[1], r[2] = x, 0.0, 0.0
    rd[0], rd[1], rd[2] = 0.0, 0.0, 0.0
    for k in range(m):
        gqk = 0.0
        gv = 0.0
        for c in range(m):
            gqk += g[k, c] * q[start + c]
            gv += g[k, c] * v[start + c]
        gq[k] = gqk
        quad += gqk * q[start + k]
        vgv += gv * v[start + k]
        r[plane[k]] += phi[k] * q[start + k]
        rd[plane[k]] += phi[k] * v[start + k]
        rd[0] -= gqk * v[start + k]
    r[0] -= 0.5 * quad
    return vgv


@_jit        # not inlined: four copies otherwise (compile time)
def _modal_turn(model_table, data_table, j, start, m, slope, plane, axis, sign, q, v, count):
    """Step by a bending turn of a section of link j about e_axis (``modal_beam``).

    The angle is sign * sum of W_k'(x) q_k (``slope``: W'(x)) over the modes of ``plane``:
    psi_z (axis 2, sign 1) from the y-plane modes, psi_y (axis 1, sign -1) from the
    z-plane ones. S has sign W_k'(x) in row ``axis``; c = 0 (the angle is linear in q).
    """
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    angle = 0.0
    rate = 0.0
    for k in range(m):
        if model.mode_plane[j, k] == plane:
            angle += sign * slope[k] * q[start + k]
            rate += sign * slope[k] * v[start + k]
    for i in range(6):
        data.t2[i] = 0.0
        data.s[i] = 0.0
    data.t2[axis] = angle
    data.s[axis] = rate
    se3_exp(data.t2, data.R, data.p)
    _transport(data.R, data.p, data, count)
    for k in range(m):
        if model.mode_plane[j, k] == plane:
            data.J[axis, start + k] += sign * slope[k]
    _add_motion(data, data.s)


@_jit        # not inlined: one copy serves the three uses of `_link`
def _modal_points(model_table, data_table, j, start, m, q, v, count, bodies):
    """Add the point masses of floating-frame link j, summed in its frame (``modal_beam``).

    Point i (mass w, at r = x e1 + u(x, q) in the link frame, r' = S q', S = du/dq with
    columns W_k e_plane - (G q)_k e1) moves at Gamma eta, Gamma = [-hat(r), I, S], for
    eta = (w, v, q') of the link frame and its modes. Summed over the points:

        M_b = sum w Gamma^T Gamma,  F_b = sum Gamma^T w a,
        a = a_v + a_w x r + w x r' - (q'^T G q') e1 + w x (v + w x r + r')

    (a: the point's acceleration at zero generalized acceleration, alpha = (a_w, a_v) the
    frame's, gravity in it). ``bodies`` 1: M += E^T M_b E, h += E^T F_b, E the rows of
    eta per active column (J's, then the modal rates); 2: link j's articulated sums
    (`add_to_link`, the frame's pose relative to the handle); 3: the gravity energy;
    4 (inverse dynamics): F_b + M_b E a to link j's p_H and p_l (`add_force_to_link`).
    """
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    size = 6 + m
    Mb, F, plane = data.beam_M, data.beam_F, model.mode_plane[j]
    r, rd, acc, eta, alpha = data.beam_r, data.beam_rd, data.beam_a, data.eta, data.alpha
    for a_ in range(size):
        F[a_] = 0.0
        for b_ in range(size):
            Mb[a_, b_] = 0.0
    total = 0.0
    for point in range(model.point_start[j], model.point_start[j] + model.point_count[j]):
        w, phi = model.point_mass[point], model.point_phi[point]
        vgv = _modal_offset(plane, start, m, model.point_x[point], phi, model.point_g[point],
                            q, v, data.gq, r, rd)
        total += w
        if bodies == 3:
            for i in range(3):
                F[3 + i] += w * r[i]              # first moment
            continue
        # velocity u = v + w x r + r' (t1), then a (module doc)
        for i in range(3):
            data.t1[i] = eta[3 + i] + rd[i]
        data.t1[0] += eta[1] * r[2] - eta[2] * r[1]
        data.t1[1] += eta[2] * r[0] - eta[0] * r[2]
        data.t1[2] += eta[0] * r[1] - eta[1] * r[0]
        for i in range(3):
            acc[i] = alpha[3 + i]
        acc[0] += (alpha[1] * r[2] - alpha[2] * r[1] + eta[1] * (rd[2] + data.t1[2])
                   - eta[2] * (rd[1] + data.t1[1]) - vgv)
        acc[1] += (alpha[2] * r[0] - alpha[0] * r[2] + eta[2] * (rd[0] + data.t1[0])
                   - eta[0] * (rd[2] + data.t1[2]))
        acc[2] += (alpha[0] * r[1] - alpha[1] * r[0] + eta[0] * (rd[1] + data.t1[1])
                   - eta[1] * (rd[0] + data.t1[0]))
        f0, f1, f2 = w * acc[0], w * acc[1], w * acc[2]
        F[0] += r[1] * f2 - r[2] * f1
        F[1] += r[2] * f0 - r[0] * f2
        F[2] += r[0] * f1 - r[1] * f0
        F[3] += f0
        F[4] += f1
        F[5] += f2
        rr = r[0] * r[0] + r[1] * r[1] + r[2] * r[2]
        for a_ in range(3):
            Mb[a_, a_] += w * rr
            for b_ in range(a_, 3):
                Mb[a_, b_] -= w * r[a_] * r[b_]
        Mb[0, 4] -= w * r[2]        # w hat(r): the (w, v) block
        Mb[0, 5] += w * r[1]
        Mb[1, 3] += w * r[2]
        Mb[1, 5] -= w * r[0]
        Mb[2, 3] -= w * r[1]
        Mb[2, 4] += w * r[0]
        S = data.beam_S
        for k in range(m):
            S[0, k] = -data.gq[k]
            S[1, k] = 0.0
            S[2, k] = 0.0
            S[plane[k], k] += phi[k]
            s0, s1, s2 = S[0, k], S[1, k], S[2, k]
            Mb[0, 6 + k] += w * (r[1] * s2 - r[2] * s1)
            Mb[1, 6 + k] += w * (r[2] * s0 - r[0] * s2)
            Mb[2, 6 + k] += w * (r[0] * s1 - r[1] * s0)
            Mb[3, 6 + k] += w * s0
            Mb[4, 6 + k] += w * s1
            Mb[5, 6 + k] += w * s2
            F[6 + k] += s0 * f0 + s1 * f1 + s2 * f2
            for l_ in range(k + 1):
                Mb[6 + l_, 6 + k] += w * (S[0, l_] * s0 + S[1, l_] * s1 + S[2, l_] * s2)
    if bodies == 3:
        for i in range(3):
            position = data.pose_p[i] * total
            for c in range(3):
                position += data.pose_R[i, c] * F[3 + c]
            data.energy[0] -= model.gravity[i] * position
        return
    for a_ in range(3):
        Mb[3 + a_, 3 + a_] = total
    for a_ in range(size):
        for b_ in range(a_):
            Mb[a_, b_] = Mb[b_, a_]
    E = data.beam_E                 # rows of eta per active column
    for a_ in range(count):
        c = data.cols[a_]
        for i in range(6):
            E[i, a_] = data.J[i, c]
        for k in range(m):
            E[6 + k, a_] = 1.0 if c == start + k else 0.0
    if bodies == 2:
        add_to_link(Mb, size, data.pose_R, data.pose_p, E, count, F, data_table, j)
        return
    if bodies == 4:                 # inverse dynamics: F += M_b E a
        for i in range(size):
            sum_ = 0.0
            for a_ in range(count):
                sum_ += E[i, a_] * data.given[data.cols[a_]]
            data.beam_rate[i] = sum_
        for r_ in range(size):
            sum_ = 0.0
            for i in range(size):
                sum_ += Mb[r_, i] * data.beam_rate[i]
            F[r_] += sum_
        add_force_to_link(size, data.pose_R, data.pose_p, E, count, F, data_table, j)
        return
    ME = data.beam_ME               # M += E^T M_b E
    for a_ in range(count):
        for r_ in range(size):
            sum_ = 0.0
            for i in range(size):
                sum_ += Mb[r_, i] * E[i, a_]
            ME[r_, a_] = sum_
    for a_ in range(count):
        ca = data.cols[a_]
        for b_ in range(a_, count):
            cb = data.cols[b_]
            sum_ = 0.0
            for i in range(size):
                sum_ += E[i, a_] * ME[i, b_]
            data.mass[ca, cb] += sum_
            if cb != ca:
                data.mass[cb, ca] += sum_
    for a_ in range(count):         # h += E^T F
        sum_ = 0.0
        for i in range(size):
            sum_ += E[i, a_] * F[i]
        data.bias[data.cols[a_]] += sum_


@_inline
def _modal_section(model_table, data_table, j, start, m, x, phi, slope, g, q, v, count):
    """Step from link j's frame to its modal section at x: the shift, then both turns."""
    _modal_shift(model_table, data_table, j, start, m, x, phi, g, q, v, count)
    _modal_turn(model_table, data_table, j, start, m, slope, 1, 2, 1.0, q, v, count)
    _modal_turn(model_table, data_table, j, start, m, slope, 2, 1, -1.0, q, v, count)


@_inline
def _start(model, data, q, v, gravity):
    """Zero J, eta, alpha; set the base frame's state and pose. Return the active columns.

    A fixed base is at rest at (base_R, base_p), an upward acceleration -g if ``gravity``;
    a floating base moves with v's last six entries (its identity columns in J).
    """
    nv = model.stiffness.shape[0]
    for r in range(6):
        for c in range(nv):
            data.J[r, c] = 0.0
        data.eta[r] = 0.0
        data.alpha[r] = 0.0
    count = nv - nv         # an int64 zero: a literal 0 compiles `_link` once more
    for i in range(3):
        data.pose_p[i] = model.base_p[i]
        for c in range(3):
            data.base_R[i, c] = model.base_R[i, c]
    if model.floating:          # the base body first: twist v[b:], Jacobian identity columns
        b = nv - 6
        group_kernels.quat_to_matrix(q[b + 3:b + 7], data.base_R)
        for i in range(6):
            data.J[i, b + i] = 1.0
            data.eta[i] = v[b + i]
            data.cols[count] = b + i
            count += 1
        for i in range(3):
            data.pose_p[i] = q[b + i]
    for i in range(3):
        for c in range(3):
            data.pose_R[i, c] = data.base_R[i, c]
        if gravity:
            data.alpha[3 + i] = -(data.base_R[0, i] * model.gravity[0]
                                  + data.base_R[1, i] * model.gravity[1]
                                  + data.base_R[2, i] * model.gravity[2])
    return count


@_inline
def _joint(model, data, j, q, v, count, bodies):
    """Step to link j's joint frame (offset, joint motion); return the active columns.

    One transport by the offset composed with the joint's motion (one instead of two).
    """
    ji = model.joint_index[j]
    if ji < 0:
        _transport(model.offset_R[j], model.offset_p[j], data, count)
    else:
        if bodies == 1:
            data.mass[ji, ji] += model.armature[j]
        elif bodies == 4:
            data.bias[ji] += model.armature[j] * data.given[ji]
        for i in range(6):
            data.t2[i] = model.joint_motion[j, i] * q[ji]
        se3_exp(data.t2, data.R, data.p)
        compose(model.offset_R[j], model.offset_p[j], data.R, data.p, data.step_R, data.step_p)
        _transport(data.step_R, data.step_p, data, count)
        data.cols[count] = ji
        count += 1
        for i in range(6):
            data.J[i, ji] += model.joint_motion[j, i]
            data.s[i] = model.joint_motion[j, i] * v[ji]
        _add_motion(data, data.s)
    start, m = model.strain_start[j], model.strain_count[j]
    for col in range(m):
        data.cols[count] = start + col
        count += 1
    return count


@_jit        # not inlined: one copy serves mass_and_bias and section_motion (compile time)
def _link(model_table, data_table, j, q, v, count, bodies):
    """Walk link j from its joint to its tip frame; return the active columns.

    ``bodies``: 0 the frames only; 1 add every body's M and h (`_accumulate`); 2 add them
    to link j's articulated sums (`_accumulate_local`). The hub, then a modal link's
    points and tip or a rod's segments (the section inertia at each node), the payload.
    """
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    count = _joint(model, data, j, q, v, count, bodies)
    start, m = model.strain_start[j], model.strain_count[j]
    if bodies:
        _body(model_table, model.hub[j], data_table, count, j, bodies)
    if model.point_count[j] > 0:
        if bodies:
            _modal_points(model_table, data_table, j, start, m, q, v, count, bodies)
        _modal_section(model_table, data_table, j, start, m, model.length[j],
                       model.tip_phi[j], model.tip_slope[j], model.tip_g[j], q, v, count)
    data.count[0] = count - m            # the new strain columns are zero until added
    for k in range(model.segment_start[j], model.segment_start[j] + model.segment_count[j]):
        _rod_segment(model.seg_h[k], model.seg_B1[k], model.seg_B2[k], model.seg_reference[k],
                     data_table, start, m, q, v)
        data.count[0] = count
        if bodies and model.node_inertia[k, 5, 5] > 0.0:
            _body(model_table, model.node_inertia[k], data_table, count, j, bodies)
    data.count[0] = count
    if bodies:
        _body(model_table, model.payload[j], data_table, count, j, bodies)
    return count


@_jit        # not inlined: the steppers call one copy (compile time; ~1 us a call)
def mass_and_bias(model_table, data_table, q, v, gravity):
    """Write M(q) into data.mass and h(q, v) into data.bias (module doc)."""
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    nv = model.stiffness.shape[0]
    for r in range(nv):
        data.bias[r] = model.stiffness[r] * q[r] + model.damping[r] * v[r]
        for c in range(nv):
            data.mass[r, c] = 0.0
    count = _start(model, data, q, v, gravity)
    if model.floating:
        _accumulate(model.base_inertia, data_table, count)
    for j in range(model.joint_motion.shape[0]):
        count = _link(model_table, data_table, j, q, v, count, np.int64(MASS_AND_BIAS))


@_inline
def at_handle(data_table, j, count):
    """Start link j's walk at its handle: pose identity, J and link j's p_H, p_l zero.

    J's columns are zeroed where the previous link's ``count`` local ones were
    (articulated pass 1, inverse dynamics).
    """
    data = unpack(data_table, DATA_TYPE)
    for k in range(count):
        for i in range(6):
            data.J[i, data.cols[k]] = 0.0
    for i in range(3):
        data.pose_p[i] = 0.0
        for c in range(3):
            data.pose_R[i, c] = 1.0 if i == c else 0.0
    for i in range(6):
        data.aba_pH[j, i] = 0.0
    for k in range(data.aba_pl.shape[1]):
        data.aba_pl[j, k] = 0.0


@_inline
def at_tip(data_table, j, count):
    """Keep link j's tip frame relative to its handle: (R_T, p_T), J_T and its columns."""
    data = unpack(data_table, DATA_TYPE)
    data.aba_count[j] = count
    for k in range(count):
        data.aba_cols[j, k] = data.cols[k]
        for i in range(6):
            data.aba_TJ[j, i, k] = data.J[i, data.cols[k]]
    for i in range(3):
        data.aba_Tp[j, i] = data.pose_p[i]
        for c in range(3):
            data.aba_TR[j, i, c] = data.pose_R[i, c]


@_jit
def inverse_dynamics(model_table, data_table, q, v, a):
    """Write M(q) a + h(q, v) into data.bias: recursive Newton-Euler, O(n) in links.

    Outwards, each link is walked from its handle as in articulated pass 1 (``articulated``
    doc) but with alpha the handle's whole acceleration a_H (gravity as an upward base
    acceleration): each body adds its wrench f_b = I_b (alpha_b + J_b a_l) - ad*_eta I_b
    eta to the link's p_H = sum X_b^T f_b and p_l = sum J_b^T f_b (`_accumulate_inverse`;
    a modal link's points F_b + M_b E a, `_modal_points`), and the child's handle
    acceleration is a_T = alpha_T + J_T a_l. Inwards, the child's handle wrench f_c acts
    on the tip: f_H = p_H + X_T^T f_c, tau_l = p_l + J_T^T f_c, added to K q + D v and the
    armature's share. A floating base adds its own I_0 a_0 - ad* I_0 eta to f_H of the
    first link, a_0 = v'_b - (0, R^T g).
    """
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    nv = model.stiffness.shape[0]
    n = model.joint_motion.shape[0]
    J, cols, alpha = data.J, data.cols, data.alpha
    for r in range(nv):
        data.given[r] = a[r]
        data.bias[r] = model.stiffness[r] * q[r] + model.damping[r] * v[r]
    for r in range(6):
        for c in range(nv):
            J[r, c] = 0.0
        data.eta[r] = 0.0
        alpha[r] = 0.0
    R = model.base_R
    if model.floating:
        b = nv - 6
        group_kernels.quat_to_matrix(q[b + 3:b + 7], data.base_R)
        R = data.base_R
        for i in range(6):
            data.eta[i] = v[b + i]
            alpha[i] = a[b + i]
    for i in range(3):
        alpha[3 + i] -= (R[0, i] * model.gravity[0] + R[1, i] * model.gravity[1]
                         + R[2, i] * model.gravity[2])
    if model.floating:              # the base body's own wrench, before alpha moves on
        force = _inertial_wrench(model.base_inertia, data)
        for i in range(6):
            data.aba_a[i] = force[i]
    count = n - n                   # an int64 zero: a literal 0 compiles `_link` once more
    for j in range(n):              # outwards: each link from its handle
        at_handle(data_table, j, count)
        count = _link(model_table, data_table, j, q, v, n - n, np.int64(INVERSE))
        at_tip(data_table, j, count)
        for k in range(count):
            for i in range(6):
                alpha[i] += J[i, cols[k]] * a[cols[k]]
    for j in range(n - 1, -1, -1):  # inwards: the child's handle wrench on each tip
        k = data.aba_count[j]
        if j < n - 1:
            add_force_to_link(np.int64(6), data.aba_TR[j], data.aba_Tp[j], data.aba_TJ[j], k,
                              data.aba_f, data_table, j)
        for i in range(6):
            data.aba_f[i] = data.aba_pH[j, i]
        for c in range(k):
            data.bias[data.aba_cols[j, c]] += data.aba_pl[j, c]
    if model.floating:
        for i in range(6):
            data.bias[nv - 6 + i] += data.aba_a[i] + (data.aba_f[i] if n > 0 else 0.0)


@_jit
def section_motion(model_table, data_table, q, v, j, segments, h, B1, B2, phi, slope, g, x):
    """Pose, body Jacobian, twist and J' v of the section at x [m] of link j (no gravity).

    One forward pass to the section, without bodies: data.pose_R, pose_p (its pose in
    the base frame, or the world for a floating base), data.J (6 x nv, body axes), eta
    and alpha (= J' v at zero acceleration). The section's tables (`Chain.section_table`):
    a rod's first ``segments`` whole segments, then a partial Magnus step of length h with
    the basis B1, B2 at its Gauss points; a modal link's
    W, W', G at x (phi, slope, g); a rigid link is one partial step, h = x, B zero.
    """
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    count = _start(model, data, q, v, False)
    for link in range(j):
        count = _link(model_table, data_table, link, q, v, count, np.int64(FRAMES_ONLY))
    count = _joint(model, data, j, q, v, count, np.int64(FRAMES_ONLY))
    _section_tail(model_table, data_table, j, count, segments, h, B1, B2, phi, slope, g, x, q,
                  v)


@_jit
def section_kinematics(model_table, data_table, q, v, j, segments, h, B1, B2, phi, slope, g,
                       x, R, p, J, motion):
    """`section_motion`, then its results in base-frame components; False if not finite.

    With the section's orientation R and the body Jacobian J_b, twist (w_b, u_b) and bias
    alpha_b = (w_b', u_b') of the pass: J = diag(R, R) J_b (6 x nv), motion[:6] = the
    twist (R w_b, R u_b) and motion[6:] = J' v = (R w_b', R (w_b x u_b + u_b')).
    """
    section_motion(model_table, data_table, q, v, j, segments, h, B1, B2, phi, slope, g, x)
    data = unpack(data_table, DATA_TYPE)
    Rb, eta, alpha = data.pose_R, data.eta, data.alpha
    total = 0.0
    for r in range(3):
        p[r] = data.pose_p[r]
        total += p[r]
        for c in range(3):
            R[r, c] = Rb[r, c]
            total += R[r, c]
    cx = (eta[1] * eta[5] - eta[2] * eta[4], eta[2] * eta[3] - eta[0] * eta[5],
          eta[0] * eta[4] - eta[1] * eta[3])
    for r in range(3):
        for c in range(J.shape[1]):
            a0 = Rb[r, 0] * data.J[0, c] + Rb[r, 1] * data.J[1, c] + Rb[r, 2] * data.J[2, c]
            a1 = Rb[r, 0] * data.J[3, c] + Rb[r, 1] * data.J[4, c] + Rb[r, 2] * data.J[5, c]
            J[r, c] = a0
            J[3 + r, c] = a1
            total += a0 + a1
        motion[r] = Rb[r, 0] * eta[0] + Rb[r, 1] * eta[1] + Rb[r, 2] * eta[2]
        motion[3 + r] = Rb[r, 0] * eta[3] + Rb[r, 1] * eta[4] + Rb[r, 2] * eta[5]
        motion[6 + r] = Rb[r, 0] * alpha[0] + Rb[r, 1] * alpha[1] + Rb[r, 2] * alpha[2]
        motion[9 + r] = (Rb[r, 0] * (cx[0] + alpha[3]) + Rb[r, 1] * (cx[1] + alpha[4])
                         + Rb[r, 2] * (cx[2] + alpha[5]))
        total += motion[r] + motion[3 + r] + motion[6 + r] + motion[9 + r]
    return math.isfinite(total)


@_inline
def _section_tail(model_table, data_table, j, count, segments, h, B1, B2, phi, slope, g, x, q,
                  v):
    """Walk from link j's joint frame to its section at x (the tables of `section_motion`).

    ``count``: the active columns, the link's strains the last m of them.
    """
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    start, m = model.strain_start[j], model.strain_count[j]
    if model.point_count[j] > 0:
        _modal_section(model_table, data_table, j, start, m, x, phi, slope, g, q, v, count)
        return
    data.count[0] = count - m
    first = model.segment_start[j]
    for k in range(first, first + segments):
        _rod_segment(model.seg_h[k], model.seg_B1[k], model.seg_B2[k], model.seg_reference[k],
                     data_table, start, m, q, v)
        data.count[0] = count
    if h > 0.0:
        _rod_segment(h, B1, B2, model.seg_reference[first], data_table, start, m, q, v)


@_jit        # not inlined: one copy for every section of the transforms
def _rod_pose(h, B1, B2, reference, data_table, start, m, q):
    """Move pose_R, pose_p by exp(Omega), the step of `_rod_segment` without the rest.

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
    _compose_pose(data.R, data.p, data)


@_jit
def potential_energy(model_table, data_table, q, v):
    """Return the elastic energy q^T K q / 2 plus the gravity energy -sum_b m_b g . c_b [J].

    v: zeros (nv). One walk of the chain's frames, each body adding its own term.
    """
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    nv = model.stiffness.shape[0]
    energy = 0.0
    for r in range(nv - 6 * model.floating):
        energy += 0.5 * model.stiffness[r] * q[r] * q[r]
    data.energy[0] = 0.0
    count = _start(model, data, q, v, False)
    if model.floating:
        _add_potential(model_table, model.base_inertia, data_table)
    for j in range(model.joint_motion.shape[0]):
        count = _link(model_table, data_table, j, q, v, count, np.int64(POTENTIAL))
    return energy + data.energy[0]


@_jit
def local_transforms(model_table, data_table, q, v, links, is_section, segments, h, B1, B2,
                     phi, slope, g, xs, R_out, p_out, quat_out):
    """Write the parent-to-child transforms of frame entries (``cosserat.chain.FrameTransforms``).

    Entry i: joint ``links[i]`` (its frame in the parent's tip frame: the offset, then
    the joint's motion) or, if ``is_section[i]``, the section at xs[i] of that link in
    its joint frame (the tables of `section_motion` at index i). v: zeros (nv).
    """
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    for e in range(links.shape[0]):
        j = links[e]
        start, m = model.strain_start[j], model.strain_count[j]
        for i in range(6):
            data.eta[i] = 0.0
            data.alpha[i] = 0.0
            for c in range(m):
                data.J[i, start + c] = 0.0
        for i in range(3):
            data.pose_p[i] = 0.0
            for c in range(3):
                data.pose_R[i, c] = 1.0 if i == c else 0.0
        if is_section[e] and model.point_count[j] == 0:         # a rod's or rigid section
            first = model.segment_start[j]
            for k in range(first, first + segments[e]):
                _rod_pose(model.seg_h[k], model.seg_B1[k], model.seg_B2[k],
                          model.seg_reference[k], data_table, start, m, q)
            if h[e] > 0.0:
                _rod_pose(h[e], B1[e], B2[e], model.seg_reference[first], data_table, start,
                          m, q)
        elif is_section[e]:
            for c in range(m):
                data.cols[c] = start + c
            _section_tail(model_table, data_table, j, m, segments[e], h[e], B1[e], B2[e],
                          phi[e], slope[e], g[e], xs[e], q, v)
        else:
            _transport(model.offset_R[j], model.offset_p[j], data, m - m)   # int64 zero
            ji = model.joint_index[j]
            if ji >= 0:
                for i in range(6):
                    data.t2[i] = model.joint_motion[j, i] * q[ji]
                se3_exp(data.t2, data.R, data.p)
                _transport(data.R, data.p, data, m - m)
        for i in range(3):
            p_out[e, i] = data.pose_p[i]
            for c in range(3):
                R_out[e, i, c] = data.pose_R[i, c]
        group_kernels.matrix_to_quat(R_out[e], quat_out[e])


@_inline
def forward_dynamics(model_table, data_table, q, v, u):
    """Write v' = M^-1 (B u - h) into data.acceleration; False if M is not positive definite."""
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    nv = model.stiffness.shape[0]
    mass_and_bias(model_table, data_table, q, v, True)
    for r in range(nv):
        data.force[r] = -data.bias[r]
    for j in range(u.shape[0]):        # the moving joints' coordinates come first
        data.force[j] += u[j]
    if not cholesky_factor(data.mass, data.chol, nv):
        return False
    cholesky_substitute(data.chol, data.force, data.acceleration, nv)
    return True


@_inline
def rhs(model_table, data_table, x, u, out):
    """Write (q', M^-1 (B u - h)) into out for x = (q, v) (`tangent_rates`); False if singular."""
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    nv = model.stiffness.shape[0]
    nq = x.shape[0] - nv
    ok = forward_dynamics(model_table, data_table, x[:nq], x[nq:], u)
    tangent_rates(model, data, x, out)
    return ok


# The integrators' hooks on the tables (the templates pass the steppers' first two arguments).
@_inline
def integrate_on_tables(model_table, x, theta, out):
    """`integrate` on the model's table."""
    integrate(unpack(model_table, MODEL_TYPE), x, theta, out)


@_inline
def dexpinv_on_tables(model_table, theta, k):
    """`dexpinv` on the model's table."""
    dexpinv(unpack(model_table, MODEL_TYPE), theta, k)


@_inline
def stiff_factor_on_tables(model_table, data_table, gh):
    """`stiff_factor` on the tables."""
    return stiff_factor(unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE), gh)


@_inline
def stiff_solve_on_tables(model_table, data_table, gh, r, out):
    """`stiff_solve` on the tables."""
    stiff_solve(unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE), gh, r, out)


@_jit
def mass_bias_entry(model_table, data_table, q, v, gravity):
    """`mass_and_bias` from Python, on the tables of the model and its workspace."""
    mass_and_bias(model_table, data_table, q, v, gravity)


@_jit
def inverse_entry(model_table, data_table, q, v, a):
    """`inverse_dynamics` from Python, on the tables of the model and its workspace."""
    inverse_dynamics(model_table, data_table, q, v, a)


@_jit
def forward_dynamics_entry(model_table, data_table, q, v, u):
    """`forward_dynamics` from Python, on the tables of the model and its workspace."""
    return forward_dynamics(model_table, data_table, q, v, u)


@_jit
def explicit_steps(model_table, data_table, x, u, h, count, a, b, stages, trial, theta):
    """`integrators.explicit_steps` on the Cosserat chain (the tables of its arrays)."""
    return integrators.explicit_steps(rhs, integrate_on_tables, dexpinv_on_tables,
                                      model_table, data_table, x, u, h, count, a, b, stages,
                                      trial, theta)


@_jit
def rosenbrock_steps(model_table, data_table, x, u, h, count, stages, trial, theta):
    """`integrators.rosenbrock_steps`, the elastic forces implicit (the chain's hooks).

    On the tables of the chain's arrays. On a floating base: the group's "+" and inverse
    right Jacobian of the chain's steppers.
    """
    return integrators.rosenbrock_steps(rhs, stiff_factor_on_tables, stiff_solve_on_tables,
                                        integrate_on_tables, dexpinv_on_tables, model_table,
                                        data_table, x, u, h, count, stages, trial, theta)
