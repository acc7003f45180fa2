"""Run a study's runs where asked, stream their rows into the table, show progress.

Where: local worker processes (`local_rows`: as many as CPUs by default, each warmed once,
`worker.warm`), or the tasks of a Ray cluster (`ray_rows`: the package shipped and each
node's kernels compiled once, `cluster`; each run a task, the rows streamed back as they
finish). A recording a Ray run returns is written by the driver into the output. A run
whose process dies (killed, out of memory, a crash) is run again, up to ``attempts``
times in all, then recorded as an error row; a run that fails in its own code is an
error row at once (`worker.run_one`). Either way the study goes on. A restarted study
skips the runs its output directory already holds (`table.ResultTable`), failed ones
included unless ``retry_failed``.
"""

from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
import multiprocessing
import os
import sys
import time

from . import worker
from .table import FLUSH_PERIOD, ResultTable

ATTEMPTS = 2            # runs of a run whose process died, before it is an error row


@dataclass
class Outcome:
    """What a call of `run_study` did: run counts and the table's path."""

    total: int
    skipped: int
    ran: int
    failed: int           # error rows among all the study's rows
    faults: int           # rows whose loop stopped on a fault (a result, not a failure)
    table: str
    figures: list


class Progress:
    """Runs done, failed, remaining and the estimated time left, on a stream (throttled)."""

    def __init__(self, total, skipped, stream=sys.stderr, period=2.0):
        """Count ``total`` runs of which ``skipped`` were done before."""
        self.total, self.done, self.failed = total, skipped, 0
        self.skipped, self.stream, self.period = skipped, stream, period
        self.start = time.monotonic()
        self.last = -float('inf')
        if stream is not None and skipped:
            print(f'[sweep] {skipped} of {total} runs already done: skipped', file=stream,
                  flush=True)

    def add(self, row, force=False):
        """Count a finished run; print a line at most every ``period`` s."""
        self.done += 1
        self.failed += row['status'] == 'error'
        self.show(force)

    def line(self):
        """Return the progress line."""
        remaining = self.total - self.done
        ran = self.done - self.skipped
        elapsed = time.monotonic() - self.start
        eta = f'~{remaining * elapsed / ran:.0f} s left' if ran and remaining else (
            'done' if not remaining else 'estimating')
        rate = f'{60.0 * ran / elapsed:.1f} runs/min' if ran and elapsed > 0 else ''
        return (f'[sweep] {self.done}/{self.total} done, {self.failed} failed, {remaining} '
                f'remaining, {eta}' + (f' ({rate})' if rate else ''))

    def show(self, force=False):
        """Print the line if ``period`` has passed (or ``force``)."""
        now = time.monotonic()
        if self.stream is not None and (force or now - self.last >= self.period):
            self.last = now
            print(self.line(), file=self.stream, flush=True)


def _died(run, attempts, what):
    """Return the error row of a run whose process died ``attempts`` times."""
    return {'run': run['run'], 'key': run['key'], 'status': 'error',
            'error': f'the {what} running it died {attempts} times (killed, out of memory or '
                     'a crash)'}


def local_rows(payload, runs, workers=None, attempts=ATTEMPTS):
    """Yield the rows of ``runs`` from ``workers`` local processes (default: the CPUs).

    At most one run per worker is in flight, so the runs lost with a worker that dies are
    known (the pool breaks for all: it is started anew, the other runs resubmitted).
    """
    workers = workers or os.cpu_count() or 1
    context = multiprocessing.get_context('spawn')   # no fork of a process that holds numba
    queue, tries = list(runs), {}
    while queue:
        with ProcessPoolExecutor(workers, mp_context=context, initializer=worker.start,
                                 initargs=(payload,)) as pool:
            flight = {}
            try:
                while queue or flight:
                    while queue and len(flight) < workers:
                        run = queue.pop(0)
                        flight[pool.submit(worker.run_one, payload, run)] = run
                    finished, _ = wait(flight, return_when=FIRST_COMPLETED)
                    for future in finished:
                        row = future.result()            # BrokenProcessPool if one died
                        flight.pop(future)
                        yield row
            except BrokenProcessPool:
                for run in flight.values():
                    tries[run['key']] = tries.get(run['key'], 0) + 1
                    if tries[run['key']] >= attempts:
                        yield _died(run, tries[run['key']], 'worker process')
                    else:
                        queue.insert(0, run)


