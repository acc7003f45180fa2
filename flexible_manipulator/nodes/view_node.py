"""View node: the running graph in a web browser (`view.scene`, drawn with viser).

``ros2 run flexible_manipulator view`` (or ``bringup --view``, or the launch files'
``view:=true``) serves a page at http://127.0.0.1:8080 (parameters ``host``, ``port``)
showing the deformed arm from /tf, the tip's trace, the program path from the controller's
reference, and a servo plant's body and path from its markers: a view where RViz is not
installed. It only listens; it takes the latest /tf of each draw (``draw_period``).
"""

from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile

from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

from . import common
from ..settings import positive, Setting
from ..view.scene import ArmView, pose_matrix

LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
MARKER_KINDS = {Marker.LINE_STRIP: 'line', Marker.ARROW: 'arrow', Marker.SPHERE: 'sphere',
                Marker.CUBE: 'cube'}


def transform_matrix(transform):
    """4 x 4 matrix of a geometry_msgs/Transform."""
    t, q = transform.translation, transform.rotation
    return pose_matrix((t.x, t.y, t.z), (q.w, q.x, q.y, q.z))


class ViewNode(Node):
    """Feed `ArmView` from the graph's topics (module doc)."""

    SETTINGS = (
        Setting('host', '127.0.0.1',
                'Address the page is served on (loopback; 0.0.0.0 shares it with the '
                'network).'),
        Setting('port', 8080, 'Port of the page.'),
        Setting('draw_period', 0.05, 'Wall time between scene updates [s].', check=positive))

    def __init__(self, **node_options):
        """Start the page's server and subscribe."""
        super().__init__('view', **node_options)
        parameters = common.declare_settings(self, self.SETTINGS)
        host, port, period = (parameters[name] for name in ('host', 'port', 'draw_period'))
        self.view = ArmView(host, port)
        self.create_subscription(TFMessage, 'tf', lambda m: self.on_tf(m, True), 1)
        self.create_subscription(TFMessage, 'tf_static', lambda m: self.on_tf(m, False),
                                 LATCHED)
        self.create_subscription(JointState, 'controller/reference', self.on_reference, 10)
        self.create_subscription(MarkerArray, 'markers', self.on_markers, 10)
        self.create_timer(period, self.view.draw,
                          clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.get_logger().info(f'view of the graph at {self.view.url}')

    def on_tf(self, msg, moving):
        """Store the transforms of a TF message."""
        for tf in msg.transforms:
            self.view.frames.set(tf.child_frame_id, tf.header.frame_id,
                                 transform_matrix(tf.transform), moving)

    def on_reference(self, msg):
        """Add the program point of the reference rows named <p>_x, <p>_y (, <p>_z)."""
        names, values = list(msg.name), list(msg.position)
        chain = self.view.frames.arm_chain()
        if not chain or len(values) != len(names):
            return
        for i, name in enumerate(names):
            if name.endswith('_x') and name[:-2] + '_y' in names:
                point = [values[i], values[names.index(name[:-2] + '_y')], 0.0]
                if name[:-2] + '_z' in names:
                    point[2] = values[names.index(name[:-2] + '_z')]
                self.view.add_reference(point, self.view.frames.parent[chain[0]])
                return

    def on_markers(self, msg):
        """Store (or delete) the markers a servo plant publishes."""
        for m in msg.markers:
            kind = MARKER_KINDS.get(m.type)
            if kind is None and m.action != Marker.DELETE:
                continue                    # text labels and the like are not drawn
            p, q = m.pose.position, m.pose.orientation
            self.view.set_marker(
                (m.ns, m.id), None if m.action == Marker.DELETE else kind,
                m.header.frame_id, pose_matrix((p.x, p.y, p.z), (q.w, q.x, q.y, q.z)),
                (m.scale.x, m.scale.y, m.scale.z),
                tuple(int(255 * c) for c in (m.color.r, m.color.g, m.color.b)),
                [(point.x, point.y, point.z) for point in m.points])

    def destroy_node(self):
        """Stop the page's server too."""
        self.view.stop()
        super().destroy_node()


def main(args=None):
    """Entry point of the ``view`` executable."""
    common.run(ViewNode, args)


if __name__ == '__main__':
    main()
