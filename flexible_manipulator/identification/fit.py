"""The fit: recorded efforts replayed through the model, parameters and window starts adjusted.

The recording is cut into windows (`measurements.windows`). In each, the model's own
`Simulation` starts from the window's initial state x_w = (q, v) and replays the recorded
efforts (each held over the interval that ends at its state, as the plant and a driver
hold it; an interval off the step grid, a real driver's jitter or a lost state, in equal
steps no longer than the replay step, `Simulation.advance_over`); its states at the
recorded stamps are compared with the measured signals. The unknowns are the parameters' factors
(x = 1 at the model file's values, `parameters`; a joint's Coulomb friction is its value
itself, from the file's, often 0) and every window's whole initial state:
started from the measured joints and, when recorded, the measured elastic coordinates
(else their static rest at the measured joints, zero rates), and estimated with the
parameters, because a measured start carries the sensors' noise, which a window would
carry along as a drift. `scipy.optimize.least_squares` (trust region, bounds x >= 0)
minimizes sum ((y - y_sim) / sigma_s)^2 over the samples and signals s, with the
derivatives by forward differences (a parameter: the model rebuilt; a start coordinate:
perturbed in every window at once, each window's rows taking their own column).

Noise: sigma_s starts at each signal's white-noise level from its second differences; the
fit is then repeated once with sigma_s the RMS of its residual (each signal weighted by
its own noise, whatever its unit).

Statistics at the optimum, the start coordinates projected out window by window (S: the
parameters' columns orthogonal to their window's start columns, the Schur complement):
covariance s^2 (S^T S)^-1 with s^2 the weighted residual's variance on N - p - n_starts
degrees of freedom; the interval at ``level`` from Student's t. Whiteness of each signal's
residual: Ljung-Box Q = N (N + 2) sum_{k <= h} rho_k^2 / (N - k) over h = `LAGS` lags
(autocorrelations pooled over the windows), against chi^2 with h degrees of freedom.

Refusal (`Unidentifiable`): the scaled sensitivity matrix A = S diag(x) (the signals'
change, in noise standard deviations, per 100 % change of each parameter; for a friction,
per change of its value or of its unit if larger, `Parameter.size`) at the start
value and at the optimum. A parameter whose column norm is below `EFFECT_FLOOR` (a 100 %
change moves the signals by less than one noise standard deviation in all) has no effect
to fit; with its columns scaled to unit norm, a condition number above `CONDITION_LIMIT`
(a combination of the parameters moves the signals 10^4 times less than each alone) means
the data fix only that combination: the parameters of the weakest direction are named
and no number is given. So is a parameter the fit drove to its bound 0 (a factor below
`BOUND`, a friction below `BOUND` times its unit): no interval holds there, and a model
that needs it is wrong elsewhere.
"""

from dataclasses import dataclass, field
import os
import warnings

import numpy as np
from scipy import optimize, stats

from .measurements import IdentificationError
from . import parameters as parameter_paths
from ..mechanics.equilibrium import static_equilibrium
from ..mechanics.simulation import Simulation, StepFailedError
from ..config_checks import ConfigError
from ..model_config import ModelWarning

LEVEL = 0.95                # confidence level of the intervals
CONDITION_LIMIT = 1e4       # largest condition number of the column-scaled sensitivities
EFFECT_FLOOR = 1.0          # least column norm [noise standard deviations per 100 %]
LAGS = 20                   # Ljung-Box lags
WHITE_LEVEL = 0.05          # family-wise: white when every p >= WHITE_LEVEL / signals
FD_STEP = 1e-6              # forward-difference step, relative (at least absolute 1e-6)
NUISANCE_RANK = 1e-8        # relative singular value below which a start column is void
FAILED = 1e6                # weighted residual of a trial point the model cannot run
BOUND = 1e-6                # a factor below this ran to the bound 0
EVALUATIONS = 40            # residual evaluations per solve, at most
FEASIBLE = 1e-10            # least factor at the start (least_squares' strict feasibility)


class Unidentifiable(IdentificationError):
    """The recording cannot determine the parameter set (module doc)."""


class ReplayFailed(RuntimeError):
    """A trial point that the model refuses or cannot simulate."""


