"""What the two controller nodes share: parameters, safety, the answer to a state, diagnostics.

`ControllerNodeBase` is to the controller nodes what `simulated_plant.SimulatedPlant` is to
the plants. A subclass (`controller_node.ControllerNode` on arms, `servo_controller_node.
ServoControllerNode` on servo plants) builds its ROS-free controller in `build_core`,
subscribes to its states in `create_state_interfaces`, and answers each state through
`answer` (one effort command, the program topics, the diagnostics window). The base owns
the safety machinery: the stale-state watchdog (``state_timeout``; it commands the
controller's safe action, ``safe_action``: `control.safety`, labelled as no answer to a
state: `common.UNANSWERING`),
``~/enable``, the last-line guard around the law (`guarded`), rejected-state accounting,
and the 1 Hz ``diagnostics`` with per-tick sums over the last window.
"""

import math
import time

import numpy as np
from rclpy.clock import Clock, ClockType
from rclpy.node import Node

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension, MultiArrayLayout
from std_srvs.srv import SetBool

from . import common, packed_messages
from ..settings import non_negative, positive, Setting

# The parameters of both controller nodes that their ROS-free controllers do not take.
NODE_SETTINGS = (
    Setting('state_timeout', 0.5,
            'Wall seconds without a valid state before the watchdog acts.', check=positive),
    Setting('start_enabled', True, 'Track the program from start-up.'),
    # ros2_control's controllers publish their state topics at a plotting rate too (e.g.
    # the trajectory controller's state_publish_rate); each publication costs a tenth of
    # the soft arm's control tick (bench/README.md).
    Setting('program_topics_period', 0.01,
            'Period [s] of simulated time of ~/residuals (and ~/reference): they go with the '
            'first answer at each multiple of it, and with the answer to a held (re-sent) '
            'state once per period of wall time; 0: with every answer.', check=non_negative))


class Rows:
    """Named rows published as a `sensor_msgs/JointState` (~/reference, ~/residuals).

    The message is kept serialized (`packed_messages`); setting ``name`` (the row names,
    when the program changes) rebuilds it. Values of another length than the names (never
    on a tracking tick: a guard) go out as a message object, as they come.
    """

    def __init__(self, names):
        """Rows named ``names``."""
        self.name = names

    @property
    def name(self):
        """The row names."""
        return self._names

    @name.setter
    def name(self, names):
        self._names = list(names)
        self._packed = packed_messages.joint_state(self._names)

    def publish(self, publisher, stamp, position, velocity, effort):
        """Publish the rows' ``position``, ``velocity`` and ``effort`` stamped ``stamp``."""
        count = len(self._names)
        if len(position) == len(velocity) == len(effort) == count:
            packed = self._packed
            packed.set_stamp(stamp.sec, stamp.nanosec)
            packed.set('position', position)
            packed.set('velocity', velocity)
            packed.set('effort', effort)
            publisher.publish(packed.data())
        else:
            msg = JointState(name=self._names, position=np.asarray(position).tolist(),
                             velocity=np.asarray(velocity).tolist(),
                             effort=np.asarray(effort).tolist())
            msg.header.stamp = stamp
            publisher.publish(msg)


def _set_data(msg, values):
    """Write a Float64MultiArray's data (`packed_messages.PackedMessage`)."""
    msg.data = values


