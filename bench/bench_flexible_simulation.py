"""Cost of the shipped flexible arms at a stated physical tip accuracy, and its two errors.

For each model (planar two-link, spatial three-link), from rest with straight links, under
three torque inputs (small and large amplitudes, slow and fast sinusoids that fade in,
within the effort and joint limits, held over 2 ms control periods as the plant holds
them), the tip of the last link, ``section_pose(data, q, last link, its length)[1]``, is
sampled every 2 ms and compared as the max over the run of the distance between tips:

* converged beam: the same model with C modes per link (per bending plane: 8 planar, 6
  spatial), rk4 at a step h with h omega_max <= 1.5 (omega_max the highest frequency of
  the arm linearized at rest); checked by halving that step once and against C - 1 modes;
* discretization error of m = 1 .. C - 1 modes per link: the m-mode beam at its own
  reference step against the converged beam;
* time-integration error: rk4 and rosenbrock2 at 2, 1, 0.5 and 0.25 ms against the
  same-modes beam at its reference step;
* headline: the cheapest (modes, integrator, step) whose tip stays within 1e-4 m of the
  converged beam on every input, re-timed: real-time factor = duration / wall time of
  the run advanced in 2 ms chunks, median and range (min-max) over 3 runs per input;
* the converged beam's own distance from the limit of infinitely many modes, extrapolated
  by fitting d(m) = c (m^-p - C^-p) to the discretization errors (m >= 2), and the
  cheapest configuration within 1e-4 m of that limit (its error plus that distance).

Runs are 2 s (planar) and 1 s (spatial) instead of 5 s, to keep the many reference runs
within a few minutes. Then a single flexible link (the planar arm's upper arm on a pin,
massless hub) against PyElastica's Cosserat rod, extrapolated in its element count
(`pyelastica_link`), and, as context, our compiled RK4 step against an RK4 step of the
planar arm's rigid twin written in Python on Pinocchio's ABA.
Run: ``.venv/bin/python bench/bench_flexible_simulation.py`` (PyElastica: ``make
bench-setup``).
"""

from collections import namedtuple
import copy
import math
import resource
import sys
import time

import numpy as np
import pinocchio
import scipy.linalg
import scipy.optimize

from flexible_manipulator.mechanics.simulation import NonFiniteStateError, Simulation
from flexible_manipulator.model_config import load_yaml, model_from_dict
from bench_common import (joint_damping, machine, model_path, spread, time_interleaved,
                          to_pinocchio, with_range)
import pyelastica_link

PERIOD = 2e-3                     # control period and tip sampling [s]
STEPS = (2e-3, 1e-3, 5e-4, 2.5e-4)
INTEGRATORS = ('rk4', 'rosenbrock2')
TOLERANCE = 1e-4                  # tip position against the converged beam [m]
REFERENCE_H_OMEGA = 1.5           # reference rk4: step x highest frequency at rest
REFERENCE_DIVISIONS = 16          # reference step <= PERIOD / 16: half the finest ladder step
RAMP = 0.5                        # the sinusoids fade in over this time [s]: no mean drift
REPEATS = 3                       # timed runs of a headline configuration per input

Signal = namedtuple('Signal', 'label amplitude frequency')
Signal.__doc__ = ('A torque input: amplitude per joint as a fraction of its effort limit, '
                  'frequency per joint [Hz].')
Case = namedtuple('Case', 'duration start converged target signals')
Case.__doc__ = ('A model\'s runs: duration [s], initial joint angles [rad], modes per link of '
                'the converged beam, target real-time factor, the `Signal`s.')
# The spatial arm starts with both links below the horizontal, where gravity is restoring
# (a held horizontal arm creeps upward under any oscillation); the planar arm moves in the
# horizontal plane (gravity along the joint axes).
CASES = {
    'two_link_flexible': Case(2.0, (0.0, 0.0), 8, 20.0, (
        Signal('small slow', (0.05, 0.02), (0.7, 1.1)),
        Signal('large slow', (0.25, 0.08), (1.3, 2.1)),
        Signal('fast', (0.1, 0.04), (3.1, 4.3)))),
    'three_link_spatial_flexible': Case(1.0, (0.0, 0.8, 0.6), 6, 5.0, (
        Signal('small slow', (0.01, 0.03, 0.01), (0.6, 0.9, 1.5)),
        Signal('large slow', (0.02, 0.06, 0.02), (0.9, 1.4, 2.3)),
        Signal('fast', (0.02, 0.04, 0.03), (3.1, 4.3, 5.3)))),
}