def driver_efforts(model, data):
    """Return the recorded efforts plus the gravity a driver added, K x nu [N m].

    A driver that compensates gravity itself (the controller's ``driver_compensation:
    [gravity]``, the plant's ``driver_gravity_compensation``) applies over each period the
    command it reports plus the rigid twin's gravity torque B^+ h_twin(q, 0) at the joints
    of the state that starts the period: row k gets it at the recorded joints of state
    k - 1 (row 0 at state 0's), on ``model`` (the parameters under trial: a fitted mass
    moves the gravity too).
    """
    n = model.n_joints
    columns = [data.measured(i) for i in range(n)]
    positions = data.values[:, columns]
    before = np.vstack([positions[:1], positions[:-1]])
    twin = model.rigid_twin() if model.nv > model.nu else model
    twin_data, pinv = twin.create_data(), np.linalg.pinv(twin.input_matrix())
    still = np.zeros(n)
    gravity = np.array([pinv @ twin.bias_forces(twin_data, q, still) for q in before])
    return data.efforts + gravity


class Replay:
    """The recorded efforts replayed through the model, window by window (module doc)."""

    def __init__(self, spec, source, fitted, data, windows, integrator, step,
                 driver_gravity=False):
        """Prepare the replay of ``data`` (`Measurements`) in ``windows``.

        ``driver_gravity``: the recorded efforts are what a driver that adds gravity itself
        was commanded (`driver_efforts`); the replay adds it back.
        """
        self.spec, self.source, self.fitted = spec, source, fitted
        self.driver_gravity = driver_gravity
        self._efforts = {}
        self.directory = os.path.dirname(os.path.abspath(source))     # of a relative urdf:
        self.data, self.windows = data, windows
        self.integrator, self.step = integrator, step
        self.mask = np.isfinite(data.values)
        self.row_sample, self.row_signal = np.nonzero(self.mask)
        self.measured = data.values[self.mask]
        starts = np.searchsorted(self.row_sample, [first for first, _ in windows])
        self.window_rows = [slice(a, b) for a, b in zip(starts, list(starts[1:]) +
                                                        [self.row_sample.size])]
        self.state_index = np.array([signal.state for signal in data.signals])
        self.durations = np.diff(data.times)
        self.simulations = 0
        self._cache = {}
        longest = max(stop - first for first, stop in windows)
        self._states = np.empty((longest, 0))             # sized by the first simulation

    def simulation(self, factors):
        """Return the `Simulation` of the model with the parameters at ``factors`` (kept)."""
        key = tuple(np.asarray(factors, dtype=float).tolist())
        if key not in self._cache:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter('ignore', ModelWarning)
                    model = parameter_paths.build(self.spec, self.fitted, factors, self.source,
                                                  self.directory)
                sim = Simulation(model, self.step, self.integrator)
            except (ConfigError, ValueError) as error:
                raise ReplayFailed(str(error)) from None
            if self._states.shape[1] != sim.state.size:
                self._states = np.empty((self._states.shape[0], sim.state.size))
            if len(self._cache) >= 8:
                dropped = next(iter(self._cache))
                self._cache.pop(dropped)
                self._efforts.pop(dropped, None)
            self._cache[key] = sim
            if self.driver_gravity:
                self._efforts[key] = driver_efforts(model, self.data)
        return self._cache[key]

    def efforts(self, factors):
        """Return the efforts the model's joints got: recorded, plus a driver's gravity."""
        key = tuple(np.asarray(factors, dtype=float).tolist())
        return self._efforts.get(key, self.data.efforts)

    def predict(self, factors, starts):
        """Return the simulated signals (K x S), parameters at ``factors``, from ``starts``."""
        sim = self.simulation(factors)
        predicted = np.empty_like(self.data.values)
        efforts, durations, index = self.efforts(factors), self.durations, self.state_index
        self.simulations += 1
        try:
            for (first, stop), start in zip(self.windows, starts):
                sim.initial_state[:] = start
                sim.reset()
                predicted[first] = sim.state[index]
                states = self._states[:stop - first - 1]
                sim.advance_over(efforts[first + 1:stop], durations[first:stop - 1], states)
                predicted[first + 1:stop] = states[:, index]
        except (StepFailedError, ValueError) as error:
            raise ReplayFailed(str(error)) from None
        return predicted

    def rows(self, predicted):
        """Return the measured rows of a K x S prediction, in the residual's order."""
        return predicted[self.mask]


