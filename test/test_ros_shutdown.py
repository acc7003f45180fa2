"""Every node and the bring-up stop cleanly on SIGINT and SIGTERM, and refuse bad
configuration with one line and exit code 2 (real processes over real DDS).

Expected: exit code 0 and no Python traceback after either signal (the nodes finish the
callback under way, destroy their timers and publishers, then the context; rclpy's own
handlers used to invalidate the context under a running callback: exit 1, "publisher's
context is invalid"); a bring-up started as a script starts it in the background (SIGINT
ignored) stops on SIGINT and on SIGTERM and takes its nodes with it; a parameter of the
wrong type, a missing parameter file and a file that is not YAML each give exit code 2 and
a line naming the parameter or the file. The time to exit is reported, not asserted: it
depends on the machine's load (the loop reacts within `common.SPIN_WAIT`).
"""

import importlib.util
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import CONFIG, CONTROLLER, NodeProcess, PLANT, SERVO_CONTROLLER

pytestmark = [pytest.mark.ros, pytest.mark.timeout(300)]

SERVO = 'flexible_manipulator.nodes.servo_node'
VIEW = 'flexible_manipulator.nodes.view_node'
STARTED = {PLANT: 'simulating', SERVO: 'simulating', CONTROLLER: 'controlling',
           SERVO_CONTROLLER: 'controlling', VIEW: 'view of the graph at'}


