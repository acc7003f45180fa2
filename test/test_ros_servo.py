"""The servo plant node over real DDS: sleigh solution, blow-up, free plant, bad configs.

Expected numbers come from the model files in config/models and closed-form results of
Kozlov, "The dynamics of systems with servoconstraints. I" (RCD 2015), written out here:
the servo-sleigh's reduced system u' = alpha u w, w' = beta u w (alpha = a_s/b_s,
beta = m c_s/(I b_s)) has the integral gamma = beta u - alpha w and the solution
u(t) = gamma/(beta + C e^{gamma t}), C = gamma/u0 - beta (C = 1 for sleigh_servo.yaml,
the paper's (6.5)).
"""

import math

import numpy as np
import pytest
import yaml

from conftest import CONFIG

SERVO = 'flexible_manipulator.nodes.servo_node'

pytestmark = [pytest.mark.ros, pytest.mark.timeout(60)]


def model_file(name):
    """Parsed config/models/<name>.yaml."""
    with open(f'{CONFIG}/models/{name}.yaml') as stream:
        return yaml.safe_load(stream)


def seconds(header):
    """Stamp of a header [s]."""
    return header.stamp.sec + 1e-9 * header.stamp.nanosec


def stamp_key(header):
    """Hashable stamp."""
    return header.stamp.sec, header.stamp.nanosec


def start_servo(start_node, **parameters):
    """Start the servo plant with ``-p`` overrides only (no parameter file)."""
    return start_node(SERVO, params_file=None, parameters=list(parameters.items()),
                      name='servo_plant')


def finite_message(msg):
    """All numbers of a message (recursively) are finite."""
    if isinstance(msg, float):
        return math.isfinite(msg)
    if isinstance(msg, (list, tuple)) or type(msg).__name__ == 'array':
        return all(finite_message(x) for x in msg)
    if hasattr(msg, 'get_fields_and_field_types'):
        return all(finite_message(getattr(msg, f)) for f in msg.get_fields_and_field_types())
    return True


def test_servo_sleigh_follows_the_explicit_solution(probe, start_node):
    """Odometry forward speed and yaw follow (6.5); residual ~0; the path marker's length.

    Path length s(t) = (1/beta) (gamma t - ln((beta + C e^{gamma t})/(beta + C))) (the
    integral of u), heading phi(t) = (beta s(t) - gamma t)/alpha (the integral of w).
    """
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage
    from visualization_msgs.msg import MarkerArray
    spec = model_file('sleigh_servo')
    a_s, b_s, c_s = spec['control']
    m, inertia = spec['mass'], spec['inertia']
    w0, u0, _ = spec['initial']['v']
    alpha, beta = a_s / b_s, m * c_s / (inertia * b_s)
    gamma = beta * u0 - alpha * w0
    C = gamma / u0 - beta
    assert gamma > 0 and abs(C - 1.0) < 1e-12, 'sleigh_servo.yaml should start on (6.5)'

    def speed(t):
        return gamma / (beta + C * math.exp(gamma * t))

    def arc(t):
        return (gamma * t - math.log((beta + C * math.exp(gamma * t)) / (beta + C))) / beta

    odom = probe.subscribe(Odometry, '/odom')
    states = probe.subscribe(JointState, '/servo_state')
    tf = probe.subscribe(TFMessage, '/tf')
    markers = probe.subscribe(MarkerArray, '/markers')
    plant = start_servo(start_node, model='sleigh_servo', timing_mode='realtime',
                        update_period=0.01, marker_period=0.05)

    def matched():
        """Stamps seen on both /odom and /tf (discovery may connect the topics at different
        times, and a loaded machine may drop a message)."""
        return ({stamp_key(msg.header) for msg in odom}
                & {stamp_key(t.header) for msg in tf for t in msg.transforms})

    probe.spin_until(lambda: odom and seconds(odom[-1].header) >= 1.0 and len(markers) > 2
                     and len(matched()) > 50, 30, '1 s of sleigh motion')
    assert plant.alive()
    assert odom[-1].header.frame_id == 'world' and odom[-1].child_frame_id == 'sleigh'
    yaw_by_stamp = {}
    for msg in tf:
        for t in msg.transforms:
            assert (t.header.frame_id, t.child_frame_id) == ('world', 'sleigh')
            r = t.transform.rotation
            yaw_by_stamp[stamp_key(t.header)] = 2.0 * math.atan2(r.z, r.w)
    checked = 0
    for msg in odom:
        t = seconds(msg.header)
        twist = msg.twist.twist
        assert twist.linear.x == pytest.approx(speed(t), abs=1e-9), f't = {t}'
        assert twist.angular.z == pytest.approx((beta * speed(t) - gamma) / alpha, abs=1e-9)
        assert abs(twist.linear.y) < 1e-12
        if stamp_key(msg.header) in yaw_by_stamp:
            yaw = (beta * arc(t) - gamma * t) / alpha
            error = yaw_by_stamp[stamp_key(msg.header)] - yaw
            assert abs(math.remainder(error, 2 * math.pi)) < 1e-8, f't = {t}'
            checked += 1
    assert checked > 50
    names = list(states[-1].name)
    assert names[:7] == ['lambda', 'kinetic_energy', 'potential_energy', 'energy',
                         'control_power', 'residual', 'margin']
    for state in states:
        values = dict(zip(state.name, state.position))
        assert abs(values['residual']) < 1e-12
        assert values['margin'] == pytest.approx(b_s / m)          # <I^-1 a, b> = b_s/m
        assert values['sleigh_integral'] == pytest.approx(gamma, abs=1e-9)
        u = speed(seconds(state.header))
        w = (beta * u - gamma) / alpha
        assert values['energy'] == pytest.approx(0.5 * m * u ** 2 + 0.5 * inertia * w ** 2,
                                                 abs=1e-9)    # T, horizontal: V = 0
    # The contact point's path: a line strip in the world frame as long as the arc s(t).
    last = markers[-1]
    path = next(mk for mk in last.markers if mk.ns == 'path')
    assert path.header.frame_id == 'world' and len(path.points) > 10
    points = np.array([(p.x, p.y, p.z) for p in path.points])
    length = np.linalg.norm(np.diff(points, axis=0), axis=1).sum()
    assert length == pytest.approx(arc(seconds(path.header)), abs=1e-3)
    assert {mk.ns for mk in last.markers} >= {'axis_x', 'axis_y', 'axis_z', 'vector_a',
                                              'vector_b', 'body', 'path'}


