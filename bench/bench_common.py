"""Shared helpers of the benchmarks: a chain's rigid twin in Pinocchio, timers, loops.

`to_pinocchio` writes a rigid chain model (no modes) as a `pinocchio.Model` with
Pinocchio's own SE3 and roll-pitch-yaw: joint j sits at Trans(L_(j-1) e_x) SE3(rpy, xyz) of
the previous joint (our joint origin is given in the previous link's tip frame, at x = L),
the link body is an `Inertia` on its joint, the payload one at Trans(L e_x) and a beam a
uniform rod (mass rho A L, centre at L/2, inertia diag(0, m L^2/12, m L^2/12)). Joint
armature goes to ``model.armature``; Pinocchio's ABA has no joint friction, so callers pass
tau = u - D v to compare with a chain that has joint damping D.
"""

from collections import namedtuple
import os
import statistics
import time

import numba
import numpy as np
import pinocchio

from flexible_manipulator.mechanics import compiled
from flexible_manipulator.mechanics.model import articulated, kernels


def to_pinocchio(chain):
    """Build the Pinocchio model of a rigid chain (beams as rigid rods)."""
    model = pinocchio.Model()
    parent, parent_length = 0, 0.0
    for link in chain.links:
        joint = link.joint
        axis = np.asarray(joint.axis, dtype=float) / np.linalg.norm(joint.axis)
        joint_model = (pinocchio.JointModelRevoluteUnaligned(axis) if joint.type == 'revolute'
                       else pinocchio.JointModelPrismaticUnaligned(axis))
        origin = (pinocchio.SE3(np.eye(3), np.array([parent_length, 0.0, 0.0]))
                  * pinocchio.SE3(pinocchio.rpy.rpyToMatrix(*joint.rpy), np.array(joint.xyz)))
        parent = model.addJoint(parent, joint_model, origin, joint.name)
        tip = pinocchio.SE3(np.eye(3), np.array([link.length, 0.0, 0.0]))
        for body, placement in ((link.body, pinocchio.SE3.Identity()), (link.payload, tip)):
            model.appendBodyToJoint(parent, pinocchio.Inertia(
                body.mass, np.array(body.com, dtype=float), np.array(body.inertia, dtype=float)),
                placement)
        if link.beam is not None:
            mass = link.beam.linear_density * link.length
            rod = np.diag([0.0, 1.0, 1.0]) * mass * link.length ** 2 / 12.0
            model.appendBodyToJoint(parent, pinocchio.Inertia(
                mass, np.array([link.length / 2.0, 0.0, 0.0]), rod), pinocchio.SE3.Identity())
        parent_length = link.length
    model.armature = np.array([link.joint.armature for link in chain.links])
    model.gravity = pinocchio.Motion(np.asarray(chain.gravity_base, dtype=float), np.zeros(3))
    return model


def model_path(name):
    """Path of a shipped model file, config/models/<name>.yaml."""
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'config',
                        'models', name + '.yaml')


def joint_damping(chain):
    """Joint viscous friction coefficients of a chain (Pinocchio's ABA ignores friction)."""
    return np.array([link.joint.damping for link in chain.links])


def time_interleaved(functions, calls, repeats):
    """Median wall time per call [us] of each function, batches interleaved.

    ``functions`` maps a label to a no-argument callable; each repeat runs ``calls`` calls of
    every function in turn, so slow drifts of the machine hit all of them alike (the
    batches themselves: `sample_interleaved`).
    """
    samples = sample_interleaved(functions, calls, repeats)
    return {label: statistics.median(values['wall']) for label, values in samples.items()}


Spread = namedtuple('Spread', 'median low high')
Spread.__doc__ = 'Median and range (min, max) of repeated measurements.'


def spread(values):
    """Return the median and the range of ``values`` as a `Spread`."""
    values = list(values)
    return Spread(statistics.median(values), min(values), max(values))


def with_range(values, digits=1):
    """Format the median of ``values`` followed by their range: ``141.4 (138.0-150.2)``."""
    s = spread(values)
    return f'{s.median:.{digits}f} ({s.low:.{digits}f}-{s.high:.{digits}f})'


def sample_interleaved(functions, calls, repeats):
    """Time per call [us] of each function in every batch: wall and CPU time of the thread.

    Returns, per label, ``{'wall': [...], 'cpu': [...]}`` with one value per batch, so that
    callers can print the median and the spread. The CPU time is
    the calling thread's (``time.thread_time_ns``): the time the machine's other work takes
    from this process does not count.
    """
    samples = {label: {'wall': [], 'cpu': []} for label in functions}
    for _ in range(repeats):
        for label, function in functions.items():
            cpu0, wall0 = time.thread_time_ns(), time.perf_counter_ns()
            for _ in range(calls):
                function()
            wall1, cpu1 = time.perf_counter_ns(), time.thread_time_ns()
            samples[label]['wall'].append((wall1 - wall0) / calls * 1e-3)
            samples[label]['cpu'].append((cpu1 - cpu0) / calls * 1e-3)
    return samples


def machine():
    """Describe the computer: CPU model and number of logical CPUs."""
    model = 'unknown CPU'
    try:
        with open('/proc/cpuinfo', encoding='utf-8') as stream:
            for line in stream:
                if line.startswith('model name'):
                    model = line.split(':', 1)[1].strip()
                    break
    except OSError:
        pass
    return f'{model}, {os.cpu_count()} logical CPUs'


# Numba checks only this file's time stamp, but the loops embed the kernels they call.
compiled.drop_stale_caches(os.path.dirname(os.path.abspath(__file__)))
# Loops that call a kernel ``count`` times inside compiled code, on the model's and the
# workspace's tables (the chain model's `kernel_inputs`): the cost of the kernel itself, without
# the Python-to-numba call (same fastmath flags as the package's kernels). Cached on disk.
_loop = numba.njit(cache=True, _nrt=False, fastmath=compiled.FASTMATH)


@_loop
def forward_dynamics_loop(model_table, data_table, q, v, u, count):
    for _ in range(count):
        kernels.forward_dynamics_entry(model_table, data_table, q, v, u)


@_loop
def articulated_forward_dynamics_loop(model_table, data_table, q, v, u, count):
    for _ in range(count):
        articulated.forward_dynamics(model_table, data_table, q, v, u)


@_loop
def mass_matrix_loop(model_table, data_table, q, count):
    for _ in range(count):
        kernels.mass_and_bias(model_table, data_table, q, q, False)   # M, whatever v


@_loop
def rnea_loop(model_table, data_table, q, v, a, count):
    for _ in range(count):
        kernels.inverse_dynamics(model_table, data_table, q, v, a)


@_loop
def empty_kernel(arrays, data):
    """Do nothing with the model and workspace tuples: the bare cost of passing them."""
    return arrays.length[0] + data.J[0, 0]
