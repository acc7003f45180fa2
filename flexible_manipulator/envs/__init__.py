"""Learning environments (gymnasium) around the ROS-free plant and controller.

`FlexibleArmEnv` (module `arm_env`); registered as ``flexible_manipulator/FlexibleArm-v0``
so that ``gymnasium.make`` and the vector environments (``gymnasium.make_vec``,
`gymnasium.vector.AsyncVectorEnv` over processes) build it by name. doc/studies.md.
"""

import gymnasium

from .arm_env import ACTIONS, FlexibleArmEnv, OBSERVATIONS

ENV_ID = 'flexible_manipulator/FlexibleArm-v0'
if ENV_ID not in gymnasium.registry:
    gymnasium.register(ENV_ID, entry_point='flexible_manipulator.envs.arm_env:FlexibleArmEnv')

__all__ = ['ACTIONS', 'ENV_ID', 'FlexibleArmEnv', 'OBSERVATIONS']
