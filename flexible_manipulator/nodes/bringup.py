"""Start the simulation graph without ``launch``, optionally run it for a while and summarize.

    bringup                              # plant + controller, real time, until Ctrl-C
    bringup --duration 5 --timing-mode lockstep --local   # the headless demo

The nodes of `flexible_manipulator.graph.SIMULATION` run composed in one process
(`nodes.container`: their messages delivered within the process, no other process woken
per tick; bench/README.md, ``bench_closed_loop.py``) or, with ``--separate-processes``,
each in its own; with the same parameter file and ``use_sim_time`` (per
`graph.NodeSpec.sim_time`) as ``launch/sim.launch.py`` gives them.

With ``--duration`` the plant starts paused (in separate processes the monitor starts the
controller once it hears the plant); a monitor node in this process holds the plant paused
(``plant/pause``) until it hears the controller's diagnostics, samples /joint_states every
20 ms (wall) for simulated time, pauses the plant once that much simulated time has
passed, then stops the graph and prints a summary: simulated time, real-time factor,
control ticks per wall second, the answer latency (from the plant's diagnostics), the
active program, the RMS and largest residual phi of each of its rows and the peak torques
(the controller's diagnostics carry exact statistics of its whole program run: the last
message is enough), the controller's last status.

``--local`` keeps DDS traffic on this machine (shared-memory transport, localhost
discovery) and claims a private ROS_DOMAIN_ID unless one is set (`ros_domain`: no other
local graph of the package holds it while this one runs): for demos and tests on a
shared machine. Real deployments leave it off.
"""

import argparse
import os
import signal
import subprocess
import sys
import time

from .. import graph
from ..config_files import resolve_config_path
from ..ros_domain import claim_domain_id
from ..settings import parameter_file_problem


def share_directory():
    """Return the package's share directory, making the ament index find it in a venv."""
    if not os.environ.get('AMENT_PREFIX_PATH') and os.path.isdir(
            os.path.join(sys.prefix, 'share', graph.PACKAGE)):
        os.environ['AMENT_PREFIX_PATH'] = sys.prefix
    from ament_index_python.packages import get_package_share_directory
    return get_package_share_directory(graph.PACKAGE)


def use_local_network():
    """Keep DDS on this host: shared memory only, localhost discovery, private domain.

    Unless ROS_DOMAIN_ID is set, the graph claims a domain id no other local graph of the
    package holds (`ros_domain`); the returned lock (None if the id was set) holds the
    claim and must stay open while the graph runs.
    """
    os.environ['FASTDDS_BUILTIN_TRANSPORTS'] = 'SHM'
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    if os.environ.get('ROS_DOMAIN_ID'):
        return None
    domain_id, lock = claim_domain_id()
    os.environ['ROS_DOMAIN_ID'] = str(domain_id)
    return lock


def node_command(spec, params_file, overrides=()):
    """Command line that runs one node of the graph as ``python -m``.

    Through ``entry_points``, which catches Ctrl-C before the node's module is imported
    (seconds on a loaded machine): a stop while a node starts ends it with 0, silently.
    """
    command = [sys.executable, '-m', 'flexible_manipulator.entry_points', spec.module,
               '--ros-args', '-r', f'__node:={spec.name}', '--params-file', params_file]
    if spec.sim_time:
        command += ['-p', 'use_sim_time:=true']
    for name, value in overrides:
        command += ['-p', f'{name}:={value}']
    return command


def start_graph(params_file, timing_mode=None, specs=graph.SIMULATION, program=None,
                start_paused=False, composed=False, pause_at=None):
    """Start the nodes ``specs`` of the simulation graph; return the processes.

    ``start_paused``: the plant holds simulated time until resumed (``~/pause`` false);
    ``pause_at``: the plant pauses itself at this simulated time [s].
    ``composed``: all of them in one process (`nodes.container`), else one process each.
    """
    overrides = {spec.name: {} for spec in specs}
    if 'plant' in overrides:
        plant = overrides['plant']
        if timing_mode:
            plant['timing_mode'] = timing_mode
        if start_paused:
            plant['start_paused'] = 'true'
        if pause_at:
            plant['pause_at'] = float(pause_at)
    if program and 'controller' in overrides:
        overrides['controller']['active_program'] = program
    if composed:
        return [subprocess.Popen(
            [sys.executable, '-m', 'flexible_manipulator.entry_points',
             'flexible_manipulator.nodes.container', *(spec.executable for spec in specs),
             '--ros-args', *graph.container_ros_arguments(specs, params_file, overrides)])]
    return [subprocess.Popen(node_command(spec, params_file, overrides[spec.name].items()))
            for spec in specs]


