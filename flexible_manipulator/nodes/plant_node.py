"""Plant node: integrates a mechanical model and talks like a robot driver.

Its topics, services, parameters and bad-input behaviour are documented once, in
doc/nodes.md ("plant"; the parameter table is generated from the descriptors declared
here and in `simulated_plant`). Timing, command intake, services, fault state and
diagnostics are those of `simulated_plant.SimulatedPlant`, shared with the servo plant;
this module adds the arm's model, initial state, state messages and TF.
"""


import numpy as np
import transforms3d
from rclpy.qos import DurabilityPolicy, QoSProfile

from geometry_msgs.msg import TransformStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from . import common
from .common import stamp
from .simulated_plant import plant_settings, SimulatedPlant
from ..description.urdf import joint_frames, urdf
from ..mechanics.equilibrium import static_equilibrium
from ..model_config import ConfigError
from ..settings import Setting

LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)


def transform(frame, time_msg):
    """Build the transform message of a `JointFrame` at its zero joint angle."""
    msg = TransformStamped()
    msg.header.stamp = time_msg
    msg.header.frame_id = frame.parent
    msg.child_frame_id = frame.child
    msg.transform.translation.x, msg.transform.translation.y, msg.transform.translation.z = \
        (float(c) for c in frame.xyz)
    r = msg.transform.rotation
    # URDF rpy is fixed-axis roll-pitch-yaw ('sxyz'); transforms3d returns (w, x, y, z).
    r.w, r.x, r.y, r.z = (float(c) for c in transforms3d.euler.euler2quat(*frame.rpy, 'sxyz'))
    return msg


def fill_states(model, now, q, v, applied, joint_state, modal_state):
    """Fill the joint and modal state messages of ``model`` at state (q, v), stamped ``now``.

    A joint state carries each joint's position, velocity and the effort ``applied`` over
    the period that ends at this state (model input order); a modal state the elastic
    coordinates and their rates (a model without them leaves ``modal_state`` alone). The
    plant's messages and a headless simulation's recording (`recording.synthetic`) are
    filled here alike.
    """
    n = model.n_joints
    joint_state.header.stamp = now
    joint_state.position = q[:n].tolist()
    joint_state.velocity = v[:n].tolist()
    joint_state.effort = applied.tolist()
    if model.n_modes:
        modes = slice(n, n + model.n_modes)
        modal_state.header.stamp = now
        modal_state.position = q[modes].tolist()
        modal_state.velocity = v[modes].tolist()