def ray_rows(payload, runs, address=None, attempts=ATTEMPTS, stream=sys.stderr):
    """Yield the rows of ``runs`` run as Ray tasks (one CPU each) on the cluster.

    Joins the cluster at ``address`` (None: RAY_ADDRESS) unless this process is already
    connected (`cluster.connect`; after a `ray.init` of the caller's, the job's runtime
    environment is the caller's), then compiles the kernels
    on the nodes that lack them (`cluster.prepare_nodes`, its lines on ``stream``). Ray
    runs a task again when its worker dies (``max_retries``); twice the cluster's CPUs are
    kept in flight.
    """
    import ray
    from .cluster import connect, prepare_nodes
    connect(address)
    payload = dict(payload, ray=True)
    prepare_nodes(payload, stream)
    task = ray.remote(num_cpus=1, max_retries=attempts - 1)(worker.run_one)
    shared = ray.put(payload)
    window = max(2, 2 * int(ray.cluster_resources().get('CPU', 1)))
    queue, flight = list(runs), {}
    while queue or flight:
        while queue and len(flight) < window:
            run = queue.pop(0)
            flight[task.remote(shared, run)] = run
        finished, rest = ray.wait(list(flight), num_returns=1)
        if rest:        # every row ready now, in one call (a large cluster's rate)
            finished += ray.wait(rest, num_returns=len(rest), timeout=0)[0]
        for reference in finished:
            run = flight.pop(reference)
            try:
                yield ray.get(reference)
            except ray.exceptions.RayError as error:
                row = _died(run, attempts, 'Ray worker')
                row['error'] += f': {type(error).__name__}'
                yield row


def _recordings(study, output, recordings, use_ray):
    """Return where the runs' recordings go (`worker.run_one`), None if not recorded."""
    if not study.mcap:
        return None
    if recordings:
        return {'directory': os.path.abspath(recordings)}
    if use_ray:
        return {'return': True}
    return {'directory': os.path.join(os.path.abspath(output), 'recordings')}


def _write_recording(row, output):
    """Write the recording a row carries (``mcap_data``) into ``output``; set ``mcap``."""
    data = row.pop('mcap_data', None)
    if data is None:
        return
    directory = os.path.join(os.path.abspath(output), 'recordings')
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f'run_{row["run"]:05d}.mcap')
    with open(path + '.part', 'wb') as stream:
        stream.write(data)
    os.replace(path + '.part', path)
    row['mcap'] = path


def run_study(study, output, workers=None, ray_address=None, use_ray=False,
              retry_failed=False, stream=sys.stderr, plots=True, on_row=None,
              recordings=None):
    """Run the runs of ``study`` not yet in ``output``; return an `Outcome`.

    ``use_ray``: as Ray tasks (`ray_rows`, at ``ray_address``), else in ``workers`` local
    processes. Recordings (``record: {mcap: true}``) go to ``output``/recordings: written
    there by local workers, returned by Ray workers and written by this process; or, with
    ``recordings`` (a directory every worker sees at that path: a shared file system),
    written there by the workers. Rows stream into ``output``'s table
    (`table.ResultTable`); the table is written every `table.FLUSH_PERIOD` s and at the
    end, also on an interruption (KeyboardInterrupt, re-raised). ``plots``: the figures
    of the main figures against each swept parameter (`plots.sweep_figures`).
    ``on_row(row)``: called with each new row as it is written (a notebook's live view, a
    benchmark's clock).
    """
    runs = study.runs()
    if use_ray:             # joined first: a cluster that cannot be joined leaves no output
        from .cluster import connect
        connect(ray_address)
    table = ResultTable(output)
    keys = [run['key'] for run in runs]
    todo = [run for run in runs if run['key'] not in table.rows or (
        retry_failed and table.rows[run['key']].get('status') == 'error')]
    progress = Progress(len(runs), len(runs) - len(todo), stream)
    payload = {'digest': study.digest(), 'params_file': study.params_file,
               'base_values': study.base_values, 'duration': study.duration,
               'mode': study.mode,
               'recordings': _recordings(study, output, recordings, use_ray)}
    if use_ray:         # the base graph, parsed here: the nodes need no copy of its files
        from ..closed_loop import load_graph
        payload['graph'] = load_graph(study.params_file).with_values(study.base_values)
    by_key = {run['key']: run for run in runs}
    rows = (ray_rows(payload, todo, ray_address, stream=stream) if use_ray else
            local_rows(payload, todo, workers))
    written = time.monotonic()
    try:
        for row in rows:
            run = by_key[row['key']]
            row = {'run': run['run'], 'draw': run['draw'], **run['values'], **row}
            _write_recording(row, output)
            table.add(row)
            progress.add(row)
            if on_row is not None:
                on_row(row)
            if time.monotonic() - written > FLUSH_PERIOD:
                table.write(keys)
                written = time.monotonic()
    finally:
        rows.close()
        table.write(keys)
        table.close()
        progress.show(force=True)
    done = [table.rows[k] for k in keys if k in table.rows]
    figures = []
    if plots:
        from .plots import sweep_figures
        figures = sweep_figures(study, done, os.path.join(output, 'figures'))
    return Outcome(len(runs), len(runs) - len(todo), len(todo),
                   sum(r.get('status') == 'error' for r in done),
                   sum(r.get('status') == 'fault' for r in done), table.path, figures)
