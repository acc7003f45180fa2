"""Recorder node: the graph's topics into one MCAP file, as rosbag2 would record them.

``ros2 run flexible_manipulator record --ros-args -p path:=run.mcap`` (or ``bringup
--record FILE``, or the launch files' ``record:=FILE``). It takes each message serialized
(CDR, never converted to Python) and writes it with its type's ``ros2msg`` schema from the
installed interface packages (`definitions`), so rosbag2 (``ros2 bag info``), Foxglove,
PlotJuggler and `series` read the file. Messages are logged at their wall-clock receive
time [ns]; their header stamps keep the simulated time. The file is complete when the node
stops (SIGINT/SIGTERM). Topics not present in the graph record nothing. Once a second it
reports on ``diagnostics`` (status ``recorder: recording``) how many messages of each
topic it has written: `bringup` starts the loop only once the controller's are coming.

Taking every per-tick message costs CPU beside the loop: on two CPUs a lock-step loop runs
slower while recorded.
"""

import time

from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from tf2_msgs.msg import TFMessage

from . import definitions
from ..model_config import ConfigError
from ..nodes import common
from ..settings import Setting

# (topic, type, latched) of what a run of the package's graph publishes.
TOPICS = (
    ('joint_states', JointState, False),
    ('modal_states', JointState, False),
    ('effort_controller/commands', Float64MultiArray, False),
    ('controller/reference', JointState, False),
    ('controller/residuals', JointState, False),
    ('tf', TFMessage, False),
    ('tf_static', TFMessage, True),
    ('robot_description', String, True),
    ('diagnostics', DiagnosticArray, False),
    ('odom', Odometry, False),
    ('servo_state', JointState, False),
)
LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)


def type_name(message_type):
    """Return 'package/msg/Type' of a message class."""
    return f'{message_type.__module__.split(".")[0]}/msg/{message_type.__name__}'


class Recorder(Node):
    """Subscribe to `TOPICS` raw and write every message to an MCAP file (module doc)."""

    SETTINGS = (Setting('path', 'run.mcap', 'MCAP file to write (replaced).'),)

    def __init__(self, **node_options):
        """Open the file, register a schema per type and a channel per topic, subscribe."""
        super().__init__('recorder', **node_options)
        path = common.declare_settings(self, self.SETTINGS)['path']
        try:
            from mcap.writer import CompressionType, Writer
        except ImportError:
            raise ConfigError('recording needs the Python packages mcap and mcap-ros2-support '
                              '(pip install mcap mcap-ros2-support)') from None
        self.stream = open(path, 'wb')
        self.writer = Writer(self.stream, compression=CompressionType.NONE)
        self.writer.start(profile='ros2', library='flexible_manipulator recorder')
        self.counts = {}
        schemas = {}
        for topic, message_type, latched in TOPICS:
            name = type_name(message_type)
            if name not in schemas:
                schemas[name] = self.writer.register_schema(
                    name=name, encoding='ros2msg',
                    data=definitions.schema(name).encode())
            subscription = self.create_subscription(
                message_type, topic, self._writer_of(topic, name, schemas[name]),
                LATCHED if latched else 1000, raw=True)
            self.counts[subscription.topic_name] = 0
        self.path = path
        self.diagnostics_pub = self.create_publisher(DiagnosticArray, 'diagnostics', 10)
        self.create_timer(1.0, self.publish_diagnostics,
                          clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.get_logger().info(f'recording {len(TOPICS)} topics to {path}')

    def publish_diagnostics(self):
        """Report the messages written per topic so far."""
        self.diagnostics_pub.publish(DiagnosticArray(status=[DiagnosticStatus(
            level=DiagnosticStatus.OK, name=f'{self.get_name()}: recording',
            message=f'{sum(self.counts.values())} messages to {self.path}',
            values=[KeyValue(key=topic, value=str(count))
                    for topic, count in self.counts.items()])]))

    def _writer_of(self, topic, name, schema_id):
        """Return the callback that writes the raw messages of ``topic``."""
        resolved = self.resolve_topic_name(topic)
        channel = self.writer.register_channel(topic=resolved, message_encoding='cdr',
                                               schema_id=schema_id)

        def write(data):
            now = time.time_ns()
            count = self.counts[resolved]
            self.writer.add_message(channel, log_time=now, data=data, publish_time=now,
                                    sequence=count)
            self.counts[resolved] = count + 1
        return write

    def destroy_node(self):
        """Finish the file (its summary and index) and close it."""
        if not self.stream.closed:
            self.writer.finish()
            self.stream.close()
            total = sum(self.counts.values())
            self.get_logger().info(f'recorded {total} messages')
        super().destroy_node()


def main(args=None):
    """Entry point of the ``record`` executable."""
    common.run(Recorder, args)


if __name__ == '__main__':
    main()
