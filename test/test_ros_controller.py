"""The controller node over real DDS with real nodes: delay and loss, watchdog, services.

Each node runs in its own process (shared-memory transport, a private domain per test). A
relay written here sits between the plant and the controller and delays and drops joint
states as a network would. Expected values: the closed-form gravity torque of the rigid
arm's two uniform bars (holding effort, and the hold program's effort at rest); the
configured effort limits (saturation); the program file's names and references; and, for
the lossy loop, the same delayed loop simulated in this file without ROS.
"""

import gc
import math
import os
import random
import time

import numpy as np
import pytest
import yaml

from conftest import CONFIG, CONTROLLER, NodeProcess, PLANT

pytestmark = [pytest.mark.ros, pytest.mark.timeout(120)]


@pytest.fixture
def start_remapped(domain_id, tmp_path):
    """Start remapped nodes on the test's domain; all are stopped at the end of the test."""
    started = []

    def start(module, params_file=os.path.join(CONFIG, 'sim.yaml'), parameters=(), remaps=()):
        node = NodeProcess(module, domain_id, tmp_path / f'remapped-{len(started)}.log',
                           params_file, parameters, remaps)
        started.append(node)
        return node

    yield start
    for node in started:
        node.stop()


def seconds(stamp):
    """builtin_interfaces/Time in seconds."""
    return stamp.sec + 1e-9 * stamp.nanosec


class Relay:
    """Forwards joint (and modal) states ``delay`` samples late, dropping a fraction.

    A dropped joint state takes its modal state (same stamp) with it. ``paused`` stops all
    forwarding (the watchdog's case). Seeded, so a run is reproducible.
    """

    def __init__(self, probe, delay, loss, seed=5):
        """Subscribe to /joint_states and /modal_states; publish under /relay."""
        from sensor_msgs.msg import JointState
        self.delay, self.loss = delay, loss
        self.random = random.Random(seed)
        self.queue = []
        self.modal = {}
        self.forwarded = self.dropped = 0
        self.latest = 0.0               # stamp of the newest state from the plant
        self.commanded = False          # the plant has applied a nonzero effort
        self.paused = False
        self.joint_pub = probe.publisher(JointState, '/relay/joint_states', 50)
        self.modal_pub = probe.publisher(JointState, '/relay/modal_states', 50)
        probe.node.create_subscription(JointState, '/modal_states', self.on_modal, 50)
        probe.node.create_subscription(JointState, '/joint_states', self.on_state, 50)

    def on_modal(self, msg):
        """Keep the modal state until its joint state goes out."""
        self.modal[(msg.header.stamp.sec, msg.header.stamp.nanosec)] = msg

    def on_state(self, msg):
        """Queue the state; release the one ``delay`` samples older (or drop it).

        A state older than the last one (the plant was reset) flushes the queue.
        """
        self.latest = seconds(msg.header.stamp)
        self.commanded = self.commanded or any(x != 0.0 for x in msg.effort)
        if self.queue and self.latest < seconds(self.queue[-1].header.stamp):
            self.queue.clear()
            self.modal = {key: value for key, value in self.modal.items()
                          if seconds(value.header.stamp) <= self.latest}
        self.queue.append(msg)
        if len(self.queue) <= self.delay:
            return
        out = self.queue.pop(0)
        modal = self.modal.pop((out.header.stamp.sec, out.header.stamp.nanosec), None)
        if self.paused:
            return
        if self.random.random() < self.loss:
            self.dropped += 1
            return
        if modal is not None:
            self.modal_pub.publish(modal)
        self.joint_pub.publish(out)
        self.forwarded += 1


def controller_status(messages):
    """The last program-controller status in a list of DiagnosticArray messages."""
    for msg in reversed(messages):
        for status in msg.status:
            if status.name.endswith('program controller'):
                return status
    return None


def level(status):
    """Numeric level of a DiagnosticStatus (a byte in rclpy)."""
    value = status.level
    return value[0] if isinstance(value, (bytes, bytearray)) else int(value)


PERIOD = 0.004   # s: plant update and control period of the lossy-loop test


def demo_program_file(tmp_path):
    """The demo's lambda-point circle alone, in a program file under ``tmp_path``."""
    programs = yaml.safe_load(open(os.path.join(CONFIG, 'programs_two_link_flexible.yaml')))
    path = tmp_path / 'circle.yaml'
    path.write_text(yaml.safe_dump(
        {'programs': {'lambda_circle': programs['programs']['lambda_circle']}}))
    return str(path)


