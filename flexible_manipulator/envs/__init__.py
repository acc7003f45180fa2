"""Learning environments (gymnasium) around the ROS-free plant and controller.

`FlexibleArmEnv` (module `arm_env`) on any graph's parameter file, registered as
``flexible_manipulator/Arm-v1``; the task suite (module `tasks`): the demo's flexible arm,
the soft arm and the UR5e-like arm with a slender forearm, each nominal and with the
plant drawn off its model at each reset (``flexible_manipulator/FlexibleArm-v1``,
``.../FlexibleArmMismatch-v1``, ``SoftArm``, ``UR5eForearm``). Registered so that
``gymnasium.make`` and the vector environments (``gymnasium.make_vec``,
`gymnasium.vector.AsyncVectorEnv` over processes) build them by name.
doc/environments.md.
"""

import gymnasium

from .arm_env import ACTIONS, FlexibleArmEnv, OBSERVATIONS, OPTIONS
from .tasks import make_task, register_tasks, TASKS

ARM_ID = 'flexible_manipulator/Arm-v1'
if ARM_ID not in gymnasium.registry:
    gymnasium.register(ARM_ID, entry_point='flexible_manipulator.envs.arm_env:FlexibleArmEnv')
TASK_IDS = register_tasks()
ENV_ID = TASKS['FlexibleArm'].env_id()

__all__ = ['ACTIONS', 'ARM_ID', 'ENV_ID', 'FlexibleArmEnv', 'make_task', 'OBSERVATIONS',
           'OPTIONS', 'TASK_IDS', 'TASKS']
