"""Program constraints and reference trajectories (pure Python, no ROS).

Expected values come from: the definitions of the timing law and paths (closed forms
written here), SciPy's natural cubic spline (an independent implementation), central
finite differences of the constraint functions along q(tau) = q + v tau (so q'' = 0 and
phi'' along it is exactly the bias), and the hand-derived kinematics of a two-link arm.
"""

import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.interpolate import CubicSpline

from flexible_manipulator.control.joint_program import SinusoidalJointProgram
from flexible_manipulator.control.programs import (
    ConstantVelocityProgram, JointProgram, OrientationProgram, PlanarAngleProgram,
    PointProgram, StackedProgram, VelocityProgram)
from flexible_manipulator.control.trajectories import (
    CirclePath, ConstantRateTiming, ConstantReference, LinePath, OrientationTrajectory,
    QuinticTiming, SplinePath, Trajectory, rotation_exp)
from flexible_manipulator.mechanics.link_description import Joint, Link, RigidBody
from flexible_manipulator.mechanics.links import chain_from_links
from flexible_manipulator.model_config import load_model

MODELS = Path(__file__).resolve().parents[1] / 'config' / 'models'


def flexible_arm():
    """Return the default planar two-link flexible arm."""
    return load_model(str(MODELS / 'two_link_flexible.yaml'))


def copies(values):
    """Copy a tuple of arrays/floats (evaluate methods reuse their buffers)."""
    return tuple(np.array(v, dtype=float, copy=True) for v in values)


def point_mass_arm(l1=1.0, l2=1.0, m1=1.0, m2=1.0):
    """Planar two-link arm with point masses at the link ends (massless links), no gravity."""
    def link(name, joint, length, mass, xyz):
        return Link(name, Joint(joint, xyz=xyz), length,
                    body=RigidBody(0.0), payload=RigidBody(mass))
    return chain_from_links('point_mass_arm', [link('l1', 'j1', l1, m1, (0.0, 0.0, 0.0)),
                                               link('l2', 'j2', l2, m2, (0.0, 0.0, 0.0))])


def check_rows(program, t, q, v, jacobian_tol=1e-6, rate_tol=1e-6, bias_tol=1e-5):
    """Compare J, phi' and bias with central differences of phi(q + v tau, t + tau).

    Steps: 1e-6 for J and phi' (truncation ~1e-12 |phi'''|, rounding ~1e-10), 1e-4 for the
    second difference (truncation ~1e-9 |phi''''|, rounding ~1e-8).
    """
    def phi(tq, qq, vv):
        return program.evaluate(tq, qq, vv).phi.copy()
    program.evaluate(t, q, v)
    J, rate, bias = program.jacobian.copy(), program.rate.copy(), program.bias.copy()
    h = 1e-6
    numeric = np.zeros_like(J)
    for i in range(q.size):
        dq = np.zeros_like(q)
        dq[i] = h
        numeric[:, i] = (phi(t, q + dq, v) - phi(t, q - dq, v)) / (2 * h)
    np.testing.assert_allclose(J, numeric, rtol=0, atol=jacobian_tol * max(1.0, abs(J).max()))
    np.testing.assert_allclose(rate, (phi(t + h, q + h * v, v) - phi(t - h, q - h * v, v))
                               / (2 * h), rtol=0, atol=rate_tol)
    h = 1e-4
    second = (phi(t + h, q + h * v, v) - 2 * phi(t, q, v) + phi(t - h, q - h * v, v)) / h ** 2
    np.testing.assert_allclose(bias, second, rtol=0, atol=bias_tol * max(1.0, abs(bias).max()))


def test_quintic_timing_is_rest_to_rest_and_differentiates_consistently():
    """s = 10 tau^3 - 15 tau^4 + 6 tau^5: s(0) = 0, s(T) = 1, s' = s'' = 0 at both ends.

    Interior values against the polynomial written here; derivatives against central
    differences (step 1e-6: error ~1e-9).
    """
    timing = QuinticTiming(2.0, start=0.5)
    assert timing.evaluate(0.5) == (0.0, 0.0, 0.0)
    assert timing.evaluate(2.5) == (1.0, 0.0, 0.0)
    for t in (0.7, 1.5, 2.2):
        tau = (t - 0.5) / 2.0
        s, ds, dds = timing.evaluate(t)
        assert s == pytest.approx(10 * tau ** 3 - 15 * tau ** 4 + 6 * tau ** 5, abs=1e-15)
        h = 1e-6
        assert ds == pytest.approx((timing.evaluate(t + h)[0] - timing.evaluate(t - h)[0])
                                   / (2 * h), abs=1e-8)
        assert dds == pytest.approx((timing.evaluate(t + h)[1] - timing.evaluate(t - h)[1])
                                    / (2 * h), abs=1e-7)
    with pytest.raises(ValueError):
        QuinticTiming(0.0)