# -- models and runs ----------------------------------------------------------------------


def with_modes(name, modes):
    """Load a shipped model with ``modes`` assumed modes in every plane that has modes."""
    spec = copy.deepcopy(load_yaml(model_path(name)))
    for link in spec['links']:
        if 'beam' in link:
            link['beam']['modes'] = [modes if count else 0 for count in link['beam']['modes']]
    return model_from_dict(spec, source=f'{name} with {modes} modes')


def initial(model, start):
    """Coordinates with the given joint angles and straight links."""
    q = np.zeros(model.nq)
    q[:model.n_joints] = start
    return q


def torque_program(model, case, signal):
    """Input of every control period [N m]: static load at rest plus faded-in sinusoids.

    u_i(t_k) = h_i + a_i limit_i s(t_k) sin(2 pi f_i t_k), s rising as (1 - cos) / 2 from 0
    to 1 over RAMP seconds, h the joint efforts that hold the straight arm at rest at
    the initial joint angles.
    """
    data = model.create_data()
    rest = initial(model, case.start)
    hold = model.bias_forces(data, rest, 0.0 * rest)[:model.nu].copy()
    t = np.arange(round(case.duration / PERIOD)) * PERIOD
    fade = 0.5 - 0.5 * np.cos(np.pi * np.minimum(t / RAMP, 1.0))
    u = hold + (np.asarray(signal.amplitude) * model.effort_limit
                * fade[:, None] * np.sin(2.0 * np.pi * np.outer(t, signal.frequency)))
    assert np.all(np.abs(u) <= model.effort_limit), 'input exceeds the effort limits'
    return u


def simulate(model, integrator, step, program, q0):
    """Run the program; return (states every 2 ms, wall [s]); states None if unstable.

    Unstable: refused by the step check at start-up, or blown up.

    Row k + 1 of the states (q, v) follows control period k; row 0 is the initial state.
    The wall time covers the ``advance`` calls only.
    """
    try:
        sim = Simulation(model, step, integrator, q0)
    except ValueError:              # refused at start-up: past the stability limit
        return None, 0.0
    sim.advance(program[0], step)                      # compile or load the kernel
    sim.reset()
    states = np.zeros((len(program) + 1, model.nq + model.nv))
    states[0] = sim.state
    start = time.perf_counter()
    try:
        for k, effort in enumerate(program):
            sim.advance(effort, PERIOD)
            states[k + 1] = sim.state
    except NonFiniteStateError:
        return None, time.perf_counter() - start
    return states, time.perf_counter() - start


def tip_positions(model, states):
    """Tip of the last link in the base frame [m] for every row of states."""
    data, last = model.create_data(), len(model.links) - 1
    length = model.links[last].length
    return np.array([model.section_pose(data, row[:model.nq], last, length)[1]
                     for row in states])


def distance(tips, other):
    """Max over the run of the distance between two tip trajectories [m] (inf if None)."""
    if tips is None:
        return math.inf
    return float(np.max(np.linalg.norm(tips - other, axis=1)))


def highest_frequency(model, q):
    """Highest natural frequency [rad/s] of the model linearized at q, at rest, joints free.

    Generalized eigenvalues of the modal stiffness against M(q) (armature included);
    gravity and geometric stiffening are left out.
    """
    stiffness, _ = model.elastic_coefficients()
    mass = model.mass_matrix(model.create_data(), q)
    return math.sqrt(scipy.linalg.eigh(np.diag(stiffness), mass, eigvals_only=True).max())


