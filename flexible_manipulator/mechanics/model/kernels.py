"""The chain model's walk (numba, no allocation): M, h, inverse dynamics, frames, steppers.

The same equations as the NumPy reference (``mechanics.reference.cosserat_chain``, module
docs of ``rod`` and ``chain``), written on preallocated arrays: one forward pass over the
links carries the current frame's body Jacobian J (6 x nv), twist eta and bias
acceleration alpha (``frame_steps``), and each body with inertia I adds

    M += J^T I J,    h += J^T (I alpha - ad*_eta I eta)

on the columns that can be non-zero (the coordinates of the links passed so far;
``bodies``). Then v' = M^-1 (B u - h) by Cholesky. Link j: its joint (`_joint`), its hub,
then its kind's walk from the joint frame to the tip (the one dispatch on ``link_kind``,
``dispatch``, to ``links.<kind>.kernels``: a rigid link's translation, a floating-frame
link's mass points and tip, a rod's Magnus steps and node inertias), its payload. A
free-floating base is the first body (its twist is v's last six entries); the steppers
then move its pose on SO(3) x R^3 (``chain_kernels.steppers.integrate``). K and D are
diagonal (Legendre strains on a uniform section, orthogonal modes), so the chain's
linearly implicit stepper hooks apply unchanged.
"""

import math

import numpy as np

from .. import compiled, group_kernels, integrators
from ..chain_kernels.linalg import cholesky_factor, cholesky_substitute
from ..chain_kernels.spatial import compose, se3_exp
from ..friction import smooth_sign
from ..chain_kernels.steppers import dexpinv, integrate, stiff_factor, stiff_solve, tangent_rates
from ..tuple_tables import unpack
from . import dispatch
from .bodies import (accumulate, add_force_to_link, add_potential, body, FRAMES_ONLY,
                     inertial_wrench, INVERSE, MASS_AND_BIAS, POTENTIAL)
from .frame_steps import add_motion, transport
from .layout import DATA_TYPE, MODEL_TYPE

_jit, _inline = compiled.jit, compiled.inline


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
        transport(model.offset_R[j], model.offset_p[j], data, count)
    else:
        if bodies == 1:
            data.mass[ji, ji] += model.armature[j]
        elif bodies == 4:
            data.bias[ji] += model.armature[j] * data.given[ji]
        for i in range(6):
            data.t2[i] = model.joint_motion[j, i] * q[ji]
        se3_exp(data.t2, data.R, data.p)
        compose(model.offset_R[j], model.offset_p[j], data.R, data.p, data.step_R, data.step_p)
        transport(data.step_R, data.step_p, data, count)
        data.cols[count] = ji
        count += 1
        for i in range(6):
            data.J[i, ji] += model.joint_motion[j, i]
            data.s[i] = model.joint_motion[j, i] * v[ji]
        add_motion(data, data.s)
    start, m = model.strain_start[j], model.strain_count[j]
    for col in range(m):
        data.cols[count] = start + col
        count += 1
    return count


@_jit        # not inlined: one copy serves mass_and_bias and section_motion (compile time)
def _link(model_table, data_table, j, q, v, count, bodies):
    """Walk link j from its joint to its tip frame; return the active columns.

    ``bodies`` (``bodies`` module): FRAMES_ONLY, MASS_AND_BIAS (every body's M and h),
    ARTICULATED (link j's articulated sums), POTENTIAL or INVERSE. The hub, then the
    link kind's walk to the tip with its own bodies, the payload.
    """
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    count = _joint(model, data, j, q, v, count, bodies)
    if bodies:
        body(model_table, model.hub[j], data_table, count, j, bodies)
    dispatch.walk(model, data, model_table, data_table, j, q, v, count, bodies)
    data.count[0] = count
    if bodies:
        body(model_table, model.payload[j], data_table, count, j, bodies)
    return count


@_jit        # not inlined: the steppers call one copy (compile time; a call is cheap)
def mass_and_bias(model_table, data_table, q, v, gravity):
    """Write M(q) into data.mass and h(q, v) into data.bias (module doc).

    h holds K q + D v and the joints' Coulomb friction F_c tanh(v / v_s)
    (``mechanics.friction``); v is kept in data.velocity (the implicit stepper's W).
    """
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    nv = model.stiffness.shape[0]
    for r in range(nv):
        data.bias[r] = (model.stiffness[r] * q[r] + model.damping[r] * v[r]
                        + model.friction[r] * smooth_sign(v[r], model.friction_velocity[r]))
        data.velocity[r] = v[r]
        for c in range(nv):
            data.mass[r, c] = 0.0
    count = _start(model, data, q, v, gravity)
    if model.floating:
        accumulate(model.base_inertia, data_table, count)
    for j in range(model.joint_motion.shape[0]):
        count = _link(model_table, data_table, j, q, v, count, np.int64(MASS_AND_BIAS))


