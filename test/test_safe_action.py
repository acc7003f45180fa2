"""The safe action (zero, gravity, hold) and the driver convention of the controller, no ROS.

The controller (`control.program_controller`) runs on config/models/two_link_rigid.yaml
and its program file. Expected efforts are written out here for the arm's two uniform bars
in a vertical plane (gravity along -y of the base frame): m = 1.2, 0.8 kg, centres of mass
c = 0.25, 0.2 m from the joints, l_1 = 0.5 m, inertias about the centres I = 0.025,
0.010667 kg m^2, joint friction 0.05 N m s/rad (the model file), and the hold law's gains
alpha = 2 /s (`program_controller.HOLD_BANDWIDTH`, critically damped): the hold effort is
M(q) (alpha^2 (q_0 - q) - 2 alpha v) + h(q, v), the computed torque of its hold row on this
rigid arm (its own rigid twin).
"""

import math
from pathlib import Path

import numpy as np
import pytest

from flexible_manipulator.control.program_controller import (
    controller_from_files, HOLD_BANDWIDTH, SLOW_FRACTION)
from flexible_manipulator.model_config import ConfigError

CONFIG = Path(__file__).resolve().parents[1] / 'config'
RIGID = str(CONFIG / 'models' / 'two_link_rigid.yaml')
PROGRAMS = str(CONFIG / 'programs_two_link_rigid.yaml')
G, M1, M2, C1, C2, L1, I1, I2, FRICTION = 9.80665, 1.2, 0.8, 0.25, 0.2, 0.5, 0.025, \
    0.010667, 0.05
ALPHA = 2.0                     # the hold law's alpha [1/s], stated in the module doc


def gravity(q):
    """Gravity torque [N m]: tau_1 = g (m_1 c_1 cos q1 + m_2 (l_1 cos q1 + c_2 cos q12))."""
    q12 = q[0] + q[1]
    return np.array([G * (M1 * C1 * math.cos(q[0])
                          + M2 * (L1 * math.cos(q[0]) + C2 * math.cos(q12))),
                     G * M2 * C2 * math.cos(q12)])


def mass_matrix(q):
    """M(q) of the two bars [kg m^2]."""
    c = math.cos(q[1])
    m22 = I2 + M2 * C2 ** 2
    m12 = m22 + M2 * L1 * C2 * c
    m11 = I1 + M1 * C1 ** 2 + m22 + M2 * (L1 ** 2 + 2 * L1 * C2 * c)
    return np.array([[m11, m12], [m12, m22]])


def velocity_terms(q, v):
    """Coriolis and centrifugal torques plus joint friction [N m]."""
    k, v = M2 * L1 * C2 * math.sin(q[1]), np.asarray(v, dtype=float)
    return np.array([-k * (2 * v[0] * v[1] + v[1] ** 2), k * v[0] ** 2]) + FRICTION * v


def hold_effort(q, v, target):
    """The hold law: M (alpha^2 (target - q) - 2 alpha v) + h(q, v)."""
    acceleration = ALPHA ** 2 * (np.asarray(target) - q) - 2 * ALPHA * np.asarray(v)
    return mass_matrix(q) @ acceleration + gravity(q) + velocity_terms(q, v)


def controller(**settings):
    """The rigid arm's controller with its program file, at 2 ms."""
    return controller_from_files(RIGID, PROGRAMS, period=0.002, **settings)


def test_the_stated_hold_gains_are_the_controllers():
    assert HOLD_BANDWIDTH == ALPHA and SLOW_FRACTION == 0.1


def test_zero_is_zero_while_disabled_and_after_a_fault():
    """Zero effort disabled, at the fault tick and after it (the default action)."""
    law = controller()
    q = np.array([0.4, -0.7])
    assert law.settings.safe_action == 'zero'
    assert np.all(law.update(0.0, q, np.zeros(2)) == 0.0)
    law.switch('hold')
    law.enable()
    law.update(0.002, q, np.zeros(2))
    assert law.status.tracking
    law.update(0.004, q, np.array([0.0, 10.5]))          # elbow limit 10 rad/s
    assert law.status.mode == 'fault'
    assert np.all(law.update(0.006, q, np.zeros(2)) == 0.0)
    assert np.all(law.safe_effort() == 0.0)