def reference_step(model, q):
    """Step [s] of the reference rk4 runs: PERIOD / n, h omega_max <= REFERENCE_H_OMEGA."""
    omega = highest_frequency(model, q)
    return PERIOD / max(REFERENCE_DIVISIONS, math.ceil(PERIOD * omega / REFERENCE_H_OMEGA))


# -- references: every modes count at its reference step -----------------------------------

Reference = namedtuple('Reference', 'model step tips states')
Reference.__doc__ = 'Runs of one modes count at its reference step: tips, states per input.'


def references(name, case):
    """Run 1 .. C modes per link at their reference steps on every input.

    Returns a dict modes -> `Reference`.
    """
    out = {}
    for modes in range(1, case.converged + 1):
        model = with_modes(name, modes)
        q0 = initial(model, case.start)
        step = reference_step(model, q0)
        runs = [simulate(model, 'rk4', step, torque_program(model, case, signal), q0)[0]
                for signal in case.signals]
        out[modes] = Reference(model, step, [tip_positions(model, s) for s in runs], runs)
    return out


def halving_check(case, converged):
    """Max tip change [m] of the converged beam when its step is halved (last input)."""
    model = converged.model
    q0 = initial(model, case.start)
    states, _ = simulate(model, 'rk4', converged.step / 2,
                         torque_program(model, case, case.signals[-1]), q0)
    return distance(tip_positions(model, states), converged.tips[-1])


def print_inputs(name, case, refs):
    """Print the inputs and what they do to the converged beam (limits in brackets)."""
    converged = refs[case.converged]
    model, n = converged.model, converged.model.n_joints
    print(f'\n## {name}: {n} joints, {case.duration:g} s runs, tolerance {TOLERANCE:g} m')
    print('\n| input | amplitude [N m] | frequency [Hz] | max abs joint [rad] | max abs joint '
          'rate [rad/s] | max tip deflection [mm] |\n|---|---|---|---|---|---|')
    for signal, states, tips in zip(case.signals, converged.states, converged.tips):
        joints = np.max(np.abs(states[:, :n]), axis=0)
        rates = np.max(np.abs(states[:, model.nq:model.nq + n]), axis=0)
        inside = (np.all(joints < np.minimum(-model.lower, model.upper))
                  and np.all(rates < model.velocity_limit))
        straight = states[:, :model.nq] * (np.arange(model.nq) < n)   # no bending
        bend = distance(tip_positions(model, straight), tips)
        amplitude = np.round(np.asarray(signal.amplitude) * model.effort_limit, 2)
        flag = '' if inside else ' OUTSIDE THE LIMITS'
        print(f'| {signal.label} | {amplitude} | {signal.frequency} | {np.round(joints, 2)} '
              f'| {np.round(rates, 2)} | {bend * 1e3:.1f} |{flag}')
    print(f'limits: joints {np.round(model.upper, 2)} rad (symmetric), rates '
          f'{model.velocity_limit} rad/s')


def mode_tail(distances, converged):
    """Extrapolate in the modes count: the converged beam's distance [m] from the limit.

    ``distances[m - 1]`` is the max tip distance of the m-mode beam from the C-mode one
    (C = ``converged``). Fits d(m) = c (m^-p - C^-p), errors falling as m^-p, to m = 2 ..
    C - 1 (least squares on log d) and returns (p, c C^-p).
    """
    modes = np.arange(2, converged)
    logs = np.log(distances[1:])

    def residual(x):
        return x[0] + np.log(modes ** -x[1] - converged ** -x[1]) - logs

    start = [logs[0] + 2.0 * math.log(2.0), 2.0]
    fit = scipy.optimize.least_squares(residual, start, bounds=([-60.0, 0.3], [60.0, 8.0]))
    log_c, p = fit.x
    return p, math.exp(log_c) * converged ** -p


def discretization(case, refs):
    """Max tip distance [m] of m = 1 .. C - 1 modes from the converged beam: one row per m."""
    converged = refs[case.converged]
    return np.array([[distance(tips, other) for tips, other in zip(refs[m].tips, converged.tips)]
                     for m in range(1, case.converged)])


