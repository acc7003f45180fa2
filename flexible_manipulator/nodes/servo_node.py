"""Servo plant node: a rigid body or a Chaplygin sleigh with a servoconstraint, over ROS.

The model (`mechanics.servo`, a ``config/models`` file of ``type: servo_rigid_body`` or
``servo_sleigh``) is a left-invariant system whose constraint <a, w> = 0 is either enforced
by the plant itself with a reaction along the control direction b (realization ``servo``)
or left to a controller that commands the magnitude of the force or torque along b
(realization ``free``). Its topics (odometry in `mechanics.servo_odometry`'s layout,
servo_state, markers, TF), services, parameters and bad-input behaviour are documented
once, in doc/nodes.md ("servo_plant"). The shared plant machinery (timing, command
intake, services, fault state, diagnostics) is `simulated_plant.SimulatedPlant`; this
module adds the servo model, its messages and markers. No message ever carries a
non-finite number.
"""


import collections
import math

import numpy as np
import transforms3d

from geometry_msgs.msg import Point, TransformStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState
from std_msgs.msg import ColorRGBA
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

from . import common
from .common import stamp
from .simulated_plant import plant_settings, SimulatedPlant
from ..mechanics.servo_odometry import odometry_from_state
from ..config_checks import ConfigError
from ..settings import positive, Setting

SERVO_TYPES = ('servo_rigid_body', 'servo_sleigh')
PATH_RESOLUTION = 1e-4   # m: a path point is added once the origin moved this far


def load_servo_model(node):
    """Declare ``model`` and load a servo model; any model error becomes `ConfigError`."""
    try:
        model = common.model_parameter(node, node.SETTINGS[0])
    except ConfigError:
        raise
    except ValueError as error:  # e.g. RealizabilityError raised by the model itself
        raise ConfigError(f'parameter model: {error}') from None
    if not hasattr(model, 'output_names') or not hasattr(model, 'body_twist'):
        raise ConfigError(f"parameter model: {model.name!r} is not a servoconstraint model "
                          f"(expected a file of type {' or '.join(SERVO_TYPES)})")
    return model


def _path_length(value, name):
    """Check ``path_length``: an integer >= 2 (a path needs two points)."""
    if not (isinstance(value, int) and value >= 2):
        raise ConfigError(f'{name}: must be an integer >= 2, got {value!r}')
    return value


def initial_state(model):
    """Return the initial (q, v) of the model file, checked (`ConfigError` naming a problem)."""
    q = np.array(getattr(model, 'initial_q', model.neutral_configuration()), dtype=float)
    v = np.array(getattr(model, 'initial_v', np.zeros(model.nv)), dtype=float)
    if q.shape != (model.nq,) or v.shape != (model.nv,):
        raise ConfigError(f'initial state: expected q of {model.nq} and v of {model.nv} '
                          f'entries, got {q.size} and {v.size}')
    try:
        model.check_state(q, v)
    except ValueError as error:
        raise ConfigError(f'initial state: {error}') from None
    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
        raise ConfigError(f'initial state: not finite: q = {q.tolist()}, v = {v.tolist()}')
    return q, v


def quaternion(rotation):
    """(w, x, y, z) of a rotation matrix."""
    return transforms3d.quaternions.mat2quat(rotation)


def covector_arrow(model, covector):
    """Direction in the body frame in which to draw a covector a or b (unit or zero).

    Rigid body: the covector itself (so(3)* with the body axes). Sleigh, basis (rot, u, v):
    the force part (u, v) is horizontal in the sleigh frame and the torque part vertical.
    """
    c = np.asarray(covector, dtype=float)
    vec = c[:3] if model.kind == 'rigid_body' else np.array([c[1], c[2], c[0]])
    norm = float(np.linalg.norm(vec))
    return vec / norm if norm > 0.0 and math.isfinite(norm) else np.zeros(3)


