"""The node graphs, described once for `ros2 launch` and for bring-up.

Both `launch/sim.launch.py` and `flexible_manipulator.nodes.bringup` start the simulation
nodes with the same parameter file, so the pip-only path and a ROS 2 install run the same
graph; `launch/hil.launch.py` starts the controller alone for a real arm.
"""

from dataclasses import dataclass

PACKAGE = 'flexible_manipulator'


@dataclass(frozen=True)
class NodeSpec:
    """One node: its executable (console script), module (for ``python -m``) and name.

    ``sim_time``: run on simulated time (``use_sim_time: true``, a /clock subscription).
    Neither simulation node does: the plant is the source of /clock and stamps its messages
    with its own simulated time, and the controller keeps time by the stamps of the states
    it answers. Both run their timers on wall time, and a /clock callback per tick would
    cost each about a fifth of its lock-step rate. Nodes added to the graph (RViz, a
    recorder) should use simulated time.
    """

    executable: str
    module: str
    name: str
    sim_time: bool = False


SIMULATION = (
    NodeSpec('plant', 'flexible_manipulator.nodes.plant_node', 'plant'),
    NodeSpec('controller', 'flexible_manipulator.nodes.controller_node', 'controller'),
)

# The controller alone, for a real arm's driver (hardware in the loop): launch/hil.launch.py.
HARDWARE_IN_THE_LOOP = (
    NodeSpec('controller', 'flexible_manipulator.nodes.controller_node', 'controller'),
)

# A servoconstraint system (rigid body or Chaplygin sleigh) alone: launch/servo.launch.py.
SERVO = (
    NodeSpec('servo_plant', 'flexible_manipulator.nodes.servo_node', 'servo_plant'),
)

# A free servo plant (no constraint, one input along b) closed by the servo controller,
# which realizes the servoconstraint: launch/servo_closed_loop.launch.py.
SERVO_CLOSED_LOOP = (
    NodeSpec('servo_plant', 'flexible_manipulator.nodes.servo_node', 'servo_plant'),
    NodeSpec('servo_controller', 'flexible_manipulator.nodes.servo_controller_node',
             'controller'),
)

# Added to any graph by ``record:=FILE`` (launch) or ``--record FILE`` (bringup).
RECORDER = NodeSpec('record', 'flexible_manipulator.recording.recorder', 'recorder')
# Added by ``view:=true`` (launch) or ``--view`` (bringup): the graph in a web browser.
VIEW = NodeSpec('view', 'flexible_manipulator.nodes.view_node', 'view')

# Parameter file (in the package's config/ directory) of each graph.


def container_ros_arguments(specs, params_file, overrides):
    """ROS arguments of the ``container`` executable holding the nodes ``specs``.

    ``overrides``: {node name: {parameter: value}}, each set on its node only (``-p
    NODE:NAME:=VALUE``; a parameters dict would reach every node of the process), and
    ``use_sim_time`` per `NodeSpec.sim_time`. The file comes first: rcl applies the rules
    in order, so the overrides win.
    """
    arguments = ['--params-file', params_file]
    for spec in specs:
        values = {'use_sim_time': True} if spec.sim_time else {}
        values.update(overrides.get(spec.name, {}))
        for name, value in values.items():
            text = str(value).lower() if isinstance(value, bool) else value
            arguments += ['-p', f'{spec.name}:{name}:={text}']
    return arguments


SIMULATION_PARAMETERS = 'sim.yaml'
HIL_PARAMETERS = 'hil.yaml'
SERVO_PARAMETERS = 'servo.yaml'
SERVO_CLOSED_LOOP_PARAMETERS = 'servo_closed_loop.yaml'