@dataclass
class Problem:
    """The unknowns z = (factors, window starts) and the derivatives of the prediction."""

    replay: Replay
    state_size: int
    cache: dict = field(default_factory=dict)

    @property
    def count(self):
        """Number of fitted parameters."""
        return len(self.replay.fitted)

    def split(self, z):
        """(factors, starts W x n) of z."""
        p = self.count
        return z[:p], z[p:].reshape(len(self.replay.windows), self.state_size)

    def prediction(self, z):
        """Measured rows of the prediction at z (cached)."""
        key = z.tobytes()
        if key not in self.cache:
            if len(self.cache) > 4:
                self.cache.clear()
            factors, starts = self.split(z)
            self.cache[key] = self.replay.rows(self.replay.predict(factors, starts))
        return self.cache[key]

    def derivatives(self, z):
        """Return d prediction / dz by forward differences (module doc), rows x len(z)."""
        key = ('derivatives', z.tobytes())
        if key not in self.cache:
            self.cache[key] = self._derivatives(z)
        return self.cache[key]

    def _derivatives(self, z):
        replay, p, n = self.replay, self.count, self.state_size
        base = self.prediction(z)
        factors, starts = self.split(z)
        jacobian = np.zeros((base.size, z.size))
        for j in range(p):
            step = FD_STEP * max(1.0, abs(factors[j]))
            moved = factors.copy()
            moved[j] += step
            try:
                jacobian[:, j] = (replay.rows(replay.predict(moved, starts)) - base) / step
            except ReplayFailed as error:
                raise IdentificationError(f'{replay.fitted[j].path}: the model cannot run '
                                          f'with it changed by {step:.1e} of its value '
                                          f'({error})') from None
        for c in range(n):
            step = FD_STEP * max(1.0, np.abs(starts[:, c]).max())
            moved = starts.copy()
            moved[:, c] += step
            change = (replay.rows(replay.predict(factors, moved)) - base) / step
            for w, rows in enumerate(replay.window_rows):
                jacobian[rows, p + w * n + c] = change[rows]
        return jacobian


def noise_level(values):
    """White-noise standard deviation of each column from its second differences.

    For y = s + e with s smooth at the sampling rate and e white of variance sigma^2, the
    second difference has variance 6 sigma^2 (the signal's part is a start value only).
    """
    second = values[2:] - 2.0 * values[1:-1] + values[:-2]
    sigma = np.sqrt(np.nanmean(second ** 2, axis=0) / 6.0)
    return floor(sigma, values)


def floor(sigma, values):
    """Keep every sigma above 1e-9 of its signal's size (noise-free data)."""
    size = np.sqrt(np.nanmean(values ** 2, axis=0))
    return np.maximum(np.nan_to_num(sigma), 1e-9 * np.maximum(size, 1e-9))


def project_starts(jacobian, problem):
    """Parameters' columns orthogonal to each window's start columns; the starts' rank."""
    p, n = problem.count, problem.state_size
    sensitivity = jacobian[:, :p].copy()
    rank = 0
    for w, rows in enumerate(problem.replay.window_rows):
        block = jacobian[rows, p + w * n:p + (w + 1) * n]
        u, s, _ = np.linalg.svd(block, full_matrices=False)
        keep = int(np.sum(s > NUISANCE_RANK * s[0])) if s.size and s[0] > 0 else 0
        basis = u[:, :keep]
        sensitivity[rows] -= basis @ (basis.T @ sensitivity[rows])
        rank += keep
    return sensitivity, rank


@dataclass
class Conditioning:
    """Rank and condition number of the column-scaled sensitivities (module doc)."""

    effects: np.ndarray        # column norms [noise standard deviations per 100 %]
    singular: np.ndarray       # singular values of the unit-norm columns
    directions: np.ndarray     # their right singular vectors (columns)

    @property
    def condition(self):
        """Largest over smallest singular value (inf when a column has no effect)."""
        if np.any(self.effects == 0.0) or self.singular[-1] == 0.0:
            return np.inf
        return float(self.singular[0] / self.singular[-1])

    @property
    def rank(self):
        """Singular values within `CONDITION_LIMIT` of the largest, of columns with effect."""
        if not self.singular.size or self.singular[0] == 0.0:
            return 0
        return int(np.sum(self.singular >= self.singular[0] / CONDITION_LIMIT))

    def problem(self, names):
        """Why the set cannot be determined, or '' (module doc)."""
        weak = [name for name, effect in zip(names, self.effects) if effect < EFFECT_FLOOR]
        if weak:
            effects = ', '.join(f'{effect:.2g}' for effect in self.effects
                                if effect < EFFECT_FLOOR)
            return (f'{", ".join(weak)}: no measurable effect on the recorded signals (a 100 % '
                    f'change moves them by {effects} noise standard deviations in all; at '
                    f'least {EFFECT_FLOOR:g} needed)')
        if self.condition <= CONDITION_LIMIT:
            return ''
        weakest = self.directions[:, -1]
        involved = [i for i in np.argsort(-np.abs(weakest)) if abs(weakest[i]) >= 0.1]
        combination = ' '.join(f'{weakest[i]:+.2f} {names[i]}' for i in involved)
        return (f'{", ".join(names[i] for i in sorted(involved))}: their effects on the '
                f'recorded signals cannot be told apart (scaled sensitivity rank '
                f'{self.rank} of {len(names)}, condition number {self.condition:.2g} > '
                f'{CONDITION_LIMIT:.0e}; weakest combination of relative changes '
                f'{combination})')