def test_servo_suslov_blow_up_is_reported_and_the_node_stays_up(probe, start_node):
    """suslov_servo_generic escapes |w| > omega_max near t = 0.55 s (see its model file).

    Then /diagnostics reports ERROR with 'blow-up', the simulated time stops, every message
    stays finite, resuming is refused and ~/reset answers and restarts at t = 0.
    """
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import JointState
    from std_srvs.srv import SetBool, Trigger
    from tf2_msgs.msg import TFMessage
    from visualization_msgs.msg import MarkerArray
    diagnostics = probe.subscribe(DiagnosticArray, '/diagnostics')
    topics = [probe.subscribe(Odometry, '/odom'), probe.subscribe(JointState, '/servo_state'),
              probe.subscribe(TFMessage, '/tf'), probe.subscribe(MarkerArray, '/markers')]
    odom = topics[0]

    def errors():
        return [s for d in diagnostics for s in d.status if s.level == DiagnosticStatus.ERROR]

    plant = start_servo(start_node, model='suslov_servo_generic', timing_mode='realtime',
                        update_period=0.01)
    probe.spin_until(errors, 30, 'an ERROR diagnostic')
    error = errors()[0]
    assert 'blow-up' in error.message and 'omega_max' in error.message, error.message
    values = {kv.key: kv.value for kv in error.values}
    assert float(values['simulated_time']) == pytest.approx(0.55, abs=0.1)
    count = len(odom)
    probe.spin_until(lambda: len(odom) >= count + 12, 10, 'odometry after the blow-up')
    stopped = {seconds(msg.header) for msg in odom[-10:]}
    assert len(stopped) == 1, 'the integration must stop at the blow-up'
    assert stopped.pop() == pytest.approx(float(values['simulated_time']), abs=1e-6)
    angular = odom[-1].twist.twist.angular
    assert np.linalg.norm([angular.x, angular.y, angular.z]) > 100.0
    for messages in topics:
        assert messages and all(finite_message(msg) for msg in messages)
    refused = probe.call(SetBool, '/servo_plant/pause', SetBool.Request(data=False))
    assert not refused.success and 'reset' in refused.message
    count = len(odom)
    assert probe.call(Trigger, '/servo_plant/reset', Trigger.Request()).success
    probe.spin_until(lambda: len(odom) > count and seconds(odom[-1].header) < 0.3, 10,
                     'odometry after reset')
    assert plant.alive()


