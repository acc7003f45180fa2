"""A `gymnasium.Env` around the ROS-free plant, the program controller as an optional inner loop.

The plant and controller of a graph's parameter file (`closed_loop.Graph`: config/sim.yaml
by default, any field changed by its dotted path with ``values``), closed as in lock-step
(`control.lockstep`): one step is one control period (the plant's ``update_period``) with
the effort held. The controller runs every step: it evaluates the program (the reward's
residual), estimates the elastic state when asked, and, depending on ``action``, gives
the effort:

* ``effort``: the action is the effort itself [N m or N], one per input (model order),
  bounded by the plant's effort limits (the amplifier clips there anyway);
* ``residual``: the action is added to the controller's effort (a residual policy on the
  program controller; same bounds);
* ``gains``: the action scales each program row's stabilization gains, in [0.25, 4]: the
  damping term 2 alpha by s, the position term beta^2 by s^2 (a velocity row's gamma by
  s); the controller's effort is applied.

Observation (float64): joint positions and velocities [rad, rad/s or m, m/s], then with
``observe`` ``measured`` the plant's elastic coordinates and rates (modes, strains: what a
simulation publishes), with ``estimated`` the controller's estimate from the joint motion
and the applied efforts (a real arm: `control.elastic_estimator`; the controller is then
built with ``elastic_state: estimated``), with ``joints`` nothing more. Gaussian
``observation_noise`` [rad, rad/s] is added to the observed joints (not to what the
controller sees: it is the policy's sensor).

Reward: ``reward(env, residual, applied)`` if given, else minus the sum of the squares of
the program's residual phi after the step [m^2 or rad^2]. An episode ends (terminated)
when the plant's step fails (a non-finite state) or the controller latches a fault (a
joint past its velocity limit), with ``failure_reward``; it is truncated after
``duration`` [s] of simulated time.

Seeding: `reset` with a seed draws the initial joint offsets (``initial_noise`` [rad],
Gaussian, on the parameter file's initial_positions; the modes at rest under them, as the
plant starts) and every observation noise from the env's generator: the same seed gives
the same episode bit for bit (the simulation and the controller are deterministic and
restarted on each reset).
"""

import math

import gymnasium
from gymnasium import spaces
import numpy as np

from ..closed_loop import build_loop, load_graph
from ..control.programs import POSITION
from ..mechanics.simulation import StepFailedError
from ..config_checks import ConfigError
from ..plant_config import arm_initial_state

ACTIONS = ('effort', 'residual', 'gains')
OBSERVATIONS = ('joints', 'measured', 'estimated')
GAIN_RANGE = (0.25, 4.0)