def test_spline_path_equals_scipy_natural_cubic_spline():
    """Waypoints with chord-length knots: values and two derivatives equal SciPy's natural
    CubicSpline on the same knots (an independent implementation) to 1e-12."""
    waypoints = np.array([[0.0, 0.0], [0.3, 0.1], [0.5, 0.4], [0.4, 0.8], [0.9, 1.0]])
    path = SplinePath(waypoints)
    chords = np.linalg.norm(np.diff(waypoints, axis=0), axis=1)
    knots = np.concatenate([[0.0], np.cumsum(chords)]) / chords.sum()
    reference = CubicSpline(knots, waypoints, bc_type='natural')
    for s in np.linspace(0.0, 1.0, 37):
        p, dp, ddp = copies(path.evaluate(s))
        np.testing.assert_allclose(p, reference(s), atol=1e-12)
        np.testing.assert_allclose(dp, reference(s, 1), atol=1e-11)
        np.testing.assert_allclose(ddp, reference(s, 2), atol=1e-10)
    for knot, point in zip(knots, waypoints):
        np.testing.assert_allclose(path.evaluate(knot)[0], point, atol=1e-13)


def test_line_and_circle_paths_follow_their_definitions():
    """Line: start + s (end - start). Circle: c + r (cos s u + sin s w); |P - c| = r and
    P'' = -(P - c) (unit angular rate)."""
    line = LinePath([1.0, 2.0, 3.0], [2.0, 0.0, 3.0])
    np.testing.assert_allclose(line.evaluate(0.25)[0], [1.25, 1.5, 3.0], atol=1e-15)
    u, w = np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.6, 0.8])
    circle = CirclePath([0.1, 0.2, 0.3], 0.5, axes=(u, w))
    for s in (0.0, 1.0, 4.0):
        p, dp, ddp = copies(circle.evaluate(s))
        expected = np.array([0.1, 0.2, 0.3]) + 0.5 * (math.cos(s) * u + math.sin(s) * w)
        np.testing.assert_allclose(p, expected, atol=1e-15)
        np.testing.assert_allclose(ddp, -(p - [0.1, 0.2, 0.3]), atol=1e-15)
        np.testing.assert_allclose(dp, 0.5 * (-math.sin(s) * u + math.cos(s) * w), atol=1e-15)
    with pytest.raises(ValueError):
        CirclePath([0.0, 0.0, 0.0], 1.0, axes=(u, u))


def test_trajectory_applies_the_chain_rule():
    """r' and r'' of P(s(t)) against central differences of r (steps 1e-6 / 1e-6)."""
    trajectory = Trajectory(SplinePath([[0.0, 0.0], [1.0, 0.5], [1.5, 1.5]]),
                            QuinticTiming(3.0))
    for t in (0.4, 1.3, 2.6):
        r, dr, ddr = copies(trajectory.evaluate(t))
        h = 1e-6
        rp, drp, _ = copies(trajectory.evaluate(t + h))
        rm, drm, _ = copies(trajectory.evaluate(t - h))
        np.testing.assert_allclose(dr, (rp - rm) / (2 * h), atol=1e-8)
        np.testing.assert_allclose(ddr, (drp - drm) / (2 * h), atol=1e-7)


def random_state(model, seed, mode_scale=2e-3):
    """Joint angles ~1 rad and small modal coordinates, with velocities."""
    rng = np.random.default_rng(seed)
    q = rng.uniform(-1.0, 1.0, model.nv)
    v = rng.uniform(-1.0, 1.0, model.nv)
    q[model.n_joints:] *= mode_scale
    v[model.n_joints:] *= 10 * mode_scale
    return q, v


def test_point_program_rows_on_the_flexible_arm_match_differences():
    """PointProgram at the forearm tip and at its lambda point: J, phi', bias (check_rows)."""
    model = flexible_arm()
    circle = Trajectory(CirclePath([0.5, 0.2], 0.1), ConstantRateTiming(2.0))
    for abscissa in (0.4, 0.15):
        program = PointProgram(model, 1, abscissa, circle, axes=(0, 1))
        for seed in (1, 2):
            q, v = random_state(model, seed)
            check_rows(program, 0.3, q, v)