def _packed_command(size, label=None):
    """Return a `PackedMessage` Float64MultiArray of ``size`` efforts (``label``: its dim)."""
    layout = MultiArrayLayout(dim=[MultiArrayDimension(label=label, size=size, stride=size)]
                              if label else [])
    return packed_messages.PackedMessage(Float64MultiArray(layout=layout, data=[0.0] * size),
                                         {'data': (size, _set_data)})


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
        self.delay_ticks = 0         # ticks whose input delay was measured (`input_delay`)
        self.late_ticks = 0          # of those, delayed more than the start-up check allowed
        self.delay_max = -1          # largest measured delay [periods]; -1: none measured

    def add_delay(self, delay, allowed):
        """Account a measured input delay [periods] against the ``allowed`` one."""
        self.delay_ticks += 1
        self.late_ticks += delay > allowed
        self.delay_max = max(self.delay_max, delay)

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

    def fold(self, other):
        """Account the ticks of window ``other`` as if each had been added here too.

        The input delay is not folded: only the window since the last report measures it.
        """
        self.ticks += other.ticks
        self.saturated += other.saturated
        self.rate_limited += other.rate_limited
        self.unusual += other.unusual
        self.estimated += other.estimated
        self.constraint_error = max(self.constraint_error, other.constraint_error)
        np.maximum(self.dropped, other.dropped, out=self.dropped)
        np.maximum(self.effort_peak, other.effort_peak, out=self.effort_peak)
        if self.residual_squares.size == other.residual_squares.size:
            self.residual_squares += other.residual_squares
            np.maximum(self.residual_max, other.residual_max, out=self.residual_max)
        self.sigma_min = min(self.sigma_min, other.sigma_min)
        if self.first_stamp is None:
            self.first_stamp = other.first_stamp
        if other.last_stamp is not None:
            self.last_stamp = other.last_stamp
        self.message = other.message or self.message


