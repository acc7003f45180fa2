"""The plant driven as ros2_control's topic-based hardware, over real DDS.

The probe plays `joint_state_topic_hardware_interface/JointStateTopicSystem` as its
source (ros-controls/topic_based_hardware_interfaces) behaves: each command is a
sensor_msgs/JointState with every joint of the <ros2_control> block by name and, for
effort command interfaces, one ``effort`` entry each, published on
``/robot_joint_commands`` (QoS depth 1); the states are read from
``/robot_joint_states`` with sensor-data QoS (best effort), matched by name. The plant
runs in lock-step, so each accepted command answers with the next state, whose ``effort``
field is the effort applied, clipped at the effort limits of two_link_rigid's file.
"""

import pytest
import yaml

from conftest import CONFIG, PLANT

COMMANDS, STATES = '/robot_joint_commands', '/robot_joint_states'
MODEL = yaml.safe_load(open(f'{CONFIG}/models/two_link_rigid.yaml'))
JOINTS = [link['joint']['name'] for link in MODEL['links']]          # model order
LIMITS = [link['joint']['effort_limit'] for link in MODEL['links']]


def stamp_key(header):
    return header.stamp.sec, header.stamp.nanosec


@pytest.fixture
def hardware(probe, start_node):
    """A lock-step plant serving the topics, and the probe as the hardware interface."""
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import JointState
    states = probe.subscribe(JointState, STATES, qos_profile_sensor_data)
    joint_states = probe.subscribe(JointState, '/joint_states')
    commands = probe.publisher(JointState, COMMANDS, 1)
    plant = start_node(PLANT, parameters=[
        ('model', 'two_link_rigid'), ('timing_mode', 'lockstep'),
        ('initial_positions', '[0.0,0.0]'), ('ros2_control_topics', 'true')])
    probe.spin_until(lambda: states and commands.get_subscription_count(), 30,
                     'the plant on the ros2_control topics')
    return plant, states, joint_states, commands


def command(probe, states, commands, names, efforts=(), positions=()):
    """Publish one JointState command; return the first state with a new stamp, or None."""
    from sensor_msgs.msg import JointState
    count, last = len(states), stamp_key(states[-1].header)
    commands.publish(JointState(name=list(names), effort=list(efforts),
                                position=list(positions)))
    try:
        probe.spin_until(lambda: any(stamp_key(s.header) != last for s in states[count:]),
                         3, 'the answer')
    except pytest.fail.Exception:
        return None
    return next(s for s in states[count:] if stamp_key(s.header) != last)


def test_commands_by_name_drive_the_plant_and_states_come_back_by_name(probe, hardware):
    """Names in any order map onto the model's joints; the state on /robot_joint_states is
    the one on /joint_states (same stamp, names and numbers); efforts clip at the limits."""
    plant, states, joint_states, commands = hardware
    state = command(probe, states, commands, JOINTS[::-1], [-0.5, 1.5])
    assert state is not None, plant.output()[-2000:]
    assert list(state.name) == JOINTS
    assert list(state.effort) == [1.5, -0.5]
    probe.spin_until(lambda: any(stamp_key(s.header) == stamp_key(state.header)
                                 for s in joint_states), 5, 'the same state on /joint_states')
    twin = next(s for s in joint_states if stamp_key(s.header) == stamp_key(state.header))
    assert (list(twin.name), list(twin.position), list(twin.velocity), list(twin.effort)) == \
        (list(state.name), list(state.position), list(state.velocity), list(state.effort))
    state = command(probe, states, commands, JOINTS, [100.0, -100.0])
    assert list(state.effort) == [LIMITS[0], -LIMITS[1]]


@pytest.mark.parametrize('names, efforts, positions, reason', [
    ([JOINTS[0], 'wrist'], [1.0, 2.0], [], "unknown joint 'wrist'"),
    (JOINTS[:1], [1.0], [], f"no command for joint {JOINTS[1]!r}"),
    (JOINTS[:1] + JOINTS, [1.0, 1.0, 2.0], [], f"joint {JOINTS[0]!r} named twice"),
    (JOINTS, [], [0.1, 0.2], '0 effort entries for 2 joints'),
    (JOINTS, [float('nan'), 0.0], [], 'non-finite effort'),
])
def test_a_bad_command_is_rejected_with_its_reason_and_the_last_one_held(
        probe, hardware, names, efforts, positions, reason):
    """Rejected: the plant logs why and the last valid command stays in force.

    What a lock-step plant does then (nodes/topic_hardware.py, simulated_plant.py): a
    message the hardware interface cannot map onto the joints answers no state; entries
    that map but are not finite go through the plant's intake, which answers the waiting
    state with the last valid command held. So after the bad command, an infinite effort
    (rejected by the intake) answers with the held [2, 1], and the next valid command with
    itself, one update period (config/sim.yaml's 2 ms) per answer since the last valid one.
    """
    from sensor_msgs.msg import JointState
    plant, states, _, commands = hardware
    last = command(probe, states, commands, JOINTS, [2.0, 1.0])
    assert list(last.effort) == [2.0, 1.0]
    answered = reason == 'non-finite effort'          # by the intake: answered, held
    if answered:
        bad = command(probe, states, commands, names, efforts, positions)
        assert bad is not None and list(bad.effort) == [2.0, 1.0]
    else:
        commands.publish(JointState(name=list(names), effort=list(efforts),
                                    position=list(positions)))
    probe.spin_until(lambda: reason in plant.output(), 10, f'the log line {reason!r}')
    held = command(probe, states, commands, JOINTS, [float('inf'), 0.0])
    assert held is not None and list(held.effort) == [2.0, 1.0]
    state = command(probe, states, commands, JOINTS, [0.5, 0.25])
    assert list(state.effort) == [0.5, 0.25]
    answers = 3 if answered else 2
    elapsed = (state.header.stamp.sec - last.header.stamp.sec) * 10 ** 9 + \
        state.header.stamp.nanosec - last.header.stamp.nanosec
    assert elapsed == answers * 2_000_000
    assert plant.alive()


def test_the_topics_are_served_only_when_asked(probe, start_node):
    """Off by default: no subscription on the commands topic, no states topic."""
    from sensor_msgs.msg import JointState
    states = probe.subscribe(JointState, '/joint_states')
    commands = probe.publisher(JointState, COMMANDS, 1)
    start_node(PLANT, parameters=[('model', 'two_link_rigid'), ('timing_mode', 'lockstep')])
    probe.spin_until(lambda: states, 30, 'the plant')
    probe.spin_for(0.5)
    assert commands.get_subscription_count() == 0
    assert probe.node.count_publishers(STATES) == 0
