"""Latency statistics of a closed loop, cheap enough to update on every tick.

`LatencyHistogram` counts durations in logarithmic bins: bin k holds [m r^k, m r^(k+1))
with m = `LOWEST` and r = 1 + `RESOLUTION`, so a percentile read off the bins (the bin's
geometric middle) is within RESOLUTION/2 relative of the exact order statistic, with
O(1) work and no allocation per sample and constant memory however long the run.
"""

import math

LOWEST = 1e-6        # s: shorter durations count in the first bin
HIGHEST = 10.0       # s: longer ones in the last
RESOLUTION = 0.02    # relative width of a bin


class LatencyHistogram:
    """Durations [s] in logarithmic bins: count, percentiles, maximum, rate of samples."""

    def __init__(self):
        """Start empty."""
        self._log_ratio = math.log1p(RESOLUTION)
        self._bins = int(math.ceil(math.log(HIGHEST / LOWEST) / self._log_ratio)) + 1
        self.clear()

    def clear(self):
        """Forget every sample."""
        self.counts = [0] * self._bins
        self.count = 0
        self.maximum = 0.0
        self.first_at = None     # wall time [s] of the first and last sample
        self.last_at = None

    def add(self, duration, at):
        """Count one ``duration`` [s] that ended at wall time ``at`` [s]."""
        k = 0
        if duration > LOWEST:
            k = min(int(math.log(duration / LOWEST) / self._log_ratio), self._bins - 1)
        self.counts[k] += 1
        self.count += 1
        self.maximum = max(self.maximum, duration)
        if self.first_at is None:
            self.first_at = at
        self.last_at = at

    def percentile(self, p):
        """Duration [s] below which ``p`` percent of the samples lie (nan when empty)."""
        if not self.count:
            return math.nan
        rank = max(1, math.ceil(p / 100.0 * self.count))
        seen = 0
        for k, n in enumerate(self.counts):
            seen += n
            if seen >= rank:
                if k == self._bins - 1:
                    return self.maximum      # the overflow bin has no upper edge
                # The geometric middle of bin k, never above the largest sample.
                return min(LOWEST * math.exp((k + 0.5) * self._log_ratio), self.maximum)
        return self.maximum

    def rate(self):
        """Return the samples per wall second between the first and the last (nan below two)."""
        if self.count < 2 or self.last_at == self.first_at:
            return math.nan
        return (self.count - 1) / (self.last_at - self.first_at)
