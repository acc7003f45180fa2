"""View node: the running graph in a web browser, a control panel beside it (viser).

``ros2 run flexible_manipulator view`` (or ``bringup --view``, or the launch files'
``view:=true``) serves a page at http://127.0.0.1:8080 (parameters ``host``, ``port``):
the arm as it is (`view.scene`: tubes of the links' sections from /tf and
/robot_description, joints, payloads, base, frames), the program's path and target from
the controller's reference, a servo plant's markers; a status panel from /diagnostics
(`view.status`); buttons calling the nodes' services (the plant's ``~/pause``,
``~/reset``, the controller's ``~/enable`` and its ``active_program`` parameter), each
disabled with the reason while its service is not there (a real arm's driver has none),
and only where the access gate lets them act (`view.access`: served beyond loopback the
page is read-only unless ``access_token`` is set, and then a page acts once it gave it);
live plots (`view.panel`) of the residuals (``controller/residuals``), the efforts
against their limits (``joint_states``, else ``effort_controller/commands``) and the
largest elastic deflection of each link (from /tf).

It must not slow the graph: the per-tick topics (/tf, the joint states, the reference,
the residuals, the commands) are read by a `Sampler`, subscriptions of a second node that
no executor spins: the middleware keeps the latest message of each, and the view takes it
at its own pace, every ``draw_period`` of wall time (no Python callback per tick: at the
lock-step rate, five of them cost the view a third of a CPU). A message it cannot use
(not finite, wrong lengths, a URDF it cannot read) is skipped: the page keeps the last
good state and says what was wrong.
"""

import math
import queue

import numpy as np
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile

from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import SetBool, Trigger
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

from . import common
from ..settings import positive, Setting
from ..view import description as robot, status
from ..view.access import Access, check_token
from ..view.panel import ControlPanel, History
from ..view.scene import ArmView, pose_matrix

LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
MARKER_KINDS = {Marker.LINE_STRIP: 'line', Marker.ARROW: 'arrow', Marker.SPHERE: 'sphere',
                Marker.CUBE: 'cube'}
TF_KEPT = 2             # /tf messages kept between draws (a driver and a plant may share it)
SILENT = 3.0            # wall seconds without a node's diagnostics before it is "not heard"
NOTES = 4               # bad-input notes shown


def transform_matrix(transform):
    """4 x 4 matrix of a geometry_msgs/Transform."""
    t, q = transform.translation, transform.rotation
    return pose_matrix((t.x, t.y, t.z), (q.w, q.x, q.y, q.z))


def finite(values):
    """Return the values as a float array; ValueError if any is not finite."""
    array = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(array)):
        raise ValueError('values not finite')
    return array


def guarded(what):
    """Decorate a callback: an exception it raises is noted (`ViewNode.note`), never raised.

    Bad input must not end the view (nor, through bringup, the graph): it keeps the last
    good state and says what was wrong.
    """
    def decorate(callback):
        def run(self, *args):
            try:
                return callback(self, *args)
            except Exception as error:      # noqa: B902 - any bad input, noted
                self.note(what, f'{type(error).__name__}: {error}')
        run.__doc__, run.__name__ = callback.__doc__, callback.__name__
        return run
    return decorate


class Sampler:
    """Subscriptions read on demand: the latest messages of per-tick topics (module doc).

    They belong to a node no executor spins, so no callback runs per message; `take`
    takes what the middleware holds (the last ``depth`` messages) with the call an
    executor makes (``Subscription.handle.take_message``).
    """

    def __init__(self, owner):
        """Create the sampling node beside the node ``owner`` (its context and namespace).

        It takes no command-line arguments (a ``__node`` remapping would give it the
        owner's name); the owner resolves the topics, remappings included.
        """
        self.owner = owner
        self.node = Node(f'{owner.get_name()}_sampler', namespace=owner.get_namespace(),
                         context=owner.context, use_global_arguments=False,
                         start_parameter_services=False)
        self.subscriptions = {}

    def add(self, msg_type, topic, depth=1):
        """Subscribe to ``topic``, keeping its last ``depth`` messages until taken."""
        self.subscriptions[topic] = self.node.create_subscription(
            msg_type, self.owner.resolve_topic_name(topic), lambda msg: None, depth)

    def take(self, topic):
        """Return the messages on ``topic`` since the last call, oldest first."""
        subscription, taken = self.subscriptions[topic], []
        with subscription.handle:
            while True:
                found = subscription.handle.take_message(subscription.msg_type, False)
                if found is None:
                    return taken
                taken.append(found[0])

    def destroy(self):
        """Destroy the sampling node."""
        self.node.destroy_node()


