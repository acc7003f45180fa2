"""Controllers on plants that are not their model: the mismatch study of the robustness issue.

The plant is a copy of the arm's model with one parameter off by a factor
(`mechanics.perturbation`: bending stiffness, modal damping, payload, joint friction,
armature), or a few off at once (seeded draws); the controller keeps the model. Each run
closes the loop in lock-step in one process (`control.lockstep`: what the lockstep plant
and controller nodes do over DDS) for 4 s from the program's start, and reports the RMS
of the per-tick task error, its ratio to the same law on the exact plant, or the fault.
The task error is the program's rows as the file writes them (tip_circle: the tip),
evaluated on the plant's whole state, every mode's deflection included: the same figure
for every law (a law's own residual sees its control model only: the rigid twin's, no
deflection at all).

Laws (config/sim.yaml's controller and its alternatives, 2 ms, ZOH):

* ``servo, measured``: servo realization on one mode per link, the plant's modes measured;
* ``servo, estimated``: the same with the modes estimated from the joint motion and the
  applied efforts (the observer of `control.elastic_estimator`, its gain designed for the
  default uncertainty as on a real arm, config/hil.yaml; where the start-up check refuses
  the law over that set, for the exact model, marked *), guarded by the run-time test of
  `control.mismatch_guard` in its ``warn`` mode: the law runs on, and the last column
  gives the test's largest window mean over its threshold (> 1: it trips);
* ``model following``: the servo law on an internal model, the arm following its joints
  by computed torque on the rigid twin (`control.model_following`; joints measured only);
* ``rigid twin``: computed torque on the rigid twin (ideal realization).

Part 1 prints the start-up check's verdicts over the default uncertainty for the same
laws (the margin: the largest scaling of the set the program survives;
`control.uncertainty`). Part 2: the tables; the soft Cosserat arm (config/sim_soft.yaml:
servo on the bending strains, measured or estimated) runs with its rods' stiffness off by
±10 % and ±20 %. Part 3 runs the estimated law on plants far outside the default set:
where the run-time test trips.

Every program of the two arms' program files runs (tip_circle with its own policy: the
tip redefined to its lambda-point). Run: ``.venv/bin/python bench/bench_mismatch.py``
(about 15 min; ``flexible``, ``soft`` or ``beyond`` for one part). Deterministic: no
timing is measured, the figures do not depend on the machine.
"""

from pathlib import Path
import sys

import numpy as np

from flexible_manipulator.control.admission import NotRobustError
from flexible_manipulator.control.lockstep import run_lockstep, task_error
from flexible_manipulator.control.program_config import load_program_file
from flexible_manipulator.control.program_controller import (
    build_controller, ControllerSettings, ProgramController)
from flexible_manipulator.control.uncertainty import DEFAULT_UNCERTAINTY, EXACT_MODEL
from flexible_manipulator.mechanics.equilibrium import static_equilibrium
from flexible_manipulator.mechanics.perturbation import perturbed
from flexible_manipulator.mechanics.simulation import Simulation
from flexible_manipulator.model_config import ConfigError, load_model

CONFIG = Path(__file__).resolve().parents[1] / 'config'
DURATION = 4.0                    # s simulated per run
PERIOD = 0.002                    # s, control period and lock-step

# Each program's start (joints, joint velocities) at t = 0, modes at rest: config/sim.yaml's
# plant start (on lambda_circle) and the sinusoids' offset and amplitude x 2 pi f
# (config/programs_*.yaml; sim_soft.yaml's plant start).
# tip_circle (redefined to a lambda-point) and hold start from sim.yaml's plant state too.
FLEXIBLE_STARTS = {'lambda_circle': ([-0.23226582, 1.38217994], [0.3716835, -0.25451391]),
                   'tip_circle': ([-0.23226582, 1.38217994], [0.3716835, -0.25451391]),
                   'joint_sine': ([-0.23, 1.38], [0.4712389, 0.7539822]),
                   'hold': ([-0.23226582, 1.38217994], [0.3716835, -0.25451391])}
SOFT_STARTS = {'joint_sine': ([0.3, 0.8], [0.4712389, 0.7539822]),
               'lambda_circle': ([0.3, 0.8], [0.0, 0.0]),
               'hold': ([0.3, 0.8], [0.4712389, 0.7539822])}

ONE_AT_A_TIME = [('stiffness', f) for f in (0.8, 0.9, 0.95, 1.05, 1.1, 1.2)] + \
    [('damping', f) for f in (0.5, 2.0)] + [('payload', f) for f in (0.5, 1.5, 2.0)] + \
    [('friction', f) for f in (0.5, 1.5)] + [('armature', f) for f in (0.5, 1.5)]
