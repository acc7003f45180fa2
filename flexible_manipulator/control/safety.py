"""What both controllers share: enable, a latched fault, a guarded tick, the safe action.

A controller (`ProgramController`, `ServoController`) mixes in `LatchedSafety` and
provides ``status`` (with ``mode`` and ``fault``), ``restart()`` (forget the past states,
so that the next state starts the law afresh), and the arrays the efforts below use:
``effort`` and ``last_effort`` (nu), ``q`` (the last measured coordinates, valid once
``_valid``), ``control_model`` and its workspace ``data``, ``input_pinv`` (B^+) and
``effort_limit``. A fault latches until `enable` clears it. Two things latch one: a safety
limit the controller checks (a joint too fast), and a failure of any step of a tick
(`guarded_tick`: the state intake, the elastic-state estimator, the control model, the law,
the limits) or a non-finite effort. No exception leaves a controller's ``update``: a
numerical failure (a singular solve, an overflow) is a property of the input, and how it
shows depends on the host's floating point and LAPACK build, so every exception is treated
alike: zero effort at that tick and a fault naming the step.

The safe action (``safe_action``, one setting for the three cases) is what a controller
commands while it does not track: disabled, after a fault, and on stale states (the node's
watchdog): ``zero`` effort; ``gravity``, the model's static efforts at the measured
configuration (`holding_effort`); or ``hold`` (`safe_actions`: gravity, joint damping
and a low-gain joint law toward where the arm stopped). The tick whose step failed commands
zero (its state is not believed); the next sane state gets the safe action.
"""

import math

import numpy as np

from ..mechanics.arguments import is_real
from ..config_checks import ConfigError
from ..settings import Setting

SAFE_ACTIONS = ('zero', 'gravity', 'hold')
SAFE_ACTION = Setting(
    'safe_action', 'zero',
    'Effort commanded while not tracking (disabled, after a fault, on stale states): zero; '
    'gravity, the model\'s static efforts at the measured configuration (modes at their '
    'measured or estimated values); hold, gravity plus joint damping plus a low-gain joint law '
    'toward where tracking stopped (after a fast motion, where the joints came slow) '
    '(doc/hil.md).', choices=SAFE_ACTIONS, formerly=('watchdog_action', {'hold': 'gravity'}))
COMPENSATED = ('gravity', 'friction')


def _compensated(value, name):
    """Check ``driver_compensation``: a subset of `COMPENSATED` (None: nothing)."""
    if value is None:
        return None
    unknown = [item for item in value if item not in COMPENSATED]
    if unknown or len(set(value)) != len(value):
        raise ConfigError(f'{name}: expected each of {", ".join(COMPENSATED)} at most once, '
                          f'got {list(value)}')
    return list(value)


DRIVER_COMPENSATION = Setting(
    'driver_compensation', None,
    'What the robot\'s driver adds to each command itself (gravity, friction: its joint '
    'friction): commands exclude the model\'s, the elastic-state observer adds it back '
    '(doc/hil.md); empty: nothing (a plain torque interface).', kind='strings',
    check=_compensated)


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

    def safe_effort(self):
        """Return the safe action's effort at the last state (stale states: the watchdog).

        `holding_effort` for ``gravity`` (and ``hold`` where the controller has no hold law
        of its own), else zero; zero if that raises (no exception leaves it).
        """
        try:
            if self.settings.safe_action == 'zero':
                return self.zero_effort()
            return self.holding_effort()
        except Exception:                   # noqa: B902 - a safe command, whatever happens
            return self.zero_effort()

    def disable(self):
        """Stop tracking: the safe action until enabled again."""
        self.enabled = False

    def latch_fault(self, reason):
        """Latch ``reason`` (a first fault is kept) and return zero effort (this tick's)."""
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
