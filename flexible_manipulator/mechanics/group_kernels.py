"""Compiled, allocation-free pieces of SO(3) for the Lie-group integrators.

The same formulas as `lie` (which is the readable NumPy reference they are tested against),
written with loops on preallocated arrays so that numba kernels can call them per step.
Quaternions are (w, x, y, z), Hamilton product; increments theta are body (right) ones:
the attitude after an increment is q exp(theta), and a body rate omega is carried into the
increment's tangent by the right Jacobian inverse (Runge-Kutta-Munthe-Kaas),

    theta' = J_r(theta)^-1 omega,   J_r(theta)^-1 = I + hat(theta)/2 + D(t) hat(theta)^2,
    D(t) = 1/t^2 - (1 + cos t) / (2 t sin t),   t = |theta| < 2 pi.
"""

import math

from . import compiled

_jit = compiled.jit

# Below this angle the series of sin(t/2)/t and D(t) replace the closed forms, which cancel.
_SMALL = 1e-2


@_jit
def quat_exp_multiply(q, theta, out):
    """Write q exp(theta) into out, for a unit quaternion q and a rotation vector theta [rad].

    exp(theta) = (cos(t/2), sin(t/2)/t theta), t = |theta|. ``out`` may be ``q``.
    """
    t = math.sqrt(theta[0] * theta[0] + theta[1] * theta[1] + theta[2] * theta[2])
    c = math.cos(0.5 * t)
    if t < _SMALL:
        t2 = t * t
        s = 0.5 - t2 / 48.0 + t2 * t2 / 3840.0       # sin(t/2)/t, error < t^6/1e5
    else:
        s = math.sin(0.5 * t) / t
    ex, ey, ez = s * theta[0], s * theta[1], s * theta[2]
    w, x, y, z = q[0], q[1], q[2], q[3]
    out[0] = w * c - x * ex - y * ey - z * ez
    out[1] = w * ex + x * c + y * ez - z * ey
    out[2] = w * ey - x * ez + y * c + z * ex
    out[3] = w * ez + x * ey - y * ex + z * c


@_jit
def so3_dexpinv(theta, k):
    """Replace k by J_r(theta)^-1 k (see the module docstring)."""
    t2 = theta[0] * theta[0] + theta[1] * theta[1] + theta[2] * theta[2]
    if t2 < _SMALL * _SMALL:
        d = 1.0 / 12.0 + t2 / 720.0 + t2 * t2 / 30240.0
    else:
        t = math.sqrt(t2)
        d = 1.0 / t2 - (1.0 + math.cos(t)) / (2.0 * t * math.sin(t))
    # hat(theta) k and hat(theta)^2 k = theta x (theta x k)
    c0 = theta[1] * k[2] - theta[2] * k[1]
    c1 = theta[2] * k[0] - theta[0] * k[2]
    c2 = theta[0] * k[1] - theta[1] * k[0]
    d0 = theta[1] * c2 - theta[2] * c1
    d1 = theta[2] * c0 - theta[0] * c2
    d2 = theta[0] * c1 - theta[1] * c0
    k[0] += 0.5 * c0 + d * d0
    k[1] += 0.5 * c1 + d * d1
    k[2] += 0.5 * c2 + d * d2


@_jit
def quat_to_matrix(q, R):
    """R = I + 2 w hat(v) + 2 hat(v)^2 of the unit quaternion q = (w, v)."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    R[0, 0] = 1.0 - 2.0 * (y * y + z * z)
    R[0, 1] = 2.0 * (x * y - w * z)
    R[0, 2] = 2.0 * (x * z + w * y)
    R[1, 0] = 2.0 * (x * y + w * z)
    R[1, 1] = 1.0 - 2.0 * (x * x + z * z)
    R[1, 2] = 2.0 * (y * z - w * x)
    R[2, 0] = 2.0 * (x * z - w * y)
    R[2, 1] = 2.0 * (y * z + w * x)
    R[2, 2] = 1.0 - 2.0 * (x * x + y * y)


@_jit
def matrix_to_quat(R, q):
    """Write the unit quaternion (w, x, y, z) of the rotation matrix R into q, with w >= 0.

    Shepperd's method: of 4w^2 = 1 + tr R, 4x^2 = 1 + 2R_00 - tr R, ... the largest is
    taken for the square root, and the other components follow from the off-diagonal sums
    and differences (4wx = R_21 - R_12, 4xy = R_01 + R_10, ...), which never divides by
    less than 1/2.
    """
    t = R[0, 0] + R[1, 1] + R[2, 2]
    if t >= R[0, 0] and t >= R[1, 1] and t >= R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + t)                  # s = 4w
        q[0] = 0.25 * s
        q[1] = (R[2, 1] - R[1, 2]) / s
        q[2] = (R[0, 2] - R[2, 0]) / s
        q[3] = (R[1, 0] - R[0, 1]) / s
    elif R[0, 0] >= R[1, 1] and R[0, 0] >= R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + 2.0 * R[0, 0] - t)  # s = 4x
        q[0] = (R[2, 1] - R[1, 2]) / s
        q[1] = 0.25 * s
        q[2] = (R[0, 1] + R[1, 0]) / s
        q[3] = (R[0, 2] + R[2, 0]) / s
    elif R[1, 1] >= R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + 2.0 * R[1, 1] - t)  # s = 4y
        q[0] = (R[0, 2] - R[2, 0]) / s
        q[1] = (R[0, 1] + R[1, 0]) / s
        q[2] = 0.25 * s
        q[3] = (R[1, 2] + R[2, 1]) / s
    else:
        s = 2.0 * math.sqrt(1.0 + 2.0 * R[2, 2] - t)  # s = 4z
        q[0] = (R[1, 0] - R[0, 1]) / s
        q[1] = (R[0, 2] + R[2, 0]) / s
        q[2] = (R[1, 2] + R[2, 1]) / s
        q[3] = 0.25 * s
    if q[0] < 0.0:
        for i in range(4):
            q[i] = -q[i]
