"""The set-up's compile step covers every compiled kernel the model API calls.

A kernel left out of `compile_kernels.JOBS` would be compiled inside a node or a test the
first time it runs (minutes, silently). Expected: every numba dispatcher of the chain
model's kernels (``model.kernels``, ``model.articulated``) that its classes
(``model.chain``, ``model.frame_transforms``) call appears as a job, and the demo's jobs
are a subset of all jobs.
"""

import inspect
import re

import numba
import numpy as np

from flexible_manipulator import compile_kernels
from flexible_manipulator.mechanics.model import articulated, chain, frame_transforms, kernels
from flexible_manipulator.mechanics.simulation import Simulation


def test_every_kernel_the_chain_api_calls_is_compiled_at_set_up():
    source = inspect.getsource(chain) + inspect.getsource(frame_transforms)
    dispatcher = numba.core.dispatcher.Dispatcher
    compiled = {(prefix + name if prefix == 'articulated.' else name)
                for module, prefix in ((kernels, ''), (articulated, 'articulated.'))
                for name in re.findall(prefix.rstrip('.') + r'\.(\w+)'
                                       if prefix else r'kernels\.(\w+)', source)
                if isinstance(getattr(module, name, None), dispatcher)}
    assert {'explicit_steps', 'mass_bias_entry', 'local_transforms',
            'articulated.explicit_steps'} <= compiled
    jobs = {job.kernel for job in compile_kernels.JOBS}
    assert compiled - jobs == set()


def test_demo_kernels_are_among_all_kernels():
    demo, everything = compile_kernels.select('demo'), compile_kernels.select('all')
    assert demo and set(demo) < set(everything)


def signatures(module):
    """Number of compiled specializations of every numba kernel of ``module``."""
    return {name: len(kernel.signatures) for name, kernel in vars(module).items()
            if isinstance(kernel, numba.core.dispatcher.Dispatcher)}


def test_one_model_of_each_kind_compiles_the_kernels_of_all_shipped_models():
    """After the jobs for `CHAIN_MODEL` and `SERVO_MODEL`, every shipped model (chains with
    other link counts, modes, a floating base; Suslov tops and sleighs; Cosserat chains)
    runs its stepper, dynamics and TF kernels without a new specialization: a model file
    never compiles."""
    import glob
    import os
    from flexible_manipulator.mechanics import servo_kernels
    from flexible_manipulator.mechanics.model import kernels as chain_model_kernels
    from flexible_manipulator.mechanics.servo import ServoSystem
    from flexible_manipulator.model_config import load_model
    for name in ('explicit_steps', 'rosenbrock_steps', 'forward_dynamics_entry',
                 'local_transforms', 'servo_kernels'):
        next(job for job in compile_kernels.JOBS if job.kernel == name).run()
    kinds = (servo_kernels, chain_model_kernels)
    before = [signatures(kind) for kind in kinds]
    models = os.path.dirname(compile_kernels.model_file('two_link_rigid'))
    for path in sorted(glob.glob(os.path.join(models, '*.yaml'))):
        model = load_model(path)
        data, q = model.create_data(), model.neutral_configuration()
        v, u = np.zeros(model.nv), np.zeros(model.nu)
        # a step within every model's rk4 limit (step_check); soft rods are overdamped
        method = 'rosenbrock2' if 'rod:' in open(path).read() else 'rk4'
        Simulation(model, 1e-4, method, q, v).advance(u, 1e-4)
        if isinstance(model, ServoSystem):
            model.outputs(data, q, v, u if model.nu else None)
        else:
            model.forward_dynamics(data, q, v, u)
    assert [signatures(kind) for kind in kinds] == before


def test_every_job_runs():
    """Each job's function runs to the end (a job that raises fails the set-up on a fresh
    clone: its model must be valid, e.g. not massless); the kernels are cached by then, so
    this costs seconds."""
    for job in compile_kernels.JOBS:
        job.run()


def test_a_job_that_calls_the_walk_starts_after_the_job_that_compiles_it():
    """Two processes compiling the walk at once would each compile it (the cache has it
    only when one is done): a job with `Job.after` is not started before those kernels
    are finished, is started once they are, and waits only for kernels of the same run.
    Every kernel waited for comes earlier in `JOBS`, so the queue always moves."""
    kernels = [job.kernel for job in compile_kernels.JOBS]
    everything = set(kernels)
    waiting = [i for i, job in enumerate(compile_kernels.JOBS) if job.after]
    assert {compile_kernels.JOBS[i].kernel for i in waiting} >= {
        'explicit_steps', 'section_kinematics', 'local_transforms'}
    for i in waiting:
        after = set(compile_kernels.JOBS[i].after)
        assert all(kernels.index(name) < i for name in after)
        assert compile_kernels.next_job([i], set(), everything) is None
        assert compile_kernels.next_job([i], after, everything) == i
        assert compile_kernels.next_job([i], set(), everything - after) == i
    # the first job of a run never waits
    for only in ('demo', 'all'):
        queue = compile_kernels.select(only)
        assert compile_kernels.next_job(queue, set(), everything) == queue[0]
