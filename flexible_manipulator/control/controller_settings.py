"""The program controller's settings: `ControllerSettings`, each field a node parameter.

Each field but ``max_gap`` is declared here once (`settings.Setting`: its parameter name,
default, description and check); the controller node declares them from this class
(`settings.schema`), the controller runs the same checks on the settings it is given
(`settings.check_declared`). The law they configure is `program_controller`'s; the per-joint
arrays (limits, posture) are read by `per_joint`.
"""

from dataclasses import dataclass

import numpy as np

from ..config_checks import ConfigError, number
from ..mechanics.perturbation import FACTORS, SCALES
from ..settings import fraction, group, numbers, positive, Setting
from .loop_settings import CONDITION_LIMIT, CONTROL_PERIOD, DELAY_PERIODS, EFFORT_LIMITS, HOLD
from .mismatch_guard import MISMATCH_ACTIONS
from .observer_design import DEFAULT_NOISE
from .safety import DRIVER_COMPENSATION, SAFE_ACTION
from .uncertainty import DEFAULT_UNCERTAINTY

REALIZATIONS = ('auto', 'servo', 'ideal')
CONTROL_MODELS = ('auto', 'full', 'rigid_twin')
ELASTIC_SOURCES = ('measured', 'estimated')


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
    """Controller options that are not per program (`program_controller`); SI units.

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
    effort_limits: object = EFFORT_LIMITS.field()    # None: the model's x the fraction
    effort_limit_fraction: float = Setting(
        'effort_limit_fraction', 1.0,
        'Share of the model\'s effort limits the efforts are clipped to when effort_limits is '
        'empty [-], in (0, 1].', check=share).field()
    require_limits: bool = Setting(
        'require_limits', False,
        'Refuse to start unless every joint has a finite effort and velocity limit (given, '
        'or the model\'s): a real arm\'s efforts clipped, its speeds watched.').field()
    effort_rate_limits: object = Setting(
        'effort_rate_limits', None, 'Effort rate limits per joint [N m/s]; empty: none.',
        kind='floats', check=numbers).field()
    velocity_limits: object = Setting(
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


def per_joint(value, size, field, default, minimum=0.0, strict=True, allow_infinite=True):
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
