"""Lie-group toolkit for SO(3), SE(3) and SE(2) in plain NumPy (float64 arrays in and out).

Conventions (those of Boyer & Primault's Newton-Euler / Poincare equations):

* Twists are ordered ANGULAR FIRST. A se(3) twist is eta = (Omega, V) in R^6 [rad/s, m/s]
  and its dual wrench is (moment, force) [N m, N]; a se(2) twist is (omega, v1, v2), a se(2)
  wrench (mu, f1, f2). The duality pairing is the dot product (power, W).
* Group elements are homogeneous matrices g = [[R, p], [0, 1]]: 4x4 for SE(3), 3x3 for SE(2).
  g = g_ab maps coordinates in frame b to frame a: x_a = R x_b + p.
* Velocities are body (material, left-invariant) ones: hat(eta) = g^-1 g'.
  hat3(a) b = a x b and se3_hat(eta) = [[hat3(Omega), V], [0, 0]].
* Bracket: [eta, eta'] = (Omega x Omega', Omega x V' - Omega' x V) = ad_eta eta' with
  ad_eta = [[hat(Omega), 0], [hat(V), hat(Omega)]].
* ad*_eta := ad_eta^T = [[-hat(Omega), -hat(V)], [0, -hat(Omega)]] acts on wrenches:
  ad*_eta (L, W) = (L x Omega + W x V, W x Omega).
* Ad_g = [[R, 0], [hat(p) R, R]] maps twists in frame b to frame a;
  Ad_g^-1 = [[R^T, 0], [-R^T hat(p), R^T]]; wrenches go from b to a by
  Ad_{g^-1}^T = [[R, hat(p) R], [0, R]] (`se3_wrench_transport`).
* Tangent maps: dexp_X = sum_k ad_X^k / (k+1)!. The left Jacobian J_l(Theta) = dexp_Theta
  gives (d/dt exp(Theta)) exp(Theta)^-1 = hat(J_l(Theta) Theta'); the right Jacobian
  J_r(Theta) = dexp_{-Theta} = J_l(-Theta) gives exp(Theta)^-1 d/dt exp(Theta) =
  hat(J_r(Theta) Theta'). A Runge-Kutta-Munthe-Kaas step writes g(t) = g0 exp(Theta(t)) and
  integrates Theta' = J_r(Theta)^-1 eta = dexpinv_{-Theta}(eta) from Theta = 0.
* Quaternions are ordered (w, x, y, z) (scalar first), Hamilton product, q <-> R with
  R v = q (0, v) q*; `quat_from_matrix` returns the representative with w >= 0.

Coefficients such as (t - sin t)/t^3 or (2t - 3 sin t + t cos t)/(2 t^5) cancel
catastrophically for small angles t, and the SE(3) Jacobian multiplies the latter by only
|hat(phi)|^3. Below SMALL_ANGLE = 0.1 rad they are therefore taken from their Taylor series
through t^8 (truncation < 1e-17 relative); above it the closed forms err by < ~eps/t, so the
two branches agree to ~1e-15 and the Jacobians match their power series to that level.
"""

import numpy as np
import transforms3d

SMALL_ANGLE = 0.1
_I3 = np.eye(3)
_J2 = np.array([[0.0, -1.0], [1.0, 0.0]])


def _poly(t2, coefficients):
    """Evaluate sum_k coefficients[k] t2^k by Horner's rule."""
    out = 0.0
    for c in reversed(coefficients):
        out = out * t2 + c
    return out


def _coefficients(t):
    """Return (A, B, C, D) for the angle t >= 0 [rad].

    A = sin t / t, B = (1 - cos t) / t^2, C = (t - sin t) / t^3,
    D = (1 - (t/2) cot(t/2)) / t^2 = 1/t^2 - (1 + cos t) / (2 t sin t).
    """
    if t < SMALL_ANGLE:
        t2 = t * t
        return (_poly(t2, (1.0, -1 / 6, 1 / 120, -1 / 5040, 1 / 362880)),
                _poly(t2, (0.5, -1 / 24, 1 / 720, -1 / 40320, 1 / 3628800)),
                _poly(t2, (1 / 6, -1 / 120, 1 / 5040, -1 / 362880, 1 / 39916800)),
                _poly(t2, (1 / 12, 1 / 720, 1 / 30240, 1 / 1209600, 1 / 47900160)))
    half_sin = np.sin(0.5 * t)
    return (np.sin(t) / t, 2.0 * half_sin * half_sin / t**2, (t - np.sin(t)) / t**3,
            (1.0 - 0.5 * t / np.tan(0.5 * t)) / t**2)