def test_gravity_is_the_static_torque_at_each_measured_configuration():
    """Disabled, after a velocity fault and on stale states: the gravity torque."""
    law = controller(safe_action='gravity')
    q = np.array([0.4, -0.7])
    np.testing.assert_allclose(law.update(0.0, q, np.zeros(2)), gravity(q), rtol=1e-9)
    assert law.status.message == 'disabled: gravity effort'
    moved = np.array([-0.2, 1.1])
    np.testing.assert_allclose(law.update(0.002, moved, np.array([0.3, -0.2])),
                               gravity(moved), rtol=1e-9)
    np.testing.assert_allclose(law.safe_effort(), gravity(moved), rtol=1e-9)
    law.switch('hold')
    law.enable()
    law.update(0.004, q, np.zeros(2))
    law.update(0.006, q, np.array([0.0, 10.5]))
    assert law.status.mode == 'fault'
    np.testing.assert_allclose(law.update(0.008, q, np.zeros(2)), gravity(q), rtol=1e-9)


def test_hold_pulls_back_to_where_it_started_disabled():
    """Started disabled at q_0: gravity there; moved off it, the hold law toward q_0."""
    law = controller(safe_action='hold')
    q0 = np.array([0.4, -0.7])
    np.testing.assert_allclose(law.update(0.0, q0, np.zeros(2)), gravity(q0), rtol=1e-9)
    assert law.status.mode == 'disabled'
    q, v = q0 + [0.05, -0.03], np.array([0.2, -0.1])       # slow: under 10 % of 8, 10 rad/s
    np.testing.assert_allclose(law.update(0.002, q, v), hold_effort(q, v, q0), rtol=1e-9)
    # Stale states: the law at the last joints, the stale velocity taken as zero.
    np.testing.assert_allclose(law.safe_effort(), hold_effort(q, [0.0, 0.0], q0), rtol=1e-9)


def test_hold_after_tracking_and_after_a_velocity_fault_damps_first():
    """Disabled after tracking: the target is where tracking stopped. After a velocity
    fault the joints are fast: the target is taken afresh at each tick (damping and
    gravity only) until every joint is under 10 % of its limit; then held there."""
    law = controller(safe_action='hold')
    law.switch('hold')
    law.enable()
    stop = np.array([-0.5, 1.0])
    law.update(0.0, stop, np.zeros(2))
    law.disable()
    q = stop + [0.02, 0.01]
    np.testing.assert_allclose(law.update(0.002, q, np.zeros(2)), hold_effort(q, [0, 0], q),
                               rtol=1e-9)          # captured at the first safe tick
    np.testing.assert_allclose(law.update(0.004, stop, np.zeros(2)),
                               hold_effort(stop, [0, 0], q), rtol=1e-9)
    law.enable()
    law.update(0.006, stop, np.zeros(2))
    fast = np.array([0.0, 10.5])
    law.update(0.008, stop, fast)
    assert law.status.mode == 'fault'
    swinging = stop + [0.0, 0.2]
    np.testing.assert_allclose(law.update(0.010, swinging, fast),
                               hold_effort(swinging, fast, swinging), rtol=1e-9)
    slow_q, slow_v = stop + [0.0, 0.5], np.array([0.0, 0.9])     # 9 % of 10 rad/s
    np.testing.assert_allclose(law.update(0.012, slow_q, slow_v),
                               hold_effort(slow_q, slow_v, slow_q), rtol=1e-9)
    later = slow_q + [0.0, 0.01]
    np.testing.assert_allclose(law.update(0.014, later, np.zeros(2)),
                               hold_effort(later, [0, 0], slow_q), rtol=1e-9)


