"""The closed loop over DDS in lock-step: control ticks per wall second and answer latency.

The plant node (`two_link_flexible`, rk4 at 0.5 ms, 2 ms per state) runs in lock-step: it
advances one period per command and publishes the next state at once, so the loop runs as
fast as the two processes and Fast DDS (shared memory, this host only) allow. The plant
itself measures each round trip, from publishing a state to receiving the command that
answers it (state out, the controller's tick, command back), and reports on /diagnostics
the answered states, ticks per wall second and the latency percentiles (p50, p99, max);
this script only listens to /diagnostics (two messages per wall second), so it adds no
per-tick load.

Cases, each a fresh plant; three runs per case, the cases alternating (controller, echo,
controller, ...); every figure is reported as the median of the runs and their range
(min-max), not the best run:

* ``controller``: the program-constraint controller node of the demo (config/sim.yaml:
  the forearm's lambda-point on a circle, servo realization, elastic state estimated);
* ``zero-effort echo``: the reference, a minimal rclpy node in this process that answers
  each joint state with a zero command (no control computation): the floor set by rclpy
  and DDS on this machine. The ratio controller/echo is the share of the loop's rate that
  the controller's computation costs;
* ``composed controller`` and ``composed echo``: the same two graphs in one process, as
  ``container plant controller`` runs them (`nodes.container`: the same node factories,
  one `TickExecutor`), here in this script's process so that each node's share can be
  read: the executor below times every callback on the thread's CPU clock and books it to
  the node that owns the entity; what the process spent beyond the callbacks (the waits,
  finding the ready entities) is the executor's.

Each run also reads the CPU time of the plant's and the controller's processes
(``/proc/<pid>/stat``: user + system) at both ends of the measured window: CPU per answered
state, i.e. per tick of each node, and its share of the update period (the budget: each
tick <= 25 % of its period).

Target: the controller's loop sustains at least 500 ticks per wall second.
Run: ``.venv/bin/python bench/bench_closed_loop.py [PARAMS]`` (about 2 min; PARAMS a
parameter file of config/, default the demo's ``sim``; ``sim_soft``: the soft Cosserat
arm's graph).
"""

import os
import sys
import time

import yaml

import bench_common as common
from flexible_manipulator import graph
from flexible_manipulator.nodes import bringup, container
from flexible_manipulator.nodes.executor import TickExecutor
from flexible_manipulator.nodes.message_memory import bound_message_memory

MEASURE_S = 8.0              # wall seconds measured per run, after the warm-up
WARM_UP_STATES = 500         # answered states before the measurement starts
RUNS = 3                     # runs per case (alternating)
TARGET = 500.0               # ticks per wall second


class Listener:
    """The bench's rclpy node: plant diagnostics, and optionally the zero-effort echo."""

    def __init__(self, rclpy, echo):
        from diagnostic_msgs.msg import DiagnosticArray
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray
        self.rclpy = rclpy
        self.node = rclpy.create_node('bench_closed_loop')
        self.plant = None            # latest plant diagnostics: (wall time, values)
        self.node.create_subscription(DiagnosticArray, 'diagnostics', self.on_diagnostics, 10)
        if echo:
            zero = Float64MultiArray(data=[0.0, 0.0])
            publisher = self.node.create_publisher(Float64MultiArray,
                                                   'effort_controller/commands', 10)
            self.node.create_subscription(JointState, 'joint_states',
                                          lambda msg: publisher.publish(zero), 10)

    def on_diagnostics(self, msg):
        for status in msg.status:
            if status.name.endswith(': simulation'):
                self.plant = (time.monotonic(), {v.key: v.value for v in status.values})

    def wait_for(self, condition, timeout, what):
        """Spin until ``condition()`` holds; RuntimeError after ``timeout`` wall seconds."""
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise RuntimeError(f'no {what} after {timeout} s')
            self.rclpy.spin_once(self.node, timeout_sec=0.05)

    def answered(self):
        return int(self.plant[1]['answered_states']) if self.plant else 0


def cpu_seconds(pid):
    """User + system CPU time of process ``pid`` so far [s] (Linux /proc)."""
    with open(f'/proc/{pid}/stat', encoding='ascii') as stream:
        fields = stream.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


