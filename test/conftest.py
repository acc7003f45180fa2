"""Shared fixtures: real rclpy nodes over real DDS, kept on this machine.

Every test that talks ROS gets its own ROS_DOMAIN_ID, the shared-memory transport only and
localhost discovery (no packet leaves the machine), a probe node in this process, and a
way to start the package's nodes as separate processes whose output is kept for checks.
"""

import os

# Before anything imports numpy: one BLAS thread per process. The suite runs a worker per
# CPU, each starting nodes beside it; a pool of BLAS threads per process then outnumbers
# the CPUs, and OpenBLAS's threads spin while they wait: an identification's fit took half
# again as much CPU with the default pool as with one thread, beside another worker.
for _variable in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
    os.environ.setdefault(_variable, '1')

import subprocess  # noqa: E402 - after the thread settings
import sys  # noqa: E402
import time  # noqa: E402

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

import node_forks  # noqa: E402

from flexible_manipulator.ros_domain import claims_in_turn  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = os.path.join(REPO, 'config')

# Before anything imports rclpy: keep DDS on this host.
os.environ['FASTDDS_BUILTIN_TRANSPORTS'] = 'SHM'
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
if not os.environ.get('AMENT_PREFIX_PATH'):
    os.environ['AMENT_PREFIX_PATH'] = sys.prefix

# Property-based tests (test_fuzz_*.py; strategies in fuzzing.py): ``ci`` is bounded and
# derandomized (the same examples on every machine, a few minutes in all); ``long``
# (HYPOTHESIS_PROFILE=long) draws 10^5 random examples per entry (HYPOTHESIS_EXAMPLES: another
# number, e.g. to run it in parts with different --hypothesis-seed), run by hand.
_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
settings.register_profile('ci', max_examples=300, stateful_step_count=25, deadline=None,
                          derandomize=True, database=None, suppress_health_check=_QUIET,
                          print_blob=True)
settings.register_profile('long', max_examples=int(os.environ.get('HYPOTHESIS_EXAMPLES',
                                                                  100_000)),
                          stateful_step_count=25,
                          deadline=None, database=None, suppress_health_check=_QUIET,
                          print_blob=True)
settings.load_profile(os.environ.get('HYPOTHESIS_PROFILE', 'ci'))

# A test session claims its domain ids in turn from a start of its own (`ros_domain`: the
# claim keeps two sessions, or a test and a demo's bring-up, off each other's domains).
claim_domain_id = claims_in_turn(os.getpid() % 50)


class NodeProcess:
    """One package node in its own process, its output in a file."""

    def __init__(self, module, domain_id, log_path, params_file=None, parameters=(),
                 remaps=(), arguments=(), fork=True):
        """Start ``python -m module`` with ``--params-file``, remappings and parameters.

        ``remaps`` are (from, to) pairs (``-r from:=to``), ``parameters`` (name, value)
        pairs (``-p name:=value``), ``arguments`` the module's own, before ``--ros-args``.
        ``fork``: a fork of this test process's node server (`node_forks`: the imports
        done once), else a new interpreter (``python -m``: what a test of the process's
        own start and exit needs, the interpreter's finalization included).
        """
        command = [*arguments, '--ros-args']
        if params_file:
            command += ['--params-file', params_file]
        for source, target in remaps:
            command += ['-r', f'{source}:={target}']
        for name, value in parameters:
            command += ['-p', f'{name}:={value}']
        self.log_path = log_path
        self._log = open(log_path, 'w')
        # Either way with a fault handler: a crash (SIGSEGV) prints every thread's stack.
        if fork:
            self.process = node_forks.ForkedProcess(
                module, command, dict(os.environ, ROS_DOMAIN_ID=str(domain_id)), log_path)
        else:
            env = dict(os.environ, ROS_DOMAIN_ID=str(domain_id), PYTHONUNBUFFERED='1',
                       PYTHONFAULTHANDLER='1')
            self.process = subprocess.Popen([sys.executable, '-m', module, *command], env=env,
                                            stdout=self._log, stderr=subprocess.STDOUT)

    def output(self):
        """Everything the node printed so far."""
        self._log.flush()
        with open(self.log_path) as stream:
            return stream.read()

    def wait(self, timeout):
        """Wait for the process to exit; return its exit code."""
        return self.process.wait(timeout)

    def alive(self):
        """True while the process runs."""
        return self.process.poll() is None

    def stop(self):
        """Interrupt (as Ctrl-C), then kill if it does not stop."""
        if self.alive():
            self.process.send_signal(subprocess.signal.SIGINT)
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()


