"""Fixed-step simulation of a mechanical model under a zero-order-hold input.

The state is x = (q, v); the input u (actuator efforts) is held constant over each call to
`Simulation.advance`, which integrates M(q) v' + h(q, v) = B u with internal steps of
exactly ``step`` seconds. Time is kept as an integer count of steps so that the simulated
clock never drifts from the step grid. `Simulation.advance_over` also takes intervals that
are not whole steps (a real driver's stamps), each in equal steps no longer than ``step``.
"""

import math

import numpy as np

from .arguments import is_real, vector
from .integrators import Stepper
from .step_check import check_step


MAX_STEPS = 2 ** 53          # steps in one call to `Simulation.advance`, at most


class StepFailedError(RuntimeError):
    """An integration step failed; the simulation stays at its last good state."""


class NonFiniteStateError(StepFailedError):
    """The integrated state stopped being finite (the step was too large or the model bad)."""


class Simulation:
    """Integrates one model from an initial state; owns the model's workspace."""

    def __init__(self, model, step, integrator='rk4', q0=None, v0=None, refuse_unstable=True):
        """Prepare the simulation.

        :param model: a model with ``nq``, ``nv``, ``nu``, ``create_data()``,
            ``neutral_configuration()`` and the compiled pieces `integrators.Stepper` needs.
        :param step: internal integration step [s]; an explicit method's step past the
            stability limit of the model's elastic modes is refused (`step_check`), or
            only warned about with ``refuse_unstable=False``; ``step_warning`` keeps the
            warning's text (None if the step is stable).
        :param q0, v0: initial coordinates (the model's neutral configuration when omitted)
            and velocities (zero when omitted).
        """
        if not is_real(step) or not step > 0.0 or not math.isfinite(step):
            raise ValueError(f'integration step must be a positive number of seconds, got {step}')
        self.model = model
        self.data = model.create_data()
        self.step_size = float(step)
        self.nq, self.nv = model.nq, model.nv
        self.initial_state = np.zeros(self.nq + self.nv)
        self.initial_state[:self.nq] = (model.neutral_configuration() if q0 is None
                                        else vector('q0', q0, self.nq, model.name, 'values'))
        if v0 is not None:
            self.initial_state[self.nq:] = vector('v0', v0, self.nv, model.name, 'values')
        if not np.all(np.isfinite(self.initial_state)):
            raise ValueError(f'initial state is not finite: {self.initial_state.tolist()}')
        self.state = self.initial_state.copy()
        self.input = np.zeros(model.nu)
        self.steps = 0
        self.off_grid = 0.0             # time of intervals not on the step grid [s]
        self._backup = np.zeros_like(self.state)
        self._stepper = Stepper(model, self.data, integrator)
        self.step_warning = check_step(model, self.data, self.step_size, self._stepper.method,
                                       self.initial_state[:self.nq], refuse_unstable)

    @property
    def time(self):
        """Simulated time since the last reset [s]."""
        return self.steps * self.step_size + self.off_grid

    @property
    def q(self):
        """Generalized coordinates (a view into the state)."""
        return self.state[:self.nq]

    @property
    def v(self):
        """Generalized velocities (a view into the state)."""
        return self.state[self.nq:]

    def reset(self):
        """Return to the initial state at time zero, with zero input."""
        self.state[:] = self.initial_state
        self.input[:] = 0.0
        self.steps = 0
        self.off_grid = 0.0

    def steps_in(self, duration):
        """Count the internal steps that make up ``duration`` (must be a whole number)."""
        ratio = duration / self.step_size if is_real(duration) else math.nan
        # Past 2^53 steps the step counter (time = steps * step) is no longer exact.
        count = round(ratio) if math.isfinite(ratio) and abs(ratio) < MAX_STEPS else 0
        if count < 1 or abs(count * self.step_size - duration) > 1e-9 * max(1.0, duration):
            raise ValueError(f'duration: {duration!r} s is not a positive whole number (at '
                             f'most 2^53) of integration steps of {self.step_size} s')
        return count

    def advance(self, effort, duration):
        """Integrate for ``duration`` seconds with ``effort`` held constant.

        ``effort``: nu finite values (model input order), else ValueError naming it;
        ``duration``: a positive whole number of integration steps, else ValueError. Raises
        `NonFiniteStateError` if the state stops being finite, `StepFailedError` if a step
        raises anything else; either way the state stays at its value before the call.
        """
        count = self.steps_in(duration)
        self.input[:] = vector('effort', effort, self.input.size, self.model.name, 'inputs')
        self._integrate(count, duration)

    def advance_through(self, efforts, durations, out):
        """Integrate over consecutive intervals, ``efforts[k]`` held over ``durations[k]``.

        The same steps as `advance` called once per interval (the same states, bit for
        bit), with the arguments checked once: ``efforts`` n x nu finite, ``durations`` n
        whole numbers of steps (else ValueError naming them). The state after interval k
        is written to ``out[k]`` (n x (nq + nv)). A failing interval raises as `advance`
        does, the state staying at its value after the interval before.
        """
        efforts, durations, counts, whole = self._intervals(efforts, durations, out)
        bad = np.flatnonzero(~whole)
        if bad.size:
            self.steps_in(durations[bad[0]])           # raises, naming the duration
        for k, count in enumerate(counts.astype(np.int64).tolist()):
            self.input[:] = efforts[k]
            self._integrate(count, durations[k])
            out[k] = self.state

    def advance_over(self, efforts, durations, out):
        """Integrate over consecutive intervals of any length, ``efforts[k]`` held over each.

        As `advance_through` (the same steps, bit for bit, for whole numbers of steps),
        but a positive finite duration d that is not a whole number of steps takes the
        least number n of equal steps d / n no longer than the step [s] (the intervals
        between a real driver's stamps: jitter, dropped states); ``time`` advances by d.
        A duration that is not positive and finite is a ValueError naming it.
        """
        efforts, durations, counts, whole = self._intervals(efforts, durations, out)
        bad = np.flatnonzero(~(np.isfinite(durations) & (durations > 0.0)
                               & (durations / self.step_size < MAX_STEPS)))
        if bad.size:
            raise ValueError(f'durations: {durations[bad[0]]!r} s at interval {bad[0]} is not '
                             'a positive duration (at most 2^53 steps)')
        for k in range(durations.size):
            self.input[:] = efforts[k]
            if whole[k]:
                self._integrate(int(counts[k]), durations[k])
            else:
                count = max(1, math.ceil(durations[k] / self.step_size))
                self._integrate(count, durations[k], durations[k] / count)
            out[k] = self.state

    def _intervals(self, efforts, durations, out):
        """Check the arguments of `advance_through`; (efforts, durations, steps, whole?)."""
        efforts = np.asarray(efforts, dtype=float)
        durations = np.asarray(durations, dtype=float)
        if efforts.shape != (durations.size, self.input.size) or out.shape != (
                durations.size, self.state.size):
            raise ValueError(f'efforts, out: expected {durations.size} x {self.input.size} '
                             f'and {durations.size} x {self.state.size} values for '
                             f'{durations.size} durations, got shapes {efforts.shape}, '
                             f'{out.shape}')
        if not np.all(np.isfinite(efforts)):
            raise ValueError(f'efforts: not finite at interval '
                             f'{int(np.argwhere(~np.isfinite(efforts))[0, 0])}')
        with np.errstate(invalid='ignore', over='ignore'):
            ratio = durations / self.step_size
            counts = np.round(np.where(np.isfinite(ratio) & (np.abs(ratio) < MAX_STEPS),
                                       ratio, 0))
            whole = (counts >= 1) & (np.abs(counts * self.step_size - durations)
                                     <= 1e-9 * np.maximum(1.0, durations))
        return efforts, durations, counts, whole

    def _integrate(self, count, duration, step=None):
        """``count`` steps with the input held (`advance`'s failure handling).

        ``step``: the steps' length [s] when not the simulation's (an interval off the
        step grid, which ``time`` then counts as ``duration``).
        """
        self._backup[:] = self.state
        try:
            finite = self._stepper.advance(self.state, self.input,
                                           self.step_size if step is None else step, count)
        except Exception as error:          # noqa: B902 - any failure leaves the last state
            self.state[:] = self._backup
            raise StepFailedError(
                f'integration step failed within t = [{self.time:.6f}, '
                f'{self.time + duration:.6f}] s: {type(error).__name__}: {error}; the '
                f'simulation stays at t = {self.time:.6f} s') from error
        if not finite:
            self.state[:] = self._backup
            # A model that can say why its right-hand side failed (e.g. a servo system's
            # blow-up) has ``failure(q, v) -> str``; it is asked at the kept state.
            failure = getattr(self.model, 'failure', None)
            reason = f': {failure(self.q, self.v)}' if failure is not None else ''
            raise NonFiniteStateError(
                f'state became non-finite (or the mass matrix singular) within t = '
                f'[{self.time:.6f}, {self.time + duration:.6f}] s; the simulation stays at '
                f't = {self.time:.6f} s{reason}')
        if step is None:
            self.steps += count
        else:
            self.off_grid += duration
