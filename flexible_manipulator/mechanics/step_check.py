"""Is a fixed step stable for a model's elastic modes? Checked when a `Simulation` starts.

Linearized about the initial configuration, the elastic part of M q'' + D q' + K q = 0
(K, D diagonal: ``model.elastic_coefficients()``) has the state matrix
A = [[0, I], [-M^-1 K, -M^-1 D]] with eigenvalues lambda (|lambda| is a mode's frequency
for light damping, ~ its decay rate D/M for an overdamped one: Kelvin-Voigt damping makes
the fastest modes of a soft rod overdamped and stiff). An explicit Runge-Kutta method of
order p = s <= 4 multiplies each mode per step by R(h lambda) = sum_{k <= p} (h lambda)^k/k!;
the step is stable iff |R(h lambda)| <= 1 for every lambda. Past the limit a state can
stay finite for a while yet be wrong, so a step that amplifies by more than
``REFUSE_GROWTH`` per step is refused and a weaker growth is warned about, both naming the
step, |lambda| of the mode and the largest stable step. ``rosenbrock2`` and
``rosenbrock3`` treat exactly this linear part implicitly (L-stable): no limit.

A joint's Coulomb friction is a damper of its peak slope F_c / v_s near rest
(``friction``): D holds it too, so a friction level too high for the velocity scale v_s
at an explicit method's step is refused as a stiff mode is.
"""

import warnings

import numpy as np

from .friction import peak_slopes
from .integrators import TABLEAUS

REFUSE_GROWTH = 1e-3       # amplification per step past which a step is refused
WARN_GROWTH = 1e-9         # past which it is warned about (slow growth, e.g. heun)


class StepStabilityWarning(UserWarning):
    """A fixed step that slowly amplifies an elastic mode."""


def elastic_eigenvalues(model, data, q, friction=True):
    """Eigenvalues [1/s] of the linearized elastic state matrix A at q (module doc).

    D: the viscous damping plus, with ``friction``, the joints' Coulomb friction slopes at
    rest.
    """
    stiffness, damping = model.elastic_coefficients()
    slopes = peak_slopes(model) if friction else None
    if slopes is not None:
        damping = damping + slopes
    mass = model.mass_matrix(data, q)
    nv = stiffness.size
    matrix = np.zeros((2 * nv, 2 * nv))
    matrix[:nv, nv:] = np.eye(nv)
    matrix[nv:, :nv] = -np.linalg.solve(mass, np.diag(stiffness))
    matrix[nv:, nv:] = -np.linalg.solve(mass, np.diag(damping))
    return np.linalg.eigvals(matrix)


def amplification(method, z):
    """|R(z)| of an explicit method of ``integrators.TABLEAUS`` (order p = stages <= 4)."""
    order = TABLEAUS[method][3]
    term, total = np.ones_like(z), np.ones_like(z)
    for k in range(1, order + 1):
        term = term * z / k
        total = total + term
    return np.abs(total)


def largest_stable_step(method, eigenvalues, upper):
    """Largest h <= ``upper`` [s] with every |R(h lambda)| <= 1 + WARN_GROWTH (0 if none)."""
    def stable(h):
        return amplification(method, h * eigenvalues).max() <= 1.0 + WARN_GROWTH
    low, high = 0.0, upper
    if stable(high):
        return high
    for _ in range(60):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if stable(middle) else (low, middle)
    return low


def check_step(model, data, step, method, q, refuse=True):
    """Refuse (ValueError) or warn about ``step`` [s] of explicit ``method`` (module doc).

    ``data``: the model's workspace (the simulation's own).
    Returns the warning's message (also issued as a `StepStabilityWarning`), or None when
    the step is stable. ``refuse=False`` warns past REFUSE_GROWTH too (to study a blow-up).
    Models without ``elastic_coefficients`` (servo systems) and implicit methods pass.
    """
    if method not in TABLEAUS or not hasattr(model, 'elastic_coefficients'):
        return None
    eigenvalues = elastic_eigenvalues(model, data, q)
    growth = amplification(method, step * eigenvalues)
    worst = int(np.argmax(growth))
    if growth[worst] <= 1.0 + WARN_GROWTH:
        return None
    fastest = abs(eigenvalues[worst])
    limit = largest_stable_step(method, eigenvalues, step)
    slopes = peak_slopes(model)
    friction = slopes is not None and slopes.any() and amplification(
        method, step * elastic_eigenvalues(model, data, q, False)).max() <= 1.0 + WARN_GROWTH
    what = ('the Coulomb friction of a joint near rest (its slope F_c / v_s as a damper)'
            if friction else 'an elastic mode')
    message = (f'integration step {step:g} s is past the stability limit of {method} for '
               f'{what} with |lambda| = {fastest:.4g} 1/s (h |lambda| = '
               f'{step * fastest:.3g}, amplification {growth[worst]:.6g} per step); '
               + (f'the largest stable step is {limit:.3g} s' if limit > 0.0 else
                  f'{method} amplifies this mode at any step')
               + (', or raise the joint\'s friction_velocity v_s' if friction else '')
               + ', or use rosenbrock3 or rosenbrock2 (the elastic and friction forces implicit)')
    if refuse and growth[worst] > 1.0 + REFUSE_GROWTH:
        raise ValueError(message)
    warnings.warn(message, StepStabilityWarning, stacklevel=3)
    return message
