"""The controller node fed by a real arm's driver, over real DDS with real nodes.

A publisher here plays the driver: its joint states name the gripper's finger joints
(franka_ros2's ``panda_finger_joint1``, ``panda_finger_joint2``) beside the arm's, in an
order of its own; the controller runs the rigid two-link arm (config/models/
two_link_rigid.yaml) on its ``hold`` program. What must happen is read off the rules of
doc/nodes.md ("controller"):

* joints the model does not have are ignored (their values unchecked), the model's picked
  by name, and the ignored ones are said once in the log;
* a state without a joint of the model gets no command; it is counted as rejected on
  /diagnostics, said in a warning at most once per ``MISSING_JOINT_PERIOD``, and the
  watchdog acts as for any state that gets no command: with ``safe_action: gravity`` it
  holds the arm against gravity, never zero effort;
* each state is answered once, timed by its stamp, whatever the spacing of the stamps;
  the input delay of each tick is d = round((t_k - t_j)/T) - 1 periods (t_j: the stamp of
  the state whose answer state t_k reports applied), so stamps jittered by up to 20 % of
  the period read d = 0, and a state lost on the way d = 1; past ``delay_periods`` a tick
  is late, and an isolated late tick does not switch programs (``delay_patience``).

Expected efforts at rest: the closed-form gravity torque of the arm's two uniform bars
(`test_ros_controller.gravity_torque`), which the hold program commands at its start and
the watchdog (``safe_action: gravity``) at the last state.
"""

import math
import random
import re
import time

import numpy as np
import pytest

from conftest import CONTROLLER
from flexible_manipulator.nodes.controller_node import MISSING_JOINT_PERIOD
from test_ros_controller import controller_status, gravity_torque

pytestmark = [pytest.mark.ros, pytest.mark.timeout(300)]

PERIOD = 0.002          # s: control_period of config/sim.yaml
FINGERS = ('panda_finger_joint1', 'panda_finger_joint2')
DRIVER_NAMES = (FINGERS[0], 'elbow', 'shoulder', FINGERS[1])
REST = (0.4, -0.7)      # rad: shoulder, elbow
# state_timeout [s] beyond every wait of these tests (ANSWER): no watchdog command is ever
# taken for an answer.
STILL = 1000.0
ANSWER = 60.0
RIGID = [('model', 'two_link_rigid'), ('program_file', 'programs_two_link_rigid'),
         ('active_program', 'hold'), ('realization', 'ideal')]


class Driver:
    """The probe as an arm's driver: publishes joint states, collects the commands."""

    def __init__(self, probe):
        """Publish on /joint_states; subscribe to the controller's commands and diagnostics."""
        from diagnostic_msgs.msg import DiagnosticArray
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray
        self.probe = probe
        self.JointState = JointState
        self.pub = probe.publisher(JointState, '/joint_states', 50)
        self.commands = probe.subscribe(Float64MultiArray, '/effort_controller/commands', 5000)
        self.diagnostics = probe.subscribe(DiagnosticArray, '/diagnostics', 500)

    def wait_for_controller(self):
        """Wait until the controller's subscription and its command publisher match ours
        (each side discovers the other on its own: an answer sent before its publisher
        matched our subscription is lost)."""
        commands = next(sub for sub in self.probe.node.subscriptions
                        if sub.topic_name == '/effort_controller/commands')
        self.probe.spin_until(lambda: self.pub.get_subscription_count() > 0
                              and commands.get_publisher_count() > 0, 120, 'the controller')

    def state(self, t, q, v=(0.0, 0.0), applied=(0.0, 0.0), names=DRIVER_NAMES):
        """A joint state stamped t [s]: arm joints at q [rad], v [rad/s], ``applied`` [N m]
        (shoulder, elbow); the fingers at 0.04 m, one of them with a NaN velocity (a value
        of a joint the model does not have: unchecked)."""
        arm = {'shoulder': 0, 'elbow': 1}
        position = [q[arm[n]] if n in arm else 0.04 for n in names]
        velocity = [v[arm[n]] if n in arm else (math.nan if n == FINGERS[1] else 0.0)
                    for n in names]
        effort = [applied[arm[n]] if n in arm else 0.0 for n in names]
        msg = self.JointState(name=list(names), position=position, velocity=velocity,
                              effort=effort)
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(round(t * 1e9), 10 ** 9)
        return msg

    def answered(self, msg, what='the answer'):
        """Publish ``msg`` and wait for one more command; return it."""
        count = len(self.commands)
        self.pub.publish(msg)
        self.probe.spin_until(lambda: len(self.commands) > count, ANSWER, what)
        return self.commands[count]

    def status(self):
        """The last program-controller status values, {key: value} ({} before any)."""
        status = controller_status(self.diagnostics)
        return {} if status is None else {kv.key: kv.value for kv in status.values}

    def statuses(self):
        """Every program-controller status received, as {key: value}."""
        return [{kv.key: kv.value for kv in status.values} for msg in self.diagnostics
                for status in msg.status if status.name.endswith('program controller')]

    def wait_for_counts(self, ticks, rejected):
        """Wait until /diagnostics accounts ``ticks`` answered and ``rejected`` states."""
        self.probe.spin_until(
            lambda: self.status().get('run_ticks') == str(ticks)
            and self.status().get('rejected_states') == str(rejected), 60,
            f'/diagnostics counting {ticks} ticks and {rejected} rejected states')


