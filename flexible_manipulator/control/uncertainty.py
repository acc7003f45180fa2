"""Robustness of a program at start-up: the sampled loop over a declared set of plants.

A real arm is not its model: its stiffness, damping, payload, friction and armature are
off by some factor (``mechanics.perturbation``). The controller declares how far
(``uncertainty``: per factor a range [lo, hi] with lo <= 1 <= hi) and is admitted only if
its linearized sampled loop (``loop_checks.LinearLoop``: the plant perturbed, the law on
the control model, the elastic-state observer when the modes are estimated, the input
0 to ``delay_periods`` periods late) is stable on every plant of that set.

The set scaled by s >= 0, U(s), has the ranges [lo^s, hi^s] (s = 0: the model alone,
s = 1: the declared set; on a log scale, so x[0.5, 2] widens to both sides alike). The
plants checked for U(s) are its vertices (2^k for the k factors with lo < hi) and
`DRAWS` interior points drawn uniformly on the log scale (seeded: the same plants on every
run). The verdict is the worst spectral radius among them, with that plant's factors. The
margin is the largest s with every plant of U(s) stable: at least 1 admits the program;
below 1 it is found by bisection (`MARGIN_STEPS`) and reported with the worst case.

The linearization is at rest at the program's start (where the internal-dynamics check
runs): the check is local, as that one is. It does not see nonlinear effects along the
motion (e.g. the payload's centrifugal loads); the mismatch benchmark (bench/) measures
those.
"""

from collections import namedtuple
import itertools
import math

import numpy as np

from ..mechanics.perturbation import FACTORS, perturbed
from .model_cache import kept
from ..config_checks import ConfigError
from . import joint_follower
from .loop_checks import LinearLoop, stable

# The declared set when none is given: what a lab arm's model is typically off by before
# identification (stiffness from handbook moduli and section tolerances, payload from
# task to task, structural damping rarely known to better than a factor 2).
DEFAULT_UNCERTAINTY = {'stiffness': (0.8, 1.2), 'damping': (0.5, 2.0), 'payload': (0.5, 2.0),
                       'friction': (1.0, 1.0), 'armature': (1.0, 1.0)}
# The set of a simulation whose plant is the model's own copy: nothing to check.
EXACT_MODEL = {}
# Random interior plants per scaled set, besides its vertices.
DRAWS = 4
# Bisection steps of the margin in [0, 1] (resolution 2^-MARGIN_STEPS).
MARGIN_STEPS = 6

Verdict = namedtuple('Verdict', 'radius factors')
Verdict.__doc__ = ('Worst spectral radius over the plants of a set and the factors of the '
                   'plant where it occurs (a dict, factor -> value).')


def parse_uncertainty(value, field='uncertainty'):
    """Return the set as {factor: (lo, hi)} (module doc); ConfigError naming the field.

    ``value``: a mapping factor -> [lo, hi] (factors not given: [1, 1]), or None for
    `DEFAULT_UNCERTAINTY`.
    """
    if value is None:
        return dict(DEFAULT_UNCERTAINTY)
    if not isinstance(value, dict):
        raise ConfigError(f'{field}: expected a mapping of factor -> [lo, hi] (factors: '
                          f'{", ".join(FACTORS)}), got {value!r}')
    unknown = sorted(set(map(str, value)) - set(FACTORS))
    if unknown:
        raise ConfigError(f'{field}.{unknown[0]}: unknown factor (known: '
                          f'{", ".join(FACTORS)})')
    ranges = {}
    for factor in FACTORS:
        pair = value.get(factor, (1.0, 1.0))
        try:
            lo, hi = (float(x) for x in pair)
        except (TypeError, ValueError):
            raise ConfigError(f'{field}.{factor}: expected [lo, hi], got {pair!r}') from None
        if not (math.isfinite(lo) and math.isfinite(hi) and 0.0 < lo <= 1.0 <= hi):
            raise ConfigError(f'{field}.{factor}: expected 0 < lo <= 1 <= hi (factors of '
                              f'the model\'s value), got [{lo:g}, {hi:g}]')
        ranges[factor] = (lo, hi)
    return ranges


def describe(ranges):
    """Describe the set in one line, e.g. 'stiffness x[0.8, 1.2], payload x[0.5, 2]'."""
    parts = [f'{factor} x[{lo:.3g}, {hi:.3g}]' for factor, (lo, hi) in ranges.items()
             if lo < hi]
    return ', '.join(parts) if parts else 'none (the plant is the model)'


