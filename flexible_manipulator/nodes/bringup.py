"""Start the simulation graph without ``launch``, optionally run it for a while and summarize.

    bringup                              # plant + controller, real time, until Ctrl-C
    bringup --duration 5 --timing-mode lockstep --local   # the headless demo

Each node of `flexible_manipulator.graph.SIMULATION` runs in its own process with the same
parameter file and ``use_sim_time`` as ``launch/sim.launch.py`` gives it. With
``--duration`` a monitor node in this process follows /joint_states and
/controller/reference until that much simulated time has passed, then stops the graph and
prints a summary (simulated time, real-time factor, tracking error, peak torque).

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
               '--params-file', params_file, '-p', 'use_sim_time:=true']
    for name, value in overrides:
        command += ['-p', f'{name}:={value}']
    return command


def start_graph(params_file, timing_mode=None, specs=graph.SIMULATION):
    """Start the nodes ``specs`` of the simulation graph; return the processes."""
    processes = []
    for spec in specs:
        overrides = [('timing_mode', timing_mode)] if timing_mode and spec.name == 'plant' else []
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


class RunStatistics:
    """Tracking error and peak torque of a run: states paired with references by stamp."""

    def __init__(self):
        """Start empty."""
        self.references = {}   # stamp -> {joint: program position}, awaiting their state
        self.states = {}       # stamp -> positions, awaiting their reference
        self.joint_names = None
        self.sim_time = 0.0
        self.ticks = 0
        self.answered = False  # a controller reference has arrived
        self.start_ticks = 0   # ticks and simulated time when the loop closed
        self.start_time = 0.0
        self.sum_squared_error = None
        self.max_error = None
        self.peak_effort = None
        self.paired = 0

    def on_reference(self, msg):
        """Pair a program reference with the state it answered (which usually came first)."""
        self.answered = True
        key = (msg.header.stamp.sec, msg.header.stamp.nanosec)
        reference = dict(zip(msg.name, msg.position))
        position = self.states.pop(key, None)
        if position is None:
            self.references[key] = reference
        else:
            self._accumulate(reference, position)

    def on_state(self, msg):
        """Record simulated time and peak effort; pair with a waiting reference if any."""
        if self.joint_names is None:
            self.joint_names = list(msg.name)
            n = len(msg.name)
            self.sum_squared_error, self.max_error = [0.0] * n, [0.0] * n
            self.peak_effort = [0.0] * n
        self.sim_time = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        self.ticks += 1
        for k, effort in enumerate(msg.effort):
            self.peak_effort[k] = max(self.peak_effort[k], abs(effort))
        key = (msg.header.stamp.sec, msg.header.stamp.nanosec)
        reference = self.references.pop(key, None)
        if reference is None:
            self.states[key] = list(msg.position)
        else:
            self._accumulate(reference, msg.position)

    def _accumulate(self, reference, position):
        self.paired += 1
        for k, name in enumerate(self.joint_names):
            error = abs(position[k] - reference[name])
            self.sum_squared_error[k] += error * error
            self.max_error[k] = max(self.max_error[k], error)

    def summary(self, wall_time, title):
        """Human-readable summary lines."""
        names = self.joint_names or []
        rms = [math.sqrt(s / max(self.paired, 1)) for s in (self.sum_squared_error or [])]
        lines = [title,
                 f'  simulated time     {self.sim_time:.3f} s',
                 f'  wall time          {wall_time:.3f} s (closed loop)',
                 f'  real-time factor   {(self.sim_time - self.start_time) / wall_time:.2f}',
                 f'  state messages     {self.ticks} '
                 f'({(self.ticks - self.start_ticks) / wall_time:.0f} per wall s)',
                 '  tracking error     ' + ', '.join(
                     f'{n}: RMS {r:.2e} rad, max {m:.2e} rad'
                     for n, r, m in zip(names, rms, self.max_error or [])),
                 '  peak torque        ' + ', '.join(
                     f'{n}: {p:.2f} N m' for n, p in zip(names, self.peak_effort or []))]
        return '\n'.join(lines)


def monitor(processes, duration, timeout, start_rest):
    """Follow the running graph until ``duration`` simulated seconds; return statistics.

    ``processes`` holds the plant; ``start_rest()`` starts the other nodes and returns their
    processes. It is called once the first state is heard, so that in lockstep no state
    passes before the monitor listens.
    """
    import rclpy
    from sensor_msgs.msg import JointState

    rclpy.init()
    node = rclpy.create_node('bringup_monitor')
    stats = RunStatistics()
    node.create_subscription(JointState, 'controller/reference', stats.on_reference, 100)
    node.create_subscription(JointState, 'joint_states', stats.on_state, 100)
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
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return stats, time.monotonic() - (start or time.monotonic())


def main(argv=None):
    """Entry point of the ``bringup`` executable."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--params-file', help='parameter file (default: config/sim.yaml)')
    parser.add_argument('--timing-mode', choices=('realtime', 'lockstep'),
                        help='override the plant timing mode')
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
        processes = start_graph(params_file, args.timing_mode)
    else:
        processes = start_graph(params_file, args.timing_mode, graph.SIMULATION[:1])
    try:
        if args.duration is None:
            while all(p.poll() is None for p in processes):
                time.sleep(0.2)
            return max(p.returncode or 0 for p in processes)
        stats, wall = monitor(processes, args.duration, args.timeout, lambda: start_graph(
            params_file, args.timing_mode, graph.SIMULATION[1:]))
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
