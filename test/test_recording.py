"""Recording runs to MCAP and plotting them (`recording.definitions`, `recorder`, `series`,
`figures`).

Expected values: the schemas must decode what rclpy itself serializes (rosidl's own
serializer is the reference for the CDR layout and the field names); a recorded run must
read back to the values an independent decoding of the file gives (`mcap_ros2`'s reader,
message by message), and every plotted line must hold exactly those values; the effort
limits on the plot are the model file's.
"""

import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest
import yaml

from conftest import CONFIG, NodeProcess

pytestmark = [pytest.mark.ros, pytest.mark.timeout(180)]

SERVO = 'flexible_manipulator.nodes.servo_node'
RECORDER = 'flexible_manipulator.recording.recorder'


def sample_messages():
    """One filled message of each recorded type (rclpy classes)."""
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
    from geometry_msgs.msg import TransformStamped
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray, String
    from tf2_msgs.msg import TFMessage
    joint = JointState(name=['a', 'b'], position=[0.5, -1.25], velocity=[2.0, 3.0],
                       effort=[1e-3, 7.5])
    joint.header.stamp.sec, joint.header.stamp.nanosec = 3, 250_000_000
    transform = TransformStamped(child_frame_id='tip')
    transform.header.frame_id = 'base'
    transform.transform.translation.x, transform.transform.rotation.w = 0.4, 1.0
    odometry = Odometry(child_frame_id='sleigh')
    odometry.pose.pose.position.y, odometry.twist.twist.angular.z = -2.5, 0.75
    status = DiagnosticStatus(level=b'\x01', name='plant', message='ok',
                              values=[KeyValue(key='k', value='v')])
    return [joint, TFMessage(transforms=[transform]), odometry,
            Float64MultiArray(data=[1.0, -2.0]), String(data='<robot/>'),
            DiagnosticArray(status=[status])]


def same(decoded, original):
    """Compare a decoded (mcap_ros2) message with the rclpy original, field by field."""
    for name in original.get_fields_and_field_types():
        mine, theirs = getattr(decoded, name), getattr(original, name)
        if hasattr(theirs, 'get_fields_and_field_types'):
            same(mine, theirs)
        elif isinstance(theirs, (list, tuple)) and theirs and hasattr(
                theirs[0], 'get_fields_and_field_types'):
            assert len(mine) == len(theirs)
            for a, b in zip(mine, theirs):
                same(a, b)
        elif isinstance(theirs, bytes):
            assert bytes([mine]) == theirs if isinstance(mine, int) else mine == theirs
        else:
            assert list(np.atleast_1d(mine)) == list(np.atleast_1d(theirs)), name


def test_schemas_decode_what_rclpy_serializes():
    """Each recorded type's schema (built from the installed .msg files) decodes rclpy's
    own serialization of a filled message to the same values."""
    from mcap.records import Schema
    from mcap_ros2.decoder import DecoderFactory
    from rclpy.serialization import serialize_message
    from flexible_manipulator.recording import definitions, recorder
    factory = DecoderFactory()
    recorded = {recorder.type_name(kind) for _, kind, _ in recorder.TOPICS}
    for number, message in enumerate(sample_messages(), 1):
        name = recorder.type_name(type(message))
        assert name in recorded
        schema = Schema(id=number, name=name, encoding='ros2msg',
                        data=definitions.schema(name).encode())
        decode = factory.decoder_for('cdr', schema)
        same(decode(serialize_message(message)), message)


def decoded_by_topic(path):
    """{topic: [decoded message, ...]} by `mcap_ros2`'s own reader."""
    from mcap_ros2.reader import read_ros2_messages
    messages = {}
    for item in read_ros2_messages(path):
        messages.setdefault(item.channel.topic, []).append(item.ros_msg)
    return messages


