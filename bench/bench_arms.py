"""The controller on 6- and 7-axis arms with a slender link, over the uncertainty set.

Arms: config/models/ur5e_flexible_forearm.yaml and panda_flexible_forearm.yaml. For each
control period {2 ms, 1 ms}, input delay {1, 2} periods (the plant applies each command
that late: mechanics/delay_line.py; the controller's ``delay_periods`` says the same),
elastic state {measured, estimated} and program {sine: every joint 0.1 rad at 0.5 Hz
from rest; move: every joint 0.3 rad rest to rest in 1.5 s (quintic)}, the controller with
the user's settings only (realization and control model auto, the default uncertainty)
is built once and run in lock-step on the nominal plant, the 8 vertices of the default set
(stiffness x[0.8, 1.2], damping x[0.5, 2], payload x[0.5, 2]) and its 4 seeded draws
(control/uncertainty.py). Each run: 1 s on a hold program (the arm held, as before any
program on a real arm), then 4 s of the program.

Printed per case: the law auto chose, its start-up time, faults, the residual RMS on the
nominal plant and the worst over the set (and its plant), the ratio of the two, and, for
the move, the elastic coordinates' residual vibration after the move ends (the largest
|eta - eta_end| over the last second, eta_end the plant's static rest at the end pose,
against the largest |eta - eta_rest| during the move; the issue's measure is the tip's
deflection on the section frames, this is its modal proxy). Then a markdown table for
bench/README.md. Timing: whole-run wall time per case, and the reference Python loop of
10^7 additions in a function timed beside it (the host's speed).

Run: ``.venv/bin/python bench/bench_arms.py`` (about 15 minutes on 2 CPUs);
``--quick``: 2 ms, delay 2, measured, both programs (3 minutes).
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
from flexible_manipulator.control.program_controller import (  # noqa: E402
    ControllerSettings, ProgramController)
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
HOLD, RUN = 1.0, 4.0       # s


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


def one_run(law, model, plant, start, period, delay, measured, program):
    """Hold, then ``program``; return (fault, residual RMS, vibration ratio or nan)."""
    n = law.n_joints
    q0 = plant.neutral_configuration().astype(float)
    q0[:n] = start
    sim = Simulation(plant, period / 4, 'rk4', q0=static_equilibrium(plant, q0))
    law.switch('hold')
    law.restart()
    law.enable()
    line = DelayLine(plant.nu, delay)
    hold = run_lockstep(law, sim, HOLD, period, measured, input_delay=line)
    if hold.fault:
        return hold.fault, np.nan, np.nan
    law.switch(program)
    modes = []

    def keep(status, applied):
        modes.append(sim.q[n:].copy())
    run = run_lockstep(law, sim, RUN, period, measured, on_tick=keep, input_delay=line)
    vibration = np.nan
    if program == 'move' and not run.fault and modes:
        eta = np.array(modes)
        end = static_equilibrium(plant, np.concatenate([sim.q[:n], sim.q[n:]]))[n:]
        rest = eta[0]
        moving = int(round((MOVE[1] + 0.5) / period))
        peak = np.max(np.abs(eta[:moving] - rest))
        after = np.max(np.abs(eta[-int(round(1.0 / period)):] - end))
        vibration = after / peak if peak > 0 else np.nan
    return run.fault, run.rms, vibration


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
    rows = []
    for program in program_names:
        entry = law.entries[program]
        chosen = ('model following, ' + entry.follower[0] + f' w={_bandwidth(entry):.3g}'
                  if law.following is not None else law.realization_kind)
        results = []
        for factors in [{}] + plants(DEFAULT_UNCERTAINTY, 1.0):
            plant = perturbed(model, **factors) if factors else model
            results.append((factors, *one_run(law, model, plant, start, period, delay,
                                              source == 'measured', program)))
        faults = sum(1 for r in results if r[1])
        nominal = results[0][2]
        worst = max(results, key=lambda r: r[2] if np.isfinite(r[2]) else np.inf)
        vibration = max((r[3] for r in results if np.isfinite(r[3])), default=np.nan)
        row = (name, f'{period * 1e3:g} ms', delay, source, program, chosen, f'{startup:.1f} s',
               faults, f'{nominal:.2e}', f'{worst[2]:.2e}', _factors(worst[0]),
               f'{worst[2] / nominal:.1f}', '' if np.isnan(vibration) else f'{vibration:.2g}')
        print(' | '.join(map(str, row)), flush=True)
        rows.append(row)
    return rows


def _bandwidth(entry):
    """The follower's bandwidth w [rad/s]."""
    kind, *gains = entry.follower
    return 0.5 * gains[1] if kind == 'computed_torque' else gains[0]


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
              'vibration after the move')
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
