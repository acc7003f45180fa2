"""Checks at the Python entry of the model API: sizes of the arrays a caller passes in.

A kernel reads as many entries as the model has, so a short or long array would silently
give a wrong answer (zeros, or inputs on the modal equations); the check names the
argument, what it is, and the size the model expects.
"""

import numpy as np

FLOAT = np.dtype(np.float64)
UNIT_STRIDE = (FLOAT.itemsize,)      # strides of a C-contiguous float64 vector


def vector(name, values, size, model, meaning):
    """``values`` as a float64 C-contiguous vector of length ``size``, or ValueError.

    ``model``: the model's name, ``meaning``: what the entries are (for the message),
    e.g. ``vector('q', q, model.nq, model.name, 'coordinates (nq)')``.
    """
    if values.__class__ is np.ndarray and values.dtype is FLOAT and values.shape == (size,) \
            and values.flags.c_contiguous:
        return values                   # the common case, checked without a conversion
    array = np.ascontiguousarray(values, dtype=np.float64)
    if array.shape != (size,):
        raise ValueError(f'{name}: model {model!r} expects {size} {meaning}, got an array '
                         f'of shape {array.shape}')
    return array


def result(value, out, name):
    """Return a copy of the workspace array ``value``, or write it into ``out`` and return it.

    ``out`` (optional) is the caller's preallocated array of ``value``'s shape: a hot loop
    passes one and allocates nothing; otherwise the caller gets a value that the next call
    on the same workspace does not overwrite.
    """
    if out is None:
        return value.copy()
    if not isinstance(out, np.ndarray) or out.shape != value.shape:
        raise ValueError(f'out: {name} needs an array of shape {value.shape}, got '
                         f'{getattr(out, "shape", type(out).__name__)}')
    out[...] = value
    return out
