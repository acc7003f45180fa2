"""Controller node: the program-constraint controller (`control.program_controller`) on topics.

It never knows whether a simulation or a real arm answers: it reacts to each joint state
with one effort command, timed by the state's own stamp.

Subscribes
    joint_states                sensor_msgs/JointState; every model joint exactly once
    modal_states                sensor_msgs/JointState of the modal coordinates (names
                                ``<link>_y<k>``); only with ``elastic_state: measured`` and a
                                control model with modes; used when its stamp equals the
                                joint state's (else the model-based estimate fills in)
Publishes
    effort_controller/commands  std_msgs/Float64MultiArray, efforts in ``joints`` order [N m]
                                (ros2_control forward command controller layout)
    ~/reference                 sensor_msgs/JointState, one entry per program row (names
                                such as ``forearm_lambda_x``, ``shoulder``): position = r(t),
                                velocity = r'(t), effort = r''(t) [m, rad and derivatives]
    ~/residuals                 sensor_msgs/JointState, same names: position = phi, velocity
                                = phi', effort = constraint-acceleration error after
                                saturation A q'' - b [m/s^2 or rad/s^2]
    diagnostics                 diagnostic_msgs/DiagnosticArray, once per wall second
    (the three program topics are stamped with the joint state they answer)
Services
    ~/enable                    std_srvs/SetBool: false commands zero effort until re-enabled;
                                true clears a fault and restarts program time
    ~/set_parameters            (rcl_interfaces) ``active_program``: switch programs by name
                                (``ros2 param set /controller active_program hold``); unknown
                                names are refused with the list of programs

Safety: efforts clipped to ``effort_limits`` and rate-limited by ``effort_rate_limits``; a
joint faster than its velocity limit latches a fault with zero effort until ~/enable; when
no valid state has come for ``state_timeout`` wall seconds the watchdog commands zero
effort (``watchdog_action: zero``) or the effort holding the last measured configuration
against gravity (``hold``), repeated every ``state_timeout``/4 while stale, with a
warning (armed by the first valid state; nothing is commanded before it). Malformed states
(missing or unknown joint names, wrong lengths, NaN) are rejected with a logged reason and
get no command. A program set that fails the controller's checks (discrete bound,
non-minimum phase, sampled loop) makes the node refuse to start with the reason (exit 2).

Servo mode. When ``model`` names a servoconstraint model (a ``config/models`` file of
``type: servo_rigid_body`` or ``servo_sleigh``, realization ``free``: the plant of
``servo_plant``), the node runs `control.servo_controller` instead: it realizes the
model's servoconstraint psi = <a, w> = 0 (the sleigh's lateral blade velocity) by the
input along b, with psi' + gamma psi = 0, from the plant's odometry:

    odom                        (subscribed) nav_msgs/Odometry in servo_plant's layout
                                (`mechanics.servo_odometry`), child_frame_id the model's
                                body frame (``body``, ``sleigh``)
    effort_controller/commands  one entry: u, the torque [N m] or force [N] along b
    ~/residuals                 one row named after the constraint (``a_omega``, ``v_lat``):
                                position = psi [rad/s or m/s], velocity = psi' with the
                                applied effort, effort = constraint-acceleration error
    diagnostics                 as above, with the gain, the critical period and the error
                                factor per period

Parameters: ``servo_gain`` (gamma [1/s]), ``control_period``, ``hold`` and
``delay_periods`` (the discrete check: gamma T < 2 for 'zoh' without delay, < 2 sin(pi/(2
(2d + 1))) with d periods of delay), ``effort_limits`` (one entry; empty: none),
``condition_limit``, and the safety parameters above; the arm's program parameters are
not used. Odometry that is not a state of the model (non-finite, not a unit quaternion,
another body frame, a sleigh off its plane) is rejected with the reason and gets no
command; |v| above the model's omega_max latches a fault (zero effort until ~/enable).
"""

import math
import time

import numpy as np
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.parameter import Parameter

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool

from . import common
from ..control.program_config import load_program_file, resolve_program_path
from ..control.program_controller import (CONTROL_MODELS, ControllerSettings,
                                          ELASTIC_SOURCES, HOLD_SCHEMES, ProgramController,
                                          REALIZATIONS)
