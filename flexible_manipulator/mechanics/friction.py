"""Coulomb joint friction, regularized: tau_f = -F_c tanh(v / v_s) on a joint's coordinate.

A joint's friction is its viscous part D v (``Joint.damping``) and its Coulomb part of
level F_c >= 0 (``Joint.friction`` [N m, or N for a prismatic joint]), which opposes the
motion with the force F_c sgn(v). The sign is regularized over the velocity scale v_s > 0
(``Joint.friction_velocity`` [rad/s or m/s], default `FRICTION_VELOCITY`), so that the
model stays a smooth ODE for the fixed-step integrators:

    h_f(v) = F_c tanh(v / v_s)     (added to h; the force on the joint is -h_f),
    dh_f/dv = (F_c / v_s) (1 - tanh^2(v / v_s))  <=  F_c / v_s.

What the regularization changes (a joint of effective inertia I alone): for |v| >> v_s the
force is F_c sgn(v) to within 2 F_c exp(-2 |v| / v_s); a joint coasting from v0 >> v_s
decelerates at F_c / I, and its speed falls to v at the time

    t(v) = (I v_s / F_c) ln(sinh(v0 / v_s) / sinh(v / v_s)),

so it is down to v_s at t_c - (ln 2 + ln sinh 1) I v_s / F_c = t_c - 0.855 I v_s / F_c,
where t_c = I v0 / F_c is the exact stop time, and it then creeps to rest exponentially
(time constant I v_s / F_c) instead of stopping dead. Under a constant effort |tau| < F_c
a joint at rest is no longer held: it creeps at v = v_s artanh(tau / F_c) (0.55 v_s at half
the level). Stiction (a breakaway level above F_c) is not modelled.

Choice of v_s and the integrators. Near v = 0 the friction is a viscous damper of
coefficient F_c / v_s, the largest slope it has anywhere: on a joint of effective inertia
I = 1 / (M^-1)_jj, v' = -(F_c / (v_s I)) v, the eigenvalue lambda = -F_c / (v_s I). An
explicit Runge-Kutta method of order p <= 4 is stable on the negative real axis for
h |lambda| <= 2.785 (rk4; 2.51 rk3, 2 heun and euler), so with rk4

    v_s >= h F_c / (2.785 I).

`step_check` checks exactly this, with the slope F_c / v_s added to D in the linearization
about rest (`peak_slopes`), and refuses (or warns about) a step past it, naming the largest
stable one. The default v_s = 0.01 rad/s keeps the plant's rk4 at 0.5 ms stable for
F_c / I up to 2.785 x 0.01 / 0.0005 = 55.7 rad/s^2 (5 N m on a joint of 0.1 kg m^2, a
geared arm's reflected rotor inertia); past that, raise ``friction_velocity`` to
h F_c / (2.785 I) or more.

The linearly implicit methods (``rosenbrock2``, ``rosenbrock3``) add the friction as a
damper C_f to the damping in W = M + gamma h (D + C_f) + (gamma h)^2 K
(``chain_kernels.steppers.stiff_factor``; `friction_damper`), from the state x_n of the
step's start: C_f = dh_f/dv at v_n (the exact Jacobian: the methods' accuracy where the
step resolves the knee), but, on a step whose explicit reach v_n + gamma h v'_n crosses
rest, at least the chord h_f(v_n) / v_n (<= F_c / v_s). The tangent alone vanishes away
from v = 0, and W then misses the knee a step crossing zero meets: with v_s = 1e-4 and
F_c / I = 10 rad/s^2 at 0.5 ms, rosenbrock2 with the tangent keeps the joint sliding at
0.0025 rad/s for ever (a fixed point of its two stages); the chord is the damper of the
linearly implicit Coulomb step, v_n+1 = v_n / (1 + h C_f / I), which brings a joint
toward rest, never past it. With it the Rosenbrock methods stop a joint for any v_s (to
the step: the knee itself is resolved only for h F_c / (v_s I) <~ 1, as for rk4), and
they are W-methods: their order holds for any W.

The kernels add h_f where D v is added (``model.kernels.mass_and_bias`` and
``inverse_dynamics``, ``model.articulated._condense``) with `smooth_sign`;
`friction_forces` is the same formula on NumPy arrays (``Chain.joint_friction``: the
controller's driver compensation).
"""

import math

import numpy as np

from . import compiled

FRICTION_VELOCITY = 0.01       # default v_s [rad/s or m/s] (module doc)


@compiled.inline
def smooth_sign(v, scale):
    """Return tanh(v / scale): the regularized sgn(v) (module doc)."""
    return math.tanh(v / scale)


@compiled.inline
def friction_damper(level, scale, v, acceleration, gh):
    """Return C_f, the friction's damper in an implicit step's W (module doc) [N m s/rad].

    ``v``, ``acceleration``: the coordinate's v and v' at the step's start; ``gh``: gamma h.
    """
    t = math.tanh(v / scale)
    damper = level * (1.0 - t * t) / scale
    if v != 0.0 and v * (v + gh * acceleration) <= 0.0:      # the step's reach crosses rest
        damper = max(damper, level * t / v)
    return damper


def friction_forces(level, scale, v):
    """Return h_f = level tanh(v / scale) per coordinate (NumPy arrays; module doc)."""
    return level * np.tanh(np.asarray(v, dtype=float) / scale)


def peak_slopes(model):
    """Return F_c / v_s per coordinate of a chain model (nv; 0 where it has no friction)."""
    arrays = getattr(model, 'arrays', None)
    if arrays is None or not hasattr(arrays, 'friction'):
        return None
    return arrays.friction / arrays.friction_velocity
