"""The Python entry of the model API: argument sizes, results the caller owns, the workspace.

Expected behaviour (a 3-entry acceleration on an nv = 8 model must not return zeros, nor
5 inputs on nu = 2 go onto the modal equations): an array of the wrong size is a
ValueError naming the argument and the size the model expects; a result is the caller's
(a later call does not change it) unless the caller passes ``out=``, which is then
written and returned; every workspace field is documented with a shape, and
`create_data` allocates exactly those shapes. The kernel-cache rule deletes caches older
than the newest source and keeps newer ones.
"""

import os
from pathlib import Path
import time

import numpy as np
import pytest

from flexible_manipulator.mechanics import compiled
from flexible_manipulator.model_config import load_model

MODELS = Path(__file__).resolve().parents[1] / 'config' / 'models'


@pytest.fixture(scope='module')
def arm():
    """The flexible two-link arm: nq = nv = 8 (2 joints, 6 modes), nu = 2."""
    return load_model(str(MODELS / 'two_link_flexible.yaml'))


@pytest.fixture(scope='module')
def sleigh():
    """A free servo sleigh: nq = nv = 3, nu = 1."""
    return load_model(str(MODELS / 'sleigh_free_actuated.yaml'))


def state(model, seed=0):
    rng = np.random.default_rng(seed)
    q = model.neutral_configuration() + 0.1 * rng.standard_normal(model.nq)
    return q, 0.3 * rng.standard_normal(model.nv)


@pytest.mark.parametrize('call, name, size', [
    (lambda m, d, q, v: m.rnea(d, q, v, np.zeros(3)), 'a', 8),
    (lambda m, d, q, v: m.rnea(d, q[:7], v, v), 'q', 8),
    (lambda m, d, q, v: m.forward_dynamics(d, q, v, np.zeros(5)), 'u', 2),
    (lambda m, d, q, v: m.bias_forces(d, q, np.zeros((2, 4))), 'v', 8),
    (lambda m, d, q, v: m.mass_matrix(d, np.append(q, 0.0)), 'q', 8),
    (lambda m, d, q, v: m.section_kinematics(d, q, v[:2], 1, 0.2), 'v', 8),
    (lambda m, d, q, v: m.potential_energy(d, q[:2]), 'q', 8),
])
def test_wrong_sizes_are_refused_by_name(arm, call, name, size):
    data = arm.create_data()
    q, v = state(arm)
    with pytest.raises(ValueError, match=rf'^{name}: model .two_link_flexible. expects '
                                         rf'{size} '):
        call(arm, data, q, v)


def test_servo_model_checks_its_state_sizes(sleigh):
    data = sleigh.create_data()
    with pytest.raises(ValueError, match=r"^q: model 'sleigh_free_actuated' expects 3 "):
        sleigh.bias_forces(data, np.zeros(4), np.zeros(3))
    with pytest.raises(ValueError, match=r"^v: model 'sleigh_free_actuated' expects 3 "):
        sleigh.outputs(data, np.zeros(3), np.zeros(2))


def test_results_belong_to_the_caller(arm):
    """Two calls on one workspace give two arrays; the first keeps its values."""
    data = arm.create_data()
    (q1, v1), (q2, v2) = state(arm, 1), state(arm, 2)
    h1 = arm.bias_forces(data, q1, v1)
    kept = h1.copy()
    h2 = arm.bias_forces(data, q2, v2)
    assert h1 is not h2 and np.array_equal(h1, kept) and not np.array_equal(h1, h2)
    M1 = arm.mass_matrix(data, q1)
    M1_kept = M1.copy()
    arm.mass_matrix(data, q2)
    assert np.array_equal(M1, M1_kept)
    R, p, J, twist, accel = arm.section_kinematics(data, q1, v1, 1, 0.2)
    p_kept = p.copy()
    arm.section_kinematics(data, q2, v2, 1, 0.2)
    assert np.array_equal(p, p_kept)


