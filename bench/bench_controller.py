"""Cost of one control tick of the program-constraint controller, against Pinocchio.

A tick evaluates a task-space program (a point of the arm on a circle: phi, J, J'v), its
Baumgarte stabilization (b = -J'v - 2 alpha phi' - beta^2 phi), the dynamics M(q), h(q, v),
and the realization that turns them into efforts. Three cases:

* the default flexible arm (`two_link_flexible`, 8 coordinates, 2 inputs), a material
  point of the forearm (x = 0.25 L) on a circle (2 rows), **servo** realization (efforts
  only on the joints, the modes unactuated), at a fixed state (far from the circle: the
  efforts saturate, which costs the tick nothing);
* a rigid chain of the same sizes: the UR-like arm of `bench_rigid_dynamics.py` continued
  to 8 joints (`ur_like_arm(8)`), only its first 2 joints actuated, its tip on a circle
  (2 rows), servo realization: M, h, J and B have the shapes of the flexible arm's;
* the rigid 6-DOF UR-like arm, its tool point on a circle (3 rows), **ideal**
  (Udwadia-Kalaba) realization.

Reference, in the same process: the same tick with Pinocchio's `crba`, `nonLinearEffects`,
`computeFrameJacobian` and `getFrameClassicalAcceleration` (after `forwardKinematics` with
zero acceleration) on the rigid chains, and the same NumPy realization; on both rigid chains
the two ticks are first checked to give the same efforts (1e-8). The flexible arm is
compared with the Pinocchio tick of the 8-joint chain (equal nv, rows and inputs).

Then the tick the demo's node really runs: `ProgramController.update` built from
config/sim.yaml (lambda_circle, servo realization, full model with one mode per link
plane, modes estimated from the joint motion), along 2 s of a closed loop with the
simulated arm from the demo's initial state.

Timing: interleaved batches of ticks, each measured in wall time and in CPU time of the
ticking thread (``time.thread_time_ns``, blind to the time other work on the machine takes
the CPU away); medians over the batches and their range. Target: a tick of the demo's
controller within 20% of a 1 kHz control period (200 us) of CPU time.
Run: ``.venv/bin/python bench/bench_controller.py``.
"""

import os
import time

import numpy as np
import pinocchio

import bench_common as common
from bench_rigid_dynamics import ur_like_arm
from flexible_manipulator.control.programs import PointProgram
from flexible_manipulator.control.realization import IdealRealization, ServoRealization
from flexible_manipulator.control.stabilization import Stabilization
from flexible_manipulator.control.trajectories import CirclePath, ConstantRateTiming, Trajectory
from flexible_manipulator.model_config import load_model

CALLS, REPEATS = 300, 9
TARGET_US = 200.0           # 20% of a 1 kHz period
ALPHA = 10.0                # 1/s, critically damped rows (beta = alpha)


class Tick:
    """Program + stabilization + dynamics + realization on our model: efforts per state."""

    def __init__(self, model, link, fraction, axes, center, realization, inputs=None):
        """Set the point (link, fraction of its length), the circle and the realization.

        ``inputs``: actuate only the first ``inputs`` joints (default: every input).
        """
        self.model, self.data = model, model.create_data()
        reference = Trajectory(CirclePath(center, 0.05), ConstantRateTiming(1.0))
        self.program = PointProgram(model, link, fraction * model.links[link].length,
                                    reference, axes)
        self.stabilization = Stabilization.for_program(self.program, ALPHA)
        self.B = np.ascontiguousarray(model.input_matrix()[:, :inputs])
        self.realization = realization

    def __call__(self, t, q, v):
        self.program.evaluate(t, q, v)
        b = self.stabilization.evaluate(self.program)
        M = self.model.mass_matrix(self.data, q)
        h = self.model.bias_forces(self.data, q, v)
        return self.realization.realize(M, h, self.program.jacobian, b, self.B)


