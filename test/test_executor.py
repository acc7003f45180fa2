"""The nodes' executor (`nodes.executor.TickExecutor`) runs what rclpy's executor runs.

Real rclpy nodes over real DDS in this process (one private context on the test's domain):
a node spun by `TickExecutor` and a peer spun by rclpy's `SingleThreadedExecutor`, both
from this thread. Expected, as rclpy's executor does (its documented behaviour): every
message published reaches each subscription once, in order, as the type the subscription
asked for (the message, its serialized bytes, or the message with its info carrying the
publisher's source timestamp); timers fire and a cancelled one does not; a timer's
callback gets a `TimerInfo` where its signature asks for one; a service answers; a
subscription created in a callback receives what is published after, and one
destroyed in a callback is not called again and breaks nothing; a callback that awaits a
service's reply finishes once the reply comes; an exception in a callback leaves
`spin_once`; a QoS event (incompatible QoS, a waitable) reaches its handler.
"""

import time

import pytest
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.event_handler import SubscriptionEventCallbacks
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
from std_msgs.msg import Int32
from std_srvs.srv import Trigger

from flexible_manipulator.nodes.executor import TickExecutor


class Pair:
    """A node on `TickExecutor` and a peer on rclpy's executor, one context."""

    def __init__(self, domain_id):
        import rclpy
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = rclpy.create_node('tick_node', context=self.context)
        self.peer = rclpy.create_node('peer_node', context=self.context)
        self.executor = TickExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.peer_executor = SingleThreadedExecutor(context=self.context)
        self.peer_executor.add_node(self.peer)

    def spin_until(self, predicate, timeout=20.0, what='condition'):
        """Spin both executors until ``predicate()``; fail after ``timeout`` wall seconds."""
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                pytest.fail(f'timed out waiting for {what}')
            self.executor.spin_once(timeout_sec=0.01)
            self.peer_executor.spin_once(timeout_sec=0.01)

    def connect(self, publisher, count=1):
        """Wait until ``publisher`` has ``count`` matched subscriptions."""
        self.spin_until(lambda: publisher.get_subscription_count() >= count, what='discovery')

    def close(self):
        self.executor.shutdown()
        self.peer_executor.shutdown()
        self.node.destroy_node()
        self.peer.destroy_node()
        self.context.try_shutdown()


@pytest.fixture
def pair(domain_id):
    ends = Pair(domain_id)
    yield ends
    ends.close()


def test_every_message_once_in_order_as_asked(pair):
    plain, raw, with_info = [], [], []
    pair.node.create_subscription(Int32, 'numbers', lambda m: plain.append(m.data), 100)
    pair.node.create_subscription(Int32, 'numbers', raw.append, 100, raw=True)
    pair.node.create_subscription(Int32, 'numbers', lambda m, info: with_info.append((m, info)),
                                  100)
    publisher = pair.peer.create_publisher(Int32, 'numbers', 100)
    pair.connect(publisher, 3)
    sent = list(range(50))
    for k in sent:
        publisher.publish(Int32(data=k))
        if k % 10 == 0:             # some spins between publications, some bursts
            pair.executor.spin_once(timeout_sec=0.0)
    pair.spin_until(lambda: min(len(plain), len(raw), len(with_info)) >= len(sent),
                    what='all messages')
    pair.executor.spin_once(timeout_sec=0.05)
    assert plain == sent
    assert [deserialize_message(data, Int32).data for data in raw] == sent
    assert [m.data for m, _ in with_info] == sent
    assert all(info['source_timestamp'] > 0 for _, info in with_info)


def test_timers_fire_and_a_cancelled_one_does_not(pair):
    fired, cancelled = [], []
    pair.node.create_timer(0.01, lambda: fired.append(1))
    timer = pair.node.create_timer(0.01, lambda: cancelled.append(1))
    timer.cancel()
    pair.spin_until(lambda: len(fired) >= 5, what='five timer calls')
    assert cancelled == []


