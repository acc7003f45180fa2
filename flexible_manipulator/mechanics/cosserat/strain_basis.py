"""Strain basis of a Cosserat link: eta_1(X) = eta_1^0 + B(X) q (Boyer & Primault §8.5 G3).

The strain twist eta_1 = (K, Gamma) = g^-1 dg/dX of the section frames along the link's
arc length X in [0, L] [m] is ordered like every twist here, angular first:
K = (torsion, bending about y, bending about z) [rad/m], Gamma = (1 + extension, shear y,
shear z) [-]. The unstrained straight reference is eta_1^0 = (0, 0, 0, 1, 0, 0). Each
active strain carries Legendre polynomials P_0 ... P_p of s = 2 X / L - 1 (order p), so a
strain of order 0 is constant along the link (the exact roll-up under an end moment) and
the basis is orthogonal on [0, L]; strains that are not active keep their reference value
(e.g. inextensible, unshearable slender links: bending only).
"""

import numpy as np

# strain name -> index in the strain twist (K1, K2, K3, Gamma1, Gamma2, Gamma3)
STRAINS = {'torsion': 0, 'bending_y': 1, 'bending_z': 2,
           'extension': 3, 'shear_y': 4, 'shear_z': 5}
MAX_ORDER = 20


class StrainBasis:
    """Active strains of a link and their Legendre polynomial orders (module doc).

    ``orders``: mapping strain name (``STRAINS``) -> polynomial order 0..MAX_ORDER;
    ``length``: L [m]. ``names`` are the coordinate names, e.g. ``bending_z_0``, in the
    order of q: strain by strain in ``STRAINS`` order, polynomial order ascending.
    """

    def __init__(self, orders, length):
        """Check the strains and orders, name the coordinates; ValueError names the field."""
        if not orders:
            raise ValueError('strain basis: no active strain (give at least one of '
                             f'{", ".join(STRAINS)} with a polynomial order)')
        unknown = [name for name in orders if name not in STRAINS]
        if unknown:
            raise ValueError(f'strain basis: unknown strain {unknown[0]!r} (known: '
                             f'{", ".join(STRAINS)})')
        if not length > 0.0:
            raise ValueError(f'strain basis: length must be positive, got {length!r} m')
        self.length = float(length)
        self.strains, self.orders, self.names = [], [], []
        for name, index in STRAINS.items():
            if name not in orders:
                continue
            order = orders[name]
            if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or \
                    not 0 <= order <= MAX_ORDER:
                raise ValueError(f'strain basis: {name} order must be an integer in '
                                 f'0..{MAX_ORDER}, got {order!r}')
            self.strains.append(index)
            self.orders.append(int(order))
            self.names.extend(f'{name}_{k}' for k in range(int(order) + 1))
        self.size = len(self.names)
        self.highest_order = max(self.orders)

    def matrix(self, X):
        """B(X): array (len(X), 6, size) of the basis at arc lengths X [m]."""
        X = np.atleast_1d(np.asarray(X, dtype=float))
        s = 2.0 * X / self.length - 1.0
        legendre = np.polynomial.legendre.legvander(s, self.highest_order)   # (points, p+1)
        B = np.zeros((X.size, 6, self.size))
        column = 0
        for index, order in zip(self.strains, self.orders):
            B[:, index, column:column + order + 1] = legendre[:, :order + 1]
            column += order + 1
        return B
