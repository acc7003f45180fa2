"""The learning environments (`flexible_manipulator.envs`): gymnasium's contract, for real.

Expected values: gymnasium's own checker (`check_env`, every warning an error) and vector
environment over processes (`AsyncVectorEnv`) decide the API contract; Stable-Baselines3's
checker where it is installed, else its checks that matter here (float32 Boxes, actions in
[-1, 1], reset and step, seeding); the closed loop of `control.lockstep` (what ``bringup
--timing-mode lockstep`` runs) decides what a residual action of zero must reproduce, bit
for bit; the documented reward (module doc of `envs.arm_env`) decides the return's range:
(0, 1] without a failure, below 0 with one.
"""

import re
import warnings

import gymnasium
from gymnasium.utils.env_checker import check_env
import numpy as np
import pytest

from flexible_manipulator.closed_loop import build_loop, load_graph
from flexible_manipulator.control.lockstep import run_lockstep
from flexible_manipulator.envs import ARM_ID, ENV_ID, FlexibleArmEnv, make_task, TASK_IDS
from flexible_manipulator.model_config import ConfigError

SHORT = 0.04            # s per episode: 20 control periods of config/sim.yaml


def episode(env, seed, actions):
    """Observations, rewards and the last info of one episode under ``actions``."""
    observation, info = env.reset(seed=seed)
    observations, rewards = [observation], []
    for action in actions:
        observation, reward, terminated, truncated, info = env.step(action)
        observations.append(observation)
        rewards.append(reward)
        if terminated or truncated:
            break
    return np.array(observations), np.array(rewards), info


@pytest.fixture(scope='module')
def mismatch():
    """The demo's mismatch task, short: plant factors drawn at each reset."""
    return make_task('FlexibleArm', mismatch=True, duration=0.2, policy_period=0.02,
                     initial_noise=0.01,
                     observation_noise=1e-3)


@pytest.mark.parametrize('options', [dict(action='residual'),
                                     dict(action='effort', observe='measured',
                                          normalize=True),
                                     dict(action='gains', observe='joints',
                                          render_mode='rgb_array')])
def test_gymnasium_check_env_passes_without_a_warning(options):
    env = gymnasium.make(ARM_ID, duration=SHORT, policy_period=0.01, **options).unwrapped
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        check_env(env, skip_render_check=options.get('render_mode') is None)
    rows, modes = 2, {'estimated': 6, 'measured': 6, 'joints': 0}[env.observe]
    assert env.observation_space.shape == (4 + 2 * modes + 4 * rows + 1,)
    assert env.repeat == 5


def test_stable_baselines3_checks(mismatch):
    """SB3's `check_env` without a warning where it is installed; its checks here always."""
    env = mismatch
    for space in (env.observation_space, env.action_space):
        assert isinstance(space, gymnasium.spaces.Box) and space.dtype == np.float32
        assert np.all(np.isfinite(space.low)) and np.all(space.low == -space.high)
    assert np.all(env.action_space.high == 1.0)
    observation, info = env.reset(seed=0)
    assert observation.dtype == np.float32 and observation in env.observation_space
    result = env.step(env.action_space.sample())
    assert len(result) == 5 and result[0] in env.observation_space
    assert isinstance(result[1], float) and isinstance(result[4], dict)
    try:
        from stable_baselines3.common.env_checker import check_env as sb3_check_env
    except ImportError:
        return
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        sb3_check_env(env)


