"""What every node of the package shares: parameter declaration, joint maps, main loop."""

import math
import os
import signal
import sys
import time
import warnings

import rclpy
from rclpy.event_handler import PublisherEventCallbacks, SubscriptionEventCallbacks
from rclpy.exceptions import InvalidParameterTypeException, ParameterException
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile
from rclpy.signals import SignalHandlerOptions
from builtin_interfaces.msg import Time
from rcl_interfaces.msg import ParameterDescriptor
from std_msgs.msg import String

from .executor import TickExecutor
from .message_memory import bound_message_memory
from .name_map import NameMap, Problem
from ..entry_points import ShutdownRequest
from ..mechanics.integrators import renamed_message
from ..config_checks import ConfigError
from ..config_files import resolve_model_path
from ..model_config import load_model, ModelWarning
from ..plant_config import joint_values  # noqa: F401 - common.joint_values, declared there
from ..settings import parameter_file_problem, parameter_files, Setting


def quiet_publisher(node, message_type, topic, qos=10):
    """Create a publisher without rclpy's default QoS-event handlers.

    Each handler is an entry of the executor's wait set, which rclpy rebuilds for every
    callback (twice per callback: the executor wakes itself once after each): on the
    lock-step path they cost about a third of a node's time per tick. So the simulation
    nodes' publishers go without them, the per-tick topics and the others (diagnostics,
    latched topics) alike: each entry costs every rebuild, however rarely its topic is
    published. Incompatible-QoS warnings are then left to the other side of the topic.
    ``qos``: a history depth or a `QoSProfile`.
    """
    return node.create_publisher(message_type, topic, qos,
                                 event_callbacks=PublisherEventCallbacks(
                                     use_default_callbacks=False))


def quiet_subscription(node, message_type, topic, callback, depth=10, raw=False):
    """Create a subscription without the default QoS-event handlers (`quiet_publisher`).

    ``raw``: the callback gets the serialized bytes (`packed_messages` reads them).
    """
    return node.create_subscription(message_type, topic, callback, depth, raw=raw,
                                    event_callbacks=SubscriptionEventCallbacks(
                                        use_default_callbacks=False))


# The parameter type of each kind of setting (`settings.KINDS`), for those declared unset.
PARAMETER_TYPES = {'float': Parameter.Type.DOUBLE, 'int': Parameter.Type.INTEGER,
                   'bool': Parameter.Type.BOOL, 'str': Parameter.Type.STRING,
                   'floats': Parameter.Type.DOUBLE_ARRAY, 'strings': Parameter.Type.STRING_ARRAY}


class Every:
    """Thins a message sent with every state to one per ``period`` of simulated time [s].

    `due` is true for the first state at or past each multiple of ``period``, for a state
    earlier than the last one sent (after a reset), and, with ``held``, for a state that
    comes again (the same simulated time as the one before it: paused, waiting) once
    ``period`` of wall time passed since the last one sent: a held state's message keeps
    coming, and one heard late (a subscriber discovered after the first) is not lost for
    good. Period 0: every state.
    """

    def __init__(self, period, held=False):
        """Thin to ``period`` (0: none); ``held``: the wall-time rule too."""
        self.period = period
        self.held = held
        self.last = -math.inf           # simulated time of the last state sent
        self.seen = -math.inf           # simulated time of the last state asked about
        self.next = 0.0                 # the next multiple of the period
        self.wall = -math.inf           # wall time (monotonic) of the last state sent

    def due(self, t):
        """Whether the message goes with the state at simulated time ``t``; if so, note it."""
        period = self.period
        again, self.seen = t == self.seen, t
        wall = time.monotonic() if self.held else 0.0
        if not (t < self.last or t >= self.next - 1e-9 * period
                or self.held and again and wall >= self.wall + period):
            return False
        self.last, self.wall = t, wall
        self.next = (math.floor(t / period + 1e-9) + 1.0) * period if period else t
        return True


def model_joints(model):
    """Return the default of ``joints``: the model's joints, in model order."""
    return list(model.joint_names)


def model_setting(default):
    """Return the ``model`` setting of a node whose model file defaults to ``default``."""
    return Setting('model', default, 'Model file: a path, or the name of a file in config/models.')


JOINTS = Setting('joints', model_joints, 'Joint order of the entries of each effort command.',
                 kind='strings')


