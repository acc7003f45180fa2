"""Studies on a real Ray head (started here: 2 CPUs, a private temporary directory).

Expected values: the local run of the same study (`runner.local_rows`, itself checked
against the closed loop in test_studies.py): every run's row is the same but for the
machine-dependent columns (deterministic runs); a Ray worker killed while it runs a task
does not fail the study (Ray runs the task again); the sweep command with ``--ray
ADDRESS`` streams the rows into the same table as a local run.
"""

import os
import shutil
import signal
import tempfile
import threading
import time

import pytest

from flexible_manipulator.studies.spec import load_study, parse_study

ray = pytest.importorskip('ray', reason='ray (pip only: requirements-ros.txt) is not installed')
pytest.importorskip('pyarrow', reason='pyarrow (pip only: requirements-ros.txt) is not '
                    'installed: a study writes its table with it')
from test_studies import journal_rows, SMALL, stable, sweep, write  # noqa: E402 - after
from flexible_manipulator.studies.runner import run_study  # noqa: E402 - the skips
from flexible_manipulator.studies.table import read_table  # noqa: E402

pytestmark = pytest.mark.slow      # with its Ray instance (module fixture): one run


@pytest.fixture(scope='module')
def head():
    """A local Ray head of 2 CPUs in a temporary directory; its address."""
    # No token file in the home directory for a head that lives as long as the test.
    os.environ['RAY_AUTH_MODE'] = 'disabled'
    directory = tempfile.mkdtemp(prefix='ray', dir='/tmp')   # short: Ray's socket paths
    context = ray.init(num_cpus=2, _temp_dir=directory, include_dashboard=False,
                       log_to_driver=False)
    yield context.address_info['gcs_address']
    ray.shutdown()
    shutil.rmtree(directory, ignore_errors=True)


def test_ray_study_rows_equal_the_local_rows(tmp_path, head):
    study = parse_study(dict(SMALL, parameters=dict(SMALL['parameters'], **{
        'plant.integration_step': [0.0005, 0.0007]})), 'small')     # 4 of 8 runs fail
    local = run_study(study, str(tmp_path / 'local'), workers=2, stream=None, plots=False)
    remote = run_study(study, str(tmp_path / 'ray'), use_ray=True, stream=None, plots=False)
    assert (local.ran, local.failed) == (remote.ran, remote.failed) == (8, 4)
    rows = read_table(tmp_path / 'ray')
    assert stable(rows) == stable(read_table(tmp_path / 'local'))
    assert {row['worker_warmups'] for row in rows} == {1}        # once per Ray worker
    assert max(row['worker_run'] for row in rows) >= 2


def _busy_ray_workers():
    """Process ids of the Ray workers running a run now (process title ray::run_one)."""
    found = []
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            with open(f'/proc/{pid}/cmdline', 'rb') as stream:
                if stream.read().startswith(b'ray::run_one'):
                    found.append(int(pid))
        except OSError:
            pass
    return found


def test_a_killed_ray_worker_does_not_fail_the_study(tmp_path, head):
    study = parse_study(dict(SMALL, duration=1.0), 'small')
    output = str(tmp_path / 'ray')
    outcome = []
    thread = threading.Thread(target=lambda: outcome.append(
        run_study(study, output, use_ray=True, stream=None, plots=False)))
    thread.start()
    killed, deadline = None, time.monotonic() + 240
    while killed is None and time.monotonic() < deadline and thread.is_alive():
        busy = _busy_ray_workers()
        if busy and journal_rows(output):          # warmed up, runs left
            killed = busy[0]
            os.kill(killed, signal.SIGKILL)
        time.sleep(0.05)
    thread.join(300)
    assert killed is not None, 'no busy Ray worker found to kill'
    assert outcome and outcome[0].ran == 4 and outcome[0].failed == 0
    rows = read_table(output)
    assert [row['status'] for row in rows] == ['ok'] * 4
    local = run_study(study, str(tmp_path / 'local'), workers=2, stream=None, plots=False)
    assert local.ran == 4
    assert stable(rows) == stable(read_table(tmp_path / 'local'))


def test_the_command_runs_on_the_ray_cluster_at_an_address(tmp_path, head):
    # The node's kernel cache seeded with this checkout's kernels: the command is the
    # subject here, a node's first compile is test_studies_cluster's.
    from test_studies_cluster import seed_kernels
    cache = tmp_path / 'kernels'
    seed_kernels(str(cache))
    path = write(tmp_path / 'study.yaml', SMALL)
    process = sweep(path, '--ray', head, '--no-figures', '--kernel-cache', str(cache))
    output, error = process.communicate(timeout=300)
    assert process.returncode == 0, error[-3000:]
    assert '4 runs (0 done before, 4 now): 0 failed' in output
    rows = read_table(tmp_path / 'study.results')
    # the same file (its parameters' order, which the dump sorts, orders the runs)
    local = run_study(load_study(path), str(tmp_path / 'local'), workers=2, stream=None,
                      plots=False)
    assert local.ran == 4
    assert stable(rows) == stable(read_table(tmp_path / 'local'))
