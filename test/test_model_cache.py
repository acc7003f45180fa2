"""Results kept with a model object (control/model_cache.py) and the checks that use them.

Expected values: the module's contract (computed once per model object and key, arrays
read-only, at most KEPT per model, gone with the model, nothing kept on an exception), and
for the start-up checks, the same linearization as one computed afresh on another object
loaded from the same file (bit for bit: the same arithmetic on the same numbers).
"""

import gc
import os

import numpy as np
import pytest

from flexible_manipulator.control import model_cache
from flexible_manipulator.control.loop_checks import LinearLoop
from flexible_manipulator.control.uncertainty import plant
from flexible_manipulator.model_config import load_model
from conftest import CONFIG


class Model:
    """A stand-in for a model object: the cache keys on identity only."""


def test_a_result_is_computed_once_per_model_object_and_key():
    calls = []

    def compute():
        calls.append(1)
        return np.arange(3.0), 'label'
    one, other = Model(), Model()
    first = model_cache.kept(one, ('a', 1), compute)
    assert model_cache.kept(one, ('a', 1), compute) is first and len(calls) == 1
    model_cache.kept(one, ('a', 2), compute)
    model_cache.kept(other, ('a', 1), compute)
    assert len(calls) == 3
    with pytest.raises(ValueError, match='read-only'):
        first[0][0] = 1.0


def test_at_most_kept_results_per_model_the_oldest_dropped_first():
    one, calls = Model(), []
    for k in range(model_cache.KEPT + 1):
        model_cache.kept(one, k, lambda k=k: calls.append(k) or k)
    model_cache.kept(one, model_cache.KEPT, lambda: calls.append('again'))   # still kept
    model_cache.kept(one, 0, lambda: calls.append('again') or 0)             # dropped
    assert calls[-1] == 'again' and calls.count('again') == 1


def test_results_go_with_their_model_and_an_exception_keeps_nothing():
    gc.collect()        # models of earlier tests held in cycles only: collected first
    one = Model()
    model_cache.kept(one, 'x', lambda: 1.0)
    count = len(model_cache._KEPT)
    del one
    gc.collect()
    assert len(model_cache._KEPT) == count - 1
    two = Model()

    def fails():
        raise ValueError('no rest')
    with pytest.raises(ValueError, match='no rest'):
        model_cache.kept(two, 'x', fails)
    assert model_cache.kept(two, 'x', lambda: 2.0) == 2.0


def test_the_checks_linearization_is_the_one_computed_afresh():
    """Two laws on one model object share the plants' linearizations; a third on another
    object of the same file computes its own, equal bit for bit; a perturbed plant is
    built once per model object."""
    path = os.path.join(CONFIG, 'models', 'two_link_flexible.yaml')
    model, fresh = load_model(path), load_model(path)
    joints = np.array([0.3, -0.6])
    first = LinearLoop(model, model, joints, 0.002, 'servo')
    second = LinearLoop(model, model, joints, 0.002, 'servo')
    other_period = LinearLoop(model, model, joints, 0.001, 'servo')
    afresh = LinearLoop(fresh, fresh, joints, 0.002, 'servo')
    assert second.Phi is first.Phi and second.A is first.A
    assert other_period.A is first.A and other_period.Phi is not first.Phi
    for name in ('q0', 'A', 'Bz', 'Phi', 'Gamma', 'Mc', 'Kc', 'Mc_inv'):
        assert np.array_equal(getattr(first, name), getattr(afresh, name)), name
    factors = {'stiffness': 0.8, 'payload': 1.5}
    assert plant(model, factors) is plant(model, dict(reversed(factors.items())))
    assert plant(fresh, factors) is not plant(model, factors)
    on_plant = first.for_plant(plant(model, factors))
    assert not np.array_equal(on_plant.Phi, first.Phi)
    assert np.array_equal(on_plant.Phi, afresh.for_plant(plant(fresh, factors)).Phi)
