"""Servoconstraint controller: one measured state of a free servo system in, one effort out.

No ROS here; `nodes.controller_node` puts it on topics. The plant is a `mechanics.servo`
model with realization ``free`` (Kozlov's system without its constraint):

    M w' + h(q, w) = B u,   M = I,   h = -(ad*_w I w + F(q)),   B = b (nv x 1),

u the magnitude of the torque [N m] (rigid body) or of the force/torque combination [N]
(sleigh) along the control direction b. Per tick (`ServoController.update`), with the state
(q, v) measured at time t:

1. program: psi = A v + offset, its Jacobian A and bias = A' v + offset' (``programs``).
   The default is the model's own servoconstraint, ``constraint_rows``: A = a^T,
   offset = 0, bias = 0 (<a, w> = 0; the sleigh's lateral blade velocity v_lat = 0); any
   program of velocity rows on the model's velocities may replace it;
2. stabilization (``stabilization``): psi' + gamma psi = 0, i.e. A w' = -bias - gamma psi;
3. servo (Beghin) realization along B (``realization.ServoRealization``):
   (A M^-1 B) u = -bias - gamma psi + A M^-1 h. For one row and one input,
       u = -(<I^-1 a, ad*_w I w + F> + gamma <a, w>) / <I^-1 a, b>,
   Kozlov's multiplier lambda of (2.4) with the Baumgarte gain k = gamma: the free plant
   driven by this u moves as the ``servo`` model does (test_servo_closed_loop). Singular
   values of A M^-1 B are reported every tick; damped least squares below sigma_max /
   condition_limit (several rows or inputs), 'unrealizable' when it lacks rank;
4. limit: u clipped to +-effort_limit (the model has none; set one for an actuator); the
   status lists the clipped inputs, the dropped effort and the constraint-acceleration
   error A w'_applied - (-bias - gamma psi) that results;
5. safety: |v| above the model's omega_max (the plant's blow-up threshold) latches a fault,
   zero effort until `enable`.

Sampled loop. Held over the period T (zero-order hold, applied at once as in lockstep),
psi_{n+1} = (1 - gamma T) psi_n + O(T^2): stable for gamma T < 2; applied ``delay``
periods late, for gamma T < 2 sin(pi/(2 (2 delay + 1))) (``stabilization``). The residual
then stays at |mu| max|lambda'| T/(2 gamma), mu = <I^-1 a, b> (test_servo_closed_loop).

Refused at construction (`ConfigError` naming the field): a model that is not a
servoconstraint model or has no input (realization ``servo``: ``model``); a gain that is
not positive or outside the discrete bound at the period (``servo_gain``); a program whose
rows are not velocity rows on the model's velocities, or that the input cannot realize,
sigma_min(A M^-1 B) <= 1e-9 |A| |M^-1| |B| at the initial state (``program``; the model's
own constraint is refused by the model itself, naming ``b`` or ``control``); an effort
limit that is not positive (``effort_limits``).
"""

from dataclasses import dataclass

import numpy as np

from .programs import ConstantVelocityProgram, VELOCITY
from .loop_settings import CONDITION_LIMIT, CONTROL_PERIOD, DELAY_PERIODS, EFFORT_LIMITS, HOLD
from .realization import realizability, ServoRealization
from .safety import LatchedSafety, checked_time, SAFE_ACTION, take
from .stabilization import (check_delayed_velocity_stability, delayed_velocity_critical_period,
                            Stabilization, velocity_critical_period, velocity_factor)
from ..mechanics.servo import REALIZABILITY_TOLERANCE, ServoSystem
from ..config_checks import ConfigError
from ..settings import check_declared, positive, Setting

PROGRAM_NAME = 'servoconstraint'
# Name of the model's own constraint row (its residual on ~/residuals), per model kind.
ROW_NAMES = {'rigid_body': 'a_omega', 'sleigh': 'v_lat'}


