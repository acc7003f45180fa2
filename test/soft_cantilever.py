"""The soft cantilever released under gravity, shared by its tests (not a test module).

0.5 m long, round section r = 1 cm, rho = 1000 kg/m^3, E = 5 MPa, G = E/3, clamped at its
root along x, straight and at rest at t = 0, gravity along -z: it swings down by ~85 % of
its length in 0.35 s. `modal_tips` runs it as a strain-parameterized Cosserat link.
"""

import math

import numpy as np

from flexible_manipulator.mechanics.model.chain import Chain
from flexible_manipulator.mechanics.model.link_part import FIXED, LinkPart
from flexible_manipulator.mechanics.cosserat.rod import CosseratRod, Section
from flexible_manipulator.mechanics.cosserat.strain_basis import StrainBasis
from flexible_manipulator.mechanics.simulation import Simulation

LENGTH, RADIUS, DENSITY, YOUNG = 0.5, 0.01, 1000.0, 5e6
SHEAR_MODULUS = YOUNG / 3.0
GRAVITY = np.array([0.0, 0.0, -9.81])
DURATION, PERIOD = 0.5, 0.05


def circular_section(shear_factor=4.0 / 3.0):
    """The rod's `Section` from its geometry: EI = E pi r^4 / 4, GJ = G pi r^4 / 2, shear
    ``shear_factor`` G A, EA, rotary inertia rho (J, I, I)."""
    area, second = math.pi * RADIUS ** 2, math.pi * RADIUS ** 4 / 4.0
    shear = shear_factor * SHEAR_MODULUS * area
    return Section(DENSITY * area, [DENSITY * 2 * second, DENSITY * second, DENSITY * second],
                   [SHEAR_MODULUS * 2 * second, YOUNG * second, YOUNG * second, YOUNG * area,
                    shear, shear])


def modal_tips(orders, section, step=1e-4, method='rosenbrock2'):
    """Tip position every PERIOD [m]: a clamped link, ``method`` with ``step`` [s]."""
    link = LinkPart('rod', CosseratRod(StrainBasis(orders, LENGTH), section), joint=FIXED)
    chain = Chain([link], gravity=GRAVITY)
    simulation = Simulation(chain, step, method)
    tips = []
    for _ in range(round(DURATION / PERIOD)):
        simulation.advance(np.zeros(0), PERIOD)
        tips.append(chain.section_pose(simulation.data, simulation.q, 0, LENGTH)[1])
    return np.array(tips)