def print_discretization(case, refs, halving, table, tails):
    """Print the converged beam's checks and the discretization error of each modes count."""
    converged = refs[case.converged]
    print(f'\nconverged beam: {case.converged} modes per link (nv = {converged.model.nv}), '
          f'rk4 h = {converged.step * 1e6:.1f} us; halving h changes the tip by {halving:.1e} m '
          f'(input {case.signals[-1].label}); one mode fewer changes it by '
          f'{", ".join(f"{d:.1e}" for d in table[-1])} m (inputs as below)')
    print('\ndiscretization error: max tip distance [m] of the m-mode beam from the converged '
          'beam, both at their reference steps')
    labels = ' | '.join(signal.label for signal in case.signals)
    print(f'\n| modes per link | nv | reference h [us] | {labels} |\n|---|---|---|'
          + '---|' * len(case.signals))
    for modes, row in zip(range(1, case.converged), table):
        ref = refs[modes]
        cells = ' | '.join(f'{d:.1e}' for d in row)
        print(f'| {modes} | {ref.model.nv} | {ref.step * 1e6:.1f} | {cells} |')
    print(f'| fit d = c (m^-p - {case.converged}^-p), m >= 2: p | | | '
          + ' | '.join(f'{p:.2f}' for p, _ in tails) + ' |')
    print(f'| converged beam from the limit of infinitely many modes (fit: c '
          f'{case.converged}^-p) | | | ' + ' | '.join(f'{t:.1e}' for _, t in tails) + ' |')


# -- the integrator ladder -------------------------------------------------------------------

Result = namedtuple('Result', 'time_error total_error walls')
Result.__doc__ = ('One (modes, integrator, step) on every input: tip errors [m] against the '
                  'same modes at the reference step and against the converged beam, walls [s].')


def ladder(case, refs):
    """Run every (modes < C, integrator, step) on every input: dict key -> `Result`."""
    converged, out = refs[case.converged], {}
    for modes in range(1, case.converged):
        ref = refs[modes]
        q0 = initial(ref.model, case.start)
        programs = [torque_program(ref.model, case, signal) for signal in case.signals]
        for integrator in INTEGRATORS:
            for step in STEPS:
                runs = [simulate(ref.model, integrator, step, program, q0)
                        for program in programs]
                tips = [None if states is None else tip_positions(ref.model, states)
                        for states, _ in runs]
                out[modes, integrator, step] = Result(
                    [distance(t, other) for t, other in zip(tips, ref.tips)],
                    [distance(t, other) for t, other in zip(tips, converged.tips)],
                    [wall for _, wall in runs])
    return out


def print_grid(title, case, results, cell):
    """Print one value per (integrator, step) row and modes column; ``cell(result)`` -> str."""
    columns = range(1, case.converged)
    print(f'\n{title}\n\n| integrator | step [ms] | ' + ' | '.join(f'm = {m}' for m in columns)
          + ' |\n|---|---|' + '---|' * len(columns))
    for integrator in INTEGRATORS:
        for step in STEPS:
            cells = ' | '.join(cell(results[m, integrator, step]) for m in columns)
            print(f'| {integrator} | {step * 1e3:g} | {cells} |')


def error_cell(values):
    """Worst of the per-input errors, or 'unstable'."""
    worst = max(values)
    return 'unstable' if math.isinf(worst) else f'{worst:.1e}'


def print_ladder(case, results):
    """Print the time-integration error, the error against the converged beam, the speed."""
    print_grid('time-integration error: worst over the inputs of the max tip distance [m] from '
               'the same modes at the reference step', case, results,
               lambda r: error_cell(r.time_error))
    print_grid(f'tip error against the converged beam [m], worst over the inputs (* within '
               f'{TOLERANCE:g} m)', case, results,
               lambda r: error_cell(r.total_error) + (' *' if max(r.total_error) <= TOLERANCE
                                                      else ''))
    print_grid('real-time factor: duration / median wall time over the inputs (one run each)',
               case, results, lambda r: '-' if math.isinf(max(r.time_error))
               else f'{case.duration / spread(r.walls).median:.1f}')