def body_shape(model, size):
    """Marker type, scale, centre and orientation (w, x, y, z) of the body in its frame.

    Rigid body: the ellipsoid of the homogeneous solid with the same principal moments,
    semi-axes proportional to sqrt(I_j + I_k - I_i), largest diameter ``size``. Sleigh: a
    thin plate twice as long as wide with the sleigh's moment of inertia about its centre
    of mass (on the u axis at the offset), so the plate shows the inertia at mass scale.
    """
    if model.kind == 'rigid_body':
        inertia = np.asarray(getattr(model, 'inertia', np.eye(3)), dtype=float)
        moments, axes = np.linalg.eigh(0.5 * (inertia + inertia.T))
        if np.linalg.det(axes) < 0.0:
            axes[:, 2] = -axes[:, 2]
        semi = np.sqrt(np.maximum(moments.sum() - 2.0 * moments, 1e-12 * moments.max()))
        scale = size * semi / semi.max()
        return Marker.SPHERE, scale, np.zeros(3), quaternion(axes)
    mass = float(getattr(model, 'mass', 1.0))
    offset = float(getattr(model, 'offset', 0.0))
    inertia_o = float(np.ravel(getattr(model, 'inertia', 0.0))[0])
    central = inertia_o - mass * offset ** 2
    # Plate L x W with L = 2 W: I = m (L^2 + W^2) / 12 = 5 m W^2 / 12.
    width = math.sqrt(12.0 * central / (5.0 * mass)) if central > 0.0 and mass > 0.0 else 0.0
    if not (math.isfinite(width) and width > 0.0):
        width = 0.25 * size
    thickness = 0.05 * width
    return (Marker.CUBE, np.array([2.0 * width, width, thickness]),
            np.array([offset, 0.0, 0.5 * thickness]), np.array([1.0, 0.0, 0.0, 0.0]))


def color(r, g, b, a=1.0):
    """std_msgs/ColorRGBA."""
    return ColorRGBA(r=float(r), g=float(g), b=float(b), a=float(a))


def point(xyz):
    """geometry_msgs/Point."""
    return Point(x=float(xyz[0]), y=float(xyz[1]), z=float(xyz[2]))