# ---------------------------------------------------------------- SO(3)

def hat3(a):
    """Skew matrix hat(a) with hat(a) b = a x b; a (..., 3) gives (..., 3, 3)."""
    a = np.asarray(a, dtype=float)
    out = np.zeros(a.shape[:-1] + (3, 3))
    out[..., 0, 1], out[..., 0, 2] = -a[..., 2], a[..., 1]
    out[..., 1, 0], out[..., 1, 2] = a[..., 2], -a[..., 0]
    out[..., 2, 0], out[..., 2, 1] = -a[..., 1], a[..., 0]
    return out


def cross3(a, b):
    """Return a x b for arrays (..., 3) (``np.cross`` spends more on its arguments)."""
    out = np.empty(np.broadcast_shapes(np.shape(a), np.shape(b)))
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def vee3(S):
    """Inverse of `hat3`: the vector a of the skew part of S (S = hat(a) if S is skew)."""
    S = np.asarray(S, dtype=float)
    return 0.5 * np.array([S[2, 1] - S[1, 2], S[0, 2] - S[2, 0], S[1, 0] - S[0, 1]])


def _so3_quadratic(phi, c1, c2):
    """I + c1 hat(phi) + c2 hat(phi)^2."""
    P = hat3(phi)
    return _I3 + c1 * P + c2 * (P @ P)


def so3_exp(phi):
    """Rodrigues: exp(hat(phi)) = I + sin t/t hat(phi) + (1 - cos t)/t^2 hat(phi)^2, t = |phi|."""
    a, b, _, _ = _coefficients(np.linalg.norm(phi))
    return _so3_quadratic(phi, a, b)


def so3_log(R):
    """Rotation vector phi [rad], |phi| <= pi, with so3_exp(phi) = R.

    The angle is t = atan2(|w|/2, (tr R - 1)/2) with w = vee(R - R^T) = 2 sin t u, accurate
    at both ends. For t < pi/2, phi = t / (2 sin t) w; otherwise the axis u comes from the
    symmetric part (R + R^T)/2 - cos t I = (1 - cos t) u u^T, its sign from w.
    """
    R = np.asarray(R, dtype=float)
    w = 2.0 * vee3(R)
    s = 0.5 * np.linalg.norm(w)
    c = 0.5 * (np.trace(R) - 1.0)
    t = np.arctan2(s, c)
    if c > 0.0:
        small = t < SMALL_ANGLE
        ratio = _poly(t * t, (1.0, 1 / 6, 7 / 360, 31 / 15120, 127 / 604800)) if small else t / s
        return 0.5 * ratio * w
    S = 0.5 * (R + R.T) - c * _I3
    i = int(np.argmax(np.diag(S)))
    u = S[:, i] / np.linalg.norm(S[:, i])
    return t * u if u @ w >= 0.0 else -t * u


def so3_left_jacobian(phi):
    """J_l(phi) = dexp_phi = I + (1 - cos t)/t^2 hat(phi) + (t - sin t)/t^3 hat(phi)^2."""
    _, b, c, _ = _coefficients(np.linalg.norm(phi))
    return _so3_quadratic(phi, b, c)


def so3_right_jacobian(phi):
    """J_r(phi) = J_l(-phi) = I - (1 - cos t)/t^2 hat(phi) + (t - sin t)/t^3 hat(phi)^2."""
    return so3_left_jacobian(-np.asarray(phi, dtype=float))


def so3_left_jacobian_inv(phi):
    """J_l(phi)^-1 = I - hat(phi)/2 + (1/t^2 - (1 + cos t)/(2 t sin t)) hat(phi)^2, t < 2 pi."""
    _, _, _, d = _coefficients(np.linalg.norm(phi))
    return _so3_quadratic(phi, -0.5, d)


def so3_right_jacobian_inv(phi):
    """J_r(phi)^-1 = I + hat(phi)/2 + (1/t^2 - (1 + cos t)/(2 t sin t)) hat(phi)^2, t < 2 pi."""
    return so3_left_jacobian_inv(-np.asarray(phi, dtype=float))


