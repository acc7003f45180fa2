"""Studies: runs per minute on local workers and on a local Ray head, overhead per run.

The study: config/sim.yaml's closed loop (two_link_flexible, servo law, 2 ms lock-step),
``RUNS`` runs of ``DURATION`` s each (payload x program x initial-velocity draws). Measured,
``REPEATS`` times each, interleaved:

* the bare run: `closed_loop.run_closed_loop` called in this process (warmed), split into
  the loop alone (the ``wall_time`` figure) and building + loop (what a worker does per run);
* the study end to end (`runner.run_study`: worker start, warm-up, runs, table, no figures)
  with 1 and 2 local worker processes and on a local Ray head of 2 CPUs (started once; its
  workers stay warm between studies, so its first study is timed apart from the others);
* from the rows: the time to the first row (start and warm-up of the workers) and the
  steady rate after it.

Overhead per run: the study's steady time per run and worker against the bare run
(building + loop). The estimate of a 10 000-run study on N nodes is printed with its
basis. Run: ``.venv/bin/python bench/bench_studies.py`` (about 6 min on 2 CPUs).
"""

import os
import shutil
import statistics
import tempfile
import time

from bench_common import machine
from flexible_manipulator.closed_loop import load_graph, run_closed_loop
from flexible_manipulator.studies.runner import run_study
from flexible_manipulator.studies.spec import parse_study
from flexible_manipulator.studies.table import read_table

DURATION = 2.0
REPEATS = 3
STUDY = {'duration': DURATION, 'seed': 1, 'draws': 2, 'parameters': {
    'model.links[1].payload.mass': [0.05, 0.1, 0.15, 0.2, 0.25, 0.3],
    'controller.active_program': ['lambda_circle', 'joint_sine'],
    'plant.initial_velocities[0]': {'normal': [0.3716835, 0.02]}}}
RUNS = 6 * 2 * 2


def bare(repeats=5):
    """Median [s] of the loop alone and of building + loop, in this process (warmed)."""
    graph = load_graph('sim')
    run_closed_loop(graph, 0.01)                          # warm: the kernels, once
    loops, whole = [], []
    for k in range(repeats):
        values = {'model.links[1].payload.mass': 0.05 + 0.05 * k}
        start = time.perf_counter()
        figures = run_closed_loop(graph.with_values(values), DURATION)
        whole.append(time.perf_counter() - start)
        loops.append(figures['wall_time'])
    return statistics.median(loops), statistics.median(whole)


def one_study(study, **where):
    """Time a study: (wall [s], workers, steady s per run and worker, first row [s]).

    Steady: the median time of the runs after each worker's first (its warm-up done);
    first row: from the call to the first row written (workers started and warmed, one run).
    """
    output = tempfile.mkdtemp(prefix='bench_study_')
    arrivals = []
    try:
        start = time.monotonic()
        outcome = run_study(study, output, stream=None, plots=False,
                            on_row=lambda row: arrivals.append(time.monotonic() - start),
                            **where)
        wall = time.monotonic() - start
        assert outcome.ran == RUNS and outcome.failed == 0, outcome
        rows = read_table(output)
    finally:
        shutil.rmtree(output, ignore_errors=True)
    per_worker = {}
    for row in rows:
        per_worker.setdefault(row['worker'], []).append(row['run_seconds'])
    steady = [s for seconds in per_worker.values() for s in seconds[1:]]
    return wall, len(per_worker), statistics.median(steady), arrivals[0]


def main():
    """Measure and print the tables."""
    print(machine())
    study = parse_study(STUDY, 'bench')
    loop, whole = bare()
    print(f'\nbare run of {DURATION:g} s (this process, warmed; median of 5): loop '
          f'{loop:.3f} s, building + loop {whole:.3f} s')
    import ray
    os.environ.setdefault('RAY_AUTH_MODE', 'disabled')
    directory = tempfile.mkdtemp(prefix='ray', dir='/tmp')
    start = time.monotonic()
    ray.init(num_cpus=2, _temp_dir=directory, include_dashboard=False, log_to_driver=False)
    ray_start = time.monotonic() - start
    results = {'1 local worker': [], '2 local workers': [], 'Ray head, 2 CPUs, first study': [],
               'Ray head, 2 CPUs, warm workers': []}
    try:
        cold = one_study(study, use_ray=True)
        results['Ray head, 2 CPUs, first study'].append(cold)
        for _ in range(REPEATS):
            results['1 local worker'].append(one_study(study, workers=1))
            results['2 local workers'].append(one_study(study, workers=2))
            results['Ray head, 2 CPUs, warm workers'].append(one_study(study, use_ray=True))
    finally:
        ray.shutdown()
        shutil.rmtree(directory, ignore_errors=True)
    print(f'Ray head start (ray.init, 2 CPUs): {ray_start:.1f} s\n')
    print(f'study of {RUNS} runs of {DURATION:g} s; median (min-max) of {REPEATS} studies '
          '(the Ray first study: 1)')
    print('| where | workers | runs / min end to end | study wall [s] | steady s per run and '
          'worker | steady runs / min | overhead per run vs bare | first row after [s] |')
    print('|---|---|---|---|---|---|---|---|')
    summary = {}
    for label, samples in results.items():
        walls = [s[0] for s in samples]
        workers = samples[0][1]
        steady = statistics.median(s[2] for s in samples)
        firsts = [s[3] for s in samples]
        rate = [60.0 * RUNS / w for w in walls]
        summary[label] = (steady, workers)
        print(f'| {label} | {workers} | {statistics.median(rate):.1f} ({min(rate):.1f}-'
              f'{max(rate):.1f}) | {statistics.median(walls):.1f} | {steady:.3f} | '
              f'{60.0 * workers / steady:.1f} | {steady - whole:+.3f} s '
              f'({100 * (steady / whole - 1):+.0f} %) | {statistics.median(firsts):.1f} |')
    steady, _ = summary['Ray head, 2 CPUs, warm workers']
    print(f'\nestimate of a 10 000-run study of {DURATION:g} s runs on N nodes of C CPUs, '
          f'one run per CPU at a time: 10 000 x {steady:.3f} s / (N C), plus the start and '
          'warm-up of a worker (first row, above) and the nodes\' start; the basis: the '
          'steady time per run and worker on the Ray head here (a worker per CPU, each CPU '
          'as fast as one of these; the driver writes a row in well under 1 ms)')
    for nodes, cpus in ((1, 2), (4, 16), (16, 16), (64, 16)):
        seconds = 10_000 * steady / (nodes * cpus)
        print(f'  N = {nodes:3d}, C = {cpus:2d}: {seconds / 60:7.1f} min')


if __name__ == '__main__':
    main()
