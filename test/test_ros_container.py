"""Plant and controller composed in one process (`nodes.container`), over real DDS.

Expected, from what composition must keep: each node reads its own section of the shared
parameter file and a ``NODE:NAME:=VALUE`` override reaches that node only (the plant in
lockstep, the controller on its file's program); the two close the lock-step loop through
their topics as two processes do (every state answered: the plant's diagnostics count
answered states, and the controller's program runs); outside nodes see both names on the
graph; SIGINT and SIGTERM end the process with 0 and no traceback, as for a single node
(test_ros_shutdown.py); a bad parameter of either node ends it with exit 2 and one line
naming it; executables it cannot compose are named before rclpy starts.
"""

import os
import signal
import subprocess
import sys

import pytest

from conftest import CONFIG, NodeProcess
from flexible_manipulator.nodes import container

CONTAINER = 'flexible_manipulator.nodes.container'


@pytest.mark.parametrize('names', [[], ['plant', 'plant'], ['plant', 'rviz']],
                         ids=['none', 'repeated', 'unknown'])
def test_container_names_what_it_cannot_compose(names, capsys):
    """No node, a node twice or an executable it does not know: exit 2, the list named."""
    with pytest.raises(ValueError, match='plant'):
        container.factories(names)
    assert container.main([*names, '--ros-args', '-p', 'x:=1']) == 2
    assert 'servo_controller' in capsys.readouterr().err


def test_every_composable_module_makes_its_node():
    """Each executable the container offers has a ``make_node`` in its module (a
    registration without one would fail only when a user composes it)."""
    pairs = container.factories(sorted(container.composable()))
    assert all(callable(make_node) for make_node, _name in pairs)
    assert {name for _make, name in pairs} == {'plant', 'controller', 'servo_plant'}


@pytest.mark.ros
@pytest.mark.timeout(300)
@pytest.mark.parametrize('number', [signal.SIGINT, signal.SIGTERM], ids=['SIGINT', 'SIGTERM'])
def test_composed_graph_closes_the_lockstep_loop(domain_id, probe, tmp_path, number):
    """``container plant controller`` on config/sim.yaml with the plant in lockstep (an
    override for the plant alone; the file says realtime): the loop runs state by state,
    the controller reports its program, both nodes are on the graph; the signal ends it
    with 0."""
    from diagnostic_msgs.msg import DiagnosticArray
    diagnostics = probe.subscribe(DiagnosticArray, 'diagnostics')
    graph = NodeProcess(CONTAINER, domain_id, tmp_path / 'container.log',
                        os.path.join(CONFIG, 'sim.yaml'),
                        [('plant:timing_mode', 'lockstep')], arguments=['plant', 'controller'],
                        fork=False)     # a new interpreter: its exit is the subject
    try:
        def latest(suffix):
            values = [{v.key: v.value for v in status.values} for msg in diagnostics
                      for status in msg.status if status.name.endswith(suffix)]
            return values[-1] if values else {}
        probe.spin_until(lambda: int(latest(': simulation').get('answered_states', 0)) >= 200
                         or not graph.alive(), 180, '200 answered states')
        assert graph.alive(), graph.output()
        plant = latest(': simulation')
        assert plant['paused'] == 'False' and int(plant['rejected_commands']) == 0
        probe.spin_until(lambda: latest(': program controller').get('active_program')
                         or not graph.alive(), 60, "the controller's diagnostics")
        assert latest(': program controller')['active_program'] == 'lambda_circle'
        names = probe.node.get_node_names()
        assert {'plant', 'controller'} <= set(names), names
        graph.process.send_signal(number)
        code = graph.wait(60)
        output = graph.output()
        assert code == 0 and 'Traceback' not in output, f'exit {code}:\n{output}'
    finally:
        graph.stop()


@pytest.mark.ros
@pytest.mark.timeout(300)
@pytest.mark.parametrize('override, named', [
    ('plant:update_period:=-1.0', 'update_period'),
    ('controller:active_program:=nowhere', 'nowhere'),
], ids=['plant', 'controller'])
def test_a_bad_parameter_of_either_node_exits_2_with_one_line(domain_id, override, named):
    """One node's bad parameter ends the composed process as it ends that node alone.

    (A value of another type than the file's for the same node, ``plant:update_period:=fast``,
    is dropped by rcl's parser while it merges the rule into the file's entry for that node:
    the file's value stays, as for the plant run alone with the same arguments.)"""
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain_id))
    result = subprocess.run(
        [sys.executable, '-m', CONTAINER, 'plant', 'controller', '--ros-args',
         '--params-file', os.path.join(CONFIG, 'sim.yaml'), '-p', override],
        env=env, capture_output=True, text=True, timeout=180)
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert 'Traceback' not in output, output
    refusal = [line for line in output.splitlines() if 'refusing to start' in line]
    assert len(refusal) == 1 and named in refusal[0], output


ANCHORED = {
    # A merge key: rcl reads "<<" as a value before ros__parameters.
    'merge': ('common: &common\n  update_period: 0.002\n'
              'plant:\n  ros__parameters:\n    <<: *common\n    timing_mode: lockstep\n', 1),
    # An alias of a scalar: rcl says "Will not support aliasing".
    'alias': ('plant:\n  ros__parameters:\n    update_period: &period 0.002\n'
              'controller:\n  ros__parameters:\n    control_period: *period\n', 3),
}


@pytest.mark.ros
@pytest.mark.timeout(300)
@pytest.mark.parametrize('form', sorted(ANCHORED))
@pytest.mark.parametrize('command', [
    [CONTAINER, 'plant', 'controller'],
    ['flexible_manipulator.nodes.plant_node'],
    ['flexible_manipulator.nodes.bringup', '--local', '--duration', '1'],
], ids=['container', 'plant', 'bringup'])
def test_a_parameter_file_with_yaml_anchors_exits_2_with_one_line(domain_id, tmp_path, form,
                                                                  command):
    """YAML anchors and aliases are YAML, but not what rcl's parameter-file parser reads:
    it raised out of rclpy's argument parsing (a traceback, exit 1). Expected, as for any
    bad parameter (doc/nodes.md): exit 2 and one line naming the file, the line of the
    first anchor and the cause; nothing started (no node logs a line, no traceback)."""
    text, line = ANCHORED[form]
    path = tmp_path / f'{form}.yaml'
    path.write_text(text)
    ros = [] if command[0].endswith('bringup') else ['--ros-args']
    ros += ['--params-file', str(path)]
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain_id))
    result = subprocess.run([sys.executable, '-m', *command, *ros], env=env,
                            capture_output=True, text=True, timeout=180)
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    lines = output.strip().splitlines()
    assert len(lines) == 1, output
    assert f'{path}: line {line}: YAML anchors and aliases' in lines[0], output