# -- headline -------------------------------------------------------------------------------


def cheapest(results, integrators=INTEGRATORS):
    """Key (modes, integrator, step) of the cheapest run within TOLERANCE on every input."""
    within = [key for key, r in results.items()
              if key[1] in integrators and max(r.total_error) <= TOLERANCE]
    return min(within, key=lambda key: spread(results[key].walls).median, default=None)


def retime(name, case, key):
    """Wall times [s] of REPEATS runs per input of one configuration (ladder run excluded)."""
    modes, integrator, step = key
    model = with_modes(name, modes)
    q0 = initial(model, case.start)
    return [simulate(model, integrator, step, torque_program(model, case, signal), q0)[1]
            for signal in case.signals for _ in range(REPEATS)]


def headline(name, case, results, tails):
    """Return the summary lines: cheapest configurations within TOLERANCE, and re-timed.

    Within TOLERANCE of the converged beam on every input, overall and for the other
    integrator; then `physical_line`.
    """
    best = cheapest(results)
    lines = [] if best is not None else [
        f'{name}: no configuration within {TOLERANCE:g} m of the converged beam '
        f'({case.converged} modes) on every input']
    keys = [] if best is None else [best] + [cheapest(results, (i,)) for i in INTEGRATORS
                                             if i != best[1]]
    for key in filter(None, keys):
        modes, integrator, step = key
        factors = [case.duration / wall for wall in retime(name, case, key)]
        verdict = 'met' if spread(factors).median >= case.target else 'NOT met'
        lead = 'cheapest' if key == best else f'cheapest {integrator}'
        lines.append(f'{name}: {lead} within {TOLERANCE:g} m of the converged beam on every '
                     f'input: modes per link {modes}, {integrator} h = {step * 1e3:g} ms (tip '
                     f'error {max(results[key].total_error):.1e} m): {with_range(factors)}x '
                     f'real time, median (min-max) of {len(factors)} runs (target >= '
                     f'{case.target:g}x: {verdict})')
    return lines + [physical_line(name, case, results, tails)]


def physical_line(name, case, results, tails):
    """Summary line: the converged beam's distance from the mode limit, the cheapest within.

    Each input's error plus the converged beam's estimated distance from the limit of
    infinitely many modes (``tails``: (p, distance) per input) must be within TOLERANCE.
    """
    tail = [t for _, t in tails]
    physical = {key: r._replace(total_error=[e + t for e, t in zip(r.total_error, tail)])
                for key, r in results.items()}
    found = cheapest(physical)
    within = (f'none up to {case.converged - 1} modes per link' if found is None else
              f'modes per link {found[0]}, {found[1]} h = {found[2] * 1e3:g} ms (estimated '
              f'{max(physical[found].total_error):.1e} m)')
    return (f'{name}: the converged beam is an estimated {max(tail):.1e} m from the limit of '
            f'infinitely many modes (worst input; differences fall as m^-p, p = '
            f'{min(p for p, _ in tails):.2f}-{max(p for p, _ in tails):.2f}); within '
            f'{TOLERANCE:g} m of that limit: {within}')


def run_model(name):
    """Print the accuracy and speed tables of one model; return its summary lines."""
    case = CASES[name]
    refs = references(name, case)
    print_inputs(name, case, refs)
    table = discretization(case, refs)
    tails = [mode_tail(column, case.converged) for column in table.T]
    print_discretization(case, refs, halving_check(case, refs[case.converged]), table, tails)
    results = ladder(case, refs)
    print_ladder(case, results)
    return headline(name, case, results, tails)


# -- a single link against PyElastica -------------------------------------------------------

LINK_DURATION = 0.2               # [s]
LINK_TORQUE = 0.5                 # peak hub torque [N m]
LINK_ELEMENTS = (10, 20, 40)
LINK_MODES = (1, 2, 3, 4, 6, 8)
LINK_SUBSTEPS = 16                # our input: held over PERIOD / 16, sampled at mid-interval


