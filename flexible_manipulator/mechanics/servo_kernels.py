"""Compiled kernels of the servoconstraint systems: one right-hand side on a Lie algebra.

A left-invariant system on a three-dimensional Lie algebra g (so(3) or se(2), structure
constants C[i, j, k] = c^i_jk, [e_j, e_k] = sum_i c^i_jk e_i) with inertia I (SPD), body
velocity w in g and momentum m = I w in g* obeys the Euler-Poincare equations with an
external load F(q) and a control force of magnitude lambda along the covector b
(Kozlov 2015, (2.4)):

    m' = ad*_w m + F(q) + lambda b,    (ad*_w m)_k = sum_ij c^i_jk m_i w_j.

Realization ``servo`` enforces the constraint <a, w> = 0 with the multiplier

    lambda = -(<I^-1 a, ad*_w m + F> + k <a, w>) / <I^-1 a, b>,

so that d<a, w>/dt = -k <a, w> (Baumgarte velocity stabilization, k >= 0; k = 0 is the
paper's equation). It exists when the realizability margin <I^-1 a, b> is not zero (2.5).
Realization ``free`` has no constraint: lambda is the input u[0].

The group part q and the kinematics q' (written by `rhs` as a tangent vector):

* rigid body (so(3)): q = unit quaternion (w, x, y, z) body -> world, q' = w (body rates),
  integrated on SO(3) by q exp(theta) (`group_kernels`); gravity enters through
  gamma = R^T e_z (world up in body axes) as the torque gamma x c_g;
* sleigh (se(2), basis (rot, u, v)): q = (x, y, phi) of the blade point O in the plane,
  q' = (u cos phi - v sin phi, u sin phi + v cos phi, omega) in world components; SE(2) =
  SO(2) x| R^2 is integrated as the product SO(2) x R^2 with world-frame position rates
  (as the chain's floating base does on SO(3) x R^3), which is exact on the group because
  SO(2) is abelian. Gravity on the incline is the force (0, -p) of the plane frame applied
  at the centre of mass (eps, 0): F = (eps F_v, F_u, F_v) with F_u = -p sin phi,
  F_v = -p cos phi.

`rhs` returns False (the steppers then stop, `Simulation` keeps the last good state) when
|w| exceeds ``omega_max`` or is not finite: the finite-time blow-up of the generic servo
case is detected, never integrated through.

Everything works on preallocated arrays and allocates nothing (numba, ``_nrt=False``).
"""

import math

from . import compiled, group_kernels, integrators

KIND_RIGID_BODY = 0
KIND_SLEIGH = 1

_jit, _inline = compiled.jit, compiled.inline      # see `compiled`


