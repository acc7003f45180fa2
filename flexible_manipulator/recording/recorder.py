"""Recorder node: the graph's topics into one MCAP file, as rosbag2 would record them.

``ros2 run flexible_manipulator record --ros-args -p path:=run.mcap`` (or ``bringup
--record FILE``, or the launch files' ``record:=FILE``). It takes each message serialized
(CDR, never converted to Python) and writes it with its type's ``ros2msg`` schema from the
installed interface packages (`definitions`), so rosbag2 (``ros2 bag info``), Foxglove,
PlotJuggler and `series` read the file. Messages are logged at their wall-clock receive
time [ns]; their header stamps keep the simulated time. The file is complete when the node
stops (SIGINT/SIGTERM). The file is written by the package's one MCAP writer
(`writer.McapWriter`). Topics not present in the graph record nothing. Once a second it
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

from .writer import McapWriter, type_name
from ..config_checks import ConfigError
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


class Recorder(Node):
    """Subscribe to `TOPICS` raw and write every message to an MCAP file (module doc)."""

    SETTINGS = (Setting('path', 'run.mcap', 'MCAP file to write (replaced).'),)

    def __init__(self, **node_options):
        """Open the file, register a schema per type and a channel per topic, subscribe."""
        super().__init__('recorder', **node_options)
        path = common.declare_settings(self, self.SETTINGS)['path']
        try:
            self.writer = McapWriter(path)
        except ImportError as error:
            raise ConfigError(str(error)) from None
        self.counts = self.writer.counts
        for topic, message_type, latched in TOPICS:
            self.create_subscription(
                message_type, topic, self._writer_of(topic, type_name(message_type)),
                LATCHED if latched else 1000, raw=True)
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

    def _writer_of(self, topic, name):
        """Return the callback that writes the raw messages of ``topic``."""
        resolved = self.resolve_topic_name(topic)
        self.writer.channel(resolved, name)

        def write(data):
            self.writer.write(resolved, data, time.time_ns())
        return write

    def destroy_node(self):
        """Finish the file (its summary and index) and close it."""
        if not self.writer.stream.closed:
            total = self.writer.close()
            self.get_logger().info(f'recorded {total} messages')
        super().destroy_node()


def main(args=None):
    """Entry point of the ``record`` executable."""
    common.run(Recorder, args)


if __name__ == '__main__':
    main()
