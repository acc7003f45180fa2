"""Shared strategies of the property-based tests (test_fuzz_*.py): hostile values.

The profiles are registered in conftest.py: ``ci`` (the default: a bounded, derandomized
run inside ``make test``) and ``long`` (``HYPOTHESIS_PROFILE=long``: 10^5 examples per
entry, random; run by hand before submitting, doc/testing.md has its figures).

A value is drawn from one of the classes an entry point must survive: ordinary finite
numbers, huge finite ones (up to 1e300), tiny ones (down to 1e-300), zero, NaN and
+-inf. An array is of the expected size with entries of mixed classes, or of a wrong size.
"""

import math

import numpy as np
from hypothesis import strategies as st

ORDINARY = st.floats(-10.0, 10.0, allow_nan=False)
HUGE = st.floats(1e6, 1e300).flatmap(lambda x: st.sampled_from([x, -x]))
TINY = st.floats(1e-300, 1e-6).flatmap(lambda x: st.sampled_from([x, -x]))
SPECIAL = st.sampled_from([0.0, -0.0, math.nan, math.inf, -math.inf])
ANY_FLOAT = st.one_of(ORDINARY, ORDINARY, HUGE, TINY, SPECIAL)


def floats_of(kind):
    """Entries of one class ('ordinary', 'huge', 'tiny', 'special') or mixed ('any')."""
    return {'ordinary': ORDINARY, 'huge': HUGE, 'tiny': TINY, 'special': SPECIAL,
            'any': ANY_FLOAT}[kind]


@st.composite
def vectors(draw, size, wrong_size=True):
    """A float array of ``size`` (mostly) or of another size, entries of a drawn class."""
    if wrong_size and draw(st.integers(0, 9)) == 0:
        size = draw(st.integers(0, size + 3).filter(lambda n: n != size))
    kind = draw(st.sampled_from(['ordinary', 'ordinary', 'ordinary', 'huge', 'tiny',
                                 'special', 'any']))
    return np.array(draw(st.lists(floats_of(kind), min_size=size, max_size=size)),
                    dtype=float)


def all_finite(*arrays):
    """True if every array is finite."""
    return all(np.all(np.isfinite(np.asarray(a, dtype=float))) for a in arrays)


@st.composite
def mutated(draw, spec, count=st.integers(1, 3)):
    """A copy of the nested mapping ``spec`` with 1-3 mutations at drawn places.

    A mutation drops a key, renames it, gives a value another type (text, list, mapping,
    None, bool, number) or an out-of-range number (negative, zero, huge, NaN, inf).
    """
    import copy
    spec = copy.deepcopy(spec)
    for _ in range(draw(count)):
        places = list(_places(spec))
        container, key = places[draw(st.integers(0, len(places) - 1))]
        action = draw(st.sampled_from(['drop', 'rename', 'retype', 'range', 'range']))
        if action == 'drop':
            container.pop(key)
        elif action == 'rename' and isinstance(container, dict):
            container[str(key) + draw(st.sampled_from(['_', 's', 'X']))] = container.pop(key)
        elif action == 'retype':
            container[key] = draw(st.sampled_from(['text', [], [1.0, 'a'], {}, {'a': 1},
                                                   None, True, 7, 0.5]))
        else:
            container[key] = draw(st.sampled_from([-1.0, 0.0, -1e9, 1e300, math.nan,
                                                   math.inf, -math.inf, 10**12]))
    return spec


def _places(node):
    """Every (container, key) of a nested mapping/list."""
    items = node.items() if isinstance(node, dict) else enumerate(node)
    for key, value in list(items):
        yield node, key
        if isinstance(value, (dict, list)) and value:
            yield from _places(value)


@st.composite
def name_lists(draw, wanted, others=('panda_finger_joint1', 'panda_finger_joint2', 'gripper',
                                     '')):
    """The names of a message for a node that wants ``wanted``: those in any order, each
    sometimes left out (1 in 10), with up to 4 other names (a driver's extra joints, or
    any text) and, 1 in 4, 1 or 2 names doubled, at drawn places."""
    names = [name for name in draw(st.permutations(list(wanted)))
             if draw(st.integers(0, 9)) > 0]
    added = draw(st.lists(st.one_of(st.sampled_from(others), st.text(max_size=8)),
                          max_size=4, unique=True))
    if (names or added) and draw(st.integers(0, 3)) == 0:
        added += draw(st.lists(st.sampled_from(names + added), min_size=1, max_size=2))
    for name in added:
        names.insert(draw(st.integers(0, len(names))), name)
    return names