DRAWS = 3                         # random combinations within the ranges above
# Part 3: plants far outside the default uncertainty (a brake left on: friction x1000).
BEYOND = [{'stiffness': 0.5}, {'stiffness': 2.0}, {'stiffness': 4.0}, {'payload': 4.0},
          {'payload': 16.0}, {'friction': 50.0}, {'friction': 1000.0}, {'armature': 3.0}]


def combinations():
    """Seeded draws of all five factors at once, within the one-at-a-time ranges."""
    rng = np.random.default_rng(11)
    bounds = {'stiffness': (0.8, 1.2), 'damping': (0.5, 2.0), 'payload': (0.5, 2.0),
              'friction': (0.5, 1.5), 'armature': (0.5, 1.5)}
    return [{k: float(np.exp(rng.uniform(np.log(lo), np.log(hi))))
             for k, (lo, hi) in bounds.items()} for _ in range(DRAWS)]


def label(factors):
    """'stiffness x0.8' or 'stiffness x0.93, damping x1.4, ...'."""
    return ', '.join(f'{k} x{v:.3g}' for k, v in factors.items()) or 'exact'


def build(model, programs, name, law, control_modes):
    """The controller of one law on one program, and a mark for the table ('' or '*').

    Admitted on the model (EXACT_MODEL); the estimated law's observer is designed for the
    default uncertainty where the check admits it there, else for the model (mark '*').
    """
    settings = dict(period=PERIOD, delay_periods=0, uncertainty=EXACT_MODEL,
                    analysis_positions=None)
    if law == 'rigid twin':
        settings.update(realization='ideal', control_model='rigid_twin')
    elif law == 'model following':
        settings.update(realization='servo', control_model='full', model_following=True,
                        control_modes=control_modes)
    else:
        settings.update(realization='servo', control_model='full',
                        control_modes=control_modes,
                        elastic_state='estimated' if 'estimated' in law else 'measured')
    spec = dict(programs[name])
    if spec.get('non_minimum_phase', 'refuse') == 'refuse':
        # Run what the checks refuse; tip_circle keeps its own policy (redefine).
        spec['non_minimum_phase'] = 'allow'
    if 'estimated' not in law:
        return ProgramController(model, {name: spec}, ControllerSettings(**settings)), ''
    settings['mismatch_action'] = 'warn'
    try:
        declared = dict(settings, uncertainty=DEFAULT_UNCERTAINTY)
        return build_controller(model, {name: spec}, ControllerSettings(**declared)), ''
    except NotRobustError:
        return build_controller(model, {name: spec}, ControllerSettings(**settings)), '*'


class TestRecord:
    """A per-tick figure for `run_lockstep` that also keeps the run-time test's largest
    window mean over its threshold (a guarded law) before handing over to the task error."""

    def __init__(self, error):
        """Wrap the task error ``error`` (or None: the law's own residual)."""
        self.error, self.largest = error, 0.0

    def __call__(self, controller, simulation):
        """Record, then return the task error (or the largest |phi|)."""
        test = getattr(controller, 'test', None)
        if test is not None and test.count:
            self.largest = max(self.largest, test.mean / test.limits[test.count - 1])
        if self.error is None:
            return float(np.max(np.abs(controller.status.residual)))
        return self.error(controller, simulation)


def run(model, plant, controller, start, integrator, step, error):
    """4 s in lock-step from ``start`` (modes at rest); returns the `LoopRun`."""
    q0 = plant.neutral_configuration().astype(float)
    q0[:controller.n_joints] = start[0]
    v0 = np.zeros(plant.nv)
    v0[:controller.n_joints] = start[1]
    sim = Simulation(plant, step, integrator, q0=static_equilibrium(plant, q0), v0=v0)
    controller.enable()
    measured = controller.settings.elastic_state == 'measured' and controller.following is None
    return run_lockstep(controller, sim, DURATION, PERIOD, measured, error)


def cell(result, nominal, mark=''):
    """'2.1e-04 (1.0x)' or 'FAULT at 1.23 s'."""
    if result.fault:
        return f'**fault** at {result.fault_time:.2f} s{mark}'
    return f'{result.rms:.2g} ({result.rms / nominal:.2g}x){mark}'


