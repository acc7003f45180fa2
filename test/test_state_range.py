"""The physical range of measured arm states (`control.state_range`).

Expected values: the bounds from the model file's joint limits and link lengths, and the
clamped-free Euler-Bernoulli frequencies omega_k = (beta_k L)^2 sqrt(EI / (rho A L^4))
with beta_1 L = 1.87510, beta_2 L = 4.69409, beta_3 L = 7.85476 (Blevins, Formulas for
Natural Frequency and Mode Shape, table 8-1); and, for "physical states pass", states of
the package's own simulation of the arm in its hardest motion within its limits.
"""

import math
import pathlib

import numpy as np
import pytest

from flexible_manipulator.control.state_range import RANGE_FACTOR, StateRange
from flexible_manipulator.mechanics.simulation import Simulation
from flexible_manipulator.model_config import load_model

MODEL = pathlib.Path(__file__).parent.parent / 'config' / 'models' / 'two_link_flexible.yaml'
BETA_L = (1.87510407, 4.69409113, 7.85475744)


@pytest.fixture(scope='module')
def arm():
    """The demo's flexible arm and its range at the model's velocity limits."""
    model = load_model(str(MODEL))
    return model, StateRange(model, model.velocity_limit)


def test_bounds_follow_the_limits_lengths_and_clamped_free_frequencies(arm):
    """Joint limits (+-3.14159, +-2.8) widened by half their travel; velocity limits (6, 8)
    times RANGE_FACTOR; modes of the 0.5 m and 0.4 m links at L/2 and RANGE_FACTOR omega_k L/2
    (rho A = 0.243 kg/m, EI = 4.725 N m^2, 3 modes per link; the model file)."""
    model, bounds = arm
    np.testing.assert_allclose(bounds.position_high, [3.14159 * 2, 2.8 * 2], atol=1e-12)
    np.testing.assert_allclose(bounds.position_low, [-3.14159 * 2, -2.8 * 2], atol=1e-12)
    np.testing.assert_allclose(bounds.speed, [6.0 * RANGE_FACTOR, 8.0 * RANGE_FACTOR])
    lengths = [0.5] * 3 + [0.4] * 3
    np.testing.assert_allclose(bounds.amplitude, np.array(lengths) / 2)
    omega = [bl ** 2 * math.sqrt(4.725 / (0.243 * length ** 4))
             for length, bl in zip(lengths, BETA_L + BETA_L)]   # 3 modes per link
    np.testing.assert_allclose(bounds.modal_speed,
                               RANGE_FACTOR * np.array(omega) * np.array(lengths) / 2,
                               rtol=1e-4)


def test_hard_physical_motion_stays_in_range(arm):
    """2 s of the hardest motion inside the limits, simulated by the package: each joint
    driven at full effort (saturated velocity loop) between +-90 % of its velocity limit,
    reversing every 0.3 s. The reversals ring the modes (the first reaches about 60 % of
    its bound) and the coupling overshoots the elbow past its limit: no state leaves the
    range."""
    model, bounds = arm
    sim = Simulation(model, 2e-4, 'rosenbrock2')
    n, sign = model.n_joints, np.array([1.0, -1.0])
    for k in range(1000):
        target = 0.9 * model.velocity_limit * sign * (1 if (k * 0.002) % 0.6 < 0.3 else -1)
        effort = np.clip(50.0 * (target - sim.v[:n]), -model.effort_limit, model.effort_limit)
        sim.advance(effort, 0.002)
        assert bounds.joint_problem(sim.q[:n], sim.v[:n]) is None
        assert bounds.modal_problem(sim.q[n:], sim.v[n:]) is None


@pytest.mark.parametrize('where, value, named', [
    ('q', 6.3, "joint 'upper_arm_joint' at 6.3 is outside"),
    ('v', -1e6, "joint 'forearm_joint' velocity -1e+06"),
    ('eta', 1e200, "coordinate 1e+200 m is outside"),
    ('eta_dot', 1e100, 'velocity 1e+100 m/s is outside'),
])
def test_states_out_of_range_are_named(arm, where, value, named):
    """One coordinate past its bound: the reason names it, its value and the bound."""
    model, bounds = arm
    q, v = np.zeros(2), np.zeros(2)
    eta, eta_dot = np.zeros(6), np.zeros(6)
    index = {'q': 0, 'v': 1, 'eta': 4, 'eta_dot': 2}[where]
    {'q': q, 'v': v, 'eta': eta, 'eta_dot': eta_dot}[where][index] = value
    problem = bounds.joint_problem(q, v) or bounds.modal_problem(eta, eta_dot)
    if where == 'q':
        named = named.replace('upper_arm_joint', model.joint_names[0])
    elif where == 'v':
        named = named.replace('forearm_joint', model.joint_names[1])
    assert problem is not None and named in problem, problem
    if where.startswith('eta'):
        assert repr(model.mode_names[index]) in problem


def test_continuous_joints_have_no_position_bound():
    """A joint without limits (lower/upper infinite) takes any finite angle."""
    from flexible_manipulator.mechanics.link_description import Joint, Link
    from flexible_manipulator.mechanics.links import chain_from_links
    chain = chain_from_links('wheel', [Link('wheel', Joint('spin', velocity_limit=5.0), 0.1)])
    bounds = StateRange(chain, chain.velocity_limit)
    assert bounds.joint_problem(np.array([1e12]), np.array([49.0])) is None
    assert 'velocity' in bounds.joint_problem(np.array([0.0]), np.array([51.0]))
