"""Effort limits: a clip that flags what it changed, and the rate limit built on it.

Both controllers' realizations clip their efforts to +-effort_limit (`realization`); the
program controller clips again what model following's joint law wants and limits the
change of the efforts per tick (`program_controller`, step 5). The flags say which inputs
a limit changed (the status lists them).
"""

import numpy as np


def clip(values, low, high, out, flags):
    """Write ``values`` clipped to [low, high] into ``out``; ``flags``: the entries changed.

    ``out`` and ``flags`` (bool) have ``values``' size; returns ``out``.
    """
    np.clip(values, low, high, out=out)
    np.not_equal(out, values, out=flags)
    return out


def limit_rate(effort, last, rate_limit, dt, scratch, flags):
    """Limit the change of ``effort`` from ``last`` to ``rate_limit * dt``, in place.

    ``scratch``: an array of ``effort``'s size; ``flags``: the inputs the limit changed.
    """
    step = rate_limit * dt
    clip(effort, last - step, last + step, scratch, flags)
    effort[:] = scratch
    return effort