# ---------------------------------------------------------------- SE(3)

def se3_hat(xi):
    """4x4 matrix [[hat(Omega), V], [0, 0]] of the twist xi = (Omega, V)."""
    xi = np.asarray(xi, dtype=float)
    return np.block([[hat3(xi[:3]), xi[3:, None]], [np.zeros((1, 4))]])


def se3_vee(X):
    """Twist (Omega, V) of a 4x4 se(3) matrix (inverse of `se3_hat`)."""
    X = np.asarray(X, dtype=float)
    return np.concatenate([vee3(X[:3, :3]), X[:3, 3]])


def _lower(A, B):
    """6x6 block matrix [[A, 0], [B, A]]."""
    out = np.zeros((6, 6))
    out[:3, :3] = out[3:, 3:] = A
    out[3:, :3] = B
    return out


def _pose(R, p):
    """Homogeneous matrix [[R, p], [0, 1]]."""
    g = np.eye(len(R) + 1)
    g[:-1, :-1], g[:-1, -1] = R, p
    return g


def _inverse(g):
    """[[R^T, -R^T p], [0, 1]]."""
    g = np.asarray(g, dtype=float)
    R = g[:-1, :-1]
    return _pose(R.T, -R.T @ g[:-1, -1])


def se3_exp(xi):
    """4x4 homogeneous exp(se3_hat(xi)) = [[so3_exp(Omega), J_l(Omega) V], [0, 1]]."""
    xi = np.asarray(xi, dtype=float)
    return _pose(so3_exp(xi[:3]), so3_left_jacobian(xi[:3]) @ xi[3:])


def se3_log(g):
    """Twist xi = (phi, J_l(phi)^-1 p) with se3_exp(xi) = g, phi = so3_log(R), |phi| <= pi."""
    g = np.asarray(g, dtype=float)
    phi = so3_log(g[:3, :3])
    return np.concatenate([phi, so3_left_jacobian_inv(phi) @ g[:3, 3]])


def se3_inverse(g):
    """g^-1 = [[R^T, -R^T p], [0, 1]] for a 4x4 homogeneous matrix."""
    return _inverse(g)


def se3_compose(g, h):
    """Product g h of two 4x4 homogeneous matrices (g_ab h_bc = g_ac)."""
    return np.asarray(g, dtype=float) @ np.asarray(h, dtype=float)


def se3_from_origin(xyz, rpy):
    """Pose of a URDF ``<origin xyz rpy>``: Trans(xyz) R(rpy) [m, rad].

    R = Rz(yaw) Ry(pitch) Rx(roll), fixed-axis roll, pitch, yaw (transforms3d's 'sxyz').
    """
    return _pose(transforms3d.euler.euler2mat(*np.asarray(rpy, dtype=float), axes='sxyz'),
                 np.asarray(xyz, dtype=float))


def se3_origin(g):
    """(xyz, rpy) of a 4x4 pose: `se3_from_origin` inverted, pitch in [-pi/2, pi/2]."""
    g = np.asarray(g, dtype=float)
    return g[:3, 3].copy(), np.array(transforms3d.euler.mat2euler(g[:3, :3], axes='sxyz'))


def so3_aligning(direction):
    """Return the smallest rotation R with R e_x = d/|d| (d = ``direction``, nonzero).

    A turn about e_x x d by the angle between them; for d opposite to e_x (no smallest
    one), a half turn about e_z.
    """
    d = np.asarray(direction, dtype=float)
    d = d / np.linalg.norm(d)
    axis = np.array([0.0, -d[2], d[1]])             # e_x x d
    s = np.linalg.norm(axis)
    if s == 0.0:
        return _I3.copy() if d[0] > 0.0 else so3_exp((0.0, 0.0, np.pi))
    return so3_exp(np.arctan2(s, d[0]) / s * axis)


def se3_adjoint(g):
    """Ad_g = [[R, 0], [hat(p) R, R]]: hat(Ad_g eta) = g hat(eta) g^-1 (twists b -> a)."""
    g = np.asarray(g, dtype=float)
    return _lower(g[:3, :3], hat3(g[:3, 3]) @ g[:3, :3])


