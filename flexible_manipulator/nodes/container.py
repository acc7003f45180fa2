"""Several nodes of the graph in one process, on one executor (composition).

    container plant controller --ros-args --params-file config/sim_soft.yaml
        -p plant:timing_mode:=lockstep          (one command line)

The named executables' nodes (``plant``, ``controller``, ``servo_plant``,
``servo_controller``) are created in this order in one rclpy context and spun by one
`TickExecutor`, as rclcpp's ``component_container`` holds C++ nodes. They still talk over
their topics (the controller drives a real arm the same way), but a message between them
is delivered within the process (Fast DDS's intra-process path, no shared-memory segment)
and the exchange wakes no other process: on the lock-step soft arm it more than doubles the
loop's rate and halves the CPU per tick (bench/README.md, ``bench_closed_loop.py``). One
process also means one interpreter: the nodes' callbacks take turns (as they do in
lock-step anyway), and one node's fault ends both.

Each node reads its own section of the parameter file (by node name, as when it runs
alone); ``-p NODE:NAME:=VALUE`` sets a parameter of one node, ``-p NAME:=VALUE`` of all.
Signals and bad configuration end the process as they end a single node
(`common.run_nodes`): 0 on SIGINT/SIGTERM, 2 and one line naming the problem otherwise.
"""

import importlib
import sys

from rclpy.utilities import remove_ros_args

from . import common
from .. import graph


def composable():
    """Return {executable: NodeSpec} of the nodes whose module makes one (``make_node``)."""
    specs = (*graph.SIMULATION, *graph.SERVO_CLOSED_LOOP)
    return {spec.executable: spec for spec in specs}


def factories(executables):
    """Return `common.run_nodes`'s (make_node, name) pairs for ``executables``.

    ValueError naming the problem for an unknown executable, a repeated one or none.
    """
    known = composable()
    unknown = [e for e in executables if e not in known]
    if unknown or not executables or len(set(executables)) != len(executables):
        raise ValueError(f'container: give each of {", ".join(sorted(known))} at most once '
                         f'(got {" ".join(executables) or "none"})')
    return [(importlib.import_module(known[e].module).make_node, known[e].name)
            for e in executables]


def main(args=None):
    """Entry point of the ``container`` executable."""
    argv = list(sys.argv if args is None else ['container', *args])
    common.refuse_unreadable_parameter_files('container', argv)
    try:
        pairs = factories(remove_ros_args(argv)[1:])
    except ValueError as error:
        print(error, file=sys.stderr, flush=True)
        return 2
    except RuntimeError as error:       # rclpy's RCLError: arguments rcl cannot parse
        common.refuse('container', f'cannot read the node arguments: {common.one_line(error)}')
    common.run_nodes(pairs, argv)
    return 0


if __name__ == '__main__':
    sys.exit(main())
