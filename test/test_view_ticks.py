"""The value axis of the view's plots (`view.panel`: value_ticks, tick_labels, value_axis).

Expected values, derived by hand from the documented rules: the step is the smallest of
1, 2, 5 times a power of ten that is at least a quarter of the values' span; the ticks are
its multiples from the one at or below the smallest value to the one at or above the
largest; the labels share the power of a thousand of the largest tick (SI prefix, else
``e<exponent>``) with the decimals the step needs there, and zero reads ``0``. Each case
below gives its span, step and largest tick. No viser needed.
"""

import math

import numpy as np
import pytest

from flexible_manipulator.view.panel import tick_labels, value_axis, value_ticks

CASES = [
    # span 8.1e-9: step 5e-9 (2e-9 < 8.1e-9 / 4); ticks 0..1e-8; nano, no decimals
    ([1.2e-9, 9.3e-9], ['0', '5n', '10n']),
    ([-9.3e-9, -1.2e-9], ['-10n', '-5n', '0']),
    # span 1e-6: step 5e-7; ticks 3e-6..4e-6; micro, 0.5 needs one decimal
    ([3e-6, 4e-6], ['3.0µ', '3.5µ', '4.0µ']),
    ([-4e-6, -3e-6], ['-4.0µ', '-3.5µ', '-3.0µ']),
    # the residuals of the demo: span 2.5e-4, step 1e-4, ticks -2e-4..2e-4; micro
    ([-1.2e-4, 1.3e-4], ['-200µ', '-100µ', '0', '100µ', '200µ']),
    # span 0.037: step 0.01; ticks -0.02..0.02; milli
    ([-0.02, 0.017], ['-20m', '-10m', '0', '10m', '20m']),
    # span 2: step 0.5; no prefix, one decimal
    ([-1.0, 1.0], ['-1.0', '-0.5', '0', '0.5', '1.0']),
    # span 130: step 50; ticks 0..200
    ([40.0, 170.0], ['0', '50', '100', '150', '200']),
    ([-170.0, -40.0], ['-200', '-150', '-100', '-50', '0']),
    # span 3500: step 1000; kilo
    ([1200.0, 4700.0], ['1k', '2k', '3k', '4k', '5k']),
    # span 9e5: step 5e5; ticks 0..1.5e6; mega, one decimal
    ([3e5, 1.2e6], ['0', '0.5M', '1.0M', '1.5M']),
    # span 3.5e6: step 1e6; ticks -3e6..1e6
    ([-2.5e6, 1e6], ['-3M', '-2M', '-1M', '0', '1M']),
    # equal values 1e-4: span 2e-5 about them, step 5e-6, ticks 9e-5..1.1e-4
    ([1e-4, 1e-4, 1e-4], ['90µ', '95µ', '100µ', '105µ', '110µ']),
    # all zero: -1..1
    ([0.0, 0.0], ['-1.0', '-0.5', '0', '0.5', '1.0']),
    # below the prefixes: span 7e-13, step 2e-13, largest 8e-13 -> e-15
    ([0.0, 7e-13], ['0', '200e-15', '400e-15', '600e-15', '800e-15']),
]


@pytest.mark.parametrize('values, labels', CASES)
def test_ticks_and_labels_at_every_scale(values, labels):
    ticks, step = value_ticks(values)
    assert tick_labels(ticks, step) == labels
    assert ticks[0] <= min(values) and ticks[-1] >= max(values)
    np.testing.assert_allclose(np.diff(ticks), step, rtol=1e-9)


def test_zero_is_never_negative():
    """A tick of -0.0, or one rounding to zero at the axis' decimals, reads '0'."""
    assert tick_labels([-0.0, 1e-4, 2e-4], 1e-4) == ['0', '100µ', '200µ']
    assert tick_labels([-1e-20, 0.5, 1.0], 0.5) == ['0', '0.5', '1.0']


def test_non_finite_values_are_left_out():
    """NaN and inf are not values (History.arrays writes NaN for them); none left: no axis."""
    assert value_ticks([math.nan, math.inf]) is None
    ticks, step = value_ticks([math.nan, -1.2e-4, math.inf, 1.3e-4])
    assert tick_labels(ticks, step) == ['-200µ', '-100µ', '0', '100µ', '200µ']


def test_the_value_axis_is_fixed_to_its_ticks():
    """uPlot's options: the y scale's range is the first and last tick, the axis' splits
    the ticks and its values their labels; no finite value: uPlot's own axis."""
    scales, axes = value_axis((np.array([-1.2e-4, 0.5e-4]), np.array([1.3e-4, np.nan])),
                              'φ [m or rad]')
    assert scales == {'x': {'time': False}, 'y': {'range': (-2e-4, 2e-4)}}
    assert axes[1]['values'] == ('-200µ', '-100µ', '0', '100µ', '200µ')
    np.testing.assert_allclose(axes[1]['splits'], [-2e-4, -1e-4, 0, 1e-4, 2e-4], atol=1e-20)
    assert axes[1]['label'] == 'φ [m or rad]' and axes[0]['label'] == 'simulated time [s]'
    scales, axes = value_axis((np.array([np.nan]),), '[m]')
    assert scales == {'x': {'time': False}} and axes[1] == {'label': '[m]'}
