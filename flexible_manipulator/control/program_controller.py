"""Program-constraint controller: one measured state in, efforts and a status out (no ROS).

Per tick (``ProgramController.update``), with the state measured at time t:

1. state: joint positions and velocities (measured); modal coordinates of the flexible
   links measured (a simulation publishes them) or estimated (see "Elastic state");
2. program: the active named program evaluates its rows phi(q, t), phi', J and the bias
   (``programs``) at program time tau = t - t_start;
3. stabilization: A q'' = b with b = -bias - 2 alpha phi' - beta^2 phi per row
   (``stabilization``, gains per row);
4. realization (``realization``) on the control model M(q) q'' + h(q, v) = B u:

   * ``servo`` (Beghin): forces only along the input directions B (the flexible modes are
     not actuated); (A M^-1 B) u = b - A a, its singular values checked every tick, damped
     least squares below sigma_max / condition_limit (status ``damped``);
   * ``ideal`` (Udwadia-Kalaba, Gauss): for a fully actuated control model (a rigid arm, or
     the rigid twin of a flexible one, whose elastic modes are then not modelled);
     redundancy (fewer rows than coordinates) is resolved by the secondary objective below;

5. limits: efforts clipped to +-effort_limit, then their change per tick limited to
   effort_rate_limit * dt; the status lists the clipped and rate-limited inputs, the effort
   dropped (unsaturated - applied) and the constraint-acceleration error that results,
   A M^-1 (B u_applied - h) - b (zero when nothing is dropped);
6. safety: a joint faster than its velocity limit latches a fault until ``enable()``;
   disabled, a fast joint is no fault. Disabled or faulted, the controller commands the
   safe action (``safe_action``: zero, gravity or the hold law; `safe_actions`, which also
   holds the driver convention, ``driver_compensation``).

Secondary objective (directions the program leaves free): Q_s = K_p (q_0 - q) - K_d v on
the joints (``posture``, ``posture_stiffness``, ``posture_damping``); the ideal realization
adds it to the free force (Gauss: the realized motion is the admissible one closest to what
Q_s would produce), the servo realization as the preferred effort in the null space of
A M^-1 B. With the default gains 0 the ideal realization gives the minimum-Gauss-norm
(natural) motion and the servo realization the minimum-norm effort.

Control model (`law_choice`): the full model of the file, a reduced one (``control_modes``)
or the rigid twin. Checks at construction, each refused with a `ConfigError` naming the
program: `controller_setup`. Model following: `following_tick`.

Elastic state (models whose control model has modes). With ``elastic_state: measured`` the
modal coordinates come with each state (a simulation publishes them); a tick without them
runs on the estimate. With ``estimated`` (a real arm: only joints are measured) they are
estimated from the measured joint motion and the applied efforts
(`elastic_estimator.ElasticStateEstimator`: the full model's modal rows driven by the
joint acceleration, corrected by the joint rows' innovation, all modes of the file; the
control model's modes are then picked by name). The applied effort is what the plant
reports (``update``'s ``applied_effort``), else the command sent ``delay_periods`` + 1
states before. The estimate starts from the static equilibrium of the modal rows at the
first state, so the arm must be at rest then; a gap longer than ``max_gap`` restarts it
there. `build_controller` adds the run-time test of the model (``mismatch_guard``): past
it, the robust alternative takes over.

Program files (``program_config.load_program_file`` reads them): doc/programs.md, its row
types generated from the registry of row types (`rows`); ``hold`` rows keep their joints
where the program starts, ``lambda_point`` rows are the redefined output (`controller_setup`).
"""

from dataclasses import replace
import math

import numpy as np

from ..config_checks import ConfigError
from .controller_settings import ControllerSettings
from .controller_setup import ControllerSetup
from .following_tick import FollowingTick
from .law_choice import ROBUST_ALTERNATIVES
from .limits import clip, limit_rate
from .mismatch_guard import MismatchGuard
from .program_config import load_program_file
from .safe_actions import HOLD_BANDWIDTH, HOLD_PROGRAM, hold_program, SafeActions, SLOW_FRACTION
from .safety import checked_time, take

