"""A study's runs on a Ray cluster: joining it, shipping the package, each node's kernels.

`connect` joins the cluster at an address (refused in one line, `ClusterError`, when
nothing answers there) with the job's runtime environment (`runtime_env`): this package's
directory shipped to every node (Ray's ``py_modules``; the node needs Ray, Python and the
package's dependencies, not the package), and the kernels cached in a node-local
directory (``NUMBA_CACHE_DIR``, `kernel_cache.PackageCacheLocator`). `prepare_nodes`
compiles the kernels once on each node that has not got them yet, a line per node, before
the runs: one task per node, pinned to it and holding all its CPUs, runs `compile_kernels`
there (`worker.warm_node`); the process that ran it then runs runs with its kernels
loaded.
"""

import logging
import os
import socket
import sys
import time

KERNEL_CACHE = '/tmp/flexible_manipulator-kernels'    # on each node (node-local: /tmp)
CONNECT_TIMEOUT = 5.0       # s for the address to answer before Ray is asked to join


class ClusterError(Exception):
    """The cluster cannot be joined (the message says why, in one line)."""


def package_directory():
    """Return the directory of this package (what is shipped to the nodes)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def runtime_env(kernel_cache=KERNEL_CACHE):
    """Return the job's Ray runtime environment: the package shipped, the kernel cache.

    ``kernel_cache``: each node's directory of compiled kernels; ``${VAR}`` in it is
    replaced on each node by that node's environment variable (Ray's rule for
    ``env_vars``): ``${NUMBA_CACHE_DIR}`` keeps each node's own.
    """
    from .kernel_cache import LOCATORS
    return {'py_modules': [package_directory()],
            'excludes': ['__pycache__', '*.pyc', '*.nbi', '*.nbc'],
            'env_vars': {'NUMBA_CACHE_DIR': kernel_cache,
                         'NUMBA_CACHE_LOCATOR_CLASSES': LOCATORS}}


def check_reachable(address, timeout=CONNECT_TIMEOUT):
    """Raise `ClusterError` unless something answers at ``address`` (HOST:PORT, ray://...)."""
    if address in (None, '', 'auto', 'local'):
        return
    host, _, port = address.split('://', 1)[-1].rstrip('/').rpartition(':')
    if not port.isdigit() or not host:
        raise ClusterError(f'{address}: expected HOST:PORT or ray://HOST:PORT')
    try:
        socket.create_connection((host.strip('[]'), int(port)), timeout).close()
    except OSError as error:
        raise ClusterError(f'cannot reach a Ray cluster at {address}: '
                           f'{error.strerror or error}') from None


def connect(address, kernel_cache=KERNEL_CACHE):
    """Join the Ray cluster at ``address`` with `runtime_env` (`ClusterError` if not)."""
    import ray
    if ray.is_initialized():
        return
    check_reachable(address)
    try:
        ray.init(address=address, runtime_env=runtime_env(kernel_cache),
                 log_to_driver=False, logging_level=logging.WARNING)
    except (ConnectionError, RuntimeError, ValueError, TimeoutError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else ''
        raise ClusterError(f'cannot join the Ray cluster at {address}: '
                           f'{type(error).__name__}: {first}') from None


def _pinned(function, node, cpus=1):
    """Return ``function`` as a Ray task of ``cpus`` CPUs that runs on ``node`` only."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
    return ray.remote(num_cpus=cpus, max_retries=1)(function).options(
        scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False))


def prepare_nodes(payload, stream=sys.stderr):
    """Compile the kernels of ``payload`` on each node of the cluster that lacks them.

    A line per such node when it starts (``compiling kernels on node ID (first use)``)
    and when it is done; returns {node id: `worker.kernel_state` + ``seconds``, the
    compile's wall time (None: cached before or failed: a line says why)}. A node that
    joins later compiles in its first run. Nothing to do for ``mode: ros_graph`` (its
    nodes are processes of their own).
    """
    import ray
    from . import worker
    if payload['mode'] != 'closed_loop':
        return {}
    cpus = {node['NodeID']: int(node.get('Resources', {}).get('CPU', 0))
            for node in ray.nodes() if node.get('Alive')}
    nodes = [node for node, count in cpus.items() if count >= 1]
    states = {node: state for node, state in zip(nodes, ray.get(
        [_pinned(worker.kernel_state, node).remote(payload) for node in nodes]))}
    compiling, started = {}, time.monotonic()
    for node, state in states.items():
        state['seconds'] = None
        if not state['cached']:
            _say(stream, f'compiling kernels on node {node[:8]} ({state["host"]}, cache '
                         f'{state["cache"] or "beside the shipped package"}) (first use)')
            compiling[_pinned(worker.warm_node, node, cpus[node]).remote(
                payload, cpus[node])] = node
    while compiling:
        done, _ = ray.wait(list(compiling), num_returns=1)
        node = compiling.pop(done[0])
        try:
            states[node]['seconds'] = ray.get(done[0])
        except ray.exceptions.RayError as error:
            last = str(error).strip().splitlines()[-1] if str(error).strip() else ''
            _say(stream, f'compiling kernels on node {node[:8]} failed ({last}); its runs '
                         'compile what they call')
            continue
        _say(stream, f'kernels ready on node {node[:8]} after '
                     f'{time.monotonic() - started:.0f} s')
    return states


def _say(stream, line):
    """Print a progress line of the sweep (if there is a stream)."""
    if stream is not None:
        print(f'[sweep] {line}', file=stream, flush=True)
