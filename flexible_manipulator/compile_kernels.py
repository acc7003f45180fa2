"""Compile (and cache on disk) the numba kernels, one kernel per worker process, with progress.

Numba compiles a kernel the first time it runs and caches the machine code next to the
sources; doing it at set-up time keeps node start-up and the tests fast. Every shipped
chain model has the same argument types (padded tables), so one model compiles each kernel
for all of them, and a user's own model file never triggers a compile.

Where the time goes (measured on 2 CPUs, numba 0.68; bench/README.md, bench_compile.py):
numba compiles each compiled function once, plus the LLVM optimization of what a caller
links in. So an algorithm is a compiled unit on the model's and workspace's tables
(`tuple_tables`), and the kernels built on it (steppers, forward dynamics, section
kinematics) call it instead of inlining it: a call passes two tables, not the ~130 arrays
of the tuples (inlining a whole recursion into every kernel would compile it once per
kernel: bench/README.md, bench_compile.py). What this module does:

* a kernel is one job, run in its own process, as many at once as there are CPUs, in
  the order of `JOBS`; a job that calls a unit another job compiles (the walk) starts
  once that job is done and loads the unit from the cache (`Job.after`): two processes
  never compile the same unit at once;
* ``--only demo`` compiles just the kernels of the demo's two nodes (the plant's rk4
  stepper and TF, the controller's mass matrix, bias forces, section kinematics, servo
  solve and estimator step); the
  rest follows when the test suite's set-up asks for ``all``;
* a line per finished kernel and a heartbeat name what is being compiled and how far it
  is, so a long first run is never silent.

Usage: ``python -m flexible_manipulator.compile_kernels [--only demo|all]``.
"""

import argparse
from collections import namedtuple
from concurrent import futures
import multiprocessing
import os
import sys
import time

import numpy as np

# Model whose types every chain kernel is compiled for, and a servo model (same reason).
CHAIN_MODEL = 'two_link_flexible'
SERVO_MODEL = 'suslov_free_actuated'


