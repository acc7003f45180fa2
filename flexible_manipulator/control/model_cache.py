"""What the start-up checks compute from a model object, kept with that object.

A controller's programs, its laws and their robustness checks linearize the same plants
(the model and its perturbed copies, ``mechanics.perturbation``) at the same poses and
periods: each program and each candidate law would otherwise rebuild and linearize them
again. A model is not changed once built, so a result computed from it (and from keys of
plain numbers) stays true while the object lives. Results are kept per model object
(weakly: they go with the model), at most `KEPT` per model, the oldest dropped first (the
margin's bisection meets plants of many scales). Arrays kept are made read-only: a caller
that wrote into one would change every later check's answer.
"""

import weakref

import numpy as np

KEPT = 256          # results kept per model object

_KEPT = weakref.WeakKeyDictionary()     # model -> {key: result}


def kept(model, key, compute):
    """Return ``compute()`` for (``model``, ``key``), computed once while ``model`` lives.

    ``key``: hashable, of plain values (numbers, strings, bytes of arrays). ``compute``
    returns an array, a tuple of arrays and other values, or an object; its arrays are made
    read-only. An exception from ``compute`` is raised and nothing is kept.
    """
    known = _KEPT.get(model)
    if known is None:
        known = _KEPT[model] = {}
    if key not in known:
        value = compute()
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, np.ndarray):
                item.flags.writeable = False
        if len(known) >= KEPT:
            known.pop(next(iter(known)))
        known[key] = value
    return known[key]