def test_the_same_seed_gives_the_same_episode_bit_for_bit(mismatch):
    """The seed draws the plant's factors, the start and the sensor noise; nothing else."""
    rng = np.random.default_rng(0)
    actions = [rng.uniform(-1, 1, 2).astype(np.float32) for _ in range(10)]
    first = episode(mismatch, 7, actions)
    other = episode(mismatch, 8, actions)              # in between: another episode
    again = episode(mismatch, 7, actions)
    for a, b in zip(first[:2], again[:2]):
        assert a.tobytes() == b.tobytes()
    assert first[2]['factors'] == again[2]['factors'] != other[2]['factors']
    assert not np.array_equal(first[0], other[0])
    low, high = mismatch.uncertainty['payload']
    assert (low, high) == (0.5, 2.0) and low <= first[2]['factors']['payload'] <= high
    assert len(first[1]) == 10 and mismatch.repeat == 10       # 0.2 s of 2 ms ticks


def test_a_zero_residual_action_is_the_closed_loop_of_lockstep():
    """The residual env with zero action = `run_lockstep` on the same graph, state for state."""
    env = FlexibleArmEnv(duration=SHORT, observe='measured', policy_period=0.01)
    observations, rewards, info = episode(env, 0, [np.zeros(2, np.float32)] * 4)
    loop = build_loop(load_graph('sim'))
    run = run_lockstep(loop.controller, loop.simulation, SHORT, loop.period, loop.measured)
    assert run.ticks == 20 and not run.fault and env.ticks == 20
    n = loop.plant_model.n_joints
    final = np.concatenate([loop.simulation.q[:n], loop.simulation.v[:n],
                            loop.simulation.q[n:], loop.simulation.v[n:]])
    assert np.array_equal(observations[-1][:len(final)], final.astype(np.float32))
    # Reward: each of the 4 steps is a quarter of the episode; |phi| ~ 1e-4 m < 1e-3 m.
    assert np.all(rewards > 0.95 * 0.25) and np.all(rewards <= 0.25)
    assert info['is_success'] and 0 < info['residual_rms'] < 1e-3


def test_a_failure_is_worse_than_any_episode_that_does_not_fail():
    """Full effort at both joints: a joint past its velocity limit, the controller's fault."""
    env = FlexibleArmEnv(duration=2.0, action='effort', observe='joints', tolerance=1e-9)
    _, rewards, info = episode(env, 0, [np.ones(2, np.float32)] * 100)
    assert 'velocity limit' in info['failure'] and not info['is_success']
    assert rewards[-1] == -1.0 and rewards.sum() < 0.0 and np.all(rewards[:-1] > 0.0)
    with pytest.raises(RuntimeError, match='reset'):
        env.step(np.zeros(2, np.float32))


def test_actions_are_scaled_to_the_limits():
    env = FlexibleArmEnv(duration=SHORT, policy_period=0.01, observe='joints')
    # config/models/two_link_flexible.yaml: effort_limit 10.0 (shoulder), 5.0 (elbow)
    env.reset(seed=0)
    effort = env._effort.copy()
    env.step(np.array([1.0, -1.0], np.float32))
    assert env.applied.tolist() != (effort + [1.0, -0.5]).tolist()   # later ticks: new effort
    env = FlexibleArmEnv(duration=SHORT, action='effort', observe='joints')
    env.reset(seed=0)
    env.step(np.array([0.5, 3.0], np.float32))           # clipped to the space first
    assert env.applied.tolist() == [5.0, 5.0]
    env = FlexibleArmEnv(duration=SHORT, action='gains', observe='joints')
    env.reset(seed=0)
    stabilization, k1, k0, _ = env._gains
    env.step(np.array([0.5, -1.0], np.float32))
    assert np.allclose(stabilization.k1, k1 * [2.0, 0.25])
    assert np.allclose(stabilization.k0, k0 * [4.0, 1 / 16])