def is_servo_model(model):
    """Tell a servoconstraint model (`mechanics.servo`, True) from an arm model (False)."""
    return isinstance(model, ServoSystem)


@dataclass
class ServoSettings:
    """Options of the servo controller (module doc); SI units.

    Each field is a node parameter, declared here once (`settings`): the servo controller
    node declares them from this class; all but ``gain`` are the arm controller's too
    (`loop_settings`).
    """

    period: float = CONTROL_PERIOD.field()
    gain: float = Setting('servo_gain', 100.0, "gamma [1/s] of psi' + gamma psi = 0.",
                          check=positive).field()
    hold: str = HOLD.field()
    delay_periods: int = DELAY_PERIODS.field()
    effort_limits: object = EFFORT_LIMITS.field()    # None: the model's (none)
    condition_limit: float = CONDITION_LIMIT.field()
    safe_action: str = SAFE_ACTION.field()


class ServoStatus:
    """What the last tick did, with the fields of `ProgramController.status` that apply.

    ``mode`` tracking | disabled | fault; ``realization`` the `RealizationStatus`;
    ``residual`` psi and ``residual_rate`` the psi' the applied effort gives (-gamma psi
    plus the constraint-acceleration error); ``unsaturated``, ``dropped`` (unsaturated -
    applied), ``clipped`` per input; no rate limit and no elastic state (always
    ``rate_limited`` False and ``elastic_source`` 'none').
    """

    def __init__(self, nu, size, realization, program):
        """Share the realization's and the program's buffers (no copies per tick)."""
        self.mode = 'disabled'
        self.fault = ''
        self.program = PROGRAM_NAME
        self.program_time = 0.0
        self.realization = realization.status
        self.elastic_source = 'none'
        self.unsaturated = realization.unsaturated
        self.clipped = realization.status.clipped
        self.dropped = np.zeros(nu)
        self.rate_limited = np.zeros(nu, dtype=bool)
        self.constraint_error = realization.constraint_error
        self.constraint_error_norm = 0.0
        self.residual = program.phi
        self.residual_rate = np.zeros(size)

    @property
    def tracking(self):
        """True if the last tick realized the constraint (enabled, no fault)."""
        return self.mode == 'tracking'

    @property
    def saturated(self):
        """True if the effort was clipped in the last tick."""
        return bool(self.clipped.any())

    @property
    def message(self):
        """One line: mode, or the realization's problems (damped, unrealizable, clipped)."""
        if self.mode == 'fault':
            return f'fault: {self.fault}'
        if self.mode == 'disabled':
            return 'disabled: zero effort'
        return 'tracking' if self.realization.ok else self.realization.message