def se3_adjoint_inv(g):
    """Ad_g^-1 = Ad_{g^-1} = [[R^T, 0], [-R^T hat(p), R^T]] (twists a -> b)."""
    return se3_adjoint(se3_inverse(g))


def se3_wrench_transport(g):
    """Ad_{g^-1}^T = [[R, hat(p) R], [0, R]]: wrench (moment, force) in frame b -> frame a."""
    return se3_adjoint_inv(g).T


def se3_ad(eta):
    """ad_eta = [[hat(Omega), 0], [hat(V), hat(Omega)]]: ad_eta eta' = [eta, eta'].

    eta (..., 6) gives (..., 6, 6).
    """
    eta = np.asarray(eta, dtype=float)
    out = np.zeros(eta.shape[:-1] + (6, 6))
    omega = hat3(eta[..., :3])
    out[..., :3, :3] = omega
    out[..., 3:, 3:] = omega
    out[..., 3:, :3] = hat3(eta[..., 3:])
    return out


def se3_bracket(a, b):
    """Return [a, b] = ad_a b for arrays (..., 6) of twists."""
    return np.concatenate([cross3(a[..., :3], b[..., :3]),
                           cross3(a[..., :3], b[..., 3:]) - cross3(b[..., :3], a[..., 3:])],
                          axis=-1)


def se3_exp_batch(twists):
    """exp(hat(xi)) (N, 4, 4) of twists (N, 6), angular first (`se3_exp`, vectorized).

    R = I + a W + b W^2, p = (I + b W + c W^2) u with W = hat(w), theta = |w|,
    a = sin(theta)/theta, b = (1 - cos theta)/theta^2, c = (theta - sin theta)/theta^3;
    their Taylor series below theta = 1e-3 (truncation < 1e-14).
    """
    w, u = twists[:, :3], twists[:, 3:]
    theta = np.linalg.norm(w, axis=1)
    small = theta < 1e-3
    t = np.where(small, 1.0, theta)
    t2 = theta * theta
    a = np.where(small, 1.0 - t2 / 6.0, np.sin(t) / t)
    b = np.where(small, 0.5 - t2 / 24.0, (1.0 - np.cos(t)) / (t * t))
    c = np.where(small, 1.0 / 6.0 - t2 / 120.0, (t - np.sin(t)) / (t * t * t))
    W = hat3(w)
    W2 = W @ W
    out = np.zeros((twists.shape[0], 4, 4))
    out[:, :3, :3] = np.eye(3) + a[:, None, None] * W + b[:, None, None] * W2
    out[:, :3, 3] = u + np.einsum('nij,nj->ni', b[:, None, None] * W + c[:, None, None] * W2,
                                  u)
    out[:, 3, 3] = 1.0
    return out


def se3_coad(eta):
    """ad*_eta = ad_eta^T: ad*_eta (L, W) = (L x Omega + W x V, W x Omega) on wrenches."""
    return se3_ad(eta).T


def _se3_q(xi):
    """Lower-left block Q(phi, rho) of the SE(3) left Jacobian (Barfoot's Q, eq. 7.86)."""
    t = np.linalg.norm(xi[:3])
    P, Q = hat3(xi[:3]), hat3(xi[3:])
    _, b, c1, _ = _coefficients(t)
    if t < SMALL_ANGLE:
        c2 = _poly(t * t, (1 / 24, -1 / 720, 1 / 40320, -1 / 3628800, 1 / 479001600))
        c3 = _poly(t * t, (1 / 120, -1 / 2520, 1 / 120960, -1 / 9979200, 1 / 1245404160))
    else:  # (t^2 + 2 cos t - 2)/(2 t^4) and (2 t - 3 sin t + t cos t)/(2 t^5)
        c2, c3 = (0.5 - b) / t**2, (3.0 * c1 - b) / (2.0 * t**2)
    PQ, QP, PQP = P @ Q, Q @ P, P @ Q @ P
    return (0.5 * Q + c1 * (PQ + QP + PQP) + c2 * (P @ PQ + QP @ P - 3.0 * PQP)
            + c3 * (PQP @ P + P @ PQP))


