"""The servoconstraint closed loop over real DDS: free servo plant + controller in servo mode.

Each node runs in its own process (config/servo_closed_loop.yaml: the plant in lockstep, the
controller with gamma = 100 /s, no delay). The plant is a ``free`` model (no constraint,
one input along b) and the controller realizes the model's servoconstraint along b; the
loop must reproduce the ``servo`` model of the same body (Kozlov's reduced servoconstraint
dynamics). Where the expected values come from:

* The sampled loop. In lockstep the controller answers the state at t_n with u_n, which
  the plant holds over [t_n, t_n + T] (zero-order hold, no delay): the ROS-free loop
  `closed_loop` of test_servo_closed_loop with the same free model, period and integration
  step (rk4, h = `STEP`). Messages carry float64 and the odometry round trip changes the
  state by round-off only (test_servo_odometry), so the velocities and the applied inputs
  (the plant's servo_state ``lambda``) agree to round-off, 1e-12 of their size (the same
  arithmetic in both: measured bit-identical).
* The servo model, integrated by `Simulation` from the same initial state (the free and the
  servo model files start from the same state, checked here), with the O(T) bounds derived
  in test_servo_closed_loop (`level`, `period_means`): |w_n - w(t_n)| within 3 scale(T),
  scale = |I^-1 b| max|lambda'| T/(2 gamma), and above 0.3 scale (the O(T) effect is
  there, the loop is not the servo model by accident); |psi_n| <= 1.1 level(T), level =
  |mu| max|lambda'| T/(2 gamma); |u_n - <lambda>_n| <= max|lambda'| T; the poses within
  what the velocity errors allow over the run (test_servo_closed_loop).
* ~/residuals: psi = <a, w> of the state it answers, one row named after the constraint.

The nodes run in a namespace of this test session (``NAMESPACE``), with the parameter file
rewritten for it: another test session on the same machine that drew the same
ROS_DOMAIN_ID (an arm controller answering every state) cannot reach this loop.
"""

import math
import os

import numpy as np
import pytest
import yaml

from conftest import CONFIG, CONTROLLER, NodeProcess, SERVO_CONTROLLER
from servo_sampling import output, run
from test_servo_closed_loop import closed_loop, config, level, period_means, RATE, STEP

SERVO = 'flexible_manipulator.nodes.servo_node'
PARAMETERS = os.path.join(CONFIG, 'servo_closed_loop.yaml')
PERIOD = 2e-3          # s: plant update period and control period T
DURATION = 1.5         # s of simulated time per run
# free model (plant and controller), servo model of the same body, residual row name
CASES = {'suslov_top': ('suslov_free_actuated', 'suslov_linear_integral', 'a_omega'),
         'servo_sleigh': ('sleigh_free_actuated', 'sleigh_servo', 'v_lat')}

NAMESPACE = f'servo_loop_{os.getpid()}'

pytestmark = [pytest.mark.ros, pytest.mark.timeout(120)]


@pytest.fixture
def start(domain_id, tmp_path):
    """Start a node of config/servo_closed_loop.yaml in ``NAMESPACE``; stopped at the end.

    ``start(module, name, **parameters)``: ``name`` is the node's section of the file.
    """
    with open(PARAMETERS) as stream:
        sections = yaml.safe_load(stream)
    params_file = tmp_path / 'servo_closed_loop.yaml'
    params_file.write_text(yaml.safe_dump({f'/{NAMESPACE}/{name}': section
                                           for name, section in sections.items()}))
    started = []

    def run(module, name, **parameters):
        node = NodeProcess(module, domain_id, tmp_path / f'{name}-{len(started)}.log',
                           str(params_file), list(parameters.items()),
                           remaps=[('__ns', f'/{NAMESPACE}')])
        started.append(node)
        return node

    yield run
    for node in started:
        node.stop()


def topic(name):
    """The loop's topic ``name`` in the test's namespace."""
    return f'/{NAMESPACE}/{name}'


def seconds(header):
    """Stamp of a header [s]."""
    return header.stamp.sec + 1e-9 * header.stamp.nanosec


