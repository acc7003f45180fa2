"""Building a program controller: its settings read, its law chosen, its programs admitted.

`ControllerSetup` is the part of `program_controller.ProgramController` that runs at
construction: it reads the settings (`controller_settings`), chooses the law
(`law_choice`), builds the control model's buffers and admits each program
(`admission`), falling back under ``auto`` to a robust alternative. The attributes it
sets are what the tick and `admission` read.

Checks at construction (each refused with a `ConfigError` naming the program):

* per-row discrete stability: every row's gains against the control period T and the hold
  scheme (``stabilization.check``; ZOH: T < min(1/alpha, 4 alpha/beta^2)); the message
  gives the bound;
* internal dynamics (models with unactuated coordinates), linearized at rest at the
  program's start (joint angles solved from the rows at t = 0 starting from
  ``analysis_positions``; modes at rest) on the full model of the file:
  (a) zero dynamics of the program's output (``zero_dynamics.analyze_output``; the rows'
  Jacobian on the control model, zero on unmodelled modes): the tip of a flexible link is
  non-minimum phase; (b) the closed loop of the full linearized plant and the linearized
  control law (`loop_checks.LinearLoop`), held over T (ZOH) and applied 0 to
  ``delay_periods`` periods late (transport and computation delay: 0 in lockstep, 1 for a
  real-time plant that applies a command from the next period on): its spectral radius
  must be < 1 (for other hold schemes, the continuous closed loop must be stable). A
  program failing (a) or (b) is refused (``non_minimum_phase: refuse``) with the limit
  lambda* below which the redefined output (``lambda_point``) passes (b), rebuilt with
  its point and tcp rows replaced by that output at lambda = ``redefine_margin`` *
  lambda*, its joint and hold rows kept (``redefine``), or run anyway (``allow``: for
  experiments; its internal dynamics diverge); not given, it is ``redefine`` with
  ``realization`` and ``control_model`` both ``auto``, else ``refuse``
  (`admission.non_minimum_phase_policy` says why);
* robustness (sampled loops of flexible models): the loop of (b) on every plant of the
  declared ``uncertainty`` (factor ranges on stiffness, damping, payload, friction and
  armature; `uncertainty.DEFAULT_UNCERTAINTY` when None, `uncertainty.EXACT_MODEL` for a
  plant that is the model's own copy) must stay stable; else refused with the margin, the
  worst plant and the robust alternatives (`admission.NotRobustError`). With
  ``realization`` and ``control_model`` both ``auto`` (model following tried first when
  the elastic state is estimated, the input late and the plant uncertain:
  `following_first`), a servo law on the flexible model refused by (b) (a minimum-phase
  output: `admission.UnstableLoopError`) or by this check gives way to model following,
  else to computed torque on the rigid twin, with a note saying why; when all are
  refused, the refusal leads with one that no spectral radius ranks (a program an
  alternative refuses for its own reason: that program and its refusal), else names the
  one that came closest (its worst spectral radius), and the others';
* a control model with modes under the ideal realization is refused (it would need forces
  on the modes).

With the elastic state estimated, (b) and the robustness check include the observer's
dynamics with its gain (`loop_checks.LinearLoop.radius`, ``observer``; the gain is
designed at the program's rest, ``observer_design``): without the correction the estimate
makes joint programs on the demo arm unstable (spectral radius 1.002 at 2 ms), with it
0.9994, and they are admitted over the default uncertainty.
"""

from dataclasses import replace

import numpy as np

from ..config_checks import ConfigError, number
from ..settings import check_declared
from . import admission
from .arm_defaults import analysis_pose, require_limits
from .controller_settings import per_joint
from .controller_status import ControllerStatus
from .elastic_estimator import ElasticStateEstimator
from .law_choice import choose_law, closest, ROBUST_ALTERNATIVES
from .model_following import ModelFollowing
from .observer_design import kalman_gain, parse_noise
from .program_config import assemble, parse_program
from .program_entry import ProgramEntry
from .realization import IdealRealization, ServoRealization
from .state_range import StateRange
from .uncertainty import parse_uncertainty


