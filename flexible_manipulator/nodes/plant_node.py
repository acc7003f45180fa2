"""Plant node: integrates a mechanical model and talks like a robot driver.

Subscribes
    effort_controller/commands  std_msgs/Float64MultiArray, one effort per entry of the
                                ``joints`` parameter [N m] (ros2_control forward command
                                controller layout)
Publishes
    joint_states        sensor_msgs/JointState of the actuated joints (position [rad or m],
                        velocity, applied effort)
    modal_states        sensor_msgs/JointState of the modal coordinates of the flexible links
                        (only for models with modes): names <link>_y<k> / <link>_z<k>,
                        position q_k [m per unit mode, tip deflection W_k(L) q_k = +-2 q_k],
                        velocity q_k' ; same stamp as joint_states
    tf                  tf2_msgs/TFMessage: every joint, and the deformed section and tip
                        frames of flexible links (<link>_s<k>, <link>_tip); world->base
                        for a free-floating base
    tf_static           tf2_msgs/TFMessage, transient local: world->base (fixed base), the
                        fixed frames of rigid links, last tip->tool
    robot_description   std_msgs/String, transient local: URDF of the model
    clock               rosgraph_msgs/Clock, simulated time (when publish_clock)
    diagnostics         diagnostic_msgs/DiagnosticArray, once per wall second
Services
    ~/reset             std_srvs/Trigger: initial state, time zero, zero effort
    ~/pause             std_srvs/SetBool: true pauses simulated time, false resumes

Timing modes: ``realtime`` advances one ``update_period`` per tick of a wall-clock timer;
``lockstep`` advances one ``update_period`` per received command, so a closed loop runs as
fast as the computer allows and is deterministic. In lockstep the plant re-publishes the
current state every ``lockstep_resend_period`` wall seconds while no command comes (start-up,
a controller that restarted), without advancing time.

Bad commands (wrong length, NaN or infinite entries) are rejected with a logged reason. The
plant keeps applying the last valid command until it is ``command_timeout`` seconds of
simulated time old, then applies zero effort; efforts beyond the model's effort limits are
clipped (as an amplifier saturates). A state that becomes non-finite pauses the plant,
and the error is reported on /diagnostics; ~/reset recovers.
"""

import math
import time

import numpy as np
import transforms3d
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import TransformStamped
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import SetBool, Trigger
from tf2_msgs.msg import TFMessage

from . import common
from .common import stamp
from ..description.urdf import joint_frames, urdf
from ..mechanics.integrators import METHODS
from ..mechanics.simulation import NonFiniteStateError, Simulation
from ..model_config import ConfigError

LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)


def transform(frame, time_msg):
    """Build the transform message of a `JointFrame` at its zero joint angle."""
    msg = TransformStamped()
    msg.header.stamp = time_msg
    msg.header.frame_id = frame.parent
    msg.child_frame_id = frame.child
    msg.transform.translation.x, msg.transform.translation.y, msg.transform.translation.z = \
        (float(c) for c in frame.xyz)
    r = msg.transform.rotation
    # URDF rpy is fixed-axis roll-pitch-yaw ('sxyz'); transforms3d returns (w, x, y, z).
    r.w, r.x, r.y, r.z = (float(c) for c in transforms3d.euler.euler2quat(*frame.rpy, 'sxyz'))
    return msg


