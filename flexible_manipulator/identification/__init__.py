"""Identification of a model's elastic (and other) parameters from a recording (ROS-free).

``identify`` (``ros2 run flexible_manipulator identify``, `cli`) replays the applied
efforts of a recorded run through the model's own `Simulation` and fits the chosen
parameters of the model file (`parameters`: paths such as ``forearm.beam.damping_ratio``)
to the recorded joint states and, when recorded, modal states (`measurements`), with the
initial state of each window of the recording estimated alongside (`fit`). The result
gives the estimates with their confidence intervals, each signal's residual RMS and
whiteness, and writes the model file with the estimates (`Result.rewrite`); a parameter
set the recording cannot determine is refused (`fit.Unidentifiable`) naming the
parameters. doc/hil.md ("Identifying your arm") says how to read it.
"""

from dataclasses import dataclass
import os

import numpy as np
from scipy import stats

from . import fit as fitting, measurements, parameters as parameter_paths
from .measurements import IdentificationError
from .fit import Unidentifiable
from ..mechanics.simulation import Simulation
from ..config_checks import ConfigError
from ..config_files import load_yaml, resolve_model_path

__all__ = ['identify', 'IdentificationError', 'Unidentifiable', 'Result']

WINDOW = 1.0               # default window length [s]


@dataclass
class Estimate:
    """One parameter's estimate: its factor on the file's value, the value, the interval.

    For a Coulomb friction (``additive``, `parameters`) the "factor" is the value itself.
    """

    path: str
    start: object           # the file's value (a number or a list)
    factor: float
    std: float              # standard error of the factor
    interval: tuple         # of the factor at the level
    additive: bool = False

    @property
    def value(self):
        """Estimated value: a number, or the list's entries."""
        return self.factor if self.additive else self.factor * self.start

    @property
    def value_interval(self):
        """The interval of the value (of the first entry for a list)."""
        scale = 1.0 if self.additive else float(np.atleast_1d(self.start)[0])
        return tuple(sorted(bound * scale for bound in self.interval))


@dataclass
class Result:
    """What `identify` found; `report` prints it, `rewrite` writes the model file."""

    recording: str
    model_path: str
    fitted: list                # `parameters.Parameter`
    data: measurements.Measurements
    windows: list
    window: float
    integrator: str
    step: float
    outcome: fitting.Outcome

    @property
    def estimates(self):
        """One `Estimate` per fitted parameter, in the order given."""
        level, outcome = self.outcome.level, self.outcome
        quantile = stats.t.ppf(0.5 + level / 2.0, outcome.dof)
        found = []
        for i, parameter in enumerate(self.fitted):
            std = float(np.sqrt(outcome.covariance[i, i]))
            factor = float(outcome.factors[i])
            found.append(Estimate(parameter.path, parameter.start, factor, std,
                                  (factor - quantile * std, factor + quantile * std),
                                  parameter.additive))
        return found

    def rms(self):
        """RMS of each signal's residual at the optimum (its unit)."""
        return np.sqrt(np.nanmean(self.outcome.residual ** 2, axis=0))

    def report(self):
        """Return the text the command prints (doc/hil.md explains each part)."""
        data, outcome = self.data, self.outcome
        level = 100 * outcome.level
        span = data.times[-1] - data.times[0]
        width = max(34, *(len(parameter.path) for parameter in self.fitted))
        white = fitting.WHITE_LEVEL / len(data.signals)
        unconverged = ('' if outcome.converged else f'; NOT CONVERGED within '
                       f'{fitting.EVALUATIONS} evaluations: start closer, or shorten --window')
        lines = [
            f'{self.recording}: {data.times.size} states over {span:.3f} s, '
            f'{np.min(np.diff(data.times)):.6g} to {np.max(np.diff(data.times)):.6g} s apart, '
            f'in {len(self.windows)} windows of {self.window:g} s; signals from '
            f'{", ".join(data.topics)}; efforts from the effort field of {data.topics[0]}',
            f'model {self.model_path}, replayed with {self.integrator} at {self.step:g} s; '
            'each window\'s initial state estimated with the parameters',
            f'scaled sensitivity (window starts projected out): condition number '
            f'{outcome.start.condition:.3g} at the start, {outcome.optimum.condition:.3g} at '
            f'the optimum (refused above {fitting.CONDITION_LIMIT:.0e}); '
            f'{outcome.simulations} replays{unconverged}',
            '',
            f'{"parameter":<{width}} {"model file":>11} {"estimate":>11} '
            f'{f"{level:g} % interval":>25} {"rel. std. error":>15}']
        for estimate in self.estimates:
            low, high = estimate.value_interval
            start = np.atleast_1d(estimate.start)
            lines.append(f'{estimate.path:<{width}} {start[0]:>11.6g} '
                         f'{np.atleast_1d(estimate.value)[0]:>11.6g} '
                         f'[{low:>11.6g}, {high:>11.6g}] '
                         f'{100 * estimate.std / estimate.factor:>14.2g}%')
            if start.size > 1:
                lines.append(f'  one factor on all its numbers: x {estimate.factor:.6g} '
                             f'[{estimate.interval[0]:.6g}, {estimate.interval[1]:.6g}] -> '
                             f'[{", ".join(f"{v:.6g}" for v in estimate.value)}]')
        lines += ['', f'{"residual":<{width}} {"RMS":>11} {"unit":<8} whiteness: Ljung-Box '
                  f'over {fitting.LAGS} lags, white if p >= {white:.2g} '
                  f'({100 * fitting.WHITE_LEVEL:g} % over the {len(data.signals)} signals)']
        for signal, rms, (q, p, lags) in zip(data.signals, self.rms(), outcome.whiteness):
            verdict = 'white' if p >= white else 'NOT white'
            lines.append(f'{signal.name:<{width}} {rms:>11.3g} {signal.unit:<8} Q = {q:.1f}, '
                         f'p = {p:.2g}: {verdict}')
        return '\n'.join(lines)

    def rewrite(self, text):
        """Return the model file's ``text`` with the estimates for the fitted numbers."""
        return parameter_paths.rewrite(text, self.fitted, self.outcome.factors)


