"""Start the simulation graph without ``launch``, optionally run it for a while and summarize.

    bringup                              # plant + controller, real time, until Ctrl-C
    bringup --duration 5 --timing-mode lockstep --local   # the headless demo

Each node of `flexible_manipulator.graph.SIMULATION` runs in its own process with the same
parameter file and ``use_sim_time`` (per `graph.NodeSpec.sim_time`) as
``launch/sim.launch.py`` gives it. With
``--duration`` a monitor node in this process follows /joint_states,
/controller/residuals and /diagnostics until that much simulated time has passed, then
stops the graph and prints a summary (simulated time, real-time factor, control ticks per
wall second, the active program, the RMS and largest residual phi of each of its rows,
peak torque, the controller's last diagnostic status).

``--local`` keeps DDS traffic on this machine (shared-memory transport, localhost
discovery) and picks a private ROS_DOMAIN_ID unless one is set: for demos and tests on a
shared machine. Real deployments leave it off.
"""

import argparse
import math
import os
import random
import signal
import subprocess
import sys
import time

from .. import graph


def share_directory():
    """Return the package's share directory, making the ament index find it in a venv."""
    if not os.environ.get('AMENT_PREFIX_PATH') and os.path.isdir(
            os.path.join(sys.prefix, 'share', graph.PACKAGE)):
        os.environ['AMENT_PREFIX_PATH'] = sys.prefix
    from ament_index_python.packages import get_package_share_directory
    return get_package_share_directory(graph.PACKAGE)


def use_local_network():
    """Keep DDS on this host: shared memory only, localhost discovery, private domain."""
    os.environ['FASTDDS_BUILTIN_TRANSPORTS'] = 'SHM'
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    os.environ.setdefault('ROS_DOMAIN_ID', str(random.randint(1, 101)))


def node_command(spec, params_file, overrides=()):
    """Command line that runs one node of the graph as ``python -m``."""
    command = [sys.executable, '-m', spec.module, '--ros-args', '-r', f'__node:={spec.name}',
               '--params-file', params_file]
    if spec.sim_time:
        command += ['-p', 'use_sim_time:=true']
    for name, value in overrides:
        command += ['-p', f'{name}:={value}']
    return command


def start_graph(params_file, timing_mode=None, specs=graph.SIMULATION, program=None):
    """Start the nodes ``specs`` of the simulation graph; return the processes."""
    processes = []
    for spec in specs:
        overrides = [('timing_mode', timing_mode)] if timing_mode and spec.name == 'plant' else []
        if program and spec.name == 'controller':
            overrides.append(('active_program', program))
        processes.append(subprocess.Popen(node_command(spec, params_file, overrides)))
    return processes


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


class RunStatistics:
    """Program residuals, peak torque and the controller's last diagnostics of a run."""

    def __init__(self):
        """Start empty."""
        self.joint_names = None
        self.sim_time = 0.0
        self.ticks = 0
        self.answered = False  # a controller residual has arrived
        self.start_ticks = 0   # ticks and simulated time when the loop closed
        self.start_time = 0.0
        self.peak_effort = None
        self.rows = None       # residual row names of the current program
        self.sum_squared = None
        self.max_residual = None
        self.residuals = 0
        self.controller = None  # (level, message, values) of the last controller status
        self.frozen = False     # after the run: only diagnostics are still taken

    def on_residuals(self, msg):
        """Accumulate the program residuals phi (one message per control tick)."""
        if self.frozen:
            return
        self.answered = True
        names = list(msg.name)
        if names != self.rows:
            # A new program: its rows start their own statistics.
            self.rows = names
            self.sum_squared, self.max_residual = [0.0] * len(names), [0.0] * len(names)
            self.residuals = 0
        self.residuals += 1
        for k, value in enumerate(msg.position):
            self.sum_squared[k] += value * value
            self.max_residual[k] = max(self.max_residual[k], abs(value))

    def on_state(self, msg):
        """Record simulated time and peak effort."""
        if self.frozen:
            return
        if self.joint_names is None:
            self.joint_names = list(msg.name)
            self.peak_effort = [0.0] * len(msg.name)
        self.sim_time = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        self.ticks += 1
        for k, effort in enumerate(msg.effort):
            self.peak_effort[k] = max(self.peak_effort[k], abs(effort))

    def on_diagnostics(self, msg):
        """Keep the controller's last status."""
        for status in msg.status:
            if status.name.endswith('program controller'):
                self.controller = (status.level, status.message,
                                   {kv.key: kv.value for kv in status.values})

    def summary(self, wall_time, title):
        """Human-readable summary lines."""
        rows = self.rows or []
        count = max(self.residuals, 1)
        lines = [title,
                 f'  simulated time     {self.sim_time:.3f} s',
                 f'  wall time          {wall_time:.3f} s (closed loop)',
                 f'  real-time factor   {(self.sim_time - self.start_time) / wall_time:.2f}',
                 f'  state messages     {self.ticks} '
                 f'({(self.ticks - self.start_ticks) / wall_time:.0f} per wall s)']
        if self.controller is not None:
            values = self.controller[2]
            lines.append(f"  program            {values.get('active_program', '?')} "
                         f"({values.get('realization', '?')}; sampled-loop spectral radius "
                         f"{values.get('sampled_loop_radius') or '-'})")
        lines.append('  program residual   ' + ', '.join(
            f'{n}: RMS {math.sqrt(s / count):.2e} {residual_unit(n)}, max {m:.2e} '
            f'{residual_unit(n)}' for n, s, m in zip(rows, self.sum_squared or [],
                                                     self.max_residual or [])))
        lines.append('  peak torque        ' + ', '.join(
            f'{n}: {p:.2f} N m' for n, p in zip(self.joint_names or [], self.peak_effort or [])))
        if self.controller is not None:
            level = {0: 'OK', 1: 'WARN', 2: 'ERROR'}.get(int.from_bytes(
                self.controller[0], 'little') if isinstance(self.controller[0], bytes)
                else int(self.controller[0]), 'STALE')
            lines.append(f'  controller         {level}: {self.controller[1]}')
        return '\n'.join(lines)


