"""A `gymnasium.Env` around the ROS-free plant, the program controller as its inner loop.

The plant and controller of a graph's parameter file (`closed_loop.Graph`: config/sim.yaml
by default, any field changed by its dotted path with ``values``), closed as in lock-step
(`control.lockstep`): one control tick is one period of the plant (``update_period``)
with the effort held. The controller runs every tick: it evaluates the program (its
reference r, the residual phi the reward scores), estimates the elastic state when asked,
and gives its effort. One environment step is ``policy_period`` [s]: that many ticks
(an action repeat), the action held over them. doc/environments.md describes the options,
the task suite (`envs.tasks`) and the controller's own scores.

Actions (a float32 Box in [-1, 1] for every kind, scaled inside):

* ``residual`` (default): a times ``residual_fraction`` of the effort limits, added to
  the controller's effort (a residual policy on the program controller; zero: the
  controller alone);
* ``effort``: a times the effort limits, the controller's effort unused;
* ``gains``: one entry per program row, the row's stabilization gains scaled by
  s = 4^a in [0.25, 4] (zero: the controller's own): the damping term 2 alpha by s, the
  position term beta^2 by s^2 (a velocity row's gamma by s), from the next tick on.

The applied effort is clipped at the plant's effort limits (the amplifier clips there).

Observation (float32), in this order: joint positions and velocities [rad, rad/s or m,
m/s]; with ``observe`` ``estimated`` (default: what a real arm provides) the controller's
estimate of the elastic coordinates and rates (its observer from the joint motion and the
efforts, `control.elastic_estimator`; under model following the internal model's modes),
with ``measured`` the plant's true ones, with ``joints`` none; the program's reference r
and its rate r' per row; the residual phi and its rate phi' per row [m or rad]; the
episode's elapsed fraction t / duration. With ``normalize`` each block is divided by its
scale (`observation_scales`, documented there). Every entry is clipped to
+-`OBSERVATION_BOUND` (a non-finite entry, only at a plant's failure, reads 0).

Reward: per step, w / (1 + (rho / tolerance)^2), where rho^2 is the mean over the step's
ticks of |phi|^2 (the rows' Euclidean norm) and w the step's share of the episode's ticks:
a non-failing episode's return lies in (0, 1], 1 for perfect tracking, 1/2 for a residual
at the tolerance throughout. An episode ends (terminated) when the plant's step fails (a
non-finite state) or the controller latches a fault (a joint past its velocity limit):
that step's reward is ``failure_reward`` (at most -1), so a failed episode's return is
below 0, worse than any episode that does not fail; it is truncated after ``duration``.
``info['is_success']``: no failure and the RMS of |phi| over the ticks so far within the
tolerance (at the last step: the episode's verdict).

``mismatch``: None (the plant is the file's), or ``uncertainty``: at each reset the
plant's stiffness and payload factors are drawn uniformly from the controller's declared
uncertainty set (`control.uncertainty`) and the plant is rebuilt off its model
(`mechanics.perturbation.perturbed`); info['factors'] names them.

Seeding: `reset` with a seed draws the plant's factors, the initial joint offsets
(``initial_noise`` [rad], Gaussian, on the parameter file's initial_positions; the modes at
rest under them, as the plant starts) and every observation noise from the env's
generator: the same seed gives the same episode bit for bit (the simulation and the
controller are deterministic and restarted on each reset).

Rendering: ``render_mode`` ``rgb_array`` returns a matplotlib frame of the arm's centre
line (`envs.render`). The browser view (`view`) is fed by the ROS graph's topics, not by
an environment: there is no ``human`` mode (doc/environments.md).
"""

import math

import gymnasium
from gymnasium import spaces
import numpy as np

from ..closed_loop import build_loop, load_graph
from ..control.mismatch_guard import InnovationTest, MismatchGuard
from ..control.programs import POSITION
from ..config_checks import ConfigError
from ..mechanics.perturbation import perturbed
from ..mechanics.simulation import Simulation, StepFailedError
from ..plant_config import arm_initial_state

