"""Recursive Newton-Euler inverse dynamics of the flexible chain: tau = ID(q, v, a).

Forward pass (`kinematics.forward_pass`), then from the last link to the first: payload
wrench at the tip frame, carried through the tip (modal forces of the tip rotation and
displacement), rigid body and beam points of the link, elastic terms K q + D q', joint
effort xi^T W, and the wrench carried to the parent's tip frame.
"""

from .. import compiled
from ..chain_layout import DATA_TYPE, MODEL_TYPE
from ..tuple_tables import unpack
from .spatial import cross, rigid_wrench, transport_wrench
from .beam_section import beam_wrench, tip_backward
from .kinematics import JOINT_REVOLUTE, forward_pass

_jit = compiled.jit


@_jit
def rnea(model_table, data_table, q, v, a, gravity_scale, with_elastic, joint_poses_ready):
    """Inverse dynamics: generalized forces that produce accelerations ``a`` at (q, v).

    On the tables of the constants and the workspace (`tuple_tables`). Writes data.tau
    (length nv): joint efforts [N m or N] for the first n entries, then the modal residuals
    (generalized forces the modes would need [N m]). ``gravity_scale`` multiplies gravity
    (0 or 1); ``with_elastic`` adds stiffness, damping and armature terms.
    ``joint_poses_ready`` reuses the joint and tip rotations of a previous pass at q.
    """
    forward_pass(model_table, data_table, q, v, a, gravity_scale, joint_poses_ready)
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    n = model.joint_type.shape[0]
    w, vv, dw, dv = data.w, data.v, data.dw, data.dv
    t1, t2, t3 = data.scratch_a, data.scratch_b, data.scratch_c
    tau = data.tau
    mw, fw = data.outboard_m, data.outboard_f    # the outboard chain's wrench, current frame
    mw2, fw2 = data.carried_m, data.carried_f
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
        cross(data.tip_w[j], data.tip_v[j], t1)
        for i in range(3):
            t3[i] += t1[i]
        rigid_wrench(model.payload_mass[j], model.payload_first_moment[j],
                     model.payload_inertia[j], data.tip_w[j], data.tip_dw[j], t3, mw, fw,
                     t1, t2)
        tip_backward(model, data, j, q, mw, fw, tau)
        # Link body: rigid part and beam points, in the link frame.
        cross(w[j], vv[j], t3)
        for i in range(3):
            t3[i] += dv[j, i]           # gamma = dv + w x v
        rigid_wrench(model.mass[j], model.first_moment[j], model.inertia[j], w[j], dw[j],
                     t3, mw, fw, t1, t2)
        beam_wrench(model, data, j, q, v, a, t3, mw, fw, tau)   # no points: no beam
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
        transport_wrench(data.joint_R[j], data.joint_p[j], mw, fw, mw2, fw2, t1)
        for i in range(3):
            mw[i] = mw2[i]
            fw[i] = fw2[i]
    if model.floating:
        # The base's generalized force is the wrench the whole system needs at the base
        # frame: the outboard chain's (now in base axes) plus the base body's own.
        cross(data.base_w, data.base_v, t3)
        for i in range(3):
            t3[i] += data.base_dv[i]
        rigid_wrench(model.base_mass, model.base_first_moment, model.base_inertia,
                     data.base_w, data.base_dw, t3, mw, fw, t1, t2)
        b = model.stiffness.shape[0] - 6
        for i in range(3):
            tau[b + i] = mw[i]
            tau[b + 3 + i] = fw[i]