def test_a_recorded_demo_reads_back_and_plots_what_was_recorded(tmp_path):
    """``bringup --record`` on the lock-step demo (0.5 simulated s): the file holds every
    state and every answer; `series` reads the same values as mcap_ros2's reader; the
    figures the demo lists exist as PNG files, and their lines are the recorded values
    (joint positions, r + phi and phi of each program row, applied efforts with the model
    file's limits, modal coordinates)."""
    from flexible_manipulator.recording import figures, series
    path = tmp_path / 'run.mcap'
    env = dict(os.environ)
    env.pop('ROS_DOMAIN_ID', None)
    result = subprocess.run(
        [sys.executable, '-m', 'flexible_manipulator.nodes.bringup', '--local', '--timing-mode',
         'lockstep', '--duration', '0.5', '--timeout', '90', '--record', str(path)],
        env=env, capture_output=True, text=True, timeout=150)
    assert result.returncode == 0, result.stderr[-2000:]
    listed = re.search(r'figures\s+(\S+)/ \((.*)\)', result.stdout)
    assert listed, result.stdout
    for name in listed.group(2).split(', '):
        with open(os.path.join(listed.group(1), name), 'rb') as png:
            assert png.read(8) == b'\x89PNG\r\n\x1a\n'
    raw = decoded_by_topic(str(path))
    run = series.read(str(path))
    # Every state recorded; the residuals once per program_topics_period (0.01 s, the
    # default) of the states' time, each with a state's stamp: none missing, fewer than
    # the states.
    stamps = [m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec for m in raw['/joint_states']]
    distinct = sorted(set(stamps))
    assert np.allclose(np.diff(distinct), 0.002, atol=1e-9) and distinct[-1] >= 0.5
    # (The answers to a held state, re-sent while paused, come again once per period of
    # wall time: distinct stamps.)
    answered = sorted({m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec
                       for m in raw['/controller/residuals']})
    assert set(answered) <= set(stamps)
    assert np.diff(answered).max() <= 0.01 + 1e-9
    assert answered[-1] >= distinct[-1] - 0.01 - 1e-9
    assert len(answered) <= len(distinct) / 5 + 2
    joints = run.first('/joint_states')
    np.testing.assert_array_equal(joints.times, stamps)
    np.testing.assert_array_equal(joints.array('position'),
                                  [list(m.position) for m in raw['/joint_states']])
    model = yaml.safe_load(open(os.path.join(CONFIG, 'models', 'two_link_flexible.yaml')))
    assert run.limits == {link['joint']['name']: link['joint']['effort_limit']
                          for link in model['links']}
    drawn = figures.draw(run, str(tmp_path / 'figures'))
    assert set(drawn) == {'joints', 'program', 'efforts', 'modes', 'paths', 'filmstrip'}
    lines = drawn['joints'][1].axes[0].lines
    for i in range(2):
        np.testing.assert_array_equal(lines[i].get_ydata(), joints.array('position')[:, i])
    reference = np.array([list(m.position) for m in raw['/controller/reference']])
    residual = np.array([list(m.position) for m in raw['/controller/residuals']])
    count = min(len(reference), len(residual))
    top, bottom = drawn['program'][1].axes
    for i in range(2):
        np.testing.assert_array_equal(top.lines[2 * i].get_ydata(),
                                      reference[:count, i] + residual[:count, i])
        np.testing.assert_array_equal(bottom.lines[i].get_ydata(), residual[:count, i])
    effort_axes = drawn['efforts'][1].axes[0]
    curves = [line for line in effort_axes.lines if len(line.get_xdata()) > 2]
    for i, curve in enumerate(curves):
        np.testing.assert_array_equal(curve.get_ydata(),
                                      [m.effort[i] for m in raw['/joint_states']])
    levels = sorted({line.get_ydata()[0] for line in effort_axes.lines
                     if len(line.get_xdata()) == 2})
    assert levels == [-10.0, -5.0, 5.0, 10.0]
    modes = drawn['modes'][1].axes[0].lines
    np.testing.assert_array_equal(modes[0].get_ydata(),
                                  [m.position[0] for m in raw['/modal_states']])