def study(arm, model_file, program_file, starts, laws, cases, integrator, step,
          control_modes, title='RMS task error [m or rad]'):
    """Print one markdown table per program: rows the plants, columns the laws.

    With the estimated law, a last column: the run-time test's largest window mean of the
    normalized innovation against its limit (`control.mismatch_guard`).
    """
    model = load_model(str(CONFIG / 'models' / model_file))
    programs, _ = load_program_file(CONFIG / program_file)
    plants = [({}, model)] + [(factors, perturbed(model, **factors)) for factors in cases]
    tested = 'servo, estimated' in laws
    for name, start in starts.items():
        error = task_error(model, name, programs[name], PERIOD)
        print(f'\n{arm}, program {name}: {title} over {DURATION:g} s '
              '(ratio to the same law on the exact plant)\n')
        columns = list(laws) + (['run-time test (largest mean / threshold)'] if tested
                                else [])
        print('| plant | ' + ' | '.join(columns) + ' |')
        print('|---' * (len(columns) + 1) + '|')
        nominal = {}
        for factors, plant in plants:
            cells, test = [], ''
            for law in laws:
                try:
                    controller, mark = build(model, programs, name, law, control_modes)
                except ConfigError:
                    cells.append('refused (no stable output on the model)')
                    continue
                record = TestRecord(error)
                result = run(model, plant, controller, start, integrator, step, record)
                if not factors:
                    nominal[law] = result.rms
                cells.append(cell(result, nominal[law], mark))
                if 'estimated' in law:
                    test = f'{record.largest:.2g}{" **trips**" if record.largest > 1 else ""}'
            cells += [test] if tested else []
            print(f'| {label(factors)} | ' + ' | '.join(cells) + ' |', flush=True)


def verdicts():
    """Part 1: the start-up check over the default uncertainty, delay 2 (config/hil.yaml)."""
    model = load_model(str(CONFIG / 'models' / 'two_link_flexible.yaml'))
    programs, _ = load_program_file(CONFIG / 'programs_two_link_flexible.yaml')
    print('Start-up check over the default uncertainty, 2 periods of delay '
          '(two_link_flexible)\n')
    print('| law | program | verdict |')
    print('|---|---|---|')
    servo = dict(realization='servo', control_model='full', control_modes=1)
    for law, extra in (('servo, measured', servo),
                       ('servo, estimated', dict(servo, elastic_state='estimated')),
                       ('model following', dict(servo, model_following=True)),
                       ('rigid twin', dict(realization='ideal', control_model='rigid_twin'))):
        for name in ('lambda_circle', 'hold', 'joint_sine'):
            settings = ControllerSettings(period=PERIOD, delay_periods=2,
                                          analysis_positions=[-0.3, 1.5], **extra)
            try:
                entry = ProgramController(model, {name: programs[name]}, settings).entry
                text = (f'admitted: worst spectral radius {entry.worst_case.radius:.6f} at '
                        f'{label(entry.worst_case.factors)}')
            except NotRobustError as error:
                message = str(error)
                margin = message.split('scaled by ')[1].split(' only')[0]
                worst = message.split('worst plant: ')[1].split(' (input')[0]
                text = f'refused: margin {margin}; worst plant {worst}'
            except ConfigError as error:
                text = 'refused on the model itself: ' + str(error).split('): ')[1][:90]
            print(f'| {law} | {name} | {text} |', flush=True)


def main(which=('flexible', 'soft', 'beyond')):
    """Run the parts asked for."""
    if 'flexible' in which:
        verdicts()
        study('two_link_flexible', 'two_link_flexible.yaml', 'programs_two_link_flexible.yaml',
              FLEXIBLE_STARTS, ('servo, measured', 'servo, estimated', 'model following',
                                'rigid twin'),
              [dict([case]) for case in ONE_AT_A_TIME] + combinations(), 'rk4', 5e-4, 1)
    if 'soft' in which:
        study('two_link_soft', 'two_link_soft.yaml', 'programs_two_link_soft.yaml',
              SOFT_STARTS, ('servo, measured', 'servo, estimated', 'model following',
                            'rigid twin'),
              [{'stiffness': f} for f in (0.8, 0.9, 1.1, 1.2)], 'rosenbrock2', 1e-3, 5)
    if 'beyond' in which:
        study('two_link_flexible', 'two_link_flexible.yaml',
              'programs_two_link_flexible.yaml', FLEXIBLE_STARTS,
              ('servo, estimated', 'model following', 'rigid twin'), BEYOND, 'rk4', 5e-4, 1,
              'far outside the default uncertainty: RMS task error [m or rad]')


if __name__ == '__main__':
    main(tuple(sys.argv[1:]) or ('flexible', 'soft', 'beyond'))