@_jit
def _dot3(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@_jit
def coadjoint(structure, m, w, out):
    """Write ad*_w m into out: (ad*_w m)_k = sum_ij C[i, j, k] m_i w_j."""
    for k in range(3):
        acc = 0.0
        for i in range(3):
            for j in range(3):
                acc += structure[i, j, k] * m[i] * w[j]
        out[k] = acc


@_inline
def external_load(model, data, q, out):
    """Generalized external force F(q) in g* (gravity), written into out."""
    if model.kind == KIND_RIGID_BODY:
        # gamma = R(q)^T e_z: the third row of R; F = gamma x c_g.
        group_kernels.quat_to_matrix(q, data.rot)
        g, c = data.gamma, model.weight_moment
        for i in range(3):
            g[i] = data.rot[2, i]
        out[0] = g[1] * c[2] - g[2] * c[1]
        out[1] = g[2] * c[0] - g[0] * c[2]
        out[2] = g[0] * c[1] - g[1] * c[0]
    else:
        phi = q[2]
        f_u = -model.load * math.sin(phi)
        f_v = -model.load * math.cos(phi)
        out[0] = model.offset * f_v
        out[1] = f_u
        out[2] = f_v


@_inline
def dynamics(model, data, q, w, u):
    """Velocity rate data.wdot and multiplier data.lam[0] at (q, w) with input u.

    Writes data.momentum = I w and data.load = ad*_w m + F(q) along the way.
    """
    m, load = data.momentum, data.load
    for i in range(3):
        m[i] = (model.inertia[i, 0] * w[0] + model.inertia[i, 1] * w[1]
                + model.inertia[i, 2] * w[2])
    coadjoint(model.structure, m, w, load)
    external_load(model, data, q, data.force)
    for i in range(3):
        load[i] += data.force[i]
    if model.free:
        lam = u[0]
    else:
        lam = -(_dot3(model.inertia_inv_a, load) + model.stabilization * _dot3(model.a, w)) \
            / model.margin
    data.lam[0] = lam
    for i in range(3):
        data.total[i] = load[i] + lam * model.b[i]
    for i in range(3):
        data.wdot[i] = (model.inertia_inv[i, 0] * data.total[0]
                        + model.inertia_inv[i, 1] * data.total[1]
                        + model.inertia_inv[i, 2] * data.total[2])


@_inline
def rhs(model, data, x, u, out):
    """Tangent derivative out = (q' as a tangent vector, w'); False on a blow-up.

    The blow-up test |w|^2 <= omega_max^2 is False for NaN too.
    """
    nq = x.shape[0] - 3
    q, w = x[:nq], x[nq:]
    if not (_dot3(w, w) <= model.omega_max * model.omega_max):
        return False
    dynamics(model, data, q, w, u)
    if model.kind == KIND_RIGID_BODY:
        for i in range(3):
            out[i] = w[i]
    else:
        c, s = math.cos(q[2]), math.sin(q[2])
        out[0] = w[1] * c - w[2] * s
        out[1] = w[1] * s + w[2] * c
        out[2] = w[0]
    for i in range(3):
        out[3 + i] = data.wdot[i]
    return True


@_inline
def integrate(model, x, theta, out):
    """Write x "+" theta into out: q exp(theta) on SO(3), addition on SO(2) x R^2 and w."""
    nq = x.shape[0] - 3
    if model.kind == KIND_RIGID_BODY:
        group_kernels.quat_exp_multiply(x[:4], theta[:3], out[:4])
    else:
        for i in range(3):
            out[i] = x[i] + theta[i]
    for i in range(3):
        out[nq + i] = x[nq + i] + theta[3 + i]


@_inline
def dexpinv(model, theta, k):
    """Map a stage derivative into the tangent at theta: J_r^-1 on the rotation (SO(3))."""
    if model.kind == KIND_RIGID_BODY:
        group_kernels.so3_dexpinv(theta[:3], k[:3])


@_inline
def identity_factor(model, data, gh):
    """W = I (these systems are small and not stiff): nothing to factor."""
    return True


@_inline
def identity_solve(model, data, gh, r, out):
    """W^-1 r with W = I: a copy (ROS2 is then the explicit second-order Heun scheme)."""
    for i in range(r.shape[0]):
        out[i] = r[i]


@_jit
def explicit_steps(model, data, x, u, h, count, a, b, stages, trial, theta):
    """`integrators.explicit_steps` on the servo system's equations."""
    return integrators.explicit_steps(rhs, integrate, dexpinv, model, data, x, u, h, count, a,
                                      b, stages, trial, theta)


@_jit
def rosenbrock_steps(model, data, x, u, h, count, a, c, b, gamma, stages, trial, theta):
    """`integrators.rosenbrock_steps` with W = I: an explicit W-method of the same order."""
    return integrators.rosenbrock_steps(rhs, identity_factor, identity_solve, integrate,
                                        dexpinv, model, data, x, u, h, count, a, c, b, gamma,
                                        stages, trial, theta)


@_jit
def evaluate(model, data, q, w, u):
    """Python entry to `dynamics` (no blow-up check): fills data, returns lambda."""
    dynamics(model, data, q, w, u)
    return data.lam[0]
