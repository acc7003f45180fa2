"""Servo controller node: `control.servo_controller` on a free servoconstraint plant.

Given a servoconstraint model (``type: servo_rigid_body`` or ``servo_sleigh``,
realization ``free``: the plant of ``servo_plant``), it realizes the model's
servoconstraint psi = <a, w> = 0 (the sleigh's lateral blade velocity) by the input along
b, with psi' + gamma psi = 0, answering each odometry message of the plant with one
command. Topics, parameters (the discrete check on ``servo_gain``) and bad-input
behaviour: doc/nodes.md ("servo_controller"), one source; safety as the arm controller
(`controller_base`). Also run by the ``controller`` executable given a servo model
(deprecated: it warns).
"""

import numpy as np

from nav_msgs.msg import Odometry

from . import common, controller_base
from .controller_base import ControllerNodeBase
from ..control.servo_controller import is_servo_model, ServoController, ServoSettings
from ..mechanics.servo_odometry import OdometryContent, OdometryError, state_from_odometry
from ..config_checks import ConfigError
from ..settings import from_parameters, schema


class ServoControllerNode(ControllerNodeBase):
    """ROS adapter around `ServoController` (module doc)."""

    STATE_NAME = 'odometry'
    SETTINGS = (common.model_setting('suslov_free_actuated'), *schema(ServoSettings),
                *controller_base.NODE_SETTINGS)

    def load_model(self):
        """Declare ``model`` and load it: a servoconstraint model."""
        model = super().load_model()
        if not is_servo_model(model):
            raise ConfigError(f'parameter model: {model.name!r} is not a servoconstraint '
                              'system (servo_rigid_body, servo_sleigh); arms are driven by '
                              'the controller executable')
        return model

    def build_core(self, model, parameters):
        """Build the `ServoController` of the model's servoconstraint (module doc)."""
        self.command_index = list(range(model.nu))
        self.q, self.v = np.zeros(model.nq), np.zeros(model.nv)     # the last valid state
        self.input_names = ['u']
        return ServoController(model, from_parameters(ServoSettings, parameters))

    def create_state_interfaces(self):
        """Odometry in."""
        common.quiet_subscription(self, Odometry, 'odom', self.on_odometry)

    def row_names(self):
        """Return the constraint's row name (``a_omega``, ``v_lat``)."""
        return list(self.core.row_names)

    def log_start(self):
        """Say what runs."""
        self.get_logger().info(f'controlling {self.model.name!r}: {self.core.describe()}')

    def parse_odometry(self, msg):
        """Read (q, v) from odometry (`servo_odometry`); None, or (kind, reason)."""
        if msg.child_frame_id != self.model.frame:
            return 'frame', (f'child_frame_id {msg.child_frame_id!r} is not the body frame '
                             f'{self.model.frame!r} of {self.model.name!r}')
        pose, twist = msg.pose.pose, msg.twist.twist
        p, o = pose.position, pose.orientation
        w, v = twist.angular, twist.linear
        content = OdometryContent((p.x, p.y, p.z), (o.w, o.x, o.y, o.z), (w.x, w.y, w.z),
                                  (v.x, v.y, v.z))
        try:
            self.q, self.v = state_from_odometry(self.model, content)
        except OdometryError as error:
            return error.field, str(error)
        return None

    def on_odometry(self, msg, info):
        """Answer one odometry message with one effort command (and residuals)."""
        if self.answered_copy(msg, info):
            return
        problem = self.parse_odometry(msg)          # sets q, v when the message is valid
        self.respond(msg, problem, self.q, self.v)

    def mode_values(self):
        """Diagnostic values: gain, margin, the discrete bound."""
        core = self.core
        return [
            ('realization', f'servo along b of {self.model.name!r} ({self.model.kind})'),
            ('realizability_margin', f'{core.margin:.6g}'),
            ('servo_gain', f'{core.gain:g}'),
            ('delay_periods', str(core.settings.delay_periods)),
            ('critical_period', f'{core.critical_period:.6g}'),
            ('error_factor', f'{core.error_factor:.6g}'),
        ]


def make_node(**node_options):
    """Make the ``servo_controller`` node (`nodes.container` composes it with others)."""
    return ServoControllerNode(**node_options)


def main(args=None):
    """Entry point of the ``servo_controller`` executable."""
    common.run(ServoControllerNode, args)


if __name__ == '__main__':
    main()
