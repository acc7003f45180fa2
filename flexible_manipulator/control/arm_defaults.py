"""What the controller takes from an arm's model when a parameter file does not say it.

* `analysis_pose`: the joint angles the start-up checks solve each program's start from
  (``analysis_positions`` unset): 0.3 rad per joint, clamped into the middle half of the
  joint's travel. 0.3 rad keeps a chain whose joints are all at zero (straight, for the
  package's arms and most URDFs: a singular configuration, where a task-space program's
  start cannot be solved) off it; the middle half of the travel keeps the pose, and a
  quarter of the travel to each side of it for motion, away from the joint limits (the
  Panda's fourth joint, limited to [-3.07, -0.07] rad, gets -0.82 rad). For joints whose
  0.3 rad lies in the middle half of their travel (every joint of the package's arms but
  the Panda's) it is 0.3 rad, as it was before the model was consulted.
* `generated_programs`: the programs a controller runs when no program file is given: a
  ``hold`` program (each joint held where the program starts) and ``joint_sine``
  (sinusoids of at most `AMPLITUDE` about the analysis pose, their peak speed at most
  `SPEED_SHARE` of each joint's velocity limit, starting at rest), both with the gain
  `ALPHA`.
* `require_limits`: the refusal of a joint without a finite effort or velocity limit,
  for a real arm (``require_limits``).
"""

import math

import numpy as np

from ..config_checks import ConfigError

POSE_ANGLE = 0.3        # rad: the pose before it is clamped into the travel
AMPLITUDE = 0.1         # rad: largest amplitude of the generated sinusoids
FREQUENCY = 0.5         # Hz: their frequency where the velocity limit allows it
SPEED_SHARE = 0.1       # their peak speed 2 pi f a, at most this share of the limit
# 1/s, critical damping: the hold and joint programs that the start-up checks admit on
# the 6- and 7-axis arms at 1-2 ms with 1-2 periods of delay (doc/hil.md, "Model
# following"; test/test_arms.py) and on the demo arm (config/programs_two_link_flexible).
ALPHA = 6.0


def analysis_pose(model):
    """Return the default analysis pose of ``model``'s joints [rad or m] (module doc)."""
    lower = np.asarray(model.lower, dtype=float)
    upper = np.asarray(model.upper, dtype=float)
    travel = upper - lower
    limited = np.isfinite(travel)
    low = np.where(limited, lower + 0.25 * np.where(limited, travel, 0.0), -np.inf)
    high = np.where(limited, upper - 0.25 * np.where(limited, travel, 0.0), np.inf)
    return np.clip(np.full(model.n_joints, POSE_ANGLE), low, high)


def require_limits(model, effort_limit, velocity_limit):
    """Refuse (`ConfigError`) a joint of ``model`` without a finite limit in force.

    ``effort_limit``, ``velocity_limit``: the limits the controller would apply, one per
    joint [N m or N, rad/s or m/s] (a URDF's continuous joint without ``<limit>`` has
    none: infinite). The message names the parameter that would give it.
    """
    for parameter, limits, what in (('effort_limits', effort_limit, 'effort'),
                                    ('velocity_limits', velocity_limit, 'velocity')):
        unlimited = np.flatnonzero(~np.isfinite(np.asarray(limits, dtype=float)))
        if unlimited.size:
            name = model.joint_names[int(unlimited[0])]
            raise ConfigError(
                f'{parameter}: joint {name!r} of model {model.name!r} has no {what} limit '
                f'(require_limits: a real arm needs one per joint): give {parameter}, or '
                'the limit in the model (a URDF <limit>)')


def per_joint(values, model, name):
    """Return ``values`` (one per joint of ``model``) as an array; `ConfigError` if not."""
    values = np.asarray(values, dtype=float).reshape(-1)
    if values.size != model.n_joints:
        raise ConfigError(f'{name}: expected one value per joint of model {model.name!r} '
                          f'({model.n_joints}: {", ".join(model.joint_names)}), got '
                          f'{values.size}')
    return values


def sinusoids(model, velocity_limit):
    """Return (amplitudes [rad], frequencies [Hz]) of the generated joint sinusoids.

    Each amplitude is `AMPLITUDE`, or a quarter of the joint's travel when that is less
    (the pose is in the middle half of it: the motion stays within the limits); each
    frequency is `FREQUENCY`, or lower where the peak speed 2 pi f a would pass
    `SPEED_SHARE` of the joint's velocity limit.
    """
    travel = np.asarray(model.upper, dtype=float) - np.asarray(model.lower, dtype=float)
    amplitude = np.minimum(AMPLITUDE, np.where(np.isfinite(travel), 0.25 * travel, AMPLITUDE))
    fastest = SPEED_SHARE * np.asarray(velocity_limit, dtype=float) / (2.0 * math.pi * amplitude)
    return amplitude, np.minimum(FREQUENCY, fastest)


def generated_programs(model, pose=None, velocity_limit=None):
    """Return (programs, default) of a program file for ``model``: hold and joint_sine.

    ``pose``: the analysis pose [rad] the sinusoids are about (None: `analysis_pose`);
    ``velocity_limit``: the joint velocity limits in force [rad/s] (None: the model's).
    The mapping is what `program_config.load_program_file` returns for a file.
    """
    if pose is None:
        pose = analysis_pose(model)
    pose = per_joint(pose, model, 'analysis_positions')
    velocity_limit = (model.velocity_limit if velocity_limit is None
                      else per_joint(velocity_limit, model, 'velocity_limits'))
    amplitude, frequency = sinusoids(model, velocity_limit)
    joints = list(model.joint_names)
    n = len(joints)
    return {
        'hold': {'description': 'hold the joints where the program starts',
                 'gains': {'alpha': ALPHA},
                 'rows': [{'type': 'hold', 'joints': list(joints)}]},
        'joint_sine': {
            'description': 'each joint on a sinusoid about the analysis pose, from rest',
            'gains': {'alpha': ALPHA},
            'rows': [{'type': 'joint', 'joints': list(joints), 'reference': {
                'type': 'sinusoid', 'offset': _rounded(pose),
                'amplitude': _rounded(amplitude), 'frequency': _rounded(frequency),
                'phase': [round(-math.pi / 2, 6)] * n}}]},
    }, 'hold'


def _rounded(values):
    """Return ``values`` as a list of floats to 6 decimals (as a file would hold them)."""
    return [round(float(x), 6) for x in values]
