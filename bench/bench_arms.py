"""The controller on 6- and 7-axis arms with a slender link, over the uncertainty set.

Arms: config/models/ur5e_flexible_forearm.yaml and panda_flexible_forearm.yaml. For each
control period {2 ms, 1 ms}, input delay {1, 2} periods (the plant applies each command
that late: mechanics/delay_line.py; the controller's ``delay_periods`` says the same),
elastic state {measured, estimated} and program {sine: every joint 0.1 rad at 0.5 Hz
from rest; move: every joint 0.3 rad rest to rest in 1.5 s (quintic)}, the controller with
the user's settings only (realization and control model auto, the default uncertainty)
is built once and run in lock-step on the nominal plant, the 8 vertices of the default set
(stiffness x[0.8, 1.2], damping x[0.5, 2], payload x[0.5, 2]) and its 4 seeded draws
(control/uncertainty.py). Each run: `HOLD` s on a hold program (the arm held on enabling,
as before any program on a real arm; the follower's payload estimate converges there),
then 4 s of the program.

Printed per case: the law auto chose, its start-up time, faults, the residual RMS on the
nominal plant and the worst over the set (and its plant), the ratio of the two, and, for
the move, the vibration after it (`settling`): the elastic deflection of the flexible
link's tip (its section frame at x = L, less the same frame on straight links), measured
from its static sag at the end pose, falls below 1 % of its peak during the move how long
after the move ends, in periods of the arm's first mode with its joints held (at the end
pose, that plant's); on the nominal plant and the worst of the set, for the law auto chose,
the same law without its damping injection (`joint_follower`'s damper) and a joint PD with
gravity compensation at the follower's bandwidth (`JointPD`, the collocated baseline).
Then a markdown table for bench/README.md. Timing: whole-run wall time per case, and the
reference Python loop of 10^7 additions in a function timed beside it (the host's speed).

Run: ``.venv/bin/python bench/bench_arms.py`` (about 25 minutes on 2 CPUs);
``--quick``: 2 ms, delay 2, measured, both programs.
"""

import argparse
import os
import sys
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from bench_common import machine  # noqa: E402
from flexible_manipulator.control.lockstep import run_lockstep  # noqa: E402
from flexible_manipulator.control.arm_modes import elastic_modes  # noqa: E402
from flexible_manipulator.control.joint_follower import bandwidth_of  # noqa: E402
from flexible_manipulator.control.program_controller import (  # noqa: E402
    ControllerSettings, ProgramController)
from flexible_manipulator.control.trajectories import (  # noqa: E402
    LinePath, QuinticTiming, Trajectory)
from flexible_manipulator.control.uncertainty import DEFAULT_UNCERTAINTY, plants  # noqa: E402
from flexible_manipulator.mechanics.delay_line import DelayLine  # noqa: E402
from flexible_manipulator.mechanics.equilibrium import static_equilibrium  # noqa: E402
from flexible_manipulator.mechanics.perturbation import perturbed  # noqa: E402
from flexible_manipulator.mechanics.simulation import Simulation  # noqa: E402
from flexible_manipulator.model_config import load_model  # noqa: E402

ARMS = {'ur5e_flexible_forearm': [0.0, -1.2, 1.5, -1.9, -1.57, 0.0],
        'panda_flexible_forearm': [0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8]}
SINE = (0.1, 0.5)          # rad, Hz
MOVE = (0.3, 1.5)          # rad, s
HOLD, RUN = 3.0, 4.0       # s
SETTLED = 0.01             # the vibration's end: 1 % of its peak during the move


def programs(model, pose):
    """Hold, sine and move programs on every joint of ``model`` about ``pose``."""
    joints, n = list(model.joint_names), len(pose)
    start = (np.array(pose) - SINE[0]).tolist()
    return {'hold': {'gains': {'alpha': 6.0}, 'rows': [{'type': 'hold', 'joints': joints}]},
            'sine': {'gains': {'alpha': 6.0}, 'rows': [{'type': 'joint', 'joints': joints,
                     'reference': {'type': 'sinusoid', 'offset': list(pose),
                                   'amplitude': [SINE[0]] * n, 'frequency': [SINE[1]] * n,
                                   'phase': [-np.pi / 2] * n}}]},
            'move': {'gains': {'alpha': 6.0}, 'rows': [{'type': 'joint', 'joints': joints,
                     'reference': {'type': 'line', 'start': start,
                                   'end': (np.array(start) + MOVE[0]).tolist(),
                                   'duration': MOVE[1]}}]}}


