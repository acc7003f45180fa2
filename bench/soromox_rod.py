"""The soft cantilever in SoRoMoX 0.5.0 (JAX): an independent strain-parameterized rod.

What it runs: the rod of test/soft_cantilever.py (0.5 m, round section r = 1 cm,
rho = 1000 kg/m^3, E = 5 MPa, clamped at the root along x, straight and at rest at t = 0,
gravity 9.81 m/s^2 along -z, 0.5 s of fall, the tip sampled every 0.05 s) as one
SoRoMoX `GVS` segment (geometric variable strain, Renda et al.): a fixed joint and a
continuum link whose strains are Legendre polynomials in the arc length, integrated in
time by SoRoMoX's `rollout_to` (diffrax, constant step, Tsit5 by default). `rollout_to`
runs to the end time plus one step and saves by the solver's interpolation at the sample
times, which fall on steps here (every step divides 0.05 s).

The same discrete model as our link when the bases match: both carry each active strain
on Legendre polynomials P_0 ... P_p, both integrate the kinematics by fourth-order Magnus
steps between the ends and 2 (p + 1) + 2 Gauss-Legendre nodes (our default `points`,
given here as SoRoMoX's ``num_gauss_points``), with the section inertia
rho (J, I, I, A, A, A) and a linear elastic law on the strains at those nodes.

Convention mapping (ours -> SoRoMoX): the strain twist is ordered alike, angular first,
the section's x axis along the rod: torsion, bending_y, bending_z -> kappa_x, kappa_y,
kappa_z; extension, shear_y, shear_z -> sigma_x, sigma_y, sigma_z (sigma_x = 1 at rest,
the reference strain). The fall is in the x-z plane: bending_y (order p), extension and
shear_z (order max(1, p // 2), bench_cosserat.strains). SoRoMoX mounts a spatial rod
upright (along world +z) unless told otherwise: the base pose is the identity quaternion
[0, 0, 0, 1] (scalar last) at the origin, so the rod lies along world +x, and gravity is
given as (0, 0, -9.81) in the world frame.

Section constants: SoRoMoX builds its stiffness from E and G on the section (EI, EA, G J,
and G A with a shear factor of 1). Ours (`same_section()`, PyElastica's constants) uses a
shear stiffness alpha G A with alpha = 27/28; torsion is not active here, so G is given as
(alpha G A) / A: the shear stiffness matches and G enters nowhere else. No damping in
either (`same_section()` has damping_time 0; SoRoMoX's is off unless given).

Units: SI throughout (m, s, kg, Pa); tips in m, steps in s.

Needs ``pip install -r bench/requirements.txt`` (``make bench-setup``); without SoRoMoX,
`soromox` is None and the benchmark skips its part. Importing this module turns on JAX's
64-bit mode (SoRoMoX's models are float64).
"""

import functools
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                'test'))

from soft_cantilever import (  # noqa: E402
    DENSITY, DURATION, GRAVITY, LENGTH, PERIOD, RADIUS, YOUNG)

try:
    import jax
    jax.config.update('jax_enable_x64', True)
    import diffrax
    import equinox
    import soromox
    from soromox.systems.components import JointSpec, LinkSpec
    from soromox.systems.gvs import GVS, GVSSegment, StrainBasisSpec
    from soromox.systems.system_state import SystemState
except ImportError:          # the benchmark says how to install it and skips this part
    soromox = None

MAX_STEPS = 200_000          # diffrax's step budget (static: one compile per model)
SOLVERS = ('tsit5', 'dopri5', 'bosh3', 'heun')      # diffrax's explicit Runge-Kutta solvers


def version():
    """SoRoMoX's version string, or None when it is not installed."""
    return None if soromox is None else soromox.__version__


def orders(order):
    """SoRoMoX's six basis orders for bending order p: bench_cosserat.strains(p)'s.

    kappa_y carries p, sigma_x and sigma_z max(1, p // 2); the inactive ones are 0.
    """
    half = max(1, order // 2)
    return [0, order, 0, half, 0, half]


def shear_modulus(section):
    """The G [Pa] that gives SoRoMoX's shear stiffness G A our section's (alpha G A)."""
    return section.stiffness[4] / (math.pi * RADIUS ** 2)


@functools.lru_cache(maxsize=None)
def rod(order, shear):
    """The clamped rod as a SoRoMoX `GVS` at bending order p (module doc).

    ``shear``: G [Pa] (`shear_modulus`). Cached: SoRoMoX builds a model by eager JAX
    operations, 13-24 s of CPU whatever the order (a busy 2-CPU host).
    """
    link = LinkSpec.circular(length=LENGTH, radius=RADIUS, density=DENSITY,
                             reference_strain=[0.0, 0.0, 0.0, 1.0, 0.0, 0.0],
                             young_modulus=YOUNG, shear_modulus=shear)
    basis = StrainBasisSpec('legendre', ('kappa_y', 'sigma_x', 'sigma_z'), orders(order))
    segment = GVSSegment(link=link, joint=JointSpec.fixed(), basis=basis,
                         num_gauss_points=2 * (order + 1) + 2)
    return GVS.from_segments([segment], gravity=np.asarray(GRAVITY, dtype=float),
                             base_pose=np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]))


def solver(name):
    """A diffrax explicit solver by name (``SOLVERS``)."""
    if name not in SOLVERS:
        raise ValueError(f'solver {name!r}: one of {", ".join(SOLVERS)}')
    return getattr(diffrax, name.capitalize())()


def _rollout(robot, step, method):
    """Tip positions (samples, 3) [m] of ``robot`` from rest: ``method`` with ``step``.

    ``step`` is traced (one compile per model and solver, whatever the step).
    """
    start = SystemState(t=jax.numpy.asarray(0.0), y=jax.numpy.zeros(robot.state_size))
    samples = PERIOD * jax.numpy.arange(1, round(DURATION / PERIOD) + 1)
    run = robot.rollout_to(start, t1=DURATION, solver_dt=step, save_ts=samples,
                           solver=method, max_steps=MAX_STEPS)
    q = run.y[:, :robot.num_coordinates]
    return jax.vmap(lambda qk: robot.forward_kinematics_tips(qk)[0, :3, 3])(q)


if soromox is not None:
    _rollout = equinox.filter_jit(_rollout)


def tips(order, section, step, method='tsit5'):
    """Tip position every PERIOD [m], array (10, 3): bending order p, ``method``, ``step`` [s].

    ``section``: our `Section` (its shear stiffness; `shear_modulus`). The first call for
    an order and solver builds and compiles (time it apart); a run whose step is unstable
    returns NaN.
    """
    robot = rod(order, shear_modulus(section))
    return np.asarray(_rollout(robot, jax.numpy.asarray(float(step)), solver(method)))


def stiffness_gap(order, section, rod_stiffness):
    """Largest difference of SoRoMoX's generalized stiffness K from ``rod_stiffness``.

    ``rod_stiffness``: our `CosseratRod`'s K at bending order p on ``section`` (the same
    coordinates: P_k of 2 X / L - 1, strain by strain); relative to its largest entry.
    """
    theirs = np.asarray(rod(order, shear_modulus(section)).K)
    return float(np.abs(theirs - rod_stiffness).max() / np.abs(rod_stiffness).max())
