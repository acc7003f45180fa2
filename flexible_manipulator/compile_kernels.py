"""Compile (and cache on disk) the numba kernels by running them once on the shipped models.

Numba compiles a kernel the first time it runs and caches the machine code next to the
sources; doing it at set-up time keeps the first plant start-up and the first test fast.
Usage: ``python -m flexible_manipulator.compile_kernels``.
"""

import glob
import os
import time

import numpy as np

from .mechanics.servo import ServoSystem
from .mechanics.simulation import Simulation
from .model_config import load_model
from .description.urdf import joint_frames

MODELS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'config',
                      'models')


def compile_for(model):
    """Run every kernel the plant, the controller and the tests use, once."""
    data = model.create_data()
    q, v = model.neutral_configuration(), np.zeros(model.nv)
    model.rnea(data, q, v, v)
    model.forward_dynamics(data, q, v, np.zeros(model.nu))
    model.potential_energy(data, q)
    model.section_jacobian(data, q, 0, model.links[0].length)
    model.section_motion(data, q, v, 0, model.links[0].length)
    model.section_kinematics(data, q, v, 0, model.links[0].length)
    moving = [f for f in joint_frames(model) if f.moving]
    model.frame_transforms([(f.link, f.x if f.kind == 'section' else None)
                            for f in moving]).update(data, q)
    for method in ('rk4', 'ros2'):
        Simulation(model, 1e-3, method, q, v).advance(np.zeros(model.nu), 1e-3)


def compile_for_servo(model):
    """Run the servo model's kernels once: outputs, and both steppers (servo and free)."""
    data = model.create_data()
    q, v = model.neutral_configuration(), np.zeros(model.nv)
    u = np.zeros(model.nu)
    model.outputs(data, q, v, u if model.nu else None)
    for method in ('rk4', 'ros2'):
        Simulation(model, 1e-3, method, q, v).advance(u, 1e-3)


def main():
    """Compile the kernels for every model in config/models (and chains' rigid twins)."""
    start = time.monotonic()
    for path in sorted(glob.glob(os.path.join(MODELS, '*.yaml'))):
        model = load_model(path)
        if isinstance(model, ServoSystem):
            compile_for_servo(model)
            continue
        compile_for(model)
        compile_for(model.rigid_twin())
    print(f'[setup] numba kernels compiled and cached in {time.monotonic() - start:.1f} s')


if __name__ == '__main__':
    main()
