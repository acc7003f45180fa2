"""The one statics solver (`mechanics.equilibrium.static_equilibrium`) on every link kind.

Expected values: the Euler-Bernoulli cantilever under a small tip force, delta = P L^3 /
(3 EI), for a Cosserat rod (curvature P (L - s) / EI is linear in s: two Legendre terms
hold it exactly) and, for a floating-frame beam of N clamped-free modes, the same
delta truncated to its modes, P L^3 / EI sum_k 4 / beta_k^4 (mode k normalized to
int W_k^2 = L has W_k(L) = +-2 and stiffness EI beta_k^4 / L^3; cos beta cosh beta = -1;
the full sum is 1/3); the geometric nonlinearity at P L^2 / EI = 1e-3 is ~1e-6 relative.
The residual promise is checked from the model's own forces at the returned q.
"""

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from flexible_manipulator.mechanics.link_description import Beam, Joint, Link, RigidBody
from flexible_manipulator.mechanics.links import chain_from_links
from flexible_manipulator.mechanics.model.chain import Chain
from flexible_manipulator.mechanics.model.link_part import LinkPart
from flexible_manipulator.mechanics.cosserat.rod import CosseratRod, Section
from flexible_manipulator.mechanics.cosserat.strain_basis import StrainBasis
from flexible_manipulator.mechanics.equilibrium import (
    generalized_load, Load, static_equilibrium, StaticsError)

EI, L, RHO_A, P = 2.0, 0.8, 0.3, 1e-3 * 2.0 / 0.8 ** 2      # P L^2 / EI = 1e-3


def clamped_free_roots(count):
    """beta_k, the roots of cos(beta) cosh(beta) + 1 = 0 (one in each ((k - 1) pi, k pi))."""
    return [brentq(lambda b: math.cos(b) * math.cosh(b) + 1.0, max(0.3, (k - 1) * math.pi),
                   k * math.pi, xtol=1e-15) for k in range(1, count + 1)]


def beam_chain(modes):
    """A floating-frame cantilever along x bending in x-y, its joint held, no gravity."""
    link = Link('beam', Joint('clamp'), L, RigidBody(0.0), Beam(RHO_A, (EI, EI), (modes, 0)))
    return chain_from_links('beam', [link])


def rod_chain():
    """A Cosserat cantilever along x, bending about z (in x-y), stiff in every other strain."""
    section = Section(RHO_A, [1e-9] * 3, [1.0, EI, EI, 1e6, 1e6, 1e6])
    rod = CosseratRod(StrainBasis({'bending_z': 2}, L), section)
    return Chain([LinkPart('beam', rod)], gravity=(0.0, 0.0, 0.0))


TIP_FORCE = [Load(0, L, [0.0, 0.0, 0.0, 0.0, -P, 0.0], False)]


@pytest.mark.parametrize('modes', [1, 3])
def test_a_modal_beam_deflects_as_its_modes_allow(modes):
    chain = beam_chain(modes)
    q = static_equilibrium(chain, np.zeros(chain.nq), loads=TIP_FORCE, gravity=False)
    tip = chain.section_pose(chain.create_data(), q, 0, L)[1]
    expected = P * L ** 3 / EI * sum(4.0 / b ** 4 for b in clamped_free_roots(modes))
    assert tip[1] == pytest.approx(-expected, rel=1e-5)
    assert q[0] == 0.0                                   # the joint is held


def test_a_cosserat_rod_deflects_as_the_euler_bernoulli_beam():
    chain = rod_chain()
    q = static_equilibrium(chain, np.zeros(chain.nq), loads=TIP_FORCE, gravity=False)
    tip = chain.section_pose(chain.create_data(), q, 0, L)[1]
    assert tip[1] == pytest.approx(-P * L ** 3 / (3.0 * EI), rel=1e-5)


@pytest.mark.parametrize('chain', [beam_chain(3), rod_chain()], ids=['beam', 'rod'])
@pytest.mark.parametrize('follower', [False, True])
def test_the_returned_rest_meets_the_stated_residual(chain, follower):
    """|K e + g_e - (J^T W)_e|_inf <= tolerance * the largest of the three, recomputed from
    the model (gravity here is off, so h(q, 0) = K q); a large load in increments."""
    loads = [Load(0, L, [0.2 * EI / L, 0.0, 0.3 * EI / L, 0.0, -2.0 * EI / L ** 2, 0.0],
                  follower)]
    tolerance = 1e-10
    q = static_equilibrium(chain, np.zeros(chain.nq), loads=loads, gravity=False,
                           increments=3, tolerance=tolerance)
    data = chain.create_data()
    elastic = (chain.elastic_coefficients()[0] * q)[1:]
    applied = generalized_load(chain, data, q, loads)[1:]
    scale = max(np.abs(elastic).max(), np.abs(applied).max())
    assert np.abs(elastic - applied).max() <= tolerance * scale
    assert np.abs(q[1:]).max() > 0.1                    # a large deflection


def test_it_raises_rather_than_return_short_of_the_residual():
    """Two Newton steps cannot roll a rod into a circle: StaticsError names the factor."""
    chain = rod_chain()
    loads = [Load(0, L, [0.0, 0.0, 1.5 * math.pi * EI / L, 0.0, 0.0, 0.0], True)]
    with pytest.raises(StaticsError, match='load factor 1'):
        static_equilibrium(chain, np.zeros(chain.nq), loads=loads, gravity=False,
                           iterations=2)
    q = static_equilibrium(chain, np.zeros(chain.nq), loads=loads, gravity=False,
                           increments=3)
    # the end moment M bends the rod to the uniform curvature M / EI: 3 pi / 2 of turn
    assert q[1] * L == pytest.approx(1.5 * math.pi, rel=1e-9)


def test_a_floating_base_is_refused():
    chain = chain_from_links('free', beam_chain(1).links, floating_base=RigidBody(1.0))
    with pytest.raises(ValueError, match='fixed base'):
        static_equilibrium(chain, chain.neutral_configuration())
