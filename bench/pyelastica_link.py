"""A pinned flexible link in PyElastica (a Cosserat rod): an independent reference.

The link is the upper arm of ``two_link_flexible``: an aluminium strip 30 mm x 3 mm, 0.5 m
long (E = 70 GPa, rho = 2700 kg/m^3, Poisson ratio 0.33), bending in the horizontal x-y
plane about its 3 mm direction. Node 0 of the rod is held in place with its rotation free
(`PinnedRoot`: a pin without friction), a torque about z acts on element 0 (`HubTorque`:
a massless hub), and nothing else: gravity along the pin axis only loads the pin.

PyElastica's rod is shearable and extensible (Cosserat). Its section constants are set to
the strip's physical values rather than PyElastica's round-section defaults: bending
stiffness E I, shear k G A (k = 10 (1 + nu) / (12 + 11 nu), Cowper's rectangle) and
stretch E A, torsion G J_t (thin strip), and the rotary inertia rho I of every element.
The stable explicit step is set by the in-plane rotation of one element against its
shear stiffness, sqrt(k G A / (rho I)) = 3.3e6 rad/s, whatever the element count:
position Verlet needs dt < 6e-7 s, so every run takes ~1e5 steps per 0.05 s.

Install with ``pip install -r bench/requirements.txt`` (``make bench-setup``).
"""

import math
import time

import numpy as np

try:
    import elastica
    from elastica.version import VERSION
except ImportError:          # the benchmark says how to install it and skips this part
    elastica, VERSION = None, None

YOUNG = 70e9                 # [Pa]
DENSITY = 2700.0             # [kg/m^3]
POISSON = 0.33
WIDTH, THICKNESS, LENGTH = 0.03, 0.003, 0.5     # [m]
VERLET_STEP = 5e-7           # [s], below the 6e-7 s stability limit (see the module)


def section():
    """Physical constants of the strip's section, SI units, as a dict.

    area A [m^2], in-plane and out-of-plane second moments ``inertia_z`` (about the 3 mm
    direction), ``inertia_y`` [m^4], torsion constant ``torsion`` [m^4], shear modulus G
    [Pa], shear coefficient ``shear_factor`` [-].
    """
    thin, wide = THICKNESS, WIDTH
    return dict(area=wide * thin, inertia_z=wide * thin ** 3 / 12.0,
                inertia_y=thin * wide ** 3 / 12.0,
                torsion=wide * thin ** 3 / 3.0 * (1.0 - 0.63 * thin / wide),
                shear_modulus=YOUNG / (2.0 * (1.0 + POISSON)),
                shear_factor=10.0 * (1.0 + POISSON) / (12.0 + 11.0 * POISSON))


def stiffness_summary():
    """Return (rho A [kg/m], in-plane E I [N m^2], k G A [N], E A [N], rotation rate [rad/s]).

    The last is sqrt(k G A / (rho I)), the fastest mode of the discrete rod (see module).
    """
    s = section()
    shear = s['shear_factor'] * s['shear_modulus'] * s['area']
    return (DENSITY * s['area'], YOUNG * s['inertia_z'], shear, YOUNG * s['area'],
            math.sqrt(shear / (DENSITY * s['inertia_z'])))


if elastica is not None:
    class PinnedRoot(elastica.ConstraintBase):
        """Hold node 0 of the rod at its initial position; its rotation stays free."""

        def __init__(self, fixed_position, **kwargs):
            """Keep node 0's initial position (PyElastica passes a copy) [m]."""
            super().__init__(**kwargs)
            self.position = np.array(fixed_position)

        def constrain_values(self, system, time):
            """Put node 0 back in place."""
            system.position_collection[:, 0] = self.position

        def constrain_rates(self, system, time):
            """Stop node 0."""
            system.velocity_collection[:, 0] = 0.0

    class HubTorque(elastica.NoForces):
        """A torque ``torque(t)`` [N m] about the world z axis on element 0 of the rod."""

        def __init__(self, torque):
            """Keep the torque program, a function of time [s]."""
            super().__init__()
            self.torque = torque

        def apply_torques(self, system, time=0.0):
            """Add the torque in element 0's director frame: Q e_z tau."""
            system.external_torques[:, 0] += (self.torque(float(time))
                                              * system.director_collection[:, 2, 0])

    class Simulator(elastica.BaseSystemCollection, elastica.Constraints, elastica.Forcing):
        """A PyElastica system collection with constraints and forcing."""