def declare_settings(node, schema, model=None):
    """Declare each `settings.Setting` of ``schema`` on ``node``; return {name: value}.

    A setting without default is declared by its kind (unset until given: None); a
    default derived from the model is taken for ``model``. An old name of a renamed value
    is accepted with a warning on the node's log and read as the new name. Each value
    goes through the setting's check (`Setting.validate`: an empty array reads None); a
    bad one raises `ConfigError` 'parameter <name>: ...'. The defaults are recorded in
    ``node.parameter_defaults`` (doc/nodes.md's tables are generated from them and the
    descriptions: `parameter_docs`).
    """
    defaults = node.__dict__.setdefault('parameter_defaults', {})
    values = {}
    for setting in schema:
        name, default = setting.name, setting.default_for(model)
        defaults[name] = default
        descriptor = ParameterDescriptor(description=setting.text,
                                         read_only=setting.read_only)
        value = node.declare_parameter(
            name, PARAMETER_TYPES[setting.kind] if default is None else default,
            descriptor).value
        if setting.formerly:
            value = _former(node, setting, value, defaults)
        if setting.renamed and value in setting.renamed:
            node.get_logger().warning(
                f'parameter {renamed_message(name, value, setting.renamed[value])}')
            value = setting.renamed[value]
        try:
            values[name] = setting.validate(value)
        except ConfigError as error:
            raise ConfigError(f'parameter {error}') from None
    return values


def _former(node, setting, value, defaults):
    """Declare ``setting``'s former name (unset); return its value when given, else ``value``.

    Given, the former name's value (mapped: `Setting.former_value`) is read, with a warning
    on the node's log naming the parameter to use.
    """
    old = setting.formerly[0]
    defaults[old] = None
    given = node.declare_parameter(
        old, PARAMETER_TYPES[setting.kind],
        ParameterDescriptor(description=setting.former_text, read_only=True)).value
    if given is None:
        return value
    read = setting.former_value(given)
    node.get_logger().warning(
        f'parameter {old} is deprecated: read as {setting.name}: {read}; name {setting.name} '
        'instead')
    return read


# Longest wait [s] for the robot description of a model file with ``urdf: '-'``.
DESCRIPTION_WAIT = 10.0


def model_parameter(node, setting):
    """Declare ``model`` (``setting``) and load the model it names (path or config/models).

    A model file with ``urdf: '-'`` reads the URDF on ``robot_description``
    (`robot_description`); ``node.description_from_topic`` tells whether it did.
    """
    model_name = declare_settings(node, (setting,))['model']
    read = []

    def description():
        read.append(True)
        return robot_description(node)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always', ModelWarning)
        model = load_model(resolve_model_path(model_name), robot_description=description)
    node.description_from_topic = bool(read)
    for warning in caught:      # outside its validity: said once, on the node's log
        node.get_logger().warning(str(warning.message))
    return model


def robot_description(node, timeout=DESCRIPTION_WAIT):
    """Return the URDF text on ``robot_description``, waiting up to ``timeout`` [s] for it.

    A transient-local subscription (robot_state_publisher and the plant latch it), spun
    here before the node's own executor runs; `ConfigError` if nothing comes.
    """
    received = []
    latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    subscription = node.create_subscription(String, 'robot_description',
                                            lambda message: received.append(message.data),
                                            latched)
    executor = TickExecutor(context=node.context)
    executor.add_node(node)
    deadline = time.monotonic() + timeout
    try:
        while (not received and time.monotonic() < deadline
               and ShutdownRequest.current().requested is None):
            executor.spin_once(timeout_sec=0.05)
    finally:
        executor.remove_node(node)
        executor.shutdown()
        topic = subscription.topic_name
        node.destroy_subscription(subscription)
    if not received:
        raise ConfigError(f"urdf: '-': no robot description on {topic} within {timeout:g} s "
                          '(a std_msgs/String published transient local, as '
                          'robot_state_publisher does): start its publisher, or give the '
                          'URDF file in the model file')
    return received[-1]


def joint_order(model, names):
    """Map the ``joints`` parameter's ``names`` onto the model's joints.

    Returns ``index`` with ``index[k]`` the model joint of entry k; every model joint
    must appear exactly once (`name_map`, the rules the nodes' messages follow too).
    """
    names = list(names or [])
    match = NameMap(model.joint_names).match(names)
    if isinstance(match, Problem):
        if match.kind == 'unknown':
            raise ConfigError(f'parameter joints: unknown joint {match.name!r} (model '
                              f'{model.name!r} has {", ".join(model.joint_names)})')
        raise ConfigError(f'parameter joints: must list each of {", ".join(model.joint_names)} '
                          f'exactly once; got {names}')
    return [model.joint_names.index(n) for n in names]


def stamp(seconds):
    """builtin_interfaces/Time of a non-negative time in seconds."""
    sec = math.floor(seconds)
    return Time(sec=int(sec), nanosec=min(int(round((seconds - sec) * 1e9)), 999_999_999))


def seconds(time_msg):
    """Return a builtin_interfaces/Time (a header's stamp) in seconds: `stamp` inverted."""
    return time_msg.sec + 1e-9 * time_msg.nanosec