class PinocchioTick:
    """The same tick for a rigid arm with Pinocchio computing M, h, J and J'v of the point."""

    def __init__(self, chain, link, fraction, axes, center, realization, inputs=None):
        """Build the Pinocchio model with a frame at the point; as `Tick` otherwise."""
        self.model = common.to_pinocchio(chain)
        self.model.addFrame(pinocchio.Frame('point', link + 1, pinocchio.SE3(
            np.eye(3), np.array([fraction * chain.links[link].length, 0.0, 0.0])),
            pinocchio.FrameType.OP_FRAME))
        self.data = self.model.createData()
        self.frame = self.model.getFrameId('point')
        self.axes = np.array(axes)
        self.reference = Trajectory(CirclePath(center, 0.05), ConstantRateTiming(1.0))
        self.stabilization = Stabilization([2] * len(axes), ALPHA)
        self.damping = common.joint_damping(chain)
        self.B = np.ascontiguousarray(np.eye(chain.nv)[:, :inputs])
        self.realization = realization
        self.zero = np.zeros(chain.nv)

    def __call__(self, t, q, v):
        m, d, f = self.model, self.data, self.frame
        pinocchio.forwardKinematics(m, d, q, v, self.zero)
        pinocchio.updateFramePlacement(m, d, f)
        frame = pinocchio.LOCAL_WORLD_ALIGNED
        J = pinocchio.computeFrameJacobian(m, d, q, f, frame)[self.axes]
        jdot_v = pinocchio.getFrameClassicalAcceleration(m, d, f, frame).linear[self.axes]
        r, dr, ddr = self.reference.evaluate(t)
        phi = d.oMf[f].translation[self.axes] - r
        rate = J @ v - dr
        b = -(jdot_v - ddr) - 2.0 * ALPHA * rate - ALPHA ** 2 * phi
        M = pinocchio.crba(m, d, q)
        M = np.triu(M) + np.triu(M, 1).T
        h = pinocchio.nonLinearEffects(m, d, q, v) + self.damping * v
        return self.realization.realize(M, h, J, b, self.B)


DEMO_TICKS, DEMO_BATCH = 1000, 100          # 2 s of the demo's loop, timed per 100 ticks


def demo_controller_ticks(params_file='sim.yaml', program='lambda_circle', **overrides):
    """CPU and wall time [us] per `ProgramController.update` of a graph's loop, per batch.

    The controller core the node runs with ``params_file``'s controller parameters
    (config/sim.yaml: servo realization, full model with one mode per link plane, modes
    measured; config/hil.yaml: the same with the modes observed, guarded by the run-time
    model test) on lambda_circle, in a closed loop with the simulated arm of
    config/sim.yaml (rk4, 0.5 ms) from the demo's initial state, with the modes when they
    are measured and the applied efforts when they are observed: the states are the ones
    the node would see. With config/sim_soft.yaml: the soft Cosserat arm, its plant
    (rosenbrock2, 1 ms) and controller as that file sets them (``program``: its
    joint_sine; ``overrides``: controller parameters changed, e.g. ``control_modes``).
    Returns (cpu, wall, status message).
    """
    import yaml
    from flexible_manipulator.control.program_config import load_program_file
    from flexible_manipulator.control.program_controller import (build_controller,
                                                                 ControllerSettings)
    from flexible_manipulator.settings import flatten, from_parameters
    from flexible_manipulator.mechanics.simulation import Simulation
    config = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'config')
    with open(os.path.join(config, params_file), encoding='utf-8') as stream:
        graph = yaml.safe_load(stream)
    # hil.yaml has no plant: the arm is config/sim.yaml's simulated one
    plant_file = params_file if 'plant' in graph else 'sim.yaml'
    with open(os.path.join(config, plant_file), encoding='utf-8') as stream:
        plant = yaml.safe_load(stream)['plant']['ros__parameters']
    node = dict(graph['controller']['ros__parameters'], **overrides)
    # As the node reads them: the parameters `ControllerSettings` declares, by name.
    settings = from_parameters(ControllerSettings, flatten(node))
    programs, default = load_program_file(os.path.join(config, node['program_file'] + '.yaml'))
    controller = build_controller(load_model(common.model_path(node['model'])), programs,
                                  settings, default)
    controller.switch(program)
    controller.enable()
    model, n = controller.model, controller.n_joints
    q = np.zeros(model.nq)
    q[:n] = plant['initial_positions']
    v = np.zeros(model.nv)
    v[:n] = plant['initial_velocities']
    sim = Simulation(model, plant['integration_step'], plant['integrator'], q, v)
    cpu, wall, period = [], [], settings.period
    # As the node: modes with each state when measured (a simulation publishes them).
    measured = settings.elastic_state == 'measured'
    applied = np.zeros(model.nu)      # the effort the plant reports applied
    for start in range(0, DEMO_TICKS, DEMO_BATCH):
        used_cpu = used_wall = 0
        for k in range(start, start + DEMO_BATCH):
            state = sim.state
            cpu0, wall0 = time.thread_time_ns(), time.perf_counter_ns()
            if measured:
                effort = controller.update(k * period, state[:n], state[model.nq:model.nq + n],
                                           state[n:model.nq], state[model.nq + n:])
            else:
                effort = controller.update(k * period, state[:n],
                                           state[model.nq:model.nq + n], applied_effort=applied)
            used_cpu += time.thread_time_ns() - cpu0
            used_wall += time.perf_counter_ns() - wall0
            applied[:] = effort
            sim.advance(effort, period)
        cpu.append(used_cpu / DEMO_BATCH / 1e3)
        wall.append(used_wall / DEMO_BATCH / 1e3)
    return cpu, wall, controller.status.message


