"""Odometry of the servo models (mechanics.servo_odometry): layout, round trip, refusals.

Expected values are written out here from the layout (module doc of servo_odometry and
servo_node): the rigid body's pose is its attitude quaternion at its fixed point, its twist
(w, 0); the sleigh on a plane tilted by s about x sits at T (x, y, 0) with the attitude
quat(T) quat(H(phi)) = (cos(s/2), sin(s/2), 0, 0) (cos(phi/2), 0, 0, sin(phi/2)) =
(c_s c_p, s_s c_p, -s_s s_p, c_s s_p) (Hamilton product, half angles), and the twist
((0, 0, omega), (u, v_lat, 0)). The round trip returns the state up to what the model
cannot tell apart: -q for q (the dynamics are checked equal there) and phi + 2 pi k.
"""

import math
import os

import numpy as np
import pytest

from flexible_manipulator.mechanics.servo_odometry import (odometry_from_state, OdometryContent,
                                                           OdometryError, state_from_odometry)
from flexible_manipulator.model_config import load_model

MODELS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'config',
                      'models')
NAMES = sorted(name[:-5] for name in os.listdir(MODELS)
               if name.startswith(('suslov', 'sleigh')) and name.endswith('.yaml'))


def model(name):
    return load_model(os.path.join(MODELS, name + '.yaml'))


def states(model, count, seed=0):
    """Random states: unit quaternions (either sign of w) or poses with phi wound up."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        if model.nq == 4:
            q = rng.normal(size=4)
            yield q / np.linalg.norm(q), rng.normal(size=3)
        else:
            yield rng.normal(size=3) * [2.0, 2.0, 10.0], rng.normal(size=3)


@pytest.mark.parametrize('name', NAMES)
def test_layout_is_the_pose_and_body_twist_written_out(name):
    """Each field as the module doc writes it (1e-14), orientation with w >= 0."""
    servo = model(name)
    for q, v in states(servo, 5):
        content = odometry_from_state(servo, q, v)
        assert content.orientation[0] >= 0.0
        if servo.kind == 'rigid_body':
            expected = q * np.sign(q[0])
            np.testing.assert_allclose(content.position, servo.position, rtol=0, atol=0)
            np.testing.assert_allclose(content.angular, v, rtol=0, atol=0)
            np.testing.assert_array_equal(content.linear, np.zeros(3))
        else:
            x, y, phi = q
            s = servo.slope
            cs, ss, cp, sp = math.cos(s / 2), math.sin(s / 2), math.cos(phi / 2), math.sin(phi / 2)
            expected = np.array([cs * cp, ss * cp, -ss * sp, cs * sp])
            expected *= np.sign(expected[0])
            np.testing.assert_allclose(content.position,
                                       [x, y * math.cos(s), y * math.sin(s)], rtol=0,
                                       atol=1e-14)
            np.testing.assert_array_equal(content.angular, [0.0, 0.0, v[0]])
            np.testing.assert_array_equal(content.linear, [v[1], v[2], 0.0])
        np.testing.assert_allclose(content.orientation, expected, rtol=0, atol=1e-14)


@pytest.mark.parametrize('name', NAMES)
def test_round_trip_returns_the_same_state(name):
    """state_from_odometry(odometry_from_state(q, v)) = (q up to sign, or phi up to 2 pi
    k; v exactly); the model's acceleration and outputs are the same at both (1e-12)."""
    servo = model(name)
    data = servo.create_data()
    u = np.ones(servo.nu)
    for q, v in states(servo, 8, seed=1):
        back_q, back_v = state_from_odometry(servo, odometry_from_state(servo, q, v))
        np.testing.assert_allclose(back_v, v, rtol=0, atol=1e-15)
        if servo.kind == 'rigid_body':
            np.testing.assert_allclose(back_q, q * np.sign(q[0]), rtol=0, atol=1e-14)
        else:
            np.testing.assert_allclose(back_q[:2], q[:2], rtol=0, atol=1e-13)
            assert -math.pi < back_q[2] <= math.pi
            assert math.remainder(back_q[2] - q[2], 2 * math.pi) == pytest.approx(0.0,
                                                                                  abs=1e-13)
        expected, lam = servo.acceleration(data, q, v, u)
        again, lam_again = servo.acceleration(data, back_q, back_v, u)
        np.testing.assert_allclose(again, expected, rtol=0, atol=1e-12 * (1 + abs(expected).max()))
        assert lam_again == pytest.approx(lam, rel=1e-12, abs=1e-12)


def good(servo):
    """Odometry of the model's initial state, as a mutable copy."""
    content = odometry_from_state(servo, servo.initial_q, servo.initial_v)
    return OdometryContent(*(np.array(x, dtype=float) for x in content))


def test_readings_that_are_no_state_of_the_model_are_refused_naming_the_field():
    """NaN or infinite entries, wrong sizes, a non-unit quaternion; a moving fixed point
    (rigid body); the sleigh off its plane, tilted, or with out-of-plane twist."""
    top, sleigh = model('suslov_free_actuated'), model('sleigh_incline')
    for servo in (top, sleigh):
        for index, field in enumerate(('pose.position', 'pose.orientation', 'twist.angular',
                                       'twist.linear')):
            for bad in (math.nan, math.inf):
                content = good(servo)
                content[index][0] = bad
                with pytest.raises(OdometryError, match=f'^{field}: not finite') as error:
                    state_from_odometry(servo, content)
                assert error.value.field == field
        content = good(servo)._replace(linear=np.zeros(2))
        with pytest.raises(OdometryError, match=r'^twist.linear: expected 3 numbers'):
            state_from_odometry(servo, content)
        content = good(servo)
        content.orientation[:] *= 1.01
        with pytest.raises(OdometryError, match=r'^pose.orientation: not a unit quaternion'):
            state_from_odometry(servo, content)
    content = good(top)
    content.linear[1] = 1e-3
    with pytest.raises(OdometryError, match=r'^twist.linear: y = 0.001 must be 0'):
        state_from_odometry(top, content)
    # Off the inclined plane: 1 mm along the plane's normal.
    content = good(sleigh)
    tilt, _ = sleigh.pose(np.zeros(3))
    content.position[:] += 1e-3 * tilt[:, 2]
    with pytest.raises(OdometryError, match=r'^pose.position: z = 0.001 must be 0'):
        state_from_odometry(sleigh, content)
    # Tilted by 0.01 rad about the sleigh's own x axis.
    content = good(sleigh)
    w, x = math.cos(0.005), math.sin(0.005)
    o = content.orientation.copy()
    content.orientation[:] = [o[0] * w - o[1] * x, o[0] * x + o[1] * w,
                              o[2] * w + o[3] * x, o[3] * w - o[2] * x]
    with pytest.raises(OdometryError, match=r'^pose.orientation: tilt = 0.0099998\d* must be 0'):
        state_from_odometry(sleigh, content)
    for index, name in ((0, 'angular.x'), (1, 'angular.y')):
        content = good(sleigh)
        content.angular[index] = 0.5
        with pytest.raises(OdometryError, match=f'^twist: {name} = 0.5 must be 0'):
            state_from_odometry(sleigh, content)
    content = good(sleigh)
    content.linear[2] = -0.5
    with pytest.raises(OdometryError, match=r'^twist: linear.z = -0.5 must be 0'):
        state_from_odometry(sleigh, content)
