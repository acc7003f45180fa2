"""The task suite: registered environment ids, each an arm, a program and a tolerance.

Each task is `FlexibleArmEnv` with its options set (`Task`); ``gymnasium.make(id, **options)``
changes any of them. Three arms, each nominal (the plant is the controller's model) and
``Mismatch`` (the plant's stiffness and payload drawn at each reset from the controller's
declared uncertainty, `control.uncertainty.DEFAULT_UNCERTAINTY`: stiffness x[0.8, 1.2],
payload x[0.5, 2]):

* ``FlexibleArm``: the demo's two-link arm with flexible links (config/sim.yaml), the
  forearm's lambda-point on a 0.1 m circle (one turn in pi s), the modes observed from the
  joints (config/hil.yaml's law: the servo law on one mode per link);
* ``SoftArm``: the two-link arm with Cosserat links (config/sim_soft.yaml), both joints on
  sinusoids (0.25 and 0.4 Hz) while the links sway and sag, strains observed;
* ``UR5eForearm``: the UR5e-like arm with a slender forearm
  (config/sim_ur5e_flexible_forearm.yaml), every joint on a 0.1 rad sinusoid at 0.5 Hz
  from rest, under model following (the controller's default on this arm).

The tolerance is the program's residual the reward is scaled by and the success criterion
checks (RMS of |phi| over the episode); the policy period makes 100 steps of an episode
(the horizon of a discount of 0.99). The observation scales of the modes (``normalize``)
are the largest the controller alone leaves on the nominal plant, rounded up to a power of
ten. doc/environments.md has the controller's own scores.
"""

from dataclasses import dataclass, field

import gymnasium

from ..control.uncertainty import DEFAULT_UNCERTAINTY

NAMESPACE = 'flexible_manipulator'
VERSION = 'v1'
ENTRY_POINT = 'flexible_manipulator.envs.tasks:make_task'
# The controller observes the modes from the joints whatever the policy observes.
ESTIMATED = {'controller.elastic_state': 'estimated'}
DECLARED = {f'controller.uncertainty.{factor}': list(bounds)
            for factor, bounds in DEFAULT_UNCERTAINTY.items()}


@dataclass(frozen=True)
class Task:
    """One task: a parameter file, the values changed in it and the env's options."""

    name: str
    params_file: str
    description: str
    options: dict = field(default_factory=dict)
    values: dict = field(default_factory=dict)

    def env_id(self, mismatch=False):
        """Return the registered id (the mismatch variant's with ``mismatch``)."""
        return f'{NAMESPACE}/{self.name}{"Mismatch" if mismatch else ""}-{VERSION}'


TASKS = {
    'FlexibleArm': Task(
        'FlexibleArm', 'sim',
        "two-link flexible arm, the forearm's lambda-point on a 0.1 m circle",
        dict(duration=3.2, tolerance=2e-4,
             observation_scales={'modes': 1e-2, 'mode_rates': 1e-2}), ESTIMATED),
    'SoftArm': Task(
        'SoftArm', 'sim_soft', 'two-link soft (Cosserat) arm, both joints on sinusoids',
        dict(duration=4.0, tolerance=2e-3,
             observation_scales={'modes': 10.0, 'mode_rates': 10.0}), ESTIMATED),
    'UR5eForearm': Task(
        'UR5eForearm', 'sim_ur5e_flexible_forearm',
        'UR5e-like arm with a slender forearm, every joint on a 0.1 rad sinusoid',
        dict(duration=2.0, tolerance=2e-3,
             observation_scales={'modes': 1e-3, 'mode_rates': 1e-3})),
}


def task_options(name, mismatch=False, **options):
    """Return (params_file, values, options) of task ``name`` with ``options`` changed."""
    task = TASKS[name]
    values = dict(task.values)
    merged = dict(task.options)
    if mismatch:
        merged['mismatch'] = 'uncertainty'
        values.update(DECLARED)          # the controller is built for the set drawn from
    values.update(options.pop('values', None) or {})
    merged.update(options)
    return task.params_file, values, merged


def make_task(task, mismatch=False, **options):
    """Build task ``task`` (a name of `TASKS`) as a `FlexibleArmEnv`."""
    from .arm_env import FlexibleArmEnv
    params_file, values, merged = task_options(task, mismatch, **options)
    return FlexibleArmEnv(params_file, values, **merged)


def register_tasks():
    """Register every task and its mismatch variant with gymnasium (once); return the ids."""
    ids = []
    for name, task in TASKS.items():
        for mismatch in (False, True):
            env_id = task.env_id(mismatch)
            if env_id not in gymnasium.registry:
                gymnasium.register(env_id, entry_point=ENTRY_POINT,
                                   kwargs={'task': name, 'mismatch': mismatch})
            ids.append(env_id)
    return ids
