"""The elastic-state observer: its linearization, its loop and its estimate off the model.

Expected values: the linearization (`observer_design.step_matrices`) is checked against
the observer's own nonlinear step (first-order agreement); the loop verdicts come from
`loop_checks.LinearLoop` and are borne out by the nonlinear loop in lock-step; the
estimation error on a plant whose bending stiffness is s times the model's is bounded by
the quasi-static argument of the innovation: the joints' torque balance measures the
elastic force K_plant eta, which the model explains by K_model eta_hat, so eta_hat ~ s eta
and the relative error is |1 - s|.
"""

import math

import numpy as np
import pytest

from flexible_manipulator.control.admission import rest_configuration
from flexible_manipulator.control.elastic_estimator import ElasticStateEstimator
from flexible_manipulator.control.lockstep import run_lockstep
from flexible_manipulator.control.loop_checks import LinearLoop
from flexible_manipulator.control.observer_design import (DEFAULT_NOISE, kalman_gain,
                                                          ObserverGain, parse_noise,
                                                          step_matrices)
from flexible_manipulator.control.program_controller import ProgramController
from flexible_manipulator.control.uncertainty import DEFAULT_UNCERTAINTY
from flexible_manipulator.mechanics.equilibrium import static_equilibrium
from flexible_manipulator.mechanics.perturbation import perturbed
from flexible_manipulator.mechanics.simulation import Simulation
from flexible_manipulator.model_config import ConfigError
from test_program_controller import flexible_settings, START_Q, START_V

PERIOD = 0.002
REST = np.array([-0.3, 1.5])


def start_of(plant):
    """The demo's start on ``plant``: sim.yaml's joints and velocities, modes at rest."""
    q0 = plant.neutral_configuration().astype(float)
    q0[:2] = START_Q
    v0 = np.zeros(plant.nv)
    v0[:2] = START_V
    return static_equilibrium(plant, q0), v0


def lockstep(plant, controller, duration, measured=False):
    """Run the enabled controller on ``plant`` from the demo's start."""
    q0, v0 = start_of(plant)
    sim = Simulation(plant, 5e-4, 'rk4', q0=q0, v0=v0)
    controller.enable()
    return run_lockstep(controller, sim, duration, PERIOD, measured)


# -- the linearization -------------------------------------------------------------------
def test_the_step_and_the_innovation_are_linearized_to_first_order(flexible):
    """E, G_a, G_theta and the innovation's rows (H, A_a, A_theta, B_theta) against the
    observer's own step (gain zero: nothing corrected, the innovation computed) over one
    period from rest plus a small modal state, joint offset, joint acceleration and
    effort of scale a. First order: the relative difference is O(a) (the model's own
    nonlinearity), below 1e-5 at a = 1e-7 and about 100x smaller there than at
    a = 1e-5."""
    rest = static_equilibrium(flexible, np.concatenate([REST, np.zeros(6)]))
    step = step_matrices(flexible, rest, PERIOD)
    rng = np.random.default_rng(1)
    directions = [rng.standard_normal(size) for size in (6, 6, 2, 2, 2)]
    errors = {'state': [], 'innovation': []}
    for scale in (1e-5, 1e-7):
        eta, w, dtheta, accel, effort = (scale * k * d for k, d in
                                         zip((1, 10, 1, 100, 10), directions))
        estimator = ElasticStateEstimator(flexible)
        estimator.set_gain(ObserverGain(np.zeros((12, 2)), np.eye(2), step))
        estimator.position[:] = rest[2:] + eta
        estimator.velocity[:] = w
        estimator.advance(rest[:2] + dtheta, np.zeros(2), accel, PERIOD, PERIOD, effort)
        x = np.concatenate([eta, w])
        predicted = step.E @ x + step.G_a @ (accel * PERIOD) + step.G_theta @ dtheta
        actual = np.concatenate([estimator.position - rest[2:], estimator.velocity])
        errors['state'].append(np.max(np.abs(actual - predicted)) / np.max(np.abs(actual)))
        innovation = (step.B_theta @ effort - step.A_a @ accel - step.H @ x
                      - step.A_theta @ dtheta)
        assert estimator.corrected
        errors['innovation'].append(np.max(np.abs(estimator.innovation - innovation))
                                    / np.max(np.abs(innovation)))
    for first, second in errors.values():
        assert second < 1e-5 and first > 30.0 * second