class PlantNode(SimulatedPlant):
    """The arm plant: a serial-chain model publishing joint states, modes and TF."""

    INPUT_NAME = 'effort'
    COMMAND_NAME = 'effort command'
    FAULT_ADVICE = 'plant paused, call ~/reset to recover'
    SETTINGS = (
        common.model_setting('two_link_rigid'), common.JOINTS,
        *plant_settings(0.0005, 0.002, ' (rosenbrock2, rosenbrock3: linearly implicit, for '
                        'stiff elastic modes)', INPUT_NAME),
        Setting('initial_positions', None, 'Initial joint positions [rad or m].', kind='floats'),
        Setting('initial_velocities', None, 'Initial joint velocities [rad/s or m/s].',
                kind='floats'),
        Setting('initial_modes', 'rest',
                'Initial elastic coordinates (modes, strains), at zero velocity: rest = their '
                'static equilibrium under gravity with the joints held at initial_positions; '
                'zero = straight links.', choices=('rest', 'zero')))

    def __init__(self, **node_options):
        """Read and check parameters, build the model, create the ROS interfaces."""
        super().__init__('plant', **node_options)

    def load_model(self):
        """Load the model named by the ``model`` parameter."""
        return common.model_parameter(self, self.SETTINGS[0])

    def command_layout(self):
        """Model joint of each command entry, from the ``joints`` parameter."""
        return common.joint_order(self.model, self.parameters['joints'])

    def plant_state(self):
        """Return the initial state: joints from the parameters, modes by ``initial_modes``."""
        n = self.model.n_joints
        q0, v0 = self.model.neutral_configuration(), np.zeros(self.model.nv)
        q0[:n] = common.joint_values(self.parameters['initial_positions'], n, 'initial_positions')
        v0[:n] = common.joint_values(self.parameters['initial_velocities'], n,
                                     'initial_velocities')
        if self.parameters['initial_modes'] == 'rest' and self.model.floating_base is None:
            try:
                q0 = static_equilibrium(self.model, q0)
            except ValueError as error:
                raise ConfigError(f'parameter initial_modes: {error}') from None
        return q0, v0

    def input_limit(self):
        """Clip at the model's effort limits, as an amplifier saturates."""
        return self.model.effort_limit

    def setup(self):
        """Create the state publishers and messages; publish the URDF and static TF."""
        self.frames = joint_frames(self.model, self.world_frame)
        # The floating base's transform (if any) comes first, straight from the state.
        self.moving = [f for f in self.frames if f.moving]
        self.floating = self.model.floating_base is not None
        self.tf_data = self.model.create_data()
        self.transforms = self.model.frame_transforms(
            [(f.link, f.x if f.kind == 'section' else None) for f in self.moving
             if f.kind != 'base'])
        self.joint_state_pub = common.per_tick_publisher(self, JointState, 'joint_states')
        self.modal_state_pub = (common.per_tick_publisher(self, JointState, 'modal_states')
                                if self.model.n_modes else None)
        self.tf_pub = common.per_tick_publisher(self, TFMessage, 'tf')
        self.tf_static_pub = self.create_publisher(TFMessage, 'tf_static', LATCHED)
        self.description_pub = self.create_publisher(String, 'robot_description', LATCHED)

        # Build the messages once; each publication only refreshes numbers.
        self.joint_state = JointState(name=list(self.model.joint_names))
        self.modal_state = JointState(name=list(self.model.mode_names))
        self.tf_message = TFMessage(transforms=[transform(f, stamp(0.0)) for f in self.moving])
        self.description_pub.publish(String(data=urdf(self.model, self.world_frame)))
        self.tf_static_pub.publish(TFMessage(transforms=[
            transform(f, stamp(0.0)) for f in self.frames if not f.moving]))

    def summary(self):
        """Give the joint and mode counts."""
        return f'{self.model.n_joints} joints, {self.model.n_modes} modes'

    def length_problem(self, count):
        """Name the expected count and the joints in command order."""
        names = [self.model.joint_names[i] for i in self.command_index]
        return f'expected {len(self.command_index)} efforts (joints {names}), got {count}'

    def state_messages(self, now):
        """Refresh joint states, moving transforms and modal states at ``now``."""
        js = self.joint_state
        q, v = self.sim.q, self.sim.v
        fill_states(self.model, now, q, v, self.input, js, self.modal_state)
        self.transforms.update(self.tf_data, q)
        messages = self.tf_message.transforms
        if self.floating:
            base, b = messages[0], self.model.nv - 6
            base.header.stamp = now
            t, r = base.transform.translation, base.transform.rotation
            t.x, t.y, t.z = q[b:b + 3].tolist()
            r.w, r.x, r.y, r.z = q[b + 3:b + 7].tolist()
            messages = messages[1:]
        for msg, quat, position in zip(messages, self.transforms.quat.tolist(),
                                       self.transforms.p.tolist()):
            msg.header.stamp = now
            t = msg.transform.translation
            t.x, t.y, t.z = position
            r = msg.transform.rotation
            r.w, r.x, r.y, r.z = quat
        published = [(self.tf_pub, self.tf_message), (self.joint_state_pub, js)]
        if self.modal_state_pub is not None:
            published.insert(0, (self.modal_state_pub, self.modal_state))
        return published


def main(args=None):
    """Entry point of the ``plant`` executable."""
    common.run(PlantNode, args)


if __name__ == '__main__':
    main()