class ServoNode(SimulatedPlant):
    """The servo plant: a servoconstraint model publishing odometry, outputs and markers."""

    SIMULATION_NAME = 'servo simulation'
    RESET_MESSAGE = 'servo plant reset to its initial state at t = 0'
    SETTINGS = (
        common.model_setting('sleigh_servo'),
        *plant_settings(0.001, 0.01, ' (on the group: RKMK)', SimulatedPlant.INPUT_NAME),
        Setting('path_length', 5000, 'Most points kept in the path marker.',
                check=_path_length),
        Setting('marker_period', 0.1, 'Wall time [s] between marker publications.',
                check=positive),
        Setting('marker_scale', 0.5, 'Length of the axis and a, b arrows [m].', check=positive))

    def __init__(self, **node_options):
        """Read and check parameters, build the model, create the ROS interfaces."""
        super().__init__('servo_plant', **node_options)
        self.publish_markers()

    def load_model(self):
        """Load the servoconstraint model named by the ``model`` parameter."""
        return load_servo_model(self)

    def plant_state(self):
        """Take the path and marker parameters; return the model file's initial state."""
        self.path_length = self.parameters['path_length']
        self.marker_period = self.parameters['marker_period']
        self.marker_scale = self.parameters['marker_scale']
        if self.world_frame == self.model.frame:
            raise ConfigError(f'parameter world_frame: must differ from the body frame '
                              f'{self.model.frame!r}')
        return initial_state(self.model)

    def setup(self):
        """Check the initial outputs; create publishers, messages and the marker timer."""
        self.data = self.model.create_data()
        self.outputs = self._outputs()
        if not np.all(np.isfinite(self.outputs)):
            bad = [n for n, x in zip(self.model.output_names, self.outputs)
                   if not math.isfinite(x)]
            raise ConfigError(f'initial state: non-finite outputs {", ".join(bad)}')
        self.margin_index = list(self.model.output_names).index('margin')
        self.path = collections.deque(maxlen=self.path_length)
        self.tf_pub = common.quiet_publisher(self, TFMessage, 'tf')
        self.odom_pub = common.quiet_publisher(self, Odometry, 'odom')
        self.state_pub = common.quiet_publisher(self, JointState, 'servo_state')
        self.marker_pub = common.quiet_publisher(self, MarkerArray, 'markers')
        self._prepare_messages()
        self.create_steady_timer(self.marker_period, self.publish_markers)

    def summary(self):
        """Give the kind, realization and realizability margin."""
        return (f'{self.model.kind}, realization {self.model.realization}, margin '
                f'<I^-1 a, b> = {self.margin:.6g}')

    # -- messages ---------------------------------------------------------------------
    def _prepare_messages(self):
        """Build the messages once; each publication only refreshes numbers."""
        body = self.model.frame
        self.transform = TransformStamped()
        self.transform.header.frame_id = self.world_frame
        self.transform.child_frame_id = body
        self.tf_message = TFMessage(transforms=[self.transform])
        self.odom = Odometry()
        self.odom.header.frame_id = self.world_frame
        self.odom.child_frame_id = body
        self.servo_state = JointState(name=list(self.model.output_names))
        self.body_markers = self._body_markers()
        self.path_marker = Marker(ns='path', id=0, type=Marker.LINE_STRIP, action=Marker.ADD,
                                  color=color(0.9, 0.9, 0.2))
        self.path_marker.header.frame_id = self.world_frame
        self.path_marker.pose.orientation.w = 1.0
        self.path_marker.scale.x = 0.01 * self.marker_scale

    def _body_markers(self):
        """Markers fixed in the body frame: axes, the a and b arrows, the body."""
        size = self.marker_scale
        markers = []

        def add(ns, marker_type, rgba, **fields):
            marker = Marker(ns=ns, id=0, type=marker_type, action=Marker.ADD,
                            frame_locked=True, color=color(*rgba), **fields)
            marker.header.frame_id = self.model.frame
            marker.pose.orientation.w = 1.0
            markers.append(marker)
            return marker

        for k, (name, rgba) in enumerate((('axis_x', (1, 0, 0)), ('axis_y', (0, 1, 0)),
                                          ('axis_z', (0, 0, 1)))):
            tip = np.zeros(3)
            tip[k] = 0.8 * size
            arrow = add(name, Marker.ARROW, rgba, points=[point((0, 0, 0)), point(tip)])
            arrow.scale.x, arrow.scale.y, arrow.scale.z = 0.02 * size, 0.04 * size, 0.08 * size
        for name, covector, rgba in (('a', self.model.a, (1.0, 0.5, 0.0)),
                                     ('b', self.model.b, (0.0, 0.8, 0.9))):
            direction = covector_arrow(self.model, covector)
            arrow = add(f'vector_{name}', Marker.ARROW, rgba,
                        points=[point((0, 0, 0)), point(size * direction)])
            arrow.scale.x, arrow.scale.y, arrow.scale.z = 0.03 * size, 0.06 * size, 0.1 * size
            label = add(f'label_{name}', Marker.TEXT_VIEW_FACING, rgba, text=name)
            label.pose.position = point(1.1 * size * direction)
            label.scale.z = 0.1 * size
        shape, scale, centre, orientation = body_shape(self.model, size)
        body = add('body', shape, (0.6, 0.6, 0.7, 0.5))
        body.scale.x, body.scale.y, body.scale.z = (float(s) for s in scale)
        body.pose.position = point(centre)
        o = body.pose.orientation
        o.w, o.x, o.y, o.z = (float(c) for c in orientation)
        return markers

    def _outputs(self):
        """Output values at the current state (input u for a free plant)."""
        u = self.sim.input if self.model.nu else None
        return np.asarray(self.model.outputs(self.data, self.sim.q, self.sim.v, u), dtype=float)

    @property
    def margin(self):
        """Realizability margin <I^-1 a, b> at the current state."""
        return float(self.outputs[self.margin_index])

    # -- commands and time ---------------------------------------------------------------
    def length_problem(self, count):
        """Say in words how many inputs are expected (none for a servo plant)."""
        nu = self.model.nu
        what = ('one input (magnitude along b)' if nu == 1 else
                f'{nu} inputs' if nu else 'no inputs (the servo plant has none)')
        return f'expected {what}, got {count} entries'

    def failure_text(self, error):
        """Why the integration stopped: the model's explanation (``blow-up: ...``) if any."""
        explain = getattr(self.model, 'failure', None)
        if explain is None:
            return str(error)
        return (f'{explain(self.sim.q, self.sim.v)}; integration stopped at the last good '
                f'state, t = {self.sim.time:.6f} s')

    def state_messages(self, now):
        """Refresh TF, odometry and outputs at ``now``; None (and a fault) if not finite."""
        position, orientation, angular, linear = odometry_from_state(self.model, self.sim.q,
                                                                     self.sim.v)
        outputs = self._outputs()
        numbers = np.concatenate([position, orientation, angular, linear, outputs])
        if not np.all(np.isfinite(numbers)):
            if not self.fault:
                bad = [n for n, x in zip(self.model.output_names, outputs)
                       if not math.isfinite(x)] or ['pose or twist']
                self.stop(f'non-finite values in {", ".join(bad)}; integration stopped at '
                          f't = {self.sim.time:.6f} s')
            return None
        self.outputs = outputs   # diagnostics report the last finite values
        w, x, y, z = orientation.tolist()
        px, py, pz = position.tolist()
        t = self.transform
        t.header.stamp = now
        t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = \
            px, py, pz
        r = t.transform.rotation
        r.w, r.x, r.y, r.z = w, x, y, z
        odom = self.odom
        odom.header.stamp = now
        odom.pose.pose.position.x, odom.pose.pose.position.y, odom.pose.pose.position.z = \
            px, py, pz
        o = odom.pose.pose.orientation
        o.w, o.x, o.y, o.z = w, x, y, z
        tw = odom.twist.twist
        tw.angular.x, tw.angular.y, tw.angular.z = angular.tolist()
        tw.linear.x, tw.linear.y, tw.linear.z = linear.tolist()
        self.servo_state.header.stamp = now
        self.servo_state.position = self.outputs.tolist()
        if not self.path or math.dist(self.path[-1], (px, py, pz)) > PATH_RESOLUTION:
            self.path.append((px, py, pz))
        return [(self.tf_pub, self.tf_message), (self.odom_pub, odom),
                (self.state_pub, self.servo_state)]

    def publish_markers(self):
        """Publish the body markers and the path of the frame origin."""
        now = stamp(self.sim.time)
        markers = list(self.body_markers)
        for marker in markers:
            marker.header.stamp = now
        if len(self.path) >= 2:
            self.path_marker.header.stamp = now
            self.path_marker.action = Marker.ADD
            self.path_marker.points = [Point(x=x, y=y, z=z) for x, y, z in self.path]
        else:
            self.path_marker.action = Marker.DELETE
            self.path_marker.points = []
        markers.append(self.path_marker)
        self.marker_pub.publish(MarkerArray(markers=markers))

    # -- services and diagnostics --------------------------------------------------------
    def on_reset(self, request, response):
        """Reset the simulation (`SimulatedPlant.on_reset`) with the path cleared."""
        self.path.clear()
        response = super().on_reset(request, response)
        self.publish_markers()
        return response

    def diagnostic_values(self):
        """Report kind, realization, realizability margin, residual, energy and the fault."""
        values = dict(zip(self.model.output_names, self.outputs.tolist()))
        return [('kind', self.model.kind),
                ('realization', self.model.realization),
                ('realizability_margin', f'{self.margin:.6g}'),
                ('residual', f"{values.get('residual', 0.0):.3e}"),
                ('energy', f"{values.get('energy', 0.0):.9g}"),
                ('fault', self.fault)]


def make_node(**node_options):
    """Make the ``servo_plant`` node (`nodes.container` composes it with others)."""
    return ServoNode(**node_options)


def main(args=None):
    """Entry point of the ``servo_plant`` executable."""
    common.run(ServoNode, args)


if __name__ == '__main__':
    main()
