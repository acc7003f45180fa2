"""`nodes.common.Every`: the thinning of /tf (plant) and ~/residuals, ~/reference
(controllers) to one message per period of simulated time, and the held-state rule.

Expected values follow from the rule's statement in its docstring: due at the first state at
or past each multiple of the period, at a state earlier than the last one sent, and (held)
at a state that comes again once the period passed in wall time since the last one sent.
Wall time is a stand-in clock here (the rule reads `time.monotonic`)."""
import pytest

from flexible_manipulator.nodes import common


@pytest.fixture
def clock(monkeypatch):
    """A wall clock the test advances: ``clock[0]`` [s]."""
    now = [100.0]
    monkeypatch.setattr(common.time, 'monotonic', lambda: now[0])
    return now


def test_one_per_period_of_simulated_time_and_again_after_a_reset(clock):
    every = common.Every(0.01)
    times = [0.002 * k for k in range(16)]          # 2 ms states, 0 to 0.03 s
    sent = [t for t in times if every.due(t)]
    # First at or past 0, 0.01, 0.02, 0.03 (0.002 k is not exact: the rule allows 1e-9 p).
    assert sent == pytest.approx([0.0, 0.01, 0.02, 0.03], abs=1e-12)
    assert every.due(0.004)                         # earlier than the last sent: a reset
    assert not every.due(0.006) and every.due(0.01)


def test_without_held_a_state_that_comes_again_is_sent_once(clock):
    every = common.Every(0.01)
    assert every.due(0.004) is True                 # past 0: the first multiple
    clock[0] += 10.0
    assert not any(every.due(0.004) for _ in range(3))


def test_held_a_state_that_comes_again_is_sent_once_per_period_of_wall_time(clock):
    every = common.Every(0.01, held=True)
    assert every.due(0.0)
    assert not every.due(0.002)                     # a new state, not yet due
    assert not every.due(0.002)                     # again, but no period of wall time yet
    clock[0] += 0.01
    assert every.due(0.002)                         # again, a period of wall time later
    assert not every.due(0.002)
    clock[0] += 0.02
    # A new state is never due by the wall-time rule (a plant behind real time would
    # otherwise send two messages a period).
    assert not every.due(0.004)
    assert every.due(0.004)                         # the same state again
    assert every.due(0.01)                          # the next multiple, as without held


def test_period_zero_sends_every_state(clock):
    every = common.Every(0.0, held=True)
    assert all(every.due(t) for t in (0.0, 0.0, 0.002, 0.001))
