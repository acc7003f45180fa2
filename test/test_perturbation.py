"""A chain with its parameters off the model's (`mechanics.perturbation.perturbed`).

Each factor is checked against what it must do to the model, from the model's own
definition: a mode's frequency scales with the square root of the stiffness (Euler-Bernoulli
clamped-free omega_k = (beta_k L)^2 sqrt(EI / (rho A L^4))); the payload's inertia enters
the mass matrix as m J^T J + I_zz [[1, 1], [1, 1]] (a point mass and a body turning with
the forearm, planar arm); friction (viscous and Coulomb, one factor) and armature are the
joint rows of D, of the Coulomb levels and of M; a rod's stiffness matrix is linear in its
section stiffness.
"""

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from flexible_manipulator.mechanics.links import chain_from_links
from flexible_manipulator.model_config import load_model
from flexible_manipulator.mechanics.perturbation import perturbed

MODELS = Path(__file__).resolve().parents[1] / 'config' / 'models'


def test_stiffness_scales_every_mode_frequency_by_its_square_root(flexible):
    """omega_k ~ sqrt(EI): stiffness x 0.8 gives sqrt(0.8) x every clamped-free frequency,
    modal stiffness x 0.8; names and coordinates unchanged."""
    soft = perturbed(flexible, stiffness=0.8)
    assert soft.coordinate_names == flexible.coordinate_names
    np.testing.assert_allclose(soft.mode_frequencies, math.sqrt(0.8) * flexible.mode_frequencies,
                               rtol=1e-12)
    n = flexible.n_joints
    np.testing.assert_allclose(soft.elastic_coefficients()[0][n:],
                               0.8 * flexible.elastic_coefficients()[0][n:], rtol=1e-12)


def test_damping_friction_and_armature_scale_their_rows(flexible):
    """Modal damping 2 zeta omega_k rho A L: x 2 with zeta x 2; joint friction x 1.5 and
    the joint diagonal of M grows by 0.5 x the armature (0.02 and 0.005 kg m^2)."""
    changed = perturbed(flexible, damping=2.0, friction=1.5, armature=1.5)
    n = flexible.n_joints
    d0, d1 = flexible.elastic_coefficients()[1], changed.elastic_coefficients()[1]
    np.testing.assert_allclose(d1[n:], 2.0 * d0[n:], rtol=1e-12)
    np.testing.assert_allclose(d1[:n], 1.5 * d0[:n], rtol=1e-12)
    q = np.zeros(flexible.nv)
    q[:n] = [0.4, -0.9]
    m0 = flexible.mass_matrix(flexible.create_data(), q).copy()
    m1 = changed.mass_matrix(changed.create_data(), q).copy()
    expected = m0.copy()
    expected[0, 0] += 0.5 * 0.02
    expected[1, 1] += 0.5 * 0.005
    np.testing.assert_allclose(m1, expected, rtol=1e-12, atol=1e-15)


def test_friction_scales_the_coulomb_level_with_the_viscous_friction(flexible):
    """The friction factor is the joints' friction as a whole: Coulomb levels (0.3 and
    0.1 N m here) x 1.5 with D, their v_s kept; the strains' rows stay 0."""
    links = [dataclasses.replace(link, joint=dataclasses.replace(link.joint, friction=level))
             for link, level in zip(flexible.links, (0.3, 0.1))]
    rough = chain_from_links('rough', links, flexible.gravity_base)
    changed = perturbed(rough, friction=1.5)
    n = rough.n_joints
    np.testing.assert_allclose(changed.friction[:n], [0.45, 0.15], rtol=1e-12)
    assert not changed.friction[n:].any()
    np.testing.assert_array_equal(changed.friction_velocity, rough.friction_velocity)


def test_payload_enters_the_mass_matrix_as_a_body_at_the_forearm_tip(flexible):
    """Payload (0.1 kg, I_zz 2e-5 kg m^2 at the tip of the 0.4 m forearm) x 3: the rigid
    twin's M grows by 2 (m J^T J + I_zz [[1, 1], [1, 1]]), J the planar Jacobian of the
    tip point, l1 = 0.5 m, l2 = 0.4 m."""
    q = np.array([0.3, 1.1])
    l1, l2, m, izz = 0.5, 0.4, 0.1, 2e-5
    s1, c1 = math.sin(q[0]), math.cos(q[0])
    s12, c12 = math.sin(q.sum()), math.cos(q.sum())
    jacobian = np.array([[-l1 * s1 - l2 * s12, -l2 * s12], [l1 * c1 + l2 * c12, l2 * c12]])
    added = 2.0 * (m * jacobian.T @ jacobian + izz * np.ones((2, 2)))
    twin, heavy = flexible.rigid_twin(), perturbed(flexible, payload=3.0).rigid_twin()
    m0 = twin.mass_matrix(twin.create_data(), q).copy()
    m1 = heavy.mass_matrix(heavy.create_data(), q).copy()
    np.testing.assert_allclose(m1 - m0, added, rtol=1e-10, atol=1e-14)


def test_a_rod_stiffness_matrix_is_linear_in_its_section_stiffness():
    """Soft Cosserat arm: stiffness x 1.1 gives 1.1 K of every rod; its relaxation time x
    0.5 gives D = 0.5 x 1.1 x the model's D (D = tau K)."""
    soft = load_model(str(MODELS / 'two_link_soft.yaml'))
    changed = perturbed(soft, stiffness=1.1, damping=0.5)
    assert changed.coordinate_names == soft.coordinate_names
    for before, after in zip(soft.links, changed.links):
        if before.rod is None:
            continue
        # Off-diagonal entries are round-off of a quadrature: compare to the largest.
        k, d = before.rod.stiffness_matrix, before.rod.damping_matrix
        np.testing.assert_allclose(after.rod.stiffness_matrix, 1.1 * k, rtol=1e-12,
                                   atol=1e-12 * np.max(np.abs(k)))
        np.testing.assert_allclose(after.rod.damping_matrix, 0.55 * d, rtol=1e-12,
                                   atol=1e-12 * np.max(np.abs(d)))
    n = soft.n_joints
    np.testing.assert_allclose(changed.elastic_coefficients()[0][n:],
                               1.1 * soft.elastic_coefficients()[0][n:], rtol=1e-12)


@pytest.mark.parametrize('value', [0.0, -1.0, math.nan, math.inf, 'soft', None])
def test_a_factor_that_is_not_a_positive_number_is_named(flexible, value):
    """Every factor must be a finite number > 0: the error names it."""
    with pytest.raises(ValueError, match='payload'):
        perturbed(flexible, payload=value)
