"""``sweep study.yaml``: run a study (doc/studies.md).

    sweep study.yaml                       # local worker processes, one per CPU
    sweep study.yaml --workers 2 --output results/
    sweep study.yaml --ray ray://head:10001   # on a Ray cluster (or --ray with RAY_ADDRESS)
    sweep study.yaml --ray head:6379 --recordings /shared/run1   # recordings on a shared path
    sweep study.yaml --check               # check the file, count the runs, run nothing

Exit status: 0 when every run has a row (failed runs included: they are rows with their
error), 2 for a bad study file or option (the message names the field) or a Ray cluster
that cannot be joined (nothing written), 130 when interrupted (the rows done are kept:
the same command resumes).
"""

import argparse
import os
import sys

from .cluster import KERNEL_CACHE
from .spec import load_study, StudyError


def parse_arguments(argv):
    """Parse the command line's options."""
    parser = argparse.ArgumentParser(prog='sweep', description='Run a study: a parameter '
                                     'sweep of the closed loop (doc/studies.md).')
    parser.add_argument('study', help='the study file (YAML)')
    parser.add_argument('--output', help='directory of the results (default: the study '
                        "file's name + '.results' beside it)")
    parser.add_argument('--workers', type=int, help='local worker processes (default: the '
                        'CPUs)')
    parser.add_argument('--ray', nargs='?', const='', metavar='ADDRESS',
                        help='run each run as a task of the Ray cluster at ADDRESS (default: '
                        'RAY_ADDRESS); the package is shipped to the nodes, which need '
                        "Ray and the package's dependencies (doc/studies.md)")
    parser.add_argument('--kernel-cache', metavar='DIR', help="each Ray node's directory of "
                        'compiled kernels (default: %(default)s; ${VAR} is read from the '
                        "node's environment)", default=KERNEL_CACHE)
    parser.add_argument('--recordings', metavar='DIR', help='write the recordings (record: '
                        '{mcap: true}) into DIR, a path every worker sees (a shared file '
                        "system), instead of OUTPUT/recordings through the driver")
    parser.add_argument('--retry-failed', action='store_true',
                        help='run again the runs the output holds as failed')
    parser.add_argument('--check', action='store_true',
                        help='check the study file and count its runs; run nothing')
    parser.add_argument('--no-figures', action='store_true', help='skip the figures')
    parser.add_argument('--quiet', action='store_true', help='no progress lines')
    return parser.parse_args(argv)


def main(argv=None):
    """Entry point of the ``sweep`` executable; returns the exit status."""
    try:
        options = parse_arguments(sys.argv[1:] if argv is None else argv)
    except SystemExit as stop:          # argparse: 2 for bad options, 0 for --help
        return stop.code
    if options.workers is not None and options.workers < 1:
        print('sweep: --workers: expected a whole number >= 1', file=sys.stderr)
        return 2
    address = None
    if options.ray is not None:
        address = options.ray or os.environ.get('RAY_ADDRESS')
        if not address:
            print('sweep: --ray: give the cluster\'s address or set RAY_ADDRESS',
                  file=sys.stderr)
            return 2
        try:
            import ray  # noqa: F401
        except ImportError:
            print("sweep: --ray needs Ray: pip install 'ray[default]'", file=sys.stderr)
            return 2
    try:
        study = load_study(options.study)
    except StudyError as error:
        print(f'sweep: {options.study}: {error}', file=sys.stderr)
        return 2
    runs = study.runs()
    if options.check:
        print(f'{options.study}: {len(runs)} runs of {study.duration:g} s ({study.mode}); '
              f'parameters: {", ".join(p.path for p in study.parameters)}')
        return 0
    output = options.output or os.path.splitext(options.study)[0] + '.results'
    if options.ray is not None:
        from .cluster import ClusterError, connect
        try:
            connect(address, options.kernel_cache)
        except ClusterError as error:
            print(f'sweep: --ray: {error}', file=sys.stderr)
            return 2
    from .runner import run_study
    try:
        outcome = run_study(study, output, options.workers, address,
                            use_ray=options.ray is not None,
                            stream=None if options.quiet else sys.stderr,
                            plots=not options.no_figures, recordings=options.recordings)
    except KeyboardInterrupt:
        print(f'sweep: interrupted; the runs done are in {output} (run the same command to '
              'resume)', file=sys.stderr)
        return 130
    print(f'{outcome.total} runs ({outcome.skipped} done before, {outcome.ran} now): '
          f'{outcome.failed} failed, {outcome.faults} stopped on a fault; table '
          f'{outcome.table}' + (f'; figures in {os.path.dirname(outcome.figures[0])}'
                                if outcome.figures else ''))
    return 0
