"""The simulated plants' settings and the arm plant's initial state, without ROS.

What the plant nodes (`nodes.plant_node`, `nodes.servo_node`) declare, and what a run
without ROS (a study's closed loop, `studies`; a learning environment, `envs`) reads from
the same parameter file: the settings of every simulated plant (`plant_settings`), the arm
plant's own (`ARM_PLANT_SETTINGS`, `ARM_STATE_SETTINGS`) and its initial state from them
(`arm_initial_state`). Declared once here; the nodes add the parameters only a node has
(topics, ``ros2_control``).
"""

import math

import numpy as np

from .mechanics.equilibrium import static_equilibrium
from .mechanics.integrators import METHODS, RENAMED
from .config_checks import ConfigError
from .settings import non_negative, positive, Setting, whole_number


def plant_settings(integration_step, update_period, integrator_note, input_name):
    """Return the settings of every simulated plant, with this plant's defaults.

    ``integration_step``, ``update_period`` [s]: defaults; ``integrator_note``: ' (...)'
    after the integrator's description; ``input_name``: what a command entry is.
    """
    return (
        Setting('timing_mode', 'realtime',
                'How simulated time advances: realtime, one update_period per wall-clock '
                'tick; lockstep, one update_period per received command.',
                choices=('realtime', 'lockstep')),
        Setting('integrator', 'rk4', f'Fixed-step integration scheme{integrator_note}.',
                choices=METHODS, renamed=RENAMED),
        Setting('integration_step', integration_step,
                'Internal step [s]; update_period must be a whole number of steps.',
                check=positive),
        Setting('step_check', 'refuse',
                'An explicit integrator whose step is past the stability limit of the elastic '
                'modes: refuse to start, or only warn.', choices=('refuse', 'warn')),
        Setting('update_period', update_period,
                'Simulated time per state publication, and per command in lockstep [s].',
                check=positive),
        Setting('command_timeout', 0.05,
                f'Simulated age [s] after which the last valid command is replaced by zero '
                f'{input_name}.', check=positive),
        Setting('lockstep_resend_period', 0.2,
                'Wall time [s] after which lockstep re-publishes an unanswered state.',
                check=positive),
        # A real driver applies a command one or two periods after the state it answers
        # (transport, computation): simulated, so that the delay a controller's checks
        # allow for (its delay_periods) is the one its loop meets (`mechanics.delay_line`).
        # A real driver's cycles are not all alike: its states come a little early or late,
        # and their stamps say so.
        Setting('period_jitter', 0.0,
                'Each update period lasts update_period plus a uniform draw within '
                '+-period_jitter [s] (seeded: jitter_seed), as a real driver\'s cycles; the '
                'states are stamped with the simulated time; below update_period / 2.',
                check=non_negative),
        Setting('jitter_seed', 0, 'Seed of the period_jitter draws.',
                check=whole_number(0, 2 ** 31 - 1, 'seeds')),
        Setting('input_delay_periods', 0,
                f'Update periods by which each command is applied late (0: in the period '
                f'after the state it answers); zero {input_name} before the first arrives.',
                check=whole_number(0, 50, 'periods')),
        Setting('publish_clock', True, 'Publish simulated time on /clock.'),
        Setting('world_frame', 'world', 'Root TF frame.'),
        # A graph that starts its controller after the plant (the bring-up) holds time
        # until the controller answers: a real-time plant would otherwise run the arm
        # without control meanwhile (the soft arm fell 1.6 rad in the seconds its
        # controller took to come up).
        Setting('start_paused', False,
                'Start with simulated time held (states published, nothing advanced) until '
                '~/pause is called with false.'),
        # A run of a given length (bringup --duration) ends at exactly that simulated time
        # however fast the loop runs: paused from outside, it would overshoot by the pauser's
        # reaction time times the loop's rate.
        Setting('pause_at', 0.0,
                'Simulated time [s] at which the plant pauses itself, once per crossing '
                '(0: never); ~/pause false resumes.', check=non_negative),
        # A controller started beside the plant (a launch file) takes seconds to come up:
        # held until its first command, the arm does not run uncontrolled meanwhile.
        Setting('wait_for_command', False,
                'Hold simulated time at the start until the first valid command arrives.'))


INPUT_NAME = 'effort'           # what a command entry of the arm plant is
ARM_PLANT_SETTINGS = plant_settings(
    0.0005, 0.002, ' (rosenbrock2, rosenbrock3: linearly implicit, for stiff elastic modes)',
    INPUT_NAME)
ARM_STATE_SETTINGS = (
    Setting('initial_positions', None, 'Initial joint positions [rad or m].', kind='floats'),
    Setting('initial_velocities', None, 'Initial joint velocities [rad/s or m/s].',
            kind='floats'),
    Setting('initial_modes', 'rest',
            'Initial elastic coordinates (modes, strains), at zero velocity: rest = their '
            'static equilibrium under gravity with the joints held at initial_positions; '
            'zero = straight links.', choices=('rest', 'zero')))
# A driver that adds gravity itself (a torque interface like Franka's): the arm plant as one.
DRIVER_GRAVITY = Setting(
    'driver_gravity_compensation', False,
    'Add the gravity torque of the model\'s rigid twin at the joints of each state to the '
    'command received, as a driver that compensates gravity itself does (the sum clipped at '
    'the effort limits); joint_states report the command part.')


def joint_values(value, size, name):
    """Return ``size`` finite numbers of an array parameter; unset (None): all zeros."""
    if value is None:
        return [0.0] * size
    if len(value) != size or not all(math.isfinite(x) for x in value):
        raise ConfigError(f'parameter {name}: expected {size} finite numbers, got {value}')
    return value


def arm_initial_state(model, parameters):
    """Return the arm plant's initial (q, v) from its parameters {name: value}.

    Joints at ``initial_positions`` / ``initial_velocities`` [rad, rad/s] (zero when
    unset); elastic coordinates by ``initial_modes`` (rest: the static equilibrium with the
    joints held, a floating base's model excepted; zero: straight links), at zero
    velocity. `ConfigError` naming the parameter if they are unusable.
    """
    n = model.n_joints
    q0, v0 = model.neutral_configuration(), np.zeros(model.nv)
    q0[:n] = joint_values(parameters.get('initial_positions'), n, 'initial_positions')
    v0[:n] = joint_values(parameters.get('initial_velocities'), n, 'initial_velocities')
    if parameters.get('initial_modes', 'rest') == 'rest' and model.floating_base is None:
        try:
            q0 = static_equilibrium(model, q0)
        except ValueError as error:
            raise ConfigError(f'parameter initial_modes: {error}') from None
    return q0, v0
