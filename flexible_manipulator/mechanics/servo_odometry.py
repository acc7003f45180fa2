"""Odometry of a servoconstraint model: its state (q, v) as a pose and twist, and back.

The servo plant publishes its state as nav_msgs/Odometry and a controller of a ``free``
plant reads the state back from it; both directions are written here, once, in plain
numbers (no ROS types), so that the layout cannot drift apart. `OdometryContent`:

    position     the body frame's origin in the world [m] (3)
    orientation  the body frame in the world, unit quaternion (w, x, y, z) with w >= 0
    angular      angular velocity of the body frame in body axes [rad/s] (3)
    linear       velocity of the frame's origin in body axes [m/s] (3)

Rigid body (`ServoRigidBody`: q = unit quaternion body -> world, v = w in body axes).
Forward: R, p = pose(q) (p the fixed point), orientation = quat(R), angular = w,
linear = 0. Back: q = the orientation, v = angular; the position carries nothing (the
fixed point) and linear must vanish. quat(R) picks the sign with w >= 0, so q may come back
as -q: the same state, since the dynamics see q only through R(q) (quadratic in q) and the
kinematics q' = q (0, w)/2 are linear (-q moves as q does).

Sleigh (`ServoSleigh`: q = (x, y, phi) of the blade point O in the plane, v = (omega, u,
v_lat)). The plane is tilted by ``slope`` about the world x axis, T its rotation, H(phi)
the heading about the plane's normal. Forward: position = T (x, y, 0), orientation =
quat(T H(phi)), angular = (0, 0, omega), linear = (u, v_lat, 0). Back: (x, y, z) =
T^T position with z = 0; H = T^T R must turn about the normal only (body z axis tilted
from the normal by at most ``PLANAR_TOLERANCE`` rad), phi = atan2(H_10, H_00) in
(-pi, pi]; omega = angular.z, u = linear.x, v_lat = linear.y, and angular.x, angular.y,
linear.z must vanish. The plant's phi may have wound up by 2 pi k: the same state, the
dynamics see phi only through its sine and cosine.

Every reading is checked on the way back: finite numbers, a unit orientation (within
``UNIT_QUATERNION_TOLERANCE`` of the model) and the components the model cannot have
within ``PLANAR_TOLERANCE``; a failure raises `OdometryError` naming the field.
"""

from collections import namedtuple
import math

import numpy as np

from .lie import matrix_from_quat, quat_from_matrix
from .servo import UNIT_QUATERNION_TOLERANCE

# m, rad, m/s, rad/s: largest component a planar or fixed-point motion may show (round-off
# of a published pose is ~1e-16; anything larger is a different system).
PLANAR_TOLERANCE = 1e-6

OdometryContent = namedtuple('OdometryContent', 'position orientation angular linear')
FIELDS = {'position': 'pose.position', 'orientation': 'pose.orientation',
          'angular': 'twist.angular', 'linear': 'twist.linear'}


class OdometryError(ValueError):
    """An odometry reading that is not a state of the model; ``field`` names the part."""

    def __init__(self, field, problem):
        """Say what is wrong with ``field`` (a nav_msgs/Odometry field path)."""
        super().__init__(f'{field}: {problem}')
        self.field = field


def odometry_from_state(model, q, v):
    """Return the `OdometryContent` of the state (q, v) of a servo model (module doc)."""
    rotation, position = model.pose(q)
    angular, linear = model.body_twist(q, v)
    return OdometryContent(np.asarray(position, dtype=float), quat_from_matrix(rotation),
                           np.asarray(angular, dtype=float), np.asarray(linear, dtype=float))


def _checked(content):
    """Return the four arrays of ``content``, checked finite and sized (`OdometryError`)."""
    arrays = []
    for name, value in zip(OdometryContent._fields, content):
        array = np.asarray(value, dtype=float)
        size = 4 if name == 'orientation' else 3
        if array.shape != (size,):
            raise OdometryError(FIELDS[name], f'expected {size} numbers, got shape '
                                              f'{array.shape}')
        if not np.all(np.isfinite(array)):
            raise OdometryError(FIELDS[name], f'not finite: {array.tolist()}')
        arrays.append(array)
    norm = float(np.linalg.norm(arrays[1]))
    if abs(norm - 1.0) > UNIT_QUATERNION_TOLERANCE:
        raise OdometryError('pose.orientation', f'not a unit quaternion (norm {norm:.9g})')
    arrays[1] = arrays[1] / norm
    return arrays


def _vanish(values, names, field, why):
    """Refuse components (named ``names``) of ``values`` that are not zero (module doc)."""
    worst = int(np.argmax(np.abs(values)))
    if abs(values[worst]) > PLANAR_TOLERANCE:
        raise OdometryError(field, f'{names[worst]} = {values[worst]:.6g} must be 0 ({why})')


def state_from_odometry(model, content):
    """Return the state (q, v) of the servo model read from an `OdometryContent`.

    Raises `OdometryError` naming the field if the reading is not finite, the orientation
    is not a unit quaternion, or it has components the model cannot have (module doc).
    """
    position, orientation, angular, linear = _checked(content)
    if model.kind == 'rigid_body':
        _vanish(linear, 'xyz', 'twist.linear', 'the body turns about its fixed point')
        return orientation, angular
    tilt, _ = model.pose(np.zeros(3))         # T: the plane's rotation (heading 0 at O = 0)
    heading = tilt.T @ matrix_from_quat(orientation)
    planar = tilt.T @ position
    _vanish(planar[2:], 'z', 'pose.position', 'O lies in the plane')
    _vanish(np.array([math.hypot(heading[0, 2], heading[1, 2])]), ['tilt'],
            'pose.orientation', 'the sleigh turns about the normal of its plane')
    _vanish(np.array([angular[0], angular[1], linear[2]]),
            ['angular.x', 'angular.y', 'linear.z'], 'twist', 'planar motion')
    q = np.array([planar[0], planar[1], math.atan2(heading[1, 0], heading[0, 0])])
    return q, np.array([angular[2], linear[0], linear[1]])
