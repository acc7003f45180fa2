"""The rigid link's step in the walk (numba): one translation along its x axis.

Its hub and payload are the walk's own bodies (``kernels._link``); its tip frame is at
(length, 0, 0) of its joint frame, a section at (x, 0, 0).
"""

from ... import compiled
from ...model.frame_steps import translate
from ...model.layout import DATA_TYPE, MODEL_TYPE
from ...tuple_tables import unpack

_inline = compiled.inline


@_inline
def walk(model_table, data_table, j, count):
    """Step from link j's joint frame to its tip: the translation by its length."""
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    translate(model.length[j], 0.0, 0.0, data, count)


@_inline
def to_section(data_table, count, x):
    """Step from the joint frame to the section at x [m]: the translation by x."""
    translate(x, 0.0, 0.0, unpack(data_table, DATA_TYPE), count)


@_inline
def section_pose(data_table, x):
    """Move the pose only to the section at x [m]."""
    data = unpack(data_table, DATA_TYPE)
    for i in range(3):
        data.pose_p[i] += data.pose_R[i, 0] * x
