"""Controller node: computed-torque tracking of a joint program, over topics only.

It never knows whether a simulation or a real arm answers: it reacts to each joint state
with one effort command, timed by the state's own stamp.

Subscribes
    joint_states                sensor_msgs/JointState; every model joint must be present
Publishes
    effort_controller/commands  std_msgs/Float64MultiArray, efforts in ``joints`` order [N m]
    ~/reference                 sensor_msgs/JointState: program position and velocity, and
                                the commanded effort, stamped with the state it answers
    diagnostics                 diagnostic_msgs/DiagnosticArray, once per wall second
Services
    ~/enable                    std_srvs/SetBool: false commands zero effort until re-enabled;
                                true clears a fault and restarts the program clock

The control law uses the rigid twin of the model (every beam a rigid rod, no modes): on a
flexible arm it is the classical rigid computed torque, with the elastic modes unmodelled.

Program time is the state stamp minus the stamp of the first state received after
enabling, so a program starts where it is enabled, in simulation and on a real arm.

Safety, on by default: efforts clipped to the model's limits; a joint faster than its
velocity limit latches a fault with zero effort; when no valid state has come for
``state_timeout`` wall seconds, one zero-effort command is sent and a warning logged
(the watchdog arms with the first valid state; nothing is commanded before it).
Malformed states (missing or unknown joint names, wrong lengths, NaN) are rejected with a
logged reason and no command is sent for them.
"""

import math
import time

import numpy as np
from rclpy.clock import Clock, ClockType
from rclpy.node import Node

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool

from . import common
from ..control.computed_torque import ComputedTorqueController
from ..control.joint_program import SinusoidalJointProgram


