"""The planar finite-element Reissner rod (`reference.discrete_rod`) and the strain-modal link.

The discrete rod is checked first on its own against closed forms: its forces are the
gradient of its energy (central differences), its statics converge at second order in
the element length to the inextensible elastica (solved by shooting in test_cosserat), and
velocity Verlet keeps its energy. It then serves as the independent high-resolution
reference of the soft cantilever (`soft_cantilever`, the rod of test_cosserat_pyelastica
with its section from its geometry; same continuum, no shared code with
`rod.CosseratRod`): three element counts give the observed order and a Richardson
extrapolation.
"""

import math

import numpy as np
import pytest

from flexible_manipulator.mechanics.reference.discrete_rod import PlanarRod
import soft_cantilever as falling
from test_cosserat import elastica

EI, L, RHO_A = 2.0, 1.0, 0.1
STIFF = 1e6          # EA, GA [N]: nearly inextensible and unshearable, as the elastica


def test_forces_are_the_gradient_of_the_energy():
    """At a random strained state: f = -dU/dr, tau = -dU/dtheta by central differences."""
    rod = PlanarRod(1.0, 5, 0.1, 1e-3, (10.0, 5.0, 2.0), gravity=(0.3, -9.81))
    rng = np.random.default_rng(0)
    rod.position += rng.normal(0.0, 0.05, rod.position.shape)
    rod.angle += rng.normal(0.0, 0.3, rod.angle.shape)
    force, torque = rod.forces(rod.position, rod.angle)
    h = 1e-6
    for values, expected in ((rod.position, force), (rod.angle, torque)):
        flat, gradient = values.reshape(-1), np.zeros(values.size)
        for i in range(values.size):
            flat[i] += h
            up = rod.energy()
            flat[i] -= 2 * h
            gradient[i] = (up - rod.energy()) / (2 * h)
            flat[i] += h
        np.testing.assert_allclose(-gradient, expected.reshape(-1), atol=1e-8)


@pytest.mark.parametrize('alpha', [0.1, 1.0, 5.0])
def test_statics_converge_to_the_elastica_at_second_order(alpha):
    """Dead tip load P L^2 / EI = alpha: tip position and rotation against the elastica;
    halving the elements divides the error by ~4 (ratio 3.4..4.6), and 40 elements are
    within 2e-4 L (the shear and extension compliances, P / GA ~ 1e-6, are far below)."""
    theta, x, y = elastica(alpha)
    errors = []
    for elements in (20, 40):
        rod = PlanarRod(L, elements, RHO_A, 1e-6, (STIFF, STIFF, EI))
        rod.static_equilibrium((0.0, -alpha * EI / L ** 2))
        errors.append(max(abs(rod.position[-1, 0] - x), abs(rod.position[-1, 1] - y),
                          abs(rod.angle[-1] - theta)))
    assert errors[1] < 2e-4 * L
    assert 3.4 < errors[0] / errors[1] < 4.6


def test_velocity_verlet_keeps_the_energy():
    """The soft rod falling under gravity for 0.3 s, no damping: the energy (kinetic +
    elastic + gravity) stays within 1e-4 of the potential energy released (symplectic,
    O(dt^2) oscillation), while the tip falls by more than 0.3 m."""
    section = falling.circular_section()
    stiffness = (section.stiffness[3], section.stiffness[5], section.stiffness[1])
    rod = PlanarRod(falling.LENGTH, 20, section.linear_density, section.rotary_inertia[1],
                    stiffness, gravity=(0.0, -9.81))
    start, released = rod.energy(), 0.0
    for _ in range(30):
        rod.advance(0.01, 1e-4)
        released = max(released, rod.mass @ (rod.position @ rod.gravity))
        assert abs(rod.energy() - start) < 1e-4 * released
    assert rod.position[-1, 1] < -0.3


def discrete_tips(elements):
    """Tip (x, z) every PERIOD of the soft cantilever: `PlanarRod`, Verlet at 2 ms / N."""
    section = falling.circular_section()
    rod = PlanarRod(falling.LENGTH, elements, section.linear_density,
                    section.rotary_inertia[1],
                    (section.stiffness[3], section.stiffness[5], section.stiffness[1]),
                    gravity=(0.0, falling.GRAVITY[2]))
    tips = []
    for _ in range(round(falling.DURATION / falling.PERIOD)):
        rod.advance(falling.PERIOD, 2e-3 / elements)
        tips.append(rod.position[-1].copy())
    return np.array(tips)


def test_soft_cantilever_falls_like_the_fine_discrete_rod():
    """The cantilever of test_cosserat_pyelastica (0.5 m, falling ~0.43 m in 0.5 s): the
    discrete rod with 25, 50, 100 elements converges at order ~2 (1.7..2.3); extrapolated,
    it is the reference (uncertainty ~ the last gap / 3). The strain-modal link (bending 8,
    extension and shear 3) is within 2e-4 m of it at every 0.05 s, and 10/4/4 is closer
    still: the same continuum, so no model-form gap (PyElastica's was 0.76 mm)."""
    runs = [discrete_tips(n) for n in (25, 50, 100)]
    gaps = [np.linalg.norm(runs[i] - runs[i + 1], axis=1).max() for i in range(2)]
    order = math.log2(gaps[0] / gaps[1])
    assert 1.7 < order < 2.3
    reference = runs[2] + (runs[2] - runs[1]) / (2.0 ** order - 1.0)
    assert reference[:, 1].min() < -0.4
    section = falling.circular_section()
    ours = falling.modal_tips({'bending_y': 8, 'extension': 3, 'shear_z': 3}, section)[:, [0, 2]]
    error = np.linalg.norm(ours - reference, axis=1).max()
    finer = falling.modal_tips({'bending_y': 10, 'extension': 4, 'shear_z': 4}, section)[:, [0, 2]]
    closer = np.linalg.norm(finer - reference, axis=1).max()
    assert error < 2e-4 and closer < error
    assert gaps[1] / 3 < 1e-4              # the reference is good to well below the bound