def test_the_gain_makes_the_error_dynamics_contract(flexible):
    """The Kalman gain at the demo's rest: E - L H contracts by at least 1 % per period,
    while E alone (the uncorrected estimate) decays by less than 0.1 % per period: that
    would be a damping ratio of 0.05 on the arm's first mode with its joints locked
    (1.7 Hz, config/models/two_link_flexible.yaml), ten times the structural 0.005."""
    gain = kalman_gain(flexible, np.concatenate([REST, np.zeros(6)]), PERIOD,
                       flexible.effort_limit, flexible.velocity_limit, DEFAULT_UNCERTAINTY)
    step = gain.step
    open_loop = np.max(np.abs(np.linalg.eigvals(step.E)))
    closed = np.max(np.abs(np.linalg.eigvals(step.E - gain.L @ step.H)))
    assert open_loop > 0.999
    assert closed < 0.99
    assert np.allclose(gain.covariance, gain.covariance.T)
    assert np.all(np.linalg.eigvalsh(gain.covariance) > 0.0)


@pytest.mark.parametrize('value, match', [
    ({'velocity_noise': -1.0}, r'observer_noise\.velocity_noise: must be > 0'),
    ({'effort_noise': math.nan}, r'observer_noise\.effort_noise: expected a finite number'),
    ({'speed': 1.0}, r'observer_noise: expected a mapping with velocity_noise, effort_noise'),
    ('loud', r'observer_noise: expected a mapping')])
def test_bad_noise_is_refused_naming_the_field(value, match):
    """What the observer assumes of the sensors is validated like every setting."""
    with pytest.raises(ConfigError, match=match):
        parse_noise(value)
    assert parse_noise(None) == DEFAULT_NOISE
    assert parse_noise({'velocity_noise': 0.01}).effort_noise == DEFAULT_NOISE.effort_noise


# -- the observer in the loop --------------------------------------------------------------
def test_the_uncorrected_estimate_destabilizes_a_joint_program_and_the_observer_holds_it(
        flexible, demo_programs):
    """`hold` with the elastic state estimated, on its exact model: with the observer's
    gain the sampled loop's spectral radius is < 1 (admitted) and the nonlinear loop's
    residual decays; with the gain zero (the integration alone) the radius is > 1 and,
    run anyway, the residual grows between the second and the fourth second (the linear
    rate ln(rho) / T ~ 1 /s predicts ~ e^2 over 2 s)."""
    law = ProgramController(flexible, {'hold': demo_programs['hold']},
                            flexible_settings(elastic_state='estimated'))
    entry = law.entry
    assert entry.sampled_radius < 1.0
    q0, _ = rest_configuration(law, entry)
    entry.program.evaluate(0.0, q0, np.zeros(law.control_model.nv))
    loop = LinearLoop(flexible, law.control_model, q0[:2], PERIOD, 'servo')
    kp, kd = (np.diag(values) for values in (entry.stabilization.k0, entry.stabilization.k1))
    C = entry.program.jacobian.copy()
    uncorrected = entry.observer_gain._replace(L=np.zeros_like(entry.observer_gain.L))
    radius = loop.radius(C, kp, kd, 0, uncorrected)
    assert radius > 1.0
    assert loop.radius(C, kp, kd, 0, entry.observer_gain) == pytest.approx(
        entry.sampled_radius, abs=1e-9)
    run = lockstep(flexible, law, 4.0)
    assert not run.fault and np.max(run.residual[-500:]) < 0.1 * run.peak
    law.estimator.set_gain(None)            # the integration alone
    run = lockstep(flexible, law, 4.0)
    early, late = (np.max(run.residual[int(a / PERIOD):int(b / PERIOD)])
                   for a, b in ((1.0, 2.0), (3.0, 4.0)))
    assert 0.1 < math.log(radius) / PERIOD < 10.0
    assert late > 3.0 * early