def stop_graph(processes, grace=5.0):
    """Interrupt the nodes (as Ctrl-C would), then terminate what is still running."""
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
    deadline = time.monotonic() + grace
    for process in processes:
        try:
            process.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def residual_unit(name):
    """Return the unit of a program row from its name: points [m], joints and angles [rad]."""
    return 'm' if name[-2:] in ('_x', '_y', '_z') and '_angle_' not in name else 'rad'


SAMPLE_PERIOD = 0.02      # wall seconds between two looks at the graph
CLOSE_TIMEOUT = 20.0      # wall seconds to wait for the diagnostics that close a run


def named_values(text):
    """Parse a diagnostics value 'name: 1.5, other: 2' into {'name': 1.5, 'other': 2.0}."""
    values = {}
    for item in filter(None, (part.strip() for part in text.split(','))):
        name, _, value = item.rpartition(':')
        values[name.strip()] = float(value)
    return values


class RunStatistics:
    """What the demo reports, gathered from /diagnostics and sampled joint states.

    Nothing here takes a message per control tick (a per-tick subscriber would compete for
    the CPUs with the loop it watches: it halved the lock-step rate on two CPUs): the
    controller's diagnostics carry exact per-tick statistics of its whole program run
    (``run_ticks``, ``run_residual_rms`` / ``_max``, ``run_effort_peak``), read from its
    last message; joint states are sampled at most `SAMPLE_PERIOD` apart for simulated
    time.
    """

    def __init__(self):
        """Start empty."""
        self.sim_time = 0.0
        self.start_time = None  # simulated time when the loop closed
        self.controller = None  # (level, message, values) of the last controller status
        self.plant = None       # values of the plant's last status
        self.recorder = {}      # messages written per topic, from the recorder's last status

    def on_state(self, msg):
        """Record simulated time (a sampled state)."""
        self.sim_time = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec

    def on_diagnostics(self, msg):
        """Keep the last status of the controller and of the plant."""
        for status in msg.status:
            values = {kv.key: kv.value for kv in status.values}
            if status.name.endswith('program controller'):
                self.controller = (status.level, status.message, values)
            elif status.name.endswith(': simulation'):
                self.plant = values
            elif status.name.endswith(': recording'):
                self.recorder = values

    def closed(self):
        """Return True once the plant says it is paused and the controller sent an empty window.

        Call after clearing ``plant`` and ``controller`` at the pause: an empty window
        (no new state answered since the last one) then proves that the controller's run
        statistics hold every tick up to the pause.
        """
        return (self.plant is not None and self.plant.get('paused') == 'True'
                and self.controller is not None
                and int(self.controller[2].get('ticks', 0)) == 0)

    def run_values(self, key):
        """Return the controller's run statistic ``key`` as {name: value} ({} before one)."""
        return named_values(self.controller[2].get(key, '')) if self.controller else {}

    @property
    def ticks(self):
        """Control ticks of the program run (each state answered, counted once)."""
        return int(self.controller[2].get('run_ticks', 0)) if self.controller else 0

    def summary(self, wall_time, title):
        """Human-readable summary lines."""
        simulated = self.sim_time - (self.start_time or 0.0)
        lines = [title,
                 f'  simulated time     {self.sim_time:.3f} s',
                 f'  wall time          {wall_time:.3f} s (closed loop)',
                 f'  real-time factor   {simulated / wall_time:.2f}',
                 f'  control ticks      {self.ticks} ({self.ticks / wall_time:.0f} per wall s)']
        if self.plant and 'answer_latency_p50_ms' in self.plant:
            p = self.plant
            lines.append(f"  answer latency     p50 {p['answer_latency_p50_ms']} ms, p99 "
                         f"{p['answer_latency_p99_ms']} ms, max {p['answer_latency_max_ms']} ms "
                         f"(plant: state out to command back)")
        if self.controller is not None:
            values = self.controller[2]
            lines.append(f"  program            {values.get('active_program', '?')} "
                         f"({values.get('realization', '?')}; sampled-loop spectral radius "
                         f"{values.get('sampled_loop_radius') or '-'})")
        rms, peak = self.run_values('run_residual_rms'), self.run_values('run_residual_max')
        lines.append('  program residual   ' + ', '.join(
            f'{n}: RMS {rms[n]:.2e} {residual_unit(n)}, max {peak[n]:.2e} {residual_unit(n)}'
            for n in rms))
        lines.append('  peak torque        ' + ', '.join(
            f'{n}: {p:.2f} N m' for n, p in self.run_values('run_effort_peak').items()))
        if self.controller is not None:
            level = {0: 'OK', 1: 'WARN', 2: 'ERROR'}.get(int.from_bytes(
                self.controller[0], 'little') if isinstance(self.controller[0], bytes)
                else int(self.controller[0]), 'STALE')
            lines.append(f'  controller         {level}: {self.controller[1]}')
        return '\n'.join(lines)