from ..control.servo_controller import is_servo_model, ServoController, ServoSettings
from ..mechanics.servo_odometry import OdometryContent, OdometryError, state_from_odometry
from ..model_config import ConfigError

WATCHDOG_ACTIONS = ('zero', 'hold')


def optional_array(node, name, description):
    """Declare a float-array parameter; return None when it is left empty."""
    value = node.declare_parameter(
        name, Parameter.Type.DOUBLE_ARRAY,
        ParameterDescriptor(description=description, read_only=True)).value
    value = [] if value is None else list(value)
    if not value:
        return None
    if not all(math.isfinite(x) or (x == math.inf) for x in value):
        raise ConfigError(f'parameter {name}: expected numbers, got {value}')
    return value


class Window:
    """Counters of the ticks since the last diagnostics message."""

    def __init__(self, nu, rows):
        """Start empty for ``nu`` inputs and ``rows`` program rows."""
        self.reset(nu, rows)

    def reset(self, nu, rows):
        """Forget everything (after publishing, or when the program changes)."""
        self.ticks = 0
        self.saturated = 0
        self.rate_limited = 0
        self.unusual = 0             # damped / unrealizable / inconsistent realization
        self.estimated = 0
        self.constraint_error = 0.0
        self.dropped = np.zeros(nu)
        self.effort_peak = np.zeros(nu)      # largest |commanded effort| per input
        self.residual_squares = np.zeros(rows)
        self.residual_max = np.zeros(rows)   # largest |phi| per row
        self.sigma_min = math.inf
        self.first_stamp = None
        self.last_stamp = None
        self.message = ''            # last non-trivial controller message

    def add(self, status, stamp, effort):
        """Account one tick that commanded ``effort`` (model input order)."""
        self.ticks += 1
        np.maximum(self.effort_peak, np.abs(effort), out=self.effort_peak)
        if self.first_stamp is None:
            self.first_stamp = stamp
        self.last_stamp = stamp
        if status.elastic_source == 'estimated':
            self.estimated += 1
        if not status.tracking:
            return
        realization = status.realization
        if status.saturated:
            self.saturated += int(status.clipped.any())
            self.rate_limited += int(status.rate_limited.any())
            np.maximum(self.dropped, np.abs(status.dropped), out=self.dropped)
            self.constraint_error = max(self.constraint_error, status.constraint_error_norm)
            self.message = status.message
        if realization.code not in ('exact', 'redundant'):
            self.unusual += 1
            self.message = status.message
        self.sigma_min = min(self.sigma_min, realization.sigma_min)
        if self.residual_squares.size == status.residual.size:
            self.residual_squares += status.residual * status.residual
            np.maximum(self.residual_max, np.abs(status.residual), out=self.residual_max)