def test_angle_programs_match_differences():
    """Planar angle on the planar arm; spatial orientation (log map) on the spatial arm
    following a rotating reference, rotation error about 0.5 rad (check_rows)."""
    model = flexible_arm()
    turn = Trajectory(LinePath([0.0], [2.0]), QuinticTiming(2.0))
    angle = PlanarAngleProgram(model, 1, 0.3, turn)
    q, v = random_state(model, 3)
    check_rows(angle, 0.7, q, v)
    spatial = load_model(str(MODELS / 'three_link_spatial_flexible.yaml'))
    q, v = random_state(spatial, 4)
    data = spatial.create_data()
    R, _ = spatial.section_pose(data, q, 2, 0.3)
    start = rotation_exp(np.array([0.3, -0.2, 0.35])) @ R
    reference = OrientationTrajectory(start, axis=(0.0, 0.6, 0.8), angle=1.0,
                                      timing=QuinticTiming(2.0))
    check_rows(OrientationProgram(spatial, 2, 0.3, reference), 0.8, q, v)


def test_orientation_program_is_zero_on_the_reference():
    """phi = log(R_d^T R) vanishes when R_d is the section's own orientation."""
    model = flexible_arm()
    q, v = random_state(model, 5)
    R, _ = model.section_pose(model.create_data(), q, 1, 0.2)
    program = OrientationProgram(model, 1, 0.2, OrientationTrajectory(R))
    np.testing.assert_allclose(program.evaluate(0.0, q, v).phi, 0.0, atol=1e-12)


def test_point_program_on_two_link_point_mass_arm_matches_hand_kinematics():
    """End mass p = (l1 c1 + l2 c12, l1 s1 + l2 s12): J and J' theta' written out by hand.

    J = [[-l1 s1 - l2 s12, -l2 s12], [l1 c1 + l2 c12, l2 c12]],
    J' theta' = (-l1 c1 w1^2 - l2 c12 w12^2, -l1 s1 w1^2 - l2 s12 w12^2), w12 = w1 + w2.
    """
    l1, l2 = 0.7, 0.5
    model = point_mass_arm(l1, l2)
    program = PointProgram(model, 1, l2, ConstantReference([0.0, 0.0]), axes=(0, 1))
    th, w = np.array([0.4, 1.1]), np.array([0.8, -1.3])
    program.evaluate(0.0, th, w)
    c1, s1 = math.cos(th[0]), math.sin(th[0])
    c12, s12 = math.cos(th.sum()), math.sin(th.sum())
    w12 = w.sum()
    np.testing.assert_allclose(program.phi, [l1 * c1 + l2 * c12, l1 * s1 + l2 * s12],
                               atol=1e-14)
    np.testing.assert_allclose(program.jacobian, [[-l1 * s1 - l2 * s12, -l2 * s12],
                                                  [l1 * c1 + l2 * c12, l2 * c12]], atol=1e-14)
    np.testing.assert_allclose(program.bias, [-l1 * c1 * w[0] ** 2 - l2 * c12 * w12 ** 2,
                                              -l1 * s1 * w[0] ** 2 - l2 * s12 * w12 ** 2],
                               atol=1e-13)


def test_joint_program_follows_its_reference():
    """phi = q[joints] - q_d, phi' = v[joints] - q_d', bias = -q_d'' (definition)."""
    reference = SinusoidalJointProgram([0.1, 0.2], [0.3, 0.4], [0.5, 0.25])
    program = JointProgram(5, [0, 3], reference)
    q, v = np.arange(5.0), -np.arange(5.0)
    program.evaluate(0.8, q, v)
    qd, vd, ad = copies(reference.evaluate(0.8))
    np.testing.assert_allclose(program.phi, q[[0, 3]] - qd, atol=1e-15)
    np.testing.assert_allclose(program.rate, v[[0, 3]] - vd, atol=1e-15)
    np.testing.assert_allclose(program.bias, -ad, atol=1e-15)
    np.testing.assert_allclose(program.jacobian, np.eye(5)[[0, 3]])
    check_rows(program, 0.8, q, v)


def sleigh_rows(t, q, v, matrix, offset, bias):
    """Lateral blade velocity psi = -x' sin(theta) + y' cos(theta) (blade at the reference)."""
    s, c = math.sin(q[2]), math.cos(q[2])
    matrix[0] = (-s, c, 0.0)
    bias[0] = -v[2] * (v[0] * c + v[1] * s)


def test_velocity_program_rows_and_bias():
    """psi = A v + b; psi' along q'' = 0 equals the bias A' v (central difference in tau).

    The sleigh's A(q) = (-sin theta, cos theta, 0) gives A' v = -theta' (x' cos + y' sin).
    """
    program = VelocityProgram(3, 1, sleigh_rows)
    q, v = np.array([0.3, -0.2, 0.7]), np.array([0.5, 0.4, -1.2])
    program.evaluate(0.0, q, v)
    assert program.phi[0] == pytest.approx(-0.5 * math.sin(0.7) + 0.4 * math.cos(0.7))
    h = 1e-6
    plus = program.evaluate(0.0, q + h * v, v).phi[0]
    minus = program.evaluate(0.0, q - h * v, v).phi[0]
    program.evaluate(0.0, q, v)
    assert program.bias[0] == pytest.approx((plus - minus) / (2 * h), abs=1e-8)
    constant = ConstantVelocityProgram([[0.0, 0.0, 1.0]])
    assert constant.evaluate(0.0, q, v).phi[0] == v[2]
    assert constant.order[0] == 1 and program.order[0] == 1


