"""Messages kept serialized (`nodes.packed_messages`) are the messages they stand for.

Expected: the bytes of a `PackedMessage` whose numbers and stamps were written in place
deserialize (`rclpy.serialization`, as any subscriber does) to the message object with the
same numbers set field by field, for the plant's per-tick messages (joint and modal states,
TF with a floating base's transform, clock) and rows with names of any length; numbers
written again replace the old ones; a template that already holds a sentinel is refused.
The readers give back what `rclpy.serialization` serialized, field for field, for random
names and lengths (empty, unequal sequences), from the first message of a layout and from
the next ones read at its offsets, whatever the alignment padding holds; another message of
the same size with other names is read anew; bytes that are no such message read as None.
No DDS is involved.
"""

import random

import numpy as np
import pytest
from rclpy.serialization import deserialize_message, serialize_message

from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension
from tf2_msgs.msg import TFMessage

from flexible_manipulator.nodes import packed_messages
from flexible_manipulator.nodes.packed_messages import PackedMessage
from flexible_manipulator.nodes.plant_node import _set_transforms, _transform_stamp


@pytest.mark.parametrize('names', [['shoulder', 'elbow'], ['a'], [],
                                   [f'forearm_bending_y_{k}' for k in range(9)] + ['x' * 37]])
def test_joint_state_rows_equal_the_message(names):
    rng = np.random.default_rng(len(names))
    packed = packed_messages.joint_state(names)
    for _ in range(3):                  # each write replaces the numbers before it
        values = {f: rng.standard_normal(len(names)) for f in ('position', 'velocity', 'effort')}
        sec, nanosec = int(rng.integers(0, 2**31 - 1)), int(rng.integers(0, 10**9))
        for field, x in values.items():
            packed.set(field, x)
        packed.set_stamp(sec, nanosec)
        expected = JointState(name=names, **{f: x.tolist() for f, x in values.items()})
        expected.header.stamp = Time(sec=sec, nanosec=nanosec)
        assert deserialize_message(packed.data(), JointState) == expected


def test_modal_state_leaves_the_efforts_empty():
    packed = packed_messages.joint_state(['m0', 'm1', 'm2'], ('position', 'velocity'))
    packed.set('position', [1.0, 2.0, 3.0])
    packed.set('velocity', np.array([4.0, 5.0, 6.0]))
    packed.set_stamp(3, 500)
    msg = deserialize_message(packed.data(), JointState)
    assert list(msg.position) == [1.0, 2.0, 3.0] and list(msg.velocity) == [4.0, 5.0, 6.0]
    assert len(msg.effort) == 0 and (msg.header.stamp.sec, msg.header.stamp.nanosec) == (3, 500)


def test_transforms_equal_the_message():
    frames = [('world', 'base'), ('base', 'upper_arm'), ('upper_arm', 'upper_arm_s1'),
              ('upper_arm', 'upper_arm_tip_with_a_long_name')]
    template = TFMessage(transforms=[TransformStamped(child_frame_id=c) for _, c in frames])
    for transform, (parent, _) in zip(template.transforms, frames):
        transform.header.frame_id = parent
    packed = PackedMessage(template, {'transforms': (7 * len(frames), _set_transforms)},
                           stamps=[_transform_stamp(i) for i in range(len(frames))])
    rows = np.random.default_rng(1).standard_normal((len(frames), 7))
    packed.set('transforms', rows.ravel())
    packed.set_stamp(12, 345)
    msg = deserialize_message(packed.data(), TFMessage)
    for transform, row, (parent, child) in zip(msg.transforms, rows, frames):
        t, r = transform.transform.translation, transform.transform.rotation
        assert [t.x, t.y, t.z, r.x, r.y, r.z, r.w] == row.tolist()
        assert (transform.header.frame_id, transform.child_frame_id) == (parent, child)
        assert (transform.header.stamp.sec, transform.header.stamp.nanosec) == (12, 345)


def test_clock_and_plain_arrays():
    clock = PackedMessage(Clock(), stamps=[lambda msg, time: setattr(msg, 'clock', time)])
    clock.set_stamp(7, 999_999_999)
    assert deserialize_message(clock.data(), Clock).clock == Time(sec=7, nanosec=999_999_999)
    command = PackedMessage(Float64MultiArray(),
                            {'data': (2, lambda msg, x: setattr(msg, 'data', x))})
    command.set('data', [0.5, -1.5])
    assert list(deserialize_message(command.data(), Float64MultiArray).data) == [0.5, -1.5]


