"""The run-time test of the model (`control.mismatch_guard`).

Expected values: the threshold is the chi-square quantile of the module doc (checked
against its normal approximation and against seeded chi-square draws); the verdicts on
plants come from the observer's design: noise-free simulation on a plant within the
declared uncertainty gives a normalized innovation far below its expectation n (the
covariances allow for the whole set), while joints whose friction is a thousand times the
model's leave a torque residual of 20 N m s/rad x 0.5 rad/s, a hundred times the declared
effort noise (1 % of 10 N m), i.e. a normalized innovation of order 1e4.
"""

import math

import numpy as np
import pytest

from flexible_manipulator.control.lockstep import run_lockstep
from flexible_manipulator.control.mismatch_guard import (FALSE_ALARM, InnovationTest,
                                                         MismatchGuard, threshold, WINDOW)
from flexible_manipulator.control.program_controller import (build_controller,
                                                             ProgramController)
from flexible_manipulator.mechanics.perturbation import perturbed
from flexible_manipulator.mechanics.simulation import Simulation
from flexible_manipulator.model_config import ConfigError
from test_elastic_observer import start_of
from test_program_controller import flexible_settings

PERIOD = 0.002


def test_the_threshold_is_the_chi_square_quantile_of_the_window_mean():
    """The mean of N chi-square(n) draws has mean n and variance 2 n / N: the quantile at
    1 - 1e-9 lies about 6 standard deviations above n (the normal approximation, a little
    more for the skewed chi-square). Seeded draws on the model do not trip the test in
    2000 windows; draws of twice the variance's scale trip it within a window."""
    n, ticks = 2, int(round(WINDOW / PERIOD))
    limit = threshold(n, ticks)
    z = 5.998                                  # the standard normal's 1 - 1e-9 quantile
    normal = n + z * math.sqrt(2.0 * n / ticks)
    assert normal < limit < 1.15 * normal
    from scipy.stats import chi2        # the quantile as scipy.stats writes it
    assert limit == pytest.approx(chi2.ppf(1.0 - 1e-9, n * ticks) / ticks, rel=1e-8)
    assert FALSE_ALARM == 1e-9
    rng = np.random.default_rng(3)
    test = InnovationTest(n, PERIOD)
    assert test.limit == limit
    assert not any(test.add(value) for value in rng.chisquare(n, 2000 * ticks))
    assert any(test.add(value) for value in 2.0 * rng.chisquare(n, ticks))


def guarded(flexible, demo_programs, name='joint_sine', **overrides):
    """The estimated demo law on one program, guarded (`build_controller`)."""
    return build_controller(flexible, {name: demo_programs[name]},
                            flexible_settings(elastic_state='estimated', **overrides))


def run(plant, law, duration):
    """Lock-step from the demo's start on ``plant``, joints measured only."""
    q0, v0 = start_of(plant)
    law.enable()
    return run_lockstep(law, Simulation(plant, 5e-4, 'rk4', q0=q0, v0=v0), duration,
                        PERIOD, measured=False)


def test_only_an_estimating_law_is_guarded_and_the_robust_one_is_built_first(
        flexible, demo_programs):
    """Guarded: the estimated law, with model following built beside it (what the
    start-up check admits as robust), and a law on measured modes (its test predicts
    from the measured state); a law without modes (the rigid twin) is returned as is."""
    law = guarded(flexible, demo_programs)
    assert isinstance(law, MismatchGuard) and law.law is law.primary
    assert law.robust.following is not None and 'model following' in law.note
    assert law.program_names == ['joint_sine'] and law.estimates_modes
    measured = build_controller(flexible, {'hold': demo_programs['hold']}, flexible_settings())
    assert isinstance(measured, MismatchGuard) and not measured.estimates_modes
    plain = build_controller(flexible, {'hold': demo_programs['hold']}, flexible_settings(
        realization='ideal', control_model='rigid_twin'))
    assert isinstance(plain, ProgramController)
    with pytest.raises(ConfigError, match="mismatch_action: must be one of degrade, warn"):
        guarded(flexible, demo_programs, mismatch_action='ignore')


@pytest.mark.parametrize('factors', [{}, {'stiffness': 0.8}, {'payload': 2.0}])
def test_a_plant_within_the_declared_set_does_not_trip_it(flexible, demo_programs, factors):
    """4 s of joint_sine on the model and on plants of the default set: no trip, and the
    window's mean stays below n / 10 (noise-free: module doc)."""
    law = guarded(flexible, demo_programs)
    result = run(perturbed(flexible, **factors), law, 4.0)
    assert not result.fault and not law.degraded and law.law is law.primary
    assert law.test.count == law.test.values.size
    assert np.max(law.test.values) < 2.0 and law.test.mean < 0.2


def test_a_joint_brake_left_on_trips_it_and_the_robust_law_goes_on(flexible, demo_programs):
    """Joint friction x1000: the first corrected tick's normalized innovation (order 1e4,
    module doc) is past the one-tick threshold (41 for two joints), so the test trips
    within a few ticks and says why; model following takes over where the program was
    (its time goes on: 2 s at the end); no fault. With ``warn`` it only says so."""
    plant = perturbed(flexible, friction=1000.0)
    law = guarded(flexible, demo_programs)
    result = run(plant, law, 2.0)
    assert not result.fault and result.ticks == 1000
    assert law.law is law.robust and law.following is not None
    assert 'off its model beyond the declared uncertainty' in law.degraded
    assert 'switched to model following' in law.degraded
    tripped = float(law.degraded.split('at t = ')[1].split(' s')[0])
    assert tripped <= 5 * PERIOD
    assert law.test.limits[0] == pytest.approx(41.45, abs=0.01)
    assert law.status.program_time == pytest.approx(2.0 - PERIOD)
    warned = guarded(flexible, demo_programs, mismatch_action='warn')
    run(plant, warned, 1.0)
    assert warned.law is warned.primary and 'mismatch_action: warn' in warned.degraded


@pytest.mark.parametrize('stiffness', [1.0, 0.9, 0.8])
def test_measured_modes_are_tested_too_and_a_softer_arm_is_handed_over(
        flexible, demo_programs, stiffness):
    """config/sim.yaml's law (servo on one mode per link, the modes measured, the model
    declared exact, 2 periods of delay) on the demo's lambda_circle. Each tick the
    observer predicts from the last measured modal state; its innovation is the model
    test. On the model the test never trips (normalized innovation below 1e-4: only the
    integrators differ); with the links' bending stiffness x0.9 or x0.8 the law on the
    measured modes diverges (without the test the x0.8 arm faults at the shoulder's
    velocity limit within 6 s, the x0.9 arm leaves the circle by 0.17 rad RMS): the test
    trips and model following holds the arm, no fault."""
    settings = flexible_settings(realization='servo', control_model='full', delay_periods=2)
    law = build_controller(flexible, demo_programs, settings, 'lambda_circle')
    plant = perturbed(flexible, stiffness=stiffness) if stiffness != 1.0 else flexible
    q0, v0 = start_of(plant)
    law.enable()
    result = run_lockstep(law, Simulation(plant, 5e-4, 'rk4', q0=q0, v0=v0), 6.0, PERIOD,
                          measured=True, input_delay=2)
    assert not result.fault
    if stiffness == 1.0:
        assert not law.degraded and np.max(law.test.values) < 1e-4
    else:
        assert law.law is law.robust and 'off its model' in law.degraded
        assert result.rms < 5e-2
