"""Rigid 6-DOF spatial arm: our dynamics algorithms against Pinocchio's, called from Python.

The arm is UR-like (a vertical column, three parallel pitch joints with lateral offsets, a
wrist yaw and a tool roll, a payload), written once as a list of `Link` and built by hand
in Pinocchio (see ``pinocchio_twin``). After checking that both give the same
accelerations, mass matrix and inverse dynamics on random states (1e-9), it times per call,
in one process with interleaved batches (median over repeats):

* ``forward_dynamics`` vs ``pinocchio.aba``,
* ``mass_matrix`` vs ``pinocchio.crba``,
* ``rnea`` vs ``pinocchio.rnea``,

and, to separate the compiled work from the cost of calling a numba kernel from Python, the
same kernels called in a compiled loop and an empty numba kernel that takes the same
(model arrays, workspace) tuples. Target: forward dynamics within 10x of
Pinocchio's ABA from Python. Run: ``.venv/bin/python bench/bench_rigid_dynamics.py``.
"""

import math

import numba
import numpy as np
import pinocchio

import bench_common as common
from flexible_manipulator.mechanics.chain import Joint, Link, RigidBody, SerialChain

HALF_PI = 0.5 * math.pi
CALLS, REPEATS = 2000, 9
TARGET = 10.0
# name, axis, origin xyz, origin rpy, length, mass, centre of mass (link frame)
ARM = (
    ('shoulder_pan', (1, 0, 0), (0, 0, 0), (0, -HALF_PI, 0), 0.089, 3.7, (0.045, 0, 0.01)),
    ('shoulder_lift', (0, 1, 0), (0, 0.136, 0), (0, HALF_PI, 0), 0.425, 8.4, (0.21, 0, 0.02)),
    ('elbow', (0, 1, 0), (0, -0.12, 0), (0, 0, 0), 0.392, 2.3, (0.18, 0.01, 0)),
    ('wrist_1', (0, 1, 0), (0, 0.093, 0), (0, 0, 0), 0.095, 1.2, (0.0, 0.02, 0.01)),
    ('wrist_2', (0, 0, 1), (0, 0, 0), (HALF_PI, 0, 0), 0.082, 1.2, (0.03, 0, 0.01)),
    ('wrist_3', (1, 0, 0), (0, 0, 0), (0, 0, 0.3), 0.05, 0.19, (0.02, 0, 0)),
)


def ur_like_arm():
    """Build the rigid 6-DOF arm: rod-like links with off-axis centres of mass, a payload."""
    links = []
    for name, axis, xyz, rpy, length, mass, com in ARM:
        radius = 0.04
        inertia = np.diag([0.5 * mass * radius ** 2] + [mass * (3 * radius ** 2 + length ** 2)
                                                        / 12.0] * 2)
        inertia[0, 1] = inertia[1, 0] = 1e-4 * mass      # a little product of inertia
        payload = (RigidBody(1.5, (0.03, 0.0, 0.0), ((2e-3, 0, 0), (0, 3e-3, 0), (0, 0, 3e-3)))
                   if name == 'wrist_3' else RigidBody())
        links.append(Link(name + '_link', Joint(name, axis=axis, xyz=xyz, rpy=rpy), length,
                          RigidBody(mass, com, tuple(map(tuple, inertia))), payload=payload))
    return SerialChain('ur_like', links, gravity_base=(0.0, 0.0, -9.80665))


def check_same(chain, data, pm, pd, rng):
    """Assert equal accelerations, mass matrices and inverse dynamics on random states."""
    for _ in range(20):
        q, v, x = rng.uniform(-math.pi, math.pi, 6), rng.normal(0, 2, 6), rng.normal(0, 5, 6)
        np.testing.assert_allclose(chain.forward_dynamics(data, q, v, x),
                                   pinocchio.aba(pm, pd, q, v, x), rtol=1e-9, atol=1e-9)
        crba = pinocchio.crba(pm, pd, q)
        np.testing.assert_allclose(chain.mass_matrix(data, q), np.triu(crba) + np.triu(crba, 1).T,
                                   rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(chain.rnea(data, q, v, x), pinocchio.rnea(pm, pd, q, v, x),
                                   rtol=1e-9, atol=1e-9)


def main():
    """Check, time and print the table."""
    chain = ur_like_arm()
    data = chain.create_data()
    pm = common.to_pinocchio(chain)
    pd = pm.createData()
    rng = np.random.default_rng(0)
    check_same(chain, data, pm, pd, rng)             # also compiles / loads every kernel
    q, v, u = rng.uniform(-math.pi, math.pi, 6), rng.normal(0, 2, 6), rng.normal(0, 5, 6)
    a = chain.arrays
    loops = {'forward_dynamics': lambda n: common.forward_dynamics_loop(a, data, q, v, u, n),
             'mass_matrix': lambda n: common.mass_matrix_loop(a, data, q, n),
             'rnea': lambda n: common.rnea_loop(a, data, q, v, u, n)}
    for loop in loops.values():
        loop(1)
    common.empty_kernel(a, data)
    times = common.time_interleaved({
        'forward_dynamics': lambda: chain.forward_dynamics(data, q, v, u),
        'aba': lambda: pinocchio.aba(pm, pd, q, v, u),
        'mass_matrix': lambda: chain.mass_matrix(data, q),
        'crba': lambda: pinocchio.crba(pm, pd, q),
        'rnea': lambda: chain.rnea(data, q, v, u),
        'pin_rnea': lambda: pinocchio.rnea(pm, pd, q, v, u),
        'empty': lambda: common.empty_kernel(a, data),
    }, CALLS, REPEATS)
    compiled = common.time_interleaved({name: lambda loop=loop: loop(CALLS)
                                        for name, loop in loops.items()}, 1, REPEATS)
    print(f'machine: {common.machine()}; pinocchio {pinocchio.__version__}, '
          f'numba {numba.__version__}')
    print(f'robot: {chain.name}, {chain.nv} joints; both implementations agree to 1e-9 on 20 '
          f'random states; median of {REPEATS} batches of {CALLS} calls\n')
    print('| operation | ours [us/call] | Pinocchio [us/call] | ours / Pinocchio '
          '| ours in a compiled loop [us/call] |\n|---|---|---|---|---|')
    for ours, theirs, label in (('forward_dynamics', 'aba', 'forward dynamics (aba)'),
                                ('mass_matrix', 'crba', 'mass matrix (crba)'),
                                ('rnea', 'pin_rnea', 'inverse dynamics (rnea)')):
        print(f'| {label} | {times[ours]:.2f} | {times[theirs]:.2f} '
              f'| {times[ours] / times[theirs]:.1f} | {compiled[ours] / CALLS:.2f} |')
    print(f'\nempty numba kernel taking (model arrays, workspace) from Python: '
          f'{times["empty"]:.2f} us/call (tuples of {len(a)} and {len(data)} arrays)')
    ratio = times['forward_dynamics'] / times['aba']
    print(f'\ntarget: forward dynamics within {TARGET:g}x of Pinocchio\'s aba from Python: '
          f'{ratio:.1f}x -> {"met" if ratio <= TARGET else "NOT met"}')


if __name__ == '__main__':
    main()
