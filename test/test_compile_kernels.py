"""The set-up's compile step covers every compiled kernel the model API calls.

A kernel left out of `compile_kernels.JOBS` would be compiled inside a node or a test the
first time it runs (minutes, silently). Expected: every numba dispatcher of chain_kernels
that chain.py calls appears as a job, and the demo's jobs are a subset of all jobs.
"""

import inspect
import re

import numba

from flexible_manipulator import compile_kernels
from flexible_manipulator.mechanics import chain, chain_kernels


def test_every_kernel_the_chain_api_calls_is_compiled_at_set_up():
    called = set(re.findall(r'kernels\.(\w+)', inspect.getsource(chain)))
    dispatcher = numba.core.dispatcher.Dispatcher
    compiled = {name for name in called
                if isinstance(getattr(chain_kernels, name, None), dispatcher)}
    assert 'explicit_steps' in compiled and 'mass_matrix' in compiled
    jobs = {job.kernel for job in compile_kernels.JOBS}
    assert compiled - jobs == set()


def test_demo_kernels_are_among_all_kernels():
    demo, everything = compile_kernels.select('demo'), compile_kernels.select('all')
    assert demo and set(demo) < set(everything)
