"""A study on a real two-node Ray cluster started here, the second node without the package.

The cluster: a head (``ray start --head``, 1 CPU, its own temporary directory and ports,
the package importable as in this environment) and a second node (``ray start
--address``, 1 CPU, its own temporary directory and ``NUMBA_CACHE_DIR``) whose Python is a
virtual environment seeing this one's packages but not flexible_manipulator, started with
no PYTHONPATH and outside the checkout. The head's kernel cache starts with this
checkout's compiled kernels and the mark of a node that compiled them; the second node's
is empty. Both run with ``--block`` in a process group of their own, ended by its id at the
end, failures included.

Expected values: the sweep command joins the cluster with ``--ray ADDRESS`` and finishes
every run (exit 0); the second node, which cannot import the package itself, runs some of
them (the rows' ``node``) and is the one node announced as compiling its kernels on first
use, into its own cache directory, which then holds them; the recordings arrive in the
driver's output and nothing is left in the nodes' temporary directory; the rows equal the
local runs' bit for bit (every node compiles its kernels as a local set-up does). An
address where no cluster answers is refused in one line, exit status 2, no output
written.
"""

import glob
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time

import pytest

pytest.importorskip('ray', reason='ray (pip only: requirements-ros.txt) is not installed')
pytest.importorskip('pyarrow', reason='pyarrow (pip only: requirements-ros.txt) is not '
                    'installed: a study writes its table with it')
from conftest import REPO  # noqa: E402 - after the skips
from test_studies import SMALL, stable, sweep, write  # noqa: E402
from flexible_manipulator.studies.kernel_cache import sources_digest  # noqa: E402
from flexible_manipulator.studies.runner import run_study  # noqa: E402
from flexible_manipulator.studies.spec import load_study  # noqa: E402
from flexible_manipulator.studies.table import read_table  # noqa: E402

PACKAGE = 'flexible_manipulator'
START_TIMEOUT = 60          # s for a node to start
STUDY_TIMEOUT = 420         # s for the study (the second node compiles its kernels first)
STUDY = dict(SMALL, duration=2.0, draws=3, seed=1, record={'mcap': True},
             parameters=dict(SMALL['parameters'], **{
                 'plant.initial_velocities[0]': {'normal': [0.3716835, 0.02]}}))


def free_ports(count):
    """Return ``count`` TCP ports free on the loopback now."""
    sockets = [socket.socket() for _ in range(count)]
    for one in sockets:
        one.bind(('127.0.0.1', 0))
    ports = [one.getsockname()[1] for one in sockets]
    for one in sockets:
        one.close()
    return ports


def environment_without_package(directory):
    """Make a virtual environment seeing this one's packages but not this package.

    Returns its python. Each entry of this environment's site-packages is linked into a
    directory that the new environment puts on its path, except this package's own
    entries (its directory, its metadata, the editable install's finder and .pth file);
    the other .pth files are copied so that they run there too.
    """
    subprocess.run([sys.executable, '-m', 'venv', '--without-pip', directory], check=True)
    python = os.path.join(directory, 'bin', 'python')
    site = subprocess.run([python, '-c', 'import sysconfig; print(sysconfig.get_paths()'
                           "['purelib'])"], check=True, capture_output=True,
                          text=True).stdout.strip()
    linked = os.path.join(directory, 'linked')
    os.makedirs(linked)
    ours = re.compile(r'flexible.manipulator', re.IGNORECASE)
    source = sysconfig.get_paths()['purelib']
    pth = ['00-linked.pth']
    with open(os.path.join(site, pth[0]), 'w') as stream:
        stream.write(linked + '\n')
    for name in sorted(os.listdir(source)):
        path = os.path.join(source, name)
        if ours.search(name):
            continue
        if name.endswith('.pth'):
            with open(path) as stream:
                text = stream.read()
            if not ours.search(text):
                shutil.copy(path, os.path.join(site, name))
            continue
        os.symlink(path, os.path.join(linked, name))
    return python