def test_stacked_program_concatenates_rows_and_orders():
    """Rows and kinds of the parts, in order (direct comparison with the parts)."""
    model = flexible_arm()
    point = PointProgram(model, 1, 0.4, ConstantReference([0.5, 0.3]), axes=(0, 1))
    joint = JointProgram(model.nv, [0], ConstantReference([0.2]))
    velocity = ConstantVelocityProgram(np.eye(model.nv)[2:3])
    stacked = StackedProgram([point, joint, velocity])
    q, v = random_state(model, 6)
    stacked.evaluate(0.1, q, v)
    parts = [p.evaluate(0.1, q, v) for p in (point, joint, velocity)]
    for name in ('phi', 'rate', 'bias', 'jacobian'):
        np.testing.assert_array_equal(getattr(stacked, name),
                                      np.concatenate([getattr(p, name) for p in parts]))
    assert stacked.order.tolist() == [2, 2, 2, 1]
    with pytest.raises(ValueError):
        StackedProgram([point, JointProgram(3, [0], ConstantReference([0.0]))])


PROGRAM_YAML = """
gains: {alpha: 8.0, gamma: 5.0}
rows:
  - type: joint
    joints: [shoulder, elbow]
    reference: {type: spline, waypoints: [[0.0, 0.0], [0.5, 1.0], [1.0, 0.2]], duration: 4.0}
  - type: point
    link: forearm
    fraction: 0.25
    axes: [x, y]
    reference: {type: circle, center: [0.5, 0.2], radius: 0.1, rate: 0.5, phase: 1.0}
  - type: angle
    link: upper_arm
    fraction: 1.0
    reference: {type: line, start: [0.0], end: [1.0], duration: 2.0, start_time: 1.0}
"""


def test_program_file_builds_the_documented_rows():
    """The YAML example: rows in order, the spline starts and ends on its first and last
    waypoints (quintic timing), the circle point at t = 0 is c + r (cos 1, sin 1), the
    point sits at 0.25 x 0.4 m on the forearm, beta defaults to alpha."""
    import yaml
    from flexible_manipulator.control.program_config import program_from_dict
    model = flexible_arm()
    program, stab = program_from_dict(model, yaml.safe_load(PROGRAM_YAML))
    joint, point, angle = program.programs
    assert program.size == 5 and program.order.tolist() == [2] * 5
    np.testing.assert_allclose(joint.reference.evaluate(0.0)[0], [0.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(joint.reference.evaluate(4.0)[0], [1.0, 0.2], atol=1e-15)
    np.testing.assert_allclose(point.reference.evaluate(0.0)[0],
                               [0.5 + 0.1 * math.cos(1.0), 0.2 + 0.1 * math.sin(1.0)])
    assert point.link == 1 and point.abscissa == pytest.approx(0.1)
    assert angle.reference.evaluate(1.0)[0][0] == 0.0
    np.testing.assert_allclose(stab.alpha, 8.0)
    np.testing.assert_allclose(stab.beta, 8.0)


@pytest.mark.parametrize('edit, field', [
    (lambda s: s['rows'][1].update(link='hand'), 'rows[1].link'),
    (lambda s: s['rows'][1]['reference'].update(radius=-0.1), 'rows[1].reference.radius'),
    (lambda s: s['rows'][0].update(joints=['wrist']), 'rows[0].joints[0]'),
    (lambda s: s['rows'][2].update(fraction=1.5), 'rows[2].fraction'),
    (lambda s: s['gains'].update(alpha=0.0), 'gains.alpha'),
    (lambda s: s['rows'][0]['reference'].update(waypoints=[[0.0, 0.0]]),
     'rows[0].reference.waypoints'),
])
def test_program_file_errors_name_the_field(edit, field):
    """A bad value is refused with a ConfigError that starts with its dotted path."""
    import yaml
    from flexible_manipulator.control.program_config import program_from_dict
    from flexible_manipulator.model_config import ConfigError
    spec = yaml.safe_load(PROGRAM_YAML)
    edit(spec)
    with pytest.raises(ConfigError, match=rf'^program: {re.escape(field)}'):
        program_from_dict(flexible_arm(), spec)