def test_out_is_written_and_returned(arm):
    """``out=`` gets the same values as the returned copy, and no new array is made."""
    data = arm.create_data()
    q, v = state(arm, 3)
    u = np.array([0.5, -0.2])
    for method, args, shape in (('mass_matrix', (q,), (8, 8)),
                                ('bias_forces', (q, v), (8,)),
                                ('rnea', (q, v, v), (8,)),
                                ('forward_dynamics', (q, v, u), (8,))):
        expected = getattr(arm, method)(data, *args)
        out = np.full(shape, np.nan)
        assert getattr(arm, method)(data, *args, out=out) is out
        np.testing.assert_array_equal(out, expected)
    first = arm.section_kinematics(data, q, v, 1, 0.2)
    again = arm.section_kinematics(data, q, v, 1, 0.2, out=first)
    assert all(a is b for a, b in zip(again, first))
    with pytest.raises(ValueError, match=r'^out: mass_matrix needs an array of shape \(8, 8\)'):
        arm.mass_matrix(data, q, out=np.zeros(8))


def test_cache_rule_drops_what_depends_on_an_edited_source(tmp_path):
    """A kernel's cache goes when the file defining it, or a module it imports directly or
    through another (relative or absolute imports of the package), is newer; it stays when
    only unrelated modules changed, dated at the newest source; a cache whose defining
    file is gone goes too."""
    package = tmp_path / 'flexible_manipulator'
    sub = package / 'sub'
    caches = sub / '__pycache__'
    caches.mkdir(parents=True)
    (package / '__init__.py').write_text('')
    (sub / '__init__.py').write_text('')
    (sub / 'a.py').write_text('from . import b\n')                   # a -> b -> c
    (sub / 'b.py').write_text('from .c import helper\n')
    (sub / 'c.py').write_text('helper = 1\n')
    (sub / 'd.py').write_text('import flexible_manipulator.sub.c\n')  # d -> c (absolute)
    (sub / 'e.py').write_text('import numpy\n')
    (package / 'plain.py').write_text('')                            # imported by no one
    now = time.time()
    for name in ('__init__.py', 'sub/__init__.py', 'sub/a.py', 'sub/b.py', 'sub/d.py',
                 'sub/e.py'):
        os.utime(package / name, (now - 100, now - 100))
    os.utime(sub / 'c.py', (now - 30, now - 30))                     # c edited after...
    os.utime(package / 'plain.py', (now - 1, now - 1))
    for name in ('a.f-1.py311.nbi', 'a.f-1.py311.1.nbc', 'd.g-2.py311.nbi',
                 'e.h-3.py311.nbi', 'gone.k-4.py311.nbi', 'other.pyc'):
        path = caches / name
        path.write_text('')
        os.utime(path, (now - 60, now - 60))                         # ...these caches
    compiled.drop_stale_caches(str(package), package=str(package))
    assert sorted(os.listdir(caches)) == ['e.h-3.py311.nbi', 'other.pyc']
    # the one kept is dated at the newest source (plain.py): the next start finds every
    # cache newer than every source and parses nothing
    assert os.path.getmtime(caches / 'e.h-3.py311.nbi') == pytest.approx(now - 1, abs=1e-3)
    # Every source older than every cache (nothing edited since the compile): all stay,
    # but one whose defining file is gone.
    for name in ('a.f-1.py311.nbi', 'd.g-2.py311.nbi', 'gone.k-4.py311.nbi'):
        (caches / name).write_text('')
    compiled.drop_stale_caches(str(package), package=str(package))
    assert sorted(os.listdir(caches)) == ['a.f-1.py311.nbi', 'd.g-2.py311.nbi',
                                          'e.h-3.py311.nbi', 'other.pyc']


