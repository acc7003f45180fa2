"""Poses, Jacobians and motions of chosen frames: beam sections for programs, TF frames.

All in base-frame components, angular first; each kernel runs `kinematics.placements` or
`kinematics.forward_pass` first and reads the link frames from the workspace. Each is a
compiled unit on the tables of the constants and the workspace (`tuple_tables`).
"""

from .. import compiled, group_kernels
from ..chain_layout import DATA_TYPE, MODEL_TYPE
from ..tuple_tables import unpack
from .spatial import compose, cross
from .beam_section import section_forward
from .kinematics import forward_pass, placements

_jit, _inline = compiled.jit, compiled.inline


@_jit
def section_placement(model_table, data_table, j, x, phi, slope, g, q, R_out, p_out):
    """Pose (R_out, p_out) in the base frame of the section at abscissa x of link j."""
    placements(model_table, data_table, q)
    _section_pose(unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE), j, x, phi,
                  slope, g, q, R_out, p_out)


@_inline
def _section_pose(model, data, j, x, phi, slope, g, q, R_out, p_out):
    """Write the section's pose, the link frames being placed (`placements`)."""
    zero = data.zero_nv
    section_forward(model, data, j, x, phi, slope, g, q, zero, zero, data.sec_p, data.point_gq,
                    data.sec_angles, data.sec_Rz, data.sec_Ry, data.sec_w, data.sec_v,
                    data.sec_dw, data.sec_dv)
    compose(data.sec_Rz, data.zero3, data.sec_Ry, data.zero3, data.scratch_R, data.scratch_a)
    compose(data.link_R[j], data.link_p[j], data.scratch_R, data.sec_p, R_out, p_out)


@_jit
def section_jacobian(model_table, data_table, j, x, phi, slope, g, q, R_sec, J):
    """Jacobian J (6 x nv) of the section frame at x of link j, base-frame components.

    Column k is (angular velocity, velocity of the section origin) for v = e_k; R_sec is the
    section's orientation in the base frame (from `section_placement`).
    """
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    nv = J.shape[1]
    unit, zero = data.unit_nv, data.rhs
    for k in range(nv):
        unit[k] = 0.0
        zero[k] = 0.0
    for k in range(nv):
        unit[k] = 1.0
        forward_pass(model_table, data_table, q, unit, zero, 0.0, bool(False))
        section_forward(model, data, j, x, phi, slope, g, q, unit, zero, data.sec_p, data.point_gq,
                        data.sec_angles, data.sec_Rz, data.sec_Ry, data.sec_w, data.sec_v,
                        data.sec_dw, data.sec_dv)
        for r in range(3):
            J[r, k] = (R_sec[r, 0] * data.sec_w[0] + R_sec[r, 1] * data.sec_w[1]
                       + R_sec[r, 2] * data.sec_w[2])
            J[3 + r, k] = (R_sec[r, 0] * data.sec_v[0] + R_sec[r, 1] * data.sec_v[1]
                           + R_sec[r, 2] * data.sec_v[2])
        unit[k] = 0.0


@_jit
def section_motion(model_table, data_table, j, x, phi, slope, g, q, v, R_sec, out):
    """Twist J v and acceleration J' v of the section at x of link j (base-frame axes).

    out = (w, p', w', p'') [rad/s, m/s, rad/s^2, m/s^2] of the section frame and its origin
    at zero generalized acceleration and without gravity, i.e. the terms of the second
    derivative of a point program that do not depend on q''. R_sec: the section's
    orientation in the base frame (from `section_placement`). The base must be fixed (for
    a floating base these are rates of base-frame components).
    """
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    zero = data.rhs
    for k in range(zero.shape[0]):
        zero[k] = 0.0
    forward_pass(model_table, data_table, q, v, zero, 0.0, bool(False))
    section_forward(model, data, j, x, phi, slope, g, q, v, zero, data.sec_p, data.point_gq,
                    data.sec_angles, data.sec_Rz, data.sec_Ry, data.sec_w, data.sec_v,
                    data.sec_dw, data.sec_dv)
    # classical acceleration of the origin = R (v' + w x v) in body components
    cross(data.sec_w, data.sec_v, data.scratch_a)
    for i in range(3):
        data.scratch_a[i] += data.sec_dv[i]
    for r in range(3):
        out[r] = (R_sec[r, 0] * data.sec_w[0] + R_sec[r, 1] * data.sec_w[1]
                  + R_sec[r, 2] * data.sec_w[2])
        out[3 + r] = (R_sec[r, 0] * data.sec_v[0] + R_sec[r, 1] * data.sec_v[1]
                      + R_sec[r, 2] * data.sec_v[2])
        out[6 + r] = (R_sec[r, 0] * data.sec_dw[0] + R_sec[r, 1] * data.sec_dw[1]
                      + R_sec[r, 2] * data.sec_dw[2])
        out[9 + r] = (R_sec[r, 0] * data.scratch_a[0] + R_sec[r, 1] * data.scratch_a[1]
                      + R_sec[r, 2] * data.scratch_a[2])


@_jit
def section_kinematics(model_table, data_table, j, x, phi, slope, g, q, v, R_out, p_out, J,
                       motion):
    """Pose (R_out, p_out), Jacobian J and (J v, J' v) of the section at x of link j.

    One call for what a task-space program needs each tick (see `section_jacobian` and
    `section_motion`); base-frame components, angular first.
    """
    section_placement(model_table, data_table, j, x, phi, slope, g, q, R_out, p_out)
    section_jacobian(model_table, data_table, j, x, phi, slope, g, q, R_out, J)
    section_motion(model_table, data_table, j, x, phi, slope, g, q, v, R_out, motion)


@_jit
def local_transforms(model_table, data_table, q, links, xs, is_section, phi, slope, g, R_out,
                     p_out, quat_out):
    """Parent-to-child transforms of a list of moving frames (for TF), one compiled call.

    Entry i is joint ``links[i]`` (its link frame in the parent tip frame) when
    is_section[i] is 0, else the section at abscissa xs[i] in its link frame. Writes the
    rotation R_out[i], its unit quaternion quat_out[i] (w, x, y, z) and the position p_out[i].
    """
    placements(model_table, data_table, q)
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
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
                            p_out[i], data.point_gq, data.sec_angles, data.sec_Rz, data.sec_Ry,
                            data.sec_w, data.sec_v, data.sec_dw, data.sec_dv)
            compose(data.sec_Rz, data.zero3, data.sec_Ry, data.zero3, R_out[i], data.scratch_a)
        group_kernels.matrix_to_quat(R_out[i], quat_out[i])