class ControllerNodeBase(Node):
    """A controller on topics: shared parameters, safety and diagnostics (module doc)."""

    STATE_NAME = 'state'            # what the node answers, for messages
    # {kind of rejected state: wall seconds [s] between its log lines} where not 1 s.
    REJECTION_LOG_PERIODS = {}
    # Every parameter of the node, ``model`` first (a subclass sets it: `settings`).
    SETTINGS = ()

    def __init__(self, **node_options):
        """Declare and check the parameters, build the controller, create the ROS interfaces.

        ``node_options``: keyword arguments of `rclpy.node.Node` (context, overrides).
        """
        super().__init__('controller', **node_options)
        model = self.load_model()
        self.model = model
        self.parameters = common.declare_settings(self, self.SETTINGS[1:], model)
        self.core = self.build_core(model, self.parameters)
        self.allowed_delay = self.parameters['delay_periods']
        self.state_timeout = self.parameters['state_timeout']
        self.safe_action = self.parameters['safe_action']
        if self.parameters['start_enabled']:
            self.core.enable()
        nu = model.nu
        self.fault = ''
        self.degraded = ''          # why the loop was switched to a safe program, if it was
        self.rejected = 0
        self.warn_throttled = common.ReasonThrottle(
            self.get_logger().warning, periods=self.REJECTION_LOG_PERIODS)
        self.last_state_wall = time.monotonic()
        self.stale = True          # armed by the first valid state
        self.last_stamp = None
        self.answered_ns = 0        # wall time [ns, system clock] the last answer was sent
        self.skipped_copies = 0     # copies of an answered state that were not answered again
        self.command = Float64MultiArray(data=[0.0] * nu)    # the last command sent
        self.packed_command = _packed_command(nu)
        self.packed_unanswering = _packed_command(nu, common.UNANSWERING)  # the watchdog's
        self.residuals = Rows(self.row_names())
        # held: a paused plant's re-sent state brings them again (a recorder or view that
        # matched after the first still gets the held state's residuals).
        self.program_every = common.Every(self.parameters['program_topics_period'], held=True)
        self.window = Window(nu, len(self.residuals.name))
        # Since the start of the program: the windows folded in as each is reported.
        self.run = Window(nu, len(self.residuals.name))

        # The topics go without rclpy's QoS-event handlers (`common.quiet_*`).
        self.command_pub = common.quiet_publisher(self, Float64MultiArray,
                                                  'effort_controller/commands')
        self.residual_pub = common.quiet_publisher(self, JointState, '~/residuals')
        self.diagnostics_pub = common.quiet_publisher(self, DiagnosticArray, 'diagnostics')
        self.create_state_interfaces()
        self.create_service(SetBool, '~/enable', self.on_enable)
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_timer(self.state_timeout / 4, self.on_watchdog, clock=steady)
        self.create_timer(1.0, self.publish_diagnostics, clock=steady)
        self.log_start()

    # -- what a controller node provides ----------------------------------------------------
    def load_model(self):
        """Declare ``model`` and load it."""
        return common.model_parameter(self, self.SETTINGS[0])

    def build_core(self, model, parameters):
        """Return the ROS-free controller; ``parameters``: {name: value}, all declared."""
        raise NotImplementedError

    def create_state_interfaces(self):
        """Subscribe to the states (and create what else the node publishes)."""
        raise NotImplementedError

    def row_names(self):
        """Names of the rows on ~/residuals (and ~/reference)."""
        raise NotImplementedError

    def log_start(self):
        """Say what runs."""
        raise NotImplementedError

    def notes(self):
        """Return the notes of the active program (an ALLOWED unstable program warns)."""
        return []

    def mode_values(self):
        """Diagnostic values particular to this controller."""
        return []

    @property
    def state_name(self):
        """What the node answers, for messages."""
        return self.STATE_NAME

    # -- the answer to a state -------------------------------------------------------------
    def answered_copy(self, msg, info):
        """Whether ``msg`` is a copy of the state last answered, sent before that answer.

        A lockstep plant re-sends a state it got no answer to. A copy received before this
        node's answer left (``info``'s reception timestamp against `answered_ns`) was queued
        while the node was busy, stopped or starting: the answer already covers it, and a
        second one would be taken for the answer to the next state (one more state in
        flight for good, every later command acting a period late). A copy received after
        the answer (which was lost, or crossed it) is answered again. Both times are read
        from this host's system clock: no clock skew between the plant's host and this
        one matters.
        """
        if info is None or common.seconds(msg.header.stamp) != self.last_stamp:
            return False
        received = info.get('received_timestamp') or 0      # 0: the middleware gave none
        if 0 < received < self.answered_ns:
            self.skipped_copies += 1
            return True
        return False

    def respond(self, msg, problem, *state):
        """Answer a state message: reject it (``problem``: (kind, reason)) or run the law.

        ``state``: the arguments of the controller's ``update`` after the time, which is
        the message's stamp. Returns the effort sent (model input order), or None.
        """
        if problem is not None:
            self.reject(problem)
            return None
        t = common.seconds(msg.header.stamp)
        effort = self.guarded(t, self.core.update, t, *state)
        self.answer(msg.header.stamp, t, effort)
        return effort

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
        start-up or while paused, after the answer was sent: `answered_copy`) is answered,
        but counted in the statistics once.
        """
        repeated = t == self.last_stamp
        self.last_stamp = t
        core = self.core
        status = core.status
        if core.fault and core.fault != self.fault:
            self.get_logger().error(f'{core.fault}; {self.safe_action} effort until ~/enable '
                                    'is called')
        self.fault = core.fault
        # Before the publication: a driver may answer the command with a copy of the state
        # before `publish` returns here, and that copy came after the answer (`answered_copy`).
        self.answered_ns = time.time_ns()
        self.send(effort)
        if status.tracking and self.program_every.due(t):
            self.publish_program(stamp)
        if not repeated:
            self.window.add(status, t, effort)
        self.last_state_wall = time.monotonic()
        self.stale = False

    def send(self, effort, answer=True):
        """Publish ``effort`` (model order) in command order.

        ``answer``: the answer to a state; else labelled `common.UNANSWERING` (the watchdog's).
        """
        data = effort[self.command_index]
        self.command.data = data.tolist()
        packed = self.packed_command if answer else self.packed_unanswering
        packed.set('data', data)
        self.command_pub.publish(packed.data())

    def publish_program(self, stamp):
        """Publish the residuals, stamped like the state they answer."""
        status = self.core.status
        self.residuals.publish(self.residual_pub, stamp, status.residual, status.residual_rate,
                               status.constraint_error)

    def on_watchdog(self):
        """Command the safe action at the last state while states are stale (module doc)."""
        if self.last_stamp is None:
            return
        if time.monotonic() - self.last_state_wall <= self.state_timeout:
            return
        if not self.stale:
            self.stale = True
            self.get_logger().warning(
                f'no valid {self.state_name} for {self.state_timeout} s: commanding '
                f'{self.safe_action} effort (safe_action)')
        self.send(self.core.safe_effort(), answer=False)

    # -- services and parameters ----------------------------------------------------------------
    def on_enable(self, request, response):
        """Enable (clearing a fault, restarting program time) or disable the controller."""
        if request.data:
            self.core.enable()
            self.fault = ''
            self.degraded = ''
        else:
            self.core.disable()
        response.success = True
        response.message = (f'enabled: tracking {self.core.active!r}' if request.data
                            else f'disabled: {self.safe_action} effort')
        return response

    # -- diagnostics -----------------------------------------------------------------------------
    def publish_diagnostics(self):
        """Report health, realization status and saturation of the last second."""
        core, w = self.core, self.window
        self.run.fold(w)
        status = core.status
        notes = self.notes()
        allowed = [note for note in notes if 'ALLOWED' in note]
        if self.fault:
            level, message = DiagnosticStatus.ERROR, self.fault
        elif self.stale and self.last_stamp is not None:
            level, message = DiagnosticStatus.WARN, (
                f'{self.state_name} stale: watchdog commands {self.safe_action} effort')
        elif self.degraded:
            level, message = DiagnosticStatus.WARN, self.degraded
        elif w.late_ticks:
            level, message = DiagnosticStatus.WARN, (
                f'{w.late_ticks} of {w.delay_ticks} measured ticks applied more than '
                f'{self.allowed_delay} periods late (up to {w.delay_max}): the start-up checks '
                f'allowed {self.allowed_delay}')
        elif w.saturated or w.rate_limited or w.unusual:
            level, message = DiagnosticStatus.WARN, (
                f'{w.saturated} ticks clipped, {w.rate_limited} rate-limited, {w.unusual} '
                f'damped or unrealizable of {w.ticks}: {w.message}')
        elif allowed:
            level, message = DiagnosticStatus.WARN, allowed[0]
        elif not core.enabled:
            level, message = DiagnosticStatus.OK, f'disabled: {self.safe_action} effort'
        else:
            level, message = DiagnosticStatus.OK, f'tracking {core.active!r}'
        names, rows = self.input_names, self.residuals.name
        rms, run_rms = (np.sqrt(x.residual_squares / x.ticks) if x.ticks else x.residual_squares
                        for x in (w, self.run))
        period = ((w.last_stamp - w.first_stamp) / (w.ticks - 1) if w.ticks > 1 else 0.0)
        values = [
            ('active_program', core.active),
            ('enabled', str(core.enabled)),
            # The states the message ranks, each on its own: a reader (the browser view)
            # tells a fault from a degraded or stale loop without parsing the message.
            ('fault', self.fault),
            ('degraded', self.degraded),
            ('state_stale', str(self.stale and self.last_stamp is not None)),
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
            # The same since the active program started: a reader that lost windows still
            # has the whole run in the last message.
            ('run_ticks', str(self.run.ticks)),
            ('run_residual_rms', ', '.join(f'{n}: {r:.4g}' for n, r in zip(rows, run_rms))),
            ('run_residual_max', ', '.join(f'{n}: {r:.4g}'
                                           for n, r in zip(rows, self.run.residual_max))),
            ('run_effort_peak', ', '.join(f'{n}: {p:.6g}'
                                          for n, p in zip(names, self.run.effort_peak))),
            ('state_period', f'{period:.6f}'),
            ('input_delay_periods', str(w.delay_max) if w.delay_ticks else 'not measured'),
            ('late_ticks', str(w.late_ticks)),
            ('control_period', f'{core.period:g}'),
            *self.mode_values(),
            ('safe_action', self.safe_action),
            ('rejected_states', str(self.rejected)),
            ('skipped_copies', str(self.skipped_copies)),
        ]
        self.diagnostics_pub.publish(DiagnosticArray(status=[DiagnosticStatus(
            level=level, name=f'{self.get_name()}: program controller',
            hardware_id=self.model.name, message=message,
            values=[KeyValue(key=k, value=v) for k, v in values])]))
        w.reset(self.model.nu, len(rows))
