"""A walk's steps from frame to frame: what moves J, the twist, the bias and the pose.

The walk (``kernels``) carries, at its current frame, the body Jacobian J (6 x nv, on the
active columns ``data.cols[:count]``), the twist eta, the bias acceleration alpha (J v' +
alpha = eta') and the pose (pose_R, pose_p). A step to a frame g = (R, p) relative to the
current one moves them all (`transport`, or `translate` for a pure translation); a
relative twist s of the new frame adds to eta and its ad term to alpha (`add_motion`).
Every link kind's steps are made of these (``links.<kind>.kernels``).
"""

from .. import compiled
from ..chain_kernels.spatial import ad_apply, adinv_apply, adinv_columns

_inline = compiled.inline


@_inline
def transport(R, p, data, count):
    """Carry J, eta, alpha and the pose to the frame g = (R, p) relative to the current one."""
    compose_pose(R, p, data)
    adinv_columns(R, p, data.J, data.cols, count)
    adinv_apply(R, p, data.eta, data.eta, data.carry)
    adinv_apply(R, p, data.alpha, data.alpha, data.carry)


@_inline
def translate(p0, p1, p2, data, count):
    """`transport` by a pure translation p: (w, v) -> (w, v + w x p), pose_p += pose_R p."""
    for i in range(3):
        data.pose_p[i] += data.pose_R[i, 0] * p0 + data.pose_R[i, 1] * p1 + data.pose_R[i, 2] * p2
    for k in range(count):
        c = data.cols[k]
        translate_twist(p0, p1, p2, data.J[:, c])
    translate_twist(p0, p1, p2, data.eta)
    translate_twist(p0, p1, p2, data.alpha)


@_inline
def translate_twist(p0, p1, p2, x):
    """Move a twist x = (w, v) to (w, v + w x p), in place."""
    w0, w1, w2 = x[0], x[1], x[2]
    x[3] += w1 * p2 - w2 * p1
    x[4] += w2 * p0 - w0 * p2
    x[5] += w0 * p1 - w1 * p0


@_inline
def compose_pose(R, p, data):
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
def add_motion(data, s):
    """Add s to eta and ad_eta s to alpha (a relative twist s added in the current frame)."""
    for i in range(6):
        data.eta[i] += s[i]
    ad_apply(data.eta, s, data.t1)
    for i in range(6):
        data.alpha[i] += data.t1[i]
