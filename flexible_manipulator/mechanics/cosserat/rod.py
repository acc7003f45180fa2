"""One Cosserat link: section, quadrature nodes, and the Magnus steps between them.

Kinematics (Boyer & Primault §4.1, §8.5 G3). The section frames g(X) in SE(3) along the
arc length X [m] of a link solve g' = g hat(eta_1), eta_1 = eta_1^0 + B(X) q
(``strain_basis``). Between consecutive nodes X_k < X_k+1 (h = X_k+1 - X_k) the
fourth-order Magnus (Zanna) step with the two Gauss points Z_1 < Z_2 of the segment,

    g_k+1 = g_k exp(hat(Omega_k)),   Omega = h/2 (xi_1 + xi_2) + sqrt(3) h^2/12 [xi_1, xi_2],

xi_i = eta_1(Z_i), is exact for constant strain and locally O(h^5). Its time derivative
gives the node twists eta_0 (angular first, body components) recursively,

    eta_k+1 = Ad_{g_k,k+1}^-1 eta_k + S_k q',    S_k = J_r(Omega_k) Phi_k,
    Phi = dOmega/dq = h/2 (B_1 + B_2) + sqrt(3) h^2/12 (ad_{xi_1} B_2 - ad_{xi_2} B_1),

(J_r = dexp_{-Omega}, ``lie.se3_right_jacobian``), and the accelerations

    eta'_k+1 = Ad^-1 eta'_k + ad_{eta_k+1} S_k q' + S_k q'' + c_k,
    c_k = J_r(Omega) sqrt(3) h^2/6 [B_1 q', B_2 q'] + (d/dt J_r(Omega)) Omega',

the last term from the series J_r(Omega) = sum_n (-ad_Omega)^n / (n+1)! (per-segment
rotations stay below ~1 rad, where 20 terms reach round-off).

Dynamics. The nodes are X = 0, the Gauss-Legendre points of [0, L] and X = L; the inner
ones carry the section inertia w_i diag(rho J, rho A I_3) (Gauss weights w_i [m]), so the
kinetic energy is (1/2) sum_i w_i eta_i^T diag(rho J, rho A) eta_i, which is exact for the
discrete kinematics: the equations are those of a Lagrangian system (energy conserved).
The elastic energy (1/2) int (eta_1 - eta_1^0)^T H (eta_1 - eta_1^0) dX = (1/2) q^T K q,
K = int B^T H B dX, H = diag(GJ, EI_y, EI_z, EA, GA_y, GA_z), is integrated exactly;
Kelvin-Voigt damping adds D q' with D = damping_time K.
"""

from collections import namedtuple
import math

import numpy as np

from .strain_basis import StrainBasis

GAUSS_2 = (0.5 - math.sqrt(3.0) / 6.0, 0.5 + math.sqrt(3.0) / 6.0)
# section stiffness order, the strain twist's: (GJ, EI_y, EI_z, EA, GA_y, GA_z)
STIFFNESS_NAMES = ('torsion', 'bending_y', 'bending_z', 'extension', 'shear_y', 'shear_z')


class Section:
    """Cross-section of a uniform rod (SI units), the fields of a model file's ``rod``.

    ``linear_density`` rho A [kg/m]; ``rotary_inertia`` rho (I_p, I_y, I_z) [kg m] (the
    section's mass moments per unit length); ``stiffness`` (GJ, EI_y, EI_z) [N m^2] and
    (EA, GA_y, GA_z) [N] in ``STIFFNESS_NAMES`` order; ``damping_time`` Kelvin-Voigt
    relaxation time [s] (stress rate factor, 0: undamped). ``shape``: the section's
    outline, ``('circle', radius)`` or ``('rectangle', width, height)`` [m] (width along
    the section's y, height along z), or None: drawn only (the URDF's visuals, the
    browser view), the dynamics use the constants above.
    """

    def __init__(self, linear_density, rotary_inertia, stiffness, damping_time=0.0,
                 shape=None):
        """Check every field is finite and positive (damping: non-negative)."""
        self.shape = None if shape is None else tuple(shape)
        self.linear_density = _positive('linear_density', linear_density)
        self.rotary_inertia = np.array([_positive(f'rotary_inertia[{i}]', x)
                                        for i, x in enumerate(_triple(rotary_inertia,
                                                                      'rotary_inertia'))])
        stiffness = np.asarray(stiffness, dtype=float)
        if stiffness.shape != (6,):
            raise ValueError(f'rod stiffness: 6 values ({", ".join(STIFFNESS_NAMES)}) '
                             f'expected, got {stiffness.size}')
        for name, value in zip(STIFFNESS_NAMES, stiffness):
            _positive(f'stiffness {name}', value)
        self.stiffness = stiffness
        if not (math.isfinite(damping_time) and damping_time >= 0.0):
            raise ValueError(f'rod damping_time must be finite and >= 0 s, got {damping_time!r}')
        self.damping_time = float(damping_time)
        self.inertia = np.diag(np.concatenate([self.rotary_inertia,
                                               np.full(3, self.linear_density)]))