class ServoController(LatchedSafety):
    """The control law of the module doc on one free servo model, with its status."""

    def __init__(self, model, settings=None, program=None):
        """Build and check the law (module doc); `ConfigError` naming the field at fault.

        ``program``: a `programs.Program` of velocity rows on the model's velocities
        (default: the model's servoconstraint, ``constraint_rows`` at its initial state).
        """
        if not is_servo_model(model):
            raise ConfigError(f'model: {getattr(model, "name", model)!r} is not a '
                              'servoconstraint model (mechanics.servo)')
        if model.nu == 0:
            raise ConfigError(
                f"model: {model.name!r} has realization 'servo': the plant enforces its "
                "constraint itself and takes no input; the controller needs the model with "
                "realization 'free' (one input along b)")
        self.model = self.control_model = model      # the law runs on the plant's model
        self.settings = settings = settings or ServoSettings()
        # The checks a node runs on these parameters (`settings`), for ROS-free callers.
        check_declared(settings)
        if settings.safe_action == 'hold':
            raise ConfigError('safe_action: hold needs joints to hold; the servo controller '
                              'takes zero or gravity')
        self.period, self.gain = float(settings.period), float(settings.gain)
        self.data = model.create_data()
        self._mass = np.zeros((model.nv, model.nv))      # M and h, written every tick
        self._bias = np.zeros(model.nv)
        self.q = np.array(model.initial_q, dtype=float)
        self.v = np.array(model.initial_v, dtype=float)
        own = program is None
        if own:
            matrix, offset = model.constraint_rows(self.q, self.v)
            program = ConstantVelocityProgram(matrix, offset)
            self.row_names = [ROW_NAMES.get(model.kind, PROGRAM_NAME)]
        else:
            self._check_program(program)
            self.row_names = [f'{PROGRAM_NAME}_{k}' for k in range(program.size)]
        self.program = program
        self.stabilization = Stabilization.for_program(program, gamma=self.gain)
        self.critical_period = self._check_discrete(settings)
        self.input_matrix = model.input_matrix()
        self.input_pinv = np.linalg.pinv(self.input_matrix)
        self._check_realizable(own)
        self.effort_limit = self._effort_limit(settings.effort_limits)
        self.realization = ServoRealization(model.nv, model.nu, program.size, self.effort_limit,
                                            condition_limit=settings.condition_limit)
        self.effort = np.zeros(model.nu)
        self.last_effort = np.zeros(model.nu)
        self.status = ServoStatus(model.nu, program.size, self.realization, program)
        self.enabled = False
        self.fault = ''
        self._start = None
        self._valid = False
        self._finite = (np.zeros(self.q.size, dtype=bool), np.zeros(self.v.size, dtype=bool))

    # -- checks ---------------------------------------------------------------------------
    def _check_program(self, program):
        """Velocity rows on the model's velocities only (position rows need alpha, beta)."""
        if program.nv != self.model.nv:
            raise ConfigError(f'program: acts on {program.nv} velocities, the model '
                              f'{self.model.name!r} has {self.model.nv}')
        if np.any(program.order != VELOCITY):
            raise ConfigError('program: the servo controller realizes velocity rows psi = '
                              'A v + b (servoconstraints); position rows are not supported')

    def _check_discrete(self, settings):
        """Refuse gamma outside the discrete bound at the period; return that bound [s]."""
        delay = settings.delay_periods
        if delay and settings.hold != 'zoh':
            raise ConfigError(f"delay_periods: the delayed bound holds for hold 'zoh', got "
                              f'{settings.hold!r}')
        try:
            if delay:
                check_delayed_velocity_stability(self.gain, self.period, delay)
                return delayed_velocity_critical_period(self.gain, delay)
            self.stabilization.check(self.period, settings.hold)
        except ValueError as error:
            raise ConfigError(f'servo_gain: {error}') from None
        return velocity_critical_period(self.gain, settings.hold)

    def _check_realizable(self, own):
        """Refuse rows the input cannot move at the initial state (module doc).

        ``own``: the model's own constraint, whose fault is the model's b field.
        """
        model = self.model
        self.program.evaluate(0.0, self.q, self.v)
        M, A, B = model.mass_matrix(self.data, self.q), self.program.jacobian, self.input_matrix
        s = realizability(M, A, B)
        m = A.shape[0]
        sigma_min = float(s[m - 1]) if s.size >= m else 0.0
        bound = (REALIZABILITY_TOLERANCE * np.linalg.norm(A, 2) * np.linalg.norm(B, 2)
                 * np.linalg.norm(np.linalg.inv(M), 2))
        if not sigma_min > bound:
            name = 'program' if not own else 'b' if model.kind == 'rigid_body' else 'control'
            raise ConfigError(
                f'{name}: not realizable along the input directions: sigma_min(A M^-1 B) = '
                f'{sigma_min:.3g} <= {bound:.3g} for {m} row(s) and {B.shape[1]} input(s); the '
                "servo condition <A, M^-1 B> != 0 (Kozlov's (2.5)) fails")
        self.margin = sigma_min

    def _effort_limit(self, value):
        """Per-input limit [N m or N]: the model's (infinite) unless given, each > 0."""
        nu = self.model.nu
        if value is None:
            return np.array(self.model.effort_limit, dtype=float)
        limit = np.atleast_1d(np.asarray(value, dtype=float))
        if limit.size == 1:
            limit = np.full(nu, limit[0])
        if limit.shape != (nu,) or not np.all(limit > 0.0) or np.any(np.isnan(limit)):
            raise ConfigError(f'effort_limits: expected {nu} positive number(s) [N m or N], '
                              f'got {np.atleast_1d(value).tolist()}')
        return limit

    # -- commands -------------------------------------------------------------------------
    @property
    def active(self):
        """Name of the realized program."""
        return PROGRAM_NAME

    @property
    def error_factor(self):
        """psi_{n+1}/psi_n of the sampled stabilization (1 - gamma T for 'zoh', no delay)."""
        return velocity_factor(self.gain, self.period, self.settings.hold)

    def restart(self):
        """Forget past states: the constraint's time restarts at the next state."""
        self._start = None
        self._valid = False

    # -- the tick -------------------------------------------------------------------------
    def update(self, t, q, v):
        """Return the effort for the state (q, v) measured at ``t`` [s] (module doc).

        The returned array is reused by the next call; ``status`` says what happened.
        Never raises: a state that cannot be taken (wrong length, not finite) or a failure
        of the law latches a fault naming the step, with zero effort
        (`safety.LatchedSafety.guarded_tick`).
        """
        return self.guarded_tick(self._tick, t, q, v)

    def _tick(self, t, q, v):
        """Run the steps of `update`, each named in ``self.step`` as it starts."""
        status, model = self.status, self.model
        t = checked_time(t)
        if self._start is not None and t < self._start:
            self._start = None        # time went backwards (a plant reset): start over
        take(self.q, q, 'q', self._finite[0])
        take(self.v, v, 'v', self._finite[1])
        self._valid = True
        speed = float(np.linalg.norm(self.v))
        if speed > model.omega_max and not self.fault:
            self.fault = (f'|v| = {speed:.6g} exceeds omega_max = {model.omega_max:g} of '
                          f'{model.name!r}')
        if self.fault or not self.enabled:
            status.mode = 'fault' if self.fault else 'disabled'
            status.fault = self.fault
            return self.safe_effort()
        self.step = 'control law'
        return self._realize(t)

    def _realize(self, t):
        """Constraint, stabilization and servo realization at the stored state."""
        status, model = self.status, self.model
        if self._start is None:
            self._start = t
        tau = t - self._start
        program = self.program.evaluate(tau, self.q, self.v)
        target = self.stabilization.evaluate(program)
        realization = self.realization
        realization.realize(model.mass_matrix(self.data, self.q, self._mass),
                            model.bias_forces(self.data, self.q, self.v, self._bias),
                            program.jacobian,
                            target, self.input_matrix)
        self.effort[:] = realization.effort
        np.subtract(realization.unsaturated, self.effort, out=status.dropped)
        # psi' = A w' + bias = target + error + bias = -gamma psi + error (applied effort).
        np.add(target, realization.constraint_error, out=status.residual_rate)
        status.residual_rate += program.bias
        status.constraint_error_norm = realization.status.constraint_error
        status.program_time = tau
        status.mode = 'tracking'
        status.fault = ''
        return self.effort

    def describe(self):
        """One line for a start-up log: law, gain, period and its bound."""
        return (f'servoconstraint {self.row_names} of {self.model.name!r} ({self.model.kind}) '
                f'realized along b, margin sigma(A M^-1 B) = {self.margin:.6g}; gamma = '
                f'{self.gain:g} /s at period {self.period:g} s ({self.settings.hold}, '
                f'{self.settings.delay_periods} period(s) delay): critical period '
                f'{self.critical_period:.6g} s')