class ControllerNode(Node):
    """ROS adapter around `ComputedTorqueController`."""

    def __init__(self):
        """Read and check parameters, build model, program and control law."""
        super().__init__('controller')
        # Computed torque on the joints only: flexible links count as rigid rods (the elastic
        # modes are left to the program-constraint controller).
        self.model = common.model_parameter(self).rigid_twin()
        self.command_index = common.joint_order(
            self, self.model, 'Joint order of the entries of each effort command.')
        n = self.model.nv
        program = SinusoidalJointProgram(
            common.float_array(self, 'program.offset', n, 'q_d offset per joint [rad].'),
            common.float_array(self, 'program.amplitude', n, 'q_d amplitude per joint [rad].'),
            common.float_array(self, 'program.frequency', n, 'q_d frequency per joint [Hz].'),
            common.float_array(self, 'program.phase', n, 'q_d phase per joint [rad].'))
        self.law = ComputedTorqueController(
            self.model, program,
            common.positive(self, 'gains.natural_frequency', 20.0,
                            'Error dynamics natural frequency omega_n [rad/s].'),
            common.positive(self, 'gains.damping_ratio', 1.0, 'Error dynamics damping zeta.'))
        self.state_timeout = common.positive(
            self, 'state_timeout', 0.5, 'Wall seconds without a valid state before zero effort.')
        self.enabled = common.declare(self, 'start_enabled', True,
                                      'Send program torques from start-up.')
        self.fault = ''
        self.rejected = 0
        self.warn_throttled = common.ReasonThrottle(self.get_logger().warning)
        self.program_start = None
        self.last_state_wall = time.monotonic()
        # The watchdog arms with the first valid state: before it nothing is commanded (in
        # lockstep a command would advance the plant without control).
        self.stale = True
        self.q = np.zeros(n)
        self.v = np.zeros(n)
        self.command = Float64MultiArray(data=[0.0] * n)
        self.reference = JointState(name=[self.model.joint_names[i] for i in self.command_index])

        self.command_pub = self.create_publisher(Float64MultiArray, 'effort_controller/commands',
                                                 10)
        self.reference_pub = self.create_publisher(JointState, '~/reference', 10)
        self.diagnostics_pub = self.create_publisher(DiagnosticArray, 'diagnostics', 10)
        self.create_subscription(JointState, 'joint_states', self.on_state, 10)
        self.create_service(SetBool, '~/enable', self.on_enable)
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_timer(self.state_timeout / 4, self.on_watchdog, clock=steady)
        self.create_timer(1.0, self.publish_diagnostics, clock=steady)
        self.joint_slot = {name: i for i, name in enumerate(self.model.joint_names)}

    def parse_state(self, msg):
        """Copy positions and velocities into model order.

        Returns None, or (kind, reason) for a malformed message.
        """
        names = msg.name
        if len(msg.position) != len(names) or len(msg.velocity) != len(names):
            return 'length', (f'{len(names)} names but {len(msg.position)} positions and '
                              f'{len(msg.velocity)} velocities')
        seen = 0
        for k, name in enumerate(names):
            slot = self.joint_slot.get(name)
            if slot is None:
                known = ', '.join(self.joint_slot)
                return 'name', f'unknown joint {name!r} (model joints: {known})'
            p, v = msg.position[k], msg.velocity[k]
            if not (math.isfinite(p) and math.isfinite(v)):
                return 'non-finite', f'non-finite position or velocity of joint {name!r}'
            self.q[slot], self.v[slot] = p, v
            seen += 1
        if seen != self.model.nv or len(set(names)) != len(names):
            return 'name', f'expected each of {", ".join(self.joint_slot)} once, got {list(names)}'
        return None

    def on_state(self, msg):
        """Answer one joint state with one effort command."""
        problem = self.parse_state(msg)
        if problem is not None:
            self.rejected += 1
            self.warn_throttled(problem[0], f'rejected joint state: {problem[1]}')
            return
        self.last_state_wall = time.monotonic()
        self.stale = False
        t = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        too_fast = np.abs(self.v) > self.model.velocity_limit
        if too_fast.any() and not self.fault:
            j = int(np.argmax(too_fast))
            self.fault = (f'joint {self.model.joint_names[j]!r} at {self.v[j]:.3f} rad/s exceeds '
                          f'its velocity limit {self.model.velocity_limit[j]:g} rad/s')
            self.get_logger().error(f'{self.fault}; zero effort until ~/enable is called')
        if not self.enabled or self.fault:
            self.send(np.zeros(self.model.nv), msg.header.stamp)
            return
        if self.program_start is None:
            self.program_start = t
        effort = self.law.compute(t - self.program_start, self.q, self.v)
        self.send(effort, msg.header.stamp)

    def send(self, effort, stamp):
        """Publish ``effort`` (model order) as a command and the reference that led to it."""
        order = self.command_index
        self.command.data = effort[order].tolist()
        self.command_pub.publish(self.command)
        ref = self.reference
        ref.header.stamp = stamp
        ref.position = self.law.program.position[order].tolist()
        ref.velocity = self.law.program.velocity[order].tolist()
        ref.effort = self.command.data
        self.reference_pub.publish(ref)

    def on_watchdog(self):
        """Zero effort, once, when states stop coming."""
        if not self.stale and time.monotonic() - self.last_state_wall > self.state_timeout:
            self.stale = True
            self.get_logger().warning(f'no valid joint state for {self.state_timeout} s: '
                                      'commanding zero effort')
            self.command.data = [0.0] * self.model.nv
            self.command_pub.publish(self.command)

    def on_enable(self, request, response):
        """Enable (clearing a fault, restarting program time) or disable the controller."""
        self.enabled = bool(request.data)
        if self.enabled:
            self.fault = ''
            self.program_start = None
        response.success = True
        response.message = 'enabled' if self.enabled else 'disabled: zero effort'
        return response

    def publish_diagnostics(self):
        """Report controller health: fault, stale states, rejected states, saturation."""
        if self.fault:
            level, message = DiagnosticStatus.ERROR, self.fault
        elif self.stale:
            level, message = DiagnosticStatus.WARN, 'joint states are stale: zero effort'
        elif self.law.saturated.any():
            level, message = DiagnosticStatus.WARN, 'effort saturated'
        else:
            level, message = DiagnosticStatus.OK, 'tracking' if self.enabled else 'disabled'
        self.diagnostics_pub.publish(DiagnosticArray(status=[DiagnosticStatus(
            level=level, name=f'{self.get_name()}: program tracking', message=message,
            values=[KeyValue(key='rejected_states', value=str(self.rejected)),
                    KeyValue(key='enabled', value=str(self.enabled))])]))


def main(args=None):
    """Entry point of the ``controller`` executable."""
    common.run(ControllerNode, args)


if __name__ == '__main__':
    main()