def monitor(processes, duration, timeout, start_rest):
    """Follow the running graph until ``duration`` simulated seconds; return statistics.

    ``processes`` holds the plant; ``start_rest()`` starts the other nodes and returns their
    processes. It is called once the first state is heard, so that in lockstep no state
    passes before the monitor listens.
    """
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from sensor_msgs.msg import JointState

    rclpy.init()
    node = rclpy.create_node('bringup_monitor')
    stats = RunStatistics()
    node.create_subscription(JointState, 'controller/residuals', stats.on_residuals, 100)
    node.create_subscription(JointState, 'joint_states', stats.on_state, 100)
    node.create_subscription(DiagnosticArray, 'diagnostics', stats.on_diagnostics, 10)
    start, started_rest = None, False
    deadline = time.monotonic() + timeout
    try:
        while stats.sim_time < duration:
            rclpy.spin_once(node, timeout_sec=0.1)
            if not started_rest and stats.ticks:
                processes += start_rest()
                started_rest = True
            if start is None and stats.answered:
                # Rates count from the closed loop, not from the controller's start-up.
                start = time.monotonic()
                stats.start_ticks, stats.start_time = stats.ticks, stats.sim_time
            failed = [p for p in processes if p.poll() is not None]
            if failed:
                raise RuntimeError(f'node exited early with code {failed[0].returncode}: '
                                   f'{" ".join(failed[0].args[2:4])}')
            if time.monotonic() > deadline:
                raise RuntimeError(f'only {stats.sim_time:.3f} of {duration} simulated seconds '
                                   f'after {timeout} wall seconds')
        end = time.monotonic()
        # The controller's diagnostics come once per wall second: wait for a fresh one.
        stats.frozen = True
        stats.controller = None
        settle = time.monotonic() + 1.5
        while stats.controller is None and time.monotonic() < settle:
            rclpy.spin_once(node, timeout_sec=0.1)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return stats, end - (start or end)


def main(argv=None):
    """Entry point of the ``bringup`` executable."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--params-file', help='parameter file (default: config/sim.yaml)')
    parser.add_argument('--timing-mode', choices=('realtime', 'lockstep'),
                        help='override the plant timing mode')
    parser.add_argument('--program', help="the controller's program (default: the file's)")
    parser.add_argument('--duration', type=float,
                        help='run this many simulated seconds, print a summary and stop')
    parser.add_argument('--timeout', type=float, default=300.0,
                        help='wall-clock bound on a --duration run [s]')
    parser.add_argument('--local', action='store_true',
                        help='keep DDS traffic on this machine, private domain id')
    args = parser.parse_args(argv)
    if args.local:
        use_local_network()
    params_file = args.params_file or os.path.join(share_directory(), 'config',
                                                   graph.SIMULATION_PARAMETERS)
    if args.duration is None:
        processes = start_graph(params_file, args.timing_mode, program=args.program)
    else:
        processes = start_graph(params_file, args.timing_mode, graph.SIMULATION[:1])
    try:
        if args.duration is None:
            while all(p.poll() is None for p in processes):
                time.sleep(0.2)
            return max(p.returncode or 0 for p in processes)
        stats, wall = monitor(processes, args.duration, args.timeout, lambda: start_graph(
            params_file, args.timing_mode, graph.SIMULATION[1:], args.program))
        mode = args.timing_mode or 'as configured'
        print(stats.summary(wall, f'flexible_manipulator demo: plant + controller, timing '
                                  f'{mode}, ROS_DOMAIN_ID={os.environ.get("ROS_DOMAIN_ID", 0)}'),
              flush=True)
        return 0
    except KeyboardInterrupt:
        return 0
    except RuntimeError as error:
        print(f'bringup: {error}', file=sys.stderr, flush=True)
        return 1
    finally:
        stop_graph(processes)


if __name__ == '__main__':
    sys.exit(main())
