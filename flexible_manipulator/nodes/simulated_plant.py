"""What the simulated plant nodes share: a `Simulation` run like a robot driver.

`SimulatedPlant` owns the parts that do not depend on the model: the common parameters
(``timing_mode``, ``integrator``, ``integration_step``, ``update_period``,
``command_timeout``, ``lockstep_resend_period``, ``publish_clock``, ``world_frame``), the
two timing modes (each period ``update_period`` long, or jittered by ``period_jitter`` as a
real driver's cycles), the intake of ``effort_controller/commands`` (validation, hold for
``command_timeout``, clipping, ``input_delay_periods``: applied that many periods late,
`mechanics.delay_line`), the fault state of a non-finite integration, the
``~/reset`` and ``~/pause`` services (and ``start_paused``, ``pause_at``: paused from the
start, pausing itself at a simulated time), ``clock`` and the ``diagnostics`` skeleton. A plant
node subclasses it and supplies what differs: how it loads its model and initial state,
the messages it publishes per state, its extra diagnostic values and texts.

Timing modes: ``realtime`` advances one ``update_period`` per tick of a wall-clock timer;
``lockstep`` advances one ``update_period`` per received command, and re-publishes the
current state every ``lockstep_resend_period`` wall seconds while no command comes,
without advancing time, and sooner when a new reader of its states matches then (a
controller restarted). A controller may answer every copy of a re-published state it
gets (queued while it was slow, or delivered together once discovery completes): the
first answer is then applied once commands have been quiet for `MERGE_WINDOW` (at most
`MERGE_LIMIT` after it), and the others are dropped; each would otherwise stay in the loop
for good as one more state in flight, every later command acting periods late. For the
same reason a command received before the waiting state was published (its DDS reception
timestamp against the plant's clock when it published the state: one host's clock, so
no clock skew between hosts matters) answers no state: the effort a controller's
stale-state watchdog sends while a loaded plant computes a step, or a late answer to the
state before a reset; nor does a command labelled `common.UNANSWERING` (the package's
controllers label their watchdog's so: sent just after the state was published, before
the controller had it, it would otherwise answer that state). Paused, a lockstep plant
answers commands no more: only the re-publication goes on; resumed, it publishes the
waiting state again at once, and a command received before that answers nothing (a
watchdog's effort sent while it was paused would otherwise answer the resumed state, and
the real answer the next); the answers to that state merge as to a re-published one (a
watchdog's effort without the label, sent after it before the controller had it, then
the real answer: one step, the first applied). Commands are counted on ``/diagnostics``:
``rejected_commands`` (wrong length, not finite; the last valid command stays in force)
apart from ``dropped_commands`` (lockstep: valid commands that answer no state: the other
answers to a re-published state, commands received before the state was published,
labelled commands, commands while paused or before a state is published; each is kept as
the last command but advances nothing).
"""

import math
import time

import numpy as np
from rclpy.clock import Clock, ClockType
from rclpy.node import Node

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rosgraph_msgs.msg import Clock as ClockMsg
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool, Trigger

from . import common, packed_messages
from .common import stamp
from .latency import LatencyHistogram
from ..mechanics.delay_line import DelayLine
from ..mechanics.simulation import NonFiniteStateError, Simulation, StepFailedError
from ..config_checks import ConfigError
from ..plant_config import plant_settings  # noqa: F401 - the plants' settings, declared there

# Quiet wall time [s] after which a lockstep plant takes the step of the first answer to a
# re-published state: the other answers come back to back (a controller working off its
# queue keeps its watchdog quiet meanwhile), and each restarts the wait, up to MERGE_LIMIT
# (a flood of commands cannot hold the plant). Far under a controller's stale-state
# timeout (0.5 s in config/sim.yaml): its watchdog's efforts, received before the state
# was published, are dropped anyway, but they would restart the wait.
MERGE_WINDOW = 0.1
MERGE_LIMIT = 0.5


