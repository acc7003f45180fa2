"""Rigid 6- and 12-DOF spatial arms: our dynamics algorithms against Pinocchio's, from Python.

The 6-DOF arm is UR-like (a vertical column, three parallel pitch joints with lateral
offsets, a wrist yaw and a tool roll, a payload), written once as a list of `Link` and
built by hand in Pinocchio (``bench_common.to_pinocchio``); the 12-DOF arm is two of them
in series (the second mounted on the first one's tool flange, the payload at the end).
After checking on each arm that both give the same accelerations, mass matrix and inverse
dynamics on random states (1e-9), it times per call, in one process with interleaved
batches (median over the batches, and their range):

* ``forward_dynamics`` vs ``pinocchio.aba``, and the two algorithms it may run: the
  composite mass matrix and a Cholesky solve (``composite_forward_dynamics``)
  and ``articulated_forward_dynamics`` (articulated-body algorithm),
* ``mass_matrix`` vs ``pinocchio.crba``,
* ``rnea`` vs ``pinocchio.rnea``,

the ratio ours / Pinocchio batch by batch, and, to separate the compiled work from the cost
of calling a numba kernel from Python, the same kernels called in a compiled loop and an
empty numba kernel that takes the same (model arrays, workspace) tuples. Target: forward
dynamics (``forward_dynamics``) within 2x of Pinocchio's ABA per call from Python, at 6
and at 12 joints.
Run: ``.venv/bin/python bench/bench_rigid_dynamics.py``.
"""

import math

import numba
import numpy as np
import pinocchio

import bench_common as common
from flexible_manipulator.mechanics.link_description import Joint, Link, RigidBody
from flexible_manipulator.mechanics.links import chain_from_links

HALF_PI = 0.5 * math.pi
CALLS, REPEATS = 2000, 9
TARGET = 2.0                    # forward dynamics / pinocchio.aba, per call from Python
JOINTS = (6, 12)
# name, axis, origin xyz, origin rpy, length, mass, centre of mass (link frame)
ARM = (
    ('shoulder_pan', (1, 0, 0), (0, 0, 0), (0, -HALF_PI, 0), 0.089, 3.7, (0.045, 0, 0.01)),
    ('shoulder_lift', (0, 1, 0), (0, 0.136, 0), (0, HALF_PI, 0), 0.425, 8.4, (0.21, 0, 0.02)),
    ('elbow', (0, 1, 0), (0, -0.12, 0), (0, 0, 0), 0.392, 2.3, (0.18, 0.01, 0)),
    ('wrist_1', (0, 1, 0), (0, 0.093, 0), (0, 0, 0), 0.095, 1.2, (0.0, 0.02, 0.01)),
    ('wrist_2', (0, 0, 1), (0, 0, 0), (HALF_PI, 0, 0), 0.082, 1.2, (0.03, 0, 0.01)),
    ('wrist_3', (1, 0, 0), (0, 0, 0), (0, 0, 0.3), 0.05, 0.19, (0.02, 0, 0)),
)


def ur_like_arm(joints=6):
    """Build a rigid UR-like arm: rod-like links with off-axis centres of mass, a payload.

    ``joints`` > 6 continues with a second copy of the arm mounted on the first one's tool
    flange (12: two UR-like arms in series); the payload is on the last link.
    """
    links = []
    for j in range(joints):
        name, axis, xyz, rpy, length, mass, com = ARM[j % len(ARM)]
        name += f'_{j // len(ARM) + 1}' if joints > len(ARM) else ''
        radius = 0.04
        inertia = np.diag([0.5 * mass * radius ** 2] + [mass * (3 * radius ** 2 + length ** 2)
                                                        / 12.0] * 2)
        inertia[0, 1] = inertia[1, 0] = 1e-4 * mass      # a little product of inertia
        payload = (RigidBody(1.5, (0.03, 0.0, 0.0), ((2e-3, 0, 0), (0, 3e-3, 0), (0, 0, 3e-3)))
                   if j == joints - 1 else RigidBody())
        links.append(Link(name + '_link', Joint(name, axis=axis, xyz=xyz, rpy=rpy), length,
                          RigidBody(mass, com, tuple(map(tuple, inertia))), payload=payload))
    label = 'ur_like' if joints == len(ARM) else f'ur_like_{joints}'
    return chain_from_links(label, links, (0.0, 0.0, -9.80665))


