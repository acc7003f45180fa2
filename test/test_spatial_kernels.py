"""Checks of the compiled tangent map of SE(3) (``chain_kernels.spatial``) a rod step uses.

Expected values: J_r(Omega) from its power series sum_k (-ad_Omega)^k / (k+1)! (summed here
to 60 terms, independent of the closed forms under test), its time derivative along
Omega' from central finite differences of that series, and ``reference.cosserat_rod``'s
series form of the same derivative. The angles cover the series branches of the
coefficients (below 0.1 rad) and of their rates (below 1 rad), both sides of each switch.
"""

import math

import numpy as np
import pytest

from flexible_manipulator.mechanics import lie
from flexible_manipulator.mechanics.chain_kernels import spatial
from flexible_manipulator.mechanics.reference import cosserat_rod

ANGLES = [0.0, 1e-7, 1e-3, 0.05, 0.0999, 0.1001, 0.3, 0.9999, 1.0001, 2.0, 3.0]


def series_right_jacobian(omega, terms=60):
    """J_r(Omega) = sum_k (-ad_Omega)^k / (k+1)! (6 x 6)."""
    ad = -lie.se3_ad(omega)
    total, power = np.zeros((6, 6)), np.eye(6)
    for k in range(terms):
        total += power / math.factorial(k + 1)
        power = power @ ad
    return total


def compiled_parts(omega, rate):
    """(J_r as a 6 x 6 matrix, J_r applied to ``rate``, (d/dt J_r) Omega') from the kernels."""
    coefficients, blocks = np.zeros(6), np.zeros((2, 3, 3))
    applied, derivative = np.zeros(6), np.zeros(6)
    spatial.right_jacobian_coefficients(omega, coefficients)
    spatial.right_jacobian_blocks(omega, coefficients, blocks)
    spatial.right_jacobian_apply(blocks, rate, applied)
    spatial.right_jacobian_rate(omega, coefficients, rate, derivative)
    matrix = np.block([[blocks[0], np.zeros((3, 3))], [blocks[1], blocks[0]]])
    return matrix, applied, derivative


@pytest.mark.parametrize('angle', ANGLES)
def test_the_tangent_map_and_its_rate_match_the_series(angle):
    rng = np.random.default_rng(int(1e6 * angle) + 7)
    for _ in range(5):
        axis = rng.normal(size=3)
        omega = np.concatenate([angle * axis / np.linalg.norm(axis), rng.normal(size=3)])
        rate = rng.normal(size=6)
        matrix, applied, derivative = compiled_parts(omega, rate)
        expected = series_right_jacobian(omega)
        np.testing.assert_allclose(matrix, expected, rtol=0, atol=1e-14 * np.abs(expected).max())
        np.testing.assert_allclose(applied, expected @ rate, rtol=0,
                                   atol=1e-14 * np.abs(expected).max() * np.abs(rate).max())
        # the derivative along Omega' applied to Omega', two independent ways
        step = 1e-5
        finite = (series_right_jacobian(omega + step * rate)
                  - series_right_jacobian(omega - step * rate)) @ rate / (2.0 * step)
        scale = max(np.abs(finite).max(), 1e-3)
        np.testing.assert_allclose(derivative, finite, rtol=0, atol=1e-8 * scale)
        series = cosserat_rod.right_jacobian_rate(omega, rate, terms=60)
        np.testing.assert_allclose(derivative, series, rtol=0, atol=1e-12 * scale)


@pytest.mark.parametrize('angle', [0.05, 0.5, 2.0])
def test_the_rate_along_omega_itself_is_zero(angle):
    """J_r(Omega) Omega = Omega for every Omega; along Omega' = Omega its derivative gives
    (d/dt J_r) Omega + J_r Omega = Omega, so (d/dt J_r) Omega' = 0."""
    omega = np.array([angle, -0.2 * angle, 0.5 * angle, 0.4, -1.0, 0.3])
    _, applied, derivative = compiled_parts(omega, omega.copy())
    np.testing.assert_allclose(applied, omega, atol=1e-15)
    np.testing.assert_allclose(derivative, 0.0, atol=1e-14)