def test_a_recorded_servo_plant_plots_its_path_force_and_integrals(probe, domain_id, tmp_path):
    """The servo-sleigh (config/servo.yaml, real time) recorded until the recorder reports
    20 odometry messages written (its /diagnostics: discovery takes seconds on a loaded
    machine): its odometry path and twist, and its outputs (lambda, energy, the sleigh
    integral) read back as mcap_ros2 decodes them, and the servo figure's lines are those
    values."""
    from diagnostic_msgs.msg import DiagnosticArray
    from flexible_manipulator.recording import figures, series
    diagnostics = probe.subscribe(DiagnosticArray, '/diagnostics')

    def odometry_written():
        counts = [int(v.value) for msg in diagnostics for status in msg.status
                  if status.name.endswith('recording') for v in status.values
                  if v.key == '/odom']
        return counts and max(counts) >= 20
    path = tmp_path / 'servo.mcap'
    recorder = NodeProcess(RECORDER, domain_id, tmp_path / 'recorder.log', None,
                           [('path', str(path))])
    plant = NodeProcess(SERVO, domain_id, tmp_path / 'servo.log',
                        os.path.join(CONFIG, 'servo.yaml'))
    try:
        deadline = time.monotonic() + 60
        while not ('recording' in recorder.output() and 'simulating' in plant.output()):
            assert time.monotonic() < deadline, plant.output() + recorder.output()
            time.sleep(0.1)
        probe.spin_until(odometry_written, 60, '20 odometry messages recorded')
    finally:
        plant.stop()
        recorder.stop()
    log = open(recorder.log_path).read()
    assert 'recorded' in log, log
    raw = decoded_by_topic(str(path))
    assert len(raw['/odom']) >= 20
    run = series.read(str(path))
    np.testing.assert_array_equal(run.odometry['position'][:, :2],
                                  [(m.pose.pose.position.x, m.pose.pose.position.y)
                                   for m in raw['/odom']])
    outputs = run.first('/servo_state')
    assert {'lambda', 'energy'} <= set(outputs.names)
    drawn = figures.draw(run, str(tmp_path / 'figures'))
    assert set(drawn) == {'servo'}
    path_axes, _, force_axes, energy_axes = drawn['servo'][1].axes
    np.testing.assert_array_equal(path_axes.lines[0].get_ydata(),
                                  [m.pose.pose.position.y for m in raw['/odom']])
    index = list(outputs.names).index('energy')
    energy = [line for line in energy_axes.lines if line.get_label() == 'energy'][0]
    np.testing.assert_array_equal(energy.get_ydata(),
                                  [m.position[index] for m in raw['/servo_state']])
    force = force_axes.lines[0]
    np.testing.assert_array_equal(force.get_ydata(),
                                  [m.position[outputs.names.index('lambda')]
                                   for m in raw['/servo_state']])


def test_a_synthetic_recording_holds_the_simulation_with_its_noise(tmp_path):
    """A headless simulation written by `synthetic.record_simulation` (the recorder's
    writer): mcap_ros2's own reader decodes it; the stamps are the periods; each joint
    state carries the effort applied over the period before it (the plant's convention,
    zero at t = 0); the recorded positions and velocities are the simulation's exact
    states (a second `Simulation` run here under the same efforts) plus noise whose sample
    standard deviation is the stated one within its sampling error (1000 x 2 draws: 5 %)."""
    from flexible_manipulator.mechanics.simulation import Simulation
    from flexible_manipulator.model_config import load_model
    from flexible_manipulator.recording import series, synthetic
    model = load_model(os.path.join(CONFIG, 'models', 'two_link_flexible.yaml'))
    efforts = synthetic.multisine(1000, 0.002, [1.0, 0.5], np.linspace(0.5, 20.0, 20))
    assert np.allclose(np.abs(efforts).max(axis=0), [1.0, 0.5])
    noise = {'joint_position': 1e-4, 'joint_velocity': 1e-3, 'modal_position': 1e-5}
    path = str(tmp_path / 'synthetic.mcap')
    times, states = synthetic.record_simulation(path, model, efforts, 0.002, 0.0005,
                                                noise=noise, seed=3)
    raw = decoded_by_topic(path)
    assert len(raw['/joint_states']) == len(raw['/modal_states']) == 1001
    run = series.read(path)
    joints, modes = run.first('/joint_states'), run.first('/modal_states')
    np.testing.assert_allclose(joints.times, 0.002 * np.arange(1001), atol=1e-9)
    np.testing.assert_array_equal(joints.array('effort'), np.vstack([[0.0, 0.0], efforts]))
    sim, exact = Simulation(model, 0.0005, 'rk4'), [states[0]]
    for effort in efforts:
        sim.advance(effort, 0.002)
        exact.append(sim.state.copy())
    np.testing.assert_array_equal(states, exact)
    n = model.n_joints
    for values, exact, sigma in ((joints.array('position'), states[:, :n], 1e-4),
                                 (joints.array('velocity'), states[:, 8:8 + n], 1e-3),
                                 (modes.array('position'), states[:, n:8], 1e-5)):
        assert abs((values - exact).std() / sigma - 1.0) < 0.05
    np.testing.assert_array_equal(modes.array('velocity'), states[:, 8 + n:])