def test_non_finite_arguments_and_overflowing_states_are_refused_by_name(arm):
    """The contract of `mechanics.arguments`: a NaN or inf entry is a ValueError naming the
    argument (not NaN results); finite coordinates the model's arithmetic cannot hold (a
    modal coordinate of 1e200 m: M overflows) a ValueError naming the function; a link
    index outside the chain (even -1, which Python would wrap) names ``link_index``."""
    data = arm.create_data()
    q, v = state(arm)
    bad = v.copy()
    bad[3] = np.inf
    with pytest.raises(ValueError, match='^v: '):
        arm.bias_forces(data, q, bad)
    with pytest.raises(ValueError, match='^v: '):
        arm.forward_dynamics(data, q, bad, np.zeros(arm.nu))
    huge = q.copy()
    huge[2] = 1e200
    with pytest.raises(ValueError, match='^mass_matrix: not finite'):
        arm.mass_matrix(data, huge)
    for index in (-1, 2, 1.0):
        with pytest.raises(ValueError, match='^link_index: '):
            arm.section_pose(data, q, index, 0.1)
    with pytest.raises(ValueError, match='^abscissa '):
        arm.section_pose(data, q, 0, float('nan'))


def test_a_step_that_raises_leaves_the_simulation_where_it_was(arm, monkeypatch):
    """A failing integration step (here the stepper raises, as a singular solve in a NumPy
    model does) is a `StepFailedError` naming the error, with the state and time of before
    the call: the plant node then pauses with that fault. Bad arguments of ``advance`` are
    ValueErrors naming them."""
    from flexible_manipulator.mechanics.simulation import Simulation, StepFailedError
    sim = Simulation(arm, 1e-4, 'rk4')
    sim.advance(np.array([0.5, -0.2]), 1e-3)
    before, time_before = sim.state.copy(), sim.time

    def singular(state, *_):
        state[:] = 1.0
        raise np.linalg.LinAlgError('singular')
    monkeypatch.setattr(sim._stepper, 'advance', singular)
    with pytest.raises(StepFailedError, match='LinAlgError: singular'):
        sim.advance(np.zeros(2), 1e-3)
    np.testing.assert_array_equal(sim.state, before)
    assert sim.time == time_before
    monkeypatch.undo()
    for effort, duration, name in ((np.zeros(3), 1e-3, '^effort: '),
                                   (np.array([np.nan, 0.0]), 1e-3, '^effort: '),
                                   (np.zeros(2), float('inf'), '^duration: ')):
        with pytest.raises(ValueError, match=name):
            sim.advance(effort, duration)
    np.testing.assert_array_equal(sim.state, before)


def test_an_absurd_duration_names_duration(arm):
    """Found by the long fuzzing profile: advance(effort, -3.3e299) raised OverflowError
    (the step count overflowed before the sign was checked); any duration that is not a
    positive whole number of steps is a ValueError naming ``duration``."""
    from flexible_manipulator.mechanics.simulation import Simulation
    sim = Simulation(arm, 1e-4, 'rk4')
    for duration in (-3.3222291561081182e+299, 1e300, float('nan'), '0.1', None):
        with pytest.raises(ValueError, match='^duration: '):
            sim.advance(np.zeros(2), duration)
    assert sim.time == 0.0


def test_advance_through_is_advance_once_per_interval(arm, monkeypatch):
    """`Simulation.advance_through` (the identification's replay) gives the states of
    `advance` called once per interval, bit for bit (expected: the same steps in the same
    order); a failing interval raises as `advance` does and leaves the state after the
    interval before it; efforts of the wrong shape and a duration that is not a whole
    number of steps are ValueErrors naming them."""
    from flexible_manipulator.mechanics.simulation import Simulation, StepFailedError
    rng = np.random.default_rng(4)
    efforts, durations = rng.uniform(-1.0, 1.0, (30, 2)), np.full(30, 2e-3)
    durations[::7] = 4e-3
    one, batch = Simulation(arm, 5e-4, 'rk4'), Simulation(arm, 5e-4, 'rk4')
    expected = []
    for effort, duration in zip(efforts, durations):
        one.advance(effort, duration)
        expected.append(one.state.copy())
    states = np.empty((30, 16))
    batch.advance_through(efforts, durations, states)
    np.testing.assert_array_equal(states, expected)
    assert batch.time == one.time
    with pytest.raises(ValueError, match='^efforts'):
        batch.advance_through(efforts[:, :1], durations, states)
    with pytest.raises(ValueError, match='^duration: '):
        batch.advance_through(efforts[:2], [2e-3, 1.1e-3], states[:2])
    before = batch.state.copy()
    calls = []
    original = batch._stepper.advance

    def fails_third(state, *arguments):
        calls.append(1)
        if len(calls) == 3:
            raise np.linalg.LinAlgError('singular')
        return original(state, *arguments)
    monkeypatch.setattr(batch._stepper, 'advance', fails_third)
    with pytest.raises(StepFailedError, match='LinAlgError: singular'):
        batch.advance_through(efforts[:5], durations[:5], states[:5])
    one.reset()
    one.initial_state[:] = before
    one.reset()
    one.advance(efforts[0], durations[0])
    one.advance(efforts[1], durations[1])
    np.testing.assert_array_equal(batch.state, one.state)