def conditioning(sensitivity, sizes):
    """`Conditioning` of the projected sensitivities scaled by ``sizes`` (module doc).

    ``sizes``: the change of each unknown its effect is measured for (`Parameter.size`).
    """
    scaled = sensitivity * np.asarray(sizes)[None, :]
    effects = np.linalg.norm(scaled, axis=0)
    unit = scaled / np.where(effects > 0.0, effects, 1.0)[None, :]
    _, singular, vt = np.linalg.svd(unit, full_matrices=False)
    return Conditioning(effects, singular, vt.T)


def ljung_box(residual, window_rows_of_signal, lags=LAGS):
    """(Q, p-value, lags) of one signal's residual pieces (one per window), pooled."""
    pieces = [piece - np.mean(residual) for piece in window_rows_of_signal]
    total = sum(piece.size for piece in pieces)
    lags = max(1, min(lags, min(piece.size for piece in pieces) // 4))
    variance = sum(float(piece @ piece) for piece in pieces)
    if variance == 0.0:
        return 0.0, 1.0, lags
    rho = np.array([sum(float(piece[:-k] @ piece[k:]) for piece in pieces) / variance
                    for k in range(1, lags + 1)])
    q = total * (total + 2.0) * float(np.sum(rho ** 2 / (total - np.arange(1, lags + 1))))
    return q, float(stats.chi2.sf(q, lags)), lags


@dataclass
class Outcome:
    """What `fit` found (see `identification.Result` for the reading)."""

    factors: np.ndarray
    covariance: np.ndarray       # of the factors
    dof: int
    level: float
    start: Conditioning
    optimum: Conditioning
    sigma: np.ndarray            # per signal: the noise the final weights assume
    residual: np.ndarray         # K x S unweighted residual at the optimum (NaN: unmeasured)
    before: np.ndarray           # K x S simulated at the start (file values, measured starts)
    after: np.ndarray            # K x S simulated at the optimum
    starts: np.ndarray           # W x n estimated window starts
    whiteness: list              # per signal (Q, p, lags)
    simulations: int
    iterations: int
    converged: bool              # False: the last solve stopped at its evaluation limit


def start_states(replay, n):
    """Every window's start: the measured state where measured, else at rest (module doc)."""
    data = replay.data
    sim = replay.simulation(initial(replay.fitted))
    model = sim.model
    starts = np.zeros((len(replay.windows), n))
    for w, (first, _) in enumerate(replay.windows):
        state = np.concatenate([model.neutral_configuration(), np.zeros(model.nv)])
        for i, signal in enumerate(data.signals):
            if np.isfinite(data.values[first, i]):
                state[signal.state] = data.values[first, i]
        joints = model.n_joints
        velocity = [data.measured(model.nq + j) for j in range(joints)]
        if any(index is None for index in velocity):        # velocities not recorded
            position = [data.measured(j) for j in range(joints)]
            span = slice(first, min(first + 2, data.times.size))
            change = data.values[span][:, position]
            state[model.nq:model.nq + joints] = (change[-1] - change[0]) / (
                data.times[span][-1] - data.times[span][0])
        if model.n_modes and data.measured(joints) is None:
            try:
                state[:model.nq] = static_equilibrium(model, state[:model.nq])
            except ValueError:
                pass                                         # straight: the fit moves it
        starts[w] = state
    return starts


def solve(problem, z, sigma, tolerance):
    """One weighted least-squares solve from z; returns scipy's result."""
    weights = 1.0 / sigma[problem.replay.row_signal]
    measured = problem.replay.measured

    def residual(x):
        try:
            return (measured - problem.prediction(x)) * weights
        except ReplayFailed:
            return np.full(measured.size, FAILED)

    def jacobian(x):
        return -problem.derivatives(x) * weights[:, None]

    p = problem.count
    lower = np.full(z.size, -np.inf)
    lower[:p] = 0.0
    return optimize.least_squares(residual, z, jac=jacobian, bounds=(lower, np.inf),
                                  method='trf', x_scale='jac', tr_solver='exact',
                                  ftol=tolerance, xtol=tolerance, gtol=1e-8, max_nfev=EVALUATIONS)


def fit(replay, level=LEVEL):
    """Fit the replay's parameters and window starts (module doc); return an `Outcome`.

    Raises `Unidentifiable` at the start value or at the optimum, `IdentificationError`
    when the model cannot run at the start value.
    """
    factors0 = initial(replay.fitted)
    try:
        sim = replay.simulation(factors0)
        n = sim.model.nq + sim.model.nv
        starts0 = start_states(replay, n)
        before = replay.predict(factors0, starts0)
    except ReplayFailed as error:
        raise IdentificationError(f'{replay.source}: the model cannot replay the recording '
                                  f'with {replay.integrator} at {replay.step:g} s: {error}'
                                  ) from None
    problem = Problem(replay, n)
    names = [parameter.path for parameter in replay.fitted]
    # Inside the bounds, where least_squares moves a factor at its bound 0 (a friction from
    # 0): the derivatives taken here then serve its first iteration too.
    z = np.concatenate([np.maximum(factors0, FEASIBLE), starts0.ravel()])
    sigma = noise_level(replay.data.values)
    weights = 1.0 / sigma[replay.row_signal]
    jacobian = -problem.derivatives(z) * weights[:, None]
    start = conditioning(project_starts(jacobian, problem)[0], sizes(replay.fitted, factors0))
    reason = start.problem(names)
    if reason:
        raise Unidentifiable(f'refused at the start value: {reason}')
    iterations = 0
    for tolerance in (1e-4, 1e-8):       # weights from the signal, then from the residual
        result = solve(problem, z, sigma, tolerance)
        iterations += result.nfev
        converged = result.status > 0
        z = result.x
        error = replay.data.values - _full(replay, problem.prediction(z))
        sigma = floor(np.sqrt(np.nanmean(error ** 2, axis=0)), replay.data.values)
    weights = 1.0 / sigma[replay.row_signal]
    weighted = (replay.measured - problem.prediction(z)) * weights
    jacobian = -problem.derivatives(z) * weights[:, None]
    sensitivity, start_rank = project_starts(jacobian, problem)
    factors = z[:problem.count]
    bound = [parameter.path for parameter, factor in zip(replay.fitted, factors)
             if factor < BOUND * parameter.bound()]
    if bound:
        raise Unidentifiable(f'refused at the optimum: {", ".join(bound)}: the fit ran to 0, '
                             'the bound of a physical parameter (the recording asks for a '
                             'value of the wrong sign: a number the fit keeps, or the '
                             'model\'s structure, is wrong)')
    optimum = conditioning(sensitivity, sizes(replay.fitted, factors))
    reason = optimum.problem(names)
    if reason:
        raise Unidentifiable(f'refused at the optimum: {reason}')
    dof = weighted.size - problem.count - start_rank
    variance = float(weighted @ weighted) / dof
    covariance = variance * np.linalg.inv(sensitivity.T @ sensitivity)
    whiteness = []
    for s in range(len(replay.data.signals)):
        pieces = [error[first:stop, s] for first, stop in replay.windows]
        pieces = [piece[np.isfinite(piece)] for piece in pieces]
        pieces = [piece for piece in pieces if piece.size > 4]
        whiteness.append(ljung_box(np.concatenate(pieces), pieces) if pieces
                         else (np.nan, np.nan, 0))
    return Outcome(factors, covariance, dof, level, start, optimum, sigma, error, before,
                   _full(replay, problem.prediction(z)), problem.split(z)[1], whiteness,
                   replay.simulations, iterations, converged)


def initial(fitted):
    """Return the unknowns at the model file's values (`Parameter.initial`)."""
    return np.array([parameter.initial for parameter in fitted], dtype=float)


def sizes(fitted, factors):
    """Return the change of each unknown its effect is measured for (`Parameter.size`)."""
    return np.array([parameter.size(factor) for parameter, factor in zip(fitted, factors)])


def _full(replay, rows):
    """K x S array of the measured rows (NaN elsewhere)."""
    full = np.full(replay.data.values.shape, np.nan)
    full[replay.mask] = rows
    return full