def plants(ranges, scale):
    """Factor dicts of the plants checked for U(``scale``): vertices, then `DRAWS` draws."""
    spread = {f: (lo ** scale, hi ** scale) for f, (lo, hi) in ranges.items() if lo < hi}
    if not spread:
        return []
    names = list(spread)
    result = [dict(zip(names, corner)) for corner in itertools.product(
        *(spread[f] for f in names))]
    rng = np.random.default_rng(7)
    for _ in range(DRAWS):
        result.append({f: float(np.exp(rng.uniform(math.log(spread[f][0]),
                                                   math.log(spread[f][1]))))
                       for f in names})
    return result


def plant(model, factors):
    """Return ``model`` perturbed by ``factors`` ({factor: scale}), built once per model.

    Every program and law of a controller checks the same plants (`model_cache`).
    """
    return kept(model, ('perturbed', tuple(sorted(factors.items()))),
                lambda: perturbed(model, **factors))


class RobustnessCheck:
    """The sampled loop of one program on the plants of a set (module doc)."""

    def __init__(self, model, control, joints, period, realization, C, kp, kd, delay,
                 observer):
        """Hold the law (control model, rows C, gains, delay) to check at ``joints``.

        ``observer``: the elastic-state observer's gain (`observer_design.ObserverGain`,
        designed on ``model``) when the law's modes are estimated, else None.
        """
        self.model, self.control, self.joints = model, control, joints
        self.period, self.realization = period, realization
        self.C, self.kp, self.kd, self.delay = C, kp, kd, delay
        self.observer = observer
        self._cache = {}               # (law key, plant) -> radius
        self._loops = {}               # plant -> its LinearLoop under the law
        self._law = None               # the loop on the model; plants replace its plant
        self._unstable = 0             # the place in `plants` of the one found unstable last

    def radius(self, factors):
        """Spectral radius of the loop on the plant with ``factors`` (inf: no rest)."""
        key = (self._law_key(), tuple(sorted(factors.items())))
        if key not in self._cache:
            try:
                self._cache[key] = self._loop_radius(self._plant_loop(factors))
            except (ValueError, np.linalg.LinAlgError):
                self._cache[key] = math.inf
        return self._cache[key]

    def _plant_loop(self, factors):
        """Return the law's `LinearLoop` on the plant with ``factors``, linearized once."""
        key = tuple(sorted(factors.items()))
        if key not in self._loops:
            if self._law is None:
                self._law = LinearLoop(self.model, self.control, self.joints, self.period,
                                       self.realization)
            self._loops[key] = (self._law if not factors else
                                self._law.for_plant(plant(self.model, factors)))
        return self._loops[key]

    def _law_key(self):
        """Return what the law's radius depends on besides the plant: its gains."""
        return (np.asarray(self.kp).tobytes(), np.asarray(self.kd).tobytes())

    def largest_gain(self, ranges, factor, steps):
        """Return the largest gain scale stable on every plant of ``ranges``, or None.

        Scales s = factor^k, k = 1..``steps``, of the law's gains (alpha s: K_p s^2,
        K_d s); the gains are restored after the search.
        """
        kp, kd = self.kp, self.kd
        try:
            for k in range(1, steps + 1):
                scale = factor ** k
                self.kp, self.kd = kp * scale * scale, kd * scale
                if self.stable_on(ranges):
                    return scale
            return None
        finally:
            self.kp, self.kd = kp, kd

    def _loop_radius(self, loop):
        """Return the loop's spectral radius under the law (the rows' feedback)."""
        return loop.radius(self.C, self.kp, self.kd, self.delay, self.observer)

    def verdict(self, ranges, scale=1.0):
        """`Verdict` over the plants of U(``scale``) (the model's own loop if none)."""
        worst = Verdict(-math.inf, {})
        for factors in plants(ranges, scale):
            radius = self.radius(factors)
            if radius > worst.radius:
                worst = Verdict(radius, factors)
        return worst

    def stable_on(self, ranges, scale=1.0):
        """Tell whether the loop is stable on every plant of U(``scale``).

        `verdict`'s answer to yes or no, which is all a search asks: it stops at the first
        unstable plant, the plant found unstable last (its place in `plants`: the same
        vertex or draw at every scale) checked first.
        """
        checked = plants(ranges, scale)
        order = list(range(len(checked)))
        if self._unstable < len(checked):
            order.insert(0, order.pop(self._unstable))
        for index in order:
            if not stable(self.radius(checked[index])):
                self._unstable = index
                return False
        return True

    def margin(self, ranges):
        """(margin, verdict at U(1)): margin >= 1 if every plant of the set is stable."""
        at_one = self.verdict(ranges, 1.0)
        if stable(at_one.radius):
            return 1.0, at_one
        lo, hi = 0.0, 1.0
        for _ in range(MARGIN_STEPS):
            middle = 0.5 * (lo + hi)
            if self.stable_on(ranges, middle):
                lo = middle
            else:
                hi = middle
        return lo, at_one