def test_extra_joints_of_a_driver_are_ignored_and_its_arm_is_held(probe, start_node):
    """States naming the fingers beside the arm (one finger's velocity NaN) are answered
    one command each: the hold program at rest commands the gravity torque at REST (closed
    form) to 1e-6 N m; none is rejected; the log names the ignored joints once."""
    driver = Driver(probe)
    controller = start_node(CONTROLLER, parameters=[*RIGID, ('state_timeout', STILL)])
    driver.wait_for_controller()
    count = 50
    for k in range(count):
        command = driver.answered(driver.state(k * PERIOD, REST), f'the answer to state {k}')
        np.testing.assert_allclose(command.data, gravity_torque(REST), atol=1e-6)
    driver.wait_for_counts(count, 0)
    log = controller.output()
    said = re.findall(r'joint states name 4 joints: using shoulder, elbow, ignoring '
                      r'panda_finger_joint1, panda_finger_joint2', log)
    assert len(said) == 1, log
    assert 'rejected' not in log and 'Traceback' not in log


def test_a_state_without_a_model_joint_gets_no_command_and_the_watchdog_holds(probe,
                                                                              start_node):
    """After valid states (with the fingers), the driver drops the elbow from its states
    (the fingers stay). Those states get no command: /diagnostics counts each as rejected
    and no tick; the warning names the missing joint, at most once per
    MISSING_JOINT_PERIOD of the wall time the test measured (plus the first); the watchdog
    (state_timeout 0.5 s, safe_action: gravity) commands the gravity torque at the last
    valid state, never zero, labelled ``watchdog`` (the answers carry no label). Valid
    states again are answered again."""
    driver = Driver(probe)
    controller = start_node(CONTROLLER, parameters=[*RIGID, ('safe_action', 'gravity'),
                                                    ('state_timeout', 0.5)])
    driver.wait_for_controller()
    valid = 20
    for k in range(valid):
        driver.answered(driver.state(k * PERIOD, REST))
    answers = len(driver.commands)
    started = time.monotonic()
    missing, k = 0, valid
    no_elbow = tuple(n for n in DRIVER_NAMES if n != 'elbow')
    # States without the elbow until the watchdog has said it holds, and a while after.
    while 'commanding gravity effort' not in controller.output() or missing < 300:
        driver.pub.publish(driver.state(k * PERIOD, REST, names=no_elbow))
        missing, k = missing + 1, k + 1
        probe.spin_for(0.005)
    driver.wait_for_counts(valid, missing)
    elapsed = time.monotonic() - started
    probe.spin_until(lambda: len(driver.commands) > answers, 30, 'the watchdog commands')
    for command in driver.commands[answers:]:
        np.testing.assert_allclose(command.data, gravity_torque(REST), atol=1e-6)
        # Labelled as no answer to a state (a lock-step plant advances nothing on it).
        assert [dim.label for dim in command.layout.dim] == ['watchdog']
    assert all(not command.layout.dim for command in driver.commands[:answers])
    log = controller.output()
    warnings = re.findall(r"rejected joint state: no joint 'elbow' of the model in it \(it "
                          r'names panda_finger_joint1, shoulder, panda_finger_joint2; the model '
                          r'has shoulder, elbow\): no command for it \((\d+) such states so '
                          r'far\)', log)
    assert 1 <= len(warnings) <= 1 + elapsed / MISSING_JOINT_PERIOD, (elapsed, warnings)
    assert warnings[0] == '1'
    command = driver.answered(driver.state(k * PERIOD, REST), 'an answer once valid again')
    np.testing.assert_allclose(command.data, gravity_torque(REST), atol=1e-6)
    assert not command.layout.dim
    assert controller.alive() and 'Traceback' not in log


