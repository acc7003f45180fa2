"""The learning environments: the controller's own score per task, and steps per second.

Part 1 (deterministic, any machine): each registered task (`flexible_manipulator.envs`)
with the controller alone (a residual action of zero) on seeds 0-4: the return (the
reward's (0, 1], module doc of `envs.arm_env`), the RMS of the program's residual over the
episode and whether it succeeded (RMS within the task's tolerance, no failure), and for
the mismatch tasks the plant's factors drawn. Part 2 (timed): environment steps per wall
second of the demo task (FlexibleArm-v1, its default policy period of 16 control ticks)
under random actions (an episode that ends is reset), in one process and in gymnasium's
AsyncVectorEnv over 2 and 4 processes (steps summed over the copies), environments built
and reset before the clock.

Usage: .venv/bin/python bench/bench_envs.py [scores|throughput]
"""

import os
import platform
import statistics
import sys
import time

import gymnasium
import numpy as np

import flexible_manipulator.envs as envs

SEEDS = range(5)
STEPS = 200            # steps per timed batch
BATCHES = 3


def machine():
    """Return the CPU model and count."""
    model = platform.processor() or 'unknown CPU'
    try:
        with open('/proc/cpuinfo') as stream:
            for line in stream:
                if line.startswith('model name'):
                    model = line.split(':', 1)[1].strip()
                    break
    except OSError:
        pass
    return f'{model} ({os.cpu_count()} CPUs)'


def scores():
    """Print the controller-alone table of every task."""
    print('| task | tolerance | return, mean (min-max) | RMS of phi, mean (max) | success | '
          'plant factors (stiffness, payload) |')
    print('|---|---|---|---|---|---|')
    for env_id in envs.TASK_IDS:
        env = gymnasium.make(env_id).unwrapped
        returns, rms, successes, factors = [], [], 0, []
        for seed in SEEDS:
            env.reset(seed=seed)
            total, done, info = 0.0, False, {}
            zero = np.zeros(env.action_space.shape, np.float32)
            while not done:
                _, reward, terminated, truncated, info = env.step(zero)
                total += reward
                done = terminated or truncated
            returns.append(total)
            rms.append(info['residual_rms'])
            successes += info['is_success']
            factors.append('{stiffness:.2f}, {payload:.2f}'.format(**info['factors']))
        drawn = '; '.join(factors) if env.mismatch else 'nominal'
        print(f'| {env_id.split("/")[1]} | {env.tolerance:g} | {statistics.mean(returns):.3f} '
              f'({min(returns):.3f}-{max(returns):.3f}) | {statistics.mean(rms):.2e} '
              f'({max(rms):.2e}) | {successes}/{len(SEEDS)} | {drawn} |', flush=True)
        env.close()


def timed(step, reset):
    """Steps per second: median (min, max) of `BATCHES` batches of `STEPS` calls."""
    rates = []
    for _ in range(BATCHES):
        reset()
        start = time.perf_counter()
        for _ in range(STEPS):
            step()
        rates.append(STEPS / (time.perf_counter() - start))
    return statistics.median(rates), min(rates), max(rates)


def throughput():
    """Print steps per second in one process and over AsyncVectorEnv's processes."""
    env = gymnasium.make(envs.ENV_ID)
    env.action_space.seed(0)

    def step():
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:             # as a vector environment does
            env.reset()
    one = timed(step, lambda: env.reset(seed=0))
    rows = [('1 process (the env itself)', 1, one)]
    for count in (2, 4):
        vector = gymnasium.vector.AsyncVectorEnv(
            [lambda: gymnasium.make(envs.ENV_ID)] * count)
        vector.action_space.seed(0)
        rate = timed(lambda: vector.step(vector.action_space.sample()),
                     lambda: vector.reset(seed=list(range(count))))
        rows.append((f'AsyncVectorEnv, {count} processes', count,
                     tuple(count * r for r in rate)))
        vector.close()
    ticks = env.unwrapped.repeat
    print('| where | copies | env steps / s, median (min-max) | control ticks / s | x one '
          'process |')
    print('|---|---|---|---|---|')
    for name, count, (median, low, high) in rows:
        print(f'| {name} | {count} | {median:.0f} ({low:.0f}-{high:.0f}) | '
              f'{median * ticks:.0f} | {median / one[0]:.2f} |')


def main():
    """Run the parts named on the command line (both by default)."""
    parts = sys.argv[1:] or ['scores', 'throughput']
    print(f'machine: {machine()}; load average {os.getloadavg()[0]:.1f}')
    for part in parts:
        {'scores': scores, 'throughput': throughput}[part]()


if __name__ == '__main__':
    main()