class AccountingExecutor(TickExecutor):
    """`TickExecutor` that books the thread CPU time of each callback to its node."""

    def __init__(self):
        super().__init__()
        self.cpu = {}               # node name: CPU seconds in its callbacks
        self._owner = {}            # entity (subscription, timer): its node's name

    def _refresh(self):
        if not self._current:
            super()._refresh()
            self._owner = {entity: node.get_name() for node, groups, _ in self._entities
                           for entities in groups.values() for entity in entities}

    def _booked(self, run, entity):
        start = time.thread_time()
        run(entity)
        name = self._owner.get(entity, 'other')
        self.cpu[name] = self.cpu.get(name, 0.0) + time.thread_time() - start

    def _run_subscription(self, sub):
        self._booked(super()._run_subscription, sub)

    def _run_timer(self, tmr):
        self._booked(super()._run_timer, tmr)


def run_composed(case, params_file):
    """One run of the graph in this process (`nodes.container`'s nodes, one executor)."""
    import rclpy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    bound_message_memory()
    names = ['plant', 'controller'] if case == 'composed controller' else ['plant']
    rclpy.init(args=['bench', '--ros-args', '--params-file', params_file,
                     '-p', 'plant:timing_mode:=lockstep'])
    nodes = [make_node() for make_node, _name in container.factories(names)]
    plant = nodes[0]
    if case == 'composed echo':
        echo = rclpy.create_node('echo')
        zero = Float64MultiArray(data=[0.0, 0.0])
        publisher = echo.create_publisher(Float64MultiArray, 'effort_controller/commands', 10)
        echo.create_subscription(JointState, 'joint_states',
                                 lambda msg: publisher.publish(zero), 10)
        nodes.append(echo)
    executor = AccountingExecutor()
    for node in nodes:
        executor.add_node(node)
    latency = plant.answer_latency
    try:
        deadline = time.monotonic() + 120
        while latency.count < WARM_UP_STATES and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
        wall0, cpu0, count0 = time.monotonic(), time.process_time(), latency.count
        booked0 = dict(executor.cpu)
        while time.monotonic() - wall0 < MEASURE_S:
            executor.spin_once(timeout_sec=0.05)
        wall1, cpu1, ticks = time.monotonic(), time.process_time(), latency.count - count0
        if ticks <= 0:
            raise RuntimeError(f'{case}: the closed loop did not run')
        booked = {name: (executor.cpu[name] - booked0.get(name, 0.0)) / ticks
                  for name in executor.cpu}
        answering = booked.get('controller', booked.get('echo', 0.0))
        return {'rate': ticks / (wall1 - wall0), 'plant_cpu': booked['plant'],
                'controller_cpu': answering,
                'executor_cpu': (cpu1 - cpu0) / ticks - sum(booked.values()),
                'p50': 1e3 * latency.percentile(50), 'p99': 1e3 * latency.percentile(99),
                'max': 1e3 * latency.maximum}
    finally:
        for node in reversed(nodes):
            node.destroy_node()
        rclpy.try_shutdown()


def run_case(case, params_file):
    """One run: start the nodes, warm up, measure; return the plant's figures."""
    import rclpy
    if case.startswith('composed'):
        return run_composed(case, params_file)
    specs = graph.SIMULATION if case == 'controller' else graph.SIMULATION[:1]
    processes = bringup.start_graph(params_file, 'lockstep', specs)
    rclpy.init()
    listener = Listener(rclpy, echo=case != 'controller')
    try:
        listener.wait_for(lambda: listener.answered() >= WARM_UP_STATES, 120, 'closed loop')
        wall0, count0 = listener.plant[0], listener.answered()
        cpu0 = [cpu_seconds(p.pid) for p in processes]
        listener.wait_for(lambda: listener.plant[0] - wall0 >= MEASURE_S, 60, 'diagnostics')
        wall1, values = listener.plant
        cpu1 = [cpu_seconds(p.pid) for p in processes]
        ticks = int(values['answered_states']) - count0
        rate = ticks / (wall1 - wall0)
        # The diagnostics arrive twice a second: the CPU window is the same to ~0.5 s of
        # 8 s, and both ends read alike, so the per-tick figures are good to a few percent.
        per_tick = [(b - a) / ticks for a, b in zip(cpu0, cpu1)]
        return {'rate': rate, 'plant_cpu': per_tick[0],
                'controller_cpu': per_tick[1] if case == 'controller' else float('nan'),
                'p50': float(values['answer_latency_p50_ms']),
                'p99': float(values['answer_latency_p99_ms']),
                'max': float(values['answer_latency_max_ms'])}
    finally:
        listener.node.destroy_node()
        rclpy.try_shutdown()
        bringup.stop_graph(processes)