def seed_kernels(cache):
    """Copy this checkout's compiled kernels into a node's cache, as a node that compiled.

    The `kernel_cache` layout, with the mark `worker.warm_node` leaves.
    """
    subprocess.run([sys.executable, '-m', f'{PACKAGE}.compile_kernels', '--only', 'demo'],
                   cwd=REPO, check=True, capture_output=True,
                   env=dict(os.environ, PYTHONPATH=REPO))     # seconds when compiled
    package = os.path.join(REPO, PACKAGE)
    directory = os.path.join(cache, f'{PACKAGE}-{sources_digest()}')
    os.makedirs(directory)
    with open(os.path.join(directory, 'kernels-ready'), 'w') as stream:
        stream.write('seeded\n')
    for path in glob.glob(os.path.join(package, '**', '__pycache__', '*.nb[ic]'),
                          recursive=True):
        inside = os.path.relpath(os.path.dirname(os.path.dirname(path)), package)
        target = os.path.join(directory, inside)
        os.makedirs(target, exist_ok=True)
        shutil.copy2(path, target)


def start_node(python, arguments, directory, env, name):
    """Start ``ray start ... --block`` in a process group of its own; `wait_started` waits."""
    log = open(os.path.join(directory, f'{name}.log'), 'w')
    process = subprocess.Popen([python, '-m', 'ray.scripts.scripts', 'start', '--block',
                                '--disable-usage-stats', *arguments], cwd=directory, env=env,
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    process.log_path, process.name = log.name, name
    return process


def wait_started(process):
    """Wait until the node of `start_node` says it runs; RuntimeError if it ends or times out."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        with open(process.log_path) as stream:
            if 'Ray runtime started' in stream.read():
                return process
        if process.poll() is not None:
            break
        time.sleep(0.1)
    with open(process.log_path) as stream:
        raise RuntimeError(f'{process.name} did not start:\n{stream.read()[-3000:]}')


def stop(processes, directory):
    """End the nodes' process groups (by their ids), then anything left under ``directory``."""
    # Killed at once: Ray's own shutdown on SIGTERM takes 20 s and more per node, and what
    # a killed node leaves (sockets, logs, session files) is in its directories, deleted
    # after this.
    for process in processes:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for process in processes:
        process.wait(60)
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            with open(f'/proc/{pid}/cmdline', 'rb') as stream:
                if directory.encode() in stream.read():
                    os.kill(int(pid), signal.SIGKILL)
        except OSError:
            pass


@pytest.fixture(scope='module')
def cluster():
    """Two Ray nodes of 1 CPU each (module doc); yields a dict of their facts."""
    base = tempfile.mkdtemp(prefix='rc', dir='/tmp')    # short: Ray's socket paths
    env = {k: v for k, v in os.environ.items()
           if k not in ('PYTHONPATH', 'RAY_ADDRESS', 'NUMBA_CACHE_DIR')}
    env.update(RAY_AUTH_MODE='disabled')
    os.environ['RAY_AUTH_MODE'] = 'disabled'        # the driver's too: no token file
    facts = {'base': base, 'head_cache': os.path.join(base, 'head-kernels'),
             'node_cache': os.path.join(base, 'node-kernels'),
             'node_tmp': os.path.join(base, 'node-tmp')}
    for key in ('head_cache', 'node_cache', 'node_tmp'):
        os.makedirs(facts[key])
    processes = []
    try:
        # The head starts while the second node's environment is made and the head's cache
        # seeded (the cache is read by the study's runs, after this fixture).
        port, *head_ports = free_ports(7)
        facts['address'] = f'127.0.0.1:{port}'
        processes.append(start_node(sys.executable, [
            '--head', '--node-ip-address', '127.0.0.1', '--port', str(port), '--num-cpus', '1',
            '--temp-dir', os.path.join(base, 'h'), '--include-dashboard', 'false',
            *[f'--{option}={value}' for option, value in zip(
                ('dashboard-agent-listen-port',
                 'dashboard-agent-grpc-port', 'runtime-env-agent-port',
                 'metrics-export-port', 'node-manager-port', 'object-manager-port'),
                head_ports)]], base, dict(env, NUMBA_CACHE_DIR=facts['head_cache']), 'head'))
        python = environment_without_package(os.path.join(base, 'env'))
        check = subprocess.run([python, '-c', f'import {PACKAGE}'], cwd=base, env=env,
                               capture_output=True, text=True)
        assert check.returncode != 0, 'the second node could import the package itself'
        subprocess.run([python, '-c', 'import numba, numpy, ray, scipy, yaml'], cwd=base,
                       env=env, check=True)
        seed_kernels(facts['head_cache'])
        wait_started(processes[0])
        node_ports = free_ports(5)
        processes.append(start_node(python, [
            '--address', facts['address'], '--node-ip-address', '127.0.0.1', '--num-cpus',
            '1', '--temp-dir', os.path.join(base, 'n'),
            *[f'--{option}={value}' for option, value in zip(
                ('dashboard-agent-listen-port', 'dashboard-agent-grpc-port',
                 'runtime-env-agent-port', 'metrics-export-port', 'node-manager-port'),
                node_ports)]], base, dict(env, NUMBA_CACHE_DIR=facts['node_cache'],
                                          TMPDIR=facts['node_tmp']), 'node'))
        wait_started(processes[1])
        yield facts
    finally:
        stop(processes, base)
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.slow
def test_a_study_runs_on_both_nodes_and_the_second_compiles_once(tmp_path, cluster):
    path = write(tmp_path / 'study.yaml', STUDY)
    driver = tmp_path / 'driver'          # outside the checkout: nothing imported from it
    driver.mkdir()
    output = tmp_path / 'out'
    start = time.monotonic()
    process = sweep(path, '--ray', cluster['address'], '--no-figures', '--output',
                    str(output), '--kernel-cache', '${NUMBA_CACHE_DIR}', cwd=str(driver))
    stdout, stderr = process.communicate(timeout=STUDY_TIMEOUT)
    wall = time.monotonic() - start
    assert process.returncode == 0, stderr[-3000:]
    assert '12 runs (0 done before, 12 now): 0 failed' in stdout
    compiling = re.findall(r'compiling kernels on node (\w+) \(.*cache (\S+)\) \(first use\)',
                           stderr)
    node_cache = os.path.join(cluster['node_cache'], f'{PACKAGE}-{sources_digest()}')
    second = [node for node, cache in compiling if cache == node_cache]
    assert len(second) == len(compiling) == 1, stderr[-3000:]     # the head had them
    assert glob.glob(os.path.join(node_cache, '**', '*.nbi'), recursive=True)
    assert os.path.exists(os.path.join(node_cache, 'kernels-ready'))
    rows = read_table(output)
    nodes = {row['node'] for row in rows}
    assert len(nodes) == 2 and any(node.startswith(second[0]) for node in nodes)
    assert {row['worker_warmups'] for row in rows} == {1}    # compiled once per process
    recordings = sorted(os.listdir(output / 'recordings'))
    assert recordings == [f'run_{n:05d}.mcap' for n in range(12)]
    assert all(row['mcap'] == str(output / 'recordings' / name)
               for row, name in zip(rows, recordings))
    with open(output / 'recordings' / recordings[0], 'rb') as stream:
        assert stream.read(5) == b'\x89MCAP'
    assert not glob.glob(os.path.join(cluster['node_tmp'], 'sweep-*'))
    # Throughput (bench/README.md): the runs after the kernels are ready, and per node.
    on_second = [row['run_seconds'] for row in rows if row['node'].startswith(second[0])]
    on_head = [row['run_seconds'] for row in rows if not row['node'].startswith(second[0])]
    ready = [int(n) for n in re.findall(r'kernels ready on node \w+ after (\d+) s', stderr)]
    runs_wall = wall - max(ready)
    print(f'\n[cluster] study of 12 runs of 2 s: {wall:.1f} s wall, kernels ready after '
          f'{ready} s, runs {runs_wall:.1f} s ({60 * 12 / runs_wall:.0f} runs/min on the 2 '
          f'nodes); second node: {len(on_second)} runs, median '
          f'{statistics.median(on_second):.3f} s per run; head: median '
          f'{statistics.median(on_head):.3f} s'
          '\n' + '\n'.join(line for line in stderr.splitlines() if 'kernels' in line))
    local = run_study(load_study(path), str(tmp_path / 'local'), workers=2, stream=None,
                      plots=False)
    assert local.ran == 12
    expected = stable(read_table(tmp_path / 'local'))
    differ = [(row['run'], row['node'][:8], sorted(
        k for k in set(mine) | set(local_row)
        if k != 'mcap' and mine.get(k) != local_row.get(k)))
        for row, mine, local_row in zip(rows, stable(rows), expected)]
    assert not [d for d in differ if d[2]], differ


def test_an_unreachable_address_is_refused_in_one_line(tmp_path):
    path = write(tmp_path / 'study.yaml', SMALL)
    port = free_ports(1)[0]
    process = sweep(path, '--ray', f'127.0.0.1:{port}', '--output', str(tmp_path / 'out'))
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 2
    assert stderr.count('\n') == 1 and stderr.startswith(
        f'sweep: --ray: cannot reach a Ray cluster at 127.0.0.1:{port}'), stderr
    assert not (tmp_path / 'out').exists()
