"""The tables of one floating-frame beam: assumed modes at its mass points and sections.

A uniform Euler-Bernoulli beam of length L along a link's x axis, clamped at the link
frame (``link_description.Beam``), with count = m_y + m_z clamped-free modes
(`beam_modes`), y-plane modes first. A section at abscissa x is displaced by

    u(x, q) = (-1/2 q^T G(x) q,  sum_{k in y} W_k(x) q_k,  sum_{k in z} W_k(x) q_k)

(G = 0 without geometric stiffening) and turned by Rot(e3, psi_z) Rot(e2, psi_y),
psi_z = sum_{y} W_k'(x) q_k, psi_y = -sum_{z} W_k'(x) q_k. Its mass is ``point_count``
Gauss points on the centre line; modal stiffness K_k = rho A L omega_k^2 [N m] and
damping D_k = 2 zeta omega_k rho A L [N m s]. The chain model's floating-frame links
(``links.beam``) read these tables.
"""

import numpy as np

from . import beam_modes


class ModalBeam:
    """Mode tables of a ``link_description.Beam`` of ``length`` [m] (module doc).

    Fields: ``count``; ``planes`` (count,) 1 for a y-plane mode, 2 for a z-plane mode;
    ``names`` ('y1', ..., 'z1', ...: with the link's name, the coordinates' names);
    ``x``, ``mass`` the Gauss points [m] and their masses [kg]; ``phi`` (points, count)
    W_k(x); ``g`` (points, count, count) G(x); ``frequencies`` clamped-free omega_k
    [rad/s]; ``stiffness``, ``damping`` (count,) K_k and D_k.
    """

    def __init__(self, beam, length, stiffening=True):
        """Tabulate the modes at the beam's Gauss points."""
        self.beam, self.length, self.stiffening = beam, float(length), bool(stiffening)
        self.count = sum(beam.modes)
        self.planes = np.array([1] * beam.modes[0] + [2] * beam.modes[1], dtype=np.int64)
        self.names = [f'{plane}{k + 1}' for plane, count in zip('yz', beam.modes)
                      for k in range(count)]
        self.x, weights = np.zeros(0), np.zeros(0)
        if self.count:
            self.x, weights = beam_modes.gauss_legendre(0.0, self.length, beam.point_count())
        self.mass = beam.linear_density * weights
        self.phi = self.values(self.x, 0)
        self.g = self.foreshortening(self.x)
        self.frequencies = np.zeros(self.count)
        if self.count:
            beta_l = np.concatenate([beam_modes.frequency_parameters(c)
                                     for c in beam.modes if c > 0])
            ei = np.array([beam.bending_stiffness[p - 1] for p in self.planes])
            rho_a = beam.linear_density
            self.frequencies = beta_l ** 2 * np.sqrt(ei / (rho_a * self.length ** 4))
        reference = beam.linear_density * self.length
        self.stiffness = reference * self.frequencies ** 2             # EI (bL)^4 / L^3
        self.damping = 2.0 * beam.damping_ratio * self.frequencies * reference

    def values(self, x, derivative):
        """W_k^(derivative) at abscissae x [m]: shape (len(x), count), y-plane modes first."""
        x = np.atleast_1d(np.asarray(x, dtype=float))
        columns = [beam_modes.mode_values(self.length, c, x, derivative)
                   for c in self.beam.modes if c > 0]
        return np.hstack(columns) if columns else np.zeros((x.size, 0))

    def foreshortening(self, x):
        """G(x) at abscissae x: (len(x), count, count), zero across planes or unstiffened."""
        x = np.atleast_1d(np.asarray(x, dtype=float))
        out = np.zeros((x.size, self.count, self.count))
        if not self.stiffening:
            return out
        offset = 0
        for c in self.beam.modes:
            if c > 0:
                out[:, offset:offset + c, offset:offset + c] = beam_modes.foreshortening(
                    self.length, c, x)
                offset += c
        return out

    def section(self, x):
        """(W(x), W'(x), G(x)) of the section at abscissa x [m]: (count,), (count,), 2-D."""
        return self.values(x, 0)[0], self.values(x, 1)[0], self.foreshortening(x)[0]

    def displacement(self, phi, g, q):
        """Return u (3) [m] and du/dq (3 x count) of a section of tables (phi, g) at modes q."""
        gq = g @ q
        u = np.zeros(3)
        du = np.zeros((3, self.count))
        du[0] = -gq
        for k, plane in enumerate(self.planes):
            du[plane, k] = phi[k]
        u[1:] = du[1:] @ q
        u[0] = -0.5 * q @ gq
        return u, du
