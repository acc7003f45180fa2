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
   safe action (``safe_action``, `safety`): zero; gravity, B^+ h(q, 0) on the control model
   at the measured joints and the measured or estimated modes; or hold: the program
   `hold_program` (a ``hold`` row of every joint at alpha = `HOLD_BANDWIDTH`, critically
   damped: e'' + 2 alpha e' + alpha^2 e = 0 on the rigid twin, its gains alpha^2 M and
   2 alpha M on the rigid twin's inertia M: gravity, joint damping and a low-gain joint
   law) realized ideally on the rigid twin without rate limit, admitted at construction by
   the same checks as the programs (refused: a `ConfigError` naming ``safe_action``). Its
   target is taken at the first safe tick at which every joint is slower than
   `SLOW_FRACTION` of its velocity limit; until then (after a velocity fault) it is taken
   afresh at every tick: gravity and damping only. The tick whose step failed commands
   zero; so do gravity and hold when their own evaluation fails.

Driver convention (``driver_compensation``): a driver that adds gravity (its own rigid
model's, at the measured joints) or its joint friction to each command gets the effort
minus the rigid twin's gravity B^+ h_twin(q, 0) and the model's joint friction D v + F_c
tanh(v / v_s) (viscous and Coulomb, ``Chain.joint_friction``: the share of h that the
feedforward holds, so the command is the feedforward without it); the
elastic-state observer's applied effort (the command reported, or the one sent) gets them
added back, so that its innovation sees the torque the joints received. A zero safe
action sends zero: what the driver adds stays.

Secondary objective (directions the program leaves free): Q_s = K_p (q_0 - q) - K_d v on
the joints (``posture``, ``posture_stiffness``, ``posture_damping``); the ideal realization
adds it to the free force (Gauss: the realized motion is the admissible one closest to what
Q_s would produce), the servo realization as the preferred effort in the null space of
A M^-1 B. With the default gains 0 the ideal realization gives the minimum-Gauss-norm
(natural) motion and the servo realization the minimum-norm effort.

Control model. The law evaluates M, h and B of a control model: the full model of the
file, a reduced one (``control_modes``: at most that many assumed modes per link and plane,
the rest unmodelled; 0 is rigid) or the rigid twin (``control_model: rigid_twin``). A
sampled servo law that inverts fast, lightly damped modes can be unstable at periods far
shorter than those modes' periods (checked below): on the default arm the loop with the
2nd and 3rd modes modelled is unstable at 2, 1 and 0.5 ms, with the first mode of each
link only it is stable at 2 ms.

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
  ``realization`` and ``control_model`` both ``auto``, a servo law on the flexible model
  refused by (b) (a minimum-phase output: `admission.UnstableLoopError`) or by this check
  gives way to model following, else to computed torque on the rigid twin, with a note
  saying why; when all are refused, the refusal leads with one that no spectral radius
  ranks (a program an alternative refuses for its own reason: that program and its
  refusal), else names the one that came closest (its worst spectral radius), and the
  others';
* a control model with modes under the ideal realization is refused (it would need forces
  on the modes).

Model following (``model_following``, `model_following.ModelFollowing`): the law above
runs on an internal simulation of the full model (its modes are the internal model's; no
estimator), ``delay_periods`` ahead of the arm, and the arm follows the internal model's
joints by a joint law the check chooses (`joint_follower`: computed torque on the rigid
twin, or a filtered joint law for fast lightly damped link modes); (b) then checks the
law's loop on the internal model (no delay) and the follower's check the arm's loop (the
plant, the joint law's states, ``delay_periods``; every pole damped by
``joint_follower.DAMPING_MARGIN``) on the model and over the uncertainty.

