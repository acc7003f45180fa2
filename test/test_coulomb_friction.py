"""Coulomb joint friction in the plant (`mechanics.friction`): closed forms, one joint.

The joint: a wheel turning about the vertical axis (no gravity torque), inertia I = 0.1 kg
m^2 about it, Coulomb level F_c = 1 N m, regularized over v_s (default 0.01 rad/s), on
the plant's usual step of 0.5 ms (four per 2 ms period; recorded after every step).
Expected values are the closed forms of the module doc of `mechanics.friction`:

* coasting from v0 = 2 rad/s the hard model stops at t_c = I v0 / F_c = 0.2 s, having
  turned I v0^2 / (2 F_c) = 0.2 rad. The regularized one follows
  sinh(v / v_s) = sinh(v0 / v_s) exp(-F_c t / (I v_s)) exactly: the hard model's
  v0 - F_c t / I to 2 v_s exp(-2 v / v_s) while v >> v_s, then an exponential creep to rest
  of time constant I v_s / F_c (1 ms). Its speed falls through v_s at
  t_c - (ln 2 + ln sinh 1) I v_s / F_c = t_c - 0.855 ms: the stop time is t_c to within
  I v_s / F_c. It rests at theta = (I / F_c) (v0^2 / 2 + pi^2 v_s^2 / 12) (the creep adds
  I / F_c v_s^2 int_0^inf x (coth x - 1) dx = 8e-6 rad). rk4 must follow the closed-form
  speed to 1e-3 v_s over the whole run and the rest angle to 1e-8 rad (measured: 1.8e-4
  v_s, 1.6e-9 rad), rosenbrock2 (second order, h = v_s I / (2 F_c) at the knee) to 0.05
  v_s and 1e-6 rad (measured: 0.026 v_s, 3.9e-7 rad);
* under a constant effort tau = F_c / 2 the wheel at rest creeps at v_s artanh(1 / 2) =
  0.549 v_s (the hard model holds it still);
* with v_s = 1e-4 (F_c / (v_s I) = 1e5 1/s: h |lambda| = 50 at 0.5 ms) rk4 is refused by
  the step check naming the friction. rosenbrock2, whose W holds the friction as a damper
  (the chord on the step that reaches rest), decelerates the wheel at F_c / I and stops
  it at t_c to within two steps (the chord damps the last approach; measured 0.8 ms), at
  the hard model's 0.2 rad to 1e-6 rad: the knee itself (10 us wide) is not resolved at
  0.5 ms, the stop is (with the tangent alone in W it kept sliding at 0.0025 rad/s).
"""

import math

import numpy as np
import pytest

from flexible_manipulator.mechanics.link_description import Joint, Link, RigidBody
from flexible_manipulator.mechanics.friction import FRICTION_VELOCITY
from flexible_manipulator.mechanics.links import chain_from_links
from flexible_manipulator.mechanics.simulation import Simulation

INERTIA, LEVEL, V0 = 0.1, 1.0, 2.0
STEP, PERIOD = 0.0005, 0.002


def wheel(friction=LEVEL, friction_velocity=FRICTION_VELOCITY, damping=0.0):
    """The wheel of the module doc (gravity along its axis: no torque)."""
    body = RigidBody(1.0, (0.0, 0.0, 0.0), ((0.05, 0.0, 0.0), (0.0, 0.05, 0.0),
                                            (0.0, 0.0, INERTIA)))
    joint = Joint('spin', damping=damping, friction=friction,
                  friction_velocity=friction_velocity)
    return chain_from_links('wheel', [Link('wheel', joint, 0.0, body)],
                            gravity_base=(0.0, 0.0, -9.81))


def log_sinh(x):
    """ln sinh(x) for x > 0 without overflow."""
    return x + math.log1p(-math.exp(-2.0 * x)) - math.log(2.0)


def exact_speed(t, v_s, v0=V0):
    """The regularized wheel's speed at t: sinh(v / v_s) = sinh(v0 / v_s) e^(-F_c t / (I v_s))."""
    log = log_sinh(v0 / v_s) - LEVEL * t / (INERTIA * v_s)
    x = log + math.log(2.0) if log > 20.0 else math.asinh(math.exp(log))
    return v_s * x


def coast(method, v_s=FRICTION_VELOCITY, seconds=0.25):
    """Coast from V0 under zero effort; return (times, angles, speeds) after every step."""
    sim = Simulation(wheel(friction_velocity=v_s), STEP, method, v0=[V0])
    count = int(round(seconds / STEP))
    times, angles, speeds = [0.0], [0.0], [V0]
    for k in range(count):
        sim.advance(np.zeros(1), STEP)
        times.append((k + 1) * STEP)
        angles.append(sim.q[0])
        speeds.append(sim.v[0])
    return np.array(times), np.array(angles), np.array(speeds)


