"""Controller node: the program-constraint controller (`control.program_controller`) on arms.

It never knows whether a simulation or a real arm answers: it reacts to each joint state
(and, with ``elastic_state: measured``, the modal state of the same stamp) with one effort
command, timed by the state's own stamp, and publishes the program's reference and
residuals stamped like that state. ``active_program`` switches programs at run time.
Topics, services, parameters and bad-input behaviour: doc/nodes.md ("controller"), one
source; the safety machinery shared with the servo controller is `controller_base`.
"""

import math
import os

import numpy as np
from rcl_interfaces.msg import SetParametersResult

from sensor_msgs.msg import JointState

from . import common, controller_base, name_map, packed_messages
from .controller_base import ControllerNodeBase, Rows
from .name_map import NameMap, Problem
from ..control.arm_defaults import generated_programs
from ..control.input_delay import InputDelayMonitor
from ..control.program_config import load_program_file, resolve_program_path
from ..control.mismatch_guard import WINDOW
from ..control.program_controller import (build_controller, ControllerSettings,
                                          HOLD_BANDWIDTH)
from ..control.servo_controller import is_servo_model
from ..control.uncertainty import describe, factors_text
from ..config_checks import ConfigError
from ..settings import from_parameters, positive, schema, Setting


DELAY_ACTIONS = ('auto', 'hold', 'warn')
# Wall time [s] between the log lines of joint states without a joint of the model.
MISSING_JOINT_PERIOD = 5.0


def model_programs(model):
    """Return the default of ``program_file``: the package's programs of ``model``, or "".

    config/programs_<model name>.yaml when the package has that file (the demo arms');
    else "": the programs are generated for the model's joints (`arm_defaults`).
    """
    name = f'programs_{model.name}'
    return name if os.path.isfile(resolve_program_path(name)) else ''


# The parameters of the arm controller node that `ControllerSettings` does not take.
NODE_SETTINGS = (
    common.JOINTS,
    Setting('program_file', model_programs,
            'Program file: a path, or the name of a file in config/; default: config/programs_'
            '<model name>.yaml when the package has one; empty: a hold program and joint_sine '
            '(sinusoids about analysis_positions within velocity_limits) generated for the '
            'model\'s joints (doc/hil.md).', kind='str'),
    Setting('active_program', '',
            'Program to track (a name in the program file; empty: its default); unknown names '
            'are refused with the list.', read_only=False),
    Setting('delay_action', 'auto',
            'When every measured tick for delay_patience has its command applied later than '
            'delay_periods: hold (switch to delay_program), warn (report only); auto: hold if '
            'the program file has delay_program.', choices=DELAY_ACTIONS),
    Setting('delay_patience', 0.5,
            'Simulated time [s] a late loop is borne before delay_action (a start-up catch-up '
            'or one slow tick is not an overload).', check=positive),
    Setting('delay_program', 'hold', 'Program switched to when the loop is late (delay_action).'))


class ServoModelGiven(Exception):
    """The ``model`` parameter names a servoconstraint system (see `main`)."""