__all__ = ['build_controller', 'build_hold_law', 'controller_from_files', 'ControllerSettings',
           'HOLD_BANDWIDTH', 'ProgramController', 'SLOW_FRACTION']


class ProgramController(ControllerSetup, FollowingTick, SafeActions):
    """The control law of the module doc, with its named programs and its status.

    Built by `controller_setup.ControllerSetup`; its safe action and driver convention are
    `safe_actions.SafeActions`', model following's state `following_tick.FollowingTick`'s.
    """

    def __init__(self, model, programs, settings=None, default=None, source='programs',
                 hold_law=None):
        """Build and check every program; the active one is ``default`` (or the first).

        :param model: the arm's model (a fixed-base chain model, flexible or rigid).
        :param programs: mapping name -> program spec (module doc).
        :param settings: `ControllerSettings`.
        :param source: prefix of error messages (e.g. the program file's path).
        Raises `ConfigError` naming the field, the bound or the zero-dynamics verdict.
        With ``realization`` and ``control_model`` both ``auto`` on a flexible model, a
        servo law on the full model that is not robust over ``uncertainty``
        (`admission.NotRobustError`) gives way to model following, else to the rigid twin,
        with a note saying why. ``hold_law``: the hold law of ``safe_action: hold`` when
        another controller of the same model and settings has built it (`build_controller`).
        """
        self._construct(model, programs, settings or ControllerSettings(), default, source)
        self._setup_safety(hold_law)

    def _build_hold_law(self):
        """Build and admit the hold law of ``safe_action: hold`` (`safe_actions`), enabled."""
        return build_hold_law(self.model, self.settings, self.effort_limit)

    # -- commands -------------------------------------------------------------------------
    @property
    def program_names(self):
        """Names of the configured programs, in file order."""
        return list(self.entries)

    @property
    def entry(self):
        """The active `ProgramEntry`."""
        return self.entries[self.active]

    def switch(self, name):
        """Make program ``name`` active; its time starts at the next state (ValueError)."""
        if name not in self.entries:
            raise ValueError(f'unknown program {name!r} (known: {", ".join(self.entries)})')
        self.active = name
        self._start = None
        entry = self.entries[name]
        if self.estimates_modes:
            self.estimator.set_gain(entry.observer_gain)
        elif self.tests_model:
            self.estimator.set_gain(entry.model_test_gain)
        status = self.status
        status.program = name
        status.realization = entry.realization.status
        status.constraint_error = entry.constraint_error
        status.residual = entry.program.phi
        status.residual_rate = entry.program.rate

    def restart(self):
        """Forget past states: program time, the last state and the elastic estimate restart."""
        self._start = None
        self._valid = False
        self._prev_time = None

    # -- the tick -------------------------------------------------------------------------
    def _elastic_state(self, gap, elastic_positions, elastic_velocities, applied):
        """Fill the modal part of (q, v): measured, or advanced by the estimator.

        ``gap``: time since the previous state [s] (inf for the first one); ``applied``: the
        effort applied over the interval that ends at this state (the observer's).
        """
        n, est = self.n_joints, self.estimator
        if self.settings.elastic_state == 'measured' and elastic_positions is not None:
            est.corrected = False
            if est.gain is not None and 0.0 < gap <= self.max_gap:
                # The model test: predict this tick from the last measured modal state
                # (the estimator holds it) and the joint motion; the innovation says how
                # far the arm's modes moved from the model's prediction.
                acceleration = (self.v[:n] - self._prev_joint_velocity) / gap
                est.advance(self._prev_q_joints, self._prev_joint_velocity, acceleration, gap,
                            self.period, applied)
                if est.corrected:
                    self.status.normalized_innovation = est.normalized
            est.position[:] = elastic_positions
            est.velocity[:] = elastic_velocities
            self.status.elastic_source = 'measured'
        elif gap > self.max_gap:
            est.initialize(self.q[:n])
            self.status.elastic_source = 'estimated'
        else:
            if gap > 0.0:
                acceleration = (self.v[:n] - self._prev_joint_velocity) / gap
                est.advance(self._prev_q_joints, self._prev_joint_velocity, acceleration, gap,
                            self.period, applied)
                if est.corrected:
                    self.status.normalized_innovation = est.normalized
            self.status.elastic_source = 'estimated'
        self.elastic_positions[:] = est.position
        self.elastic_velocities[:] = est.velocity
        self.q[n:] = est.position[self.mode_select]
        self.v[n:] = est.velocity[self.mode_select]

    def rebase_elastic(self, t, elastic_positions, elastic_velocities):
        """Take modal coordinates measured at the previous state's time ``t`` late.

        When a modal state arrives after the joint state of the same time, the estimate of
        the next tick starts from it. Ignored unless ``t`` is the previous state's time.
        """
        if self.has_modes and self._prev_time is not None and t == self._prev_time:
            self.estimator.position[:] = elastic_positions
            self.estimator.velocity[:] = elastic_velocities

    def update(self, t, joint_positions, joint_velocities, elastic_positions=None,
               elastic_velocities=None, applied_effort=None):
        """Return the efforts (model input order) for the state measured at ``t`` [s].

        ``joint_*``: model joint order [rad, rad/s or m, m/s]; ``elastic_*``: the modal
        coordinates of the model (its ``mode_names`` order) measured at ``t``, or None (the
        estimate is used); ``applied_effort``: the effort the plant applied over the period
        that ends at ``t`` (model input order; a measured torque or the command a plant
        reports), or None: the command sent ``delay_periods`` + 1 states ago (the
        observer's input; a non-finite report counts as none). The returned array is
        reused by the next call; ``status`` says
        what happened. Never raises: a state that cannot be taken (wrong length, not
        finite) or a failure of any later step latches a fault naming the step, with zero
        effort (`safety.LatchedSafety.guarded_tick`).
        """
        self._total = False
        effort = self.guarded_tick(self._tick, t, joint_positions, joint_velocities,
                                   elastic_positions, elastic_velocities, applied_effort)
        return self._send(effort)

    def _tick(self, t, joint_positions, joint_velocities, elastic_positions,
              elastic_velocities, applied_effort):
        """Run the steps of `update`, each named in ``self.step`` as it starts."""
        n, status, cm, scratch = self.n_joints, self.status, self.control_model, self._finite
        t = checked_time(t)
        if self._prev_time is not None and t < self._prev_time:
            # Time went backwards (a plant reset, a replayed log): start over.
            self.restart()
        take(self.q[:n], joint_positions, 'joint_positions', scratch[0])
        take(self.v[:n], joint_velocities, 'joint_velocities', scratch[0])
        measured = elastic_positions is not None and self.has_modes
        if measured:
            take(self._measured[0], elastic_positions, 'elastic_positions', scratch[1])
            take(self._measured[1], elastic_velocities, 'elastic_velocities', scratch[1])
        if self.compensates:
            self.step = 'driver compensation'
            self._driver_part()
        too_fast = np.greater(np.abs(self.v[:n], out=self._speed), self.velocity_limit,
                              out=scratch[0])
        if too_fast.any() and self.enabled and not self.fault:
            j = int(np.argmax(too_fast))
            self.fault = (f'joint {self.model.joint_names[j]!r} at {self.v[j]:.3f} rad/s '
                          f'exceeds its velocity limit {self.velocity_limit[j]:g} rad/s')
        # Time since the previous state; past max_gap the estimates start over.
        gap = math.inf if self._prev_time is None or not self._valid else t - self._prev_time
        if self.following is not None:
            status.elastic_source = 'model'
        elif self.has_modes:
            # After the safety check: a failing estimate must not hide a too-fast joint.
            self.step = 'elastic-state estimator'
            applied = self._sent[self._sent_next]      # the oldest command kept
            if applied_effort is not None:
                if np.ndim(applied_effort) != 1 or len(applied_effort) != applied.size:
                    raise ValueError(f'applied_effort: expected {applied.size} values, got '
                                     f'shape {np.shape(applied_effort)}')
                self._applied[:] = applied_effort
                if np.isfinite(self._applied, out=self._applied_finite).all():
                    applied = self._applied
                    if self.compensates:        # the command reported, less the driver's
                        applied = np.add(applied, self._driver, out=self._applied_total)
            self._elastic_state(gap, *(self._measured if measured else (None, None)),
                                applied)
        else:
            status.elastic_source = 'none'
        self._valid = True
        dt = self.period if self._prev_time is None or t <= self._prev_time else \
            t - self._prev_time
        self._prev_joint_velocity[:] = self.v[:n]
        self._prev_q_joints[:] = self.q[:n]
        self._prev_time = t
        if self.fault or not self.enabled:
            status.mode = 'fault' if self.fault else 'disabled'
            status.fault = self.fault
            return self._safe_tick(t, self.v[:n])
        self._hold_taken = False            # tracking: the next safe tick takes the target
        if self.following is not None:
            self.step = 'internal model'
            self._internal_state(t, gap > self.max_gap, measured)
        self.step = 'control model'
        mass, bias = cm.mass_and_bias(self.data, self.q, self.v, self._mass, self._bias)
        self.step = 'control law'
        return self._realize(t, mass, bias, dt)

    def _realize(self, t, mass, bias, dt):
        """Program, stabilization, realization, limits (module doc, steps 2-5)."""
        status, entry, cm = self.status, self.entry, self.control_model
        if self._start is None:
            self._start = t
            for hold in entry.holds:
                hold.capture(self.q)
        tau = t - self._start
        # Model following: the law runs on the internal model, delay_periods ahead.
        lead = 0.0 if self.following is None else self.following.lead * self.period
        program = entry.program.evaluate(tau + lead, self.q, self.v)
        target = entry.stabilization.evaluate(program)
        A = program.jacobian
        realization = entry.realization
        free_rows = program.size < (cm.nu if self.realization_kind == 'servo' else cm.nv)
        if self.realization_kind == 'servo':
            preferred = None
            if self.secondary and free_rows:
                self._posture_force()
                np.matmul(self.input_matrix.T, self._secondary, out=self._preferred)
                preferred = self._preferred
            realization.realize(mass, bias, A, target, self.input_matrix, preferred)
        else:
            secondary = None
            if self.secondary and free_rows:
                secondary = self._posture_force()
            realization.realize(mass, bias, A, target, None, secondary)
        if realization.status.code in ('inconsistent', 'unrealizable'):
            # A program that cannot be met is a fault, not "tracking" with a warning.
            return self.latch_fault(f'program {self.active!r} cannot be met at t = {t:.6f} s: '
                                    f'{realization.status.message}')
        effort = self.effort
        if self.following is not None:
            self.step = 'model following'
            wanted = self.following.follow(realization.effort, *self._arm)
            self.step = 'limits'
            status.unsaturated[:] = wanted
            clip(wanted, -self.effort_limit, self.effort_limit, effort, status.clipped)
        else:
            self.step = 'limits'
            effort[:] = realization.effort
            status.unsaturated[:] = realization.unsaturated
            status.clipped[:] = realization.status.clipped
        limited = status.rate_limited
        if self._rate_limits:
            limit_rate(effort, self.last_effort, self.effort_rate_limit, dt, self._limited,
                       limited)
        else:
            limited[:] = False
        if self.following is None and limited.any():
            # Constraint-acceleration error with the efforts actually applied.
            np.matmul(self.input_matrix, effort, out=self._acceleration)
            self._acceleration -= bias
            acceleration = np.linalg.solve(mass, self._acceleration)
            np.matmul(A, acceleration, out=entry.constraint_error)
            entry.constraint_error -= target
        else:
            # Model following: the constraint error stays the internal model's (what its
            # law met); the arm's rate-limited efforts are flagged all the same.
            entry.constraint_error[:] = realization.constraint_error
        np.subtract(status.unsaturated, effort, out=status.dropped)
        status.constraint_error_norm = float(np.linalg.norm(entry.constraint_error))
        if self.following is not None:
            self._report_arm(tau)
        entry.fill_reference(tau)
        status.program_time = tau
        status.mode = 'tracking'
        status.fault = ''
        self.last_effort[:] = effort
        self._total = True
        return effort

    def _posture_force(self):
        """Q_s = K_p (q_0 - q) - K_d v on the joints, zero on the modes."""
        n, out = self.n_joints, self._secondary
        out[:] = 0.0
        np.subtract(self.posture, self.q[:n], out=out[:n])
        out[:n] *= self.posture_stiffness
        out[:n] -= self.posture_damping * self.v[:n]
        return out


