"""A planar geometrically exact rod by linear finite elements: the high-resolution reference.

Boyer & Primault §8.5 G1 in the plane: the Reissner (Simo) beam, shearable and
extensible, discretized node by node instead of by a few strain modes. Nodes i = 0..N at
the arc lengths X_i = i h (h = L / N) carry their position r_i = (x_i, z_i) [m] in the
plane and the angle theta_i [rad] of their section from the x axis towards z. Element e
(nodes e, e + 1) takes one Gauss point at its middle (reduced integration: no shear
locking), with theta_m = (theta_e + theta_e+1) / 2 and

    Gamma = R(theta_m)^T (r_e+1 - r_e) / h - e_1,   kappa = (theta_e+1 - theta_e) / h,

(Gamma_1 extension, Gamma_2 shear, kappa bending [1/m]), internal energy
U = sum_e h/2 (EA Gamma_1^2 + GA Gamma_2^2 + EI kappa^2), stresses N = C Gamma (C =
diag(EA, GA)) and M = EI kappa (no damping: a reference). The nodal forces are -dU/dr_i,
-dU/dtheta_i written out:

    f_e = R_m N on node e, -R_m N on node e+1,
    tau_e = h/2 (J (Gamma + e_1)) . N + M,  tau_e+1 = h/2 (J (Gamma + e_1)) . N - M,

J the rotation by +90 degrees. Masses are lumped: rho A h and rho I h per node (half at the
ends), gravity g on every node mass. The root node is clamped (held in place and angle).
Velocity Verlet (kick, drift, kick: symplectic, second order) advances the nodes; it is
stable below about 2 / omega_max (the fastest element mode, sqrt(GA / rho I) or
2 sqrt(EA / rho A) / h).

The model converges at second order in h. It shares nothing with the strain-parameterized
link (`rod.CosseratRod`: Legendre strains, Magnus steps, Gauss nodes) but the continuum it
discretizes, so the tests use it as an independent reference; it is a library class, not a
plant model.
"""

import numpy as np