class ControllerNode(Node):
    """ROS adapter around `ProgramController`, or `ServoController` in servo mode (module doc)."""

    def __init__(self):
        """Read and check parameters, build the controller, create the ROS interfaces."""
        super().__init__('controller')
        model = common.model_parameter(self, 'two_link_flexible')
        self.model = model
        self.servo = is_servo_model(model)
        # Parameters of both modes: the period and the hold/delay of the discrete checks,
        # the effort limits and the servo realization's damping threshold.
        shared = dict(
            period=common.positive(self, 'control_period', 0.002,
                                   'Period of the states and commands [s]: the discrete '
                                   'stability checks use it.'),
            hold=common.choice(self, 'hold', 'zoh', HOLD_SCHEMES,
                               'Hold scheme of the discrete stability check.'),
            delay_periods=common.declare(self, 'delay_periods', 1,
                                         'Input delay [periods] the sampled-loop check allows '
                                         'for (0: lockstep; 1: a real-time plant).'),
            effort_limit=optional_array(self, 'effort_limits',
                                        'Effort limits per input [N m or N]; empty: the '
                                        'model.'),
            condition_limit=common.positive(self, 'condition_limit', 1e4,
                                            'Servo: damped least squares above this '
                                            'condition number of A M^-1 B.'))
        self.core = (self._servo_core(model, shared) if self.servo
                     else self._program_core(model, shared))
        self.state_timeout = common.positive(
            self, 'state_timeout', 0.5, 'Wall seconds without a valid state before the '
            'watchdog acts.')
        self.watchdog_action = common.choice(self, 'watchdog_action', 'zero', WATCHDOG_ACTIONS,
                                             'Effort commanded when states go stale.')
        if common.declare(self, 'start_enabled', True, 'Track the program from start-up.'):
            self.core.enable()
        nu = model.nu
        self.fault = ''
        self.rejected = 0
        self.warn_throttled = common.ReasonThrottle(self.get_logger().warning)
        self.last_state_wall = time.monotonic()
        self.stale = True          # armed by the first valid state
        self.last_stamp = None
        self.command = Float64MultiArray(data=[0.0] * nu)
        self.reference = JointState()
        self.residuals = JointState()
        self._program_messages()
        self.window = Window(nu, len(self.residuals.name))

        # The per-tick topics go without rclpy's QoS-event handlers (`common.per_tick_*`).
        self.command_pub = common.per_tick_publisher(self, Float64MultiArray,
                                                     'effort_controller/commands')
        if not self.servo:
            self.reference_pub = common.per_tick_publisher(self, JointState, '~/reference')
        self.residual_pub = common.per_tick_publisher(self, JointState, '~/residuals')
        self.diagnostics_pub = self.create_publisher(DiagnosticArray, 'diagnostics', 10)
        if self.servo:
            common.per_tick_subscription(self, Odometry, 'odom', self.on_odometry)
        else:
            # Modal states first: when both wait, the executor takes the older subscription
            # first, so the modal state of a stamp is in hand when its joint state is
            # handled.
            if self.use_modal:
                common.per_tick_subscription(self, JointState, 'modal_states',
                                             self.on_modal_state)
            common.per_tick_subscription(self, JointState, 'joint_states', self.on_state)
            self.add_on_set_parameters_callback(self.on_parameters)
        self.create_service(SetBool, '~/enable', self.on_enable)
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_timer(self.state_timeout / 4, self.on_watchdog, clock=steady)
        self.create_timer(1.0, self.publish_diagnostics, clock=steady)
        self.log_start()

    @property
    def state_name(self):
        """What the node answers: a joint state, or odometry in servo mode."""
        return 'odometry' if self.servo else 'joint state'

    def _servo_core(self, model, shared):
        """Servo mode: the `ServoController` of the model's servoconstraint (module doc)."""
        self.command_index = list(range(model.nu))
        self.input_names = ['u']
        gain = common.positive(self, 'servo_gain', 100.0,
                               "Servo mode: gamma [1/s] of psi' + gamma psi = 0.")
        return ServoController(model, ServoSettings(gain=gain, **shared))

    def _program_core(self, model, shared):
        """Arm mode: the `ProgramController` of the program file, and the joint maps."""
        self.command_index = common.joint_order(
            self, model, 'Joint order of the entries of each effort command.')
        self.input_names = [model.joint_names[i] for i in range(model.nu)]
        program_file = common.declare(
            self, 'program_file', 'programs_two_link_flexible',
            'Program file: a path, or the name of a file in config/.')
        modes = common.declare(self, 'control_modes', -1,
                               'Assumed modes per link plane kept in the control model '
                               '(-1: all of the model file; 0: rigid).')
        settings = ControllerSettings(
            realization=common.choice(self, 'realization', 'auto', REALIZATIONS,
                                      'Servo (input directions only) or ideal (fully '
                                      'actuated control model); auto: servo on flexible '
                                      'models.'),
            control_model=common.choice(self, 'control_model', 'auto', CONTROL_MODELS,
                                        'Model the law evaluates: the (reduced) full model '
                                        'or the rigid twin.'),
            elastic_state=common.choice(self, 'elastic_state', 'measured', ELASTIC_SOURCES,
                                        'Modal coordinates from modal_states (simulation) or '
                                        'estimated from the joint motion (real arm).'),
            effort_rate_limit=optional_array(self, 'effort_rate_limits',
                                             'Effort rate limits per joint [N m/s]; empty: '
                                             'none.'),
            velocity_limit=optional_array(self, 'velocity_limits',
                                          'Velocity limits per joint [rad/s]; empty: the '
                                          'model.'),
            redefine_margin=common.positive(self, 'redefine_margin', 0.8,
                                            'lambda = margin * lambda* when a program is '
                                            'redefined.'),
            analysis_positions=optional_array(self, 'analysis_positions',
                                              'Joint angles from which the start of each '
                                              'program is solved for the checks [rad].'),
            posture=optional_array(self, 'posture', 'Secondary objective: posture [rad].'),
            posture_stiffness=optional_array(self, 'posture_stiffness',
                                             'Secondary objective K_p [N m/rad].') or 0.0,
            posture_damping=optional_array(self, 'posture_damping',
                                           'Secondary objective K_d [N m s/rad].') or 0.0,
            control_modes=None if modes < 0 else modes,
            **shared)
        path = resolve_program_path(program_file)
        programs, default = load_program_file(path)
        active = common.declare(self, 'active_program', '',
                                'Program to track (a name in the program file; empty: its '
                                'default). Settable at run time.', read_only=False)
        if active and active not in (programs if isinstance(programs, dict) else {}):
            raise ConfigError(f'parameter active_program: unknown program {active!r} (in '
                              f'{program_file}: {", ".join(map(str, programs or {}))})')
        core = ProgramController(model, programs, settings, active or default,
                                 source=program_file)
        self.default_program = default or core.program_names[0]
        self.use_modal = core.has_modes and settings.elastic_state == 'measured'
        n = model.n_joints
        self.q, self.v = np.zeros(n), np.zeros(n)
        self.joint_slot = {name: i for i, name in enumerate(model.joint_names)}
        self.mode_slot = {name: i for i, name in enumerate(model.mode_names)}
        self.modal_positions = np.zeros(len(model.mode_names))
        self.modal_velocities = np.zeros(len(model.mode_names))
        self.modal_stamp = None
        self._state_names = self._modal_names = None
        self._state_order = self._modal_order = None
        return core

    def log_start(self):
        """Say what runs: realization, models, programs and their checks."""
        core, log = self.core, self.get_logger()
        if self.servo:
            log.info(f'controlling {self.model.name!r}: {core.describe()}')
            return
        log.info(f"controlling '{self.model.name}': {core.realization_kind} realization on "
                 f'{self.control_model_text()}, period {core.period} s ({core.settings.hold}), '
                 f'elastic state {core.settings.elastic_state if core.has_modes else "-"}; '
                 f'programs {core.program_names}, active {core.active!r}')
        for entry in core.entries.values():
            text = (f'program {entry.name!r}: {entry.size} rows {entry.row_names}, critical '
                    f'period {entry.critical_period:.4g} s')
            if entry.sampled_radius is not None:
                text += f', sampled-loop spectral radius {entry.sampled_radius:.6f}'
            log.info(text)
            for note in entry.notes:
                log.warning(f'program {entry.name!r}: {note}')

    def control_model_text(self):
        """Describe the control model in a few words."""
        cm = self.core.control_model
        modes = cm.nv - cm.n_joints
        if self.model.nv == self.model.n_joints:
            return 'the rigid model'
        if modes == 0:
            return 'the rigid twin'
        return f'{modes} of {self.model.nv - self.model.n_joints} modes'

    def _program_messages(self):
        """Row names of the active program on the reference and residual messages."""
        names = list(self.core.row_names if self.servo else self.core.entry.row_names)
        self.reference.name = names
        self.residuals.name = names

    # -- states -----------------------------------------------------------------------------
    def parse_state(self, msg):
        """Copy positions and velocities into model order; None, or (kind, reason).

        A message with the same names as the last accepted one takes the fast path (one
        vectorized copy and finiteness check).
        """
        names = msg.name
        if names == self._state_names and len(msg.position) == len(names) \
                and len(msg.velocity) == len(names):
            self.q[self._state_order] = msg.position
            self.v[self._state_order] = msg.velocity
            if np.isfinite(self.q).all() and np.isfinite(self.v).all():
                return None
            self._state_names = None
        problem = self._parse_state_slowly(msg)
        if problem is None:
            self._state_names = list(names)
            self._state_order = [self.joint_slot[name] for name in names]
        return problem

    def _parse_state_slowly(self, msg):
        """Check a joint state name by name (see `parse_state`)."""
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
        if seen != len(self.joint_slot) or len(set(names)) != len(names):
            return 'name', f'expected each of {", ".join(self.joint_slot)} once, got {list(names)}'
        return None

    def on_modal_state(self, msg):
        """Keep the latest valid modal state (names of the model's modes, any order)."""
        names = msg.name
        if names == self._modal_names and len(msg.position) == len(names) \
                and len(msg.velocity) == len(names):
            self.modal_positions[self._modal_order] = msg.position
            self.modal_velocities[self._modal_order] = msg.velocity
            if np.isfinite(self.modal_positions).all() and \
                    np.isfinite(self.modal_velocities).all():
                self._take_modal_stamp(msg)
                return
            self._modal_names = None
            self.warn_throttled('modal', 'rejected modal state: non-finite values')
            return
        if (len(names) != len(self.mode_slot) or len(msg.position) != len(names)
                or len(msg.velocity) != len(names)):
            self.warn_throttled('modal', f'rejected modal state: expected the '
                                         f'{len(self.mode_slot)} modes {list(self.mode_slot)}')
            return
        for k, name in enumerate(names):
            slot = self.mode_slot.get(name)
            p, v = msg.position[k], msg.velocity[k]
            if slot is None or not (math.isfinite(p) and math.isfinite(v)):
                self.warn_throttled('modal', f'rejected modal state: unknown or non-finite '
                                             f'mode {name!r}')
                return
            self.modal_positions[slot], self.modal_velocities[slot] = p, v
        self._modal_names = list(names)
        self._modal_order = [self.mode_slot[name] for name in names]
        self._take_modal_stamp(msg)

    def _take_modal_stamp(self, msg):
        """Record the stamp of the modal state just stored (and rebase a late one)."""
        stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        self.modal_stamp = stamp
        if self.last_stamp is not None and stamp == self.last_stamp:
            self.core.rebase_elastic(stamp, self.modal_positions, self.modal_velocities)

    def parse_odometry(self, msg):
        """Servo mode: read (q, v) from odometry (`servo_odometry`); None, or (kind, reason)."""
        if msg.child_frame_id != self.model.frame:
            return 'frame', (f'child_frame_id {msg.child_frame_id!r} is not the body frame '
                             f'{self.model.frame!r} of {self.model.name!r}')
        pose, twist = msg.pose.pose, msg.twist.twist
        p, o = pose.position, pose.orientation
        w, v = twist.angular, twist.linear
        content = OdometryContent((p.x, p.y, p.z), (o.w, o.x, o.y, o.z), (w.x, w.y, w.z),
                                  (v.x, v.y, v.z))
        try:
            self.q, self.v = state_from_odometry(self.model, content)
        except OdometryError as error:
            return error.field, str(error)
        return None

    def on_odometry(self, msg):
        """Servo mode: answer one odometry message with one effort command (and residuals)."""
        problem = self.parse_odometry(msg)
        if problem is not None:
            self.reject(problem)
            return
        t = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        self.answer(msg.header.stamp, t, self.guarded(t, self.core.update, t, self.q, self.v))

    def on_state(self, msg):
        """Answer one joint state with one effort command (and the program topics)."""
        problem = self.parse_state(msg)
        if problem is not None:
            self.reject(problem)
            return
        t = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        core = self.core
        if self.use_modal and self.modal_stamp == t:
            effort = self.guarded(t, core.update, t, self.q, self.v, self.modal_positions,
                                  self.modal_velocities)
        else:
            effort = self.guarded(t, core.update, t, self.q, self.v)
        self.answer(msg.header.stamp, t, effort)

    def guarded(self, t, update, *args):
        """``update(*args)``, or zero effort and a latched fault if it raises anything.

        The controllers turn numerical failures of the law into faults themselves; this is
        the last line: no exception may leave a callback (it would end the node and leave
        a real arm's driver holding its last command).
        """
        try:
            return update(*args)
        except Exception as error:          # noqa: B902 - any failure must stop safely
            return self.core.latch_fault(
                f'controller failed at t = {t:.6f} s: {type(error).__name__}: {error}')

    def reject(self, problem):
        """Count and log (throttled per kind) a state that gets no command."""
        self.rejected += 1
        self.warn_throttled(problem[0], f'rejected {self.state_name}: {problem[1]}')

    def answer(self, stamp, t, effort):
        """Send the effort for the state stamped ``stamp`` (t [s]) and account the tick.

        A state that comes again with the same stamp (a lockstep plant re-sending it at
        start-up or while paused) is answered, but counted in the statistics once.
        """
        repeated = t == self.last_stamp
        self.last_stamp = t
        core = self.core
        status = core.status
        if core.fault and core.fault != self.fault:
            self.get_logger().error(f'{core.fault}; zero effort until ~/enable is called')
        self.fault = core.fault
        self.send(effort)
        if status.tracking:
            self.publish_program(stamp)
        if not repeated:
            self.window.add(status, t, effort)
        self.last_state_wall = time.monotonic()
        self.stale = False

    def send(self, effort):
        """Publish ``effort`` (model order) in command order."""
        self.command.data = effort[self.command_index].tolist()
        self.command_pub.publish(self.command)

    def publish_program(self, stamp):
        """Publish the reference (not in servo mode) and the residuals, stamped like the state."""
        status, res = self.core.status, self.residuals
        if not self.servo:
            entry, ref = self.core.entry, self.reference
            ref.header.stamp = stamp
            ref.position = entry.reference.tolist()
            ref.velocity = entry.reference_rate.tolist()
            ref.effort = entry.reference_acceleration.tolist()
            self.reference_pub.publish(ref)
        res.header.stamp = stamp
        res.position = status.residual.tolist()
        res.velocity = status.residual_rate.tolist()
        res.effort = status.constraint_error.tolist()
        self.residual_pub.publish(res)

    def on_watchdog(self):
        """Zero or holding effort while states are stale (module doc)."""
        if self.last_stamp is None:
            return
        if time.monotonic() - self.last_state_wall <= self.state_timeout:
            return
        if not self.stale:
            self.stale = True
            self.get_logger().warning(
                f'no valid {self.state_name} for {self.state_timeout} s: commanding '
                f'{"zero" if self.watchdog_action == "zero" else "holding"} effort')
        effort = (self.core.holding_effort() if self.watchdog_action == 'hold'
                  else self.core.zero_effort())
        self.send(effort)

    # -- services and parameters ----------------------------------------------------------------
    def on_enable(self, request, response):
        """Enable (clearing a fault, restarting program time) or disable the controller."""
        if request.data:
            self.core.enable()
            self.fault = ''
        else:
            self.core.disable()
        response.success = True
        response.message = (f'enabled: tracking {self.core.active!r}' if request.data
                            else 'disabled: zero effort')
        return response

    def on_parameters(self, parameters):
        """Switch programs when ``active_program`` is set; refuse unknown names."""
        for parameter in parameters:
            if parameter.name != 'active_program':
                continue
            name = parameter.value or self.default_program
            try:
                self.core.switch(name)
            except ValueError as error:
                return SetParametersResult(successful=False, reason=str(error))
            self._program_messages()
            self.window.reset(self.model.nu, len(self.residuals.name))
            self.get_logger().info(f'switched to program {name!r}; its time starts at the '
                                   'next state')
        return SetParametersResult(successful=True)

    # -- diagnostics -----------------------------------------------------------------------------
    def publish_diagnostics(self):
        """Report health, realization status and saturation of the last second."""
        core, w = self.core, self.window
        status = core.status
        notes = [] if self.servo else core.entry.notes
        allowed = [note for note in notes if 'ALLOWED' in note]
        if self.fault:
            level, message = DiagnosticStatus.ERROR, self.fault
        elif self.stale and self.last_stamp is not None:
            level, message = DiagnosticStatus.WARN, (
                f'{"odometry" if self.servo else "joint states"} stale: watchdog commands '
                f'{"zero" if self.watchdog_action == "zero" else "holding"} effort')
        elif w.saturated or w.rate_limited or w.unusual:
            level, message = DiagnosticStatus.WARN, (
                f'{w.saturated} ticks clipped, {w.rate_limited} rate-limited, {w.unusual} '
                f'damped or unrealizable of {w.ticks}: {w.message}')
        elif allowed:
            level, message = DiagnosticStatus.WARN, allowed[0]
        elif not core.enabled:
            level, message = DiagnosticStatus.OK, 'disabled: zero effort'
        else:
            level, message = DiagnosticStatus.OK, f'tracking {core.active!r}'
        names, rows = self.input_names, self.residuals.name
        rms = (np.sqrt(w.residual_squares / w.ticks) if w.ticks else w.residual_squares)
        period = ((w.last_stamp - w.first_stamp) / (w.ticks - 1) if w.ticks > 1 else 0.0)
        values = [
            ('active_program', core.active),
            ('enabled', str(core.enabled)),
            ('realization_status', status.realization.code if status.tracking else status.mode),
            ('sigma_min', f'{w.sigma_min:.4g}'),
            ('ticks', str(w.ticks)),
            ('clipped_ticks', str(w.saturated)),
            ('rate_limited_ticks', str(w.rate_limited)),
            ('damped_or_unrealizable_ticks', str(w.unusual)),
            ('clipped_inputs', ', '.join(n for n, c in zip(names, status.clipped) if c)),
            ('dropped_effort_max', ', '.join(f'{n}: {d:.4g}' for n, d in zip(names, w.dropped))),
            ('constraint_error_max', f'{w.constraint_error:.4g}'),
            ('residual_rms', ', '.join(f'{n}: {r:.4g}' for n, r in zip(rows, rms))),
            ('residual_max', ', '.join(f'{n}: {r:.4g}' for n, r in zip(rows, w.residual_max))),
            ('effort_peak', ', '.join(f'{n}: {p:.6g}' for n, p in zip(names, w.effort_peak))),
            ('state_period', f'{period:.6f}'),
            ('control_period', f'{core.period:g}'),
            *(self.servo_values() if self.servo else self.program_values()),
            ('watchdog', self.watchdog_action),
            ('rejected_states', str(self.rejected)),
        ]
        self.diagnostics_pub.publish(DiagnosticArray(status=[DiagnosticStatus(
            level=level, name=f'{self.get_name()}: program controller',
            hardware_id=self.model.name, message=message,
            values=[KeyValue(key=k, value=v) for k, v in values])]))
        w.reset(self.model.nu, len(rows))

    def program_values(self):
        """Diagnostic values of the arm mode: programs, control model, internal dynamics."""
        core, w = self.core, self.window
        entry = core.entry
        zero_dynamics = entry.zero_dynamics
        return [
            ('programs', ', '.join(core.program_names)),
            ('realization', f'{core.realization_kind} on {self.control_model_text()}'),
            ('elastic_state', core.settings.elastic_state if core.has_modes else 'none'),
            ('estimated_ticks', str(w.estimated)),
            ('critical_period', f'{entry.critical_period:.6g}'),
            ('sampled_loop_radius', '' if entry.sampled_radius is None
             else f'{entry.sampled_radius:.6f}'),
            ('zero_dynamics', zero_dynamics.message if zero_dynamics is not None
             else 'not analysed'),
            ('notes', ' | '.join(entry.notes)),
        ]

    def servo_values(self):
        """Diagnostic values of the servo mode: gain, margin, the discrete bound."""
        core = self.core
        return [
            ('realization', f'servo along b of {self.model.name!r} ({self.model.kind})'),
            ('realizability_margin', f'{core.margin:.6g}'),
            ('servo_gain', f'{core.gain:g}'),
            ('delay_periods', str(core.settings.delay_periods)),
            ('critical_period', f'{core.critical_period:.6g}'),
            ('error_factor', f'{core.error_factor:.6g}'),
        ]


def main(args=None):
    """Entry point of the ``controller`` executable."""
    common.run(ControllerNode, args)


if __name__ == '__main__':
    main()
