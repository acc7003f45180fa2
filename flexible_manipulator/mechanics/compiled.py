"""How the package compiles its kernels with numba: one set of decorators for all of them.

* ``jit``: a cached kernel. ``_nrt=False`` turns off numba's reference counting of array
  views (it dominated the run time) and makes allocation inside a kernel impossible.
  fastmath is on without ``nnan``/``ninf``, so the finiteness and blow-up checks still see
  NaN and infinity.
* ``inline``: the same, inlined at every call site: the per-link helpers that take a
  model's constant tuple or its workspace tuple (a call would pass every array of the
  tuple). An algorithm over the whole chain is instead a ``jit`` unit on the two tables of
  those tuples (`tuple_tables`), called, not inlined, by the kernels built on it: numba
  compiles it once, where an inlined recursion was compiled again inside every kernel. A
  constant flag passed to a unit is written ``bool(False)``: a bare ``False`` is typed as
  a literal, and numba would compile the unit once more for it.
* ``allocating``: a cached kernel with reference counting on, for small solves that call
  LAPACK through ``np.linalg`` (which allocates its results): the controller's tick
  (``control.control_kernels``), never a chain kernel.
* ``template``: an inlined, uncached generic routine (the integrators' steppers) that a
  model module instantiates with its own compiled functions as globals; passing those as
  run-time arguments to a cached kernel breaks numba's on-disk cache.

Numba's cache of a kernel is keyed by the time stamp of the file that defines it only, but
a kernel embeds the code of the helpers and templates it calls from other files. So, when
this module is imported (before any kernel compiles), a cache file goes if it is older than
the file that defines its kernel or any package module that file imports, directly or
through others (`dependencies`: the package's import graph, read from the sources): a
kernel's code can only come from what its module imports when it is imported. An edit
recompiles what depends on the edited file: a link kind's kernels or its ``LinkKind``
(``links.<kind>``, through which ``model.layout`` reads the kinds' rows of the arrays)
recompile the chain walk and what is built on it but leave the servo and controller
kernels cached, a docstring of ``link_description`` or the chain model's Python class
(which no kernel imports) recompiles nothing, an edit of this module recompiles
everything.
"""

import ast
import glob
import math
import os

import numba

FASTMATH = {'contract', 'reassoc', 'arcp', 'nsz'}
jit = numba.njit(cache=True, nogil=True, _nrt=False, fastmath=FASTMATH)
inline = numba.njit(cache=True, nogil=True, inline='always', _nrt=False, fastmath=FASTMATH)
allocating = numba.njit(cache=True, nogil=True, fastmath=FASTMATH)
template = numba.njit(nogil=True, _nrt=False, inline='always')


KERNEL_SOURCES = os.path.dirname(os.path.abspath(__file__))
# The package whose caches the rule keeps (mechanics/ and control/ define kernels).
PACKAGE = os.path.dirname(KERNEL_SOURCES)


def _module_path(directory, dotted):
    """Return the source file of module ``dotted`` under ``directory``, or None."""
    base = os.path.join(directory, *dotted.split('.')) if dotted else directory
    for path in (base + '.py', os.path.join(base, '__init__.py')):
        if os.path.isfile(path):
            return path
    return None


def _imports(path, package):
    """Return the files of ``package`` (its directory) that the module at ``path`` imports.

    Its own import statements run at import time (`_module_level`), relative or absolute;
    names imported from a package that are its submodules count as those modules.
    """
    root = os.path.dirname(package)
    package_name = os.path.basename(package)
    with open(path, encoding='utf-8') as stream:
        tree = ast.parse(stream.read(), path)
    found = set()
    for node in _module_level(tree):
        if isinstance(node, ast.Import):
            targets = [(root, alias.name, ()) for alias in node.names
                       if alias.name.split('.')[0] == package_name]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = os.path.dirname(path)
                for _ in range(node.level - 1):
                    base = os.path.dirname(base)
            elif (node.module or '').split('.')[0] == package_name:
                base = root
            else:
                continue
            targets = [(base, node.module or '', [alias.name for alias in node.names])]
        else:
            continue
        for base, module, names in targets:
            submodules = [_module_path(base, f'{module}.{name}' if module else name)
                          for name in names]
            found.update(p for p in submodules if p)
            if len([p for p in submodules if p]) < len(names) or not names:
                owner = _module_path(base, module)
                if owner:
                    found.add(owner)
    return found


