"""Compile time of every numba kernel, from numba's own compile events, kernel by kernel.

For each job of ``compile_kernels.JOBS`` (the kernels the set-up compiles), a fresh
process with an empty cache directory (``NUMBA_CACHE_DIR``: the package's caches are not
touched and nothing is loaded from them) runs the job under numba's event recorder
(``numba.core.event.install_recorder('numba:compile')``). Each compile event names the
function and has a start and an end; nested events are the helpers a kernel compiles on
the way. Reported per job: the wall time of the job, the time inside compile events at the
top level (the kernel's whole compile), and the helpers with the largest own time (their
time less that of the helpers they compile in turn).

Run: ``.venv/bin/python bench/bench_compile.py [job ...]`` (all jobs one after another,
each on one CPU; with job names, only those). A kernel that calls other compiled units
compiles them too when the cache is empty, so a job's figure counts the units it shares
with others. ``--shared`` runs all jobs in one process on one empty cache, in the order of
``JOBS``: each unit is compiled once, and the table lists the units by their own compile
time: the cost of the whole set on one CPU. Compile times depend on the machine and on
what else runs: the tables state both.
"""

import json
import os
import subprocess
import sys
import tempfile
import time


def measure(names):
    """Run the jobs ``names`` here under the compile-event recorder; print a JSON record."""
    import numba.core.event as event
    from flexible_manipulator import compile_kernels
    jobs = [next(job for job in compile_kernels.JOBS if job.kernel == name) for name in names]
    start = time.perf_counter()
    with event.install_recorder('numba:compile') as recorder:
        for job in jobs:
            job.run()
    wall = time.perf_counter() - start
    stack, own, top = [], {}, 0.0
    for stamp, item in recorder.buffer:
        function = item.data['dispatcher'].py_func
        label = f'{function.__module__.split(".")[-1]}.{function.__qualname__}'
        if item.is_start:
            stack.append([label, stamp, 0.0])
            continue
        label, began, nested = stack.pop()
        spent = stamp - began
        own[label] = own.get(label, 0.0) + spent - nested
        if stack:
            stack[-1][2] += spent
        else:
            top += spent
    print(json.dumps({'job': ' '.join(names), 'wall': wall, 'compile': top, 'own': own}))


def run_measure(names):
    """Measure the jobs ``names`` in a fresh process with an empty cache; return the record."""
    with tempfile.TemporaryDirectory() as cache:
        environment = dict(os.environ, NUMBA_CACHE_DIR=cache)
        result = subprocess.run([sys.executable, __file__, '--measure', *names],
                                env=environment, capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def shared():
    """Compile every job in one process on one empty cache; print the units' own times."""
    from flexible_manipulator import compile_kernels
    record = run_measure([job.kernel for job in compile_kernels.JOBS])
    print('| compiled unit | own compile time [s] |')
    print('|---|---|')
    units = sorted(record['own'].items(), key=lambda item: -item[1])
    for label, seconds in units[:15]:
        print(f'| {label} | {seconds:.1f} |')
    rest = sum(seconds for _, seconds in units[15:])
    print(f'| {len(units) - 15} others | {rest:.1f} |')
    print(f'\nall jobs in one process, each unit once: {record["wall"]:.0f} s wall '
          f'({record["compile"]:.0f} s in compile events); machine: {os.cpu_count()} CPUs, '
          f'load average {os.getloadavg()[0]:.2f} at the end')


def main(names):
    """Measure each job in its own process with an empty cache; print a markdown table."""
    from flexible_manipulator import compile_kernels
    jobs = names or [job.kernel for job in compile_kernels.JOBS]
    print('| kernel (job) | wall [s] | in compile events [s] | helpers: largest own time [s] |')
    print('|---|---|---|---|')
    total = 0.0
    for name in jobs:
        record = run_measure([name])
        total += record['wall']
        largest = sorted(record['own'].items(), key=lambda item: -item[1])[:3]
        helpers = ', '.join(f'{label} {seconds:.1f}' for label, seconds in largest)
        print(f'| {name} | {record["wall"]:.1f} | {record["compile"]:.1f} | {helpers} |',
              flush=True)
    print(f'\none after another: {total:.0f} s; machine: {os.cpu_count()} CPUs, load average '
          f'{os.getloadavg()[0]:.2f} at the end')


if __name__ == '__main__':
    if sys.argv[1:2] == ['--measure']:
        measure(sys.argv[2:])
    elif sys.argv[1:2] == ['--shared']:
        shared()
    else:
        main(sys.argv[1:])