@pytest.mark.parametrize('call, pattern', [
    (lambda: FlexibleArmEnv(duration=SHORT, acton='residual'), r'^acton: unknown option'),
    (lambda: gymnasium.make(ARM_ID, duration=SHORT, render='human'), r'^render: unknown'),
    (lambda: FlexibleArmEnv(render_mode='human'), r'^render_mode: must be one of'),
    (lambda: FlexibleArmEnv(action='torque'), r'^action: must be one of'),
    (lambda: FlexibleArmEnv(failure_reward=-0.5), r'^failure_reward: must be at most -1'),
    (lambda: FlexibleArmEnv(duration=0.0), r'^duration: expected a finite number > 0'),
    (lambda: FlexibleArmEnv(observation_scales={'modes': 0.0}),
     r'^observation_scales.modes: expected scales > 0'),
    (lambda: FlexibleArmEnv(values={'model.links[7].mass': 1.0}), r'^model.links\[7\].mass')])
def test_bad_options_are_refused_naming_them(call, pattern):
    with pytest.raises(ConfigError, match=pattern):
        call()


@pytest.mark.parametrize('action, pattern', [
    (np.zeros(3, np.float32), re.escape('action: expected shape (2,), got (3,)')),
    (np.zeros((1, 2)), re.escape('action: expected shape (2,), got (1, 2)')),
    (np.array([np.nan, 0.0]), r'action: not finite'),
    (np.array([np.inf, 0.0]), r'action: not finite'),
    ('push', r'action: expected 2 numbers')])
def test_bad_actions_are_refused_naming_them(action, pattern):
    env = FlexibleArmEnv(duration=SHORT, observe='joints')
    env.reset(seed=0)
    with pytest.raises(ValueError, match=pattern):
        env.step(action)


def test_the_tasks_are_registered_and_each_arm_tracks_alone():
    """Every task id is registered; the soft arm and the UR5e build and track for 0.1 s."""
    names = {env_id.split('/')[1] for env_id in TASK_IDS}
    assert names == {f'{arm}{kind}-v1' for arm in ('FlexibleArm', 'SoftArm', 'UR5eForearm')
                     for kind in ('', 'Mismatch')}
    assert ENV_ID == 'flexible_manipulator/FlexibleArm-v1'
    for env_id, shape in (('flexible_manipulator/SoftArm-v1', (2,)),
                          ('flexible_manipulator/UR5eForearm-v1', (6,))):
        env = gymnasium.make(env_id, duration=0.1, policy_period=0.004, normalize=True)
        assert env.action_space.shape == shape
        _, rewards, info = episode(env, 0, [np.zeros(shape, np.float32)] * 100)
        assert len(rewards) == 25 and info['status'] == 'tracking' and info['is_success']
        assert 0.5 < rewards.sum() <= 1.0            # RMS within the tolerance
        env.close()


def test_the_frame_shows_the_arm():
    env = FlexibleArmEnv(duration=SHORT, policy_period=0.01, render_mode='rgb_array')
    env.reset(seed=0)
    env.render()
    env.step(np.zeros(2, np.float32))
    frame = env.render()
    assert frame.shape == (384, 384, 3) and frame.dtype == np.uint8
    arm = (frame[:, :, 0] > 150) & (frame[:, :, 1] < 60) & (frame[:, :, 2] > 150)
    assert arm.sum() > 100                          # the magenta centre line
    assert FlexibleArmEnv(duration=SHORT).render() is None
    env.close()


def test_async_vector_env_over_processes_matches_single_envs():
    actions = np.full((3, 2, 2), 0.1, dtype=np.float32)
    options = dict(duration=SHORT, initial_noise=0.02, policy_period=0.01)
    vector = gymnasium.vector.AsyncVectorEnv(
        [lambda: gymnasium.make(ENV_ID, **options)] * 2)
    try:
        observations, _ = vector.reset(seed=[3, 4])
        stepped = [vector.step(a) for a in actions]
    finally:
        vector.close()
    single = make_task('FlexibleArm', **options)
    for index, seed in enumerate((3, 4)):
        alone, _, _ = episode(single, seed, list(actions[:, index]))
        assert observations[index].tobytes() == alone[0].tobytes()
        assert stepped[-1][0][index].tobytes() == alone[3].tobytes()
    assert not np.array_equal(observations[0], observations[1])