def estimate_beside(plant, model, law, duration, wrong=0.0, gain=True):
    """Drive ``plant`` with ``law`` (modes measured) and an observer of ``model`` beside it
    fed the same joint states and applied efforts; return (|eta_hat - eta| max per tick,
    |eta| max per tick). ``wrong``: added to every modal coordinate of the first estimate.
    """
    q0, v0 = start_of(plant)
    sim = Simulation(plant, 5e-4, 'rk4', q0=q0, v0=v0)
    observer = ElasticStateEstimator(model)
    if gain:
        observer.set_gain(kalman_gain(model, q0, PERIOD, model.effort_limit,
                                      model.velocity_limit, DEFAULT_UNCERTAINTY))
    observer.initialize(sim.q[:2])
    observer.position += wrong
    law.enable()
    applied = np.zeros(2)
    errors, sizes = [], []
    for _ in range(int(round(duration / PERIOD))):
        q, v = sim.q[:2].copy(), sim.v[:2].copy()
        effort = law.update(sim.time, q, v, sim.q[2:], sim.v[2:])
        assert law.status.tracking
        np.clip(effort, -plant.effort_limit, plant.effort_limit, out=applied)
        sim.advance(applied, PERIOD)
        observer.advance(q, v, (sim.v[:2] - v) / PERIOD, PERIOD, PERIOD, applied)
        errors.append(np.max(np.abs(observer.position - sim.q[2:])))
        sizes.append(np.max(np.abs(sim.q[2:])))
    return np.array(errors), np.array(sizes)


def test_a_wrong_initial_estimate_converges_on_the_model(flexible, demo_programs):
    """joint_sine on the exact model, an observer beside the loop started 1e-3 off in
    every modal coordinate. With the gain the error decays (E - L H contracts, radius <
    0.99 per period: nothing of 1e-3 is left after 1.5 s) to what the observer makes of the
    true start (the step's discretization error); without it the error decays only with
    the structural damping (zeta = 0.005: more than half is left after 2 s)."""
    law = ProgramController(flexible, {'joint_sine': demo_programs['joint_sine']},
                            flexible_settings())
    right, sizes = estimate_beside(flexible, flexible, law, 2.0)
    law = ProgramController(flexible, {'joint_sine': demo_programs['joint_sine']},
                            flexible_settings())
    wrong, _ = estimate_beside(flexible, flexible, law, 2.0, wrong=1e-3)
    tail = slice(int(1.5 / PERIOD), None)
    assert wrong[0] > 0.5e-3
    assert np.max(wrong[tail]) < 2.0 * np.max(right[tail]) + 1e-5
    assert np.max(right) < 0.05 * np.max(sizes)
    law = ProgramController(flexible, {'joint_sine': demo_programs['joint_sine']},
                            flexible_settings())
    alone, _ = estimate_beside(flexible, flexible, law, 2.0, wrong=1e-3, gain=False)
    assert np.max(alone[tail]) > 0.5e-3


@pytest.mark.parametrize('factors, bound', [
    ({'stiffness': 0.8}, 1.5 * 0.2), ({'stiffness': 1.2}, 1.5 * 0.2),
    ({'payload': 2.0}, 0.5), ({'payload': 0.5}, 0.5)])
def test_the_estimated_law_holds_a_mismatched_arm_with_a_bounded_estimate(
        flexible, demo_programs, factors, bound):
    """joint_sine, elastic state estimated (the observer in the law's loop), on a plant
    off the model: no fault, and the RMS estimation error of the modal coordinates is
    within ``bound`` of the RMS deflection: |1 - s| (module doc) with half again for the
    dynamics for stiffness; for the payload (no such argument) the estimate explains at
    least half the deflection. The uncorrected estimate faults on the same plants
    (test_uncertainty.py, bench/README.md)."""
    plant = perturbed(flexible, **factors)
    law = ProgramController(flexible, {'joint_sine': demo_programs['joint_sine']},
                            flexible_settings(elastic_state='estimated'))
    q0, v0 = start_of(plant)
    sim = Simulation(plant, 5e-4, 'rk4', q0=q0, v0=v0)
    law.enable()
    applied = np.zeros(2)
    errors, sizes = [], []
    for _ in range(int(2.0 / PERIOD)):
        effort = law.update(sim.time, sim.q[:2], sim.v[:2], applied_effort=applied)
        assert law.status.tracking, law.status.message
        errors.append(law.estimator.position - sim.q[2:])
        sizes.append(sim.q[2:].copy())
        np.clip(effort, -plant.effort_limit, plant.effort_limit, out=applied)
        sim.advance(applied, PERIOD)
    rms = np.sqrt(np.mean(np.square(errors))) / np.sqrt(np.mean(np.square(sizes)))
    assert rms < bound