class ViewNode(Node):
    """Feed `ArmView` and `ControlPanel` from the graph's topics (module doc)."""

    SETTINGS = (
        Setting('host', '127.0.0.1',
                'Address the page is served on (loopback; 0.0.0.0 shares it with the '
                'network).'),
        Setting('port', 8080, 'Port of the page.'),
        Setting('access_token', '',
                'Token a page must give before its controls act (at least 12 characters; '
                'never logged). Empty: the controls act on a loopback host and the page is '
                'read-only on any other.', check=check_token),
        Setting('draw_period', 0.1,
                'Wall time between scene updates [s]; the plots and the panel are sampled '
                'every other update.', check=positive))

    def __init__(self, **node_options):
        """Start the page's server and subscribe."""
        super().__init__('view', **node_options)
        parameters = common.declare_settings(self, self.SETTINGS)
        host, port, period = (parameters[name] for name in ('host', 'port', 'draw_period'))
        self.access = Access(host, parameters['access_token'],
                             log=lambda text: self.get_logger().warning(text))
        self.view = ArmView(host, port)
        self.requests = queue.SimpleQueue()     # button presses, from viser's thread
        self.panel = ControlPanel(self.view.server, lambda *r: self.requests.put(r),
                                  self.access)
        self.notes = []                 # what was wrong with the input, newest last
        self.controller = self.plant = None      # (status.State, wall time heard)
        self.figures = status.Figures()
        self.programs = []
        self.service_clients = {}               # service name -> client
        self.histories = {key: History() for key, _ in ControlPanel.PLOTS}
        self.ticks = 0
        self.applied_seen = False       # joint_states carried efforts (then commands unused)
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.steady = steady

        self.sampler = Sampler(self)
        self.sampler.add(TFMessage, 'tf', TF_KEPT)
        for msg_type, topic in ((JointState, 'controller/reference'),
                                (JointState, 'controller/residuals'),
                                (JointState, 'joint_states'),
                                (Float64MultiArray, 'effort_controller/commands')):
            self.sampler.add(msg_type, topic)
        self.create_subscription(TFMessage, 'tf_static', lambda m: self.on_tf(m, False),
                                 LATCHED)
        self.create_subscription(String, 'robot_description', self.on_description, LATCHED)
        self.create_subscription(MarkerArray, 'markers', self.on_markers, 10)
        self.create_subscription(DiagnosticArray, 'diagnostics', self.on_diagnostics, 20)
        self.create_timer(period, self.on_draw, clock=steady)
        self.get_logger().info(f'view of the graph at {self.view.url}; '
                               f'{self.access.describe()}')

    # -- input ------------------------------------------------------------------------------
    def note(self, what, error):
        """Say (log, panel) that a message on ``what`` was unusable, once per reason."""
        text = f'bad {what}: {error}; showing the last good state'
        if text not in self.notes:
            self.get_logger().warning(text)
            self.notes = (self.notes + [text])[-NOTES:]

    @guarded('/tf')
    def on_tf(self, msg, moving):
        """Store the transforms of a TF message (each unusable one is noted and skipped)."""
        for tf in msg.transforms:
            try:
                self.view.frames.set(tf.child_frame_id, tf.header.frame_id,
                                     transform_matrix(tf.transform), moving)
            except ValueError as error:
                self.note('/tf', error)

    @guarded('robot_description')
    def on_description(self, msg):
        """Read the robot description; a URDF that cannot be read keeps the last one."""
        try:
            self.view.description = robot.read(msg.data)
        except (robot.DescriptionError, ValueError, TypeError) as error:
            self.note('robot_description', error)

    def take(self, topic):
        """Return the latest message on ``topic`` since the last call, or None."""
        taken = self.sampler.take(topic)
        return taken[-1] if taken else None

    def on_reference(self, msg):
        """Add the program point of the reference rows named <p>_x, <p>_y (, <p>_z)."""
        names, values = list(msg.name), finite(msg.position)
        chain = self.view.frames.arm_chain()
        if len(values) != len(names):
            raise ValueError(f'{len(names)} names, {len(values)} positions')
        if not chain:
            return
        for i, name in enumerate(names):
            if name.endswith('_x') and name[:-2] + '_y' in names:
                point = [values[i], values[names.index(name[:-2] + '_y')], 0.0]
                if name[:-2] + '_z' in names:
                    point[2] = values[names.index(name[:-2] + '_z')]
                self.view.add_reference(point, self.view.frames.parent[chain[0]])
                return

    @guarded('markers')
    def on_markers(self, msg):
        """Store (or delete) the markers a servo plant publishes."""
        for m in msg.markers:
            kind = MARKER_KINDS.get(m.type)
            if kind is None and m.action != Marker.DELETE:
                continue                    # text labels and the like are not drawn
            p, q = m.pose.position, m.pose.orientation
            try:
                pose = pose_matrix(finite((p.x, p.y, p.z)), finite((q.w, q.x, q.y, q.z)))
                points = finite([(point.x, point.y, point.z) for point in m.points])
                scale = finite((m.scale.x, m.scale.y, m.scale.z))
            except ValueError as error:
                self.note('marker', error)
                continue
            self.view.set_marker(
                (m.ns, m.id), None if m.action == Marker.DELETE else kind,
                m.header.frame_id, pose, scale,
                tuple(int(255 * min(max(c, 0.0), 1.0)) for c in (m.color.r, m.color.g, m.color.b)),
                points)

    @guarded('diagnostics')
    def on_diagnostics(self, msg):
        """Classify the controllers' and plants' statuses; fold in their figures."""
        now = self.wall()
        for entry in msg.status:
            values = {kv.key: kv.value for kv in entry.values}
            if status.is_controller(entry.name):
                self.controller = (status.classify_controller(entry.name, entry.level,
                                                              entry.message, values), now)
                self.programs = [p.strip() for p in values.get('programs', '').split(',')
                                 if p.strip()]
            elif status.is_plant(entry.name):
                self.plant = (status.classify_plant(entry.name, entry.level, entry.message,
                                                    values), now)
            else:
                continue
            status.update_figures(self.figures, entry.name, values)

    def wall(self):
        """Return the steady clock [s]."""
        return self.steady.now().nanoseconds * 1e-9

    # -- drawing and sampling ---------------------------------------------------------------
    def on_draw(self):
        """Serve the buttons, draw the scene; every other time, the plots and the panel.

        Each part on its own: an exception in one is noted (the page keeps its last state,
        the note says why) and holds up neither the others nor a button press.
        """
        self.serve_requests()
        self.draw_scene()
        self.ticks += 1
        if self.ticks % 2 == 0:
            self.sample()
            self.refresh_panel()

    @guarded('button')
    def serve_requests(self):
        """Call the services of the button presses since the last draw."""
        while not self.requests.empty():
            self.serve(*self.requests.get())

    @guarded('drawing')
    def draw_scene(self):
        """Take the latest /tf and reference, draw the scene."""
        for msg in self.sampler.take('tf'):
            self.on_tf(msg, True)
        try:
            reference = self.take('controller/reference')
            if reference is not None:
                self.on_reference(reference)
        except ValueError as error:
            self.note('controller/reference', error)
        self.view.show.update(world=self.panel.show_world.value,
                              tool=self.panel.show_tool.value,
                              trace=self.panel.show_trace.value)
        self.view.draw()

    @guarded('plots')
    def sample(self):
        """Add the latest residuals, efforts and deflections to the plots' windows."""
        history = self.histories
        try:
            residuals = self.take('controller/residuals')
            if residuals is not None:
                values = finite(residuals.position)
                if len(values) != len(residuals.name):
                    raise ValueError(f'{len(residuals.name)} names, {len(values)} residuals')
                history['residuals'].add(common.seconds(residuals.header.stamp),
                                         residuals.name, values)
        except ValueError as error:
            self.note('controller/residuals', error)
        try:
            self.sample_efforts()
        except ValueError as error:
            self.note('efforts', error)
        deflections = self.view.deflections
        if deflections:
            t = self.sample_time()
            if t is not None:
                history['deflection'].add(t, list(deflections), list(deflections.values()))
        self.panel.plot('residuals', history['residuals'], 'φ [m or rad]')
        self.panel.plot('efforts', history['efforts'], 'effort / limit')
        self.panel.plot('deflection', history['deflection'], '[m]')

    def sample_time(self):
        """Return the time [s] of the latest sample: the residuals', else the plant's."""
        samples = self.histories['residuals'].samples or self.histories['efforts'].samples
        return samples[-1][0] if samples else self.figures.simulated_time

    def sample_efforts(self):
        """Efforts over their limits: the applied ones of joint_states, else the commands."""
        limits = self.view.description.effort_limits if self.view.description else {}
        state = self.take('joint_states')
        if state is not None and len(state.effort):
            self.applied_seen = True
            if len(state.effort) != len(state.name):
                raise ValueError(f'joint_states: {len(state.name)} names, '
                                 f'{len(state.effort)} efforts')
            efforts = finite(state.effort)
            scale = [limits.get(name, math.inf) for name in state.name]
            ratio = [e / s if math.isfinite(s) else e for e, s in zip(efforts, scale)]
            self.histories['efforts'].add(common.seconds(state.header.stamp), state.name,
                                          ratio)
            return
        command = self.take('effort_controller/commands')
        if command is not None and not self.applied_seen:      # a servo plant: commands
            t = self.sample_time()
            if t is not None:
                self.histories['efforts'].add(t, [f'u{k}' for k in range(len(command.data))],
                                              finite(command.data))

    @guarded('panel')
    def refresh_panel(self):
        """Show the states (forgotten after `SILENT` s), the figures, the buttons' state."""
        now = self.wall()
        controller, plant = ((entry[0] if entry and now - entry[1] < SILENT else None)
                             for entry in (self.controller, self.plant))
        self.panel.set_status(status.panel_html(controller, plant, self.figures, self.notes))
        self.panel.set_legend(self.view.legend())
        self.panel.set_programs(self.programs, self.figures.program)
        plant_node = plant.node if plant else (self.plant[0].node if self.plant else None)
        control_node = (controller.node if controller else
                        (self.controller[0].node if self.controller else None))
        self.panel.set_available('plant', self.missing(
            plant_node, ('pause', SetBool), ('reset', Trigger),
            absent='no simulated plant heard on /diagnostics (a real arm has no pause or '
                   'reset here)'))
        self.panel.set_available('controller', self.missing(
            control_node, ('enable', SetBool),
            absent='no controller heard on /diagnostics'))
        self.panel.set_available('program', self.missing(
            control_node, ('set_parameters', SetParameters),
            absent='no controller heard on /diagnostics') or (
            '' if self.programs else 'this controller reports no programs to switch '
            '(the servo controller realizes one servoconstraint)'))

    def client(self, node, service, srv_type):
        """Return the client of ``/<node>/<service>`` (made once)."""
        name = f'{node}/{service}'
        if name not in self.service_clients:
            self.service_clients[name] = self.create_client(srv_type, name)
        return self.service_clients[name]

    def missing(self, node, *services, absent):
        """Return why the buttons calling ``node``'s ``services`` are off, or '' if ready."""
        if node is None:
            return absent
        for service, srv_type in services:
            if not self.client(node, service, srv_type).service_is_ready():
                return f'service {node}/{service} is not offered'
        return ''

    def serve(self, action, argument):
        """Call the service of a button press; its reply is shown when it comes."""
        plant = self.plant[0].node if self.plant else None
        controller = self.controller[0].node if self.controller else None
        if action in ('pause', 'resume', 'reset') and plant is None:
            return self.panel.set_reply(action, False, 'no plant')
        if action in ('enable', 'disable', 'program') and controller is None:
            return self.panel.set_reply(action, False, 'no controller')
        if action in ('pause', 'resume'):
            name, future = f'{plant}/pause', self.client(plant, 'pause', SetBool).call_async(
                SetBool.Request(data=action == 'pause'))
        elif action == 'reset':
            name, future = f'{plant}/reset', self.client(plant, 'reset', Trigger).call_async(
                Trigger.Request())
        elif action in ('enable', 'disable'):
            name, future = f'{controller}/enable', self.client(
                controller, 'enable', SetBool).call_async(SetBool.Request(
                    data=action == 'enable'))
        else:
            if argument not in self.programs:
                return self.panel.set_reply('program', False, f'no program {argument!r}')
            value = ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=argument)
            name, future = f'{controller} active_program', self.client(
                controller, 'set_parameters', SetParameters).call_async(
                    SetParameters.Request(parameters=[Parameter(name='active_program',
                                                                value=value)]))
        future.add_done_callback(lambda done: self.replied(name, argument, done))

    def replied(self, name, argument, future):
        """Show a service's reply (`serve`)."""
        try:
            response = future.result()
        except Exception as error:          # noqa: B902 - a failed call is shown, not raised
            return self.panel.set_reply(name, False, f'call failed: {error}')
        if isinstance(response, SetParameters.Response):
            result = response.results[0] if response.results else None
            ok = bool(result and result.successful)
            text = f'switched to {argument!r}' if ok else (result.reason if result else '?')
            return self.panel.set_reply(name, ok, text)
        self.panel.set_reply(name, response.success, response.message)

    def destroy_node(self):
        """Stop the page's server and the sampler too."""
        self.view.stop()
        self.sampler.destroy()
        super().destroy_node()


def main(args=None):
    """Entry point of the ``view`` executable."""
    common.run(ViewNode, args)


if __name__ == '__main__':
    main()