class PlantNode(Node):
    """ROS adapter around `Simulation`: parameters in, messages out."""

    def __init__(self):
        """Read and check parameters, build the model, create the ROS interfaces."""
        super().__init__('plant')
        self.model = common.model_parameter(self)
        self.command_index = common.joint_order(
            self, self.model, 'Joint order of the entries of each effort command.')
        self.timing_mode = common.choice(self, 'timing_mode', 'realtime',
                                         ('realtime', 'lockstep'), 'How simulated time advances.')
        integrator = common.choice(self, 'integrator', 'rk4', METHODS,
                                   'Fixed-step integration scheme (ros2: linearly implicit, '
                                   'for stiff elastic modes).')
        step = common.positive(self, 'integration_step', 0.0005, 'Internal step [s].')
        self.update_period = common.positive(
            self, 'update_period', 0.002,
            'Simulated time per state publication, and per command in lockstep [s].')
        self.command_timeout = common.positive(
            self, 'command_timeout', 0.05,
            'Simulated age [s] after which the last valid command is replaced by zero effort.')
        self.resend_period = common.positive(
            self, 'lockstep_resend_period', 0.2,
            'Wall time [s] after which lockstep re-publishes an unanswered state.')
        self.publish_clock = common.declare(self, 'publish_clock', True,
                                            'Publish simulated time on /clock.')
        self.world_frame = common.declare(self, 'world_frame', 'world', 'Root TF frame.')
        n = self.model.n_joints
        q0, v0 = self.model.neutral_configuration(), np.zeros(self.model.nv)
        q0[:n] = common.float_array(self, 'initial_positions', n,
                                    'Initial joint positions [rad or m]; modes start at zero.')
        v0[:n] = common.float_array(self, 'initial_velocities', n,
                                    'Initial joint velocities [rad/s or m/s].')
        try:
            self.sim = Simulation(self.model, step, integrator, q0, v0)
            self.sim.steps_in(self.update_period)
        except ValueError as error:
            raise ConfigError(f'parameters integration_step/update_period: {error}') from None

        self.effort = np.zeros(self.model.nu)       # applied to the model
        self.last_command = np.zeros(self.model.nu)  # last valid command, model order
        self.last_command_time = -math.inf           # simulated time it arrived
        self.paused = False
        self.fault = ''
        self.rejected = 0
        self.clipped = 0
        self.warn_throttled = common.ReasonThrottle(self.get_logger().warning)
        self.waiting_since = time.monotonic()
        self._wall_start, self._sim_start = time.monotonic(), 0.0

        self.frames = joint_frames(self.model, self.world_frame)
        # The floating base's transform (if any) comes first, straight from the state.
        self.moving = [f for f in self.frames if f.moving]
        self.floating = self.model.floating_base is not None
        self.tf_data = self.model.create_data()
        self.transforms = self.model.frame_transforms(
            [(f.link, f.x if f.kind == 'section' else None) for f in self.moving
             if f.kind != 'base'])
        self.joint_state_pub = self.create_publisher(JointState, 'joint_states', 10)
        self.modal_state_pub = (self.create_publisher(JointState, 'modal_states', 10)
                                if self.model.n_modes else None)
        self.tf_pub = self.create_publisher(TFMessage, 'tf', 10)
        self.tf_static_pub = self.create_publisher(TFMessage, 'tf_static', LATCHED)
        self.description_pub = self.create_publisher(String, 'robot_description', LATCHED)
        self.clock_pub = self.create_publisher(ClockMsg, 'clock', 10)
        self.diagnostics_pub = self.create_publisher(DiagnosticArray, 'diagnostics', 10)
        self.create_subscription(Float64MultiArray, 'effort_controller/commands',
                                 self.on_command, 10)
        self.create_service(Trigger, '~/reset', self.on_reset)
        self.create_service(SetBool, '~/pause', self.on_pause)

        self._prepare_messages()
        self.description_pub.publish(String(data=urdf(self.model, self.world_frame)))
        self.tf_static_pub.publish(TFMessage(transforms=[
            transform(f, stamp(0.0)) for f in self.frames if not f.moving]))
        # Timers run on the steady clock: with use_sim_time the node clock follows /clock,
        # which this node itself publishes, so a ROS-time timer would never fire.
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        if self.timing_mode == 'realtime':
            self.create_timer(self.update_period, self.update, clock=steady)
        else:
            self.create_timer(self.resend_period / 4, self.on_resend_check, clock=steady)
        self.create_timer(1.0, self.publish_diagnostics, clock=steady)
        self.publish_state()
        self.get_logger().info(
            f"simulating '{self.model.name}' ({n} joints, {self.model.n_modes} modes) in "
            f'{self.timing_mode} mode: '
            f'{integrator} step {step} s, update period {self.update_period} s')

    def _prepare_messages(self):
        """Build the messages once; each publication only refreshes numbers."""
        self.joint_state = JointState(name=list(self.model.joint_names))
        self.modal_state = JointState(name=list(self.model.mode_names))
        self.tf_message = TFMessage(transforms=[transform(f, stamp(0.0)) for f in self.moving])
        self.clock_message = ClockMsg()

    # -- commands -----------------------------------------------------------------------
    def on_command(self, msg):
        """Validate a command; in lockstep, apply it and advance one update period."""
        data = msg.data
        if len(data) != len(self.command_index):
            self.reject('length', f'expected {len(self.command_index)} efforts (joints '
                        f'{self.joint_names_in_command_order()}), got {len(data)}')
        elif not all(math.isfinite(x) for x in data):
            self.reject('non-finite', f'non-finite effort in {list(data)}')
        else:
            self.last_command[self.command_index] = data
            self.last_command_time = self.sim.time
        if self.timing_mode == 'lockstep':
            self.update()

    def joint_names_in_command_order(self):
        """Return the joint names as ordered by the ``joints`` parameter."""
        return [self.model.joint_names[i] for i in self.command_index]

    def reject(self, kind, reason):
        """Count and log a rejected command; the previous valid command stays in force."""
        self.rejected += 1
        self.warn_throttled(kind, f'rejected effort command: {reason}; holding the last '
                                  'valid command')

    def select_effort(self):
        """Effort to apply now: the last valid command while fresh, else zero; clipped."""
        fresh = self.sim.time - self.last_command_time <= self.command_timeout + 1e-12
        if fresh:
            np.clip(self.last_command, -self.model.effort_limit, self.model.effort_limit,
                    out=self.effort)
            if np.any(self.effort != self.last_command):
                self.clipped += 1
        else:
            self.effort[:] = 0.0

    # -- time -----------------------------------------------------------------------
    def on_resend_check(self):
        """Lockstep mode: re-publish a state nobody answered (start-up, lost command)."""
        if time.monotonic() - self.waiting_since > self.resend_period:
            self.publish_state()

    def update(self):
        """Advance one update period (unless paused or faulted) and publish the state.

        Called per wall-clock tick in realtime mode, per received command in lockstep.
        """
        if not self.paused:
            self.select_effort()
            try:
                self.sim.advance(self.effort, self.update_period)
            except NonFiniteStateError as error:
                self.paused = True
                self.fault = str(error)
                self.get_logger().error(f'{error}; plant paused, call ~/reset to recover')
                self.publish_diagnostics()
        self.publish_state()

    def publish_state(self):
        """Publish joint states, moving transforms and the clock at the current time."""
        now = stamp(self.sim.time)
        js = self.joint_state
        js.header.stamp = now
        n = self.model.n_joints
        q, v = self.sim.q, self.sim.v
        js.position = q[:n].tolist()
        js.velocity = v[:n].tolist()
        js.effort = self.effort.tolist()
        self.transforms.update(self.tf_data, q)
        messages = self.tf_message.transforms
        if self.floating:
            base, b = messages[0], self.model.nv - 6
            base.header.stamp = now
            t, r = base.transform.translation, base.transform.rotation
            t.x, t.y, t.z = q[b:b + 3].tolist()
            r.w, r.x, r.y, r.z = q[b + 3:b + 7].tolist()
            messages = messages[1:]
        for msg, rotation, position in zip(messages, self.transforms.R, self.transforms.p):
            msg.header.stamp = now
            t = msg.transform.translation
            t.x, t.y, t.z = position.tolist()
            r = msg.transform.rotation
            r.w, r.x, r.y, r.z = transforms3d.quaternions.mat2quat(rotation).tolist()
        if self.modal_state_pub is not None:
            modes = slice(n, n + self.model.n_modes)
            self.modal_state.header.stamp = now
            self.modal_state.position = q[modes].tolist()
            self.modal_state.velocity = v[modes].tolist()
            self.modal_state_pub.publish(self.modal_state)
        if self.publish_clock:
            self.clock_message.clock = now
            self.clock_pub.publish(self.clock_message)
        self.tf_pub.publish(self.tf_message)
        self.joint_state_pub.publish(js)
        self.waiting_since = time.monotonic()

    # -- services and diagnostics --------------------------------------------------------
    def on_reset(self, request, response):
        """Go back to the initial state at time zero, zero effort, faults cleared."""
        self.sim.reset()
        self.effort[:] = 0.0
        self.last_command[:] = 0.0
        self.last_command_time = -math.inf
        self.fault = ''
        self.paused = False
        self._wall_start, self._sim_start = time.monotonic(), 0.0
        self.publish_state()
        response.success = True
        response.message = 'plant reset to its initial state at t = 0'
        return response

    def on_pause(self, request, response):
        """Pause (data = true) or resume (false) simulated time."""
        if not request.data and self.fault:
            response.success = False
            response.message = f'cannot resume: {self.fault}; call ~/reset first'
            return response
        self.paused = bool(request.data)
        self._wall_start, self._sim_start = time.monotonic(), self.sim.time
        response.success = True
        response.message = 'paused' if self.paused else 'running'
        return response

    def publish_diagnostics(self):
        """Report plant health: faults, rejected and clipped commands, real-time factor."""
        wall = time.monotonic() - self._wall_start
        rtf = (self.sim.time - self._sim_start) / wall if wall > 0 else 0.0
        if self.fault:
            level, message = DiagnosticStatus.ERROR, self.fault
        elif self.rejected:
            level, message = DiagnosticStatus.WARN, f'{self.rejected} effort commands rejected'
        else:
            level, message = DiagnosticStatus.OK, 'paused' if self.paused else 'running'
        status = DiagnosticStatus(level=level, name=f'{self.get_name()}: simulation',
                                  hardware_id=self.model.name, message=message, values=[
                                      KeyValue(key='simulated_time', value=f'{self.sim.time:.6f}'),
                                      KeyValue(key='real_time_factor', value=f'{rtf:.3f}'),
                                      KeyValue(key='paused', value=str(self.paused)),
                                      KeyValue(key='rejected_commands', value=str(self.rejected)),
                                      KeyValue(key='clipped_commands', value=str(self.clipped)),
                                  ])
        msg = DiagnosticArray(status=[status])
        msg.header.stamp = stamp(self.sim.time)
        self.diagnostics_pub.publish(msg)


def main(args=None):
    """Entry point of the ``plant`` executable."""
    common.run(PlantNode, args)


if __name__ == '__main__':
    main()