def delayed_loop_reference(program_file, delay, loss, duration=2.0, seed=5):
    """Largest lambda-point residual of the demo loop simulated here without ROS, states
    ``delay`` periods late and a fraction ``loss`` of them lost (plant: the package's
    Simulation of the flexible arm from config/sim.yaml's initial state; controller: the
    node's core with config/sim.yaml's settings at PERIOD; a lost state leaves the previous
    effort applied)."""
    from flexible_manipulator.control.program_controller import (ControllerSettings,
                                                                 controller_from_files)
    from flexible_manipulator.mechanics.simulation import Simulation
    from flexible_manipulator.model_config import load_model
    params = yaml.safe_load(open(os.path.join(CONFIG, 'sim.yaml')))
    plant, control = (params[k]['ros__parameters'] for k in ('plant', 'controller'))
    model_file = os.path.join(CONFIG, 'models', 'two_link_flexible.yaml')
    controller = controller_from_files(model_file, program_file, ControllerSettings(
        period=PERIOD, control_modes=control['control_modes'],
        analysis_positions=control['analysis_positions']))
    controller.enable()
    model = load_model(model_file)
    q0, v0 = np.zeros(model.nv), np.zeros(model.nv)
    q0[:2], v0[:2] = plant['initial_positions'], plant['initial_velocities']
    sim = Simulation(model, 5e-4, 'rk4', q0=q0, v0=v0)
    rng, history, effort, largest = random.Random(seed), [], np.zeros(2), 0.0
    for _ in range(int(round(duration / PERIOD))):
        history.append((sim.time, sim.q.copy(), sim.v.copy()))
        if len(history) > delay and rng.random() >= loss:
            t, q, v = history[-1 - delay]
            effort = controller.update(t, q[:2], v[:2], q[2:], v[2:]).copy()
            largest = max(largest, float(np.max(np.abs(controller.status.residual))))
        sim.advance(effort, PERIOD)
    return largest


def test_lossy_delayed_loop_stays_on_the_program_and_the_watchdog_takes_over(
        probe, start_node, start_remapped, tmp_path):
    """Plant (real time, the flexible demo arm, 4 ms period to leave CPU for three Python
    processes) -> relay (one sample late, 10 % lost, modal states with their joint states)
    -> controller (servo, the demo's lambda-point circle, alpha = 5 /s, modal states
    measured, its sampled-loop check allowing 3 periods of delay).

    The effort acts some periods after its state (relay, transport, computation, the
    plant's next tick): measured here as the plant time between a state and its answer.
    Expected: the same loop simulated here without ROS with that delay (90th percentile,
    plus the tick) and 10 % loss (`delayed_loop_reference`: about 1 mm per period of delay
    at 4 ms, 0.5 mm without: the servo law compensates modal forces that have moved on).
    Over DDS, for 2 simulated seconds from the program's start (the plant is reset once
    the loop is connected), the residual must stay within 3 times that, without a fault.
    Then the relay stops: after the 0.5 s state timeout the controller commands zero effort
    and reports the stale states on /diagnostics; when the relay resumes it tracks again."""
    from diagnostic_msgs.msg import DiagnosticArray
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from std_srvs.srv import Trigger
    program_file = demo_program_file(tmp_path)
    relay = Relay(probe, delay=1, loss=0.1)
    residuals, lags = [], []

    def on_residuals(msg):
        # How old the answered state is when its answer goes out (plant time).
        residuals.append(msg)
        lags.append(relay.latest - seconds(msg.header.stamp))
    probe.node.create_subscription(JointState, '/controller/residuals', on_residuals, 2000)
    commands = probe.subscribe(Float64MultiArray, '/effort_controller/commands', 2000)
    diagnostics = probe.subscribe(DiagnosticArray, '/diagnostics', 50)
    controller = start_remapped(
        CONTROLLER, parameters=[('program_file', program_file), ('control_period', PERIOD),
                                ('delay_periods', 3), ('elastic_state', 'measured')],
        remaps=[('joint_states', '/relay/joint_states'),
                ('modal_states', '/relay/modal_states')])
    probe.spin_until(lambda: relay.joint_pub.get_subscription_count() > 0, 30,
                     'the controller')
    start_node(PLANT, parameters=[('update_period', PERIOD)])
    probe.spin_until(lambda: relay.commanded, 40, 'the first command applied by the plant')
    # The plant ran open loop until everyone had found it: restart it on the program, with
    # the relay held meanwhile so that no command of the old run reaches the new one.
    relay.paused = True
    probe.spin_for(0.15)
    assert probe.call(Trigger, '/plant/reset', Trigger.Request()).success
    relay.paused = False
    mark = len(residuals)
    # The relay runs in this process: a full garbage collection of the suite's objects
    # would hold every state for tens of ms (a 96 ms stall was seen), a delay the
    # experiment does not intend. Freeze the heap and pause the collector meanwhile.
    gc.freeze()
    gc.disable()
    try:
        probe.spin_until(lambda: any(seconds(r.header.stamp) < 0.01 for r in residuals[mark:]), 10,
                         'the first answer after the reset')
        first = next(i for i in range(mark, len(residuals))
                     if seconds(residuals[i].header.stamp) < 0.01)
        probe.spin_until(lambda: seconds(residuals[-1].header.stamp) > 2.0, 60,
                         '2 s of simulated time through the relay')
    finally:
        gc.enable()
        gc.unfreeze()
    assert residuals[-1].name == ['forearm_lambda_x', 'forearm_lambda_y']
    run = [r for r in residuals[first:] if seconds(r.header.stamp) <= 2.0]
    phi = np.max(np.abs([r.position for r in run]))
    delay = int(round(np.percentile(lags[first:], 90) / PERIOD)) + 1
    assert relay.dropped > 0 and relay.forwarded > 5 * relay.dropped
    assert 'exceeds its velocity limit' not in controller.output()
    # States stop: the watchdog commands zero effort and says so.
    warnings = controller.output().count('commanding zero effort')
    relay.paused = True
    stopped = time.monotonic()
    probe.spin_until(lambda: controller.output().count('commanding zero effort') > warnings, 5,
                     'the watchdog warning')
    assert time.monotonic() - stopped > 0.4
    count = len(commands)
    probe.spin_until(lambda: len(commands) > count, 5, 'a watchdog command')
    assert list(commands[-1].data) == [0.0, 0.0]
    probe.spin_until(lambda: controller_status(diagnostics) is not None
                     and 'stale' in controller_status(diagnostics).message, 5,
                     'stale states on /diagnostics')
    assert level(controller_status(diagnostics)) == 1
    # States come back: tracking resumes (nonzero efforts, new residuals).
    relay.paused = False
    count = len(residuals)
    probe.spin_until(lambda: len(residuals) > count + 10, 10, 'tracking after the relay resumes')
    assert any(x != 0.0 for x in commands[-1].data)
    # The expected residual of the delayed loop (computed last: the probe does not spin).
    expected = delayed_loop_reference(program_file, delay, 0.1)
    assert expected < 2e-2, f'{delay} periods of delay: beyond a moderate delay'
    worst = run[int(np.argmax([np.max(np.abs(r.position)) for r in run]))]
    assert phi < 3 * expected, (
        f'largest residual {phi} m at t = {seconds(worst.header.stamp):.3f} s, {delay} '
        f'periods late (90th percentile; largest lag {max(lags[first:]) / PERIOD:.1f}): '
        f'{expected} m expected')