def se3_left_jacobian(xi):
    """J_l(xi) = dexp_xi = sum_k ad_xi^k/(k+1)! = [[J_l(phi), 0], [Q(phi, rho), J_l(phi)]].

    With xi = (phi, rho), t = |phi|, P = hat(phi), Q = hat(rho), a = (t - sin t)/t^3,
    b = (t^2 + 2 cos t - 2)/(2 t^4), c = (2 t - 3 sin t + t cos t)/(2 t^5): Q(phi, rho) =
    Q/2 + a (PQ + QP + PQP) + b (PPQ + QPP - 3 PQP) + c (PQPP + PPQP).
    """
    xi = np.asarray(xi, dtype=float)
    return _lower(so3_left_jacobian(xi[:3]), _se3_q(xi))


def se3_right_jacobian(xi):
    """J_r(xi) = dexp_{-xi} = sum_k (-ad_xi)^k/(k+1)! = J_l(-xi); exp(xi)^-1 exp(xi)' = J_r xi'."""
    return se3_left_jacobian(-np.asarray(xi, dtype=float))


def se3_left_jacobian_inv(xi):
    """J_l(xi)^-1 = [[J^-1, 0], [-J^-1 Q J^-1, J^-1]] with J = J_l(phi), Q = Q(phi, rho)."""
    xi = np.asarray(xi, dtype=float)
    Ji = so3_left_jacobian_inv(xi[:3])
    return _lower(Ji, -Ji @ _se3_q(xi) @ Ji)


def se3_right_jacobian_inv(xi):
    """J_r(xi)^-1 = dexpinv_{-xi} = J_l(-xi)^-1 (RKMK: Theta' = J_r(Theta)^-1 eta)."""
    return se3_left_jacobian_inv(-np.asarray(xi, dtype=float))


# ---------------------------------------------------------------- SE(2)

def se2_hat(xi):
    """3x3 matrix [[0, -omega, v1], [omega, 0, v2], [0, 0, 0]] of xi = (omega, v1, v2)."""
    w, v1, v2 = np.asarray(xi, dtype=float)
    return np.array([[0.0, -w, v1], [w, 0.0, v2], [0.0, 0.0, 0.0]])


def se2_vee(X):
    """Twist (omega, v1, v2) of a 3x3 se(2) matrix (inverse of `se2_hat`)."""
    X = np.asarray(X, dtype=float)
    return np.array([0.5 * (X[1, 0] - X[0, 1]), X[0, 2], X[1, 2]])


def _se2_block(column, M):
    """3x3 matrix [[1, 0], [column, M]]."""
    return np.block([[np.ones((1, 1)), np.zeros((1, 2))], [np.reshape(column, (2, 1)), M]])


def _se2_v(w):
    """V(w) = int_0^1 exp(s w J) ds = sin w/w I + (1 - cos w)/w J."""
    a, b, _, _ = _coefficients(abs(w))
    return a * np.eye(2) + b * w * _J2


def _se2_v_inv(w):
    """V(w)^-1 = (w/2) cot(w/2) I - (w/2) J, |w| < 2 pi."""
    _, _, _, d = _coefficients(abs(w))
    return (1.0 - d * w * w) * np.eye(2) - 0.5 * w * _J2


def se2_exp(xi):
    """3x3 homogeneous exp(se2_hat(xi)) = [[R(omega), V(omega) v], [0, 1]]."""
    w, v1, v2 = np.asarray(xi, dtype=float)
    R = np.array([[np.cos(w), -np.sin(w)], [np.sin(w), np.cos(w)]])
    return _pose(R, _se2_v(w) @ np.array([v1, v2]))


def se2_log(g):
    """Twist (omega, V(omega)^-1 p) with omega = atan2(R_10, R_00) in (-pi, pi]."""
    g = np.asarray(g, dtype=float)
    w = np.arctan2(g[1, 0], g[0, 0])
    return np.concatenate([[w], _se2_v_inv(w) @ g[:2, 2]])


def se2_inverse(g):
    """g^-1 = [[R^T, -R^T p], [0, 1]] for a 3x3 homogeneous matrix."""
    return _inverse(g)


def se2_adjoint(g):
    """Ad_g = [[1, 0], [-J p, R]] = [[1, 0, 0], [p2, R], [-p1, R]]: twists b -> a."""
    g = np.asarray(g, dtype=float)
    return _se2_block(-_J2 @ g[:2, 2], g[:2, :2])


def se2_adjoint_inv(g):
    """Ad_g^-1 = Ad_{g^-1}."""
    return se2_adjoint(se2_inverse(g))


