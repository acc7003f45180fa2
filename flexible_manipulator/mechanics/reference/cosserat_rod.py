"""A Cosserat rod's Magnus steps in NumPy: the reference of the compiled ones.

The equations are in ``cosserat.rod``'s module doc; the kernels (``links.rod.kernels.step``,
``chain_kernels.spatial.right_jacobian_rate``) compute the same steps on preallocated arrays, and
the tests check them against these. Nothing at run time calls this module.
"""

import math

import numpy as np

from .. import lie
from ..cosserat.rod import GAUSS_2

SERIES_TERMS = 20       # of J_r's rate: per-segment rotations below ~1 rad reach round-off


def magnus(rod, q, v=None):
    """Per segment: Omega (S, 6), Phi = dOmega/dq (S, 6, size), and Omega'' - Phi q''.

    ``v`` (strain rates) None: the last array is zero.
    """
    h = rod.steps
    c = math.sqrt(3.0) / 12.0 * h * h
    xi1 = rod.reference + rod.B1 @ q
    xi2 = rod.reference + rod.B2 @ q
    omega = magnus_poses(rod, q, h, rod.B1, rod.B2)
    phi = (0.5 * h[:, None, None] * (rod.B1 + rod.B2)
           + c[:, None, None] * (lie.se3_ad(xi1) @ rod.B2 - lie.se3_ad(xi2) @ rod.B1))
    drift = np.zeros_like(omega)
    if v is not None:
        drift = 2.0 * c[:, None] * lie.se3_bracket(rod.B1 @ v, rod.B2 @ v)
    return omega, phi, drift


def steps_at(rod, q, v=None):
    """Relative poses g_k,k+1 (S, 4, 4), S_k (S, 6, size) and c_k (S, 6) (module doc)."""
    omega, phi, drift = magnus(rod, q, v)
    poses = np.array([lie.se3_exp(o) for o in omega])
    right = np.array([lie.se3_right_jacobian(o) for o in omega])
    motion = right @ phi
    bias = np.zeros_like(omega)
    if v is not None:
        rate = phi @ v
        bias = np.einsum('kab,kb->ka', right, drift) + right_jacobian_rate(omega, rate)
    return poses, motion, bias


def partial_step(rod, q, start, h):
    """(pose, S) of one Magnus step of length h [m] from the arc length ``start``."""
    Z = start + np.array(GAUSS_2) * h
    B1, B2 = rod.basis.matrix(Z)
    xi1, xi2 = rod.reference + B1 @ q, rod.reference + B2 @ q
    c = math.sqrt(3.0) / 12.0 * h * h
    omega = 0.5 * h * (xi1 + xi2) + c * lie.se3_bracket(xi1, xi2)
    phi = 0.5 * h * (B1 + B2) + c * (lie.se3_ad(xi1) @ B2 - lie.se3_ad(xi2) @ B1)
    return lie.se3_exp(omega), lie.se3_right_jacobian(omega) @ phi


def section_poses(rod, q, plan):
    """Poses (N, 4, 4) in the root frame of the sections of a `section_plan`.

    The node poses g_k = exp(Omega_0) ... exp(Omega_k-1), then each section's partial
    step from its segment's node (the same fourth-order Magnus steps as `steps_at`;
    poses only, vectorized: no Jacobians).
    """
    omega = magnus_poses(rod, q, rod.steps, rod.B1, rod.B2)
    steps = lie.se3_exp_batch(omega)
    nodes = np.empty((rod.segments, 4, 4))
    nodes[0] = np.eye(4)
    for k in range(1, rod.segments):
        nodes[k] = nodes[k - 1] @ steps[k - 1]
    partial = lie.se3_exp_batch(magnus_poses(rod, q, plan.h, plan.B1, plan.B2))
    return nodes[plan.segment] @ partial


def magnus_poses(rod, q, h, B1, B2):
    """Omega (N, 6) of Magnus steps of lengths h (N) with B at their Gauss points."""
    c = math.sqrt(3.0) / 12.0 * h * h
    xi1 = rod.reference + B1 @ q
    xi2 = rod.reference + B2 @ q
    return 0.5 * h[:, None] * (xi1 + xi2) + c[:, None] * lie.se3_bracket(xi1, xi2)


def right_jacobian_rate(omega, rate, terms=SERIES_TERMS):
    """(d/dt J_r(Omega)) Omega' for arrays (..., 6) of Omega and Omega' = ``rate``.

    J_r(Omega) = sum_n c_n ad_Omega^n, c_n = (-1)^n / (n+1)!, so with y_m = ad_Omega^m Omega'
    the derivative along Omega' applied to Omega' is
    sum_n c_n sum_{j+m = n-1} ad_Omega^j ad_Omega' y_m = sum_j ad_Omega^j z_j,
    z_j = ad_Omega' sum_{m >= 1} c_{m+j+1} y_m (ad_Omega' y_0 = 0), summed by Horner's rule.
    """
    c = [(-1.0) ** n / math.factorial(n + 1) for n in range(terms + 2)]
    ad = lie.se3_ad(omega)
    ad_rate = lie.se3_ad(rate)
    y = [rate]
    for _ in range(terms):
        y.append(np.einsum('...ab,...b->...a', ad, y[-1]))
    out = np.zeros_like(omega)
    for j in range(terms - 1, -1, -1):
        partial = np.zeros_like(omega)
        for m in range(1, terms - j):
            partial += c[m + j + 1] * y[m]
        z = np.einsum('...ab,...b->...a', ad_rate, partial)
        out = np.einsum('...ab,...b->...a', ad, out) + z
    return out