def build_hold_law(model, settings, effort_limit=None):
    """Return the hold law of ``safe_action: hold`` for ``model``, admitted and enabled.

    ``settings``: the controller's (`ControllerSettings`); ``effort_limit``: its efforts'
    limits [N m] (None: as the settings give them). The law: `hold_program` realized
    ideally on the rigid twin, no rate limit, no velocity limit of its own (`safe_actions`).
    Raises `ConfigError` in one line, starting 'safe_action: hold', when the checks refuse
    it.
    """
    n = model.n_joints
    settings = replace(
        settings, realization='ideal', control_model='rigid_twin', model_following=False,
        safe_action='zero', driver_compensation=None,
        effort_limits=None if effort_limit is None else list(effort_limit),
        effort_rate_limits=None, velocity_limits=[math.inf] * n, require_limits=False,
        posture=None, posture_stiffness=None, posture_damping=None)
    try:
        law = ProgramController(model, {HOLD_PROGRAM: hold_program(model.joint_names[:n])},
                                settings, HOLD_PROGRAM, source='safe_action: hold')
    except ConfigError as error:
        raise ConfigError(f'safe_action: hold: its hold law (alpha = {HOLD_BANDWIDTH:g} /s, '
                          f'ideal on the rigid twin) is refused: {error}') from None
    law.enable()
    return law