class FollowerCheck(RobustnessCheck):
    """Model following's joint law (`joint_follower`) on the plants of a set, at poses.

    The figure is `loop_checks.LinearLoop.dynamic_radius` with the follower's damping
    margin: at most 1 when every pole of the loop (plant, the law's states, input delay)
    is damped by at least `joint_follower.DAMPING_MARGIN`, the largest over the poses
    checked (the program's start and ``along``: poses the reference passes through). The
    follower's gains are the same at every pose; the plant's inertia and gravity, the
    payload's regressor and the arm's modes are not. ``follower`` is the law checked,
    changed by the search (`admission.following_check`): ``('computed_torque', K_p,
    K_d)``, ``('filtered', w)`` or ``('filtered', w, centre, gain)``; the plants'
    linearizations are kept across its changes.
    """

    def __init__(self, model, twin, joints, period, delay, follower, payload_range=(1.0, 1.0),
                 along=()):
        """Hold the follower on the rigid twin ``twin`` at ``joints`` (and ``along``).

        ``payload_range``: the payload factors the filtered law estimates within (its
        regressor at each pose enters the check: `joint_follower.state_space`).
        """
        super().__init__(model, twin, joints, period, 'ideal', None, None, None, delay, None)
        self.follower = follower
        self.poses = [np.asarray(q, dtype=float) for q in [joints, *along]]
        self._payloads = [joint_follower.payload_gravity(twin, q, payload_range)
                          for q in self.poses]
        self._pose_laws = [None] * len(self.poses)   # each pose's loop on the model
        self._pose_loops = {}          # (pose, plant) -> LinearLoop
        self.band = None               # (low, high) [rad/s]: the poles `mode_damping` reads
        self._mode_damping = {}        # (follower, plant) -> least damping ratio in the band

    def _law_key(self):
        """Return the follower checked: the radius depends on it."""
        return self.follower

    def radius(self, factors):
        """Return the largest margin radius over the poses on the plant with ``factors``."""
        key = (self._law_key(), tuple(sorted(factors.items())))
        if key not in self._cache:
            figure, least = 0.0, math.inf
            try:
                for pose in range(len(self.poses)):
                    here, damping = self._pose_radius(self._loop_at(pose, factors),
                                                      self._payloads[pose])
                    figure, least = max(figure, here), min(least, damping)
            except (ValueError, np.linalg.LinAlgError):
                figure, least = math.inf, -math.inf
            self._cache[key], self._mode_damping[key] = figure, least
        return self._cache[key]

    def _loop_at(self, pose, factors):
        """Return the `LinearLoop` at pose number ``pose`` on the plant with ``factors``."""
        key = (pose, tuple(sorted(factors.items())))
        if key not in self._pose_loops:
            if self._pose_laws[pose] is None:
                self._pose_laws[pose] = LinearLoop(self.model, self.control, self.poses[pose],
                                                   self.period, self.realization)
            law = self._pose_laws[pose]
            self._pose_loops[key] = (law if not factors else
                                     law.for_plant(plant(self.model, factors)))
        return self._pose_loops[key]

    def _pose_radius(self, loop, payload):
        """Return (margin radius, least damping ratio of the poles in ``band``) on ``loop``."""
        kind, *gains = self.follower
        n = loop.n
        if kind == 'computed_torque':
            kp, kd = gains
            system = loop.joint_feedback(np.eye(n) * kp, np.eye(n) * kd)
        else:
            system = joint_follower.state_space(loop.Mc, loop.Kc, self.period, gains[0],
                                                payload,
                                                joint_follower.damper_of(self.follower))
        figure, least = 0.0, math.inf
        for poles in loop.dynamic_poles(system, self.delay):
            s = np.log(poles.astype(complex)) / self.period
            figure = max(figure, float(np.max(np.abs(poles) * np.exp(
                joint_follower.DAMPING_MARGIN * np.abs(s) * self.period))))
            if self.band is not None:
                near = (np.abs(s) >= self.band[0]) & (np.abs(s) <= self.band[1])
                if near.any():
                    least = min(least, float(np.min(-s.real[near] / np.abs(s[near]))))
        return figure, least

    def mode_damping(self, ranges):
        """Least damping ratio over the plants of ``ranges`` of the poles within ``band``.

        ``band`` (rad/s, set by the caller): where the arm's first mode with its joints
        free lies on every plant; inf when no pole is there (or no band).
        """
        least = math.inf
        for factors in [{}] + plants(ranges, 1.0):
            self.radius(factors)
            least = min(least, self._mode_damping[(self._law_key(),
                                                   tuple(sorted(factors.items())))])
        return least


def factors_text(factors):
    """Write a plant's factors as 'stiffness x0.8, payload x2'."""
    return ', '.join(f'{f} x{value:.3g}' for f, value in factors.items())