def choose_step(model, period, integrator=None, step=None):
    """(integrator, step) to replay with: given, or the largest stable explicit step.

    Without ``step``: ``period`` / k for the least k in 1..16 that the step check accepts
    for ``integrator`` (default rk4); rosenbrock2/3 (and rk4 stable at no such step) at the
    period itself.
    """
    if step is not None:
        return integrator or 'rk4', step
    if integrator in ('rosenbrock2', 'rosenbrock3'):
        return integrator, period
    for count in range(1, 17):
        try:
            sim = Simulation(model, period / count, integrator or 'rk4')
        except ValueError:
            continue
        if sim.step_warning is None:
            return integrator or 'rk4', period / count
    if integrator is not None:
        raise IdentificationError(f'--integrator {integrator}: no stable step of at least '
                                  f'{period / 16:g} s for this model; give --step or use '
                                  'rosenbrock3')
    return 'rosenbrock3', period


def identify(recording, model, fit, window=WINDOW, integrator=None, step=None,
             level=fitting.LEVEL, joint_topic='/joint_states', modal_topic='/modal_states',
             driver_compensation=()):
    """Fit the parameters ``fit`` of ``model`` to ``recording``; return a `Result`.

    ``model``: a model file path or a name in config/models; ``fit``: parameter paths (a
    list or a comma-separated text, `parameters`); ``window`` [s]; ``integrator``,
    ``step``: the replay's (`choose_step` when not given; an interval between stamps that
    is not a whole number of steps takes equal steps no longer than it, so any stamps
    replay); ``level``: of the intervals;
    ``modal_topic``: None to fit the joint states alone; ``driver_compensation``: what the
    arm's driver added to the efforts it reports (``('gravity',)``: its rigid twin's
    gravity, `fit.driver_efforts`; as the controller's parameter). Raises `IdentificationError`
    (bad input, one line naming it) or `Unidentifiable`.
    """
    if not 0.0 < level < 1.0:
        raise IdentificationError(f'--level: expected a confidence level in (0, 1), got {level}')
    if not window > 0.0:
        raise IdentificationError(f'--window: expected a length > 0 s, got {window}')
    unknown = [entry for entry in driver_compensation if entry != 'gravity']
    if unknown:
        raise IdentificationError(f'--driver-compensation: {unknown[0]!r} is not replayed (only '
                                  'gravity: a driver that adds the gravity torque itself)')
    try:
        path = resolve_model_path(model)
        spec = load_yaml(path)
        base = spec.get('base', {})
        if isinstance(base, dict) and base.get('floating'):
            raise IdentificationError(f'{path}: a floating base is not supported (its pose is '
                                      'not in the joint states)')
        directory = os.path.dirname(os.path.abspath(path))
        start_model = parameter_paths.model_from_dict(spec, path, directory)
        if not hasattr(start_model, 'joint_names'):
            raise IdentificationError(f'{path}: not a serial chain (type '
                                      f'{spec.get("type")!r})')
        fitted = parameter_paths.parse(fit, spec, directory)
    except (ConfigError, parameter_paths.ParameterError) as error:
        raise IdentificationError(str(error)) from None
    data = measurements.read(recording, start_model, spec, joint_topic, modal_topic)
    integrator, step = choose_step(start_model, data.period, integrator, step)
    windows = measurements.windows(data.times, window)
    replay = fitting.Replay(spec, path, fitted, data, windows, integrator, step,
                            driver_gravity='gravity' in driver_compensation)
    outcome = fitting.fit(replay, level)
    return Result(recording, path, fitted, data, windows, window, integrator, step, outcome)
