"""The node graph of a simulation, described once for `ros2 launch` and for bring-up.

Both `launch/sim.launch.py` and `flexible_manipulator.nodes.bringup` start these nodes
with these parameter files, so the pip-only path and a ROS 2 install run the same graph.
"""

from dataclasses import dataclass

PACKAGE = 'flexible_manipulator'


@dataclass(frozen=True)
class NodeSpec:
    """One node: its executable (console script), module (for ``python -m``) and name."""

    executable: str
    module: str
    name: str


SIMULATION = (
    NodeSpec('plant', 'flexible_manipulator.nodes.plant_node', 'plant'),
    NodeSpec('controller', 'flexible_manipulator.nodes.controller_node', 'controller'),
)

# A servoconstraint system (rigid body or Chaplygin sleigh) alone: launch/servo.launch.py.
SERVO = (
    NodeSpec('servo_plant', 'flexible_manipulator.nodes.servo_node', 'servo_plant'),
)

# Parameter file (in the package's config/ directory) of each graph.
SIMULATION_PARAMETERS = 'sim.yaml'
SERVO_PARAMETERS = 'servo.yaml'