@_inline
def at_handle(data, j, count):
    """Start link j's walk at its handle: pose identity, J and link j's p_H, p_l zero.

    J's columns are zeroed where the previous link's ``count`` local ones were
    (articulated pass 1, inverse dynamics). ``data``: the unpacked workspace.
    """
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
def at_tip(data, j, count):
    """Keep link j's tip frame relative to its handle: (R_T, p_T), J_T and its columns."""
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
    eta to the link's p_H = sum X_b^T f_b and p_l = sum J_b^T f_b (`accumulate_inverse`;
    a modal link's points F_b + M_b E a, `points`), and the child's handle
    acceleration is a_T = alpha_T + J_T a_l. Inwards, the child's handle wrench f_c acts
    on the tip: f_H = p_H + X_T^T f_c, tau_l = p_l + J_T^T f_c, added to K q + D v, the
    joints' Coulomb friction (``mechanics.friction``) and the armature's share. A floating
    base adds its own I_0 a_0 - ad* I_0 eta to f_H of the first link,
    a_0 = v'_b - (0, R^T g).
    """
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    nv = model.stiffness.shape[0]
    n = model.joint_motion.shape[0]
    J, cols, alpha = data.J, data.cols, data.alpha
    for r in range(nv):
        data.given[r] = a[r]
        data.bias[r] = (model.stiffness[r] * q[r] + model.damping[r] * v[r]
                        + model.friction[r] * smooth_sign(v[r], model.friction_velocity[r]))
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
        force = inertial_wrench(model.base_inertia, data)
        for i in range(6):
            data.aba_a[i] = force[i]
    count = n - n                   # an int64 zero: a literal 0 compiles `_link` once more
    for j in range(n):              # outwards: each link from its handle
        at_handle(data, j, count)
        count = _link(model_table, data_table, j, q, v, n - n, np.int64(INVERSE))
        at_tip(data, j, count)
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
    dispatch.to_section(model, data, model_table, data_table, j, count, segments, h, B1, B2,
                        phi, slope, g, x, q, v)


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
        add_potential(model_table, model.base_inertia, data_table)
    for j in range(model.joint_motion.shape[0]):
        count = _link(model_table, data_table, j, q, v, count, np.int64(POTENTIAL))
    return energy + data.energy[0]


@_jit
def local_transforms(model_table, data_table, q, v, links, is_section, segments, h, B1, B2,
                     phi, slope, g, xs, R_out, p_out, quat_out):
    """Write the parent-to-child transforms of frames (``frame_transforms.FrameTransforms``).

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
        if is_section[e]:
            dispatch.section_pose(model, data, model_table, data_table, j, segments[e], h[e],
                                  B1[e], B2[e], phi[e], slope[e], g[e], xs[e], q, v)
        else:
            transport(model.offset_R[j], model.offset_p[j], data, m - m)   # int64 zero
            ji = model.joint_index[j]
            if ji >= 0:
                for i in range(6):
                    data.t2[i] = model.joint_motion[j, i] * q[ji]
                se3_exp(data.t2, data.R, data.p)
                transport(data.R, data.p, data, m - m)
            dispatch.joint_pose(model, data, j, q)
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
    # gravity on, as a run-time bool: a literal True would be its own type to numba and
    # compile mass_and_bias (the walk's M and h) a second time, beside mass_bias_entry's
    mass_and_bias(model_table, data_table, q, v, nv >= 0)
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
def rosenbrock_steps(model_table, data_table, x, u, h, count, a, c, b, gamma, stages, trial,
                     theta):
    """`integrators.rosenbrock_steps`, the elastic forces implicit (the chain's hooks).

    On the tables of the chain's arrays. On a floating base: the group's "+" and inverse
    right Jacobian of the chain's steppers.
    """
    return integrators.rosenbrock_steps(rhs, stiff_factor_on_tables, stiff_solve_on_tables,
                                        integrate_on_tables, dexpinv_on_tables, model_table,
                                        data_table, x, u, h, count, a, c, b, gamma, stages,
                                        trial, theta)