def decode(kind, msg):
    """(q, v) from odometry, written out from servo_node's layout (independently of the
    package's conversion): the top's attitude quaternion and body rate; the sleigh's
    (x, y, yaw) and (omega, u, v_lat) on the horizontal plane."""
    p, o = msg.pose.pose.position, msg.pose.pose.orientation
    w, v = msg.twist.twist.angular, msg.twist.twist.linear
    if kind == 'rigid_body':
        return np.array([o.w, o.x, o.y, o.z]), np.array([w.x, w.y, w.z])
    return (np.array([p.x, p.y, 2.0 * math.atan2(o.z, o.w)]), np.array([w.z, v.x, v.y]))


def one_per_stamp(messages):
    """The first message of each stamp (a lockstep plant re-sends an unanswered state)."""
    seen, out = set(), []
    for msg in messages:
        key = (msg.header.stamp.sec, msg.header.stamp.nanosec)
        if key not in seen:
            seen.add(key)
            out.append(msg)
    return out


def reference(servo, duration):
    """The servo model on the h = STEP grid: the dictionary test_servo_closed_loop's
    `level` and `period_means` read (lambda and its central-difference rate)."""
    times = np.arange(round(duration / STEP) + 1) * STEP
    qs, vs, outs = run(servo, servo.initial_q, servo.initial_v, times, step=STEP)
    lam = output(servo, outs, 'lambda')
    return dict(model=servo, q=qs, v=vs, lam=lam, lam_rate=np.gradient(lam, STEP))