def wait_for(predicate, timeout, what):
    """Poll ``predicate`` every 50 ms; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f'timed out after {timeout} s waiting for {what}')
        time.sleep(0.05)


def stop_with(node, number):
    """Send signal ``number`` to a started node; return (exit code, seconds to exit)."""
    sent = time.monotonic()
    node.process.send_signal(number)
    code = node.wait(60)
    return code, time.monotonic() - sent


@pytest.mark.parametrize('module, parameters', [
    (PLANT, [('timing_mode', 'realtime')]),
    (PLANT, [('timing_mode', 'lockstep'), ('lockstep_resend_period', 0.001)]),
    (CONTROLLER, []),
    (SERVO, [('model', 'sleigh_servo'), ('timing_mode', 'realtime')]),
    (SERVO_CONTROLLER, []),
    pytest.param(VIEW, [('port', 0)], marks=pytest.mark.skipif(
        importlib.util.find_spec('viser') is None,
        reason='viser (pip only: requirements-ros.txt) is not installed')),
], ids=['plant-realtime', 'plant-lockstep', 'controller', 'servo_plant', 'servo_controller',
        'view'])
@pytest.mark.parametrize('number', [signal.SIGINT, signal.SIGTERM], ids=['SIGINT', 'SIGTERM'])
def test_node_exits_zero_on_signal(domain_id, tmp_path, module, parameters, number):
    """A running node (publishing at its full rate: realtime ticks, or lockstep re-sends
    every 1 ms) gets the signal while its timers fire: exit 0, no traceback."""
    params = (None if module in (SERVO, SERVO_CONTROLLER, VIEW)
              else os.path.join(CONFIG, 'sim.yaml'))
    # A new interpreter: its exit (finalization included) is the subject.
    node = NodeProcess(module, domain_id, tmp_path / 'node.log', params, parameters,
                       fork=False)
    try:
        wait_for(lambda: STARTED[module] in node.output() or not node.alive(), 120,
                 'the node to start')
        assert node.alive(), node.output()
        time.sleep(0.5)              # timers running
        code, seconds = stop_with(node, number)
        output = node.output()
        assert code == 0, f'exit {code} {seconds:.2f} s after the signal:\n{output}'
        assert 'Traceback' not in output, output
    finally:
        node.stop()


def catches(pid, number):
    """True once process ``pid`` has a handler of its own for signal ``number`` (SigCgt)."""
    with open(f'/proc/{pid}/status') as status:
        caught = next(line for line in status if line.startswith('SigCgt:'))
    return bool(int(caught.split()[1], 16) >> (number - 1) & 1)


@pytest.mark.parametrize('executable', ['plant', 'controller'])
def test_ctrl_c_while_the_executable_starts_exits_zero(domain_id, tmp_path, executable):
    """The console scripts (`entry_points`, what ``ros2 run`` and ``ros2 launch`` start)
    install the shutdown flag before importing the node (1.5 s or more): SIGINT sent as
    soon as the process catches SIGTERM (which Python alone never does: the flag is
    installed) ends it with 0, no traceback, before the node starts (no death by
    KeyboardInterrupt: "process has died [exit code -2]" under ros2 launch)."""
    from ament_index_python.packages import get_package_prefix
    path = os.path.join(get_package_prefix('flexible_manipulator'), 'lib',
                        'flexible_manipulator', executable)
    log = open(tmp_path / 'start.log', 'w')
    process = subprocess.Popen([path, '--ros-args', '--params-file',
                                os.path.join(CONFIG, 'sim.yaml')],
                               env=dict(os.environ, ROS_DOMAIN_ID=str(domain_id)),
                               stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: process.poll() is not None or catches(process.pid, signal.SIGTERM),
                 60, 'the shutdown flag')
        process.send_signal(signal.SIGINT)
        code = process.wait(60)
    finally:
        if process.poll() is None:
            process.kill()
        log.close()
    output = open(tmp_path / 'start.log').read()
    assert code == 0 and 'Traceback' not in output, f'exit {code}:\n{output}'
    assert STARTED[PLANT if executable == 'plant' else CONTROLLER] not in output


@pytest.mark.parametrize('number, options, processes', [
    (signal.SIGINT, [], 1), (signal.SIGTERM, [], 1),
    (signal.SIGINT, ['--separate-processes'], 2)], ids=['SIGINT', 'SIGTERM', 'separate'])
def test_bringup_in_the_background_stops_with_its_nodes(domain_id, tmp_path, number, options,
                                                        processes):
    """`bringup` started as a script would start it in the background (SIGINT ignored,
    inherited by its nodes): the signal ends it with exit 0 and no node outlives it, the
    nodes composed in one process (the default) or in one each."""
    log = open(tmp_path / 'bringup.log', 'w')
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain_id), PYTHONUNBUFFERED='1')
    bringup = subprocess.Popen(
        [sys.executable, '-m', 'flexible_manipulator.nodes.bringup', '--local', *options],
        env=env,
        stdout=log, stderr=subprocess.STDOUT,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    output = (tmp_path / 'bringup.log').read_text
    try:
        wait_for(lambda: 'controlling' in output() or bringup.poll() is not None, 120,
                 'the graph to start')
        children = [int(pid) for pid in subprocess.run(
            ['pgrep', '-P', str(bringup.pid)], capture_output=True, text=True).stdout.split()]
        assert len(children) == processes, output()
        sent = time.monotonic()
        bringup.send_signal(number)
        code = bringup.wait(60)
        seconds = time.monotonic() - sent
        alive = [pid for pid in children if os.path.exists(f'/proc/{pid}')
                 and 'Z' not in open(f'/proc/{pid}/stat').read().split()[2]]
        assert code == 0 and not alive, (
            f'exit {code} {seconds:.2f} s after the signal, nodes alive: {alive}\n{output()}')
        assert 'Traceback' not in output(), output()
    finally:
        if bringup.poll() is None:
            bringup.kill()
        subprocess.run(['pkill', '-KILL', '-P', str(bringup.pid)])
        log.close()


@pytest.mark.parametrize('arguments, named', [
    (['-p', 'update_period:=1'], "'update_period'"),
    (['-p', 'update_period:=fast'], "'update_period'"),
    (['--params-file', '/nonexistent/sim.yaml'], '/nonexistent/sim.yaml'),
    (['--params-file', 'BROKEN'], 'broken.yaml'),
], ids=['integer-for-float', 'string-for-float', 'missing-file', 'not-yaml'])
def test_bad_parameters_exit_2_with_one_line(domain_id, tmp_path, arguments, named):
    """Bad parameters or parameter files: exit 2, the refusal names what is wrong."""
    broken = tmp_path / 'broken.yaml'
    broken.write_text('plant:\n  ros__parameters:\n    model: [unclosed\n')
    arguments = [str(broken) if a == 'BROKEN' else a for a in arguments]
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain_id))
    result = subprocess.run([sys.executable, '-m', PLANT, '--ros-args', *arguments], env=env,
                            capture_output=True, text=True, timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert 'Traceback' not in output, output
    refusal = [line for line in output.splitlines() if 'refusing to start' in line]
    assert len(refusal) == 1 and named in refusal[0], output