def set_section(rod):
    """Replace PyElastica's round-section constants of ``rod`` by the strip's (in place).

    Directors: d1 = z (the pin axis), d2 = -y, d3 = x along the rod; bending in the x-y
    plane turns about d1, so d1 gets the in-plane E I and rho I.
    """
    s = section()
    shear = s['shear_factor'] * s['shear_modulus'] * s['area']
    rod.bend_matrix[:] = np.diag([YOUNG * s['inertia_z'], YOUNG * s['inertia_y'],
                                  s['shear_modulus'] * s['torsion']])[:, :, None]
    rod.shear_matrix[:] = np.diag([shear, shear, YOUNG * s['area']])[:, :, None]
    second = np.diag([s['inertia_z'], s['inertia_y'], s['inertia_z'] + s['inertia_y']])
    rod.mass_second_moment_of_inertia[:] = (DENSITY * second[:, :, None]
                                            * rod.rest_lengths[None, None, :])
    rod.inv_mass_second_moment_of_inertia[:] = np.linalg.inv(
        rod.mass_second_moment_of_inertia.transpose(2, 0, 1)).transpose(1, 2, 0)


def build(elements, torque):
    """Return (simulator, rod): the straight rod along x from the origin, pinned, driven."""
    radius = math.sqrt(section()['area'] / math.pi)    # PyElastica's mass: rho pi r^2 dl
    rod = elastica.CosseratRod.straight_rod(
        elements, np.zeros(3), np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0]), LENGTH,
        radius, DENSITY, youngs_modulus=YOUNG, shear_modulus=section()['shear_modulus'])
    set_section(rod)
    simulator = Simulator()
    simulator.append(rod)
    simulator.constrain(rod).using(PinnedRoot, constrained_position_idx=(0,))
    simulator.add_forcing_to(rod).using(HubTorque, torque=torque)
    simulator.finalize()
    return simulator, rod


def tip_motion(elements, torque, duration, period, step=VERLET_STEP):
    """Tip position [m] every ``period`` seconds over ``duration``, and the wall time [s].

    Position Verlet with ``step``; row k is the tip at (k + 1) period. Returns (None, wall)
    if the rod leaves any sensible bound (unstable step).
    """
    simulator, rod = build(elements, torque)
    stepper = elastica.PositionVerlet()
    per_period = round(period / step)
    now, tips = np.float64(0.0), []
    start = time.perf_counter()
    for _ in range(round(duration / period)):
        for _ in range(per_period):
            now = stepper.step(simulator, now, step)
        tips.append(rod.position_collection[:, -1].copy())
        if not np.all(np.abs(tips[-1]) < 2.0 * LENGTH):
            return None, time.perf_counter() - start
    return np.array(tips), time.perf_counter() - start


def richardson(coarse, fine, order=2.0):
    """Extrapolate a quantity computed with h and h/2 to h -> 0, error O(h^order)."""
    return fine + (fine - coarse) / (2.0 ** order - 1.0)


def observed_order(tips):
    """Order p of convergence in the element length from three runs with n, 2n, 4n elements.

    p = log2(|x_n - x_2n| / |x_2n - x_4n|), with the max over time of the tip distances.
    """
    first = np.max(np.linalg.norm(tips[0] - tips[1], axis=1))
    second = np.max(np.linalg.norm(tips[1] - tips[2], axis=1))
    return math.log2(first / second)