def main():
    """Run both cases RUNS times, alternating; print medians and ranges."""
    claim = bringup.use_local_network()       # noqa: F841 (held while the bench runs)
    name = sys.argv[1] if len(sys.argv) > 1 else graph.SIMULATION_PARAMETERS
    params_file = os.path.join(bringup.share_directory(), 'config',
                               name if name.endswith('.yaml') else f'{name}.yaml')
    with open(params_file, encoding='utf-8') as stream:
        plant = yaml.safe_load(stream)['plant']['ros__parameters']
    period = float(plant['update_period'])
    print(f'machine: {common.machine()}; load average {os.getloadavg()[0]:.2f}; '
          f'ROS_DOMAIN_ID={os.environ["ROS_DOMAIN_ID"]}')
    cases = ('controller', 'zero-effort echo', 'composed controller', 'composed echo')
    results = {case: [] for case in cases}
    for _ in range(RUNS):
        for case in cases:
            results[case].append(run_case(case, params_file))
    print(f'\nlock-step closed loop over DDS ({os.path.basename(params_file)}: plant '
          f'{plant["model"]}, {plant["integrator"]} at {plant["integration_step"]} s, '
          f'{period * 1e3:g} ms per state; {MEASURE_S:.0f} s measured per run; median of '
          f'{RUNS} runs per case, (min-max) over the runs)')
    print('| answering node | ticks / wall s | x real time | latency p50 [ms] | p99 [ms] '
          '| max [ms] |\n|---|---|---|---|---|---|')
    for case in cases:
        runs = results[case]
        print(f'| {case} | {common.with_range([r["rate"] for r in runs], 0)} '
              f'| {common.with_range([r["rate"] * period for r in runs], 2)} '
              f'| {common.with_range([r["p50"] for r in runs], 3)} '
              f'| {common.with_range([r["p99"] for r in runs], 3)} '
              f'| {common.with_range([r["max"] for r in runs], 2)} |')
    print('\nCPU time per tick (per answered state) [us]; composed: each node\'s callbacks, '
          'the executor the rest of the process\n'
          '| case | plant | answering node | executor (composed) | plant: share of the period '
          '| answering node: share |\n|---|---|---|---|---|---|')
    for case in cases:
        runs = results[case]
        executor = (common.with_range([r['executor_cpu'] * 1e6 for r in runs], 0)
                    if case.startswith('composed') else '-')
        answering = ('-' if case == 'zero-effort echo' else
                     common.with_range([r['controller_cpu'] * 1e6 for r in runs], 0))
        shares = [common.spread(r[key] for r in runs).median / period
                  for key in ('plant_cpu', 'controller_cpu')]
        print(f'| {case} | {common.with_range([r["plant_cpu"] * 1e6 for r in runs], 0)} '
              f'| {answering} | {executor} | {shares[0]:.0%} '
              f'| {"-" if case == "zero-effort echo" else f"{shares[1]:.0%}"} |')
    for case in cases:
        print(f'{case} runs, in order: '
              + ', '.join(f'{r["rate"]:.0f}' for r in results[case]) + ' ticks/s')
    rates = {case: common.spread(r['rate'] for r in results[case]) for case in cases}
    for control, echo in (cases[:2], cases[2:]):
        ratios = [c['rate'] / e['rate'] for c, e in zip(results[control], results[echo])]
        print(f'{control} / {echo} rate: '
              f'{rates[control].median / rates[echo].median:.2f} '
              f'(run by run: {", ".join(f"{x:.2f}" for x in ratios)})')
    for case in (cases[0], cases[2]):
        rate = rates[case]
        verdict = 'met' if rate.median >= TARGET else 'NOT met'
        print(f'{case}: target >= {TARGET:.0f} ticks per wall second: median '
              f'{rate.median:.0f} (slowest run {rate.low:.0f}) -> {verdict}')


if __name__ == '__main__':
    main()