def model_file(name):
    """Path of a shipped model: the source checkout's config/, else the installed share."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(here, 'config', 'models', name + '.yaml')
    if os.path.isfile(path):
        return path
    from .config_files import resolve_model_path
    return resolve_model_path(name)


def _chain():
    from .model_config import load_model
    model = load_model(model_file(CHAIN_MODEL))
    return model, model.create_data(), model.neutral_configuration(), np.zeros(model.nv)


def _simulate(method, algorithm='composite'):
    from .mechanics.simulation import Simulation
    model, _, q, v = _chain()
    model.dynamics_algorithm = algorithm       # the stepper long chains take
    Simulation(model, 1e-3, method, q, v).advance(np.zeros(model.nu), 1e-3)


def _frame_transforms():
    from .description.urdf import joint_frames
    model, data, q, _ = _chain()
    moving = [f for f in joint_frames(model) if f.moving]
    model.frame_transforms([(f.link, f.x if f.kind == 'section' else None)
                            for f in moving]).update(data, q)


def _servo():
    from .mechanics.simulation import Simulation
    from .model_config import load_model
    model = load_model(model_file(SERVO_MODEL))
    data, q, v = model.create_data(), model.neutral_configuration(), np.zeros(model.nv)
    u = np.zeros(model.nu)
    model.outputs(data, q, v, u if model.nu else None)
    for method in ('rk4', 'rosenbrock2'):
        Simulation(model, 1e-3, method, q, v).advance(u, 1e-3)


def _control():
    from .control import control_kernels
    nv, nu, m, count = 3, 2, 1, 1
    M = np.eye(nv)
    control_kernels.servo_solve(
        M, np.zeros(nv), np.ones((m, nv)), np.zeros(m), np.eye(nv, nu), np.zeros(nu), False,
        np.ones(nu), 1e-9, 1e4, np.zeros((nv, nu + 1)), np.zeros((m, nu)), np.zeros(m),
        np.zeros(nu), np.zeros(nu), np.zeros(nu, dtype=bool), np.zeros(nv), np.zeros(m),
        np.zeros(6))
    control_kernels.theta_modal_step(M, np.zeros(nv), nv - count, np.zeros(nv - count),
                                     1e-3, 0.6, np.ones(count), np.ones(count),
                                     np.zeros(count), np.zeros(count))


def _section(method):
    def run():
        model, data, q, v = _chain()
        x = model.links[0].length
        if method in ('section_jacobian', 'section_pose'):
            getattr(model, method)(data, q, 0, x)
        else:
            getattr(model, method)(data, q, v, 0, x)
    return run


def _call(method):
    def run():
        model, data, q, v = _chain()
        if method in ('composite_forward_dynamics', 'articulated_forward_dynamics'):
            getattr(model, method)(data, q, v, np.zeros(model.nu))
        elif method == 'rnea':
            model.rnea(data, q, v, v)
        elif method == 'mass_and_bias':
            model.mass_and_bias(data, q, v)
        else:
            getattr(model, method)(data, q)
    return run


Job = namedtuple('Job', 'kernel user demo cost after run')
Job.__doc__ = 'One kernel to compile.'
Job.kernel.__doc__ = ('name of the compiled kernel: an entry of the chain model '
                      '(model.kernels, model.articulated), or as noted')
Job.user.__doc__ = 'what needs it'
Job.demo.__doc__ = 'whether the demo nodes need it'
Job.cost.__doc__ = 'compile time it adds after the jobs it waits for, on one CPU [s] (estimate)'
Job.after.__doc__ = ('kernels (of the same run) this job waits for: it calls compiled units '
                     'they compile, and loads them from the cache once they are done')
Job.run.__doc__ = 'function that makes numba compile (or load) it'

# The chain model's kernels share compiled units: the walk `_link` with its link kinds'
# steps, M and h. A unit two processes need at once is compiled by both (each process
# compiles what its cache lacks), so a job that calls the walk waits until the job that
# compiles it is done, and then loads it from the cache in seconds; jobs that share
# nothing (the controller's solves, the servo systems) run beside it meanwhile.
# ``cost``: the units a job adds once those it waits for are cached, on one CPU
# (bench_compile.py --shared), for the time estimate.
WALK = ('mass_bias_entry',)
JOBS = tuple(Job(*job) for job in (
    ('mass_bias_entry', 'controller: M(q) and h(q, v) (the walk, every kernel calls it)',
     True, 30, (), _call('mass_and_bias')),
    ('control_kernels', 'controller: servo solve, modal estimator step', True, 9, (),
     _control),
    ('explicit_steps', 'plant: rk4/rk3/heun/euler stepper (M, h and a Cholesky solve)',
     True, 9, WALK, lambda: _simulate('rk4')),
    ('section_kinematics', 'controller: program rows (section kinematics)', True, 10, WALK,
     _section('section_kinematics')),
    ('local_transforms', 'plant: TF frames', True, 7, WALK, _frame_transforms),
    ('servo_kernels', 'servo plant: Suslov top, sleigh', False, 4, (), _servo),
    ('rosenbrock_steps', 'plant: rosenbrock2 (stiff) stepper', False, 6, WALK,
     lambda: _simulate('rosenbrock2')),
    ('articulated.explicit_steps', 'plant: explicit steppers on long chains (O(n))', False,
     20, WALK, lambda: _simulate('rk4', 'articulated')),
    ('forward_dynamics_entry', 'model API: composite forward dynamics', False, 1, WALK,
     _call('composite_forward_dynamics')),
    ('articulated.forward_dynamics_entry', 'model API: O(n) forward dynamics', False, 1,
     ('articulated.explicit_steps',), _call('articulated_forward_dynamics')),
    ('inverse_entry', 'model API: inverse dynamics (rnea)', False, 3, WALK, _call('rnea')),
    ('potential_energy', 'tests: energy', False, 2, WALK, _call('potential_energy')),
))


def _run_job(index):
    """Compile job ``index`` (in a worker process); return its wall time [s]."""
    start = time.monotonic()
    JOBS[index].run()
    return time.monotonic() - start


def next_job(queue, finished, selected):
    """Return the first job of ``queue`` whose `Job.after` kernels are done, or None.

    ``finished``: kernels done; ``selected``: kernels of this run (a job waits only for
    those: the others are cached already or not needed).
    """
    for i in queue:
        if all(name in finished or name not in selected for name in JOBS[i].after):
            return i
    return None


def select(only):
    """Return the indices of the jobs of ``only`` ('demo' or 'all'), in `JOBS` order."""
    return [i for i, job in enumerate(JOBS) if only == 'all' or job.demo]


def compile_jobs(indices, workers, heartbeat=20.0, out=sys.stdout):
    """Run the jobs in ``workers`` processes, printing progress; raise if one fails."""
    start = time.monotonic()
    total = len(indices)
    minutes = sum(JOBS[i].cost for i in indices) / workers / 60
    print(f'[compile] {total} numba kernels on {workers} processes: about {minutes:.0f} min on '
          'idle CPUs the first time, seconds once cached', file=out, flush=True)
    context = multiprocessing.get_context('fork')
    queue = list(indices)
    selected = {JOBS[i].kernel for i in indices}
    finished = set()
    with futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
        running, done_count = {}, 0
        while queue or running:
            # Submit only as many jobs as there are workers, so `running` is what runs,
            # and only those whose shared units are cached (`Job.after`).
            while queue and len(running) < workers:
                i = next_job(queue, finished, selected)
                if i is None:
                    if not running:
                        raise RuntimeError('compile jobs wait for each other: '
                                           + ', '.join(JOBS[j].kernel for j in queue))
                    break
                queue.remove(i)
                running[pool.submit(_run_job, i)] = i
            done, _ = futures.wait(running, timeout=heartbeat,
                                   return_when=futures.FIRST_COMPLETED)
            for future in done:
                i = running.pop(future)
                finished.add(JOBS[i].kernel)
                done_count += 1
                seconds = future.result()       # re-raises a failed compile
                print(f'[compile] {done_count}/{total} {JOBS[i].kernel} ({JOBS[i].user}): '
                      f'{seconds:.1f} s', file=out, flush=True)
            if not done:
                names = ', '.join(JOBS[i].kernel for i in running.values())
                print(f'[compile] {time.monotonic() - start:.0f} s: {done_count}/{total} done, '
                      f'compiling {names}', file=out, flush=True)
    elapsed = time.monotonic() - start
    print(f'[compile] numba kernels compiled and cached in {elapsed:.1f} s', file=out,
          flush=True)
    return elapsed


def main(argv=None):
    """Compile the kernels of the demo or of everything."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--only', choices=('demo', 'all'), default='all',
                        help='the demo nodes\' kernels, or all of them (default)')
    parser.add_argument('--workers', type=int, default=os.cpu_count() or 1,
                        help='compile processes (default: one per CPU)')
    args = parser.parse_args(argv)
    indices = select(args.only)
    compile_jobs(indices, max(1, min(args.workers, len(indices))))


if __name__ == '__main__':
    main()
