"""Compiled kernels of the serial chain with floating-frame links, one algorithm per module.

The user-facing API is `mechanics.chain` (`SerialChain`, `ChainData`); these are the numba
kernels it calls, on the model's constant tuple and its workspace tuple. Modules, from the
elementary to the composite:

* `spatial`: twists, wrenches, rotations, the inertial wrench of a rigid body;
* `linalg`: products, congruences E^T M E, Cholesky factor and solve;
* `beam_section`: displacement, motion and inertial loads of a beam section (assumed modes);
* `kinematics`: forward pass (twists and accelerations of every frame) and placements;
* `rnea`: recursive Newton-Euler inverse dynamics;
* `mass_matrix`: the generalized mass matrix M(q);
* `forward_dynamics`: v' = M^-1 (B u - h) with the composite M and a Cholesky solve;
* `aba`: the same by the articulated-body algorithm, O(n) in links;
* `frames`: pose, Jacobian and motion of beam sections (programs) and TF frames;
* `energy`: the potential energy;
* `steppers`: the first-order equations of motion and the compiled time steppers.

Everything is written with explicit loops on preallocated arrays so that the kernels
compile with numba and allocate nothing per call (see `compiled`).
"""

from .aba import articulated_forward_dynamics
from .energy import potential_energy
from .forward_dynamics import forward_dynamics
from .frames import (local_transforms, section_jacobian, section_kinematics, section_motion,
                     section_placement)
from .kinematics import JOINT_PRISMATIC, JOINT_REVOLUTE, forward_pass, placements
from .linalg import cholesky_factor, cholesky_substitute
from .mass_matrix import mass_matrix
from .rnea import rnea
from .spatial import spatial_inertia
from .steppers import explicit_steps, explicit_steps_articulated, rhs, rosenbrock_steps

__all__ = [
    'JOINT_PRISMATIC', 'JOINT_REVOLUTE', 'articulated_forward_dynamics', 'cholesky_factor',
    'cholesky_substitute', 'explicit_steps', 'explicit_steps_articulated', 'forward_dynamics',
    'forward_pass', 'local_transforms', 'mass_matrix', 'placements', 'potential_energy', 'rhs',
    'rnea', 'rosenbrock_steps', 'section_jacobian', 'section_kinematics', 'section_motion',
    'section_placement', 'spatial_inertia',
]
