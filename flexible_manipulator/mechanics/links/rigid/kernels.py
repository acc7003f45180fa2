"""The rigid link's step in the walk (numba): one translation along its x axis.

Its hub and payload are the walk's own bodies (``kernels._link``); its tip frame is at
(length, 0, 0) of its joint frame, a section at (x, 0, 0).
"""

from ... import compiled
from ...model.frame_steps import translate

_inline = compiled.inline


@_inline
def walk(model, data, j, count):
    """Step from link j's joint frame to its tip: the translation by its length."""
    translate(model.length[j], 0.0, 0.0, data, count)


@_inline
def to_section(data, count, x):
    """Step from the joint frame to the section at x [m]: the translation by x."""
    translate(x, 0.0, 0.0, data, count)


@_inline
def section_pose(data, x):
    """Move the pose only to the section at x [m]."""
    for i in range(3):
        data.pose_p[i] += data.pose_R[i, 0] * x
