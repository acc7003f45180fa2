"""The name mapping of the nodes' named messages (`nodes.name_map`), ROS-free.

Expected values come from the rules in the module's doc: each wanted name's entry is the
one the message gives that name (the indices below are read off the lists by hand), names
outside the wanted ones are ignored (``extras``) or refuse the list, a name twice or a
wanted name missing refuses it. A real franka_ros2 driver's joint list (seven arm joints
and two finger joints, its README's names) stands for a driver with more joints.
"""

import gc
import tracemalloc

import numpy as np
import pytest
from rclpy.serialization import serialize_message

from flexible_manipulator.nodes import name_map, packed_messages
from flexible_manipulator.nodes.name_map import Match, NameMap, Problem

ARM = ['shoulder', 'elbow']
FINGERS = ['panda_finger_joint1', 'panda_finger_joint2']


def test_extra_joints_are_ignored_and_the_wanted_ones_picked_by_name():
    names = NameMap(ARM, extras=True)
    match = names.match(['panda_finger_joint1', 'elbow', 'panda_finger_joint2', 'shoulder'])
    assert isinstance(match, Match)
    assert match.take.tolist() == [3, 1] and match.count == 4
    assert match.ignored == tuple(FINGERS)
    out = np.zeros(2)
    assert match.pick([0.04, -0.7, 0.04, 0.4], out)
    assert out.tolist() == [0.4, -0.7]


def test_the_exact_names_in_any_order_ignore_nothing():
    match = NameMap(ARM, extras=True).match(['elbow', 'shoulder'])
    assert match.take.tolist() == [1, 0] and match.ignored == ()


@pytest.mark.parametrize('extras', [True, False])
def test_a_name_twice_is_refused_even_an_extra_one(extras):
    names = NameMap(ARM, extras=extras)
    assert names.match(['shoulder', 'elbow', 'shoulder']) == Problem('twice', 'shoulder')
    if extras:
        assert names.match(['shoulder', 'gripper', 'elbow', 'gripper']) == \
            Problem('twice', 'gripper')


def test_a_missing_wanted_name_is_refused_with_its_name():
    names = NameMap(ARM, extras=True)
    problem = names.match(['shoulder', *FINGERS])
    assert problem == Problem('missing', 'elbow')
    assert problem.text('joint', names.names) == "no joint 'elbow'"


def test_without_extras_an_unknown_name_is_refused():
    names = NameMap(ARM)
    problem = names.match(['shoulder', 'elbow', 'wrist'])
    assert problem == Problem('unknown', 'wrist')
    assert problem.text('joint', names.names) == \
        "unknown joint 'wrist' (the model has shoulder, elbow)"


def test_a_wrong_length_writes_nothing():
    match = NameMap(ARM, extras=True).match(['shoulder', 'elbow', 'gripper'])
    out = np.array([7.0, 8.0])
    assert not match.pick([1.0, 2.0], out)
    assert out.tolist() == [7.0, 8.0]


def test_a_name_list_is_mapped_once_and_the_cache_is_bounded():
    """The same list (an equal one, or the very one) gives the same `Match` object: it was
    computed once; a list seen before another comes back from the cache; only the last
    ``CACHE_SIZE`` distinct lists are kept, and a list longer than ``CACHED_NAMES`` none."""
    names = NameMap(ARM, extras=True)
    first = names.match(['shoulder', 'elbow', 'gripper'])
    other = names.match(['elbow', 'shoulder'])
    assert names.match(['shoulder', 'elbow', 'gripper']) is first
    assert names.match(('elbow', 'shoulder')) is other
    for k in range(name_map.CACHE_SIZE):
        names.match(['shoulder', 'elbow', f'extra{k}'])
    assert len(names._cache) == name_map.CACHE_SIZE
    assert names.match(['shoulder', 'elbow', 'gripper']) is not first    # evicted
    long = ['shoulder', 'elbow'] + [f'x{k}' for k in range(name_map.CACHED_NAMES)]
    before = dict(names._cache)
    assert names.match(long).count == len(long)
    assert dict(names._cache) == before


def test_the_per_message_path_keeps_nothing_and_maps_nothing_again():
    """What the controller does per joint state on the packed path (`packed_messages`
    read views of the bytes): match the names, pick positions and velocities. Once the
    list is mapped, matching it again allocates no memory at all (tracemalloc's peak: 0
    bytes), and 1,000 messages reach the same peak as 10 (numpy's scratch of one
    `numpy.take`, freed before the next message): nothing grows per message."""
    from sensor_msgs.msg import JointState
    msg = JointState(name=['panda_finger_joint1', 'elbow', 'shoulder'],
                     position=[0.04, -0.7, 0.4], velocity=[0.0, 0.1, 0.2], effort=[0, 0, 0])
    data = serialize_message(msg)
    reader = packed_messages.JointStateReader()
    names = NameMap(ARM, extras=True)
    q, v = np.zeros(2), np.zeros(2)
    views = [reader.read(data) for _ in range(1000)]    # the reader's own views, made first
    few = views[:10]

    def ticks(views):
        for view in views:
            match = names.match(view.name)
            match.pick(view.position, q)
            match.pick(view.velocity, v)

    def peak(call, *args):
        # tracemalloc sees every thread of the process, and the collector may run: the
        # least of three measurements (what else happens only adds), the collector off.
        peaks = []
        gc.disable()
        try:
            for _ in range(3):
                tracemalloc.start()
                try:
                    tracemalloc.reset_peak()
                    call(*args)
                    peaks.append(tracemalloc.get_traced_memory()[1])
                finally:
                    tracemalloc.stop()
        finally:
            gc.enable()
        return min(peaks)

    ticks(few)
    assert q.tolist() == [0.4, -0.7] and v.tolist() == [0.2, 0.1]
    assert peak(names.match, views[-1].name) == 0
    assert peak(ticks, views) == peak(ticks, few)


def test_the_joints_parameter_follows_the_same_rules(flexible):
    """`common.joint_order` (the ``joints`` parameter) maps through `NameMap`: the order
    given, an unknown name and a missing or doubled one refused with the parameter named."""
    from flexible_manipulator.model_config import ConfigError
    from flexible_manipulator.nodes.common import joint_order
    assert joint_order(flexible, ['elbow', 'shoulder']) == [1, 0]
    with pytest.raises(ConfigError, match="parameter joints: unknown joint 'wrist'"):
        joint_order(flexible, ['shoulder', 'wrist'])
    for names in (['shoulder'], ['shoulder', 'elbow', 'elbow']):
        with pytest.raises(ConfigError, match='exactly once'):
            joint_order(flexible, names)


def test_the_wanted_names_must_be_distinct():
    with pytest.raises(ValueError, match='twice'):
        NameMap(['shoulder', 'shoulder'])
