"""`nodes.latency.LatencyHistogram` against exact order statistics of known samples.

Expected values: numpy's percentile with the 'inverted_cdf' method (the smallest sample
with at least p percent of the samples at or below it, the definition the histogram
approximates) on the same samples; the histogram's bins are RESOLUTION wide in relative
terms, so its answer must lie within RESOLUTION of that order statistic.
"""

import math

import numpy as np

from flexible_manipulator.nodes.latency import HIGHEST, LatencyHistogram, LOWEST, RESOLUTION


def test_percentiles_within_the_bin_resolution():
    """Log-normal round trips (median 1 ms, long tail): p50, p90, p99 within 2 %."""
    rng = np.random.default_rng(3)
    samples = np.exp(rng.normal(math.log(1e-3), 0.6, size=20000))
    histogram = LatencyHistogram()
    for k, x in enumerate(samples):
        histogram.add(float(x), at=k * 2e-3)
    assert histogram.count == samples.size
    assert histogram.maximum == samples.max()
    for p in (50, 90, 99):
        exact = np.percentile(samples, p, method='inverted_cdf')
        assert abs(histogram.percentile(p) / exact - 1.0) <= RESOLUTION, p


def test_rate_out_of_range_and_empty():
    """Rate = (n - 1) / span; durations beyond the range land in the end bins; empty is nan."""
    histogram = LatencyHistogram()
    assert math.isnan(histogram.percentile(50)) and math.isnan(histogram.rate())
    histogram.add(0.0, at=1.0)                    # below LOWEST: first bin
    histogram.add(1e3 * HIGHEST, at=1.5)          # above HIGHEST: last bin
    histogram.add(1e-3, at=3.0)
    assert histogram.rate() == 2 / 2.0
    assert histogram.percentile(1) <= LOWEST * (1 + RESOLUTION)
    assert histogram.percentile(100) == 1e3 * HIGHEST      # capped by the largest sample
    histogram.clear()
    assert histogram.count == 0 and math.isnan(histogram.rate())