def following_first(model, settings):
    """Tell whether ``auto`` tries model following before the servo law on ``model``.

    With the elastic state estimated, the input late (``delay_periods`` > 0) and the plant
    declared uncertain (not `uncertainty.EXACT_MODEL`) on a flexible model: the direct law
    then cancels the elastic forces of an observer's
    estimate, as good as the model and one or more periods old, and its accuracy goes
    with them (bench/README.md, bench_arms.py: the Panda-like arm at 1 ms, one period
    late), where model following needs no estimate of the arm's modes (its law's modes are
    the internal model's) and cancels nothing elastic in the arm's loop.
    """
    uncertain = any(lo < hi for lo, hi in parse_uncertainty(settings.uncertainty).values())
    return (settings.elastic_state == 'estimated' and settings.delay_periods > 0
            and uncertain and model.nv > model.nu)


class ControllerSetup:
    """Mixin of `program_controller.ProgramController`: its construction (module doc)."""

    def _construct(self, model, programs, settings, default, source):
        """Build with ``settings`` or, refused under ``auto``, an alternative (`__init__`).

        Every alternative's refusal is kept: a plain `ConfigError` (one no comparison of
        loops ranks, e.g. a program another law refuses for its own reason) is the
        blocker the final refusal leads with; else the servo law's, with the one that
        came closest (`law_choice.closest`). An admitted alternative's note names the refusals
        before it.
        """
        auto = (settings.realization == settings.control_model == 'auto'
                and not settings.model_following)
        first = []                      # model following's refusal when tried first
        if auto and following_first(model, settings):
            following, what = ROBUST_ALTERNATIVES[0]
            try:
                self._setup(model, programs, replace(settings, **following), default, source)
            except ConfigError as refusal:
                first.append((what, refusal))
            else:
                for entry in self.entries.values():
                    entry.notes.insert(0, f'auto: {what}, tried first: the elastic state is '
                                       'estimated and the input late (`following_first`)')
                return
        try:
            self._setup(model, programs, settings, default, source)
        except admission.UnstableLoopError as error:
            if not auto:
                raise
            tried = [('the servo law on the flexible model', error)] + first
            for fallback, what in ROBUST_ALTERNATIVES:
                if any(what == w for w, _ in first):
                    continue
                try:
                    self._setup(model, programs, replace(settings, **fallback), default,
                                source)
                except ConfigError as refusal:
                    tried.append((what, refusal))
                    continue
                why = 'not robust' if isinstance(error, admission.NotRobustError) else \
                    'refused on the model'
                note = (f'auto: {what}, because the servo law on the flexible model is '
                        f'{why}: {error}' + ''.join(f'; {w} refused too: {r}'
                                                    for w, r in tried[1:]))
                for entry in self.entries.values():
                    entry.notes.insert(0, note)
                return
            blockers = [(what, refusal) for what, refusal in tried
                        if not isinstance(refusal, admission.UnstableLoopError)]
            if blockers:
                what, blocker = blockers[0]
                others = '; '.join(f'{w}: {r}' for w, r in tried if r is not blocker)
                raise ConfigError(f'{blocker} (auto: under {what}); auto: no law it knows is '
                                  f'admitted, the others refused: {others}') from None
            raise type(error)(f'{error}; {closest(tried)}', error.radius) from None

    def _setup(self, model, programs, settings, default, source):
        """Build and check everything for ``settings`` (`__init__`)."""
        self.settings = settings
        self.source = source
        if getattr(model, 'floating_base', None) is not None:
            raise ConfigError(f'model {model.name!r}: the controller drives fixed-base chains '
                              'only (a floating base needs its pose measured)')
        self.model = model
        n, nu = model.n_joints, model.nu
        self.n_joints = n
        # The checks a node runs on these parameters (`settings`), for ROS-free callers.
        check_declared(settings)
        self.period = float(settings.period)
        (self.realization_kind, self.control_model_kind, self.rigid_twin,
         self.control_model) = choose_law(model, settings)
        # Errors name the node parameters (effort_limits, ...) these settings come from.
        self.effort_limit = per_joint(settings.effort_limits, nu, 'effort_limits',
                                      settings.effort_limit_fraction * model.effort_limit)
        self.effort_rate_limit = per_joint(settings.effort_rate_limits, nu,
                                           'effort_rate_limits', np.inf)
        self._rate_limits = bool(np.any(np.isfinite(self.effort_rate_limit)))
        self.velocity_limit = per_joint(settings.velocity_limits, n, 'velocity_limits',
                                        model.velocity_limit)
        if settings.require_limits:
            require_limits(model, self.effort_limit, self.velocity_limit)
        self.state_range = StateRange(model, self.velocity_limit)
        self.condition_limit = float(settings.condition_limit)
        self.redefine_margin = float(settings.redefine_margin)
        self.posture = per_joint(settings.posture, n, 'posture', 0.0, -np.inf, False, False)
        self.posture_stiffness = per_joint(settings.posture_stiffness, n,
                                           'posture_stiffness', 0.0, 0.0, False, False)
        self.posture_damping = per_joint(settings.posture_damping, n, 'posture_damping',
                                         0.0, 0.0, False, False)
        self.secondary = bool(np.any(self.posture_stiffness) or np.any(self.posture_damping))
        self.analysis_positions = per_joint(settings.analysis_positions, n,
                                            'analysis_positions', analysis_pose(model),
                                            -np.inf, False, False)
        self.max_gap = number(settings.max_gap, 'max_gap', 0.0, strict_minimum=True)
        self.delay_periods = delay = settings.delay_periods
        self.uncertainty = parse_uncertainty(settings.uncertainty)
        self.observer_noise = parse_noise(settings.observer_noise)

        cm = self.control_model
        self.data = cm.create_data()
        self._mass, self._bias = np.zeros((cm.nv, cm.nv)), np.zeros(cm.nv)   # M, h per tick
        self.input_matrix = np.ascontiguousarray(cm.input_matrix())
        self.input_pinv = np.linalg.pinv(self.input_matrix)
        self.q = cm.neutral_configuration().astype(float)
        self.v = np.zeros(cm.nv)
        self.has_modes = cm.nv > n
        following = settings.model_following
        if following and (not self.has_modes or self.rigid_twin is None
                          or self.rigid_twin.nu != n):
            raise ConfigError('model_following: needs a flexible model, modes in the control '
                              'model and a rigid twin (the arm follows the internal model on '
                              'it)')
        # The internal model and the joint-following law (`model_following`).
        self.following = ModelFollowing(model, self.rigid_twin, self.period,
                                        settings.delay_periods,
                                        self.uncertainty.get('payload', (1.0, 1.0))
                                        ) if following else None
        # The law's modes come from the estimator (the loop checks include its dynamics).
        self.estimates_modes = (self.has_modes and settings.elastic_state == 'estimated'
                                and not following)
        # The run-time test of the model (`mismatch_guard`) for the law's modes, estimated
        # or measured: with them measured the observer predicts each tick from the last
        # measured state and its innovation tests the model all the same.
        self.tests_model = self.has_modes and not following
        self._arm = (np.zeros(n), np.zeros(n))     # measured joints (model following)
        # Elastic state: measured or estimated on the full model, then the control model's
        # modes picked by name (``elastic_*`` arguments are in the full model's mode order).
        full_modes = list(model.coordinate_names[n:model.nv])
        self.mode_select = np.array([full_modes.index(name) for name in
                                     cm.coordinate_names[n:cm.nv]], dtype=np.int64)
        self.estimator = ElasticStateEstimator(model) if self.has_modes else None
        # Efforts sent for the last delay_periods + 1 states, newest first: the oldest was
        # applied over the last interval when the plant does not report it.
        self._sent = np.zeros((delay + 1, nu))
        self._sent_next = 0                        # ring index of the oldest
        self._applied = np.zeros(nu)               # the applied effort reported
        self._applied_finite = np.zeros(nu, dtype=bool)
        self.elastic_positions = np.zeros(len(full_modes))
        self.elastic_velocities = np.zeros(len(full_modes))
        self.effort = np.zeros(nu)
        self.last_effort = np.zeros(nu)
        self._limited = np.zeros(nu)
        self._secondary = np.zeros(cm.nv)
        self._preferred = np.zeros(nu)
        self._acceleration = np.zeros(cm.nv)
        self._report_q, self._report_v = np.zeros(cm.nv), np.zeros(cm.nv)
        self._prev_joint_velocity = np.zeros(n)
        self._prev_q_joints = np.zeros(n)
        self._prev_time = None
        self._valid = False              # a state has been received (q, v hold it)
        self._measured = (np.zeros(len(full_modes)), np.zeros(len(full_modes)))  # taken
        self._speed = np.zeros(n)        # |joint velocity| (the limit check)
        self._finite = (np.zeros(n, dtype=bool), np.zeros(len(full_modes), dtype=bool))

        if not isinstance(programs, dict) or not programs:
            raise ConfigError(f'{source}: programs: expected a non-empty mapping of named '
                              f'programs, got {programs!r}')
        self.entries = {}
        for name, spec in programs.items():
            self.entries[str(name)] = self._build_entry(str(name), spec)
        if default is None:
            default = next(iter(self.entries))
        if default not in self.entries:
            raise ConfigError(f'{source}: default: unknown program {default!r} (known: '
                              f'{", ".join(self.entries)})')
        self.status = ControllerStatus(nu)
        if self.tests_model:
            self.status.innovation = self.estimator.innovation
        self.enabled = False
        self.fault = ''
        self._start = None
        self.active = None
        self.switch(default)
        self._warm_up()

    def _build_entry(self, name, spec):
        """Build, check and return one `ProgramEntry` (module doc, "Checks")."""
        field = f'{self.source}: {name}' if self.source else name
        return self._admit(name, field, parse_program(self.control_model, spec, field,
                                                      self.rigid_twin))

    def _admit(self, name, field, parsed, redefined=None):
        """Check the built program ``parsed`` (a `ProgramSpec`); return its `ProgramEntry`.

        ``redefined``: the note of a substitute for a refused program (module doc).
        """
        program, stabilization = parsed.program, parsed.stabilization
        critical = admission.check_discrete_bound(stabilization, self.period,
                                                  self.settings.hold, field)
        cm = self.control_model
        if self.realization_kind == 'servo':
            realization = ServoRealization(cm.nv, cm.nu, program.size, self.effort_limit,
                                           condition_limit=self.condition_limit)
        else:
            realization = IdealRealization(cm.nv, cm.nu, program.size, self.effort_limit)
        entry = ProgramEntry(name, program, stabilization, parsed.row_names,
                             parsed.references, parsed.holds, realization, critical)
        if redefined:
            entry.notes.append(redefined)
        if self.realization_kind == 'ideal' and self.model.nv > self.model.nu:
            entry.notes.append('ideal realization on the rigid twin: the elastic modes are not '
                               'modelled')
        start = admission.rest_configuration(self, entry)
        admission.check_admission(self, entry, field, *start)
        if self.model.nv > self.model.nu:
            redefinition = admission.check_internal_dynamics(
                self, entry, parsed.rows, parsed.non_minimum_phase, field, redefined, *start)
            for attempt in range(admission.ROBUST_LAMBDA_STEPS + 1 if redefinition else 0):
                try:
                    return self._admit(name, field, assemble(redefinition.rows,
                                                             parsed.non_minimum_phase),
                                       redefinition.note)
                except admission.NotRobustError:
                    if attempt == admission.ROBUST_LAMBDA_STEPS:
                        raise
                    redefinition = admission.smaller_lambda(self, redefinition, field)
        return entry

    def design_observer(self, q):
        """Design the elastic-state observer's gain at rest at ``q`` (full model; admission)."""
        return kalman_gain(self.model, q, self.period, self.effort_limit, self.velocity_limit,
                           self.uncertainty, self.observer_noise)

    def _warm_up(self):
        """Evaluate every program and the model once (compiles kernels before the loop)."""
        cm = self.control_model
        q = cm.neutral_configuration().astype(float)
        q[:self.n_joints] = self.analysis_positions
        zero = np.zeros(cm.nv)
        for entry in self.entries.values():
            entry.program.evaluate(0.0, q, zero)
        cm.mass_matrix(self.data, q)
        cm.bias_forces(self.data, q, zero)
        if self.following is not None:      # loads the internal model's stepper
            self.following.reset(0.0, q[:self.n_joints], zero[:self.n_joints])
            self.following.advance(self.period)
            self.following.simulation = None