@pytest.mark.slow
@pytest.mark.parametrize('case', CASES)
def test_dds_loop_reproduces_the_servo_model(case, probe, start):
    """Lockstep over DDS: the sampled loop of test_servo_closed_loop to round-off, and the
    servo model within its O(T) bounds (module doc)."""
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import JointState
    from std_srvs.srv import SetBool
    free_name, servo_name, row = CASES[case]
    plant, servo = config(free_name), config(servo_name)
    np.testing.assert_array_equal(plant.initial_q, servo.initial_q)
    np.testing.assert_array_equal(plant.initial_v, servo.initial_v)
    odom = probe.subscribe(Odometry, topic('odom'), 5000)
    states = probe.subscribe(JointState, topic('servo_state'), 5000)
    residuals = probe.subscribe(JointState, topic('controller/residuals'), 5000)
    # The lockstep plant re-sends an unanswered state every lockstep_resend_period, and a
    # state re-sent while its first answer is only slow (the controller loading its
    # kernels on a loaded machine) is answered twice: the plant then advances twice, and
    # the loop is no longer the sampled loop. 5 s between re-sends (instead of the file's
    # 0.5 s) leaves the exact comparison to answers slower than that.
    # The plant starts paused and the controller beside it (their start-ups and discovery
    # overlap): the plant's first state can leave before either has matched it, and its
    # re-sends reach both. Once the probe hears the state, it hears every later state too.
    # The controller answers at once, and under load the probe's discovery of the
    # controller once took the whole run (no residual heard): the loop runs once the probe
    # has heard a residual of the paused state.
    start(SERVO, 'servo_plant', model=free_name, integration_step=STEP, update_period=PERIOD,
          lockstep_resend_period=5.0, start_paused=True)
    # state_timeout above the re-send period: the watchdog's zero effort, sent while the
    # paused state is stale, would answer the state re-sent on resuming.
    controller = start(SERVO_CONTROLLER, 'controller', model=free_name,
                       control_period=PERIOD, servo_gain=RATE, delay_periods=0,
                       state_timeout=30.0)
    probe.spin_until(lambda: odom, 30, 'the initial state')
    probe.spin_until(lambda: residuals, 60, "the controller's residual of the paused state")
    assert probe.call(SetBool, topic('servo_plant/pause'), SetBool.Request(data=False)).success
    count = round(DURATION / PERIOD)
    probe.spin_until(lambda: odom and seconds(odom[-1].header) >= DURATION - 1e-9, 60,
                     f'{DURATION} s of simulated time')
    probe.spin_until(lambda: len(one_per_stamp(states)) > count, 5, 'the last servo state')
    assert controller.alive()
    odom, states = one_per_stamp(odom)[:count + 1], one_per_stamp(states)[:count + 1]
    times = np.array([seconds(msg.header) for msg in odom])
    np.testing.assert_allclose(times, np.arange(count + 1) * PERIOD, rtol=0, atol=1e-9)
    assert [seconds(msg.header) for msg in states] == list(times)
    pairs = [decode(plant.kind, msg) for msg in odom]
    qs, vs = np.array([q for q, _ in pairs]), np.array([v for _, v in pairs])
    # The input applied over period n is reported with the state at its end.
    us = np.array([dict(zip(msg.name, msg.position))['lambda'] for msg in states[1:]])

    # 1. The ROS-free sampled loop, same model, period and step.
    loop_q, loop_v, loop_u = closed_loop(plant, plant.initial_q, plant.initial_v, PERIOD,
                                         DURATION)
    np.testing.assert_allclose(vs, loop_v, rtol=0, atol=1e-12 * np.abs(loop_v).max())
    np.testing.assert_allclose(us, loop_u, rtol=0, atol=1e-12 * np.abs(loop_u).max())

    # 2. The servo model, within the O(T) bounds of test_servo_closed_loop.
    ref = reference(servo, DURATION)
    every = round(PERIOD / STEP)
    ref_q, ref_v = ref['q'][::every], ref['v'][::every]
    rate = np.abs(ref['lam_rate']).max()
    reach = np.linalg.norm(np.linalg.solve(servo.inertia_matrix, servo.b))
    scale = reach * rate * PERIOD / (2.0 * RATE)
    error = np.abs(vs - ref_v).max()
    assert 0.3 * scale < error < 3.0 * scale, error / scale
    psi = vs @ servo.a
    assert np.abs(psi).max() <= 1.1 * level(ref, PERIOD)
    assert np.abs(us - period_means(ref, PERIOD, count)).max() <= rate * PERIOD
    dw = np.linalg.norm(vs - ref_v, axis=1).max() * 1.1
    if plant.kind == 'rigid_body':
        signs = np.sign(np.sum(qs * ref_q, axis=1))[:, None]     # q and -q: one attitude
        assert np.linalg.norm(signs * qs - ref_q, axis=1).max() <= 0.5 * DURATION * dw
    else:
        speed = np.linalg.norm(ref['v'][:, 1:], axis=1).max()
        yaw = np.abs(np.remainder(qs[:, 2] - ref_q[:, 2] + math.pi, 2 * math.pi) - math.pi)
        assert yaw.max() <= DURATION * dw
        assert np.abs(qs[:, :2] - ref_q[:, :2]).max() <= (DURATION * dw
                                                          + speed * DURATION ** 2 / 2 * dw)

    # 3. ~/residuals: psi of the state each answers, matched by stamp. The loop started once
    # the probe heard one; a keep-last writer may still drop some while the probe's process
    # is slow, so their content is the verdict, with states of the running loop among them.
    psi_at = {round(t / PERIOD): p for t, p in zip(times, psi)}
    answered = [msg for msg in residuals if seconds(msg.header) <= DURATION - PERIOD / 2]
    assert max(round(seconds(msg.header) / PERIOD) for msg in answered) > 0
    for msg in answered:
        assert list(msg.name) == [row] and len(msg.position) == 1
        n = round(seconds(msg.header) / PERIOD)
        assert msg.position[0] == pytest.approx(psi_at[n], rel=1e-12, abs=1e-15)


