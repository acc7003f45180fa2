"""A graph in real time beside CPU-bound work: does it track its program, run after run?

Runs ``bringup --local --params-file PARAMS --duration S`` (real-time mode, as the README's
command) RUNS times, one after another, each with LOAD CPU-bound processes beside it (a
busy laptop or shared runner), and reports per run the real-time factor, the control ticks
against the states the duration holds, the program's largest residual, whether the
controller degraded (a late-command switch, a fault) and its last status. Verdict: every
run answered its states and ended with the controller tracking its program, not degraded.

Run: ``.venv/bin/python bench/bench_realtime_graph.py [PARAMS] [RUNS] [LOAD] [OPTIONS]``
(default ``sim_soft 10 1``: the soft Cosserat arm, 10 runs, one CPU-bound process; about
4 min); OPTIONS go to ``bringup`` (``--separate-processes``: one process per node instead
of the two composed in one).
"""

import multiprocessing
import os
import re
import subprocess
import sys

import bench_common as common

DURATION = 5.0               # simulated seconds per run
PERIOD = 0.002               # the graphs' update period [s]


def burn():
    """Spin one CPU until terminated."""
    while True:
        pass


def run(params, options):
    """One bring-up run; return its figures from the printed summary."""
    out = subprocess.run(
        [sys.executable, '-m', 'flexible_manipulator.nodes.bringup', '--local',
         '--params-file', params, '--duration', str(DURATION), '--timeout', '120', *options],
        capture_output=True, text=True, timeout=300)
    text = out.stdout + out.stderr
    factor = re.search(r'real-time factor\s+([\d.]+)', text)
    ticks = re.search(r'control ticks\s+(\d+)', text)
    residual = re.search(r'program residual (.*)', text)
    peaks = [float(x) for x in re.findall(r'max ([\d.e+-]+) (?:rad|m)',
                                          residual.group(1))] if residual else []
    status = re.search(r'controller\s+(.*)', out.stdout)
    degraded = 'switched from' in text          # a late-command degrade or a hand-over
    return {'exit': out.returncode, 'factor': float(factor.group(1)) if factor else 0.0,
            'ticks': int(ticks.group(1)) if ticks else 0,
            'residual': max(peaks) if peaks else float('nan'),
            'status': status.group(1).strip() if status else '(no summary)',
            'degraded': degraded}


def main():
    """Run the graph RUNS times beside LOAD CPU-bound processes; print the table."""
    params = sys.argv[1] if len(sys.argv) > 1 else 'sim_soft'
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    load = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    options = sys.argv[4:]
    burners = [multiprocessing.Process(target=burn, daemon=True) for _ in range(load)]
    for process in burners:
        process.start()
    try:
        print(f'machine: {common.machine()}; {load} CPU-bound process(es) beside the graph; '
              f'{params}, {DURATION:g} s simulated per run, real-time mode; bringup '
              f'{" ".join(options) or "(plant and controller composed in one process)"}')
        expected = round(DURATION / PERIOD)
        print('| run | exit | real-time factor | control ticks (of ~%d) | largest residual | '
              'controller |\n|---|---|---|---|---|---|' % expected)
        results = []
        for k in range(runs):
            r = run(params, options)
            results.append(r)
            print(f'| {k + 1} | {r["exit"]} | {r["factor"]:.2f} | {r["ticks"]} | '
                  f'{r["residual"]:.2e} | {r["status"]} |', flush=True)
    finally:
        for process in burners:
            process.terminate()
    good = [r for r in results if r['exit'] == 0 and not r['degraded']
            and r['status'].startswith('OK') and r['ticks'] >= 0.98 * expected]
    print(f'\n{len(good)} of {len(results)} runs tracked their program to the end, every '
          f'state answered, no degrade; real-time factor '
          f'{common.with_range([r["factor"] for r in results], 2)}; largest residual, '
          f'median {common.spread(r["residual"] for r in results).median:.2e} (max '
          f'{max(r["residual"] for r in results):.2e}); load average '
          f'{os.getloadavg()[0]:.2f} at the end')


if __name__ == '__main__':
    main()
