"""What both controllers share: enable, a latched fault, a guarded tick, zero/held effort.

A controller (`ProgramController`, `ServoController`) mixes in `LatchedSafety` and
provides ``status`` (with ``mode`` and ``fault``), ``restart()`` (forget the past states,
so that the next state starts the law afresh), and the arrays the efforts below use:
``effort`` and ``last_effort`` (nu), ``q`` (the last measured coordinates, valid once
``_valid``), ``control_model`` and its workspace ``data``, ``input_pinv`` (B^+) and
``effort_limit``. A fault latches: the controller commands zero effort until `enable`
clears it. Two things latch one: a safety limit the controller checks (a joint too fast),
and a failure of any step of a tick (`guarded_tick`: the state intake, the elastic-state
estimator, the control model, the law, the limits) or a non-finite effort. No exception
leaves a controller's ``update``: a numerical failure (a singular solve, an overflow) is a
property of the input, and how it shows depends on the host's floating point and LAPACK
build, so every exception is treated alike: zero effort and a fault naming the step.
"""

import math

import numpy as np

from ..mechanics.arguments import is_real


class LatchedSafety:
    """Mixin: ``enabled``, ``fault`` and the methods below (module doc)."""

    enabled = False
    fault = ''
    step = 'state intake'               # the step of the tick running (fault messages)

    def enable(self):
        """Track from the next state on; clears a latched fault and the state history."""
        self.enabled = True
        self.fault = ''
        self.restart()

    def zero_effort(self):
        """Return zero effort (and remember it as the last command, for a rate limit)."""
        self.effort[:] = 0.0
        self.last_effort[:] = 0.0
        return self.effort

    def holding_effort(self):
        """Efforts that best hold the last measured configuration: B^+ h(q, 0), clipped.

        The least-squares input against gravity or any static load (zero without one) at
        the last valid state; zero before a state has been received.
        """
        if not self._valid:
            return self.zero_effort()
        cm = self.control_model
        static = cm.bias_forces(self.data, self.q, np.zeros(cm.nv))
        np.matmul(self.input_pinv, static, out=self.effort)
        np.clip(self.effort, -self.effort_limit, self.effort_limit, out=self.effort)
        self.last_effort[:] = self.effort
        return self.effort

    def disable(self):
        """Command zero effort until enabled again."""
        self.enabled = False

    def latch_fault(self, reason):
        """Latch ``reason`` (a first fault is kept) and return zero effort."""
        if not self.fault:
            self.fault = reason
        self.status.mode = 'fault'
        self.status.fault = self.fault
        return self.zero_effort()

    def guarded_tick(self, tick, t, *args):
        """Return ``tick(t, *args)``'s effort, or latch a fault and return zero effort.

        ``tick`` sets ``self.step`` to the name of each step as it starts; any exception,
        or a non-finite entry of the effort, latches "<step> failed at t = ...: <reason>"
        and forgets the past states (``restart``: the state that failed is not one to hold
        or to start from). (Arguments, not a closure: no object is made per tick.)
        """
        self.step = 'state intake'
        try:
            effort = tick(t, *args)
            if not np.isfinite(effort).all():
                raise FloatingPointError(f'non-finite effort {effort.tolist()}')
        except Exception as error:          # noqa: B902 - no input may raise out of update
            self.restart()
            return self.latch_fault(f'{self.step} failed at t = {_time_text(t)}: '
                                    f'{type(error).__name__}: {error}')
        return effort


def _time_text(t):
    """``t`` for a fault message, whatever it is (a state's time may be absurd too)."""
    try:
        return f'{float(t):.6f} s'
    except (TypeError, ValueError, OverflowError):
        return repr(t)[:40]


def checked_time(t):
    """Return the state's time ``t`` as a float [s], or raise ValueError naming ``t``."""
    if not is_real(t):
        raise ValueError(f't: expected a time in seconds, got {type(t).__name__}')
    t = float(t)
    if not math.isfinite(t):
        raise ValueError(f't: expected a finite time in seconds, got {t}')
    return t


def take(out, values, name, scratch):
    """Copy ``values`` into ``out`` (a float vector), or ValueError naming ``name``.

    The length must be ``out``'s (a scalar or one value is not broadcast) and every entry
    finite; ``scratch`` is a boolean array of ``out``'s size (the check allocates nothing).
    """
    if np.ndim(values) != 1 or len(values) != out.size:
        raise ValueError(f'{name}: expected {out.size} values, got shape {np.shape(values)}')
    out[:] = values
    if not np.isfinite(out, out=scratch).all():
        raise ValueError(f'{name}: non-finite entry at index {int(np.argmin(scratch))}')
