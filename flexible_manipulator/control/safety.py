"""What both controllers share: enable, a latched fault, a guarded law, zero/held effort.

A controller (`ProgramController`, `ServoController`) mixes in `LatchedSafety` and
provides ``status`` (with ``mode`` and ``fault``), ``restart()`` (forget the past states,
so that the next state starts the law afresh), and the arrays the efforts below use:
``effort`` and ``last_effort`` (nu), ``q`` (the last measured coordinates, valid once
``_valid``), ``control_model`` and its workspace ``data``, ``input_pinv`` (B^+) and
``effort_limit``. A fault latches:
the controller commands zero effort until `enable` clears it. Two things latch one: a
safety limit the controller checks (a joint too fast), and a numerical failure of the
control law (a singular or non-converging linear algebra problem, a non-finite effort),
which `run_law` turns into a fault instead of an exception that would end the node.
"""

import numpy as np

# Exceptions a control law raises on numbers it cannot handle (not programming errors).
NUMERICAL_FAILURES = (np.linalg.LinAlgError, FloatingPointError, ValueError,
                      ZeroDivisionError, OverflowError)


class LatchedSafety:
    """Mixin: ``enabled``, ``fault`` and the methods below (module doc)."""

    enabled = False
    fault = ''

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

    def run_law(self, t, law, *args):
        """Return ``law(*args)``'s effort, or latch a fault and return zero if it fails.

        ``law`` returns the effort array; a numerical failure or a non-finite entry latches
        "control law failed at t = ...: <reason>". (Arguments, not a closure: no object is
        made per tick.)
        """
        try:
            effort = law(*args)
            if not np.all(np.isfinite(effort)):
                raise FloatingPointError(f'non-finite effort {effort.tolist()}')
        except NUMERICAL_FAILURES as error:
            return self.latch_fault(f'control law failed at t = {t:.6f} s: '
                                    f'{type(error).__name__}: {error}')
        return effort