class SimulatedPlant(Node):
    """ROS adapter around `Simulation`; subclasses fill in the model-specific hooks.

    Hooks, in the order the constructor calls them: `load_model`, `command_layout`,
    `plant_state`, `input_limit`, `setup`, then per state `state_messages`;
    `summary` for the start-up log, `length_problem` for a command of the wrong length,
    `failure_text` for a failed integration step, `diagnostic_values` for /diagnostics.
    """

    # Every parameter of the plant, ``model`` first (a subclass sets it: `plant_settings`
    # and its own).
    SETTINGS = ()
    # Texts that differ between plants.
    INPUT_NAME = 'input'               # what a command entry is ('non-finite input in ...')
    COMMAND_NAME = 'command'           # 'rejected command: ...', '3 commands rejected'
    SIMULATION_NAME = 'simulation'     # diagnostic status '<node>: simulation'
    RESET_MESSAGE = 'plant reset to its initial state at t = 0'
    FAULT_ADVICE = 'call ~/reset to recover'   # logged after the reason of a fault

    def __init__(self, node_name, **node_options):
        """Declare and check parameters, build the simulation, create the ROS interfaces."""
        super().__init__(node_name, **node_options)
        self.model = self.load_model()
        self.parameters = parameters = common.declare_settings(self, self.SETTINGS[1:],
                                                               self.model)
        self.command_index = self.command_layout()
        self.timing_mode = parameters['timing_mode']
        integrator = parameters['integrator']
        step = parameters['integration_step']
        self.update_period = parameters['update_period']
        self.command_timeout = parameters['command_timeout']
        self.resend_period = parameters['lockstep_resend_period']
        self.publish_clock = parameters['publish_clock']
        self.world_frame = parameters['world_frame']
        q0, v0 = self.plant_state()
        try:
            self.sim = Simulation(self.model, step, integrator, q0, v0,
                                  refuse_unstable=parameters['step_check'] == 'refuse')
            self.sim.steps_in(self.update_period)
            if self.sim.step_warning:
                self.get_logger().warning(self.sim.step_warning)
        except ValueError as error:
            raise ConfigError(f'parameters integration_step/update_period: {error}') from None

        self.jitter = parameters['period_jitter']
        if self.jitter >= 0.5 * self.update_period:
            raise ConfigError(f'parameter period_jitter: must be below update_period / 2 '
                              f'({0.5 * self.update_period:g} s), got {self.jitter:g}')
        self.jitter_draws = np.random.default_rng(parameters['jitter_seed'])
        self.jitter_state = np.zeros((1, self.sim.state.size))
        self.input = np.zeros(self.model.nu)         # applied to the model
        # The commands in flight to the actuators (input_delay_periods).
        self.delay_line = DelayLine(self.model.nu, parameters['input_delay_periods'])
        self.last_command = np.zeros(self.model.nu)  # last valid command, model order
        self.last_command_time = -math.inf           # simulated time it arrived
        self.limit = self.input_limit()
        self.low_limit = None if self.limit is None else -np.asarray(self.limit)
        self.paused = parameters['start_paused']
        self.pause_at = parameters['pause_at']
        self.waiting_for_command = parameters['wait_for_command']
        self.fault = ''
        self.rejected = 0                    # commands refused (wrong length, not finite)
        self.dropped = 0                     # lockstep: valid commands that answer no state
        self.clipped = 0
        self.warn_throttled = common.ReasonThrottle(self.get_logger().warning)
        self.waiting_since = time.monotonic()
        self.awaiting_command = False        # lockstep: a published state is unanswered
        self.copies = 0                      # lockstep: publications of the current state
        self.resumed = False                 # lockstep: the current state sent on resume
        self.state_sent_ns = 0               # lockstep: system clock [ns] at its first one
        self.merging = False                 # lockstep: the first answer waits for the others
        self.merge_started = 0.0             # lockstep: wall time of that first answer
        self.merge_timer = None              # lockstep: the quiet wait, only while merging
        self.state_publishers = []           # of `state_messages`, for their match counts
        self.matched = []                    # their matched readers at the last resend check
        self.answer_latency = LatencyHistogram()
        self.restart_real_time_factor()

        # Timers run on the steady clock: with use_sim_time the node clock follows /clock,
        # which the plant itself publishes, so a timer on ROS time would never fire.
        self.steady_clock = Clock(clock_type=ClockType.STEADY_TIME)
        self.clock_message = packed_messages.PackedMessage(ClockMsg(), stamps=[_set_clock])
        self.clock_pub = common.quiet_publisher(self, ClockMsg, 'clock')
        self.diagnostics_pub = common.quiet_publisher(self, DiagnosticArray, 'diagnostics')
        self.setup()
        self.command_reader = packed_messages.Float64ArrayReader()
        common.quiet_subscription(self, Float64MultiArray, 'effort_controller/commands',
                                  self.on_command_bytes, raw=True)
        self.create_service(Trigger, '~/reset', self.on_reset)
        self.create_service(SetBool, '~/pause', self.on_pause)
        if self.timing_mode == 'realtime':
            self.create_steady_timer(self.update_period, self.update)
        else:
            self.create_steady_timer(self.resend_period / 4, self.on_resend_check)
        self.create_steady_timer(1.0, self.publish_diagnostics)
        self.publish_state()
        self.get_logger().info(
            f"simulating '{self.model.name}' ({self.summary()}) in {self.timing_mode} mode: "
            f'{integrator} step {step} s, update period {self.update_period} s')

    # -- hooks ----------------------------------------------------------------------------
    def load_model(self):
        """Declare ``model`` and return the loaded model (`ConfigError` if unusable)."""
        raise NotImplementedError

    def command_layout(self):
        """Model input driven by each command entry: by default all inputs, in model order."""
        return list(range(self.model.nu))

    def plant_state(self):
        """Take this kind of plant's own parameters and return the initial (q, v)."""
        raise NotImplementedError

    def input_limit(self):
        """Symmetric bound at which inputs are clipped: the model's ``input_limit`` if any."""
        return getattr(self.model, 'input_limit', None)

    def setup(self):
        """Create the plant's own publishers, messages and timers (before the first state)."""
        raise NotImplementedError

    def state_messages(self, now):
        """Refresh the state messages stamped ``now``; return (publisher, message) pairs.

        A message is a message object, its serialized bytes, or a function returning either,
        called when its turn to be sent comes (work that can wait until the messages before
        it are out). Return None when the state cannot be published (nothing is sent then).
        """
        raise NotImplementedError

    def summary(self):
        """Describe the model in a few words for the start-up log."""
        raise NotImplementedError

    def length_problem(self, count):
        """Why a command of ``count`` entries is refused (the entry count is wrong)."""
        raise NotImplementedError

    def failure_text(self, error):
        """Text of the fault when an integration step fails with ``error``."""
        return str(error)

    def diagnostic_values(self):
        """Plant-specific (key, value) pairs for /diagnostics, placed after ``paused``."""
        return []

    # -- commands -------------------------------------------------------------------------
    def on_command_bytes(self, data, info):
        """Take a command from its bytes (the subscription is raw: `packed_messages`).

        ``info``: the message's DDS metadata; its reception timestamp (this host's system
        clock [ns], 0 if the middleware gave none) dates the command (module doc).
        """
        received = (info.get('received_timestamp') or 0) if info else 0
        values = self.command_reader.read(data)
        self.on_command_data(values, received,
                             common.UNANSWERING not in self.command_reader.labels)

    def on_command(self, msg):
        """Take a command message (`on_command_data`)."""
        self.on_command_data(msg.data, answer=common.UNANSWERING not in (
            dim.label for dim in msg.layout.dim))

    def on_command_data(self, data, received_ns=0, answer=True):
        """Validate a command's entries; in lockstep, apply it and advance one update period.

        ``data``: the entries, or None for bytes that are no command message (rejected).
        ``received_ns``: when the command was received (system clock [ns]; 0: unknown). In
        lockstep a command received before the waiting state was published answers no
        state, nor does one labelled `common.UNANSWERING` (``answer`` false: a controller's
        watchdog). The first answer to a state published more than once is applied when
        commands have been quiet for `MERGE_WINDOW`; the commands that come meanwhile are
        other answers to that state, and dropped (module doc).
        """
        if self.merging:
            self.dropped += 1                   # another answer to the same state
            if answer and time.monotonic() - self.merge_started < MERGE_LIMIT:
                self.wait_for_quiet()           # wait for quiet again
            return
        if data is None:
            self.reject('malformed', 'not a std_msgs/Float64MultiArray')
        elif len(data) != len(self.command_index):
            self.reject('length', self.length_problem(len(data)))
        elif not all(math.isfinite(x) for x in data):
            self.reject('non-finite',
                        f'non-finite {self.INPUT_NAME} in {[float(x) for x in data]}')
        else:
            self.last_command[self.command_index] = data
            self.last_command_time = self.sim.time
            if self.waiting_for_command:
                self.waiting_for_command = False
                self.restart_real_time_factor()
            if self.timing_mode == 'lockstep' and (
                    self.paused or not self.awaiting_command or not answer
                    or 0 < received_ns < self.state_sent_ns):
                # Kept as the last command, but it answers no state: time does not advance.
                self.dropped += 1
                return
        if self.timing_mode == 'lockstep' and not self.paused:
            if self.awaiting_command:
                # Round trip of the closed loop: state out, controller, command back.
                now = time.monotonic()
                self.answer_latency.add(now - self.waiting_since, now)
                self.awaiting_command = False
            if self.copies > 1 or self.resumed:
                self.merging = True
                self.merge_started = time.monotonic()
                self.wait_for_quiet()
            else:
                self.update()
        # Paused in lockstep, a command is not answered (else the loop would spin on the
        # same state); the resend timer keeps the state alive for the controller.

    def reject(self, kind, reason):
        """Count and log a rejected command; the previous valid command stays in force."""
        self.rejected += 1
        self.warn_throttled(kind, f'rejected {self.COMMAND_NAME}: {reason}; holding the last '
                                  'valid command')

    def select_input(self):
        """Input to apply now: the last valid command while fresh, else zero; clipped."""
        if self.sim.time - self.last_command_time <= self.command_timeout + 1e-12:
            self.input[:] = self.last_command
            if self.limit is not None:      # np.clip, in two ufuncs (a third of its cost)
                np.maximum(self.input, self.low_limit, out=self.input)
                np.minimum(self.input, self.limit, out=self.input)
                if (self.input != self.last_command).any():
                    self.clipped += 1
        else:
            self.input[:] = 0.0

    def applied_input(self):
        """Return the input the model gets over the coming period: the command's."""
        return self.input

    # -- time -----------------------------------------------------------------------------
    def create_steady_timer(self, period, callback):
        """Create a timer on wall time (`steady_clock`), whatever use_sim_time says."""
        return self.create_timer(period, callback, clock=self.steady_clock)

    def wait_for_quiet(self):
        """Lockstep mode: (re)start the `MERGE_WINDOW` wait before `take_merged_step`.

        The timer exists only while a merge waits: every timer of the node, even a cancelled
        one, is an entry of the executor's wait set on every tick.
        """
        if self.merge_timer is None:
            self.merge_timer = self.create_steady_timer(MERGE_WINDOW, self.take_merged_step)
        else:
            self.merge_timer.reset()

    def end_quiet_wait(self):
        """Lockstep mode: drop the merge's timer."""
        if self.merge_timer is not None:
            self.destroy_timer(self.merge_timer)
            self.merge_timer = None

    def take_merged_step(self):
        """Lockstep mode: advance with the first answer to a re-published state."""
        self.end_quiet_wait()
        self.merging = False
        self.update()

    def on_resend_check(self):
        """Lockstep mode: re-publish a state nobody answered.

        Re-publish after ``lockstep_resend_period`` (start-up, a lost command), and sooner,
        after a quarter of it, when a reader of a state topic matched since the last check
        while the state was already re-sent (the loop is stalled): a restarted controller
        gets the state as soon as the plant knows it. A running loop gets no extra copy.
        """
        if self.merging:
            return                      # answered: the step is only delayed
        matched = [publisher.get_subscription_count() for publisher in self.state_publishers]
        new = any(count > before for count, before in zip(matched, self.matched))
        self.matched = matched
        waited = time.monotonic() - self.waiting_since
        stalled = self.copies > 1 and waited > self.resend_period / 4
        if waited > self.resend_period or (new and stalled):
            self.publish_state()

    def update(self):
        """Advance one update period (unless paused or faulted) and publish the state.

        Called per wall-clock tick in realtime mode, per received command in lockstep.
        """
        if not (self.paused or self.waiting_for_command):
            self.copies = 0             # a new state: its publications are counted afresh
            self.resumed = False
            self.select_input()
            self.delay_line.push(self.input, self.input)
            before = self.sim.time
            try:
                if self.jitter:
                    period = self.update_period + self.jitter_draws.uniform(-self.jitter,
                                                                            self.jitter)
                    self.sim.advance_over(self.applied_input()[None], np.array([period]),
                                          self.jitter_state)
                else:
                    self.sim.advance(self.applied_input(), self.update_period)
            except NonFiniteStateError as error:
                self.stop(self.failure_text(error))
            except StepFailedError as error:
                self.stop(str(error))
            except Exception as error:      # noqa: B902 - no exception may end the node
                self.stop(f'simulation step failed: {type(error).__name__}: {error}')
            # Crossed within half a period: the sum of periods carries rounding error.
            if before < self.pause_at - 0.5 * self.update_period <= self.sim.time:
                self.paused = True
                self.restart_real_time_factor()
                self.get_logger().info(f'paused at t = {self.sim.time:.6g} s (pause_at)')
        try:
            self.publish_state()
        except Exception as error:          # noqa: B902 - e.g. TF of an absurd state
            if not self.fault:
                self.stop(f'cannot publish the state: {type(error).__name__}: {error}')

    def stop(self, reason):
        """Pause at the last good state with a fault (only ~/reset clears it); report it."""
        self.paused = True
        self.fault = reason
        self.get_logger().error(f'{reason}; {self.FAULT_ADVICE}')
        self.publish_diagnostics()

    def publish_state(self):
        """Publish the clock and the state messages at the current simulated time."""
        now = stamp(self.sim.time)
        messages = self.state_messages(now)
        if messages is None:
            return
        if self.publish_clock:
            self.clock_message.set_stamp(now.sec, now.nanosec)
            self.clock_pub.publish(self.clock_message.data())
        if self.copies == 0:
            # Before the first message leaves: every answer to the state is received later.
            self.state_sent_ns = time.time_ns()
        for publisher, message in messages:
            # A callable is called as its turn comes (`state_messages`).
            publisher.publish(message() if callable(message) else message)
        if not self.state_publishers:
            self.state_publishers = [publisher for publisher, _ in messages]
        self.copies += 1
        self.waiting_since = time.monotonic()
        self.awaiting_command = True

    def restart_real_time_factor(self):
        """Measure the real-time factor from now on (after start, reset, pause, resume)."""
        self._wall_start, self._sim_start = time.monotonic(), self.sim.time

    # -- services and diagnostics ---------------------------------------------------------
    def on_reset(self, request, response):
        """Go back to the initial state at time zero, zero input, faults cleared."""
        self.sim.reset()
        if self.merging:                # answers to the old state: dropped
            self.end_quiet_wait()
            self.merging = False
        self.input[:] = 0.0
        self.delay_line.clear()
        self.last_command[:] = 0.0
        self.last_command_time = -math.inf
        self.fault = ''
        self.paused = False
        self.restart_real_time_factor()
        self.answer_latency.clear()
        self.copies = 0                 # a new state: answers to the old one are dropped
        self.resumed = False
        self.publish_state()
        response.success = True
        response.message = self.RESET_MESSAGE
        return response

    def on_pause(self, request, response):
        """Pause (data = true) or resume (false) simulated time; a fault needs ~/reset."""
        if not request.data and self.fault:
            response.success = False
            response.message = f'cannot resume: {self.fault}; call ~/reset first'
            return response
        self.paused = bool(request.data)
        self.restart_real_time_factor()
        if (not self.paused and self.timing_mode == 'lockstep' and self.awaiting_command
                and not self.merging):
            # The answers sent while paused were dropped, and a controller's stale-state
            # watchdog sends efforts meanwhile: the waiting state goes out again at once as
            # a new publication, which only a command received after it answers. Its
            # answers merge as a re-published state's do: a watchdog's effort sent before
            # the controller had the state, then the real answer, advance the plant once.
            self.copies = 0
            self.publish_state()
            self.resumed = True
        response.success = True
        response.message = 'paused' if self.paused else 'running'
        return response

    def publish_diagnostics(self):
        """Report plant health: fault, paused, the plant's values, commands, real-time factor."""
        wall = time.monotonic() - self._wall_start
        rtf = (self.sim.time - self._sim_start) / wall if wall > 0 else 0.0
        if self.fault:
            level, message = DiagnosticStatus.ERROR, self.fault
        elif self.rejected:
            level, message = (DiagnosticStatus.WARN,
                              f'{self.rejected} {self.COMMAND_NAME}s rejected')
        else:
            level, message = DiagnosticStatus.OK, 'paused' if self.paused else 'running'
        values = [('simulated_time', f'{self.sim.time:.6f}'),
                  ('real_time_factor', f'{rtf:.3f}'),
                  ('paused', str(self.paused)),
                  *self.diagnostic_values(),
                  ('rejected_commands', str(self.rejected)),
                  ('dropped_commands', str(self.dropped)),
                  ('clipped_commands', str(self.clipped))]
        if self.timing_mode == 'lockstep':
            latency = self.answer_latency
            values += [('answered_states', str(latency.count)),
                       ('lockstep_ticks_per_wall_second', f'{latency.rate():.1f}'),
                       ('answer_latency_p50_ms', f'{1e3 * latency.percentile(50):.3f}'),
                       ('answer_latency_p99_ms', f'{1e3 * latency.percentile(99):.3f}'),
                       ('answer_latency_max_ms', f'{1e3 * latency.maximum:.3f}')]
        status = DiagnosticStatus(level=level, name=f'{self.get_name()}: {self.SIMULATION_NAME}',
                                  hardware_id=self.model.name, message=message,
                                  values=[KeyValue(key=k, value=v) for k, v in values])
        msg = DiagnosticArray(status=[status])
        msg.header.stamp = stamp(self.sim.time)
        self.diagnostics_pub.publish(msg)


def _set_clock(msg, time):
    """Stamp setter of a rosgraph_msgs/Clock (`packed_messages.PackedMessage`)."""
    msg.clock = time
