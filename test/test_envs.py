"""The learning environment (`flexible_manipulator.envs`): gymnasium's contract, for real.

Expected values: gymnasium's own checker (`check_env`) and vector environment over
processes (`AsyncVectorEnv`) decide the API contract; the closed loop of
`control.lockstep` (what ``bringup --timing-mode lockstep`` runs) decides what the
environment's residual action of zero must reproduce, bit for bit; the documented seeding
decides reproducibility (module doc of `envs.arm_env`).
"""

import warnings

import gymnasium
from gymnasium.utils.env_checker import check_env
import numpy as np
import pytest

from flexible_manipulator.closed_loop import build_loop, load_graph
from flexible_manipulator.control.lockstep import run_lockstep
from flexible_manipulator.envs import ENV_ID, FlexibleArmEnv
from flexible_manipulator.model_config import ConfigError

SHORT = 0.04            # s per episode: 20 control periods of config/sim.yaml


def episode(env, seed, actions):
    """Observations and rewards of one episode under ``actions`` (a list of arrays)."""
    observation, _ = env.reset(seed=seed)
    observations, rewards = [observation], []
    for action in actions:
        observation, reward, terminated, truncated, _ = env.step(action)
        observations.append(observation)
        rewards.append(reward)
        if terminated or truncated:
            break
    return np.array(observations), np.array(rewards)


@pytest.mark.parametrize('options', [dict(action='effort'),
                                     dict(action='residual', observe='estimated',
                                          initial_noise=0.01, observation_noise=1e-3),
                                     dict(action='gains', observe='joints')])
def test_check_env_passes(options):
    env = FlexibleArmEnv(duration=SHORT, **options)
    with warnings.catch_warnings():
        # The checker's advice (unbounded observations, actions in N m not [-1, 1]) is a
        # recommendation, not the contract.
        warnings.simplefilter('ignore', UserWarning)
        check_env(env, skip_render_check=True)
    assert env.observation_space.shape == (
        {'effort': 16, 'residual': 16, 'gains': 4}[options['action']],)


def test_the_same_seed_gives_the_same_episode_bit_for_bit():
    env = FlexibleArmEnv(duration=SHORT, action='residual', initial_noise=0.02,
                         observation_noise=1e-3)
    rng = np.random.default_rng(0)
    actions = [0.05 * rng.standard_normal(2) for _ in range(25)]
    first = episode(env, 7, actions)
    other = episode(env, 8, actions)              # in between: another episode
    again = episode(env, 7, actions)
    fresh = episode(FlexibleArmEnv(duration=SHORT, action='residual', initial_noise=0.02,
                                   observation_noise=1e-3), 7, actions)
    for a, b in ((first, again), (first, fresh)):
        assert a[0].tobytes() == b[0].tobytes() and a[1].tobytes() == b[1].tobytes()
    assert not np.array_equal(first[0], other[0])  # the seed does draw the start and noise
    assert len(first[1]) == 20                      # truncated at the time limit


def test_a_zero_residual_action_is_the_closed_loop_of_lockstep():
    """The residual env with zero action = `run_lockstep` on the same graph, state for state."""
    env = FlexibleArmEnv(duration=SHORT, action='residual')
    observations, rewards = episode(env, 0, [np.zeros(2)] * 20)
    loop = build_loop(load_graph('sim'))
    run = run_lockstep(loop.controller, loop.simulation, SHORT, loop.period, loop.measured)
    assert run.ticks == 20 and not run.fault
    n = loop.plant_model.n_joints
    final = np.concatenate([loop.simulation.q[:n], loop.simulation.v[:n],
                            loop.simulation.q[n:], loop.simulation.v[n:]])
    assert observations[-1].tobytes() == final.tobytes()
    assert np.all(rewards < 0) and np.all(rewards > -1e-4)   # tracking: |phi| ~ 1e-4 m


def test_async_vector_env_over_processes_matches_single_envs():
    actions = np.full((3, 2, 2), 0.1)
    vector = gymnasium.vector.AsyncVectorEnv(
        [lambda: gymnasium.make(ENV_ID, duration=SHORT, action='residual',
                                initial_noise=0.02)] * 2)
    try:
        observations, _ = vector.reset(seed=[3, 4])
        stepped = [vector.step(a) for a in actions]
    finally:
        vector.close()
    for index, seed in enumerate((3, 4)):
        single, _ = episode(FlexibleArmEnv(duration=SHORT, action='residual',
                                           initial_noise=0.02), seed, list(actions[:, index]))
        assert observations[index].tobytes() == single[0].tobytes()
        assert stepped[-1][0][index].tobytes() == single[3].tobytes()
    assert not np.array_equal(observations[0], observations[1])


def test_effort_bounds_are_the_models_limits():
    env = FlexibleArmEnv(duration=SHORT)
    # config/models/two_link_flexible.yaml: effort_limit 10.0 (shoulder), 5.0 (elbow)
    assert env.action_space.high.tolist() == [10.0, 5.0]
    env.reset(seed=0)
    _, _, _, _, info = env.step(np.array([1e6, -1e6]))
    assert env.applied.tolist() == [10.0, -5.0]      # clipped as the plant's amplifier


@pytest.mark.parametrize('options, field', [
    (dict(action='torque'), 'action'), (dict(observe='tip'), 'observe'),
    (dict(duration=0.0), 'duration'), (dict(initial_noise=float('nan')), 'initial_noise'),
    (dict(values={'model.links[7].mass': 1.0}), 'model.links[7].mass'),
    (dict(values={'controller.control_period': -1.0}), 'controller.control_period')])
def test_bad_arguments_are_refused_naming_them(options, field):
    with pytest.raises(ConfigError, match=rf'^{__import__("re").escape(field)}\b'):
        FlexibleArmEnv(**options)