class Probe:
    """A test node in this process: subscribe, publish, call services, spin until."""

    def __init__(self, domain_id):
        """Create a private rclpy context on ``domain_id`` and a node in it."""
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        self.rclpy = rclpy
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = rclpy.create_node('test_probe', context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.received = {}

    def subscribe(self, msg_type, topic, qos=50):
        """Collect every message on ``topic`` into the returned list."""
        messages = self.received.setdefault(topic, [])
        self.node.create_subscription(msg_type, topic, messages.append, qos)
        return messages

    def publisher(self, msg_type, topic, qos=10):
        """Create a publisher on ``topic``."""
        return self.node.create_publisher(msg_type, topic, qos)

    def spin_until(self, predicate, timeout, what='condition'):
        """Spin until ``predicate()`` is true; fail the test after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                pytest.fail(f'timed out after {timeout} s waiting for {what}')
            self.executor.spin_once(timeout_sec=0.05)

    def spin_for(self, seconds):
        """Spin for a fixed wall time."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.02)

    def call(self, srv_type, name, request, timeout=10.0):
        """Call a service and return its response."""
        client = self.node.create_client(srv_type, name)
        self.spin_until(client.service_is_ready, timeout, f'service {name}')
        future = client.call_async(request)
        self.spin_until(future.done, timeout, f'response of {name}')
        return future.result()

    def close(self):
        """Destroy the node and the context."""
        self.executor.shutdown()
        self.node.destroy_node()
        self.context.try_shutdown()


@pytest.fixture
def domain_id():
    """A fresh ROS domain id for one test, held until its nodes have stopped."""
    candidate, lock = claim_domain_id()
    yield candidate
    lock.close()


@pytest.fixture
def probe(domain_id):
    """A probe node on the test's domain."""
    node = Probe(domain_id)
    yield node
    node.close()


@pytest.fixture
def start_node(domain_id, tmp_path):
    """Start package nodes on the test's domain; all are stopped at the end of the test."""
    started = []

    def start(module, params_file=os.path.join(CONFIG, 'sim.yaml'), parameters=(), name=None):
        name = name or module.rsplit('.', 1)[-1]
        parameters = list(parameters)
        node = NodeProcess(module, domain_id, tmp_path / f'{name}-{len(started)}.log',
                           params_file, parameters)
        started.append(node)
        return node

    yield start
    for node in started:
        node.stop()


PLANT = 'flexible_manipulator.nodes.plant_node'
CONTROLLER = 'flexible_manipulator.nodes.controller_node'
SERVO_CONTROLLER = 'flexible_manipulator.nodes.servo_controller_node'


@pytest.fixture(scope='module')
def flexible():
    """The demo's planar two-link flexible arm (config/models/two_link_flexible.yaml)."""
    from flexible_manipulator.model_config import load_model
    return load_model(os.path.join(CONFIG, 'models', 'two_link_flexible.yaml'))


@pytest.fixture(scope='module')
def demo_programs():
    """The demo's programs by name (config/programs_two_link_flexible.yaml)."""
    from flexible_manipulator.control.program_config import load_program_file
    return load_program_file(os.path.join(CONFIG, 'programs_two_link_flexible.yaml'))[0]