class ReasonThrottle:
    """Log each kind of problem at once, and repeats of the same kind at most every period.

    rclpy's ``throttle_duration_sec`` throttles per call site, which would hide a new kind
    of problem behind an old one.
    """

    def __init__(self, log, period=1.0, periods=None):
        """``log`` is a logger method such as ``node.get_logger().warning``.

        ``period`` [s, wall time] between repeats of a kind; ``periods``: {kind: period}
        for kinds with their own.
        """
        self.log = log
        self.period = period
        self.periods = dict(periods or {})
        self.last = {}

    def __call__(self, kind, message):
        """Log ``message`` unless a message of ``kind`` was logged within its period."""
        now = time.monotonic()
        if now - self.last.get(kind, -math.inf) >= self.periods.get(kind, self.period):
            self.last[kind] = now
            self.log(message)


# Longest wait of the spin loop for work [s]: the bound on the reaction to a signal.
SPIN_WAIT = 0.1

# The label (``layout.dim[0].label``) of an effort command a controller sends on its own, not
# as the answer to a state: its stale-state watchdog's. Drivers read ``data`` alone; a
# lock-step plant keeps it as the last command and advances nothing on it (it would
# otherwise answer a state published just before it, and the real answer the next).
UNANSWERING = 'watchdog'


def run(node_class, args=None, name=None):
    """Create the node and spin until SIGINT/SIGTERM; exit 0 then, 2 on bad configuration.

    ``node_class`` is called with no argument to make the node (a class, or a function
    choosing one: ``name`` then names it in messages). `run_nodes` with one node.
    """
    run_nodes([(node_class, name or node_class.__name__)], args)


def run_nodes(factories, args=None):
    """Create the nodes and spin them on one executor until SIGINT/SIGTERM.

    ``factories``: (callable making a node, name for messages) pairs, created in order in
    one rclpy context (`nodes.container`: several nodes of the graph in one process). Exit 0
    on a signal.

    A configuration problem (a `ConfigError` from a node, a parameter of the wrong type,
    a parameter file that is missing, not valid YAML or uses YAML anchors) ends the
    process with one line
    naming it and exit code 2, never a traceback.
    """
    shutdown = ShutdownRequest.current()     # installed early by an `entry_points` script
    if shutdown.requested is not None:
        return                  # Ctrl-C while the node's modules were being imported
    name = factories[0][1]
    refuse_unreadable_parameter_files(name, sys.argv if args is None else args)
    bound_message_memory()      # before the middleware starts: it reads the profile then
    try:
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    except Exception as error:                       # rcl parses --params-file here
        refuse(name, f'cannot read the node arguments: {one_line(error)}')
    nodes = []
    try:
        executor = TickExecutor()
        for factory, name in factories:
            nodes.append(factory())
            executor.add_node(nodes[-1])
        while shutdown.requested is None and rclpy.ok():
            executor.spin_once(timeout_sec=SPIN_WAIT)
    except ConfigError as error:
        refuse(name, str(error))
    except (InvalidParameterTypeException, ParameterException) as error:
        refuse(name, f'parameter: {one_line(error)}')
    finally:
        for node in reversed(nodes):
            node.destroy_node()
        rclpy.try_shutdown(uninstall_handlers=False)
        # Python restores the default handlers while the interpreter exits: a second signal
        # (launch sends one when stdin is no terminal; bringup after Ctrl-C) would kill the
        # process with -2 there. The nodes are done: ignore both from now on.
        for number in (signal.SIGINT, signal.SIGTERM):
            signal.signal(number, signal.SIG_IGN)


def refuse_unreadable_parameter_files(name, arguments):
    """Refuse (`refuse`) when a ``--params-file`` of ``arguments`` is one rcl cannot read.

    Before rclpy parses the arguments: its error would be a traceback or a misleading line
    (`settings.parameter_file_problem`).
    """
    for path in parameter_files(arguments):
        problem = parameter_file_problem(path)
        if problem is not None:
            refuse(name, problem)


def one_line(error):
    """Return the text of an exception on one line."""
    return ' '.join(str(error).split())


def refuse(name, reason):
    """End the process at once with exit code 2 and one line saying why it refused to start.

    The half-built node is not torn down (``os._exit``): the node never ran, and both ways
    of tearing it down crashed the process now and then instead of exit 2. Its rcl handles
    left to the garbage collector after rclpy's shutdown died with SIGSEGV at exit (1 run
    in 5 under load); destroying them at once in the constructor died with SIGSEGV inside
    rcl's node fini (Fast DDS deleting a participant moments after creating it, 1 refusal
    in a few hundred on a loaded CI machine).
    """
    print(f'[{name}] refusing to start: {reason}', file=sys.stderr, flush=True)
    sys.stdout.flush()
    os._exit(2)
