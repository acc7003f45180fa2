"""How the package compiles its kernels with numba: one set of decorators for all of them.

* ``jit``: a cached kernel. ``_nrt=False`` turns off numba's reference counting of array
  views (it dominated the run time) and makes allocation inside a kernel impossible.
  fastmath is on without ``nnan``/``ninf``, so the finiteness and blow-up checks still see
  NaN and infinity.
* ``inline``: the same, inlined at every call site. Helpers that take a model's constant
  tuple or its workspace tuple are inlined: a call would pass every array of the tuple.
* ``allocating``: a cached kernel with reference counting on, for small solves that call
  LAPACK through ``np.linalg`` (which allocates its results): the controller's tick
  (``control.control_kernels``), never a chain kernel.
* ``template``: an inlined, uncached generic routine (the integrators' steppers) that a
  model module instantiates with its own compiled functions as globals; passing those as
  run-time arguments to a cached kernel breaks numba's on-disk cache.

Numba's cache of a kernel is keyed by the time stamp of the file that defines it only, but
a kernel embeds the code of the helpers and templates it calls from other files. The rule
here cannot miss a dependency however the files are split: when this module is imported
(before any kernel compiles), every cache file under `mechanics/` older than the newest
kernel source is deleted, so an edit to any kernel file recompiles them all. A kernel
source is a ``.py`` file under `mechanics/` that names numba or this module (only such a
file can define or call compiled code); plain NumPy modules (``lie``, ``cosserat``, ...)
can change without a recompile.
"""

import glob
import os

import numba

FASTMATH = {'contract', 'reassoc', 'arcp', 'nsz'}
jit = numba.njit(cache=True, nogil=True, _nrt=False, fastmath=FASTMATH)
inline = numba.njit(cache=True, nogil=True, inline='always', _nrt=False, fastmath=FASTMATH)
allocating = numba.njit(cache=True, nogil=True, fastmath=FASTMATH)
template = numba.njit(nogil=True, _nrt=False, inline='always')


KERNEL_SOURCES = os.path.dirname(os.path.abspath(__file__))


def _is_kernel_source(path):
    """Whether the file at ``path`` names numba or this module (module doc)."""
    with open(path, encoding='utf-8') as stream:
        text = stream.read()
    return 'numba' in text or 'compiled' in text


def _newest_source(sources):
    """Return the modification time of the newest kernel source under ``sources`` [s]."""
    paths = glob.glob(os.path.join(sources, '**', '*.py'), recursive=True)
    return max(os.path.getmtime(path) for path in paths if _is_kernel_source(path))


def drop_stale_caches(directory=KERNEL_SOURCES, sources=KERNEL_SOURCES):
    """Delete the numba cache files under ``directory`` older than any file of ``sources``.

    Also for code outside the package whose cached kernels inline the package's (bench/).
    """
    newest = _newest_source(sources)
    pattern = os.path.join(directory, '**', '__pycache__', '*.nb[ci]')
    for path in glob.glob(pattern, recursive=True):
        try:
            if os.path.getmtime(path) < newest:
                os.remove(path)
        except OSError:         # another process removed it, or a read-only install
            pass


def entry_point(kernel, *args):
    """Return a callable running ``kernel``'s machine code for the types of ``args``.

    A numba dispatcher resolves the types of every argument on each call, which for a
    model's constant and workspace tuples (~130 arrays) costs ~9 us. The compiled entry
    point of the matching overload skips that; it still unboxes each array (~45 ns: a
    chain's kernels therefore take tables, `tuple_tables`). The
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


drop_stale_caches()