def build_controller(model, programs, settings=None, default=None, source='programs'):
    """Build the `ProgramController`; guard it at run time when its law has modes.

    With the elastic state estimated or measured the result is a
    `mismatch_guard.MismatchGuard` over
    the controller and the first of `ROBUST_ALTERNATIVES` the checks admit (built now: a
    real-time loop has no time to build it when the test trips); else the controller.
    """
    law = ProgramController(model, programs, settings, default, source)
    if not law.tests_model:
        return law
    for changes, what in ROBUST_ALTERNATIVES:
        try:
            robust = ProgramController(model, programs, replace(law.settings, **changes),
                                       law.active, source, hold_law=law.hold_law)
        except ConfigError:
            continue
        return MismatchGuard(law, robust, law.settings.mismatch_action, what)
    return MismatchGuard(law, None, law.settings.mismatch_action)


def controller_from_files(model_path, program_path, settings=None, **overrides):
    """Load a model file and a program file and build the controller.

    ``overrides`` replace fields of ``settings`` (e.g. ``period=0.001``).
    """
    from ..model_config import load_model
    settings = replace(settings or ControllerSettings(), **overrides)
    programs, default = load_program_file(program_path)
    return ProgramController(load_model(model_path), programs, settings, default,
                             source=str(program_path))