def check_same(chain, data, pm, pd, rng):
    """Assert equal accelerations, mass matrices and inverse dynamics on random states."""
    n = chain.nv
    for _ in range(20):
        q, v, x = rng.uniform(-math.pi, math.pi, n), rng.normal(0, 2, n), rng.normal(0, 5, n)
        aba = pinocchio.aba(pm, pd, q, v, x)
        for method in (chain.forward_dynamics, chain.composite_forward_dynamics,
                       chain.articulated_forward_dynamics):
            np.testing.assert_allclose(method(data, q, v, x), aba, rtol=1e-9, atol=1e-9)
        crba = pinocchio.crba(pm, pd, q)
        np.testing.assert_allclose(chain.mass_matrix(data, q), np.triu(crba) + np.triu(crba, 1).T,
                                   rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(chain.rnea(data, q, v, x), pinocchio.rnea(pm, pd, q, v, x),
                                   rtol=1e-9, atol=1e-9)


def measure(chain, rng):
    """Check one arm against Pinocchio, then time it: per-batch samples of every operation."""
    data = chain.create_data()
    pm = common.to_pinocchio(chain)
    pd = pm.createData()
    check_same(chain, data, pm, pd, rng)             # also compiles / loads every kernel
    n = chain.nv
    q, v, u = rng.uniform(-math.pi, math.pi, n), rng.normal(0, 2, n), rng.normal(0, 5, n)
    a = chain.arrays
    tables = chain.kernel_inputs(data)
    composite = chain.composite_forward_dynamics
    loops = {'composite': lambda k: common.forward_dynamics_loop(*tables, q, v, u, k),
             'articulated': lambda k: common.articulated_forward_dynamics_loop(*tables, q, v,
                                                                               u, k),
             'mass_matrix': lambda k: common.mass_matrix_loop(*tables, q, k),
             'rnea': lambda k: common.rnea_loop(*tables, q, v, u, k)}
    for loop in loops.values():
        loop(1)
    common.empty_kernel(a, data)
    samples = common.sample_interleaved({
        'forward_dynamics': lambda: chain.forward_dynamics(data, q, v, u),
        'aba': lambda: pinocchio.aba(pm, pd, q, v, u),
        'composite': lambda: composite(data, q, v, u),
        'articulated': lambda: chain.articulated_forward_dynamics(data, q, v, u),
        'mass_matrix': lambda: chain.mass_matrix(data, q),
        'crba': lambda: pinocchio.crba(pm, pd, q),
        'rnea': lambda: chain.rnea(data, q, v, u),
        'pin_rnea': lambda: pinocchio.rnea(pm, pd, q, v, u),
        'empty': lambda: common.empty_kernel(a, data),
    }, CALLS, REPEATS)
    times = {label: s['wall'] for label, s in samples.items()}
    compiled = common.sample_interleaved({name: lambda loop=loop: loop(CALLS)
                                          for name, loop in loops.items()}, 1, REPEATS)
    for name, s in compiled.items():
        times[name + '_loop'] = [t / CALLS for t in s['wall']]
    times['forward_dynamics_loop'] = []             # it runs one of the two kernels above
    times['tuples'] = (len(a), len(data))
    return times


def ratios(times, ours, theirs):
    """Ratio ours / theirs in each batch (the two were timed in the same round)."""
    return [x / y for x, y in zip(times[ours], times[theirs])]


def main():
    """Check, time and print the table."""
    rng = np.random.default_rng(0)
    arms = [ur_like_arm(joints) for joints in JOINTS]
    results = {arm.nv: measure(arm, rng) for arm in arms}
    print(f'machine: {common.machine()}; pinocchio {pinocchio.__version__}, '
          f'numba {numba.__version__}')
    print('robots: ' + '; '.join(f'{arm.name}, {arm.nv} joints (dynamics_algorithm '
                                 f'{getattr(arm, "dynamics_algorithm", "-")})' for arm in arms)
          + '; both implementations agree to 1e-9 on 20 random states')
    print(f'wall time per call, median of {REPEATS} interleaved batches of {CALLS} calls '
          '(min-max over the batches); the ratio is taken batch by batch\n')
    print('| joints | operation | ours [us/call] | Pinocchio [us/call] | ours / Pinocchio '
          '| ours in a compiled loop [us/call] |\n|---|---|---|---|---|---|')
    for nv, times in results.items():
        for ours, theirs, label in (
                ('forward_dynamics', 'aba', 'forward_dynamics vs aba'),
                ('composite', 'aba', 'composite (M + Cholesky) vs aba'),
                ('articulated', 'aba', 'articulated_forward_dynamics vs aba'),
                ('mass_matrix', 'crba', 'mass_matrix vs crba'),
                ('rnea', 'pin_rnea', 'rnea vs rnea')):
            loop = times[ours + '_loop']
            print(f'| {nv} | {label} | {common.with_range(times[ours], 2)} '
                  f'| {common.with_range(times[theirs], 2)} '
                  f'| {common.with_range(ratios(times, ours, theirs), 1)} '
                  f'| {common.with_range(loop, 2) if loop else "one of the next two"} |')
    print()
    for nv, times in results.items():
        print(f'{nv} joints: empty numba kernel taking (model arrays, workspace) from Python: '
              f'{common.with_range(times["empty"], 2)} us/call (tuples of {times["tuples"][0]} '
              f'and {times["tuples"][1]} arrays)')
    print(f'\ntarget: forward dynamics within {TARGET:g}x of pinocchio.aba, per call from '
          'Python (median ratio):')
    for nv, times in results.items():
        ratio = common.spread(ratios(times, 'forward_dynamics', 'aba'))
        print(f'  {nv} joints: {ratio.median:.1f}x ({ratio.low:.1f}-{ratio.high:.1f}) -> '
              f'{"met" if ratio.median <= TARGET else "NOT met"}')


if __name__ == '__main__':
    main()
