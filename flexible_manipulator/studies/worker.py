"""One run of a study, in whichever process runs it (a local worker, a Ray worker).

`run_one` never raises for a run that fails: the row says ``status: error`` and why. The
process keeps what every run of a study shares (`warm`): the base graph, parsed, and the
numba kernels, loaded from their on-disk cache by one short run of the base graph the
first time the process sees the study (a few seconds to load them, against a fraction of
a second per run after; bench/README.md). The rows say which process ran them
(``worker``), how many warm-ups that process did (``worker_warmups``: 1, once per study)
and the run's rank among the runs it did (``worker_run``: 1, 2, ...).
"""

import os
import socket
import time
import traceback

from ..closed_loop import load_graph, run_closed_loop
from ..config_checks import ConfigError

_STATE = {'digest': None, 'graph': None, 'warmups': 0, 'runs': 0}


def warm(payload):
    """Prepare this process for the study ``payload`` once; True if it did now.

    ``payload``: the study's digest, parameter file, base values, duration, mode.
    """
    if _STATE['digest'] == payload['digest']:
        return False
    graph = load_graph(payload['params_file']).with_values(payload['base_values'])
    if payload['mode'] == 'closed_loop':
        try:
            # Loads (or compiles) the kernels this study's runs call, once per process.
            run_closed_loop(graph, 2 * graph.plant_parameters()['update_period'])
        except (ConfigError, ArithmeticError, ValueError, RuntimeError):
            pass          # the base itself fails to run: each run reports its own error
    _STATE.update(digest=payload['digest'], graph=graph, warmups=_STATE['warmups'] + 1)
    return True


def start(payload):
    """Warm up a local worker process before its first run (its initializer)."""
    warm(payload)


def run_one(payload, run):
    """Run ``run`` ({'run', 'key', 'draw', 'values'}) of the study ``payload``; return its row.

    The row: ``run``, ``key``, ``status`` (ok; fault: the loop stopped on a controller
    fault or a plant failure, a result; error: the run could not be built or run),
    ``error``, the figures (`closed_loop.run_closed_loop`), ``worker`` (host:pid),
    ``worker_warmups``, ``worker_run`` (module doc), ``run_seconds`` (wall, building
    included) and ``mcap`` (the recording's path, when recorded).
    """
    warm(payload)
    _STATE['runs'] += 1
    start_time = time.perf_counter()
    row = {'run': run['run'], 'key': run['key'], 'status': 'ok', 'error': '',
           'worker': f'{socket.gethostname()}:{os.getpid()}',
           'worker_warmups': _STATE['warmups'], 'worker_run': _STATE['runs']}
    try:
        graph = _STATE['graph'].with_values(run['values'])
        record = None
        if payload.get('recordings'):
            os.makedirs(payload['recordings'], exist_ok=True)
            record = os.path.join(payload['recordings'], f'run_{run["run"]:05d}.mcap')
        if payload['mode'] == 'ros_graph':
            from .ros_graph import run_ros_graph
            figures = run_ros_graph(graph, payload['duration'], record)
        else:
            figures = run_closed_loop(graph, payload['duration'], record)
        row.update(figures)
        if record is not None:
            row['mcap'] = record
        if figures.get('fault'):
            row['status'] = 'fault'
    except Exception as error:          # noqa: B902 - a failing run is a row, not a failure
        row['status'] = 'error'
        row['error'] = (str(error) if isinstance(error, ConfigError) else
                        f'{type(error).__name__}: {error} '
                        f'({traceback.format_exc(limit=-1).strip().splitlines()[-2].strip()})')
    row['run_seconds'] = time.perf_counter() - start_time
    return row