def main():
    """Check the rigid cases against Pinocchio, time every case, print the table."""
    rng = np.random.default_rng(0)
    arm = ur_like_arm()
    center = (0.4, 0.1, 0.3)
    ours = Tick(arm, 5, 1.0, (0, 1, 2), center, IdealRealization(arm.nv, arm.nu, 3))
    theirs = PinocchioTick(arm, 5, 1.0, (0, 1, 2), center, IdealRealization(arm.nv, arm.nu, 3))
    check_same(ours, theirs, arm.nv, rng)
    flexible = load_model(common.model_path('two_link_flexible'))
    servo = Tick(flexible, 1, 0.25, (0, 1), (0.5, 0.3), ServoRealization(
        flexible.nv, flexible.nu, 2, flexible.effort_limit))
    # The rigid chain of the flexible arm's size: 8 coordinates, 2 inputs, 2 rows, servo.
    chain8 = ur_like_arm(flexible.nv)
    last, inputs = chain8.n_joints - 1, flexible.nu
    ours8 = Tick(chain8, last, 1.0, (0, 1), (0.4, 0.1), ServoRealization(
        chain8.nv, inputs, 2), inputs)
    theirs8 = PinocchioTick(chain8, last, 1.0, (0, 1), (0.4, 0.1), ServoRealization(
        chain8.nv, inputs, 2), inputs)
    check_same(ours8, theirs8, chain8.nv, rng)
    qf = np.zeros(flexible.nv)
    qf[:2] = (-0.6, 1.2)
    qf[2:] = rng.normal(0.0, 1e-3, flexible.nv - 2)
    vf = rng.normal(0.0, 0.2, flexible.nv)
    q, v = rng.uniform(-2.0, 2.0, arm.nv), rng.normal(0.0, 1.0, arm.nv)
    q8, v8 = rng.uniform(-2.0, 2.0, chain8.nv), rng.normal(0.0, 1.0, chain8.nv)
    statuses = []
    for name, tick, state in (('flexible', servo, (qf, vf)), ('8-DOF', ours8, (q8, v8)),
                              ('6-DOF', ours, (q, v))):
        tick(1.0, *state)
        statuses.append(f'{name}: {tick.realization.status.message}')
    cpu0, process0 = time.thread_time_ns(), time.process_time_ns()
    samples = common.sample_interleaved({
        'flexible': lambda: servo(1.0, qf, vf),
        'rigid8': lambda: ours8(1.0, q8, v8),
        'rigid8_pinocchio': lambda: theirs8(1.0, q8, v8),
        'rigid6': lambda: ours(1.0, q, v),
        'rigid6_pinocchio': lambda: theirs(1.0, q, v),
    }, CALLS, REPEATS)
    threads = (time.process_time_ns() - process0) / (time.thread_time_ns() - cpu0)
    print(f'machine: {common.machine()}; pinocchio {pinocchio.__version__}')
    print(f'{REPEATS} interleaved batches of {CALLS} ticks: median (min-max over the batches); '
          'CPU = CPU time of the ticking thread; one tick = program + stabilization + M, h '
          '+ realization; the ratio is taken batch by batch, in CPU time\n')
    print('| case | nv | rows | inputs | ours, wall [us/tick] | ours, CPU [us/tick] '
          '| Pinocchio-based tick, CPU [us] | ours / Pinocchio |')
    print('|---|---|---|---|---|---|---|---|')
    rows = (('two_link_flexible, forearm point (0.25 L) circle, servo realization (fixed state, '
             'efforts saturated)', 'flexible',
             'rigid8_pinocchio', flexible, 2, flexible.nu),
            (f'{chain8.name} rigid chain, tip circle, servo realization (first {inputs} joints '
             'actuated)', 'rigid8', 'rigid8_pinocchio', chain8, 2, inputs),
            ('UR-like 6-DOF rigid arm, tool point circle, ideal realization', 'rigid6',
             'rigid6_pinocchio', arm, 3, arm.nu))
    for label, key, reference, model, size, nu in rows:
        ratio = [x / y for x, y in zip(samples[key]['cpu'], samples[reference]['cpu'])]
        print(f'| {label} | {model.nv} | {size} | {nu} '
              f'| {common.with_range(samples[key]["wall"])} '
              f'| {common.with_range(samples[key]["cpu"])} '
              f'| {common.with_range(samples[reference]["cpu"])} '
              f'| {common.with_range(ratio, 2)} |')
    print(f'\nthe Pinocchio-based tick of the flexible row is the {chain8.name} chain\'s '
          f'(nv = {chain8.nv}, the same sizes of M, h, J, B); process / thread CPU time over the '
          f'timing: {threads:.2f}')
    print('realization status at the timed states: ' + '; '.join(statuses))
    demo_cpu, demo_wall, demo_status = demo_controller_ticks()
    print(f'\nthe demo\'s controller core (ProgramController.update with config/sim.yaml\'s '
          f'settings, lambda_circle), {DEMO_TICKS} ticks of a closed loop with the simulated '
          f'arm in batches of {DEMO_BATCH}: CPU {common.with_range(demo_cpu)} us/tick, wall '
          f'{common.with_range(demo_wall)} us/tick; status at the end: {demo_status}')
    hil_cpu, hil_wall, hil_status = demo_controller_ticks('hil.yaml')
    print(f'\nconfig/hil.yaml\'s controller core (the modes observed: the estimator\'s step '
          f'and correction, the run-time test), the same loop: CPU '
          f'{common.with_range(hil_cpu)} us/tick, wall {common.with_range(hil_wall)} us/tick; '
          f'status at the end: {hil_status}')
    soft_ticks(rng)
    arm_ticks()
    cpu, wall = common.spread(demo_cpu), common.spread(demo_wall)
    print(f'\ntarget: a tick of the demo\'s controller within {TARGET_US:g} us of CPU time '
          f'(20% of a 1 kHz period): {cpu.median:.1f} us = {cpu.median / 10.0:.1f}% of 1 ms '
          f'(batches {cpu.low:.1f}-{cpu.high:.1f} us; wall {wall.median:.1f} us, '
          f'{wall.low:.1f}-{wall.high:.1f}) -> {"met" if cpu.median <= TARGET_US else "NOT met"}')


