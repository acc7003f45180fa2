"""Forward kinematics of the chain: poses, twists and accelerations of every frame.

Elementary motion of a child frame c relative to its parent P, with pose (R, p) of c in P
and unit twist xi of coordinate s (revolute: xi = (e, 0); prismatic: xi = (0, e)):

    V_c = Ad^-1_(R,p) V_P + xi s',    A_c = Ad^-1_(R,p) A_P + xi s'' + ad_(V_c) (xi s').

Each link adds its joint, then its tip frame (`beam_section`). Gravity enters as an
upward acceleration of the base.

`forward_pass` and `placements` are compiled units over the model's and the workspace's
tables (`tuple_tables`): the other algorithms call them, so each is compiled once.
"""

from .. import compiled, group_kernels
from ..chain_layout import DATA_TYPE, MODEL_TYPE
from ..tuple_tables import unpack
from .spatial import axis_rotation, compose, cross, transport_twist
from .beam_section import tip_forward

JOINT_REVOLUTE = 0
JOINT_PRISMATIC = 1
_jit, _inline = compiled.jit, compiled.inline


@_inline
def _base_motion(model, data, q, v, a, gravity_scale, orientation_ready):
    """Twist and acceleration of the base frame (data.base_*), gravity included.

    A fixed base is at rest with dv = -g. A floating base (coordinates after the chain's:
    position p [m] in the world and unit quaternion, then its body twist (w, v) and the
    derivatives of those body components) has dv = v' - R^T g, R its orientation.
    """
    g, R = model.gravity, data.base_R
    if model.floating:
        b = model.stiffness.shape[0] - 6
        if not orientation_ready:
            group_kernels.quat_to_matrix(q[b + 3:b + 7], R)
        for i in range(3):
            data.base_w[i] = v[b + i]
            data.base_v[i] = v[b + 3 + i]
            data.base_dw[i] = a[b + i]
            data.base_dv[i] = a[b + 3 + i] - gravity_scale * (R[0, i] * g[0] + R[1, i] * g[1]
                                                              + R[2, i] * g[2])
    else:
        for i in range(3):
            data.base_w[i] = 0.0
            data.base_v[i] = 0.0
            data.base_dw[i] = 0.0
            data.base_dv[i] = -gravity_scale * g[i]


@_jit
def forward_pass(model_table, data_table, q, v, a, gravity_scale, joint_poses_ready):
    """Twists and accelerations of every link frame and tip frame (base to tip).

    ``model_table``, ``data_table``: the tables of the constants and the workspace. Writes
    data.w, v, dw, dv (link frames) and data.tip_* (tip frames), body components; gravity
    enters as an upward acceleration ``-gravity_scale g`` of the base.
    ``joint_poses_ready`` reuses the joint and tip rotations of a previous pass at the same q.
    """
    _forward_pass(unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE), q, v, a,
                  gravity_scale, joint_poses_ready)


@_inline
def _forward_pass(model, data, q, v, a, gravity_scale, joint_poses_ready):
    """`forward_pass` on the tuples."""
    n = model.joint_type.shape[0]
    w = data.w
    vv = data.v
    dw = data.dw
    dv = data.dv
    t1, t2 = data.scratch_a, data.scratch_b
    # Base frame: fixed, or the floating base's twist; gravity enters as an upward
    # acceleration of the base (body components).
    pw, pv, pdw, pdv = data.parent_w, data.parent_v, data.parent_dw, data.parent_dv
    _base_motion(model, data, q, v, a, gravity_scale, joint_poses_ready)
    for i in range(3):
        pw[i] = data.base_w[i]
        pv[i] = data.base_v[i]
        pdw[i] = data.base_dw[i]
        pdv[i] = data.base_dv[i]
    for j in range(n):
        # -- joint j: fixed origin, then the joint motion ------------------------------
        R = data.joint_R[j]
        p = data.joint_p[j]
        axis = model.joint_axis[j]
        if joint_poses_ready:
            pass
        elif model.joint_type[j] == JOINT_REVOLUTE:
            # R = R0 Rot(axis, q_j), p = p0
            axis_rotation(axis, q[j], data.scratch_R)
            for r in range(3):
                for c in range(3):
                    R[r, c] = (model.joint_R0[j, r, 0] * data.scratch_R[0, c]
                               + model.joint_R0[j, r, 1] * data.scratch_R[1, c]
                               + model.joint_R0[j, r, 2] * data.scratch_R[2, c])
                p[r] = model.joint_p0[j, r]
        else:
            for r in range(3):
                for c in range(3):
                    R[r, c] = model.joint_R0[j, r, c]
                p[r] = model.joint_p0[j, r] + q[j] * (model.joint_R0[j, r, 0] * axis[0]
                                                      + model.joint_R0[j, r, 1] * axis[1]
                                                      + model.joint_R0[j, r, 2] * axis[2])
        transport_twist(R, p, pw, pv, w[j], vv[j], t1)
        transport_twist(R, p, pdw, pdv, dw[j], dv[j], t1)
        sd, sdd = v[j], a[j]
        if model.joint_type[j] == JOINT_REVOLUTE:
            for i in range(3):
                w[j, i] += axis[i] * sd
                dw[j, i] += axis[i] * sdd
            # ad_(V_c)(e s', 0) = (w x e s', v x e s')
            cross(w[j], axis, t1)
            cross(vv[j], axis, t2)
            for i in range(3):
                dw[j, i] += t1[i] * sd
                dv[j, i] += t2[i] * sd
        else:
            for i in range(3):
                vv[j, i] += axis[i] * sd
                dv[j, i] += axis[i] * sdd
            cross(w[j], axis, t1)
            for i in range(3):
                dv[j, i] += t1[i] * sd
        tip_forward(model, data, j, q, v, a, joint_poses_ready)
        for i in range(3):
            pw[i] = data.tip_w[j, i]
            pv[i] = data.tip_v[j, i]
            pdw[i] = data.tip_dw[j, i]
            pdv[i] = data.tip_dv[j, i]


@_jit
def placements(model_table, data_table, q):
    """Poses in the base frame of every link frame (data.link_R, link_p) and tip frame.

    Also leaves the link and tip motions of a chain at rest in data (zero velocity). On the
    tables, as `forward_pass`.
    """
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    n = model.joint_type.shape[0]
    zero = data.zero_nv
    for k in range(zero.shape[0]):
        zero[k] = 0.0
    forward_pass(model_table, data_table, q, zero, zero, 0.0, bool(False))
    R_prev, p_prev = data.eye3, data.zero3
    for j in range(n):
        compose(R_prev, p_prev, data.joint_R[j], data.joint_p[j], data.link_R[j],
                data.link_p[j])
        compose(data.tip_Rz[j], data.zero3, data.tip_Ry[j], data.zero3, data.scratch_R,
                data.scratch_a)
        compose(data.link_R[j], data.link_p[j], data.scratch_R, data.tip_p[j], data.tip_R[j],
                data.tip_pos[j])
        R_prev, p_prev = data.tip_R[j], data.tip_pos[j]