class ControllerNode(ControllerNodeBase):
    """ROS adapter around `ProgramController` (module doc)."""

    STATE_NAME = 'joint state'
    # A driver that lacks a joint of the model lacks it in every state (hundreds a second):
    # one line per few seconds says so, with the count, without flooding the log.
    REJECTION_LOG_PERIODS = {'missing joint': MISSING_JOINT_PERIOD}
    SETTINGS = (common.model_setting('two_link_flexible'), *schema(ControllerSettings),
                *NODE_SETTINGS, *controller_base.NODE_SETTINGS)

    def load_model(self):
        """Declare ``model`` and load it; a servoconstraint model goes to `main`."""
        model = super().load_model()
        if is_servo_model(model):
            raise ServoModelGiven(model.name)     # `main` makes the servo controller node
        return model

    def create_state_interfaces(self):
        """Joint (and modal) states in, the reference out, ``active_program`` switching."""
        self.reference = Rows(self.row_names())
        self.reference_pub = common.quiet_publisher(self, JointState, '~/reference')
        # Modal states first: when both wait, the executor takes the older subscription
        # first, so the modal state of a stamp is in hand when its joint state is handled.
        # Both are taken as bytes and read in place (`packed_messages`).
        self.modal_reader = packed_messages.JointStateReader()
        self.state_reader = packed_messages.JointStateReader()
        if self.use_modal:
            common.quiet_subscription(self, JointState, 'modal_states', self.on_modal_bytes,
                                      raw=True)
        common.quiet_subscription(self, JointState, 'joint_states', self.on_state_bytes,
                                  raw=True)
        self.add_on_set_parameters_callback(self.on_parameters)

    def build_core(self, model, parameters):
        """Build the `ProgramController` of the program file, and the joint maps."""
        self.command_index = common.joint_order(model, parameters['joints'])
        self.input_names = [model.joint_names[i] for i in range(model.nu)]
        program_file = parameters['program_file']
        settings = from_parameters(ControllerSettings, parameters)
        if program_file:
            programs, default = load_program_file(resolve_program_path(program_file))
        else:
            program_file = 'programs generated for the model'
            programs, default = generated_programs(model, parameters['analysis_positions'],
                                                   parameters['velocity_limits'])
        active = parameters['active_program']
        if active and active not in (programs if isinstance(programs, dict) else {}):
            raise ConfigError(f'parameter active_program: unknown program {active!r} (in '
                              f'{program_file}: {", ".join(map(str, programs or {}))})')
        core = build_controller(model, programs, settings, active or default,
                                source=program_file)
        self.default_program = default or core.program_names[0]
        self.delay_program = self._delay_program(core, program_file, parameters)
        self.delay = InputDelayMonitor(model.nu, core.period)
        self.late_since = None                 # stamp of the first late tick in a row
        self.applied = np.zeros(model.nu)      # the effort a state reports applied
        self.mismatch = ''                     # why the run-time model test tripped
        self.use_modal = core.has_modes and settings.elastic_state == 'measured'
        n = model.n_joints
        self.q, self.v = np.zeros(n), np.zeros(n)
        # Joint states by name, other joints ignored (a real driver's gripper); modal
        # states exactly the model's modes (`name_map`).
        self.joint_map = NameMap(model.joint_names, extras=True)
        self.mode_map = NameMap(model.mode_names)
        self.modal_positions = np.zeros(len(model.mode_names))
        self.modal_velocities = np.zeros(len(model.mode_names))
        self.modal_stamp = None
        self._finite = np.zeros(n, dtype=bool)              # scratch of the finiteness check
        self._modal_finite = np.zeros(len(model.mode_names), dtype=bool)
        self._state_match = None            # the `Match` of the last accepted joint state
        self.missing_joint_states = 0       # states without a joint of the model
        self.reported_lists = 0             # name lists with ignored joints, logged
        return core

    def _delay_program(self, core, program_file, parameters):
        """Return the program to degrade to when the loop is late (``delay_action``), or None."""
        action, name = parameters['delay_action'], parameters['delay_program']
        self.delay_patience = parameters['delay_patience']
        if action == 'warn' or (action == 'auto' and name not in core.program_names):
            return None
        if name not in core.program_names:
            raise ConfigError(f'parameter delay_program: no program {name!r} in '
                              f'{program_file} (programs: {", ".join(core.program_names)}); '
                              'name one, or set delay_action: warn')
        return name

    def log_start(self):
        """Say what runs: realization, models, programs and their checks."""
        core, log = self.core, self.get_logger()
        following = ', model following' if core.following is not None else ''
        log.info(f"controlling '{self.model.name}': {core.realization_kind} realization on "
                 f'{self.control_model_text()}{following}, period {core.period} s '
                 f'({core.settings.hold}), '
                 f'elastic state {core.settings.elastic_state if core.has_modes else "-"}; '
                 f'programs {core.program_names}, active {core.active!r}')
        for entry in core.entries.values():
            text = (f'program {entry.name!r}: {entry.size} rows {entry.row_names}, critical '
                    f'period {entry.critical_period:.4g} s')
            if entry.sampled_radius is not None:
                text += f', sampled-loop spectral radius {entry.sampled_radius:.6f}'
            if entry.worst_case is not None:
                text += (f'; robust over the uncertainty ({describe(core.uncertainty)}): worst '
                         f'spectral radius {entry.worst_case.radius:.6f} at '
                         f'{factors_text(entry.worst_case.factors)}')
            log.info(text)
            for note in entry.notes:
                log.warning(f'program {entry.name!r}: {note}')
        hold = core.hold_law
        if hold is not None:
            worst = hold.entry.worst_case
            log.info(f'safe action hold: alpha {HOLD_BANDWIDTH:g} /s on the rigid twin, '
                     f'critical period {hold.entry.critical_period:.4g} s'
                     + (f', worst spectral radius {worst.radius:.6f} over the uncertainty'
                        if worst is not None else ''))
        else:
            log.info(f'safe action {core.settings.safe_action} while not tracking')

    def mismatch_text(self):
        """Describe the run-time model test: the observer's innovation and its verdict."""
        test = getattr(self.core, 'test', None)
        if test is None:
            return 'not tested (no modes in the law)'
        innovation = self.core.primary.status.innovation
        text = (f'mean normalized innovation {test.mean:.3g} over {WINDOW:g} s (limit '
                f'{test.limit:.3g}); innovation {np.round(innovation, 4).tolist()} N m')
        return f'{text}; {self.mismatch}' if self.mismatch else text

    def control_model_text(self):
        """Describe the control model in a few words."""
        cm = self.core.control_model
        modes = cm.nv - cm.n_joints
        if self.model.nv == self.model.n_joints:
            return 'the rigid model'
        if modes == 0:
            return 'the rigid twin'
        return f'{modes} of {self.model.nv - self.model.n_joints} modes'

    def notes(self):
        """Return the notes of the active program."""
        return self.core.entry.notes

    def row_names(self):
        """Row names of the active program (reference and residual messages)."""
        return list(self.core.entry.row_names)

    # -- states -----------------------------------------------------------------------------
    def parse_state(self, msg):
        """Copy positions and velocities into model order; None, or (kind, reason).

        The model's joints are picked by name (`name_map`: the mapping of a name list is
        computed once, then one `numpy.take` per field); other joints are ignored, their
        values unchecked. A state naming a joint twice, or without a joint of the model, is
        rejected; so is one whose positions or velocities are not one per name, not finite
        for a model joint, or outside the model's physical range (`state_range`).
        """
        names = msg.name
        match = self.joint_map.match(names)
        if isinstance(match, Problem):
            return self._name_problem(match, names)
        if not (match.pick(msg.position, self.q) and match.pick(msg.velocity, self.v)):
            return 'length', (f'{len(names)} names but {len(msg.position)} positions and '
                              f'{len(msg.velocity)} velocities')
        if not (np.isfinite(self.q, out=self._finite).all()
                and np.isfinite(self.v, out=self._finite).all()):
            bad = next(k for k in range(len(self.q))
                       if not (math.isfinite(self.q[k]) and math.isfinite(self.v[k])))
            return 'non-finite', ('non-finite position or velocity of joint '
                                  f'{self.model.joint_names[bad]!r}')
        if match.ignored and not match.reported:
            self._report_ignored(match)
        self._state_match = match
        reason = self.core.state_range.joint_problem(self.q, self.v)
        return None if reason is None else ('range', reason)

    def _name_problem(self, problem, names):
        """(kind, reason) of a joint state whose names are refused (`name_map.Problem`).

        A model joint missing is what a misconfigured driver sends on every tick: its own
        kind, logged at most once per ``MISSING_JOINT_PERIOD`` with a running count.
        """
        if problem.kind != 'missing':
            return 'name', problem.text('joint', self.joint_map.names)
        self.missing_joint_states += 1
        return 'missing joint', (
            f'no joint {problem.name!r} of the model in it (it names {name_map.listed(names)}; '
            f'the model has {", ".join(self.joint_map.names)}): no command for it '
            f'({self.missing_joint_states} such states so far)')

    def _report_ignored(self, match):
        """Log, once per name list (the first few lists), the joints picked and ignored."""
        match.reported = True
        if self.reported_lists >= name_map.CACHE_SIZE:
            return
        self.reported_lists += 1
        more = (' (further name lists with other joints are not reported)'
                if self.reported_lists == name_map.CACHE_SIZE else '')
        self.get_logger().info(
            f'joint states name {match.count} joints: using {", ".join(self.joint_map.names)}'
            f', ignoring {name_map.listed(match.ignored)}{more}')

    def on_modal_bytes(self, data):
        """Take a modal state from its bytes (`on_modal_state`); reject what is none."""
        msg = self.modal_reader.read(data)
        if msg is None:
            self._reject_modal(('modal malformed', 'not a sensor_msgs/JointState'))
        else:
            self.on_modal_state(msg)

    def on_modal_state(self, msg):
        """Keep the latest valid modal state; reject (count, log) any other.

        Valid: the names of the model's modes, each once, in any order, with as many
        finite positions and velocities, inside the physical range (`state_range`). The
        joint state of a rejected modal state's stamp is answered with the estimated modes.
        """
        problem = self._parse_modal(msg)
        if problem is None:
            reason = self.core.state_range.modal_problem(self.modal_positions,
                                                         self.modal_velocities)
            problem = None if reason is None else ('modal range', reason)
        if problem is not None:
            self._reject_modal(problem)
            return
        stamp = common.seconds(msg.header.stamp)
        self.modal_stamp = stamp
        if self.last_stamp is not None and stamp == self.last_stamp:
            # Late: the joint state of this stamp was answered with the estimate.
            self.core.rebase_elastic(stamp, self.modal_positions, self.modal_velocities)

    def _reject_modal(self, problem):
        """Count and log a rejected modal state; its joint state gets the estimated modes."""
        self.modal_stamp = None
        self.rejected += 1
        self.warn_throttled(problem[0], f'rejected modal state: {problem[1]}')

    def _parse_modal(self, msg):
        """Copy a modal state into model mode order; None, or (kind, reason).

        The names are mapped as a joint state's (`name_map`), without extras.
        """
        names = msg.name
        match = self.mode_map.match(names)
        if isinstance(match, Problem):
            return 'modal name', (f'{match.text("mode", self.mode_map.names)}; expected each '
                                  f'of the {len(self.mode_map.names)} modes once')
        if not (match.pick(msg.position, self.modal_positions)
                and match.pick(msg.velocity, self.modal_velocities)):
            return 'modal length', (f'{len(names)} names but {len(msg.position)} positions '
                                    f'and {len(msg.velocity)} velocities')
        if not (np.isfinite(self.modal_positions, out=self._modal_finite).all()
                and np.isfinite(self.modal_velocities, out=self._modal_finite).all()):
            return 'modal non-finite', 'non-finite modal position or velocity'
        return None

    def on_state_bytes(self, data, info):
        """Take a joint state from its bytes (`on_state`); reject what is none."""
        msg = self.state_reader.read(data)
        if msg is None:
            self.reject(('malformed', 'not a sensor_msgs/JointState'))
        else:
            self.on_state(msg, info)

    def on_state(self, msg, info):
        """Answer one joint state with one effort command (and the program topics).

        ``msg``: a JointState message, or a reader's view of one (`packed_messages`).
        """
        if self.answered_copy(msg, info):
            return
        problem = self.parse_state(msg)
        t = common.seconds(msg.header.stamp)
        repeated = t == self.last_stamp
        if problem is None and not repeated:
            self.watch_delay(msg, t)
        modal = ((self.modal_positions, self.modal_velocities)
                 if self.use_modal and self.modal_stamp == t else (None, None))
        # The effort the state reports applied feeds the elastic-state observer.
        applied = (self.applied if problem is None and len(msg.effort) == len(msg.name)
                   else None)
        effort = self.respond(msg, problem, self.q, self.v, *modal, applied)
        if effort is not None and not repeated:
            self.delay.sent(t, effort)
        mismatch = getattr(self.core, 'degraded', '')
        if mismatch and mismatch != self.mismatch:
            self.mismatch = self.degraded = mismatch
            self.get_logger().warning(mismatch)

    def watch_delay(self, msg, t):
        """Measure the input delay from the effort the state reports (`input_delay`).

        When every measured tick for ``delay_patience`` (simulated time) was past
        ``delay_periods``, switch to ``delay_program`` (when ``delay_action`` allows) and
        say why.
        """
        if not self._state_match.pick(msg.effort, self.applied):
            return                          # a plant that reports no applied effort
        delay = self.delay.measure(t, self.applied)
        if delay is None:
            return
        self.window.add_delay(delay, self.allowed_delay)
        if delay <= self.allowed_delay:
            self.late_since = None
            return
        if self.late_since is None:
            self.late_since = t
        late = t - self.late_since
        if (late >= self.delay_patience and self.delay_program is not None
                and self.core.active != self.delay_program and not self.degraded):
            self.degraded = (f'commands applied {delay} periods late for {late:.3g} s (the '
                             f'start-up checks allowed {self.allowed_delay}): switched from '
                             f'{self.core.active!r} to {self.delay_program!r}')
            self.get_logger().warning(self.degraded)
            self.switch_program(self.delay_program)

    def publish_program(self, stamp):
        """Publish the reference and the residuals, stamped like the state they answer."""
        entry = self.core.entry
        self.reference.publish(self.reference_pub, stamp, entry.reference, entry.reference_rate,
                               entry.reference_acceleration)
        super().publish_program(stamp)

    def on_parameters(self, parameters):
        """Switch programs when ``active_program`` is set; refuse unknown names."""
        for parameter in parameters:
            if parameter.name != 'active_program':
                continue
            name = parameter.value or self.default_program
            try:
                self.switch_program(name)
            except ValueError as error:
                return SetParametersResult(successful=False, reason=str(error))
            self.degraded = ''
        return SetParametersResult(successful=True)

    def switch_program(self, name):
        """Make ``name`` the active program (ValueError if unknown); log it."""
        self.core.switch(name)
        self.reference.name = self.residuals.name = self.row_names()
        for window in (self.window, self.run):
            window.reset(self.model.nu, len(self.residuals.name))
        self.get_logger().info(f'switched to program {name!r}; its time starts at the next '
                               'state')

    def mode_values(self):
        """Diagnostic values of arms: programs, control model, internal dynamics."""
        core, w = self.core, self.window
        entry = core.entry
        zero_dynamics = entry.zero_dynamics
        return [
            ('programs', ', '.join(core.program_names)),
            ('realization', f'{core.realization_kind} on {self.control_model_text()}'),
            ('elastic_state', core.settings.elastic_state if core.has_modes else 'none'),
            ('model_following', 'off' if core.following is None else
             f'arm to internal model {core.status.following_error:.3g} rad, payload '
             f'x{core.status.payload_factor:.3g}'),
            ('robustness_margin', '' if entry.robustness_margin is None
             else f'{entry.robustness_margin:.3g}'),
            ('model_mismatch', self.mismatch_text()),
            ('estimated_ticks', str(w.estimated)),
            ('critical_period', f'{entry.critical_period:.6g}'),
            ('sampled_loop_radius', '' if entry.sampled_radius is None
             else f'{entry.sampled_radius:.6f}'),
            ('zero_dynamics', zero_dynamics.message if zero_dynamics is not None
             else 'not analysed'),
            ('notes', ' | '.join(entry.notes)),
        ]


def main(args=None):
    """Entry point of the ``controller`` executable.

    Given a servoconstraint model, the ``controller`` executable runs the servo controller
    (``servo_controller``'s node) with a deprecation warning.
    """
    common.run(make_node, args, name='ControllerNode')


def make_node(**node_options):
    """Make the ``controller`` node for the model of its parameters (`nodes.container` too)."""
    try:
        return ControllerNode(**node_options)
    except ServoModelGiven as given:
        from .servo_controller_node import ServoControllerNode
        node = ServoControllerNode(**node_options)
        node.get_logger().warning(
            f'model {given} is a servoconstraint system: run the servo_controller executable '
            f'for it (the controller executable will refuse it in the next release)')
        return node


if __name__ == '__main__':
    main()
