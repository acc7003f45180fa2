"""The Chaplygin sleigh whose blade constraint is a Beghin servoconstraint (the servo-sleigh).

Kozlov, "The dynamics of systems with servoconstraints. I" (RCD 20(3), 2015), sections 6
and 7; the equations, the realizations and the outputs are those of `servo`.
"""

import math

import numpy as np

from . import servo_kernels as kernels
from .servo import (SE2_STRUCTURE, ServoSystem, finite_array,
                    finite_number)

STANDARD_GRAVITY = 9.80665          # m/s^2, for the inclined plane


class ServoSleigh(ServoSystem):
    """Chaplygin sleigh whose blade constraint v_lat = 0 is a servoconstraint (se(2)).

    q = (x, y, phi) of the blade point O in the plane [m, m, rad] (phi from the plane's
    horizontal x axis to the running axis u); v = (omega, u, v_lat) body twist at O
    [rad/s, m/s, m/s]. The constraint covector is a = (0, 0, 1); the control (a_s, b_s,
    c_s) gives b = (c_s, a_s, b_s): a force lambda a_s along u, lambda b_s along the blade
    normal, and a torque lambda c_s [N m] about O. The centre of mass lies at distance
    ``offset`` eps on the u axis; on a plane inclined by ``slope`` the gravity load
    p = m g sin(slope) pulls along the plane's -y axis.

    Attributes: ``mass``, ``inertia`` (about O), ``control``, ``offset``, ``slope``,
    ``load`` p [N], ``classical`` (a_s = c_s = 0) and, for offset 0, the paper's
    ``alpha`` = a_s/b_s and ``beta`` = m c_s/(I b_s) [1/m] of (6.3) (None otherwise).
    """

    kind = 'sleigh'
    frame = 'sleigh'
    coordinate_names = ('x', 'y', 'phi')
    velocity_names = ('omega', 'u', 'v_lat')
    _speed_units = '(rad/s, m/s)'

    def __init__(self, name, mass, inertia, control, offset=0.0, slope=0.0,
                 realization='servo', stabilization=0.0, omega_max=1e3):
        """Build the model; ValueError (RealizabilityError) naming the field at fault.

        :param mass: m [kg] > 0.
        :param inertia: moment of inertia about the vertical through O [kg m^2] (the paper's
            I; with an offset it is I_C + m eps^2 and must exceed m eps^2).
        :param control: (a_s, b_s, c_s) [-, -, m]; realizable iff
            J b_s - m eps c_s != 0 (b_s != 0 when eps = 0).
        :param offset: eps, centre of mass on the u axis [m].
        :param slope: inclination of the plane [rad], |slope| < pi/2.
        """
        self.mass = finite_number(mass, 'mass', 0.0, strict=True)
        self.inertia = finite_number(inertia, 'inertia', 0.0, strict=True)
        self.control = finite_array(control, 'control', (3,))
        self.offset = finite_number(offset, 'offset')
        self.slope = finite_number(slope, 'slope')
        if not abs(self.slope) < 0.5 * math.pi:
            raise ValueError(f'slope: must be in (-pi/2, pi/2) rad, got {self.slope:g}')
        m, eps = self.mass, self.offset
        if not self.inertia > m * eps * eps:     # eps ** 2 raises OverflowError past 1e154
            raise ValueError(f'inertia: the moment of inertia about O must exceed m eps^2 = '
                             f'{m * eps * eps:.6g} (the centre of mass offset), got '
                             f'{self.inertia:.6g}')
        self.load = m * STANDARD_GRAVITY * math.sin(self.slope)
        inertia_matrix = np.array([[self.inertia, 0.0, m * eps], [0.0, m, 0.0],
                                   [m * eps, 0.0, m]])
        a_s, b_s, c_s = self.control
        self.nq = 3
        self._setup(name, kernels.KIND_SLEIGH, SE2_STRUCTURE, inertia_matrix, (0.0, 0.0, 1.0),
                    (c_s, a_s, b_s), realization, stabilization, omega_max, 'a', 'control',
                    load=self.load, offset=eps)
        self.classical = bool(a_s == 0.0 and c_s == 0.0)
        self.alpha = self.beta = None
        if eps == 0.0:
            self.alpha = a_s / b_s
            self.beta = m * c_s / (self.inertia * b_s)
            if self.slope == 0.0 and not self.classical:
                alpha, beta = self.alpha, self.beta
                self._integrals.append(('sleigh_integral',
                                        lambda q, v, data: float(beta * v[1] - alpha * v[0])))
        self._finish()

    def neutral_configuration(self):
        """Return the blade point at the origin, heading along the plane's x axis."""
        return np.zeros(3)

    def potential_energy(self, q):
        """V = p Y_C [J], Y_C = y + eps sin(phi) the centre of mass up the slope."""
        return self.load * float(q[1] + self.offset * math.sin(q[2]))

    def pose(self, q):
        """Sleigh frame (at O, z normal to the plane) in the world.

        The plane is tilted by ``slope`` about the world x axis (its y axis points up the
        slope); the plane's origin is the world origin.
        """
        x, y, phi = (float(c) for c in q)
        cs, ss = math.cos(self.slope), math.sin(self.slope)
        tilt = np.array([[1.0, 0.0, 0.0], [0.0, cs, -ss], [0.0, ss, cs]])
        c, s = math.cos(phi), math.sin(phi)
        heading = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        return tilt @ heading, tilt @ np.array([x, y, 0.0])

    def body_twist(self, q, v):
        """((0, 0, omega), (u, v_lat, 0)) in the sleigh frame."""
        omega, u, lateral = (float(c) for c in v)
        return np.array([0.0, 0.0, omega]), np.array([u, lateral, 0.0])
