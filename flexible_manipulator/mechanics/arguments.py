"""Checks at the Python entry of the model API: what a caller passes in, what it gets back.

The contract of every model function (mass matrix, bias forces, forward dynamics, section
kinematics, energy): it returns a finite result or raises `ValueError` whose message starts
with the name of what is wrong. A kernel reads as many entries as the model has, so a short
or long array would silently give a wrong answer (zeros, or inputs on the modal
equations): the check names the argument, what it is, and the size the model expects. A
non-finite entry is refused by name too. Finite coordinates far outside the physical range
(a deflection of 1e200 m) can overflow the model's arithmetic: such a result is not
returned but refused (`result`), naming the function.
"""

import math

import numpy as np

FLOAT = np.dtype(np.float64)
UNIT_STRIDE = (FLOAT.itemsize,)      # strides of a C-contiguous float64 vector
SHORT = 64                           # vectors up to this length: `finite` sums a list


def vector(name, values, size, model, meaning):
    """``values`` as a float64 C-contiguous vector of length ``size``, or ValueError.

    ``model``: the model's name, ``meaning``: what the entries are (for the message),
    e.g. ``vector('q', q, model.nq, model.name, 'coordinates (nq)')``.
    """
    if values.__class__ is np.ndarray and values.dtype is FLOAT and values.shape == (size,) \
            and values.flags.c_contiguous:
        array = values                  # the common case, checked without a conversion
    else:
        try:
            array = np.ascontiguousarray(values, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f'{name}: model {model!r} expects {size} {meaning}, got '
                             f'{type(values).__name__} {str(values)[:60]}') from None
        if array.shape != (size,):
            raise ValueError(f'{name}: model {model!r} expects {size} {meaning}, got an '
                             f'array of shape {array.shape}')
    if not finite(array):
        raise ValueError(f'{name}: model {model!r} got non-finite {meaning} '
                         f'{array.tolist()[:12]}')
    return array


def finite(array):
    """Tell whether all entries of the float ``array`` are finite; allocation-free if so.

    A finite sum (of the entries of a short vector, as Python floats: the cheapest test
    for the vectors of one call; else of the squares) means every entry is finite: an
    infinity or a NaN makes the sum infinite or NaN. A sum that overflows although every
    entry is finite is settled by the exact, allocating test.
    """
    if array.ndim == 1 and array.shape[0] <= SHORT:
        if math.isfinite(sum(array.tolist())):
            return True
    elif math.isfinite(np.vdot(array, array)):
        return True
    return bool(np.isfinite(array).all())


def checked(array, name):
    """Return the result ``array`` if finite, else ValueError naming the function ``name``."""
    if not finite(array):
        raise ValueError(f'{name}: not finite at this state: the coordinates are beyond what '
                         'the model can evaluate')
    return array


def finite_value(value, name):
    """Return ``value`` (a number) if finite, else ValueError naming the function."""
    if not math.isfinite(value):
        raise ValueError(f'{name}: not finite at this state ({value}): the coordinates are '
                         'beyond what the model can evaluate')
    return value


def result(value, out, name):
    """Return a copy of the workspace array ``value``, or write it into ``out`` and return it.

    ``out`` (optional) is the caller's preallocated array of ``value``'s shape: a hot loop
    passes one and allocates nothing; otherwise the caller gets a value that the next call
    on the same workspace does not overwrite. A non-finite ``value`` (finite arguments
    beyond what the model's arithmetic holds) raises ValueError naming ``name``.
    """
    return copied(checked(value, name), out, name)


def copied(value, out, name):
    """Return `result` of a ``value`` known to be finite: a copy, or ``out`` written."""
    if out is None:
        return value.copy()
    if not isinstance(out, np.ndarray) or out.shape != value.shape:
        raise ValueError(f'out: {name} needs an array of shape {value.shape}, got '
                         f'{getattr(out, "shape", type(out).__name__)}')
    out[...] = value
    return out


def is_real(value):
    """Tell whether ``value`` is a real number (Python or NumPy, not a bool)."""
    return isinstance(value, (int, float, np.integer, np.floating)) \
        and not isinstance(value, (bool, np.bool_))


def link_index(value, count, model):
    """``value`` as the index of one of the model's ``count`` links, or ValueError."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
            or not 0 <= value < count:
        raise ValueError(f'link_index: model {model!r} has links 0 to {count - 1}, got '
                         f'{value!r}')
    return int(value)


def abscissa(value, length, link):
    """``value`` as a section's abscissa on a link of ``length`` [m], or ValueError."""
    if not is_real(value) or not 0.0 <= value <= length:
        raise ValueError(f'abscissa {value!r} m is outside link {link!r} (0 to {length} m)')
    return float(value)
