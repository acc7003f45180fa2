"""An actuator's input delay: each command reaches the plant a whole number of periods late.

A real arm's driver applies the torque that answers the state measured at t_k from a later
period on: transport over the bus and the controller's computation take one or two control
periods. A simulated plant with ``input_delay_periods`` d applies, over period k (from its
state k to state k + 1), the input it was given at period k - d; before d inputs have come,
zero (the amplifier has received nothing yet; a controller assumes the same of the
commands it has not sent, `control.program_controller`). d = 0 applies each input at once.

The lock-step loop without ROS (`control.lockstep.run_lockstep`) and the plant nodes
(`nodes.simulated_plant`, parameter ``input_delay_periods``) both delay through this
class, so the delay the controller's sampled-loop check assumes (``delay_periods``) is
the one simulated.
"""

import numpy as np


class DelayLine:
    """A ring of the last d inputs: `push` one in, the one pushed d periods before out."""

    def __init__(self, size, periods):
        """Hold ``periods`` (whole number >= 0) inputs of ``size`` entries, all zero."""
        if isinstance(periods, bool) or int(periods) != periods or periods < 0:
            raise ValueError(f'input delay: expected a whole number of periods >= 0, got '
                             f'{periods!r}')
        self.periods = int(periods)
        self._ring = np.zeros((self.periods + 1, size))   # row `_next`: the oldest input
        self._next = 0

    def push(self, value, out):
        """Take this period's input ``value``; return ``out``: the input to apply now.

        ``out`` (written in place, may be ``value`` itself) gets the input pushed d periods
        before, or ``value`` when d is 0.
        """
        ring = self._ring
        ring[(self._next + self.periods) % ring.shape[0]] = value
        out[:] = ring[self._next]
        self._next = (self._next + 1) % ring.shape[0]
        return out

    def clear(self):
        """Forget every input (a plant reset): zero until d new ones have come."""
        self._ring[:] = 0.0
        self._next = 0
