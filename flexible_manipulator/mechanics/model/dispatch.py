"""The walk's one dispatch on a link's kind (numba): each registered kind's steps, by mode.

A link's ``link_kind`` is its kind's ``layout.CODE``; the named modes below are those
codes, and each function here sends a link to its kind's steps (``links.<kind>.kernels``):

* `walk`: from the joint frame to the tip, adding the bodies the kind carries
  (``model.kernels._link``);
* `to_section`: from the joint frame to the section at x, moving J, twist and bias
  (``model.kernels.section_motion``);
* `section_pose`: the pose only of the section at x in the link frame, the link frame
  being where `joint_pose` leaves it (``model.kernels.local_transforms``: TF);
* `joint_pose`: what a kind adds to its joint's transform (a flexible joint's deflection).

Numba compiles static code, so a kind registered in ``links.KINDS`` is also one import
and one branch per function here; every function is inlined into its caller.
"""

from .. import compiled
from ..links.beam import kernels as beam, layout as beam_layout
from ..links.flexible_joint import kernels as flexible_joint, layout as flexible_joint_layout
from ..links.rigid import kernels as rigid, layout as rigid_layout
from ..links.rod import kernels as rod, layout as rod_layout

_inline = compiled.inline

# the modes: each kind's ``link_kind``
RIGID, BEAM, ROD = rigid_layout.CODE, beam_layout.CODE, rod_layout.CODE
FLEXIBLE_JOINT = flexible_joint_layout.CODE


@_inline
def walk(model, data, model_table, data_table, j, q, v, count, bodies):
    """Walk link j from its joint frame to its tip frame by its kind (``bodies``: the mode)."""
    start, m = model.strain_start[j], model.strain_count[j]
    kind = model.link_kind[j]
    if kind == ROD:
        rod.walk(model_table, data_table, j, start, m, q, v, count, bodies)
    elif kind == BEAM:
        beam.walk(model, model_table, data_table, j, start, m, q, v, count, bodies)
    elif kind == FLEXIBLE_JOINT:
        flexible_joint.walk(model, data, model_table, data_table, j, start, q, v, count)
    else:
        rigid.walk(model, data, j, count)


@_inline
def to_section(model, data, model_table, data_table, j, count, segments, h, B1, B2, phi,
               slope, g, x, q, v):
    """Step from link j's joint frame to its section at x (``Chain.section_table``'s tables).

    ``count``: the active columns, the link's own coordinates the last m of them.
    """
    start, m = model.strain_start[j], model.strain_count[j]
    kind = model.link_kind[j]
    if kind == ROD:
        rod.to_section(model, data, data_table, j, start, m, count, segments, h, B1, B2, q, v)
    elif kind == BEAM:
        beam.to_section(model_table, data_table, j, start, m, x, phi, slope, g, q, v, count)
    elif kind == FLEXIBLE_JOINT:
        flexible_joint.to_section(data, model_table, data_table, j, start, q, v, count, x)
    else:
        rigid.to_section(data, count, x)


@_inline
def section_pose(model, data, model_table, data_table, j, segments, h, B1, B2, phi, slope, g,
                 x, q, v):
    """Move the pose to link j's section at x from its link frame (J, twist: scratch).

    A rod's and a beam's link frame is the joint frame; a flexible joint's is behind its
    deflection (`joint_pose`), the section then a translation by x as a rigid link's.
    """
    start, m = model.strain_start[j], model.strain_count[j]
    kind = model.link_kind[j]
    if kind == ROD:         # its pose alone
        rod.section_pose(model, data_table, j, start, m, segments, h, B1, B2, q)
    elif kind == BEAM:      # its full step, on its own columns only
        for c in range(m):
            data.cols[c] = start + c
        beam.to_section(model_table, data_table, j, start, m, x, phi, slope, g, q, v, m)
    else:
        rigid.section_pose(data, x)


@_inline
def joint_pose(model, data, j, q):
    """Move the pose by what link j's kind adds to its joint's transform (TF's link frame)."""
    if model.link_kind[j] == FLEXIBLE_JOINT:
        flexible_joint.joint_pose(model, data, j, model.strain_start[j], q)