ACTIONS = ('residual', 'effort', 'gains')
OBSERVATIONS = ('estimated', 'measured', 'joints')
MISMATCH = (None, 'uncertainty')
GAIN_BASE = 4.0                   # a gain action a scales the gains by GAIN_BASE ** a
OBSERVATION_BOUND = 1e6           # every observation entry is clipped to +- this
HORIZON = 100                     # default: steps per episode (1 / (1 - 0.99))
MISMATCH_FACTORS = ('stiffness', 'payload')
SCALE_KEYS = ('joint_positions', 'joint_velocities', 'modes', 'mode_rates', 'reference',
              'reference_rate', 'residual', 'residual_rate')

# The options and their defaults (module doc; doc/environments.md).
OPTIONS = {
    'action': 'residual', 'observe': 'estimated', 'duration': 2.0, 'tolerance': 1e-3,
    'policy_period': None, 'residual_fraction': 0.1, 'normalize': False,
    'observation_scales': None, 'mismatch': None, 'initial_noise': 0.0,
    'observation_noise': 0.0, 'failure_reward': -1.0, 'render_mode': None,
}


def _number(name, value, low, strict):
    """Return ``value`` as a float, checked finite and > (or >=) ``low``; `ConfigError`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(value) or value < low or (strict and value == low):
        relation = '>' if strict else '>='
        raise ConfigError(f'{name}: expected a finite number {relation} {low:g}, got '
                          f'{value!r}')
    return float(value)


class FlexibleArmEnv(gymnasium.Env):
    """The arm's closed loop as a learning environment (module doc)."""

    metadata = {'render_modes': ['rgb_array'], 'render_fps': 25}

    def __init__(self, params_file='sim', values=None, **options):
        """Build the plant and the controller; `ConfigError` naming a bad option.

        ``params_file``: a graph's parameter file (a path or a name in config/);
        ``values``: {dotted path: value} changed in it (`closed_loop`); ``options``:
        `OPTIONS` (module doc).
        """
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise ConfigError(f'{unknown[0]}: unknown option (known: '
                              f'{", ".join(sorted(OPTIONS))})')
        o = dict(OPTIONS, **options)
        for name, choices in (('action', ACTIONS), ('observe', OBSERVATIONS),
                              ('mismatch', MISMATCH),
                              ('render_mode', [None] + self.metadata['render_modes'])):
            if o[name] not in choices:
                raise ConfigError(f'{name}: must be one of '
                                  f'{", ".join(map(str, choices))}, got {o[name]!r}')
        duration = _number('duration', o['duration'], 0.0, True)
        self.tolerance = _number('tolerance', o['tolerance'], 0.0, True)
        self.residual_fraction = _number('residual_fraction', o['residual_fraction'], 0.0,
                                         True)
        self.initial_noise = _number('initial_noise', o['initial_noise'], 0.0, False)
        self.observation_noise = _number('observation_noise', o['observation_noise'], 0.0,
                                         False)
        self.failure_reward = _number('failure_reward', o['failure_reward'], -math.inf,
                                      False)
        if self.failure_reward > -1.0:
            raise ConfigError(f'failure_reward: must be at most -1 (a failure below any '
                              f'episode that does not fail), got {o["failure_reward"]!r}')
        if not isinstance(o['normalize'], bool):
            raise ConfigError(f'normalize: expected true or false, got {o["normalize"]!r}')
        values = dict(values or {})
        if o['observe'] == 'estimated':
            values.setdefault('controller.elastic_state', 'estimated')
        self.graph = load_graph(params_file).with_values(values)
        self.loop = build_loop(self.graph)
        self.action_kind, self.observe = o['action'], o['observe']
        self.mismatch, self.normalize = o['mismatch'], o['normalize']
        self.render_mode = o['render_mode']
        controller, self.model = self.loop.controller, self.loop.plant_model
        self.period = self.loop.period
        policy_period = o['policy_period']
        if policy_period is None:
            policy_period = duration / HORIZON
        policy_period = _number('policy_period', policy_period, 0.0, True)
        self.repeat = max(1, int(round(policy_period / self.period)))
        self.policy_period = self.repeat * self.period
        self.max_ticks = max(1, int(round(duration / self.period)))
        self.duration = self.max_ticks * self.period
        self.n = self.model.n_joints
        self.plant_parameters = self.graph.plant_parameters()
        self.limit = np.asarray(self.model.effort_limit, dtype=float)
        if self.action_kind != 'gains' and not np.all(np.isfinite(self.limit)):
            raise ConfigError(f'action: {self.action_kind} scales the effort limits, and '
                              f'the model has none for some input ({self.limit.tolist()})')
        self.rows = len(self.loop.row_names)
        size = self.rows if self.action_kind == 'gains' else self.model.nu
        self.action_space = spaces.Box(-1.0, 1.0, (size,), np.float32)
        stabilization = controller.entry.stabilization
        self._gains = (stabilization, stabilization.k1.copy(), stabilization.k0.copy(),
                       stabilization.order == POSITION)
        self.following = getattr(controller, 'following', None)
        if self.observe == 'measured':
            self.modes = self.model.n_modes
        elif self.observe == 'estimated':
            self.modes = (self.model.n_modes if self.following is not None
                          else len(controller.elastic_positions))
        else:
            self.modes = 0
        self.uncertainty = {k: tuple(controller.uncertainty[k]) for k in MISMATCH_FACTORS}
        self.layout = [('joint_positions', self.n), ('joint_velocities', self.n),
                       ('modes', self.modes), ('mode_rates', self.modes),
                       ('reference', self.rows), ('reference_rate', self.rows),
                       ('residual', self.rows), ('residual_rate', self.rows), ('time', 1)]
        size = sum(count for _, count in self.layout)
        self.observation_space = spaces.Box(-OBSERVATION_BOUND, OBSERVATION_BOUND, (size,),
                                            np.float32)
        self.centre, self.scale = self._scales(o['observation_scales'])
        self.sim = self.loop.simulation
        self.applied = np.zeros(self.model.nu)
        self.factors = {k: 1.0 for k in MISMATCH_FACTORS}
        self._effort = None
        self._renderer = None
        self.ticks, self.squares, self.failed = 0, 0.0, False

    # -- scales -----------------------------------------------------------------------------
    def _reference_range(self):
        """Centre, half range and largest |rate| of each row's reference over the episode."""
        entry = self.loop.controller.entry
        low, high = np.full(self.rows, np.inf), np.full(self.rows, -np.inf)
        rate = np.zeros(self.rows)
        times = np.arange(0.0, self.duration + self.policy_period / 2, self.policy_period)
        for rows, reference in entry.references:
            try:
                samples = [reference.evaluate(t) for t in times]
            except (AttributeError, TypeError, ValueError):
                continue                         # captured at the start (hold): no range
            r = np.array([s[0] for s in samples]).reshape(len(times), -1)
            dr = np.array([s[1] for s in samples]).reshape(len(times), -1)
            low[rows], high[rows] = r.min(axis=0), r.max(axis=0)
            rate[rows] = np.abs(dr).max(axis=0)
        known = np.isfinite(low)
        centre = np.where(known, (low + high) / 2, 0.0)
        half = np.where(known, (high - low) / 2, 0.0)
        return centre, half, rate

    def _scales(self, given):
        """Return (centre, scale) of the observation's entries (`observation_scales`)."""
        given = dict(given or {})
        unknown = sorted(set(given) - set(SCALE_KEYS))
        if unknown:
            raise ConfigError(f'observation_scales.{unknown[0]}: unknown block (known: '
                              f'{", ".join(SCALE_KEYS)})')
        counts = dict(self.layout)
        centre_r, half, rate = self._reference_range()
        defaults = {
            'joint_positions': np.full(self.n, math.pi),
            'joint_velocities': self.loop.controller.velocity_limit,
            'modes': 1.0, 'mode_rates': 1.0,
            'reference': np.where(half > 1e-9, half, math.pi),
            'reference_rate': np.where(rate > 1e-9, rate, 1.0),
            'residual': self.tolerance, 'residual_rate': self.tolerance / self.policy_period,
            'time': 1.0}
        centres, scales = [], []
        for name, count in self.layout:
            value = given.get(name, defaults[name])
            try:
                scale = np.broadcast_to(np.asarray(value, dtype=float), (count,)).copy()
            except ValueError:
                raise ConfigError(f'observation_scales.{name}: expected one number or '
                                  f'{count}, got {value!r}') from None
            scale = np.where(np.isfinite(scale), scale, 1.0)
            if np.any(scale <= 0.0):
                raise ConfigError(f'observation_scales.{name}: expected scales > 0, got '
                                  f'{value!r}')
            scales.append(scale)
            centres.append(centre_r if name == 'reference' else np.zeros(count))
        del counts
        return np.concatenate(centres), np.concatenate(scales)

    def observation_scales(self):
        """Return {block: (centre, scale)} of the normalized observation (module doc).

        Defaults: joint positions pi [rad]; joint velocities the controller's velocity
        limits; modes and their rates 1 (a task gives its own: `tasks`); the reference
        centred on its range over the episode and scaled by its half range (pi where it
        has none), its rate by its largest |r'|; the residual by the tolerance, its rate by
        the tolerance per policy period; the time fraction as it is.
        """
        blocks, start = {}, 0
        for name, count in self.layout:
            blocks[name] = (self.centre[start:start + count], self.scale[start:start + count])
            start += count
        return blocks

    # -- the loop ---------------------------------------------------------------------------
    def _tick(self):
        """Run the controller on the plant's state; return its effort (None on a fault)."""
        loop, sim, n = self.loop, self.sim, self.n
        q, v = sim.q, sim.v
        if loop.measured and self.model.nv > n:
            effort = loop.controller.update(sim.time, q[:n], v[:n], q[n:], v[n:],
                                            applied_effort=self.applied)
        else:
            effort = loop.controller.update(sim.time, q[:n], v[:n],
                                            applied_effort=self.applied)
        return effort if loop.controller.status.tracking else None

    def _observation(self):
        sim, n, controller = self.sim, self.n, self.loop.controller
        joints = np.concatenate([sim.q[:n], sim.v[:n]])
        if self.observation_noise > 0.0:
            joints += self.observation_noise * self.np_random.standard_normal(2 * n)
        if self.observe == 'measured':
            modes = [sim.q[n:n + self.modes], sim.v[n:n + self.modes]]
        elif self.observe == 'estimated' and self.following is not None:
            if self.following.simulation is None:
                lagged_q, lagged_v = np.zeros(self.model.nq), np.zeros(self.model.nv)
            else:
                lagged_q, lagged_v = self.following.lagged()
            modes = [lagged_q[n:n + self.modes], lagged_v[n:n + self.modes]]
        elif self.observe == 'estimated':
            modes = [controller.elastic_positions, controller.elastic_velocities]
        else:
            modes = []
        entry, status = controller.entry, controller.status
        parts = [joints, *modes, entry.reference, entry.reference_rate, status.residual,
                 status.residual_rate, [min(self.ticks / self.max_ticks, 1.0)]]
        observation = np.concatenate(parts)
        if self.normalize:
            observation = (observation - self.centre) / self.scale
        observation = np.nan_to_num(observation, nan=0.0, posinf=OBSERVATION_BOUND,
                                    neginf=-OBSERVATION_BOUND)
        return np.clip(observation, -OBSERVATION_BOUND, OBSERVATION_BOUND).astype(np.float32)

    def _rms(self):
        return math.sqrt(self.squares / self.ticks) if self.ticks else 0.0

    def _info(self):
        status = self.loop.controller.status
        rms = self._rms()
        return {'time': self.sim.time, 'residual': np.array(status.residual),
                'residual_rms': rms, 'status': status.message,
                'factors': dict(self.factors),
                'is_success': bool(not self.failed and rms <= self.tolerance)}

    def _plant(self):
        """Draw the plant's factors (``mismatch``) and rebuild its simulation."""
        if self.mismatch is None:
            return self.loop.simulation
        self.factors = {name: float(self.np_random.uniform(*self.uncertainty[name]))
                        for name in MISMATCH_FACTORS}
        self.model = perturbed(self.loop.plant_model, **self.factors)
        parameters = self.plant_parameters
        return Simulation(self.model, parameters['integration_step'],
                          parameters['integrator'],
                          refuse_unstable=parameters['step_check'] == 'refuse')

    def reset(self, *, seed=None, options=None):
        """Start an episode at the parameter file's initial state, joints offset by noise."""
        super().reset(seed=seed)
        if options:
            raise ConfigError(f'reset options: none are taken, got {sorted(options)}')
        self.sim = self._plant()
        parameters = dict(self.plant_parameters)
        positions = np.asarray(parameters.get('initial_positions') or [0.0] * self.n, float)
        if self.initial_noise > 0.0:
            positions = positions + self.initial_noise * self.np_random.standard_normal(self.n)
        parameters['initial_positions'] = positions.tolist()
        q0, v0 = arm_initial_state(self.model, parameters)
        sim = self.sim
        sim.initial_state[:sim.nq], sim.initial_state[sim.nq:] = q0, v0
        sim.reset()
        stabilization, k1, k0, _ = self._gains
        stabilization.k1[:], stabilization.k0[:] = k1, k0
        controller = self.loop.controller
        if isinstance(controller, MismatchGuard):
            # A run-time test that tripped in an earlier episode hands the arm back to
            # the primary law: each episode starts with the controller as built.
            controller.law, controller.degraded = controller.primary, ''
            controller.test = InnovationTest(controller.primary.n_joints,
                                             controller.primary.period)
            if controller.robust is not None:
                controller.robust.enable()
        controller.enable()                    # clears a fault, restarts program time
        self.applied[:] = 0.0
        self.ticks, self.squares, self.failed = 0, 0.0, False
        self._effort = self._tick()
        if self._renderer is not None:
            self._renderer.clear()
        return self._observation(), self._info()

    def _action(self, action):
        """Return the action as a float array of the space's shape; ValueError naming it."""
        try:
            array = np.asarray(action, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f'action: expected {self.action_space.shape[0]} numbers, got '
                             f'{action!r}') from None
        if array.shape != self.action_space.shape:
            raise ValueError(f'action: expected shape {self.action_space.shape}, got '
                             f'{array.shape}')
        if not np.all(np.isfinite(array)):
            raise ValueError(f'action: not finite: {array.tolist()}')
        return np.clip(array, -1.0, 1.0)

    def step(self, action):
        """Apply ``action`` over one policy period; return the gymnasium 5-tuple."""
        action = self._action(action)
        if self.failed:
            raise RuntimeError('step: the episode has ended (a failure); call reset')
        if self.action_kind == 'gains':
            stabilization, k1, k0, position = self._gains
            scale = GAIN_BASE ** action
            stabilization.k1[:] = k1 * scale
            stabilization.k0[:] = np.where(position, k0 * scale ** 2, k0 * scale)
            offset = None
        elif self.action_kind == 'residual':
            offset = action * self.residual_fraction * self.limit
        else:
            offset = action * self.limit
        squares, ticks = 0.0, 0
        failure = None
        for _ in range(self.repeat):
            if self.action_kind == 'effort':
                effort = offset
            elif self._effort is None:
                effort = np.zeros_like(self.applied)
            elif offset is not None:
                effort = self._effort + offset
            else:
                effort = self._effort
            np.clip(effort, -self.limit, self.limit, out=self.applied)
            try:
                self.sim.advance(self.applied, self.period)
            except StepFailedError as error:
                failure = f'plant: {error}'
                break
            self._effort = self._tick()
            self.ticks += 1
            ticks += 1
            if self._effort is None:
                failure = self.loop.controller.status.message
                break
            square = float(np.sum(self.loop.controller.status.residual ** 2))
            squares += square
            if self.ticks >= self.max_ticks:
                break
        self.squares += squares
        truncated = self.ticks >= self.max_ticks
        if failure is not None:
            self.failed = True
            info = dict(self._info(), failure=failure)
            return self._observation(), self.failure_reward, True, False, info
        mean = squares / ticks
        reward = (ticks / self.max_ticks) / (1.0 + mean / self.tolerance ** 2)
        if self._renderer is not None:
            self._renderer.record(self)
        return self._observation(), reward, False, truncated, self._info()

    def render(self):
        """Return an RGB frame of the arm (``render_mode`` ``rgb_array``), else None."""
        if self.render_mode != 'rgb_array':
            return None
        if self._renderer is None:
            from .render import ArmRenderer
            self._renderer = ArmRenderer(self)
        return self._renderer.frame(self)

    def close(self):
        """Release the renderer's figure."""
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
