"""One run of a study, in whichever process runs it (a local worker, a Ray worker).

`run_one` never raises for a run that fails: the row says ``status: error`` and why. The
process keeps what every run of a study shares (`warm`): the base graph, parsed, and the
numba kernels, loaded from their on-disk cache by one short run of the base graph the
first time the process sees the study (a few seconds to load them, against a fraction of
a second per run after; bench/README.md). The rows say which process ran them
(``worker``), how many warm-ups that process did (``worker_warmups``: 1, once per study)
and the run's rank among the runs it did (``worker_run``: 1, 2, ...), and on which node
(``node``: the Ray node's id, or the host's name for a local worker).

On a Ray cluster the base graph travels in the payload, parsed by the driver, so a node
needs no copy of the study's files (only of a ``urdf:`` file a model names, at the same
path); `kernel_state` and `warm_node` let the driver compile each node's kernels once
before the runs (`cluster.prepare_nodes`). A recording is written where the payload says:
a directory (the driver's output, or a shared file system), or a temporary file whose
bytes the row carries back to the driver (``mcap_data``), which writes it.
"""

import os
import shutil
import socket
import tempfile
import time
import traceback

from ..closed_loop import load_graph, run_closed_loop
from ..config_checks import ConfigError

_STATE = {'digest': None, 'graph': None, 'warmups': 0, 'runs': 0}


def node_name(payload):
    """Return the node this process runs on: the Ray node's id, else the host's name."""
    if payload.get('ray'):
        import ray
        return ray.get_runtime_context().get_node_id()
    return socket.gethostname()


def warm(payload):
    """Prepare this process for the study ``payload`` once; True if it did now.

    ``payload``: the study's digest, base graph (``graph``, parsed; else ``params_file``
    and ``base_values``), duration, mode.
    """
    if _STATE['digest'] == payload['digest']:
        return False
    graph = payload.get('graph') or load_graph(payload['params_file']).with_values(
        payload['base_values'])
    if payload['mode'] == 'closed_loop':
        try:
            # Loads (or compiles) the kernels this study's runs call, once per process.
            run_closed_loop(graph, 2 * graph.plant_parameters()['update_period'])
        except (ConfigError, ArithmeticError, ValueError, RuntimeError):
            pass          # the base itself fails to run: each run reports its own error
    _STATE.update(digest=payload['digest'], graph=graph, warmups=_STATE['warmups'] + 1)
    return True


def kernel_state(payload):
    """Return this node's kernel cache state: node, host, package copy, cache, cached."""
    from .kernel_cache import cache_directory, ready_marker
    import flexible_manipulator
    return {'node': node_name(payload), 'host': socket.gethostname(),
            'package': os.path.dirname(flexible_manipulator.__file__),
            'cache': cache_directory(),
            'cached': os.path.exists(ready_marker())}


def warm_node(payload, processes=1):
    """Compile the kernels on this node, then warm this process for ``payload``; the seconds.

    The kernels are compiled as everywhere else, by `compile_kernels` (``--only demo``,
    in ``processes`` processes of its own): a kernel's machine code depends on whether the
    units it calls were compiled in the same process, so compiling them the one way keeps
    every node's figures those of a local run, bit for bit. What else the study's runs
    call compiles on first use.
    """
    import subprocess
    import sys
    import flexible_manipulator
    from .kernel_cache import ready_marker
    start_time = time.perf_counter()
    # The copy this process runs (shipped, or on the driver's path), not another install.
    root = os.path.dirname(os.path.dirname(os.path.abspath(flexible_manipulator.__file__)))
    path = os.pathsep.join([root] + ([os.environ['PYTHONPATH']]
                                     if os.environ.get('PYTHONPATH') else []))
    done = subprocess.run([sys.executable, '-m', 'flexible_manipulator.compile_kernels',
                           '--only', 'demo', '--workers', str(processes)],
                          capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=path))
    if done.returncode:
        raise RuntimeError('compile_kernels failed: ' + (done.stderr or done.stdout)[-2000:])
    warm(payload)
    marker = ready_marker()
    os.makedirs(os.path.dirname(marker), exist_ok=True)
    with open(marker, 'w') as stream:
        stream.write(f'{time.perf_counter() - start_time:.1f} s\n')
    return time.perf_counter() - start_time


def start(payload):
    """Warm up a local worker process before its first run (its initializer)."""
    warm(payload)


def run_one(payload, run):
    """Run ``run`` ({'run', 'key', 'draw', 'values'}) of the study ``payload``; return its row.

    The row: ``run``, ``key``, ``status`` (ok; fault: the loop stopped on a controller
    fault or a plant failure, a result; error: the run could not be built or run),
    ``error``, the figures (`closed_loop.run_closed_loop`), ``worker`` (host:pid),
    ``worker_warmups``, ``worker_run``, ``node`` (module doc), ``run_seconds`` (wall,
    building included) and, when recorded, ``mcap`` (the recording's path) or
    ``mcap_data`` (its bytes, for the driver to write: ``recordings: {'return': True}``).
    """
    warm(payload)
    _STATE['runs'] += 1
    start_time = time.perf_counter()
    row = {'run': run['run'], 'key': run['key'], 'status': 'ok', 'error': '',
           'worker': f'{socket.gethostname()}:{os.getpid()}',
           'worker_warmups': _STATE['warmups'], 'worker_run': _STATE['runs'],
           'node': node_name(payload)}
    recordings = payload.get('recordings') or {}
    scratch = tempfile.mkdtemp(prefix='sweep-') if recordings.get('return') else None
    try:
        graph = _STATE['graph'].with_values(run['values'])
        record = None
        name = f'run_{run["run"]:05d}.mcap'
        if scratch is not None:
            record = os.path.join(scratch, name)
        elif recordings.get('directory'):
            os.makedirs(recordings['directory'], exist_ok=True)
            record = os.path.join(recordings['directory'], name)
        if payload['mode'] == 'ros_graph':
            from .ros_graph import run_ros_graph
            figures = run_ros_graph(graph, payload['duration'], record)
        else:
            figures = run_closed_loop(graph, payload['duration'], record)
        row.update(figures)
        if scratch is not None:
            with open(record, 'rb') as stream:
                row['mcap_data'] = stream.read()
        elif record is not None:
            row['mcap'] = record
        if figures.get('fault'):
            row['status'] = 'fault'
    except Exception as error:          # noqa: B902 - a failing run is a row, not a failure
        row['status'] = 'error'
        row['error'] = (str(error) if isinstance(error, ConfigError) else
                        f'{type(error).__name__}: {error} '
                        f'({traceback.format_exc(limit=-1).strip().splitlines()[-2].strip()})')
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    row['run_seconds'] = time.perf_counter() - start_time
    return row
