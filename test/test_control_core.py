"""Tests of the sinusoidal joint program (pure Python, no ROS).

Expected values: the closed-form sinusoid and its finite differences. (Rigid computed
torque is the ideal realization of a joint program in control.program_controller:
test_program_controller checks it against the classical computed-torque law and the
designed error decay.)
"""

import math

import numpy as np
import pytest

from flexible_manipulator.control.joint_program import SinusoidalJointProgram


def evaluate_copy(prog, t):
    """Return copies of (q_d, q_d', q_d'') (evaluate reuses its output buffers)."""
    return tuple(array.copy() for array in prog.evaluate(t))


def test_program_position_is_the_documented_sinusoid():
    """q_d(t) = offset + amplitude sin(2 pi f t + phase), evaluated here with math.sin."""
    prog = SinusoidalJointProgram([0.1, -0.2, 0.0], [0.5, 1.0, 2.0], [0.5, 1.5, 0.1],
                                  [0.0, -0.7, 2.0])
    for t in (0.0, 0.37, 2.9):
        expected = [0.1 + 0.5 * math.sin(2 * math.pi * 0.5 * t),
                    -0.2 + 1.0 * math.sin(2 * math.pi * 1.5 * t - 0.7),
                    0.0 + 2.0 * math.sin(2 * math.pi * 0.1 * t + 2.0)]
        np.testing.assert_allclose(prog.evaluate(t)[0], expected, rtol=0, atol=1e-14)


def test_program_derivatives_match_central_differences():
    """Check q_d' and q_d'' against central differences of q_d and q_d'.

    First differences, dt = 1e-6: truncation dt^2 |f'''| / 6 <= 1e-12 A w^4 / 6 ~ 3e-9
    (A w^4 <= 1.0 (2 pi 1.5)^4 ~ 7.9e3), rounding ~1e-16 |f| / dt ~ 1e-9; tolerance 1e-7.
    Second difference of q_d, dt = 1e-4: truncation dt^2 A w^4 / 12 ~ 7e-6, rounding
    ~1e-16 / dt^2 ~ 1e-8; tolerance 1e-4. A wrong factor w or sign gives errors of O(1).
    """
    prog = SinusoidalJointProgram([0.1, -0.2, 0.0], [0.5, 1.0, 2.0], [0.5, 1.5, 0.1],
                                  [0.0, -0.7, 2.0])
    for t in (0.0, 0.21, 1.3, 4.75):
        q, v, a = evaluate_copy(prog, t)
        dt = 1e-6
        q_minus, v_minus, _ = evaluate_copy(prog, t - dt)
        q_plus, v_plus, _ = evaluate_copy(prog, t + dt)
        np.testing.assert_allclose(v, (q_plus - q_minus) / (2 * dt), rtol=0, atol=1e-7)
        np.testing.assert_allclose(a, (v_plus - v_minus) / (2 * dt), rtol=0, atol=1e-7)
        dt = 1e-4
        q_minus, q_plus = evaluate_copy(prog, t - dt)[0], evaluate_copy(prog, t + dt)[0]
        np.testing.assert_allclose(a, (q_plus - 2 * q + q_minus) / dt ** 2, rtol=0, atol=1e-4)


def test_program_refuses_mismatched_sizes():
    """One entry per joint in every argument, or ValueError."""
    with pytest.raises(ValueError):
        SinusoidalJointProgram([0.0, 0.0], [1.0], [1.0, 1.0])