def soft_ticks(rng):
    """The controller on the soft Cosserat arm (config/sim_soft.yaml), full and reduced.

    Its core's tick along the graph's loop (joint_sine, servo realization, strains
    measured) with the full strain model of the file (``control_modes`` 5: bending to
    order 4) and with a reduced control model (1: the first bending strain of each link),
    beside the Pinocchio-based tick of a rigid chain with as many joints (2, its tip on a
    circle, servo realization): what the strains add to a rigid arm's tick.
    """
    rigid = ur_like_arm(2)
    theirs = PinocchioTick(rigid, 1, 1.0, (0, 1), (0.4, 0.1), ServoRealization(
        rigid.nv, rigid.nu, 2))
    q, v = rng.uniform(-2.0, 2.0, rigid.nv), rng.normal(0.0, 1.0, rigid.nv)
    pinocchio_cpu = common.sample_interleaved({'tick': lambda: theirs(1.0, q, v)},
                                              CALLS, REPEATS)['tick']['cpu']
    print('\nthe soft Cosserat arm (config/sim_soft.yaml: two_link_soft, 2 joints, strains '
          f'measured, joint_sine, servo realization), {DEMO_TICKS} ticks of its closed loop '
          f'(rosenbrock2, 1 ms) in batches of {DEMO_BATCH}; CPU of the ticking thread '
          '[us/tick], median (min-max):\n')
    print('| control model | CPU [us/tick] | wall [us/tick] | % of the 2 ms period (CPU) '
          '| / Pinocchio 2-joint tick | status at the end |')
    print('|---|---|---|---|---|---|')
    reference = common.spread(pinocchio_cpu).median
    for label, modes in (('full (control_modes 5: bending to order 4)', 5),
                         ('reduced (control_modes 1)', 1)):
        cpu, wall, status = demo_controller_ticks('sim_soft.yaml', 'joint_sine',
                                                  control_modes=modes)
        median = common.spread(cpu).median
        print(f'| {label} | {common.with_range(cpu)} | {common.with_range(wall)} '
              f'| {median / 20.0:.1f} | {median / reference:.1f} | {status} |')
    print(f'| Pinocchio-based tick, rigid 2-joint chain (tip circle, servo) '
          f'| {common.with_range(pinocchio_cpu)} | | | 1 | |')