def test_bad_odometry_gets_no_command_and_stale_odometry_gets_zero(probe, start):
    """The controller alone on the free sleigh: NaN, a non-unit quaternion, another body
    frame and a sleigh off its plane are rejected with the reason and get no command; a
    valid state gets u = (<M^-1 a, h> - gamma psi)/<M^-1 a, b> (test_servo_controller's
    formula, written out below for this state); once odometry stops the watchdog commands
    zero; the node stays up."""
    from nav_msgs.msg import Odometry
    from std_msgs.msg import Float64MultiArray
    commands = probe.subscribe(Float64MultiArray, topic('effort_controller/commands'))
    pub = probe.publisher(Odometry, topic('odom'))
    controller = start(CONTROLLER, 'controller', model='sleigh_free_actuated',
                       state_timeout=0.5)
    probe.spin_until(lambda: pub.get_subscription_count() > 0, 30, 'the controller')

    def odometry(frame='sleigh', z=0.0, qw=1.0, v_lat=0.05):
        msg = Odometry()
        msg.header.frame_id, msg.child_frame_id = 'world', frame
        msg.pose.pose.position.z = z
        msg.pose.pose.orientation.w = qw
        msg.twist.twist.linear.x, msg.twist.twist.linear.y = 0.5, v_lat
        msg.twist.twist.angular.z = -1.0
        return msg

    for msg in (odometry(v_lat=math.nan), odometry(qw=0.9), odometry(frame='body'),
                odometry(z=0.01)):
        pub.publish(msg)
    probe.spin_for(0.3)
    assert commands == [], 'a malformed state must not produce a command'
    pub.publish(odometry())
    probe.spin_until(lambda: commands, 10, 'a command for a valid state')
    # Sleigh, horizontal, offset 0, omega = -1, u = 0.5, v_lat = 0.05: M = diag(I, m, m)
    # and h = -(v m u - u m v, omega m v, -omega m u) (test_servo_closed_loop's
    # sleigh_bias) = (0, -omega m v_lat, omega m u); with a = e3 and b = (c_s, a_s, b_s):
    # u = (h_3/m - gamma v_lat)/(b_s/m) = (omega u m - gamma m v_lat)/b_s.
    plant = config('sleigh_free_actuated')
    m, (_, b_s, _) = plant.mass, plant.control
    expected = (-1.0 * 0.5 * m - RATE * m * 0.05) / b_s
    assert len(commands[-1].data) == 1
    assert commands[-1].data[0] == pytest.approx(expected, rel=1e-12)
    probe.spin_until(lambda: len(commands) >= 2, 10, 'the watchdog command')
    assert list(commands[-1].data) == [0.0]
    probe.spin_until(lambda: 'no valid odometry for 0.5 s' in controller.output(), 5,
                     'the watchdog warning in the log')
    log = controller.output()
    for reason in ('twist.linear: not finite', 'pose.orientation: not a unit quaternion',
                   "child_frame_id 'body' is not the body frame 'sleigh'",
                   'pose.position: z = 0.01 must be 0'):
        assert f'rejected odometry: {reason}' in log, reason
    assert controller.alive()
    # Started as the ``controller`` executable (the old way), with a warning.
    assert 'run the servo_controller executable' in log


def test_servo_mode_refuses_unstable_gains_and_models_without_input(start_node):
    """Exit 2 naming the field: gamma T = 3 > 2 (servo_gain, the zoh bound), and the servo
    model (realization servo: no input for the controller)."""
    unstable = start_node(SERVO_CONTROLLER, params_file=PARAMETERS, name='unstable',
                          parameters=[('servo_gain', 1500.0)])
    no_input = start_node(SERVO_CONTROLLER, params_file=PARAMETERS, name='no_input',
                          parameters=[('model', 'sleigh_servo')])
    arm = start_node(SERVO_CONTROLLER, params_file=PARAMETERS, name='arm',
                     parameters=[('model', 'two_link_rigid')])
    for node, words in ((unstable, ['servo_gain:', 'need period < 2/gamma = 0.00133333 s']),
                        (no_input, ["model: 'sleigh_servo' has realization 'servo'"]),
                        (arm, ["'two_link_rigid' is not a servoconstraint system"])):
        assert node.wait(30) == 2, node.output()
        output = node.output()
        assert 'refusing to start' in output
        for word in words:
            assert word in output, output