def test_free_plant_lockstep_advances_per_command_and_rejects_bad_ones(probe, start_node):
    """suslov_free_actuated in lockstep: one period per command; bad commands are refused.

    The input u along b is reported as 'lambda' in servo_state. A NaN or a wrong-length
    command keeps the last valid one until command_timeout (0.02 s), then u = 0.
    """
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    states = probe.subscribe(JointState, '/servo_state')
    pub = probe.publisher(Float64MultiArray, '/effort_controller/commands')
    plant = start_servo(start_node, model='suslov_free_actuated', timing_mode='lockstep',
                        update_period=0.01, command_timeout=0.02)
    probe.spin_until(lambda: states and pub.get_subscription_count(), 30, 'the plant')
    assert stamp_key(states[-1].header) == (0, 0)
    expected = [([0.5], 0.5), ([math.nan], 0.5), ([1.0, 2.0], 0.5), ([math.inf], 0.0),
                ([-0.25], -0.25)]
    for k, (data, applied) in enumerate(expected, start=1):
        previous = stamp_key(states[-1].header)
        pub.publish(Float64MultiArray(data=data))
        # While it waits, a lockstep plant re-sends its last state (same stamp): skip those.
        probe.spin_until(lambda: stamp_key(states[-1].header) != previous, 10,
                         f'the state after command {data}')
        state = states[-1]
        assert stamp_key(state.header) == (0, 10_000_000 * k), 'one period per command'
        values = dict(zip(state.name, state.position))
        assert values['lambda'] == applied, f'after {data}'
        assert all(math.isfinite(x) for x in state.position)
    assert plant.alive()
    log = plant.output()
    assert 'non-finite input' in log and 'expected one input' in log and 'got 2' in log


def bad_configs():
    """(label, model dict, words the refusal must contain)."""
    sleigh, top = model_file('sleigh_servo'), model_file('suslov_servo_generic')
    ixx, iyy, izz, ixy, ixz, iyz = top['inertia']
    inverse = np.linalg.inv([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    # b orthogonal to I^-1 a: <I^-1 a, b> = 0.
    b_unrealizable = np.cross(inverse @ np.array(top['a']), [1.0, 0.0, 0.0])
    b_unrealizable = (b_unrealizable / np.linalg.norm(b_unrealizable)).tolist()
    return [
        ('sleigh b_s = 0', dict(sleigh, control=[0.5, 0.0, 0.01]),
         ['control', 'realizability margin']),
        ('top b _|_ I^-1 a', dict(top, b=b_unrealizable), ['b:', 'realizability margin']),
        ('zero axis a', dict(top, a=[0.0, 0.0, 0.0]), ['a:', 'zero vector']),
        ('axis b not normalized', dict(top, b=[0.0, 1.2, -1.6]), ['b:', 'unit vector']),
        ('inertia not positive definite', dict(top, inertia=[1.0, 1.0, -1.0, 0.0, 0.0, 0.0]),
         ['inertia', 'positive definite']),
        ('quaternion not unit', dict(top, initial={'q': [1.0, 0.2, 0.0, 0.0],
                                                   'v': [-10.0, 10.0, 0.0]}),
         ['initial.q', 'unit']),
        ('non-finite initial velocity', dict(sleigh, initial={'q': [0.0, 0.0, 0.0],
                                                              'v': [math.nan, 0.5, 0.0]}),
         ['initial.v', 'finite']),
    ]


def test_bad_configurations_are_refused_naming_the_problem(start_node, tmp_path):
    """Unrealizable b, zero a, non-SPD inertia, bad initial state: exit 2, field named."""
    started = []
    for k, (label, spec, words) in enumerate(bad_configs()):
        path = tmp_path / f'bad_{k}.yaml'
        path.write_text(yaml.safe_dump(spec))
        started.append((label, words, start_servo(start_node, model=str(path))))
    for label, words, plant in started:
        assert plant.wait(30) == 2, f'{label}: {plant.output()}'
        output = plant.output()
        assert 'refusing to start' in output, f'{label}: {output}'
        for word in words:
            assert word in output, f'{label}: {word!r} not in {output}'