def _positive(name, value):
    value = float(value)
    if not (math.isfinite(value) and value > 0.0):
        raise ValueError(f'rod {name} must be finite and positive, got {value!r}')
    return value


def _triple(values, name):
    values = np.atleast_1d(np.asarray(values, dtype=float))
    if values.shape != (3,):
        raise ValueError(f'rod {name}: 3 values expected, got {values.size}')
    return values


class CosseratRod:
    """A uniform Cosserat link of length L on ``points`` Gauss nodes (module doc).

    ``basis``: its ``StrainBasis``; ``section``: its ``Section``; ``points``: number of
    Gauss-Legendre nodes carrying inertia (default 2 (p + 1) + 2 for the highest strain
    order p). Fields: ``nodes`` X [m] (0, the Gauss points, L), ``weights`` [m] (0 at the
    ends), ``stiffness_matrix`` K, ``damping_matrix`` D, ``size`` (strain coordinates).
    """

    def __init__(self, basis, section, points=None, rest_curvature=(0.0, 0.0, 0.0)):
        """Place the nodes and precompute B at each segment's two Magnus points and K."""
        if not isinstance(basis, StrainBasis):
            raise TypeError('basis must be a StrainBasis')
        curvature = np.asarray(rest_curvature, dtype=float)
        if curvature.shape != (3,) or not np.all(np.isfinite(curvature)):
            raise ValueError(f'rest_curvature: expected 3 finite numbers (torsion, bending_y, '
                             f'bending_z) [1/m], got {rest_curvature!r}')
        self.reference = np.concatenate([curvature, [1.0, 0.0, 0.0]])
        self.basis, self.section = basis, section
        self.length, self.size = basis.length, basis.size
        points = 2 * (basis.highest_order + 1) + 2 if points is None else int(points)
        if points < basis.highest_order + 1:
            raise ValueError(f'rod points: {points} Gauss points cannot integrate a strain '
                             f'of order {basis.highest_order}; give at least '
                             f'{basis.highest_order + 1}')
        s, w = np.polynomial.legendre.leggauss(points)
        half = 0.5 * self.length
        self.nodes = np.concatenate([[0.0], half * (s + 1.0), [self.length]])
        self.weights = np.concatenate([[0.0], half * w, [0.0]])
        self.steps = np.diff(self.nodes)                               # h_k [m]
        starts = self.nodes[:-1]
        self.B1 = basis.matrix(starts + GAUSS_2[0] * self.steps)      # (segments, 6, size)
        self.B2 = basis.matrix(starts + GAUSS_2[1] * self.steps)
        B = basis.matrix(self.nodes[1:-1])
        self.stiffness_matrix = np.einsum('k,kai,a,kaj->ij', self.weights[1:-1], B,
                                          section.stiffness, B)
        self.damping_matrix = section.damping_time * self.stiffness_matrix

    @property
    def segments(self):
        """Number of Magnus steps (nodes - 1)."""
        return self.steps.size

    def section_plan(self, X):
        """Constant part of a section pose for the arc lengths X [m] (each in [0, L]).

        Per section: the segment it lies in, and the partial Magnus step from that
        segment's start node to it (its length h and B at its two Gauss points).
        """
        X = np.atleast_1d(np.asarray(X, dtype=float))
        if np.any(X < 0.0) or np.any(X > self.length):
            raise ValueError(f'section abscissae {X.tolist()} m outside [0, {self.length}] m')
        segment = np.minimum(np.searchsorted(self.nodes, X, side='right') - 1,
                             self.segments - 1)
        h = X - self.nodes[segment]
        Z = self.nodes[segment][:, None] + np.array(GAUSS_2)[None, :] * h[:, None]
        return SectionPlan(segment, h, self.basis.matrix(Z[:, 0]), self.basis.matrix(Z[:, 1]))

    def as_rod(self, length):
        """Return the straight rod as a rigid body: (mass, first moment, inertia at the root).

        Mass rho A L [kg] at L/2 on the x axis (``link_description.Beam.as_rod``'s
        convention, for the robot description). ``length`` must be the rod's own.
        """
        mass = self.section.linear_density * length
        return (mass, np.array([0.5 * mass * length, 0.0, 0.0]),
                np.diag([0.0, mass * length ** 2 / 3, mass * length ** 2 / 3]))


SectionPlan = namedtuple('SectionPlan', 'segment h B1 B2')
SectionPlan.__doc__ = ('Sections of `CosseratRod.section_plan`: segment index, partial step '
                       'length h [m], B at its two Gauss points (N, 6, size).')
