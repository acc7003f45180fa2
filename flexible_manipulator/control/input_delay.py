"""The input delay a loop actually has, read from the efforts the plant says it applied.

The start-up checks allow for ``delay_periods`` periods of input delay; a loaded machine
or network can make it longer, and the loop then degrades silently until it goes
unstable. A plant that reports, in each state, the effort it applied over the period that
ends at the state (the simulated plants' ``joint_states`` ``effort``) shows which of the
controller's own commands that was. If the state stamped t_k reports the command that
answered the state stamped t_j, that command was first applied at t_(k-1), so

    d = (t_k - t_j) / T - 1   [periods]

(0 in lockstep, where the plant applies each command from the state it answers; 1 for a
real-time plant whose command arrives within the period). No clock is shared, so the
measurement holds at any real-time factor. Nothing is measured on a tick whose reported
effort matches none of the last ``capacity`` commands (a real arm's measured torque, a
plant clipping at other limits) or matches a command equal to the one before it (a
constant effort cannot tell which).
"""

import numpy as np


class InputDelayMonitor:
    """The controller's recent commands and the delay measured against them (module doc)."""

    def __init__(self, nu, period, capacity=64):
        """Keep the last ``capacity`` commands of ``nu`` efforts; ``period`` T [s]."""
        self.period = float(period)
        self.commands = np.full((capacity, nu), np.nan)   # ring of sent efforts
        self.stamps = np.full(capacity, np.nan)           # stamp [s] of the state answered
        self.newest = -1                                  # ring index of the newest
        self._equal = np.zeros((capacity, nu), dtype=bool)  # scratch of `measure`
        self._match = np.zeros(capacity, dtype=bool)

    def reset(self):
        """Forget the commands (a restart of the program or of the plant's time)."""
        self.commands[:] = np.nan
        self.stamps[:] = np.nan
        self.newest = -1

    def sent(self, stamp, effort):
        """Record ``effort`` (model input order) sent in answer to the state at ``stamp``."""
        self.newest = (self.newest + 1) % self.stamps.size
        self.commands[self.newest] = effort
        self.stamps[self.newest] = stamp

    def measure(self, stamp, applied):
        """Return d [periods] for the state at ``stamp`` reporting ``applied``, or None."""
        if self.newest < 0:
            return None
        if stamp < self.stamps[self.newest]:
            self.reset()                        # time went back: a reset plant
            return None
        size = self.stamps.size
        # The newest commands one by one first (lockstep reports the newest, a real-time
        # loop the one before), then the whole ring at once: the newest matching command.
        # Lists of floats compare as np.equal does (NaN equals nothing, -0.0 equals 0.0).
        effort = np.asarray(applied, dtype=float).tolist()
        for back in range(min(2, size)):
            found = (self.newest - back) % size
            if self.commands[found].tolist() == effort:
                break
        else:
            np.equal(self.commands, applied, out=self._equal)
            self._equal.all(axis=1, out=self._match)
            if not self._match.any():
                return None
            for back in range(size):
                found = (self.newest - back) % size
                if self._match[found]:
                    break
        if self.commands[(found - 1) % size].tolist() == effort:
            return None                         # equal to the command before: ambiguous
        d = round((stamp - self.stamps[found]) / self.period) - 1
        return d if d >= 0 else None
