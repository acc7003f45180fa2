"""Entry points from Python: each kernel taking the model and its workspace as two tables.

`SerialChain` calls these, not the kernels themselves: unboxing the model's constant tuple
and workspace (~130 arrays) at every call from Python cost ~6 us, as much as the dynamics
of a 6-joint arm; two int64 tables (`tuple_tables`, `chain_layout`) cost ~0.1 us. Each
entry rebuilds the tuples of views (no copy) and runs the kernel inlined, so an entry is
the kernel's only compiled unit. Arguments after the two tables are the kernel's own.
"""

from .. import compiled
from ..chain_layout import DATA_LAYOUT, MODEL_LAYOUT
from ..tuple_tables import unpack
from . import aba, energy, frames, kinematics, steppers
# The package rebinds these module names to their kernels: import the kernels themselves.
from .forward_dynamics import forward_dynamics as _forward_dynamics
from .mass_matrix import mass_matrix as _mass_matrix
from .rnea import rnea as _rnea

_jit = compiled.jit
MODEL, DATA = MODEL_LAYOUT.type, DATA_LAYOUT.type


@_jit
def forward_dynamics(model, data, q, v, u):
    """`forward_dynamics.forward_dynamics` on tables."""
    return _forward_dynamics(unpack(model, MODEL), unpack(data, DATA), q, v, u)


@_jit
def articulated_forward_dynamics(model, data, q, v, u):
    """`aba.articulated_forward_dynamics` on tables."""
    return aba.articulated_forward_dynamics(unpack(model, MODEL), unpack(data, DATA), q, v, u)


@_jit
def rnea(model, data, q, v, a, gravity_scale, with_elastic, joint_poses_ready):
    """`rnea.rnea` on tables."""
    _rnea(unpack(model, MODEL), unpack(data, DATA), q, v, a, gravity_scale, with_elastic,
          joint_poses_ready)


@_jit
def mass_matrix(model, data, q, poses_ready):
    """`mass_matrix.mass_matrix` on tables."""
    _mass_matrix(unpack(model, MODEL), unpack(data, DATA), q, poses_ready)


@_jit
def placements(model, data, q):
    """`kinematics.placements` on tables."""
    kinematics.placements(unpack(model, MODEL), unpack(data, DATA), q)


@_jit
def section_placement(model, data, j, x, phi, slope, g, q, R_out, p_out):
    """`kinematics.placements`, then `frames.section_placement`, on tables."""
    m, d = unpack(model, MODEL), unpack(data, DATA)
    kinematics.placements(m, d, q)
    frames.section_placement(m, d, j, x, phi, slope, g, q, R_out, p_out)


@_jit
def section_jacobian(model, data, j, x, phi, slope, g, q, R_sec, J):
    """`frames.section_jacobian` on tables."""
    frames.section_jacobian(unpack(model, MODEL), unpack(data, DATA), j, x, phi, slope, g, q,
                            R_sec, J)


@_jit
def section_kinematics(model, data, j, x, phi, slope, g, q, v, R_out, p_out, J, motion):
    """`frames.section_kinematics` on tables."""
    frames.section_kinematics(unpack(model, MODEL), unpack(data, DATA), j, x, phi, slope, g,
                              q, v, R_out, p_out, J, motion)


@_jit
def section_motion(model, data, j, x, phi, slope, g, q, v, R_sec, out):
    """`frames.section_motion` on tables."""
    frames.section_motion(unpack(model, MODEL), unpack(data, DATA), j, x, phi, slope, g, q, v,
                          R_sec, out)


@_jit
def potential_energy(model, data, q):
    """`energy.potential_energy` on tables."""
    return energy.potential_energy(unpack(model, MODEL), unpack(data, DATA), q)


@_jit
def local_transforms(model, data, q, links, xs, is_section, phi, slope, g, R_out, p_out,
                     quat_out):
    """`frames.local_transforms` on tables."""
    frames.local_transforms(unpack(model, MODEL), unpack(data, DATA), q, links, xs,
                            is_section, phi, slope, g, R_out, p_out, quat_out)


@_jit
def explicit_steps(model, data, x, u, h, count, a, b, stages, trial, theta):
    """`steppers.explicit_steps` on tables."""
    return steppers.explicit_steps(unpack(model, MODEL), unpack(data, DATA), x, u, h, count,
                                   a, b, stages, trial, theta)


@_jit
def explicit_steps_articulated(model, data, x, u, h, count, a, b, stages, trial, theta):
    """`steppers.explicit_steps_articulated` on tables."""
    return steppers.explicit_steps_articulated(unpack(model, MODEL), unpack(data, DATA), x, u,
                                               h, count, a, b, stages, trial, theta)


@_jit
def rosenbrock_steps(model, data, x, u, h, count, stages, trial, theta):
    """`steppers.rosenbrock_steps` on tables."""
    return steppers.rosenbrock_steps(unpack(model, MODEL), unpack(data, DATA), x, u, h, count,
                                     stages, trial, theta)