class JointPD:
    """The collocated baseline: u = g_r(theta) + M_r(r) (-w^2 (theta - r) - 2 w (theta' - r')).

    A joint PD with the rigid twin's gravity and its mass matrix as the gain's shape (the
    follower's), about the move's reference r (held at its start before the move), no
    vibration control; the velocity limit faults it as the controller's safety does.
    """

    def __init__(self, model, start, bandwidth):
        """Prepare for ``model``'s rigid twin at ``bandwidth`` w [rad/s]."""
        self.twin = model.rigid_twin()
        self.data = self.twin.create_data()
        self.n_joints = n = self.twin.n_joints
        self.w, self.limit = float(bandwidth), np.asarray(model.velocity_limit, dtype=float)
        self.move = Trajectory(LinePath(start, np.array(start) + MOVE[0]),
                               QuinticTiming(MOVE[1]))
        self.begin = None                  # the move's start time; None: hold the start
        self.status = type('Status', (), {})()
        self.status.tracking, self.status.message = True, ''
        self.status.residual = np.zeros(n)

    def update(self, t, q, v, *elastic, applied_effort=None):
        """Return u (class doc) at the measured joints."""
        tau = 0.0 if self.begin is None else t - self.begin
        r, dr, _ = self.move.evaluate(tau)
        zero = np.zeros(self.n_joints)
        u = self.twin.bias_forces(self.data, q, zero).copy()
        u += self.twin.mass_matrix(self.data, r) @ (-self.w ** 2 * (q - r)
                                                    - 2.0 * self.w * (v - dr))
        self.status.residual[:] = q - r
        if np.any(np.abs(v) > self.limit):
            self.status.tracking, self.status.message = False, 'velocity limit'
        return u


def held_plant(plant, start, period):
    """The plant at rest at ``start`` (links at their static sag), stepped by rk4."""
    n = len(start)
    q0 = plant.neutral_configuration().astype(float)
    q0[:n] = start
    return Simulation(plant, period / 4, 'rk4', q0=static_equilibrium(plant, q0))


def one_run(law, model, plant, start, period, delay, measured, program):
    """Hold, then ``program``; return (fault, residual RMS, settling or None)."""
    sim = held_plant(plant, start, period)
    law.switch('hold')
    law.restart()
    law.enable()
    line = DelayLine(plant.nu, delay)
    hold = run_lockstep(law, sim, HOLD, period, measured, input_delay=line)
    if hold.fault:
        return hold.fault, np.nan, None
    law.switch(program)
    states = []
    run = run_lockstep(law, sim, RUN, period, measured, input_delay=line,
                       on_tick=lambda status, applied: states.append(sim.q.copy()))
    moved = program == 'move' and not run.fault
    return run.fault, run.rms, settling(plant, np.array(states), period) if moved else None


def baseline_run(pd, plant, start, period, delay):
    """The joint PD on hold, then the move; return its settling (None on a fault)."""
    sim = held_plant(plant, start, period)
    line = DelayLine(plant.nu, delay)
    hold = run_lockstep(pd, sim, HOLD, period, True, input_delay=line)
    if hold.fault:
        return None
    pd.begin = sim.time
    states = []
    run = run_lockstep(pd, sim, RUN, period, True, input_delay=line,
                       on_tick=lambda status, applied: states.append(sim.q.copy()))
    return None if run.fault else settling(plant, np.array(states), period)


def settling(plant, states, period):
    """Return (periods of the first held mode until the tip's vibration settles, peak [m]).

    ``states``: the plant's q per tick from the move's start. The tip's elastic deflection
    d(q) = p_tip(q) - p_tip(q with straight links) (the flexible link's section at x = L),
    e(t) = d(q(t)) - d(q_end) with q_end the static rest at the last joints; the figure is
    the time after the move ends from which |e| stays below `SETTLED` of its peak during
    the move, over the first mode's period there with the joints held.
    """
    n = plant.n_joints
    link = next(i for i, l in enumerate(plant.links) if getattr(l, 'length', 0.0) > 0.0)
    length, data = plant.links[link].length, plant.create_data()

    def deflection(q):
        straight = q.copy()
        straight[n:] = 0.0
        return (plant.section_pose(data, q, link, length)[1]
                - plant.section_pose(data, straight, link, length)[1])
    end = static_equilibrium(plant, states[-1].copy())
    sag = deflection(end)
    size = np.array([np.linalg.norm(deflection(q) - sag) for q in states])
    moving = int(round(MOVE[1] / period))
    peak = float(size[:moving].max())
    above = np.nonzero(size[moving:] > SETTLED * peak)[0]
    after = 0.0 if above.size == 0 else (above[-1] + 1) * period
    first = float(elastic_modes(plant, end[:n]).held[0])
    return after * first, peak


