"""A node's cache of the compiled kernels, wherever the package's copy lies (a Ray node).

Numba keys a kernel's cache on its defining file's content, but under ``NUMBA_CACHE_DIR``
its directory is named after that file's absolute path. A package shipped to a Ray node is
unpacked in a directory of that node's session, a new one whenever the cluster starts, so
those keys would change with each start. `PackageCacheLocator` names the directory after
the package's sources and the file's place among them instead:
``NUMBA_CACHE_DIR/flexible_manipulator-<digest of every source>/<subpackage>/``, the same
for every copy of the same sources. A node then compiles the kernels once, on first use,
and later studies and later cluster starts load them. The digest covers every module, as
a kernel embeds the code of helpers from other files (`mechanics.compiled`): another
version of the package compiles into a directory of its own (old ones can be deleted).
The layout of each directory is that of the source checkout's ``__pycache__``.

A study on a cluster names it through numba's ``NUMBA_CACHE_LOCATOR_CLASSES``
(`LOCATORS`, set by `cluster.runtime_env`); a node without ``NUMBA_CACHE_DIR`` falls back
to numba's own locators. `ready_marker` is the file a node's first warm-up leaves beside
the kernels, so the driver knows which nodes compile (`cluster.prepare_nodes`).
"""

import functools
import hashlib
import os

from numba.core import caching, config

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = os.path.basename(PACKAGE)
LOCATORS = ','.join([f'{__name__}.PackageCacheLocator', 'UserProvidedCacheLocator',
                     'InTreeCacheLocator', 'UserWideCacheLocator', 'IPythonCacheLocator',
                     'ZipCacheLocator'])


class PackageCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    """``NUMBA_CACHE_DIR/flexible_manipulator/<source's directory in the package>``."""

    def __init__(self, py_func, py_file):
        """Locate the cache of ``py_func``, defined in ``py_file`` (inside the package)."""
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        inside = os.path.relpath(os.path.dirname(os.path.abspath(py_file)), PACKAGE)
        self._cache_path = os.path.join(cache_directory(), inside)

    def get_cache_path(self):
        """Return the directory of the function's cache files."""
        return self._cache_path

    @classmethod
    def from_function(cls, py_func, py_file):
        """Return a locator for a function of this package with NUMBA_CACHE_DIR set, or None."""
        inside = os.path.abspath(py_file).startswith(PACKAGE + os.sep)
        if not config.CACHE_DIR or not inside:
            return None
        return super().from_function(py_func, py_file)


@functools.lru_cache(maxsize=None)
def sources_digest():
    """Return a digest of the package's Python sources (names and contents)."""
    digest = hashlib.sha256()
    for root, directories, files in os.walk(PACKAGE):
        directories[:] = sorted(d for d in directories if d != '__pycache__')
        for name in sorted(f for f in files if f.endswith('.py')):
            path = os.path.join(root, name)
            digest.update(os.path.relpath(path, PACKAGE).encode() + b'\0')
            with open(path, 'rb') as stream:
                digest.update(stream.read())
    return digest.hexdigest()[:16]


def cache_directory():
    """Return this process's kernel cache of the package (None: numba's own locators)."""
    if not config.CACHE_DIR:
        return None
    return os.path.join(config.CACHE_DIR, f'{NAME}-{sources_digest()}')


def ready_marker():
    """Return the path of the file saying these sources' kernels are compiled here."""
    directory = cache_directory()
    if directory is None:       # numba's own locators: beside the sources
        return os.path.join(PACKAGE, '__pycache__', f'kernels-ready-{sources_digest()}')
    return os.path.join(directory, 'kernels-ready')
