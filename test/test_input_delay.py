"""The input delay measured from the efforts a plant reports (`control.input_delay`).

Expected values come from the construction of the loop here: a plant that applies the
command answering state j from state j + d on (lockstep: d = 0; a real-time plant: d >= 1)
reports, in state k, the command that answered state k - 1 - d; the monitor must find d.
And on random histories (repeated commands, NaN, -0.0, time going back, any ring size) the
monitor answers as the plain rule does: the newest command equal to the report, None if
none is or the command before it is equal too.
"""

import random

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


def plain_rule(history, stamp, applied, period):
    """The delay by the module doc's rule over ``history`` (a `Ring`), newest last."""
    equal = [bool(np.all(np.equal(effort, applied))) for _, effort in history]
    if not any(equal):
        return None
    found = max(i for i, e in enumerate(equal) if e)
    # The command before the oldest of a full ring is its newest (the ring wraps).
    before = equal[found - 1] if found > 0 else len(history) == history.capacity and equal[-1]
    if before:
        return None
    d = round((stamp - history[found][0]) / period) - 1
    return d if d >= 0 else None


class Ring(list):
    """The last ``capacity`` (stamp, effort) pairs sent, as the monitor's ring keeps them."""

    def __init__(self, capacity):
        super().__init__()
        self.capacity = capacity

    def add(self, item):
        self.append(item)
        if len(self) > self.capacity:
            del self[0]


def test_random_histories_follow_the_plain_rule():
    rng = random.Random(7)
    for _ in range(200):
        nu, capacity = rng.choice([1, 2, 3]), rng.choice([1, 2, 3, 8, 64])
        monitor, history = InputDelayMonitor(nu, PERIOD, capacity), Ring(capacity)
        pool = [np.array([rng.choice([0.0, -0.0, 1.0, 2.0, np.nan]) for _ in range(nu)])
                for _ in range(6)]
        t = 0.0
        for _ in range(150):
            t += PERIOD * rng.choice([1, 1, 1, 0, 2, -5])
            if history and t < history[-1][0]:
                history.clear()                 # time went back: the monitor forgets
                expected = None
            else:
                expected = 'rule'
            applied = rng.choice(pool)
            if expected == 'rule':
                expected = plain_rule(history, t, applied, PERIOD)
            assert monitor.measure(t, applied) == expected
            if rng.random() < 0.6:
                effort = rng.choice(pool)
                monitor.sent(t, effort)
                history.add((t, effort))