def _module_level(tree):
    """Yield the statements a module runs when imported (not its functions' or classes').

    An import inside a function runs when the function is called, from Python: a
    kernel's code (its globals, resolved at compile time) cannot come from it.
    """
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            pending.extend(child for child in ast.iter_child_nodes(node)
                           if isinstance(child, (ast.stmt, ast.excepthandler)))


def dependencies(path, memo=None, package=PACKAGE):
    """Return the source files whose code a kernel defined in ``path`` can embed.

    ``path`` and every module of ``package`` it imports, directly or through others;
    ``memo``: a dict shared between calls.
    """
    memo = {} if memo is None else memo
    path = os.path.abspath(path)
    if path not in memo:
        memo[path] = {path}
        pending = [path]
        while pending:
            for imported in _imports(pending.pop(), package):
                imported = os.path.abspath(imported)
                if imported not in memo[path]:
                    memo[path].add(imported)
                    pending.append(imported)
    return memo[path]


def _newest_source(directory, package):
    """Return the newest modification time [s] of the sources in ``directory``, ``package``."""
    sources = set(glob.glob(os.path.join(directory, '**', '*.py'), recursive=True))
    sources.update(glob.glob(os.path.join(package, '**', '*.py'), recursive=True))
    return max((os.path.getmtime(source) for source in sources), default=0.0)


def drop_stale_caches(directory=PACKAGE, package=PACKAGE):
    """Delete the numba cache files under ``directory`` older than what their kernel embeds.

    A cache file ``<dir>/__pycache__/<module>.<function>-<line>...nb[ci]`` belongs to the
    kernel defined in ``<dir>/<module>.py``; it goes if that file is missing or if it or
    any of its `dependencies` in ``package`` is newer. Also for code outside the package
    whose cached kernels inline the package's (bench/: its absolute imports of the package
    count).
    """
    memo, newest = {}, {}
    pattern = os.path.join(directory, '**', '__pycache__', '*.nb[ci]')
    caches = {path: os.path.join(os.path.dirname(os.path.dirname(path)),
                                 os.path.basename(path).split('.')[0] + '.py')
              for path in glob.glob(pattern, recursive=True)}
    # Every cache newer than every source (nothing edited since the compile, or since a
    # pass below): none is stale, and no source needs parsing (each start of a node).
    try:
        source_time = _newest_source(directory, package)
        if (all(os.path.isfile(module) for module in caches.values())
                and all(os.path.getmtime(path) >= source_time for path in caches)):
            return
    except OSError:                     # a file removed meanwhile: the careful pass
        source_time = math.inf
    for path, module in caches.items():
        try:
            if module not in newest:
                newest[module] = (max(os.path.getmtime(p)
                                      for p in dependencies(module, memo, package))
                                  if os.path.isfile(module) else math.inf)
            stamp = os.path.getmtime(path)
            if stamp < newest[module]:
                os.remove(path)
            elif stamp < source_time < math.inf:
                # Fresh: newer than all it embeds. Dated at the newest source, so that the
                # check above passes next time; an edit after now still dates later.
                os.utime(path, (source_time, source_time))
        except (OSError, SyntaxError):  # removed by another process, read-only, mid-edit
            pass


def entry_point(kernel, *args):
    """Return a callable running ``kernel``'s machine code for the types of ``args``.

    A numba dispatcher resolves the types of every argument on each call, which for a
    model's constant and workspace tuples (~130 arrays) costs more than a small kernel's
    work. The compiled entry point of the matching overload skips that; it still unboxes
    each array (a chain's kernels therefore take tables, `tuple_tables`). The
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
