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


# -- the plant's side: commands applied periods late (mechanics/delay_line.py) ---------------
@pytest.mark.parametrize('periods', [0, 1, 2, 5])
def test_a_delay_line_gives_back_each_input_that_many_periods_later(periods):
    """Input k comes out at push k + periods; zeros before (nothing received yet); clear()
    starts over with zeros. Written in place into ``out`` (the same array as the input
    too)."""
    from flexible_manipulator.mechanics.delay_line import DelayLine
    line = DelayLine(3, periods)
    inputs = np.arange(60.0).reshape(20, 3) + 1.0
    out = np.zeros(3)
    for k, value in enumerate(inputs):
        expected = inputs[k - periods] if k >= periods else np.zeros(3)
        np.testing.assert_array_equal(line.push(value, out), expected)
    line.clear()
    buffer = inputs[0].copy()
    expected = inputs[0] if periods == 0 else np.zeros(3)
    np.testing.assert_array_equal(line.push(buffer, buffer), expected)


@pytest.mark.parametrize('periods', [-1, 1.5, True, 'two'])
def test_a_delay_that_is_no_whole_number_of_periods_is_refused(periods):
    """The delay is a whole number of periods >= 0; anything else is a ValueError."""
    from flexible_manipulator.mechanics.delay_line import DelayLine
    with pytest.raises((ValueError, TypeError)):
        DelayLine(2, periods)


def test_the_lockstep_loop_applies_each_command_the_given_periods_late():
    """run_lockstep with input_delay 2: the effort applied over period k (on_tick) is the
    controller's command of tick k - 2 (clipped at the plant's limits, unchanged here), zero
    for the first two; the plant reports it (applied_effort), so the controller's own
    monitor of the nodes (control/input_delay.py) measures 2 from the same reports."""
    from flexible_manipulator.control.lockstep import run_lockstep
    from flexible_manipulator.control.program_controller import (ControllerSettings,
                                                                 ProgramController)
    from flexible_manipulator.mechanics.simulation import Simulation
    from flexible_manipulator.model_config import load_model
    from conftest import CONFIG
    rigid = load_model(f'{CONFIG}/models/two_link_rigid.yaml')
    programs = {'sine': {'gains': {'alpha': 5.0}, 'rows': [
        {'type': 'joint', 'joints': ['shoulder', 'elbow'],
         'reference': {'type': 'sinusoid', 'offset': [0.3, 0.8], 'amplitude': [0.1, 0.1],
                       'frequency': [0.5, 0.5]}}]}}
    controller = ProgramController(rigid, programs, ControllerSettings(delay_periods=2))
    controller.enable()
    sim = Simulation(rigid, 5e-4, 'rk4', q0=[0.3, 0.8])
    sent, applied, measured = [], [], []
    monitor = InputDelayMonitor(2, PERIOD)
    update = controller.update

    def spy(t, q, v, *rest, applied_effort=None):
        measured.append(monitor.measure(t, applied_effort))
        effort = update(t, q, v, *rest, applied_effort=applied_effort)
        sent.append(effort.copy())
        monitor.sent(t, effort)
        return effort
    controller.update = spy
    run = run_lockstep(controller, sim, 0.1, PERIOD, on_tick=lambda s, u: applied.append(
        u.copy()), input_delay=2)
    assert not run.fault and run.ticks == 50
    np.testing.assert_array_equal(applied[:2], np.zeros((2, 2)))
    np.testing.assert_array_equal(applied[2:], sent[:-2])
    assert set(m for m in measured[3:] if m is not None) == {2}