def test_advance_over_takes_intervals_off_the_step_grid(arm):
    """`Simulation.advance_over` (the identification's replay of a real driver's stamps):
    whole numbers of steps take `advance_through`'s steps (expected: the same states, bit
    for bit); an interval d off the grid takes n = ceil(d / step) equal steps d / n
    (expected: bit for bit the states of a `Simulation` whose step is d / n, advanced by
    d); time advances by the intervals' sum; a duration that is not positive and finite
    is a ValueError naming it."""
    import math
    from flexible_manipulator.mechanics.simulation import Simulation
    rng = np.random.default_rng(5)
    efforts = rng.uniform(-1.0, 1.0, (12, 2))
    durations = np.full(12, 2e-3)
    durations[[3, 7, 8]] = [2.3e-3, 1.7e-3, 4.1e-4]
    over, grid = Simulation(arm, 5e-4, 'rk4'), Simulation(arm, 5e-4, 'rk4')
    states = np.empty((12, 16))
    over.advance_over(efforts, durations, states)
    expected = np.empty((12, 16))
    for k, (effort, duration) in enumerate(zip(efforts, durations)):
        whole = abs(duration / 5e-4 - round(duration / 5e-4)) < 1e-9
        if not whole:
            count = math.ceil(duration / 5e-4)
            own = Simulation(arm, duration / count, 'rk4')
            own.initial_state[:] = grid.state
            own.reset()
            own.advance(effort, duration)
            grid.state[:] = own.state
        else:
            grid.advance(effort, duration)
        expected[k] = grid.state
    np.testing.assert_array_equal(states, expected)
    assert over.time == pytest.approx(durations.sum(), rel=1e-12)
    over.reset()
    assert over.time == 0.0
    for bad in (0.0, -1e-3, np.nan, np.inf):
        with pytest.raises(ValueError, match='^durations: '):
            over.advance_over(efforts[:2], [2e-3, bad], states[:2])


@pytest.mark.parametrize('values, expected', [
    ([1.0, -2.0, 3.0], True),
    ([1.0, np.inf], False),
    ([np.nan, 1.0], False),
    ([np.inf, -np.inf], False),                 # the sum is NaN, not a finite number
    ([1e308, 1e308, -1e308], True),             # the sum overflows: the exact test decides
    ([1e200] * 100, True),                      # a long vector: sum of squares, then exact
    ([1e200] * 99 + [np.nan], False),
    ([[1e200, 1.0], [2.0, 3.0]], True),          # a matrix
    ([[1.0, np.nan], [2.0, 3.0]], False),
])
def test_finite_is_true_exactly_when_every_entry_is_finite(values, expected):
    """`arguments.finite`'s fast sums must never accept an infinity or a NaN, and an
    overflowing sum of finite entries must not refuse them (oracle: np.isfinite)."""
    from flexible_manipulator.mechanics import arguments
    array = np.array(values, dtype=float)
    assert bool(np.isfinite(array).all()) == expected
    assert arguments.finite(array) is expected