def test_a_timer_gets_its_timer_info_as_its_signature_asks(pair):
    """rclpy passes a `TimerInfo` to the parameter annotated with it, reading the signature
    at each call: a callback swapped at run time is called the new way."""
    from rclpy.clock import ClockType
    from rclpy.timer import TimerInfo
    infos, plain = [], []

    def with_info(info: TimerInfo):
        infos.append(info)
    timer = pair.node.create_timer(0.01, with_info)
    pair.spin_until(lambda: len(infos) >= 3, what='three calls with a TimerInfo')
    assert all(isinstance(info, TimerInfo) for info in infos)
    assert infos[0].expected_call_time.clock_type == ClockType.ROS_TIME
    assert infos[1].expected_call_time.nanoseconds > infos[0].expected_call_time.nanoseconds
    assert infos[1].actual_call_time >= infos[1].expected_call_time
    timer.callback = lambda: plain.append(1)
    count = len(infos)
    pair.spin_until(lambda: len(plain) >= 3, what='three calls of the swapped callback')
    assert len(infos) == count


def test_a_service_answers(pair):
    def answer(request, response):
        response.success, response.message = True, 'answered by the tick executor'
        return response
    pair.node.create_service(Trigger, 'ask', answer)
    client = pair.peer.create_client(Trigger, 'ask')
    pair.spin_until(client.service_is_ready, what='service')
    future = client.call_async(Trigger.Request())
    pair.spin_until(future.done, what='reply')
    assert future.result().message == 'answered by the tick executor'


def test_entities_made_and_destroyed_in_callbacks(pair):
    late, early = [], []
    state = {}

    def first(msg):
        early.append(msg.data)
        if 'late' not in state:         # a new subscription from inside a callback
            state['late'] = pair.node.create_subscription(Int32, 'numbers',
                                                          lambda m: late.append(m.data), 10)
        if msg.data == 3:               # and this one destroys itself
            pair.node.destroy_subscription(state['first'])

    state['first'] = pair.node.create_subscription(Int32, 'numbers', first, 10)
    publisher = pair.peer.create_publisher(Int32, 'numbers', 10)
    pair.connect(publisher)
    publisher.publish(Int32(data=0))
    pair.spin_until(lambda: 'late' in state, what='the first message')
    pair.connect(publisher, 2)
    for k in range(1, 8):
        publisher.publish(Int32(data=k))
        pair.spin_until(lambda: k in late, what=f'message {k} on the new subscription')
    assert early == [0, 1, 2, 3]            # none after it destroyed itself
    assert late == list(range(1, 8))


def test_a_callback_that_awaits_a_reply_finishes(pair):
    def answer(request, response):
        response.success, response.message = True, 'pong'
        return response
    pair.peer.create_service(Trigger, 'ping', answer)
    # Reentrant: in rclpy a callback awaiting a client of its own mutually exclusive group
    # waits for ever (the group is held while it awaits).
    group = ReentrantCallbackGroup()
    client = pair.node.create_client(Trigger, 'ping', callback_group=group)
    replies = []

    async def on_number(msg):
        reply = await client.call_async(Trigger.Request())
        replies.append((msg.data, reply.message))

    pair.node.create_subscription(Int32, 'numbers', on_number, 10, callback_group=group)
    publisher = pair.peer.create_publisher(Int32, 'numbers', 10)
    pair.connect(publisher)
    pair.spin_until(client.service_is_ready, what='service')
    publisher.publish(Int32(data=7))
    pair.spin_until(lambda: replies, what='the awaited reply')
    assert replies == [(7, 'pong')]
    # Back on its own path once the task is done: a further message is delivered too.
    publisher.publish(Int32(data=8))
    pair.spin_until(lambda: len(replies) == 2, what='the second reply')
    assert replies[1] == (8, 'pong')


def test_an_exception_in_a_callback_leaves_spin_once(pair):
    def fail(msg):
        raise ValueError(f'bad number {msg.data}')
    pair.node.create_subscription(Int32, 'numbers', fail, 10)
    publisher = pair.peer.create_publisher(Int32, 'numbers', 10)
    pair.connect(publisher)
    publisher.publish(Int32(data=5))
    deadline = time.monotonic() + 20.0
    with pytest.raises(ValueError, match='bad number 5'):
        while time.monotonic() < deadline:
            pair.executor.spin_once(timeout_sec=0.05)


def test_a_qos_event_reaches_its_handler(pair):
    events = []
    reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
    best_effort = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)
    pair.node.create_subscription(
        Int32, 'numbers', lambda m: None, reliable,
        event_callbacks=SubscriptionEventCallbacks(incompatible_qos=events.append))
    pair.peer.create_publisher(Int32, 'numbers', best_effort)
    pair.spin_until(lambda: events, what='the incompatible-QoS event')
    assert events[0].total_count >= 1
