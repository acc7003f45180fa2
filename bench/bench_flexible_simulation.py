"""Accuracy and speed of headless 5 s simulations of the shipped flexible arms.

For each model (planar two-link, spatial three-link), from rest with straight links, under
the same smooth torque input u(t) (held over 2 ms control periods, as the plant applies it):

* a reference run, rk4 with a 2e-5 s step, checked by halving the step once;
* for rk4 and ros2 and a ladder of steps, the max tip-position error over 5 s against the
  reference and the wall time of the run advanced in 2 ms chunks -> real-time factor.

Tip position: ``section_pose(data, q, last link, its length)[1]`` every 2 ms. Then, as
context, our compiled RK4 step against an RK4 step of the planar arm's rigid twin written
in Python on Pinocchio's ABA, and the Python cost of one ``advance`` call.
Run: ``.venv/bin/python bench/bench_flexible_simulation.py``.
"""

import os
import resource
import sys
import time

import numpy as np
import pinocchio

from flexible_manipulator.mechanics.simulation import NonFiniteStateError, Simulation
from flexible_manipulator.model_config import load_model
from bench_common import joint_damping, machine, time_interleaved, to_pinocchio

MODELS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'config',
                      'models')
DURATION = 5.0
PERIOD = 2e-3                     # control period and tip sampling [s]
REFERENCE_STEP = 2e-5
STEPS = (2e-3, 1e-3, 5e-4, 2.5e-4, 1.25e-4)
INTEGRATORS = ('rk4', 'rosenbrock2')
TOLERANCE = 1e-4                  # tip position [m]
RAMP = 1.0                        # the sinusoids fade in over this time [s]: no mean drift
# model: (target real-time factor, initial joint angles [rad], amplitude / effort limit,
# frequencies [Hz]). The spatial arm starts with both links below the horizontal, where
# gravity is restoring (a held horizontal arm creeps upward under any oscillation).
CASES = {
    'two_link_flexible': (20.0, (0.0, 0.0), (0.25, 0.08), (1.3, 2.1)),
    'three_link_spatial_flexible': (5.0, (0.0, 0.8, 0.6), (0.02, 0.06, 0.02), (0.9, 1.4, 2.3)),
}


def initial(model, start):
    """Coordinates with the given joint angles and straight links."""
    q = np.zeros(model.nq)
    q[:model.n_joints] = start
    return q


def torque_program(model, start, amplitude, frequency):
    """Input of every control period: static gravity load at rest plus faded-in sinusoids.

    u_i(t_k) = h_i + a_i limit_i s(t_k) sin(2 pi f_i t_k), s rising as (1 - cos) / 2 from 0
    to 1 over RAMP seconds, h the joint efforts that hold the straight arm at rest at
    the joint angles ``start``.
    """
    data = model.create_data()
    rest = initial(model, start)
    hold = model.bias_forces(data, rest, 0.0 * rest)[:model.nu].copy()
    t = np.arange(round(DURATION / PERIOD)) * PERIOD
    fade = 0.5 - 0.5 * np.cos(np.pi * np.minimum(t / RAMP, 1.0))
    u = hold + (np.asarray(amplitude) * model.effort_limit
                * fade[:, None] * np.sin(2.0 * np.pi * np.outer(t, frequency)))
    assert np.all(np.abs(u) <= model.effort_limit), 'input exceeds the effort limits'
    return u


def simulate(model, integrator, step, program, q0):
    """Run 5 s; return (coordinates every 2 ms, wall time [s]) or (None, wall) if unstable."""
    sim = Simulation(model, step, integrator, q0)
    sim.advance(program[0], step)                      # compile or load the kernel
    sim.reset()
    q = np.zeros((len(program) + 1, model.nq))
    q[0] = q0
    start = time.perf_counter()
    try:
        for k, effort in enumerate(program):
            sim.advance(effort, PERIOD)
            q[k + 1] = sim.q
    except NonFiniteStateError:
        return None, time.perf_counter() - start
    return q, time.perf_counter() - start


def tip_positions(model, q):
    """Tip of the last link in the base frame for every row of q."""
    data, last = model.create_data(), len(model.links) - 1
    length = model.links[last].length
    return np.array([model.section_pose(data, row, last, length)[1] for row in q])


def errors(model, q, q_ref, tip_ref):
    """Max tip-position error [m] and max joint-angle error [rad] against the reference."""
    tip = np.max(np.linalg.norm(tip_positions(model, q) - tip_ref, axis=1))
    return tip, np.max(np.abs(q - q_ref)[:, :model.n_joints])


