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

from . import common, topic_hardware, packed_messages
from .common import stamp
from .simulated_plant import SimulatedPlant
from ..description.urdf import joint_frames, urdf
from ..model_config import ConfigError
from ..plant_config import (arm_initial_state, ARM_PLANT_SETTINGS, ARM_STATE_SETTINGS,
                            DRIVER_GRAVITY, INPUT_NAME, joint_values)
from ..settings import non_negative, Setting, whole_number

LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
# /tf at a display's rate, not at every state: a viewer draws 30-60 frames a second, and on
# the soft arm the transforms of the deformed sections and their publication cost a sixth
# of the plant's tick (bench/README.md). robot_state_publisher in ROS 1 published at 50 Hz.
TF_PERIOD = Setting('tf_period', 0.01,
                    'Period [s] of the /tf messages of the moving frames: TF goes with the first '
                    'state at each multiple of it in simulated time, and with a held state once '
                    'per period of wall time; 0: with every state.', check=non_negative)


# A driver whose robot carries a gripper reports its fingers beside the arm's joints
# (franka_ros2: panda_finger_joint1, panda_finger_joint2).
EXTRA_JOINTS = Setting('extra_joints', None,
                       'Names of joints the model does not have, reported in joint_states '
                       'after the model\'s (a gripper\'s fingers), at rest at '
                       'extra_joint_positions; empty: none.', kind='strings')
EXTRA_POSITIONS = Setting('extra_joint_positions', None,
                          'Positions [rad or m] of the extra_joints, one each; empty: 0.',
                          kind='floats')

# A real arm's encoders and velocity estimates are noisy: the published joint states can
# be too (the simulation itself is not).
POSITION_NOISE = Setting('position_noise', 0.0,
                         'Standard deviation [rad or m] of Gaussian noise added to the '
                         'published joint positions (seeded: noise_seed); 0: none.',
                         check=non_negative)
VELOCITY_NOISE = Setting('velocity_noise', 0.0,
                         'Standard deviation [rad/s or m/s] of Gaussian noise added to the '
                         'published joint velocities; 0: none.', check=non_negative)