def joint_state(position, t):
    """A JointState of the rigid arm at rest."""
    from sensor_msgs.msg import JointState
    msg = JointState(name=['shoulder', 'elbow'], position=list(position), velocity=[0.0, 0.0])
    msg.header.stamp.sec = int(t)
    msg.header.stamp.nanosec = int(round((t - int(t)) * 1e9))
    return msg


def gravity_torque(q):
    """Gravity torque of config/models/two_link_rigid.yaml's bars (gravity along base -y).

    tau_2 = m_2 g c_2 cos(q1 + q2), tau_1 = g (m_1 c_1 cos q1 + m_2 (l_1 cos q1 + c_2 cos(q1 +
    q2))) with m = 1.2, 0.8 kg, c = 0.25, 0.2 m, l_1 = 0.5 m.
    """
    g, q12 = 9.80665, q[0] + q[1]
    upper = 1.2 * 0.25 * math.cos(q[0])
    fore = 0.8 * (0.5 * math.cos(q[0]) + 0.2 * math.cos(q12))
    return np.array([g * (upper + fore), g * 0.8 * 0.2 * math.cos(q12)])


def set_program(probe, name):
    """Set /controller active_program through the parameter service; return the result."""
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters
    request = SetParameters.Request(parameters=[Parameter(
        name='active_program', value=ParameterValue(type=ParameterType.PARAMETER_STRING,
                                                    string_value=name))])
    return probe.call(SetParameters, '/controller/set_parameters', request).results[0]


