"""Package nodes started as forks of a process that has already imported them.

A node's process spends about a second of CPU before its own work: importing numpy,
scipy, numba and rclpy, numba's first set-up of its compiler target, loading the cached
kernels. The suite starts a hundred and more nodes. Here a server process of the standard
library (multiprocessing's fork server) imports all that once per test process; each node
is then a fork of it that runs ``python -m module args`` as ``runpy`` does: its own
process (pid, signals, exit code, a log file on its stdout and stderr), its own rclpy
context and DDS participant (rclpy is imported in the server but never initialized; DDS
starts its threads only at ``rclpy.init``, after the fork), its own environment
(``ROS_DOMAIN_ID``). The node's module itself is run afresh as ``__main__``, as
``python -m`` does.

What differs from ``python -m``: the imports happened before the fork, so a signal during
them cannot be tested here (test_ros_shutdown starts its nodes with ``python -m``).
"""

import atexit
import faulthandler
import io
import multiprocessing
import os
import runpy
import signal
import subprocess
import sys

# Imported in the server (this module's import there), so that every fork has them.
NODE_MODULES = ('flexible_manipulator.nodes.plant_node',
                'flexible_manipulator.nodes.controller_node',
                'flexible_manipulator.nodes.servo_node',
                'flexible_manipulator.nodes.servo_controller_node')
# The model whose kernels the server loads from numba's cache (the demo's: most tests').
WARM_MODEL = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                          'config', 'models', 'two_link_flexible.yaml')


def _warm_up():
    """Import the nodes' modules and load the demo model's kernels (in the server only)."""
    import importlib
    import numpy as np
    for module in NODE_MODULES:
        importlib.import_module(module)
    from flexible_manipulator.model_config import load_model
    model = load_model(WARM_MODEL)
    data = model.create_data()
    q, v = model.neutral_configuration(), np.zeros(model.nv)
    model.mass_matrix(data, q)
    model.bias_forces(data, q, v)
    model.forward_dynamics(data, q, v, np.zeros(model.nu))


def run_as_main(module, arguments, environment, log_path):
    """The fork's work: ``python -m module arguments`` with its output in ``log_path``.

    ``environment``: the whole environment of the process (as ``subprocess.Popen``'s env).
    """
    descriptor = os.open(log_path, os.O_WRONLY | os.O_APPEND)
    os.dup2(descriptor, 1)
    os.dup2(descriptor, 2)
    os.close(descriptor)
    # As PYTHONUNBUFFERED: every write reaches the file at once.
    sys.stdout = io.TextIOWrapper(io.FileIO(1, 'w', closefd=False), write_through=True,
                                  line_buffering=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, 'w', closefd=False), write_through=True,
                                  line_buffering=True, errors='backslashreplace')
    os.environ.clear()                  # the starting test's environment, as Popen's env
    os.environ.update(environment)
    faulthandler.enable(all_threads=True)
    sys.argv = [module, *arguments]
    sys.modules.pop(module, None)       # run afresh as __main__, as python -m does
    try:
        runpy.run_module(module, run_name='__main__', alter_sys=True)
    finally:
        atexit._run_exitfuncs()         # what the interpreter's exit would run


class ForkedProcess:
    """A fork of the server running one node, with the part of Popen's interface tests use."""

    def __init__(self, module, arguments, environment, log_path):
        """Fork the server and run ``module`` with ``arguments`` in the fork."""
        start_server()
        context = multiprocessing.get_context('forkserver')
        self._process = context.Process(target=run_as_main, daemon=False,
                                        args=(module, list(arguments), dict(environment),
                                              str(log_path)))
        self._process.start()
        self.pid = self._process.pid
        self.args = [module, *arguments]

    @property
    def returncode(self):
        """The exit code once the process has ended (negative: the signal), else None."""
        return self._process.exitcode

    def poll(self):
        """Return the exit code if the process has ended, else None."""
        return self._process.exitcode

    def wait(self, timeout=None):
        """Wait for the end; return the exit code, `subprocess.TimeoutExpired` on timeout."""
        self._process.join(timeout)
        if self._process.exitcode is None:
            raise subprocess.TimeoutExpired(self.args, timeout)
        return self._process.exitcode

    def send_signal(self, number):
        """Send signal ``number`` to the process (nothing once it has ended)."""
        if self._process.exitcode is None:
            os.kill(self.pid, number)

    def terminate(self):
        """SIGTERM."""
        self.send_signal(signal.SIGTERM)

    def kill(self):
        """SIGKILL."""
        self.send_signal(signal.SIGKILL)


def start_server():
    """Start the fork server of this process, which imports this module and warms up."""
    from multiprocessing import forkserver
    multiprocessing.set_forkserver_preload([__name__])
    os.environ[SERVER_MARK] = '1'           # the server's environment only
    try:
        forkserver.ensure_running()
    finally:
        del os.environ[SERVER_MARK]


SERVER_MARK = 'FM_TEST_NODE_FORK_SERVER'
if os.environ.pop(SERVER_MARK, None) == '1':
    _warm_up()