With the elastic state estimated, (b) and the robustness check include the observer's
dynamics with its gain (`loop_checks.LinearLoop.radius`, ``observer``; the gain is
designed at the program's rest, ``observer_design``): without the correction the estimate
makes joint programs on the demo arm unstable (spectral radius 1.002 at 2 ms), with it
0.9994, and they are admitted over the default uncertainty.

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
where the program starts, ``lambda_point`` rows are the redefined output above.
"""

from dataclasses import dataclass, field, replace
import math

import numpy as np

from ..mechanics.perturbation import FACTORS, SCALES
from ..config_checks import ConfigError, number
from ..settings import check_fields, fraction, group, numbers, positive, Setting
from . import admission
from .arm_defaults import analysis_pose, require_limits
from .elastic_estimator import ElasticStateEstimator
from .loop_settings import CONDITION_LIMIT, CONTROL_PERIOD, DELAY_PERIODS, EFFORT_LIMITS, HOLD
from .mismatch_guard import MISMATCH_ACTIONS, MismatchGuard
from .model_following import ModelFollowing
from .program_config import assemble, load_program_file, parse_program
from .programs import Program
from .realization import IdealRealization, RealizationStatus, ServoRealization
from .safety import (checked_time, DRIVER_COMPENSATION, LatchedSafety, SAFE_ACTION,
                     take)
from .stabilization import Stabilization
from .observer_design import DEFAULT_NOISE, kalman_gain, parse_noise
from .uncertainty import DEFAULT_UNCERTAINTY, parse_uncertainty
from .state_range import StateRange

# The robust alternatives of a flexible law, in order of preference: settings, description.
ROBUST_ALTERNATIVES = ((dict(model_following=True), 'model following (the same law on an '
                        'internal model, the arm following its joints on the rigid twin)'),
                       (dict(realization='ideal', control_model='rigid_twin'),
                        'computed torque on the rigid twin'))
REALIZATIONS = ('auto', 'servo', 'ideal')
CONTROL_MODELS = ('auto', 'full', 'rigid_twin')
ELASTIC_SOURCES = ('measured', 'estimated')
# The hold law of the safe action ``hold``: its bandwidth [rad/s] (alpha of its hold row,
# critically damped), the program's name, and the share of each joint's velocity limit
# below which its target is taken (faster: damping only).
HOLD_BANDWIDTH = 2.0
HOLD_PROGRAM = 'safe_hold'
SLOW_FRACTION = 0.1


def hold_program(joints):
    """Return the program of the safe action ``hold``: a hold row of ``joints`` (module doc)."""
    return {'description': 'hold the joints where the arm stopped (safe_action: hold)',
            'gains': {'alpha': HOLD_BANDWIDTH}, 'rows': [{'type': 'hold',
                                                         'joints': list(joints)}]}


def share(value, name):
    """Check a number in (0, 1] (``effort_limit_fraction``)."""
    value = positive(value, name)
    if value > 1.0:
        raise ConfigError(f'{name}: must be at most 1, got {value:g}')
    return value


def _all_when_negative(modes):
    """``control_modes``: a negative count (the parameter's -1) keeps every mode (None)."""
    return None if modes < 0 else modes


@dataclass
class ControllerSettings:
    """Controller options that are not per program (module doc); SI units.

    Each field but ``max_gap`` is a node parameter, declared here once (`settings`): its
    name, default, description and check; the controller node declares them from this
    class (`settings.schema`).
    """

    period: float = CONTROL_PERIOD.field()
    hold: str = HOLD.field()
    realization: str = Setting(
        'realization', 'auto',
        'Servo (input directions only) or ideal (fully actuated control model); auto: servo '
        'on flexible models, under model following or on the rigid twin when the direct servo '
        'law is refused (its sampled loop unstable on the model or over the uncertainty).',
        choices=REALIZATIONS).field()
    control_model: str = Setting(
        'control_model', 'auto',
        'Model the law evaluates: the (reduced) full model or the rigid twin.',
        choices=CONTROL_MODELS).field()
    elastic_state: str = Setting(
        'elastic_state', 'measured',
        'Modal coordinates from modal_states (simulation) or estimated from the joint motion '
        '(real arm).', choices=ELASTIC_SOURCES).field()
    effort_limit: object = EFFORT_LIMITS.field()     # None: the model's x the fraction
    effort_limit_fraction: float = Setting(
        'effort_limit_fraction', 1.0,
        'Share of the model\'s effort limits the efforts are clipped to when effort_limits is '
        'empty [-], in (0, 1].', check=share).field()
    require_limits: bool = Setting(
        'require_limits', False,
        'Refuse to start unless every joint has a finite effort and velocity limit (given, '
        'or the model\'s): a real arm\'s efforts clipped, its speeds watched.').field()
    effort_rate_limit: object = Setting(
        'effort_rate_limits', None, 'Effort rate limits per joint [N m/s]; empty: none.',
        kind='floats', check=numbers).field()
    velocity_limit: object = Setting(
        'velocity_limits', None,
        'Velocity limits per joint [rad/s]: a faster joint latches a fault; empty: the model.',
        kind='floats', check=numbers).field()
    condition_limit: float = CONDITION_LIMIT.field()
    redefine_margin: float = Setting(
        'redefine_margin', 0.8, 'lambda = margin * lambda* when a program is redefined.',
        check=fraction).field()
    analysis_positions: object = Setting(
        'analysis_positions', None,
        'Joint angles from which the start of each program is solved for the checks [rad]; '
        'empty: 0.3 rad each, clamped into the middle half of the joint\'s travel.',
        kind='floats', check=numbers).field()       # None: arm_defaults.analysis_pose
    posture: object = Setting(
        'posture', None,
        'Secondary objective in the directions the program leaves free: posture q_0 [rad].',
        kind='floats', check=numbers).field()
    posture_stiffness: object = Setting(
        'posture_stiffness', None,
        'Secondary objective K_p [N m/rad], one or per joint; empty: 0.',
        kind='floats', check=numbers).field()
    posture_damping: object = Setting(
        'posture_damping', None,
        'Secondary objective K_d [N m s/rad], one or per joint; empty: 0.',
        kind='floats', check=numbers).field()
    max_gap: float = 0.5                # s: a longer gap between states restarts estimates
    control_modes: object = Setting(
        'control_modes', -1,
        'Assumed modes per link plane kept in the control model; Cosserat links: coefficients '
        'per curvature strain (torsion, bending), extension and shear left out (-1: all of '
        'the model file; 0: rigid).', read=_all_when_negative).field()
    delay_periods: int = DELAY_PERIODS.field()
    model_following: bool = Setting(
        'model_following', False,
        'Run the law on an internal simulation of the model and make the arm follow its '
        'joints by computed torque on the rigid twin: exact on the model, as robust as the '
        'rigid twin off it (doc/hil.md).').field()
    # factor -> [lo, hi]; None: DEFAULT_UNCERTAINTY
    uncertainty: object = group(*(Setting(
        f'uncertainty.{factor}', list(DEFAULT_UNCERTAINTY[factor]),
        f'Range [lo, hi] of the factor on the {SCALES[factor]} by which the arm may differ '
        'from its model: the start-up robustness check (doc/hil.md); [1.0, 1.0]: exact.')
        for factor in FACTORS))
    # observer_design.NoiseModel or its mapping; None: DEFAULT_NOISE
    observer_noise: object = group(
        Setting('observer.velocity_noise', DEFAULT_NOISE.velocity_noise,
                'Standard deviation of the measured joint velocities [rad/s] the elastic-state '
                'observer assumes (elastic_state: estimated).', check=positive),
        Setting('observer.effort_noise', DEFAULT_NOISE.effort_noise,
                'Standard deviation of the applied efforts the observer assumes, as a fraction '
                'of each joint\'s effort limit [-].', check=positive))
    mismatch_action: str = Setting(
        'mismatch_action', 'degrade',
        'When the observer\'s innovation says the arm is off its model beyond the declared '
        'uncertainty: degrade (hand over to model following or the rigid twin, with a '
        'warning) or warn only.', choices=MISMATCH_ACTIONS).field()
    safe_action: str = SAFE_ACTION.field()
    driver_compensation: object = DRIVER_COMPENSATION.field()


@dataclass
class ProgramEntry:
    """One named program, built and checked: rows, gains, names, buffers, verdicts."""

    name: str
    program: Program
    stabilization: Stabilization
    row_names: list
    references: list                    # (slice of rows, reference object)
    holds: list                         # HoldProgram rows (captured at the start)
    realization: object
    critical_period: float
    zero_dynamics: object = None        # ZeroDynamicsReport, or None if not analysed
    sampled_radius: float = None        # spectral radius of the linearized ZOH loop
    robustness_margin: float = None     # largest scaling of the uncertainty set survived
    worst_case: object = None           # uncertainty.Verdict at the declared set
    observer_gain: object = None        # observer_design.ObserverGain (modes estimated)
    model_test_gain: object = None      # the same, for the model test only (modes measured)
    lambda_limit: float = None          # offered lambda* when the program was refused
    follower: tuple = None              # model following's joint law (admission.following_check)
    along: list = None                  # joints at the reference's samples (admission)
    notes: list = field(default_factory=list)
    reference: np.ndarray = None        # r, r', r'' of every row (filled per tick)
    reference_rate: np.ndarray = None
    reference_acceleration: np.ndarray = None
    constraint_error: np.ndarray = None  # A q''_applied - b per row

    def __post_init__(self):
        """Allocate the per-row buffers."""
        size = self.program.size
        self.reference = np.zeros(size)
        self.reference_rate = np.zeros(size)
        self.reference_acceleration = np.zeros(size)
        self.constraint_error = np.zeros(size)

    @property
    def size(self):
        """Number of constraint rows."""
        return self.program.size

    @property
    def span(self):
        """Program time [s] by which every reference has taken all its values."""
        return max(reference.span for _, reference in self.references)

    def fill_reference(self, t):
        """Copy the references of the rows at program time ``t``.

        The program has just evaluated them at ``t``; references that keep their last
        values (``position``, ``velocity``, ``acceleration``) are read, others evaluated.
        """
        for rows, reference in self.references:
            try:
                r, dr, ddr = reference.position, reference.velocity, reference.acceleration
            except AttributeError:
                r, dr, ddr = reference.evaluate(t)
            self.reference[rows] = r
            self.reference_rate[rows] = dr
            self.reference_acceleration[rows] = ddr


class ControllerStatus:
    """What the last tick did; ``message`` explains anything that is not plain tracking."""

    def __init__(self, nu):
        """Allocate the per-input arrays."""
        self.mode = 'disabled'          # tracking | disabled | fault
        self.fault = ''
        self.safe_action = 'zero'       # commanded while disabled or faulted
        self.program = ''
        self.program_time = 0.0
        self.realization = None         # RealizationStatus of the active program
        self.elastic_source = 'none'    # measured | estimated | model | none (rigid model)
        self.following_error = 0.0      # model following: max |theta - theta_m| [rad]
        self.payload_factor = 1.0       # model following: the payload's estimated factor
        self.innovation = None          # observer: nu of the last corrected tick [N m]
        self.normalized_innovation = 0.0   # observer: nu^T S^-1 nu of that tick [-]
        self.unsaturated = np.zeros(nu)
        self.dropped = np.zeros(nu)
        self.clipped = np.zeros(nu, dtype=bool)
        self.rate_limited = np.zeros(nu, dtype=bool)
        self.constraint_error = np.zeros(0)
        self.constraint_error_norm = 0.0
        self.residual = np.zeros(0)
        self.residual_rate = np.zeros(0)

    @property
    def tracking(self):
        """True if the last tick realized the program (enabled, no fault)."""
        return self.mode == 'tracking'

    @property
    def saturated(self):
        """True if any effort was clipped or rate-limited in the last tick."""
        return bool(self.clipped.any() or self.rate_limited.any())

    @property
    def message(self):
        """One line: mode, realization problems, dropped efforts and their consequence."""
        if self.mode == 'fault':
            return f'fault: {self.fault}'
        if self.mode == 'disabled':
            return f'disabled: {self.safe_action} effort'
        parts = []
        realization = self.realization
        if realization is not None and realization.code not in ('exact', 'redundant'):
            parts.append(RealizationStatus.message.fget(_without_saturation(realization)))
        if self.saturated:
            clipped = np.flatnonzero(self.clipped).tolist()
            limited = np.flatnonzero(self.rate_limited).tolist()
            text = []
            if clipped:
                text.append(f'clipped on inputs {clipped}')
            if limited:
                text.append(f'rate-limited on inputs {limited}')
            parts.append(f'efforts {" and ".join(text)} (dropped '
                         f'{np.round(self.dropped, 4).tolist()}): constraint-acceleration '
                         f'error {self.constraint_error_norm:.3g}')
        return '; '.join(parts) if parts else 'tracking'


def _closest(tried):
    """Say which law came closest when ``auto`` finds every law it knows refused."""
    measured = [(refusal.radius, what) for what, refusal in tried
                if refusal.radius is not None]
    if not measured:
        return 'auto: no law it knows is admitted'
    radius, what = min(measured)
    others = ', '.join(f'{w} {r:.6g}' for r, w in sorted(measured)[1:])
    return (f'auto: no law it knows is admitted; closest: {what} (worst spectral radius '
            f'{radius:.6g}, {100 * (radius - 1):.3g} % past 1)'
            + (f'; then {others}' if others else ''))


def _without_saturation(status):
    """Copy a realization status with the clipping flags cleared (for its message)."""
    copy = RealizationStatus(status.clipped.size, status.kind)
    copy.__dict__.update(status.__dict__)
    copy.clipped = np.zeros_like(status.clipped)
    return copy


def _per_joint(value, size, field, default, minimum=0.0, strict=True, allow_infinite=True):
    """Return ``value`` (scalar, sequence of ``size``, or None for ``default``) as an array."""
    if value is None:
        return np.array(np.broadcast_to(np.asarray(default, dtype=float), (size,)))
    values = np.atleast_1d(np.asarray(value, dtype=float))
    if values.size == 1:
        values = np.full(size, values[0])
    if values.size != size:
        raise ConfigError(f'{field}: expected one value or {size}, got {values.size}')
    for i, item in enumerate(values):
        number(float(item), f'{field}[{i}]', minimum, strict, allow_infinite)
    return values


class ProgramController(LatchedSafety):
    """The control law of the module doc, with its named programs and its status."""

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

    def _construct(self, model, programs, settings, default, source):
        """Build with ``settings`` or, refused under ``auto``, an alternative (`__init__`).

        Every alternative's refusal is kept: a plain `ConfigError` (one no comparison of
        loops ranks, e.g. a program another law refuses for its own reason) is the
        blocker the final refusal leads with; else the servo law's, with the one that
        came closest (`_closest`). An admitted alternative's note names the refusals
        before it.
        """
        try:
            self._setup(model, programs, settings, default, source)
        except admission.UnstableLoopError as error:
            if not (settings.realization == settings.control_model == 'auto'
                    and not settings.model_following):
                raise
            tried = [('the servo law on the flexible model', error)]
            for fallback, what in ROBUST_ALTERNATIVES:
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
            raise type(error)(f'{error}; {_closest(tried)}', error.radius) from None

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
        check_fields(settings, 'period', 'hold', 'realization', 'control_model',
                     'elastic_state', 'condition_limit', 'redefine_margin', 'delay_periods',
                     'model_following', 'mismatch_action')
        self.period = float(settings.period)
        self._choose_realization()
        # Errors name the node parameters (effort_limits, ...) these settings come from.
        check_fields(settings, 'effort_limit_fraction', 'require_limits')
        self.effort_limit = _per_joint(settings.effort_limit, nu, 'effort_limits',
                                       settings.effort_limit_fraction * model.effort_limit)
        self.effort_rate_limit = _per_joint(settings.effort_rate_limit, nu,
                                            'effort_rate_limits', np.inf)
        self._rate_limits = bool(np.any(np.isfinite(self.effort_rate_limit)))
        self.velocity_limit = _per_joint(settings.velocity_limit, n, 'velocity_limits',
                                         model.velocity_limit)
        if settings.require_limits:
            require_limits(model, self.effort_limit, self.velocity_limit)
        self.state_range = StateRange(model, self.velocity_limit)
        self.condition_limit = float(settings.condition_limit)
        self.redefine_margin = float(settings.redefine_margin)
        self.posture = _per_joint(settings.posture, n, 'posture', 0.0, -np.inf, False, False)
        self.posture_stiffness = _per_joint(settings.posture_stiffness, n,
                                            'posture_stiffness', 0.0, 0.0, False, False)
        self.posture_damping = _per_joint(settings.posture_damping, n, 'posture_damping',
                                          0.0, 0.0, False, False)
        self.secondary = bool(np.any(self.posture_stiffness) or np.any(self.posture_damping))
        self.analysis_positions = _per_joint(settings.analysis_positions, n,
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

    def _setup_safety(self, hold_law):
        """Check the safe action and the driver convention; build what they need."""
        s, model = self.settings, self.model
        check_fields(s, 'safe_action', 'driver_compensation')
        n, nu = self.n_joints, model.nu
        self.status.safe_action = s.safe_action
        compensation = s.driver_compensation or ()
        self.compensates = tuple(compensation)
        self._driver = np.zeros(nu)          # what the driver adds at this state [N m]
        self._command = np.zeros(nu)         # the effort sent: the total minus the driver's
        self._applied_total = np.zeros(nu)
        self._total = False                  # the tick's effort is a total joint torque
        twin = self.rigid_twin
        if 'gravity' in compensation or s.safe_action == 'hold':
            if twin is None or twin.nv != n or twin.nu != nu:
                what = ('safe_action: hold' if s.safe_action == 'hold'
                        else 'driver_compensation: gravity')
                raise ConfigError(f'{what}: needs the rigid twin of the model')
            self._twin_data = twin.create_data()
            self._twin_pinv = np.linalg.pinv(twin.input_matrix())
            self._twin_static = np.zeros(n)
        self._friction = 'friction' in compensation
        self._hold_taken = False             # the hold law's target is taken
        self.hold_law = None
        if s.safe_action == 'hold':
            self.hold_law = hold_law if hold_law is not None else self._build_hold_law()

    def _build_hold_law(self):
        """Build and admit the hold law of ``safe_action: hold`` (module doc), enabled."""
        return build_hold_law(self.model, self.settings, self.effort_limit)

    # -- construction ---------------------------------------------------------------------
    def _choose_realization(self):
        """Resolve ``realization`` and ``control_model`` (module doc)."""
        s, model = self.settings, self.model
        flexible = model.nv > model.nu
        kind = s.realization
        if kind == 'auto':
            kind = 'ideal' if s.control_model == 'rigid_twin' or not flexible else 'servo'
        control = s.control_model
        if control == 'auto':
            control = 'rigid_twin' if kind == 'ideal' and flexible else 'full'
        self.realization_kind = kind
        self.control_model_kind = control
        try:
            self.rigid_twin = model.rigid_twin() if flexible else model
        except ValueError as error:         # Cosserat chains with clamps or pre-curved rods
            if control == 'rigid_twin':
                raise ConfigError(f'control_model: {error}') from None
            self.rigid_twin = None
        modes = s.control_modes
        if modes is not None and (isinstance(modes, bool) or not isinstance(modes, int)
                                  or modes < 0):
            raise ConfigError(f'control_modes: expected a number of modes >= 0 (or None: '
                              f'all), got {modes!r}')
        if control == 'rigid_twin':
            self.control_model = self.rigid_twin
        else:
            try:
                self.control_model = (model.with_modes(modes) if flexible and modes is not None
                                      else model)
            except ValueError as error:
                raise ConfigError(f'control_modes: {error}') from None
        if kind == 'ideal' and self.control_model.nv > self.control_model.nu:
            raise ConfigError(f'realization: ideal on a control model with '
                              f'{self.control_model.nv - self.control_model.nu} modal '
                              'coordinates would need forces on them; use realization: servo, '
                              'control_model: rigid_twin or control_modes: 0')

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

    def _send(self, effort):
        """Return the command for the tick's ``effort``; keep the total the joints get.

        With ``driver_compensation`` a total joint torque (tracking, gravity, hold) is sent
        less what the driver adds; a zero command is sent as it is, the driver's part then
        being the whole torque (module doc, "Driver convention").
        """
        sent = self._sent[self._sent_next]
        self._sent_next = (self._sent_next + 1) % self._sent.shape[0]
        if not self.compensates:
            sent[:] = effort
            return effort
        if self._total:
            sent[:] = effort
            np.subtract(effort, self._driver, out=self._command)
            return self._command
        np.add(effort, self._driver, out=sent)
        return effort

    def zero_effort(self):
        """Return zero effort: the command sent is zero (`safety.LatchedSafety`)."""
        self._total = False
        return super().zero_effort()

    def holding_effort(self):
        """Return the gravity effort at the last state, a total joint torque (`safety`)."""
        effort = super().holding_effort()
        self._total = self._valid
        return effort

    def safe_effort(self):
        """Return the safe action's command at the last state (stale states: the watchdog).

        ``hold`` evaluates its law at the last measured joints with zero velocity (the last
        measured velocity is stale). Never raises: zero if the action fails.
        """
        try:
            self._total = False
            if self.settings.safe_action == 'zero' or not self._valid:
                return self.zero_effort()
            n = self.n_joints
            effort = self._safe_tick(self._prev_time, np.zeros(n))
            if not np.isfinite(effort).all():
                return self.zero_effort()
            return self._command_of(effort)
        except Exception:                   # noqa: B902 - a safe command, whatever happens
            return self.zero_effort()

    def _command_of(self, effort):
        """Return the command sent for the effort ``effort`` of the last state (`_send`)."""
        if self.compensates and self._total:
            np.subtract(effort, self._driver, out=self._command)
            return self._command
        return effort

    def _safe_tick(self, t, joint_velocities):
        """Return the safe action's effort at the state in ``q`` (module doc, step 6).

        ``joint_velocities``: the joints' [rad/s] (the hold law damps them).
        """
        action = self.settings.safe_action
        if action == 'zero':
            return self.zero_effort()
        self.step = f'safe action {action}'
        if self.hold_law is not None:
            effort = self._hold(t, joint_velocities)
            if effort is not None:
                self.effort[:] = effort
                self.last_effort[:] = effort
                self._total = True
                return self.effort
        return self.holding_effort()

    def _hold(self, t, joint_velocities):
        """Return the hold law's effort at ``t``, or None when it did not realize its row.

        Its target is taken afresh (its program restarted) until a tick finds every joint
        slower than `SLOW_FRACTION` of its velocity limit (module doc).
        """
        law, n = self.hold_law, self.n_joints
        if not self._hold_taken or law.fault:
            law.enable()                    # the target: this state's joints
            slow = np.abs(joint_velocities) <= SLOW_FRACTION * self.velocity_limit
            self._hold_taken = bool(slow.all())
        effort = law.update(t, self.q[:n], joint_velocities)
        return effort if law.status.tracking else None

    def _driver_part(self):
        """Fill ``_driver``: what the driver adds at this state (module doc)."""
        n = self.n_joints
        self._driver[:] = 0.0
        if 'gravity' in self.compensates:
            twin = self.rigid_twin
            static = twin.bias_forces(self._twin_data, self.q[:n], np.zeros(n))
            np.matmul(self._twin_pinv, static, out=self._driver)
        if self._friction:
            self._driver += self.input_pinv[:, :n] @ self.model.joint_friction(self.v[:n])

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

    def _internal_state(self, t, first, measured):
        """Model following: move the internal model to ``t``; the law takes its state.

        The measured joints go to ``_arm``; the internal model starts at them (modes at
        rest) on the first state and after a gap (enable restarts); a program switch goes
        on with it.
        """
        n, following = self.n_joints, self.following
        arm_q, arm_v = self._arm
        arm_q[:] = self.q[:n]
        arm_v[:] = self.v[:n]
        if first or following.simulation is None:
            # The efforts sent that the arm has not received yet (newest delay_periods).
            ring, d = self._sent, self.delay_periods
            following.reset(t, arm_q, arm_v, [ring[(self._sent_next + k) % (d + 1)]
                                              for k in range(1, d + 1)])
            following.set_follower(self.entry.follower)
        else:
            # A program switch goes on from the internal model where it is: restarted at
            # the arm under the efforts in flight (the follower's corrections for an arm
            # off its model among them), it would jump away from the arm.
            following.advance(t)
            if self._start is None:
                following.set_follower(self.entry.follower)
        qm, vm = following.simulation.q, following.simulation.v
        self.q[:n], self.v[:n] = qm[:n], vm[:n]
        np.take(qm[n:], self.mode_select, out=self.q[n:])
        np.take(vm[n:], self.mode_select, out=self.v[n:])
        if not measured:                # the arm's modes: the internal model's at its time
            lagged_q, lagged_v = following.lagged()
            self._measured[0][:], self._measured[1][:] = lagged_q[n:], lagged_v[n:]

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
            np.clip(wanted, -self.effort_limit, self.effort_limit, out=effort)
            np.not_equal(effort, wanted, out=status.clipped)
        else:
            self.step = 'limits'
            effort[:] = realization.effort
            status.unsaturated[:] = realization.unsaturated
            status.clipped[:] = realization.status.clipped
        limited = status.rate_limited
        if self._rate_limits:
            step = self.effort_rate_limit * dt
            np.clip(effort, self.last_effort - step, self.last_effort + step,
                    out=self._limited)
            np.not_equal(self._limited, effort, out=limited)
            effort[:] = self._limited
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

    def _report_arm(self, tau):
        """Evaluate the rows on the arm (model following): the residual is the arm's.

        Joints measured; modes measured when they came with the state, else the internal
        model's. ``status.following_error`` is max |theta - theta_m| [rad].
        """
        n, q, v = self.n_joints, self._report_q, self._report_v
        q[:n], v[:n] = self._arm
        np.take(self._measured[0], self.mode_select, out=q[n:])
        np.take(self._measured[1], self.mode_select, out=v[n:])
        self.entry.program.evaluate(tau, q, v)
        self.status.following_error = self.following.error
        self.status.payload_factor = self.following.payload_factor

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
    ideally on the rigid twin, no rate limit, no velocity limit of its own (module doc).
    Raises `ConfigError` in one line, starting 'safe_action: hold', when the checks refuse
    it.
    """
    n = model.n_joints
    settings = replace(
        settings, realization='ideal', control_model='rigid_twin', model_following=False,
        safe_action='zero', driver_compensation=None,
        effort_limit=None if effort_limit is None else list(effort_limit),
        effort_rate_limit=None, velocity_limit=[math.inf] * n, require_limits=False,
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