def case(name, period, delay, source, program_names):
    """Every plant of the set for one arm and setting; print and return the table rows."""
    model = load_model(os.path.join(REPO, 'config', 'models', f'{name}.yaml'))
    pose = ARMS[name]
    start = (np.array(pose) - SINE[0]).tolist()
    settings = ControllerSettings(period=period, delay_periods=delay, elastic_state=source,
                                  analysis_positions=start)
    began = time.perf_counter()
    law = ProgramController(model, programs(model, pose), settings, 'hold')
    startup = time.perf_counter() - began
    measured = source == 'measured'
    rows = []
    for program in program_names:
        entry = law.entries[program]
        chosen = _law_text(law, entry)
        results = []
        for factors in [{}] + plants(DEFAULT_UNCERTAINTY, 1.0):
            plant = perturbed(model, **factors) if factors else model
            results.append((factors, *one_run(law, model, plant, start, period, delay,
                                              measured, program)))
        faults = sum(1 for r in results if r[1])
        nominal = results[0][2]
        worst = max(results, key=lambda r: r[2] if np.isfinite(r[2]) else np.inf)
        vibration = ['', '', '']
        if program == 'move':
            shaking = max((r for r in results if r[3] is not None), key=lambda r: r[3][0])
            pair = [results[0][0], shaking[0]]
            vibration[0] = _pair(results[0][3], shaking[3])
            vibration[1] = _without_damper(law, model, pair, start, period, delay, measured)
            bandwidth = (bandwidth_of(entry.follower) if entry.follower is not None
                         else 0.5 * float(np.min(entry.stabilization.k1)))
            vibration[2] = _pair(*(baseline_run(JointPD(model, start, bandwidth), _plant(
                model, f), start, period, delay) for f in pair)) + f' ({_factors(pair[1])})'
        row = (name, f'{period * 1e3:g} ms', delay, source, program, chosen, f'{startup:.1f} s',
               faults, f'{nominal:.2e}', f'{worst[2]:.2e}', _factors(worst[0]),
               f'{worst[2] / nominal:.1f}', *vibration)
        print(' | '.join(map(str, row)), flush=True)
        rows.append(row)
    return rows


def _law_text(law, entry):
    """The law auto chose, in a few words."""
    if law.following is None:
        return law.realization_kind
    kind = entry.follower[0]
    text = f'model following, {kind} w={bandwidth_of(entry.follower):.3g}'
    damper = entry.follower[2:] if kind == 'filtered' else ()
    return text + (f', damper {damper[0]:.0f} rad/s k={damper[1]:g}' if damper else '')


def _plant(model, factors):
    """The plant with ``factors``."""
    return perturbed(model, **factors) if factors else model


def _pair(nominal, worst):
    """'nominal / worst' settling periods; '-' for a fault."""
    return ' / '.join('fault' if r is None else f'{r[0]:.1f}' for r in (nominal, worst))


def _without_damper(law, model, pair, start, period, delay, measured):
    """The move's settling on ``pair``'s plants with the law's damper taken off, or '-'."""
    saved = {name: entry.follower for name, entry in law.entries.items()}
    if not any(f is not None and len(f) == 4 for f in saved.values()):
        return '-'
    try:
        for entry in law.entries.values():
            entry.follower = None if entry.follower is None else entry.follower[:2]
        return _pair(*(one_run(law, model, _plant(model, f), start, period, delay, measured,
                               'move')[2] for f in pair))
    finally:
        for name, follower in saved.items():
            law.entries[name].follower = follower


def _factors(factors):
    """A plant's factors in a few characters."""
    return ', '.join(f'{k[0]}{v:.2g}' for k, v in factors.items()) or 'nominal'


def main():
    """Run the cases (module doc) and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--quick', action='store_true', help='2 ms, delay 2, measured only')
    options = parser.parse_args()
    began = time.perf_counter()
    total = 0
    for _ in range(10 ** 7):
        total += 1
    loop = time.perf_counter() - began
    print(f'host: {machine()}; the loop `for _ in range(10 ** 7): total += 1` in a function '
          f'took {loop:.2f} s')
    header = ('arm', 'period', 'delay', 'elastic state', 'program', 'law', 'start-up',
              'faults', 'RMS nominal [rad]', 'RMS worst [rad]', 'worst plant', 'worst / nominal',
              'settling: law', 'without damper', 'joint PD')
    print(' | '.join(header))
    rows = []
    settings = ([(0.002, 2, 'measured')] if options.quick else
                [(p, d, s) for p in (0.002, 0.001) for d in (1, 2)
                 for s in ('measured', 'estimated')])
    for name in ARMS:
        for period, delay, source in settings:
            rows += case(name, period, delay, source, ('sine', 'move'))
    print()
    print('| ' + ' | '.join(header) + ' |')
    print('|' + '---|' * len(header))
    for row in rows:
        print('| ' + ' | '.join(map(str, row)) + ' |')
    print(f'\nwall time {time.perf_counter() - began:.0f} s')


if __name__ == '__main__':
    main()