def run_model(name):
    """Print the accuracy/speed table of one model; return (model, summary line)."""
    target, start, amplitude, frequency = CASES[name]
    model = load_model(os.path.join(MODELS, name + '.yaml'))
    program = torque_program(model, start, amplitude, frequency)
    q0 = initial(model, start)
    print(f'\n## {name}: nv = {model.nv}, input amplitude '
          f'{np.round(np.asarray(amplitude) * model.effort_limit, 2)} N m at {frequency} Hz')
    q_ref, wall_ref = simulate(model, 'rk4', REFERENCE_STEP, program, q0)
    q_half, wall_half = simulate(model, 'rk4', REFERENCE_STEP / 2, program, q0)
    tip_ref = tip_positions(model, q_ref)
    check = errors(model, q_half, q_ref, tip_ref)
    joints = np.max(np.abs(q_ref[:, :model.n_joints]), axis=0)
    print(f'reference rk4 h = {REFERENCE_STEP:g} s ({wall_ref:.1f} s wall); halving the step '
          f'changes the tip by {check[0]:.1e} m, the joints by {check[1]:.1e} rad '
          f'({wall_half:.1f} s wall)')
    straight = q_ref * (np.arange(model.nq) < model.n_joints)   # same joints, no bending
    print(f'max tip deflection {errors(model, straight, q_ref, tip_ref)[0] * 1e3:.1f} mm, '
          f'max |joint| {np.round(joints, 2)} rad')
    print('\n| integrator | step [s] | max tip error [m] | max joint error [rad] | wall [s] '
          '| real-time factor | us/step |\n|---|---|---|---|---|---|---|')
    best = None
    for integrator in INTEGRATORS:
        for step in STEPS:
            q, wall = simulate(model, integrator, step, program, q0)
            if q is None:
                print(f'| {integrator} | {step:g} | unstable (non-finite) | | | | |')
                continue
            if wall < 1.0:                 # short runs: median of 3 for a steadier wall time
                wall = sorted([wall] + [simulate(model, integrator, step, program, q0)[1]
                                        for _ in range(2)])[1]
            tip, joint = errors(model, q, q_ref, tip_ref)
            print(f'| {integrator} | {step:g} | {tip:.1e} | {joint:.1e} | {wall:.3f} '
                  f'| {DURATION / wall:.1f} | {wall / DURATION * step * 1e6:.1f} |')
            if tip <= TOLERANCE and (best is None or wall < best[2]):
                best = (integrator, step, wall)
    if best is None:
        return model, f'{name}: no configuration meets {TOLERANCE:g} m'
    integrator, step, wall = best
    factor = DURATION / wall
    verdict = 'met' if factor >= target else 'NOT met'
    return model, (f'{name}: fastest within {TOLERANCE:g} m: {integrator} h = {step:g} s, '
                   f'{factor:.1f}x real time (target >= {target:g}x: {verdict})')


def chunk_overhead(model):
    """Cost [us] of one advance() call beyond its steps: 2500 one-step calls vs one call."""
    sim = Simulation(model, PERIOD, 'rosenbrock2')
    effort = np.zeros(model.nu)
    sim.advance(effort, PERIOD)
    start = time.perf_counter()
    for _ in range(2500):
        sim.advance(effort, PERIOD)
    chunks = time.perf_counter() - start
    sim.reset()
    start = time.perf_counter()
    sim.advance(effort, 2500 * PERIOD)
    return (chunks - (time.perf_counter() - start)) / 2500 * 1e6


def pinocchio_context(model):
    """Compare our compiled RK4 step with one of the rigid twin in Python on Pinocchio."""
    twin = model.rigid_twin()
    pm = to_pinocchio(twin)
    pd = pm.createData()
    n, damping = twin.nv, joint_damping(twin)
    rng = np.random.default_rng(1)
    q, v, u = rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)
    ours = twin.forward_dynamics(twin.create_data(), q, v, u)
    assert np.allclose(ours, pinocchio.aba(pm, pd, q, v, u - damping * v), rtol=1e-9,
                       atol=1e-9)
    x, h = np.concatenate([q, v]), 1e-5

    def f(state):
        return np.concatenate([state[n:], pinocchio.aba(pm, pd, state[:n], state[n:],
                                                        u - damping * state[n:])])

    def rk4_step():
        k1 = f(x)
        k2 = f(x + 0.5 * h * k1)
        k3 = f(x + 0.5 * h * k2)
        k4 = f(x + h * k3)
        x[:] += (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)

    sim = Simulation(model, h, 'rk4', v0=0.1 * np.ones(model.nv))
    effort = np.zeros(model.nu)
    sim.advance(effort, h)
    times = time_interleaved({'aba': lambda: pinocchio.aba(pm, pd, q, v, u), 'rk4': rk4_step},
                             2000, 5)
    ours_step = time_interleaved({'ours': lambda: sim.advance(effort, 200 * h)}, 10, 5)
    ours_step = ours_step['ours'] / 200
    print(f'\n## context: Pinocchio on the rigid twin of {model.name} (nv = {n})')
    print(f'pinocchio.aba from Python: {times["aba"]:.2f} us/call; RK4 step in Python '
          f'(4 aba + numpy): {times["rk4"]:.1f} us')
    print(f'our compiled RK4 step on the flexible arm (nv = {model.nv}): {ours_step:.1f} us '
          f'= {ours_step / times["rk4"]:.2f} x the Pinocchio rigid-twin Python RK4 step')
    print(f'Python cost of one Simulation.advance() call beyond its steps: '
          f'{chunk_overhead(model):.1f} us per 2 ms chunk')


def main():
    """Run both models, print the tables, the summary and the peak memory."""
    print(f'machine: {machine()}; python {sys.version.split()[0]}')
    results = [run_model(name) for name in CASES]
    print('\n## summary')
    for _, line in results:
        print(line)
    pinocchio_context(results[0][0])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(f'\npeak resident memory of this process: {peak:.0f} MB')


if __name__ == '__main__':
    main()