def test_a_hold_law_the_checks_refuse_stops_the_configuration():
    """At 0.6 s the hold row's ZOH bound (T < min(1/alpha, 4 alpha/beta^2) = 0.5 s at
    alpha = 2 /s) fails while a program at alpha = 1 /s (bound 1 s) passes: one line."""
    from flexible_manipulator.control.program_controller import ProgramController, \
        ControllerSettings
    from flexible_manipulator.model_config import load_model
    programs = {'slow': {'gains': {'alpha': 1.0},
                         'rows': [{'type': 'hold', 'joints': ['shoulder', 'elbow']}]}}
    model = load_model(RIGID)
    ProgramController(model, programs, ControllerSettings(period=0.6))
    with pytest.raises(ConfigError) as refusal:
        ProgramController(model, programs, ControllerSettings(period=0.6, safe_action='hold'))
    text = str(refusal.value)
    assert text.startswith('safe_action: hold: its hold law (alpha = 2 /s') and '\n' not in text
    assert '0.5' in text


@pytest.mark.parametrize('action', ['gravity', 'hold'])
def test_a_gravity_compensating_driver_gets_the_effort_less_gravity(action):
    """driver_compensation: [gravity]: tracking and the safe action send the plain
    controller's effort minus the gravity torque at the state; zero stays zero."""
    plain, driven = (controller(safe_action=action, driver_compensation=compensation)
                     for compensation in (None, ['gravity']))
    q, v = np.array([0.4, -0.7]), np.array([0.1, -0.2])
    for t, enabled in ((0.0, False), (0.002, True), (0.004, True)):
        for law in (plain, driven):
            if enabled and not law.enabled:
                law.switch('hold')
                law.enable()
        expected = plain.update(t, q, v).copy()
        np.testing.assert_allclose(driven.update(t, q, v), expected - gravity(q), rtol=1e-9,
                                   atol=1e-12)
    zero = controller(driver_compensation=['gravity'])
    assert np.all(zero.update(0.0, q, v) == 0.0)


def test_a_friction_compensating_driver_gets_the_effort_less_the_whole_joint_friction(
        tmp_path):
    """The arm with Coulomb friction 0.3 and 0.2 N m on its joints (v_s 0.01 rad/s): the
    hold law's effort holds it in h (the written-out hold effort plus F_c tanh(v / v_s));
    driver_compensation: [friction] sends that effort less the joints' whole friction,
    D v + F_c tanh(v / v_s), viscous and Coulomb alike."""
    text = Path(RIGID).read_text()
    for name, level in (('shoulder', 0.3), ('elbow', 0.2)):
        text = text.replace(f'{{name: {name}, axis: [0, 0, 1], damping: 0.05,',
                            f'{{name: {name}, axis: [0, 0, 1], damping: 0.05, friction: '
                            f'{level},')
    path = tmp_path / 'rough.yaml'
    path.write_text(text)
    plain, driven = (controller_from_files(str(path), PROGRAMS, period=0.002,
                                           safe_action='hold', driver_compensation=compensation)
                     for compensation in (None, ['friction']))
    coulomb = np.array([0.3, 0.2])
    q0 = np.array([0.4, -0.7])
    q, v = q0 + [0.05, -0.03], np.array([0.004, -0.2])      # disabled: hold toward q0
    friction = FRICTION * v + coulomb * np.tanh(v / 0.01)
    for law in (plain, driven):
        law.update(0.0, q0, np.zeros(2))
    effort = plain.update(0.002, q, v).copy()
    np.testing.assert_allclose(effort, hold_effort(q, v, q0) + coulomb * np.tanh(v / 0.01),
                               rtol=1e-9)
    np.testing.assert_allclose(driven.update(0.002, q, v), effort - friction, rtol=1e-9,
                               atol=1e-12)


def test_driver_compensation_is_checked():
    with pytest.raises(ConfigError, match='driver_compensation: expected each of gravity, '
                                          'friction at most once'):
        controller(driver_compensation=['gravity', 'inertia'])