NOISE_SEED = Setting('noise_seed', 0, 'Seed of the position_noise and velocity_noise draws.',
                     check=whole_number(0, 2 ** 31 - 1, 'seeds'))


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
    coordinates and their rates (a model without them leaves ``modal_state`` alone). A
    headless simulation's recording (`recording.synthetic`) is filled here; the plant's
    pre-serialized messages (`PlantNode.state_messages`) carry the same fields.
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

    INPUT_NAME = INPUT_NAME
    COMMAND_NAME = 'effort command'
    FAULT_ADVICE = 'plant paused, call ~/reset to recover'
    SETTINGS = (
        common.model_setting('two_link_rigid'), common.JOINTS,
        *ARM_PLANT_SETTINGS, *ARM_STATE_SETTINGS, TF_PERIOD, DRIVER_GRAVITY,
        EXTRA_JOINTS, EXTRA_POSITIONS, POSITION_NOISE, VELOCITY_NOISE, NOISE_SEED,
        *topic_hardware.SETTINGS)

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
        return arm_initial_state(self.model, self.parameters)

    def input_limit(self):
        """Clip at the model's effort limits, as an amplifier saturates.

        With ``driver_gravity_compensation`` the sum of the command and gravity is clipped
        instead (`applied_input`): no limit on the command alone.
        """
        if self.parameters['driver_gravity_compensation']:
            return None
        return self.model.effort_limit

    def setup(self):
        """Create the state publishers and messages; publish the URDF and static TF."""
        self.driver_gravity = None
        if self.parameters['driver_gravity_compensation']:
            twin = self.model.rigid_twin() if self.model.nv > self.model.nu else self.model
            self.driver_gravity = (twin, twin.create_data(),
                                   np.linalg.pinv(twin.input_matrix()), np.zeros(self.model.nu))
        self.frames = joint_frames(self.model, self.world_frame)
        # The floating base's transform (if any) comes first, straight from the state.
        self.moving = [f for f in self.frames if f.moving]
        self.floating = self.model.floating_base is not None
        self.tf_data = self.model.create_data()
        self.transforms = self.model.frame_transforms(
            [(f.link, f.x if f.kind == 'section' else None) for f in self.moving
             if f.kind != 'base'])
        self.joint_state_pub = common.quiet_publisher(self, JointState, 'joint_states')
        self.topic_hardware = (topic_hardware.TopicHardware(self, self.parameters)
                               if self.parameters['ros2_control_topics'] else None)
        self.modal_state_pub = (common.quiet_publisher(self, JointState, 'modal_states')
                                if self.model.n_modes else None)
        self.tf_pub = common.quiet_publisher(self, TFMessage, 'tf')
        self.tf_static_pub = common.quiet_publisher(self, TFMessage, 'tf_static', LATCHED)
        # A model read from robot_description (urdf: '-') leaves the topic to its publisher.
        self.description_pub = (None if self.description_from_topic else
                                common.quiet_publisher(self, String, 'robot_description',
                                                       LATCHED))

        # The per-tick messages are kept serialized; each publication only refreshes their
        # numbers in place (`packed_messages`).
        extra = list(self.parameters['extra_joints'] or [])
        clash = sorted(set(extra) & set(self.model.joint_names)) or sorted(
            {name for name in extra if extra.count(name) > 1})
        if clash:
            raise ConfigError(f'parameter extra_joints: {clash[0]!r} is a joint of the model '
                              'or named twice')
        extra_positions = joint_values(self.parameters['extra_joint_positions'], len(extra),
                                       'extra_joint_positions')
        n = self.model.n_joints
        # position, velocity, effort of every reported joint: the extra ones stay put.
        self.reported = np.zeros((3, n + len(extra)))
        self.reported[0, n:] = extra_positions
        self.joint_state = packed_messages.joint_state(list(self.model.joint_names) + extra)
        self.noise = np.array([[self.parameters['position_noise']],
                               [self.parameters['velocity_noise']]])
        self.noise_draws = (np.random.default_rng(self.parameters['noise_seed'])
                            if self.noise.any() else None)
        self.modal_state = packed_messages.joint_state(self.model.mode_names,
                                                       ('position', 'velocity'))
        self.tf_values = np.zeros((len(self.moving), 7))   # translation, rotation x y z w
        self.tf_every = common.Every(self.parameters['tf_period'], held=True)
        self.tf_message = packed_messages.PackedMessage(
            TFMessage(transforms=[transform(f, stamp(0.0)) for f in self.moving]),
            {'transforms': (self.tf_values.size, _set_transforms)},
            stamps=[_transform_stamp(i) for i in range(len(self.moving))])
        if self.description_pub is not None:
            self.description_pub.publish(String(data=urdf(self.model, self.world_frame)))
        self.tf_static_pub.publish(TFMessage(transforms=[
            transform(f, stamp(0.0)) for f in self.frames if not f.moving]))

    def applied_input(self):
        """Return the command, plus the rigid twin gravity with ``driver_gravity_compensation``.

        The gravity torque B^+ h_twin(q, 0) [N m] at this state's joints is held over the
        period as the command is; the sum is clipped at the model's effort limits.
        """
        if self.driver_gravity is None:
            return self.input
        twin, data, pinv, total = self.driver_gravity
        n = self.model.n_joints
        static = twin.bias_forces(data, self.sim.q[:n], np.zeros(n))
        np.matmul(pinv, static, out=total)
        total += self.input
        np.clip(total, -self.model.effort_limit, self.model.effort_limit, out=total)
        return total

    def summary(self):
        """Give the joint and mode counts."""
        return f'{self.model.n_joints} joints, {self.model.n_modes} modes'

    def length_problem(self, count):
        """Name the expected count and the joints in command order."""
        names = [self.model.joint_names[i] for i in self.command_index]
        return f'expected {len(self.command_index)} efforts (joints {names}), got {count}'

    def state_messages(self, now):
        """Refresh the modal and joint states at ``now``; TF is refreshed as it is sent.

        The states the controller answers go first, TF last (`tf_state`): the controller
        computes while the plant works out and sends the transforms. TF goes with the first
        state at or past each multiple of ``tf_period`` of simulated time, with a state
        ``tf_period`` of wall time after the last TF (paused or waiting, the held state's TF
        keeps coming), and after a reset.
        """
        n = self.model.n_joints
        q, v = self.sim.q, self.sim.v
        js = self.joint_state
        js.set_stamp(now.sec, now.nanosec)
        reported = self.reported
        reported[0, :n] = q[:n]
        reported[1, :n] = v[:n]
        reported[2, :n] = self.input
        if self.noise_draws is not None:
            if self.copies == 0:            # a state sent again is the same measurement
                self.noise_values = self.noise * self.noise_draws.standard_normal((2, n))
            reported[:2, :n] += self.noise_values
        js.set('position', reported[0])
        js.set('velocity', reported[1])
        js.set('effort', reported[2])
        self.tf_stamp = now
        joints = js.data()
        published = [(self.joint_state_pub, joints)]
        if self.tf_every.due(self.sim.time):
            published.append((self.tf_pub, self.tf_state))
        if self.topic_hardware is not None:      # the same state for ros2_control
            published.insert(1, (self.topic_hardware.states_pub, joints))
        if self.modal_state_pub is not None:
            modes = slice(n, n + self.model.n_modes)
            ms = self.modal_state
            ms.set_stamp(now.sec, now.nanosec)
            ms.set('position', q[modes])
            ms.set('velocity', v[modes])
            published.insert(0, (self.modal_state_pub, ms.data()))
        return published

    def tf_state(self):
        """Return the moving transforms at the state's stamp, serialized."""
        q = self.sim.q
        values = self.tf_values
        if self.floating:
            b = self.model.nv - 6
            values[0, :3] = q[b:b + 3]
            values[0, 3:6] = q[b + 4:b + 7]
            values[0, 6] = q[b + 3]
            values = values[1:]
        transforms = self.transforms
        transforms.update(self.tf_data, q)
        values[:, :3] = transforms.p
        values[:, 3:6] = transforms.quat[:, 1:]
        values[:, 6] = transforms.quat[:, 0]
        tf = self.tf_message
        tf.set('transforms', self.tf_values.ravel())
        tf.set_stamp(self.tf_stamp.sec, self.tf_stamp.nanosec)
        return tf.data()


def _set_transforms(msg, values):
    """Write rows (translation x y z, rotation x y z w) into a TFMessage's transforms."""
    for transform, row in zip(msg.transforms, np.reshape(values, (-1, 7)).tolist()):
        t, r = transform.transform.translation, transform.transform.rotation
        t.x, t.y, t.z, r.x, r.y, r.z, r.w = row


def _transform_stamp(i):
    """Setter of the stamp of a TFMessage's transform ``i`` (`PackedMessage`)."""
    def setter(msg, time):
        msg.transforms[i].header.stamp = time
    return setter


def make_node(**node_options):
    """Make the ``plant`` node (`nodes.container` composes it with others)."""
    return PlantNode(**node_options)


def main(args=None):
    """Entry point of the ``plant`` executable."""
    common.run(PlantNode, args)


if __name__ == '__main__':
    main()