def se2_ad(xi):
    """ad_xi = [[0, 0, 0], [v2, 0, -omega], [-v1, omega, 0]]: ad_xi xi' = [xi, xi']."""
    w, v1, v2 = np.asarray(xi, dtype=float)
    return np.array([[0.0, 0.0, 0.0], [v2, 0.0, -w], [-v1, w, 0.0]])


def se2_coad(xi):
    """ad*_xi = ad_xi^T on wrenches (mu, f1, f2): (v2 f1 - v1 f2, omega f2, -omega f1)."""
    return se2_ad(xi).T


def se2_left_jacobian(xi):
    """J_l(xi) = [[1, 0], [W(omega) (-J v), V(omega)]], W = (1-cos w)/w^2 I + (w-sin w)/w^2 J."""
    w, v1, v2 = np.asarray(xi, dtype=float)
    _, b, c, _ = _coefficients(abs(w))
    return _se2_block((b * np.eye(2) + c * w * _J2) @ (-_J2 @ np.array([v1, v2])), _se2_v(w))


def se2_right_jacobian(xi):
    """J_r(xi) = dexp_{-xi} = J_l(-xi); exp(xi)^-1 d/dt exp(xi) = hat(J_r(xi) xi')."""
    return se2_left_jacobian(-np.asarray(xi, dtype=float))


def se2_left_jacobian_inv(xi):
    """J_l(xi)^-1 = [[1, 0], [-V^-1 c, V^-1]] where c is the first column's lower part."""
    Vi = _se2_v_inv(float(np.asarray(xi, dtype=float)[0]))
    return _se2_block(-Vi @ se2_left_jacobian(xi)[1:, 0], Vi)


def se2_right_jacobian_inv(xi):
    """J_r(xi)^-1 = J_l(-xi)^-1 (RKMK: Theta' = J_r(Theta)^-1 eta)."""
    return se2_left_jacobian_inv(-np.asarray(xi, dtype=float))


# ---------------------------------------------------------------- quaternions (w, x, y, z)

def quat_multiply(p, q):
    """Hamilton product p q = (pw qw - pv.qv, pw qv + qw pv + pv x qv), order (w, x, y, z)."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    return np.concatenate([[p[0] * q[0] - p[1:] @ q[1:]],
                           p[0] * q[1:] + q[0] * p[1:] + np.cross(p[1:], q[1:])])


def matrix_from_quat(q):
    """Return R = I + 2 w hat(v) + 2 hat(v)^2 of the quaternion q = (w, v), normalized first."""
    q = np.asarray(q, dtype=float)
    q = q / np.linalg.norm(q)
    V = hat3(q[1:])
    return _I3 + 2.0 * q[0] * V + 2.0 * (V @ V)


def quat_from_matrix(R):
    """Return the unit quaternion (w, x, y, z), w >= 0, of R by Shepperd's method."""
    R = np.asarray(R, dtype=float)
    tr, d = np.trace(R), np.diag(R)
    i = int(np.argmax(d))
    q = np.empty(4)
    if tr >= d[i]:
        q[0] = 0.5 * np.sqrt(1.0 + tr)
        q[1:] = 2.0 * vee3(R) / (4.0 * q[0])
    else:
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 0.5 * np.sqrt(1.0 + R[i, i] - R[j, j] - R[k, k])
        q[1 + i] = s
        q[0] = (R[k, j] - R[j, k]) / (4.0 * s)
        q[1 + j] = (R[j, i] + R[i, j]) / (4.0 * s)
        q[1 + k] = (R[k, i] + R[i, k]) / (4.0 * s)
    q /= np.linalg.norm(q)
    return -q if q[0] < 0.0 else q


def quat_exp_update(q, omega_body, h):
    """Return q exp(h omega/2), renormalized: the attitude after h [s] at body rate omega [rad/s].

    exp(v) = (cos |v|, sin |v| / |v| v) for the pure quaternion v = h omega / 2.
    """
    v = 0.5 * h * np.asarray(omega_body, dtype=float)
    a = np.linalg.norm(v)
    sinc = _coefficients(a)[0]
    out = quat_multiply(q, np.concatenate([[np.cos(a)], sinc * v]))
    return out / np.linalg.norm(out)
