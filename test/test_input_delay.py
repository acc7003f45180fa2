"""The input delay measured from the efforts a plant reports (`control.input_delay`).

Expected values come from the construction of the loop here: a plant that applies the
command answering state j from state j + d on (lockstep: d = 0; a real-time plant: d >= 1)
reports, in state k, the command that answered state k - 1 - d; the monitor must find d.
"""

import numpy as np
import pytest

from flexible_manipulator.control.input_delay import InputDelayMonitor

PERIOD = 0.002


def loop(delay, ticks, efforts):
    """Run the monitor on a loop with ``delay`` periods; return the measured delays."""
    monitor = InputDelayMonitor(2, PERIOD)
    sent, measured = [], []
    for k in range(ticks):
        t = k * PERIOD
        applied = sent[k - 1 - delay] if k - 1 - delay >= 0 else np.zeros(2)
        measured.append(monitor.measure(t, applied))
        sent.append(efforts(k))
        monitor.sent(t, sent[-1])
    return measured


@pytest.mark.parametrize('delay', [0, 1, 3, 40])
def test_a_fixed_delay_is_measured_exactly(delay):
    """Distinct efforts every tick: from the first tick that reports a sent command on,
    every tick measures ``delay`` (up to the ring's 64 commands)."""
    rng = np.random.default_rng(delay)
    measured = loop(delay, 200, lambda k: rng.uniform(-5, 5, 2))
    assert all(m is None for m in measured[:delay + 1])
    assert measured[delay + 1:] == [delay] * (200 - delay - 1)


def test_constant_or_unknown_efforts_measure_nothing():
    """A constant effort cannot tell which command it was; an effort the controller never
    sent (a real arm's measured torque) matches none; past the ring's capacity (64) the
    command is forgotten."""
    assert set(loop(1, 50, lambda k: np.array([1.0, -1.0]))) == {None}
    monitor = InputDelayMonitor(2, PERIOD)
    monitor.sent(0.0, np.array([1.0, 2.0]))
    assert monitor.measure(0.004, np.array([1.0, 2.0000001])) is None
    assert loop(70, 100, lambda k: np.array([k, -k], dtype=float))[71:] == [None] * 29


def test_time_going_back_starts_over():
    """A plant reset (stamps back to 0) forgets the commands of the old run."""
    monitor = InputDelayMonitor(2, PERIOD)
    for k in range(5):
        monitor.sent(k * PERIOD, np.array([k, 1.0]))
    assert monitor.measure(5 * PERIOD, np.array([3.0, 1.0])) == 1
    assert monitor.measure(0.0, np.array([3.0, 1.0])) is None
    assert monitor.newest == -1
