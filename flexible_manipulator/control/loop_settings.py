"""The settings both controllers share: the sampled loop, the effort limits, the damping.

`controller_settings.ControllerSettings` and `servo_controller.ServoSettings` hold each of
these as a field (`settings.Setting.field`); the controller nodes declare them once for
either (doc/nodes.md, "controller" and "servo_controller").
"""

from ..settings import greater_than, numbers, positive, Setting, whole_number
from .stabilization import SCHEMES

CONTROL_PERIOD = Setting(
    'control_period', 0.002,
    'Period of the states and commands [s]: the discrete stability checks use it.',
    check=positive)
HOLD = Setting('hold', 'zoh', 'Hold scheme of the discrete stability check.', choices=SCHEMES)
# One period: a real-time plant, a real arm's driver and any loop over DDS apply a command
# from the period after the state it answers on, so a check allowing for no delay would
# admit loops that are unstable there. A loop that applies each command in its own period
# (a lock-step plant: `lockstep.py`, config/servo_closed_loop.yaml, the ROS-free tests'
# loops) says 0; config/sim.yaml and config/hil.yaml allow 2 (transport and computation).
DELAY_PERIODS = Setting(
    'delay_periods', 1,
    'Input delay [periods] the sampled-loop check allows for (0: lockstep; 1: a real-time '
    'plant).',
    check=whole_number(0, 50, 'periods'))
EFFORT_LIMITS = Setting(
    'effort_limits', None,
    'Effort limits per input [N m or N]: efforts are clipped; empty: the model.',
    kind='floats', check=numbers)
CONDITION_LIMIT = Setting(
    'condition_limit', 1e4,
    'Servo: damped least squares above this condition number of A M^-1 B.',
    check=greater_than(1.0))
