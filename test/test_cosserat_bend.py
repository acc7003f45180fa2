"""The 45-degree bend (Bathe & Bolourchi 1979): a pre-curved Cosserat link in 3D.

A cantilever bent in the x-y plane as a 45-degree arc of radius R = 100 (its root at the
origin, tangent along +y, turning towards +x, tip at (29.29, 70.71, 0)), unit square
section (A = 1, I = 1/12, J = 0.141), E = 1e7, G = E / 2, loaded at its tip by a dead force
P along z, out of its plane: a large three-dimensional deflection with bending and torsion
coupled by the curvature. References: (1) the Reissner rod's statics solved here by
shooting (world-frame balance n' = 0, m' + r' x n = 0, the tip free of moment; the same
continuum, none of the link's code), which the link must meet to 1e-5 of R; (2) the
published tip positions of Simo & Vu-Quoc (1986, eight curved elements), within 0.5 % of
R: the published solutions of this problem spread by about that much (Bathe & Bolourchi's
own at P = 600, (15.9, 47.2, 53.4); Crisfield's (15.61, 47.04, 53.50)).
"""

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import fsolve

from flexible_manipulator.mechanics.model.chain import Chain
from flexible_manipulator.mechanics.model.link_part import FIXED, LinkPart
from flexible_manipulator.mechanics.cosserat.rod import CosseratRod, Section
from flexible_manipulator.mechanics.equilibrium import Load, static_equilibrium
from flexible_manipulator.mechanics.cosserat.strain_basis import StrainBasis
from flexible_manipulator.mechanics.reference import cosserat_chain as reference_chain

RADIUS, YOUNG, SHEAR_MODULUS = 100.0, 1e7, 5e6
LENGTH = RADIUS * math.pi / 4.0
AREA, SECOND, TORSION = 1.0, 1.0 / 12.0, 0.141
# C_K = (GJ, EI, EI), C_Gamma = (EA, GA, GA) of the unit square (shear factor 1: the
# published solutions use shearable beams; at this slenderness shear moves the tip ~1e-5 R)
STIFFNESS = np.array([SHEAR_MODULUS * TORSION, YOUNG * SECOND, YOUNG * SECOND,
                      YOUNG * AREA, SHEAR_MODULUS * AREA, SHEAR_MODULUS * AREA])
ROOT = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])   # E1 = y, E2 = -x
REST = np.array([0.0, 0.0, -1.0 / RADIUS])      # turning from +y towards +x: about -E3
# Simo & Vu-Quoc (1986), Table: tip (x, y, z) under P = 300, 450, 600.
PUBLISHED = {300.0: (22.33, 58.84, 40.08), 450.0: (18.62, 52.32, 48.39),
             600.0: (15.79, 47.23, 53.37)}


def shooting_tip(load):
    """Tip position of the Reissner rod by shooting on the root moment m(0) (module doc).

    State (r, R, m) along the arc length s, n = P e_z throughout; K = K0 + C_K^-1 R^T m,
    Gamma = e_1 + C_Gamma^-1 R^T n; r' = R Gamma, R' = R hat(K), m' = -r' x n.
    """
    force = np.array([0.0, 0.0, load])

    def rhs(_, y):
        R, m = y[3:12].reshape(3, 3), y[12:]
        K = REST + (R.T @ m) / STIFFNESS[:3]
        gamma = np.array([1.0, 0.0, 0.0]) + (R.T @ force) / STIFFNESS[3:]
        dr = R @ gamma
        hat = np.array([[0.0, -K[2], K[1]], [K[2], 0.0, -K[0]], [-K[1], K[0], 0.0]])
        return np.concatenate([dr, (R @ hat).ravel(), -np.cross(dr, force)])

    def end(m0):
        y0 = np.concatenate([np.zeros(3), ROOT.ravel(), m0])
        return solve_ivp(rhs, (0.0, LENGTH), y0, rtol=1e-11, atol=1e-9).y[:, -1]

    # the root moment of a straight cantilever of the same reach, as the first guess
    guess = np.cross(np.array([29.29, 70.71, 0.0]), force)
    m0, _, found, message = fsolve(lambda m: end(m)[12:] / (load * LENGTH), guess,
                                   xtol=1e-13, full_output=True)
    assert found == 1, message
    return end(m0)[:3]


def bend(orders):
    """The arc as one clamped Cosserat link, rest curvature -1/R about E3."""
    section = Section(AREA, [2 * SECOND, SECOND, SECOND], STIFFNESS)
    rod = CosseratRod(StrainBasis(orders, LENGTH), section, rest_curvature=REST)
    offset = np.eye(4)
    offset[:3, :3] = ROOT
    return Chain([LinkPart('arc', rod, joint=FIXED, offset=offset)],
                 gravity=(0.0, 0.0, 0.0))


def tip_under(chain, load):
    """Our tip position under the dead tip force P e_z (statics in load increments)."""
    wrench = [0.0, 0.0, 0.0, 0.0, 0.0, load]
    q = static_equilibrium(chain, np.zeros(chain.nq), loads=[Load(0, LENGTH, wrench, False)],
                           gravity=False, increments=6)
    return chain.section_pose(chain.create_data(), q, 0, LENGTH)[1]


ORDERS = {'torsion': 4, 'bending_y': 4, 'bending_z': 4, 'extension': 1, 'shear_y': 1,
          'shear_z': 1}


def test_unloaded_arc_is_the_circle():
    """At q = 0 the link is the 45-degree arc: the tip and a middle section on the circle
    of radius R about (R, 0, 0), the tip tangent turned by 45 degrees."""
    chain = bend(ORDERS)
    for X in (LENGTH / 3.0, LENGTH):
        pose = reference_chain.section_pose(chain, np.zeros(chain.nq), 0, X)
        phi = X / RADIUS
        np.testing.assert_allclose(pose[:3, 3], [RADIUS * (1 - math.cos(phi)),
                                                 RADIUS * math.sin(phi), 0.0], atol=1e-9)
    tangent = reference_chain.section_pose(chain, np.zeros(chain.nq), 0, LENGTH)[:3, 0]
    np.testing.assert_allclose(tangent, [math.sin(math.pi / 4), math.cos(math.pi / 4), 0.0],
                               atol=1e-12)


@pytest.mark.parametrize('load', sorted(PUBLISHED))
def test_45_degree_bend_under_a_tip_force(load):
    """P = 300, 450, 600: our tip within 1e-5 R of the shooting solution, and within
    0.5 % of R of the published tip on every coordinate (module doc)."""
    reference = shooting_tip(load)
    ours = tip_under(bend(ORDERS), load)
    np.testing.assert_allclose(ours, reference, atol=1e-5 * RADIUS)
    np.testing.assert_allclose(ours, PUBLISHED[load], atol=0.005 * RADIUS)