def test_a_template_holding_a_sentinel_is_refused():
    sentinel = np.array([0x7E1E3C5A00000000], dtype=np.uint64).view(np.float64)[0]
    template = Float64MultiArray(data=[float(sentinel), 0.0])
    with pytest.raises(ValueError, match='not found once'):
        PackedMessage(template, {'data': (1, lambda msg, x: msg.data.__setitem__(1, x[0]))})


def joint_state(rng, names, lengths):
    msg = JointState(name=names, position=[rng.uniform(-9, 9) for _ in range(lengths[0])],
                     velocity=[rng.uniform(-9, 9) for _ in range(lengths[1])],
                     effort=[rng.uniform(-9, 9) for _ in range(lengths[2])])
    msg.header.stamp = Time(sec=rng.randrange(2**31), nanosec=rng.randrange(10**9))
    msg.header.frame_id = rng.choice(['', 'world', 'base_link_x'])
    return msg


def assert_read(view, msg):
    assert (view.header.stamp.sec, view.header.stamp.nanosec) == (msg.header.stamp.sec,
                                                                  msg.header.stamp.nanosec)
    assert view.header.frame_id == msg.header.frame_id and list(view.name) == list(msg.name)
    for field in ('position', 'velocity', 'effort'):
        assert list(getattr(view, field)) == list(getattr(msg, field)), field


def test_the_joint_state_reader_reads_what_rclpy_serialized():
    rng, reader = random.Random(3), packed_messages.JointStateReader()
    for _ in range(200):
        names = [rng.choice(['', 'a', 'shoulder', 'upper_arm_bending_y_3', 'é_unicode'])
                 + str(k) * rng.randrange(3) for k in range(rng.randrange(20))]
        lengths = [rng.choice([len(names), len(names), 0, len(names) + 1]) for _ in range(3)]
        for _ in range(3):                  # the first of a layout, then at its offsets
            msg = joint_state(rng, names, lengths)
            assert_read(reader.read(serialize_message(msg)), msg)


def test_the_reader_ignores_padding_and_reads_other_names_of_the_same_size():
    rng, reader = random.Random(4), packed_messages.JointStateReader()
    msg = joint_state(rng, ['a', 'b'], (2, 2, 2))
    data = bytearray(serialize_message(msg))
    assert_read(reader.read(bytes(data)), msg)
    layout = reader._layout
    # 'a' is 4 + 2 bytes: two bytes of padding before the next name's length.
    start = data.index(b'\x02\x00\x00\x00a\x00') + 6
    data[start:start + 2] = b'\xab\xcd'
    assert_read(reader.read(bytes(data)), msg)
    assert reader._layout is layout                          # read at its offsets
    other = joint_state(rng, ['c', 'd'], (2, 2, 2))
    other.header.frame_id = msg.header.frame_id
    assert len(serialize_message(other)) == len(data)
    assert_read(reader.read(serialize_message(other)), other)


def test_bytes_that_are_no_message_read_as_none():
    reader, commands = packed_messages.JointStateReader(), packed_messages.Float64ArrayReader()
    state = serialize_message(JointState(name=['a', 'b'], position=[1.0, 2.0]))
    command = serialize_message(Float64MultiArray(data=[1.0, 2.0, 3.0]))
    garbage = (b'', b'\x00\x01', b'\x00\x01' + b'\xff' * 40, b'garbage!' * 9)
    for data in garbage + (state[:len(state) // 2],):
        assert reader.read(data) is None
    for data in garbage + (command[:len(command) // 2],):
        assert commands.read(data) is None


def test_the_command_reader_reads_what_rclpy_serialized():
    """The data, and the labels of the layout's dimensions (the watchdog's label among
    them), whatever the order of messages with and without them."""
    rng, reader = random.Random(5), packed_messages.Float64ArrayReader()
    for size in (2, 2, 0, 1, 2, 7, 7, 2, 2, 2):
        msg = Float64MultiArray(data=[rng.uniform(-1e3, 1e3) for _ in range(size)])
        labels = ()
        if rng.random() < 0.5:
            labels = (rng.choice(['joints', 'watchdog']),)
            msg.layout.dim = [MultiArrayDimension(label=labels[0], size=size, stride=size)]
            msg.layout.data_offset = 0
        assert list(reader.read(serialize_message(msg))) == list(msg.data)
        assert reader.labels == labels