def link_torque(t):
    """Hub torque [N m] at time t [s]: one sine period of LINK_DURATION, then zero."""
    return LINK_TORQUE * math.sin(2.0 * math.pi * t / LINK_DURATION) if t < LINK_DURATION \
        else 0.0


def single_link(modes):
    """Build the upper arm of two_link_flexible alone on a frictionless pin, massless hub.

    Same beam (length, rho A, E I, no structural damping), no hub, no payload, no joint
    friction or armature; gravity left out (along the pin axis it loads only the pin).
    """
    upper = load_yaml(model_path('two_link_flexible'))['links'][0]
    beam = dict(upper['beam'], modes=[modes, 0], damping_ratio=0.0)
    return model_from_dict(dict(name='pinned_link', type='serial_chain', gravity=[0, 0, 0],
                                links=[dict(name='link', length=upper['length'], mass=0.0,
                                            beam=beam, joint=dict(
                                                name='pin', axis=[0, 0, 1], effort_limit=10.0,
                                                velocity_limit=50.0))]))


def link_tips(modes):
    """Our tip [m] every PERIOD under `link_torque` (rk4, 4 steps per input interval)."""
    model = single_link(modes)
    hold = PERIOD / LINK_SUBSTEPS
    sim, data = Simulation(model, hold / 4, 'rk4'), model.create_data()
    tips = []
    for k in range(round(LINK_DURATION / hold)):
        sim.advance(np.array([link_torque((k + 0.5) * hold)]), hold)
        if (k + 1) % LINK_SUBSTEPS == 0:
            tips.append(model.section_pose(data, sim.q, 0, model.links[0].length)[1])
    return np.array(tips)


def resonant_mode():
    """Natural frequency [Hz] of the single link (8 modes) closest to the 2 ms hold rate."""
    model = single_link(8)
    stiffness, _ = model.elastic_coefficients()
    mass = model.mass_matrix(model.create_data(), np.zeros(model.nq))
    omega = np.sqrt(np.abs(scipy.linalg.eigh(np.diag(stiffness), mass, eigvals_only=True)))
    hertz = omega / (2.0 * math.pi)
    return hertz[np.argmin(np.abs(hertz - 1.0 / PERIOD))]


def check_section():
    """Assert that the strip's constants give the YAML's rho A and in-plane E I."""
    beam = load_yaml(model_path('two_link_flexible'))['links'][0]['beam']
    density, stiffness, _, _, _ = pyelastica_link.stiffness_summary()
    assert abs(density / beam['linear_density'] - 1.0) < 1e-9
    assert abs(stiffness / beam['bending_stiffness'][0] - 1.0) < 1e-9


def print_link_case():
    """Print the single-link case, its parameters and the two models' differences."""
    density, stiffness, shear, stretch, rotation = pyelastica_link.stiffness_summary()
    print(f'\n## single flexible link against PyElastica {pyelastica_link.VERSION}'
          f' (Cosserat rod)\nbeam: the upper arm of two_link_flexible, aluminium strip 30 mm x '
          f'3 mm, L = {pyelastica_link.LENGTH} m, rho A = {density:.3f} kg/m, in-plane E I = '
          f'{stiffness:.3f} N m^2, no structural damping; on a frictionless pin through a '
          f'massless hub, horizontal plane (no gravity in the plane)')
    print(f'input: hub torque {LINK_TORQUE} sin(2 pi t / {LINK_DURATION} s) N m for '
          f'{LINK_DURATION} s (a slew that stops), smooth in both codes: ours holds it over '
          f'{PERIOD / LINK_SUBSTEPS * 1e6:.0f} us sampled at mid-interval (held over 2 ms it '
          f'would drive the pinned-free mode at {resonant_mode():.1f} Hz at resonance)')
    print(f'PyElastica: node 0 held (rotation free), the torque on element 0; shearable and '
          f'extensible, physical k G A = {shear:.2e} N, E A = {stretch:.2e} N (shear / bending '
          f'compliance E I / (k G A L^2) = '
          f'{stiffness / (shear * pyelastica_link.LENGTH ** 2):.0e}); section rotary '
          f'inertia rho I; position Verlet dt = {pyelastica_link.VERLET_STEP:g} s (stable '
          f'below 2 / omega = {2.0 / rotation:.1e} s, omega = sqrt(k G A / rho I) = '
          f'{rotation:.1e} rad/s)')
    print('ours: floating frame, clamped-free Euler-Bernoulli modes, no rotary inertia, '
          'inextensible with second-order foreshortening; rk4 at '
          f'{PERIOD / LINK_SUBSTEPS / 4 * 1e6:.2f} us')