class PlanarRod:
    """A clamped planar Reissner rod of ``elements`` linear elements (module doc).

    ``linear_density`` rho A [kg/m], ``rotary_inertia`` rho I [kg m] about the plane's
    normal, ``stiffness`` (EA, GA, EI) [N, N, N m^2], ``gravity`` (g_x, g_z) [m/s^2]. The
    rod starts straight along x from the origin, at rest:
    ``position`` (N + 1, 2), ``angle`` (N + 1), ``velocity``, ``angular_velocity``.
    """

    def __init__(self, length, elements, linear_density, rotary_inertia, stiffness,
                 gravity=(0.0, 0.0)):
        """Check the constants and lay the rod straight along x."""
        if not (length > 0.0 and linear_density > 0.0 and rotary_inertia > 0.0):
            raise ValueError('length, linear_density and rotary_inertia must be positive')
        if int(elements) < 1:
            raise ValueError(f'elements: at least 1, got {elements!r}')
        stiffness = np.asarray(stiffness, dtype=float)
        if stiffness.shape != (3,) or not np.all(stiffness > 0.0):
            raise ValueError(f'stiffness: (EA, GA, EI) all positive, got {stiffness}')
        self.length, self.elements = float(length), int(elements)
        self.h = self.length / self.elements
        self.axial, self.shear, self.bending = stiffness
        self.gravity = np.asarray(gravity, dtype=float)
        share = np.full(self.elements + 1, self.h)
        share[[0, -1]] *= 0.5
        self.mass = linear_density * share                  # node masses [kg]
        self.inertia = rotary_inertia * share               # node rotary inertias [kg m^2]
        nodes = self.elements + 1
        self.position = np.zeros((nodes, 2))
        self.position[:, 0] = np.linspace(0.0, self.length, nodes)
        self.angle = np.zeros(nodes)
        self.velocity = np.zeros((nodes, 2))
        self.angular_velocity = np.zeros(nodes)
        self.time = 0.0

    def strains(self, position, angle):
        """Return (Gamma (N, 2), kappa (N), R_m (N, 2, 2)) of every element (module doc)."""
        mid = 0.5 * (angle[:-1] + angle[1:])
        c, s = np.cos(mid), np.sin(mid)
        R = np.empty((mid.size, 2, 2))
        R[:, 0, 0], R[:, 0, 1], R[:, 1, 0], R[:, 1, 1] = c, -s, s, c
        chord = (position[1:] - position[:-1]) / self.h
        gamma = np.einsum('eji,ej->ei', R, chord)
        gamma[:, 0] -= 1.0
        return gamma, (angle[1:] - angle[:-1]) / self.h, R

    def forces(self, position, angle):
        """Return the force [N] and torque [N m] on each node, (N + 1, 2) and (N + 1)."""
        gamma, kappa, R = self.strains(position, angle)
        stretch = gamma + np.array([1.0, 0.0])            # R_m^T r' (the chord in the section)
        normal = gamma * np.array([self.axial, self.shear])
        moment = self.bending * kappa
        pull = np.einsum('eij,ej->ei', R, normal)           # R_m N
        force = np.zeros_like(position)
        force[:-1] += pull
        force[1:] -= pull
        # J (Gamma + e_1) = (-stretch_2, stretch_1)
        lever = 0.5 * self.h * (stretch[:, 0] * normal[:, 1] - stretch[:, 1] * normal[:, 0])
        torque = np.zeros_like(angle)
        torque[:-1] += lever + moment
        torque[1:] += lever - moment
        force += self.mass[:, None] * self.gravity
        return force, torque

    def static_equilibrium(self, tip_force=(0.0, 0.0), tip_torque=0.0, increments=4,
                           iterations=30, tolerance=1e-12):
        """Put the rod at rest in equilibrium under gravity and a dead load at its tip.

        ``tip_force`` (F_x, F_z) [N], ``tip_torque`` [N m]. Newton's method on the free
        nodes' forces and torques, the Jacobian by central differences, the load applied in
        ``increments`` steps (the large-deflection branch from the straight rod); converged
        when a step changes no coordinate by more than ``tolerance`` (x L for positions).
        Raises RuntimeError naming the load fraction if it does not converge.
        """
        n = self.elements
        load = np.zeros(3 * n)
        load[2 * n - 2:2 * n] = tip_force
        load[-1] = tip_torque

        def residual(x, fraction):
            position, angle = self.position.copy(), self.angle.copy()
            position[1:], angle[1:] = x[:2 * n].reshape(n, 2), x[2 * n:]
            force, torque = self.forces(position, angle)
            return np.concatenate([force[1:].ravel(), torque[1:]]) + fraction * load

        x = np.concatenate([self.position[1:].ravel(), self.angle[1:]])
        jacobian = np.zeros((3 * n, 3 * n))
        for fraction in np.arange(1, increments + 1) / increments:
            for _ in range(iterations):
                r = residual(x, fraction)
                for i in range(3 * n):
                    step = 1e-7 * max(1.0, abs(x[i]))
                    x[i] += step
                    plus = residual(x, fraction)
                    x[i] -= 2.0 * step
                    jacobian[:, i] = (plus - residual(x, fraction)) / (2.0 * step)
                    x[i] += step
                change = np.linalg.solve(jacobian, -r)
                x += change
                if np.max(np.abs(change)) <= tolerance * max(1.0, self.length):
                    break
            else:
                raise RuntimeError(f'PlanarRod.static_equilibrium: no convergence at load '
                                   f'fraction {fraction:.2f} (last change '
                                   f'{np.max(np.abs(change)):.3g})')
        self.position[1:], self.angle[1:] = x[:2 * n].reshape(n, 2), x[2 * n:]
        self.velocity[:] = 0.0
        self.angular_velocity[:] = 0.0

    def energy(self):
        """Kinetic + elastic + gravity energy [J] of the current state."""
        gamma, kappa, _ = self.strains(self.position, self.angle)
        elastic = 0.5 * self.h * np.sum(self.axial * gamma[:, 0] ** 2 + self.shear
                                        * gamma[:, 1] ** 2 + self.bending * kappa ** 2)
        kinetic = 0.5 * (self.mass @ np.sum(self.velocity ** 2, axis=1)
                         + self.inertia @ self.angular_velocity ** 2)
        return kinetic + elastic - self.mass @ (self.position @ self.gravity)

    def advance(self, duration, step):
        """Advance by ``duration`` [s] in velocity Verlet steps of at most ``step`` [s]."""
        count = max(1, int(np.ceil(duration / step - 1e-9)))
        dt = duration / count
        force, torque = self.forces(self.position, self.angle)
        for _ in range(count):
            self._kick(force, torque, 0.5 * dt)
            self.position += dt * self.velocity
            self.angle += dt * self.angular_velocity
            force, torque = self.forces(self.position, self.angle)
            self._kick(force, torque, 0.5 * dt)
        self.time += duration

    def _kick(self, force, torque, dt):
        """Velocities += dt M^-1 (forces), the clamped root held at rest."""
        self.velocity += dt * force / self.mass[:, None]
        self.angular_velocity += dt * torque / self.inertia
        self.velocity[0] = 0.0
        self.angular_velocity[0] = 0.0