class FlexibleArmEnv(gymnasium.Env):
    """The arm's closed loop as a learning environment (module doc)."""

    metadata = {'render_modes': []}

    def __init__(self, params_file='sim', values=None, action='effort', observe='measured',
                 duration=2.0, reward=None, initial_noise=0.0, observation_noise=0.0,
                 failure_reward=-100.0):
        """Build the plant and the controller; `ConfigError` naming a bad argument.

        ``params_file``: a graph's parameter file (a path or a name in config/);
        ``values``: {dotted path: value} changed in it (`closed_loop`); ``duration`` [s]
        of an episode; the others: module doc.
        """
        if action not in ACTIONS:
            raise ConfigError(f'action: must be one of {", ".join(ACTIONS)}, got {action!r}')
        if observe not in OBSERVATIONS:
            raise ConfigError(f'observe: must be one of {", ".join(OBSERVATIONS)}, got '
                              f'{observe!r}')
        for name, value, low in (('duration', duration, 0.0), ('initial_noise', initial_noise,
                                                               -1.0),
                                 ('observation_noise', observation_noise, -1.0)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                    not math.isfinite(value) or not value > low or (low < 0 and value < 0):
                raise ConfigError(f'{name}: expected a finite number >= 0 (> 0 for the '
                                  f'duration), got {value!r}')
        values = dict(values or {})
        if observe == 'estimated':
            values['controller.elastic_state'] = 'estimated'
        self.graph = load_graph(params_file).with_values(values)
        self.loop = build_loop(self.graph)
        self.action_kind, self.observe = action, observe
        self.reward_function, self.failure_reward = reward, float(failure_reward)
        self.initial_noise, self.observation_noise = float(initial_noise), float(
            observation_noise)
        plant, self.period = self.loop.plant_model, self.loop.period
        self.n = plant.n_joints
        self.max_steps = max(1, int(round(duration / self.period)))
        self.plant_parameters = self.graph.plant_parameters()
        limit = np.asarray(plant.effort_limit, dtype=float)
        self.limit = limit
        rows = len(self.loop.row_names)
        if action == 'gains':
            self.action_space = spaces.Box(GAIN_RANGE[0], GAIN_RANGE[1], (rows,), np.float64)
            stabilization = self.loop.controller.entry.stabilization
            self._gains = (stabilization, stabilization.k1.copy(), stabilization.k0.copy(),
                           stabilization.order == POSITION)
        else:
            finite = np.where(np.isfinite(limit), limit, np.finfo(np.float64).max)
            self.action_space = spaces.Box(-finite, finite, (plant.nu,), np.float64)
        modes = plant.n_modes if observe == 'measured' else (
            len(self.loop.controller.elastic_positions) if observe == 'estimated' else 0)
        size = 2 * self.n + 2 * modes
        self.observation_space = spaces.Box(-np.inf, np.inf, (size,), np.float64)
        self.applied = np.zeros(plant.nu)
        self.steps = 0

    # -- the loop ---------------------------------------------------------------------------
    def _tick(self):
        """Run the controller on the plant's state; return its effort (None on a fault)."""
        loop, sim = self.loop, self.loop.simulation
        q, v = sim.q, sim.v
        if loop.measured and loop.plant_model.nv > self.n:
            effort = loop.controller.update(sim.time, q[:self.n], v[:self.n], q[self.n:],
                                            v[self.n:], applied_effort=self.applied)
        else:
            effort = loop.controller.update(sim.time, q[:self.n], v[:self.n],
                                            applied_effort=self.applied)
        return effort if loop.controller.status.tracking else None

    def _observation(self):
        sim, n = self.loop.simulation, self.n
        parts = [sim.q[:n], sim.v[:n]]
        if self.observe == 'measured':
            parts += [sim.q[n:n + self.loop.plant_model.n_modes],
                      sim.v[n:n + self.loop.plant_model.n_modes]]
        observation = np.concatenate(parts).astype(np.float64)
        if self.observation_noise > 0.0:
            observation[:2 * n] += self.observation_noise * self.np_random.standard_normal(2 * n)
        if self.observe == 'estimated':
            controller = self.loop.controller
            observation = np.concatenate([observation, controller.elastic_positions,
                                          controller.elastic_velocities])
        return observation

    def _info(self):
        status = self.loop.controller.status
        return {'time': self.loop.simulation.time, 'residual': np.array(status.residual),
                'status': status.message}

    def reset(self, *, seed=None, options=None):
        """Start an episode at the parameter file's initial state, joints offset by noise."""
        super().reset(seed=seed)
        parameters = dict(self.plant_parameters)
        positions = np.asarray(parameters.get('initial_positions') or [0.0] * self.n, float)
        if self.initial_noise > 0.0:
            positions = positions + self.initial_noise * self.np_random.standard_normal(self.n)
        parameters['initial_positions'] = positions.tolist()
        q0, v0 = arm_initial_state(self.loop.plant_model, parameters)
        sim = self.loop.simulation
        sim.initial_state[:sim.nq], sim.initial_state[sim.nq:] = q0, v0
        sim.reset()
        if self.action_kind == 'gains':
            stabilization, k1, k0, _ = self._gains
            stabilization.k1[:], stabilization.k0[:] = k1, k0
        self.loop.controller.enable()          # clears a fault, restarts program time
        self.applied[:] = 0.0
        self.steps = 0
        self._effort = self._tick()
        return self._observation(), self._info()

    def step(self, action):
        """Apply ``action`` over one control period; return the gymnasium 5-tuple."""
        action = np.asarray(action, dtype=np.float64).reshape(self.action_space.shape)
        if not np.all(np.isfinite(action)):
            raise ValueError(f'action: not finite: {action.tolist()}')
        if self.action_kind == 'effort':
            effort = action
        elif self._effort is None:
            effort = np.zeros_like(self.applied)
        elif self.action_kind == 'residual':
            effort = self._effort + action
        else:
            effort = self._effort
        np.clip(effort, -self.limit, self.limit, out=self.applied)
        self.steps += 1
        sim = self.loop.simulation
        try:
            sim.advance(self.applied, self.period)
        except StepFailedError as error:
            info = dict(self._info(), failure=f'plant: {error}')
            return self._observation(), self.failure_reward, True, False, info
        if self.action_kind == 'gains':
            stabilization, k1, k0, position = self._gains
            scale = np.clip(action, *GAIN_RANGE)
            stabilization.k1[:] = k1 * scale
            stabilization.k0[:] = np.where(position, k0 * scale ** 2, k0 * scale)
        self._effort = self._tick()
        observation, info = self._observation(), self._info()
        truncated = self.steps >= self.max_steps
        if self._effort is None:
            info['failure'] = self.loop.controller.status.message
            return observation, self.failure_reward, True, truncated, info
        residual = self.loop.controller.status.residual
        if self.reward_function is not None:
            reward = float(self.reward_function(self, residual, self.applied))
        else:
            reward = -float(np.sum(residual ** 2))
        return observation, reward, False, truncated, info