def pyelastica_reference():
    """Run PyElastica with LINK_ELEMENTS, print the table; return (reference, finest, shift).

    reference: Richardson (order 2) tip [m] every PERIOD from the two finest runs; finest:
    the finest run's tip; shift: how far the observed order instead of 2 moves the
    reference [m]. None if a run was unstable.
    """
    runs = [pyelastica_link.tip_motion(n, link_torque, LINK_DURATION, PERIOD)
            for n in LINK_ELEMENTS]
    rods = [tips for tips, _ in runs]
    if any(tips is None for tips in rods):
        print('PyElastica run unstable: reduce pyelastica_link.VERLET_STEP')
        return None
    reference = pyelastica_link.richardson(rods[-2], rods[-1])
    order = pyelastica_link.observed_order(rods)
    shift = distance(pyelastica_link.richardson(rods[-2], rods[-1], order), reference)
    print('\n| elements | wall [s] | max tip distance [m] to the next count |\n|---|---|---|')
    for i, (n, (_, wall)) in enumerate(zip(LINK_ELEMENTS, runs)):
        step = f'{distance(rods[i], rods[i + 1]):.1e}' if i + 1 < len(rods) else ''
        print(f'| {n} | {wall:.1f} | {step} |')
    print(f'observed order in the element length {order:.2f}; reference: Richardson (order 2) '
          f'from {LINK_ELEMENTS[-2]} and {LINK_ELEMENTS[-1]} elements, which moves the '
          f'{LINK_ELEMENTS[-1]}-element tip by {distance(rods[-1], reference):.1e} m; order '
          f'{order:.2f} instead of 2 moves it by {shift:.1e} m; tip excursion '
          f'{np.max(np.abs(reference - reference[0])):.3f} m')
    return reference, rods[-1], shift


def run_link():
    """Compare the single link with PyElastica extrapolated in its element count."""
    if pyelastica_link.elastica is None:
        print('\n## single flexible link against PyElastica: skipped, PyElastica is not '
              'installed (make bench-setup, or pip install -r bench/requirements.txt)')
        return 'single link: not run (PyElastica missing)'
    check_section()
    print_link_case()
    found = pyelastica_reference()
    if found is None:
        return 'single link: PyElastica unstable'
    reference, finest, shift = found
    print('\n| our modes | max tip distance to the extrapolated PyElastica tip [m] | to '
          f'{LINK_ELEMENTS[-1]} elements [m] |\n|---|---|---|')
    errors = {}
    for modes in LINK_MODES:
        tips = link_tips(modes)
        errors[modes] = distance(tips, reference)
        print(f'| {modes} | {errors[modes]:.1e} | {distance(tips, finest):.1e} |')
    best = min(errors, key=errors.get)
    return (f'single link vs PyElastica (extrapolated): {errors[best]:.1e} m at {best} modes, '
            f'{errors[1]:.1e} m at 1 mode (uncertainty of the extrapolation ~{shift:.0e} m)')


# -- context: Pinocchio, the cost of a call, memory ---------------------------------------


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
    """Run both arms and the single link; print the tables, the summary and the memory."""
    print(f'machine: {machine()}; python {sys.version.split()[0]}')
    start = time.perf_counter()
    summary = [line for name in CASES for line in run_model(name)]
    summary.append(run_link())
    print('\n## summary')
    for line in summary:
        print(line)
    pinocchio_context(with_modes('two_link_flexible', 3))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(f'\npeak resident memory of this process: {peak:.0f} MB; bench wall time '
          f'{time.perf_counter() - start:.0f} s')


if __name__ == '__main__':
    main()
