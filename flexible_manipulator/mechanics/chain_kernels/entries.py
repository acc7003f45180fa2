"""The compiled units the Python API (`chain.SerialChain`) calls, by name.

Each takes the model and its workspace as two int64 tables (`tuple_tables`, `chain_layout`):
unboxing the model's constant tuple and workspace (~130 arrays) at every call from Python
cost ~6 us, as much as the dynamics of a 6-joint arm; two tables cost ~0.1 us. A unit
rebuilds the tuples of views it needs (no copy) and calls the other units it builds on
(the forward pass, the inverse dynamics, the mass matrix), so each algorithm is compiled
once, not again inside every kernel that runs it. Arguments after the two tables are the
kernel's own. Each unit is defined in its algorithm's module.
"""

from .aba import articulated_forward_dynamics
from .energy import potential_energy
from .forward_dynamics import forward_dynamics
from .frames import (local_transforms, section_jacobian, section_kinematics, section_motion,
                     section_placement)
from .kinematics import placements
from .mass_matrix import mass_matrix
from .rnea import rnea
from .steppers import explicit_steps, explicit_steps_articulated, rosenbrock_steps

__all__ = [
    'articulated_forward_dynamics', 'explicit_steps', 'explicit_steps_articulated',
    'forward_dynamics', 'local_transforms', 'mass_matrix', 'placements', 'potential_energy',
    'rnea', 'rosenbrock_steps', 'section_jacobian', 'section_kinematics', 'section_motion',
    'section_placement',
]