def crossing(times, speeds, level):
    """The time the speed falls through ``level`` (linear between steps)."""
    k = int(np.argmax(speeds <= level))
    t0, t1, v0, v1 = times[k - 1], times[k], speeds[k - 1], speeds[k]
    return t0 + (v0 - level) / (v0 - v1) * (t1 - t0)


@pytest.mark.parametrize('method, speed, angle',
                         [('rk4', 1e-3, 1e-8), ('rosenbrock2', 0.05, 1e-6)])
def test_a_coasting_joint_stops_at_the_closed_form_time(method, speed, angle):
    """The speed follows the closed form (to ``speed`` v_s); the stop (through v_s) is at
    t_c within I v_s / F_c; the rest angle is the closed form's (to ``angle`` rad)."""
    v_s = FRICTION_VELOCITY
    times, angles, speeds = coast(method)
    exact = np.array([exact_speed(t, v_s) for t in times])
    error = np.abs(speeds - exact).max()
    assert error < speed * v_s, error
    hard, scale = INERTIA * V0 / LEVEL, INERTIA * v_s / LEVEL
    stop = crossing(times, speeds, v_s)
    assert abs(stop - hard) < scale, (stop, hard)
    assert abs(stop - (hard - (math.log(2.0) + log_sinh(1.0)) * scale)) < 0.1 * scale
    rest = INERTIA / LEVEL * (V0 ** 2 / 2 + math.pi ** 2 * v_s ** 2 / 12)
    assert abs(speeds[-1]) < 1e-9
    assert abs(angles[-1] - rest) < angle, (angles[-1], rest)


def test_a_torque_below_the_friction_level_leaves_a_creep_of_the_velocity_scale():
    """tau = F_c / 2 from rest: the speed settles at v_s artanh(1/2), never above v_s."""
    for method in ('rk4', 'rosenbrock2'):
        sim = Simulation(wheel(), STEP, method)
        speeds = []
        for _ in range(100):
            sim.advance(np.array([0.5 * LEVEL]), PERIOD)
            speeds.append(sim.v[0])
        creep = FRICTION_VELOCITY * math.atanh(0.5)
        assert max(speeds) <= creep * (1 + 1e-9)
        assert speeds[-1] == pytest.approx(creep, rel=1e-9)


def test_a_velocity_scale_too_small_for_rk4_is_refused_and_rosenbrock_takes_it():
    """v_s = 1e-4: rk4 at 0.5 ms is refused naming the friction; rosenbrock2 decelerates
    the wheel at F_c / I and stops it at t_c to within two steps (module doc)."""
    v_s = 1e-4
    with pytest.raises(ValueError, match='Coulomb friction of a joint near rest .*raise the '
                                         "joint's friction_velocity"):
        Simulation(wheel(friction_velocity=v_s), STEP, 'rk4')
    times, angles, speeds = coast('rosenbrock2', v_s)
    moving = times < 0.19
    assert np.abs(speeds[moving] - (V0 - LEVEL / INERTIA * times[moving])).max() < 1e-9
    stop = crossing(times, speeds, v_s)
    assert abs(stop - INERTIA * V0 / LEVEL) < 2 * STEP
    assert abs(speeds[-1]) < 1e-9
    assert abs(angles[-1] - INERTIA * V0 ** 2 / (2 * LEVEL)) < 1e-6


def test_the_dynamics_hold_the_same_friction_everywhere():
    """h(q, v), the inverse dynamics, both forward dynamics and ``joint_friction`` agree:
    h = D v + F_c tanh(v / v_s) on the wheel (no other force), to round-off."""
    model = wheel(damping=0.3, friction_velocity=0.5)
    data = model.create_data()
    q = np.zeros(1)
    for v in (-1.0, -0.2, 0.0, 0.1, 3.0):
        expected = 0.3 * v + LEVEL * math.tanh(v / 0.5)
        assert model.bias_forces(data, q, [v])[0] == pytest.approx(expected, abs=1e-14)
        assert model.joint_friction([v])[0] == pytest.approx(expected, abs=1e-14)
        assert model.rnea(data, q, [v], [2.0])[0] == pytest.approx(
            2.0 * INERTIA + expected, abs=1e-14)
        for algorithm in ('composite_forward_dynamics', 'articulated_forward_dynamics'):
            a = getattr(model, algorithm)(data, q, [v], [0.7])[0]
            assert a == pytest.approx((0.7 - expected) / INERTIA, abs=1e-12)