def test_jittered_stamps_and_lost_states_are_answered_by_their_stamps(probe, start_node):
    """The driver moves the arm (q = REST + 0.1 sin(2 pi t) rad, as the stamps say) and
    stamps state k (k + 1) PERIOD + u_k, u_k uniform within +-20 % of the period (seeded); it
    loses 5 % of its states on the way (never two in a row) and sends every 40th state a
    second time after its answer (a driver whose command was lost). It reports, as applied
    effort, the first answer to the last state the controller received, by joint name.
    Expected (module doc, `delay_periods` 0):

    * each state received is answered: one command per new state, one more per copy;
      /diagnostics counts each new state once (run_ticks), none rejected, no copy skipped
      (each was sent after the answer), no fault;
    * every state but the first reports a command of the controller (measured): d = 0
      after a received state, d = 1 after a lost one, so the late ticks are the states
      after a loss, and the largest measured delay 1."""
    driver = Driver(probe)
    controller = start_node(CONTROLLER, parameters=[*RIGID, ('state_timeout', STILL),
                                                    ('delay_periods', 0)])
    driver.wait_for_controller()
    rng = random.Random(7)
    applied = (0.0, 0.0)
    received = after_loss = copies = 0
    lost_before = False
    for k in range(400):
        t = (k + 1) * PERIOD + rng.uniform(-0.2, 0.2) * PERIOD
        q = [x + 0.1 * math.sin(2 * math.pi * t) for x in REST]
        v = [0.2 * math.pi * math.cos(2 * math.pi * t)] * 2
        if k > 0 and not lost_before and rng.random() < 0.05:
            lost_before = True              # lost on the way: the arm keeps `applied`
            continue
        msg = driver.state(t, q, v, applied)
        command = driver.answered(msg, f'the answer to state {k}')
        applied = tuple(command.data)
        received += 1
        after_loss += lost_before and received > 1
        lost_before = False
        if k % 40 == 39:
            driver.answered(msg, f'the answer to the copy of state {k}')
            copies += 1
    assert after_loss >= 5                  # the seeded draws lost states
    driver.wait_for_counts(received, 0)
    assert len(driver.commands) == received + copies
    statuses = driver.statuses()
    assert all(s['fault'] == '' and s['degraded'] == '' for s in statuses), statuses
    assert statuses[-1]['skipped_copies'] == '0' and statuses[-1]['active_program'] == 'hold'
    measured = [s for s in statuses if s['input_delay_periods'] != 'not measured']
    late = sum(int(s['late_ticks']) for s in statuses)
    assert late == after_loss, (late, after_loss)
    assert max(int(s['input_delay_periods']) for s in measured) == 1
    log = controller.output()
    assert controller.alive() and 'Traceback' not in log and 'rejected' not in log