def monitor(processes, duration, timeout, start_rest, recording=False):
    """Follow the running graph until ``duration`` simulated seconds; return statistics.

    ``processes`` holds the plant; ``start_rest()`` starts the other nodes and returns their
    processes (none if they run already, composed with the plant). It is called once the
    first state is heard, so that in lockstep no state passes before the monitor listens.
    At ``duration`` the plant is paused (it pauses itself there, ``pause_at``, when
    `start_graph` was given it; a paused lockstep plant answers no command), and the
    diagnostics that follow close the run.
    ``recording``: the loop also waits until the recorder has written the controller's
    answers (to the states the paused plant re-sends).
    """
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from sensor_msgs.msg import JointState
    from std_srvs.srv import SetBool

    from rclpy.signals import SignalHandlerOptions
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)   # `stop_on_signals` rules
    node = rclpy.create_node('bringup_monitor')
    stats = RunStatistics()
    # Diagnostics first: each spin_once below takes the first ready subscription in
    # creation order, and joint states are almost always ready; a deep queue keeps every
    # controller window of a long (loaded) run until it is taken: with 10 and the states
    # first, windows were dropped and the summary missed most of the ticks.
    node.create_subscription(DiagnosticArray, 'diagnostics', stats.on_diagnostics, 1000)
    # Depth 1: each sampling below sees the latest state only.
    node.create_subscription(JointState, 'joint_states', stats.on_state, 1)
    pause = node.create_client(SetBool, 'plant/pause')
    start, started_rest, heard = None, False, False
    deadline = time.monotonic() + timeout

    def set_paused(paused):
        if not pause.wait_for_service(timeout_sec=30.0):
            raise RuntimeError('the plant offers no ~/pause service')
        future = pause.call_async(SetBool.Request(data=paused))
        rclpy.spin_until_future_complete(node, future, timeout_sec=30.0)

    def sample():
        nonlocal heard
        time.sleep(SAMPLE_PERIOD)
        before = stats.sim_time
        for _ in range(3):       # the state and up to two diagnostics messages
            rclpy.spin_once(node, timeout_sec=0.0)
        heard = heard or stats.sim_time != before or stats.plant is not None

    try:
        while stats.sim_time < duration - 1e-6:     # a sum of periods: rounding error
            sample()
            if not started_rest and heard:
                # Hold the plant until this monitor hears the controller's diagnostics: the
                # loop would otherwise run while this monitor is still discovering the new
                # node, and the rates (counted from the closed loop) would be off.
                set_paused(True)
                publishers = node.count_publishers('diagnostics')
                rest = start_rest()
                processes += rest
                started_rest = True
                stats.controller = None
                answers = '/controller/residuals'
                while (rest and node.count_publishers('diagnostics') <= publishers
                       or stats.controller is None
                       or recording and not int(stats.recorder.get(answers, 0))):
                    sample()
                    failed = [p for p in processes if p.poll() is not None]
                    if failed or time.monotonic() > deadline:
                        raise RuntimeError('the controller did not come up')
                set_paused(False)
            if start is None and started_rest and stats.sim_time > 0.0:
                # Rates count from the closed loop, not from the controller's start-up.
                start, stats.start_time = time.monotonic(), stats.sim_time
            failed = [p for p in processes if p.poll() is not None]
            if failed:
                raise RuntimeError(f'node exited early with code {failed[0].returncode}: '
                                   f'{" ".join(failed[0].args[2:4])}')
            if time.monotonic() > deadline:
                raise RuntimeError(f'only {stats.sim_time:.3f} of {duration} simulated seconds '
                                   f'after {timeout} wall seconds')
        set_paused(True)
        end = time.monotonic()
        # Diagnostics come once per wall second, and one sent before the pause may still be
        # on its way: the run is closed by the plant reporting itself paused and by an
        # empty controller window after it (every tick up to the pause is then summed).
        stats.controller = stats.plant = None
        settle = time.monotonic() + CLOSE_TIMEOUT
        while not stats.closed() and time.monotonic() < settle:
            rclpy.spin_once(node, timeout_sec=0.1)
        if stats.plant is not None:
            stats.sim_time = float(stats.plant['simulated_time'])
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return stats, end - (start or end)


def print_figures(recording):
    """Draw the figures of ``recording`` next to it and list them."""
    from ..recording.figures import plot_recording
    paths = plot_recording(recording)
    print(f'  recording          {recording}\n  figures            '
          f'{os.path.dirname(paths[0]) if paths else "-"}/ '
          f'({", ".join(os.path.basename(p) for p in paths)})', flush=True)


