"""How the package compiles its kernels with numba: one set of decorators for all of them.

* ``jit``: a cached kernel. ``_nrt=False`` turns off numba's reference counting of array
  views (it dominated the run time) and makes allocation inside a kernel impossible.
  fastmath is on without ``nnan``/``ninf``, so the finiteness and blow-up checks still see
  NaN and infinity.
* ``inline``: the same, inlined at every call site. Helpers that take a model's constant
  tuple or its workspace tuple are inlined: a call would pass every array of the tuple.
* ``template``: an inlined, uncached generic routine (the integrators' steppers) that a
  model module instantiates with its own compiled functions as globals; passing those as
  run-time arguments to a cached kernel breaks numba's on-disk cache.

Numba's cache of a kernel is keyed by the time stamp of the file that defines it only, but
a kernel embeds the code of the helpers and templates it calls from other files; a module
of kernels therefore calls `drop_stale_cache` with those files before anything compiles.
"""

import glob
import os

import numba

FASTMATH = {'contract', 'reassoc', 'arcp', 'nsz'}
jit = numba.njit(cache=True, nogil=True, _nrt=False, fastmath=FASTMATH)
inline = numba.njit(cache=True, nogil=True, inline='always', _nrt=False, fastmath=FASTMATH)
template = numba.njit(nogil=True, _nrt=False, inline='always')


def drop_stale_cache(module_file, *dependencies):
    """Delete the numba cache of ``module_file`` if it is older than any of ``dependencies``.

    Paths are absolute or relative to this package directory (``'integrators.py'``).
    """
    here = os.path.dirname(os.path.abspath(__file__))
    newest = max(os.path.getmtime(os.path.join(here, name)) for name in dependencies)
    directory, name = os.path.split(os.path.abspath(module_file))
    stem = os.path.splitext(name)[0]
    for path in glob.glob(os.path.join(directory, '__pycache__', f'{stem}.*.nb[ci]')):
        if os.path.getmtime(path) < newest:
            os.remove(path)


def entry_point(kernel, *args):
    """Return a callable running ``kernel``'s machine code for the types of ``args``.

    A numba dispatcher resolves the types of every argument on each call, which for a
    model's constant and workspace tuples (~100 arrays) costs ~9 us. The compiled entry
    point of the matching overload skips that (it still unboxes the arrays, ~2 us). The
    kernel is compiled (or loaded from the cache) first. The caller must then pass
    arguments of exactly these types (float64 C-contiguous arrays where ``args`` had
    them). If numba's internals ever change shape, the dispatcher itself is returned.
    """
    types = tuple(numba.typeof(a) for a in args)
    kernel.compile(types)
    try:
        return kernel.overloads[types].entry_point
    except (AttributeError, KeyError, TypeError):       # pragma: no cover - numba changed
        return kernel