def test_services_switching_saturation_and_holding_watchdog(probe, start_node):
    """The probe plays a rigid arm at rest at q = (0.4, -0.7) rad (100 states/s).

    * program 'hold': the effort is the gravity torque (closed form) to 1e-6 N m;
    * switching to 'joint_sine' (far from q, alpha = 25 /s) saturates at the configured
      limits [10, 3] N m: commands at the limits, WARN on /diagnostics naming the clipped
      ticks and a constraint error; the reference names the joints and starts at the
      program's offset (-1.2, 0.6) rad (the program file); an unknown name is refused
      with the list of programs;
    * ~/enable false: zero effort; true: tracking again;
    * the states stop: the watchdog (watchdog_action: hold) commands the gravity torque
      at the last state."""
    from diagnostic_msgs.msg import DiagnosticArray
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from std_srvs.srv import SetBool
    commands = probe.subscribe(Float64MultiArray, '/effort_controller/commands', 500)
    references = probe.subscribe(JointState, '/controller/reference', 500)
    diagnostics = probe.subscribe(DiagnosticArray, '/diagnostics', 50)
    pub = probe.publisher(JointState, '/joint_states')
    controller = start_node(CONTROLLER, parameters=[
        ('model', 'two_link_rigid'), ('program_file', 'programs_two_link_rigid'),
        ('active_program', 'hold'), ('realization', 'ideal'), ('watchdog_action', 'hold'),
        ('effort_limits', '[10.0, 3.0]'), ('state_timeout', 0.5)])
    probe.spin_until(lambda: pub.get_subscription_count() > 0, 30, 'the controller')
    q = np.array([0.4, -0.7])
    clock = [0.0]

    def publish_for(duration):
        end = time.monotonic() + duration
        while time.monotonic() < end:
            clock[0] += 0.01
            pub.publish(joint_state(q, clock[0]))
            probe.spin_for(0.01)
    publish_for(0.5)
    np.testing.assert_allclose(commands[-1].data, gravity_torque(q), atol=1e-6)
    result = set_program(probe, 'circle')
    assert not result.successful and 'joint_sine, tip_circle, hold' in result.reason
    assert set_program(probe, 'joint_sine').successful
    count = len(references)
    publish_for(1.2)
    assert references[count].name == ['shoulder', 'elbow']
    np.testing.assert_allclose(references[count].position, [-1.2, 0.6], atol=1e-12)
    np.testing.assert_allclose(np.abs(commands[-1].data), [10.0, 3.0])
    probe.spin_until(lambda: controller_status(diagnostics) is not None
                     and 'ticks clipped' in controller_status(diagnostics).message, 5,
                     'saturation on /diagnostics')
    status = controller_status(diagnostics)
    values = {kv.key: kv.value for kv in status.values}
    assert level(status) == 1 and values['active_program'] == 'joint_sine'
    assert int(values['clipped_ticks']) > 0 and float(values['constraint_error_max']) > 0.0
    assert values['clipped_inputs'] == 'shoulder, elbow'
    response = probe.call(SetBool, '/controller/enable', SetBool.Request(data=False))
    assert response.success and 'zero effort' in response.message
    publish_for(0.1)
    assert list(commands[-1].data) == [0.0, 0.0]
    assert probe.call(SetBool, '/controller/enable', SetBool.Request(data=True)).success
    publish_for(0.1)
    assert any(x != 0.0 for x in commands[-1].data)
    probe.spin_until(lambda: 'commanding holding effort' in controller.output(), 5,
                     'the watchdog warning')
    probe.spin_for(0.3)
    np.testing.assert_allclose(commands[-1].data, gravity_torque(q), atol=1e-6)


def test_node_refuses_programs_it_cannot_realize(start_node, tmp_path):
    """A forearm-tip program (non_minimum_phase: refuse) and gains outside the ZOH bound
    (alpha = 600 /s at 2 ms: need T < 1/alpha = 1.667 ms) each make the node exit with
    code 2 and say why, naming the program, the lambda limit or the bound."""
    programs = yaml.safe_load(open(os.path.join(CONFIG, 'programs_two_link_flexible.yaml')))
    tip = programs['programs']['tip_circle']
    tip['non_minimum_phase'] = 'refuse'
    tip_file = tmp_path / 'tip.yaml'
    tip_file.write_text(yaml.safe_dump({'programs': {'tip': tip}}))
    fast = programs['programs']['hold']
    fast['gains'] = {'alpha': 600.0}
    fast_file = tmp_path / 'fast.yaml'
    fast_file.write_text(yaml.safe_dump({'programs': {'fast': fast}}))
    nodes = [start_node(CONTROLLER, parameters=[('program_file', str(path)),
                                                ('active_program', name)], name=name)
             for name, path in (('tip', tip_file), ('fast', fast_file))]
    for node in nodes:
        assert node.wait(60) == 2, node.output()
    tip_log, fast_log = nodes[0].output(), nodes[1].output()
    assert 'refusing to start' in tip_log and 'tip: refused' in tip_log
    assert 'NON-MINIMUM PHASE' in tip_log and 'lambda_point row' in tip_log
    assert 'fast.gains' in fast_log and '= 0.00166667 s' in fast_log
