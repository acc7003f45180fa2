"""The flexible joint's steps in the walk (numba): the gear's deflection, then the rigid link.

After the joint's motion by the motor angle theta (``model.kernels._joint``), the link
turns by the gear's deflection delta = q[start] about the same axis: a step exp(delta a)
with a = ``joint_motion`` (so the link's angle is theta + delta), whose column of J is a
(a is fixed by its own exponential: the theta column, carried through the step, is a
too) and whose relative twist is a delta'. Then the rigid link's step (``rigid.kernels``):
the translation by its length; its body rides on the tip frame (``FlexibleJointKind.bodies``).
"""

from ... import compiled
from ...chain_kernels.spatial import se3_exp
from ...model.frame_steps import add_motion, compose_pose, transport
from ...model.layout import DATA_TYPE, MODEL_TYPE
from ...tuple_tables import unpack
from ..rigid import kernels as rigid

_jit, _inline = compiled.jit, compiled.inline


@_inline
def _turn(model, data, j, delta):
    """(data.R, data.p) = exp(delta a): the gear's turn about link j's joint motion a."""
    for i in range(6):
        data.t2[i] = model.joint_motion[j, i] * delta
    se3_exp(data.t2, data.R, data.p)


@_jit        # not inlined: one copy serves the walk and the section pass (compile time)
def deflect(model_table, data_table, j, start, q, v, count):
    """Step by the deflection delta = q[start] about link j's joint axis; add its column."""
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    _turn(model, data, j, q[start])
    transport(data.R, data.p, data, count)
    for i in range(6):
        data.J[i, start] += model.joint_motion[j, i]
        data.s[i] = model.joint_motion[j, i] * v[start]
    add_motion(data, data.s)


@_inline
def walk(model, data, model_table, data_table, j, start, q, v, count):
    """Step from link j's joint frame to its tip: the deflection, then the link's length."""
    deflect(model_table, data_table, j, start, q, v, count)
    rigid.walk(model, data, j, count)


@_inline
def to_section(data, model_table, data_table, j, start, q, v, count, x):
    """Step from the joint frame to the section at x [m]: the deflection, then x."""
    deflect(model_table, data_table, j, start, q, v, count)
    rigid.to_section(data, count, x)


@_inline
def joint_pose(model, data, j, start, q):
    """Move the pose only by the deflection: the link frame behind the gear (TF)."""
    _turn(model, data, j, q[start])
    compose_pose(data.R, data.p, data)