def arm_ticks():
    """The controller on the 6- and 7-axis arms with a slender forearm, at 1 ms.

    bench_arms.py's controllers (the user's settings only: auto picks model following
    with the joint law its check chooses), delay 1, modes measured, on the sinusoids of
    bench_arms.py, in a closed loop with the nominal arm (rk4, 0.25 ms), after 0.2 s on
    hold; `ProgramController.update` timed per batch of `DEMO_BATCH` ticks (CPU of the
    ticking thread). Target: 20 % of the 1 ms period.
    """
    from bench_arms import ARMS, programs
    from flexible_manipulator.control.program_controller import (ControllerSettings,
                                                                 ProgramController)
    from flexible_manipulator.mechanics.equilibrium import static_equilibrium
    from flexible_manipulator.mechanics.simulation import Simulation
    print(f'\nthe 6- and 7-axis arms (bench_arms.py), 1 ms, delay 1, modes measured, sine '
          f'program, {DEMO_TICKS} ticks in batches of {DEMO_BATCH}; CPU of the ticking thread '
          '[us/tick], median (min-max):\n')
    print('| arm | law | CPU [us/tick] | wall, with the plant\'s step [us/tick] | % of the 1 ms '
          'period (CPU) |')
    print('|---|---|---|---|---|')
    for name, pose in ARMS.items():
        model = load_model(common.model_path(name))
        n = model.n_joints
        start = (np.array(pose) - 0.1).tolist()
        law = ProgramController(model, programs(model, pose), ControllerSettings(
            period=0.001, delay_periods=1, analysis_positions=start), 'hold')
        q0 = model.neutral_configuration().astype(float)
        q0[:n] = start
        sim = Simulation(model, 0.00025, 'rk4', q0=static_equilibrium(model, q0))
        law.enable()

        def tick():
            effort = law.update(sim.time, sim.q[:n], sim.v[:n], sim.q[n:], sim.v[n:])
            sim.advance(effort, 0.001)
        for _ in range(200):
            tick()
        law.switch('sine')
        cpu, wall = [], []
        for _ in range(DEMO_TICKS // DEMO_BATCH):
            began = time.perf_counter_ns()
            spent = 0
            for _ in range(DEMO_BATCH):
                before = time.thread_time_ns()
                effort = law.update(sim.time, sim.q[:n], sim.v[:n], sim.q[n:], sim.v[n:])
                spent += time.thread_time_ns() - before
                sim.advance(effort, 0.001)
            cpu.append(spent / DEMO_BATCH / 1e3)
            wall.append((time.perf_counter_ns() - began) / DEMO_BATCH / 1e3)
        kind = law.realization_kind
        if law.following is not None:
            follower = law.entry.follower
            kind = follower[0] + (', damper' if len(follower) == 4 else '')
        median = common.spread(cpu).median
        print(f'| {name} | {kind} | {common.with_range(cpu)} | {common.with_range(wall)} '
              f'| {median / 10.0:.1f} |')


def check_same(ours, theirs, nv, rng):
    """Assert that both ticks give the same efforts on random states (1e-8)."""
    for _ in range(10):
        q, v, t = rng.uniform(-2.0, 2.0, nv), rng.normal(0.0, 1.0, nv), rng.uniform(0, 5)
        np.testing.assert_allclose(ours(t, q, v), theirs(t, q, v), rtol=1e-8, atol=1e-8)


if __name__ == '__main__':
    main()