def stop_on_signals():
    """Make SIGINT and SIGTERM end the bring-up through its clean-up (`stop_graph`).

    Installed explicitly: a bring-up started in the background by a script inherits SIGINT
    ignored, and SIGTERM would otherwise kill it at once and leave its nodes running. After
    the first signal both are ignored, so that a second one cannot interrupt the clean-up.
    """
    def interrupt(number, frame):
        for other in (signal.SIGINT, signal.SIGTERM):
            signal.signal(other, signal.SIG_IGN)
        raise KeyboardInterrupt
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, interrupt)


def main(argv=None):
    """Entry point of the ``bringup`` executable."""
    stop_on_signals()
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--params-file',
                        help='parameter file: a path or a name in config/ (default: sim, '
                             'config/sim.yaml; sim_soft: the soft Cosserat arm)')
    parser.add_argument('--timing-mode', choices=('realtime', 'lockstep'),
                        help='override the plant timing mode')
    parser.add_argument('--program', help="the controller's program (default: the file's)")
    parser.add_argument('--duration', type=float,
                        help='run this many simulated seconds, print a summary and stop')
    parser.add_argument('--timeout', type=float, default=300.0,
                        help='wall-clock bound on a --duration run [s]')
    parser.add_argument('--local', action='store_true',
                        help='keep DDS traffic on this machine, private domain id')
    parser.add_argument('--view', action='store_true',
                        help='show the graph in a web browser (the view node, '
                             'http://127.0.0.1:PORT)')
    parser.add_argument('--view-port', type=int, default=8080, metavar='PORT',
                        help='port of the browser view (default 8080)')
    parser.add_argument('--separate-processes', action='store_true',
                        help='run each node in its own process (default: plant and '
                             'controller composed in one)')
    parser.add_argument('--record', metavar='FILE',
                        help='record the topics to this MCAP file; with --duration, draw '
                             'its figures next to it (FILE without .mcap + _figures/)')
    args = parser.parse_args(argv)
    params_file = resolve_config_path(args.params_file or graph.SIMULATION_PARAMETERS,
                                      'config', share_directory())
    problem = parameter_file_problem(params_file)
    if problem is not None:             # before anything starts: every node would refuse it
        print(f'bringup: {problem}', file=sys.stderr, flush=True)
        return 2
    claim = use_local_network() if args.local else None       # held until this returns
    processes = []
    if args.record:
        # First: the recorder hears the graph from its first message on.
        path = os.path.abspath(args.record)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        processes.append(subprocess.Popen(node_command(graph.RECORDER, params_file,
                                                       [('path', path)])))
    if args.view:
        processes.append(subprocess.Popen(node_command(graph.VIEW, params_file,
                                                       [('port', args.view_port)])))
        print(f'bringup: the view of the graph is at http://127.0.0.1:{args.view_port}',
              flush=True)
    composed = not args.separate_processes
    if args.duration is None:
        processes += start_graph(params_file, args.timing_mode, program=args.program,
                                 composed=composed)
    else:
        # The plant waits, paused, for the controller (the monitor resumes it): in real time
        # it would otherwise run the arm uncontrolled while the controller starts.
        processes += start_graph(params_file, args.timing_mode,
                                 graph.SIMULATION if composed else graph.SIMULATION[:1],
                                 args.program, start_paused=True, composed=composed,
                                 pause_at=args.duration)
    try:
        if args.duration is None:
            while all(p.poll() is None for p in processes):
                time.sleep(0.2)
            return max(p.returncode or 0 for p in processes)
        stats, wall = monitor(processes, args.duration, args.timeout, lambda: [] if composed
                              else start_graph(params_file, args.timing_mode,
                                               graph.SIMULATION[1:], args.program),
                              recording=bool(args.record))
        mode = args.timing_mode or 'as configured'
        print(stats.summary(wall, f'flexible_manipulator demo: plant + controller, timing '
                                  f'{mode}, ROS_DOMAIN_ID={os.environ.get("ROS_DOMAIN_ID", 0)}'),
              flush=True)
        if args.record:
            stop_graph(processes)           # the recorder completes the file as it stops
            print_figures(args.record)
        return 0
    except KeyboardInterrupt:
        return 0
    except RuntimeError as error:
        print(f'bringup: {error}', file=sys.stderr, flush=True)
        return 1
    finally:
        stop_graph(processes)
        if claim is not None:
            claim.close()               # the domain id is free once the graph has stopped


if __name__ == '__main__':
    sys.exit(main())
