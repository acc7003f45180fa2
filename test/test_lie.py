"""Checks of `flexible_manipulator.mechanics.lie` against independent references.

Expected values come from scipy (`expm`/`logm` of the hat matrices, `Rotation`, `solve_ivp`
of the matrix ODE G' = G hat(eta)), from the defining identities of the Lie algebra (bracket
as matrix commutator, Jacobi, duality), from the power series dexp_{-X} = sum (-ad_X)^k/(k+1)!
and from central finite differences of exp. Nothing is copied from the module's output.
"""

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.linalg import expm, logm
from scipy.spatial.transform import Rotation

from flexible_manipulator.mechanics import lie

# Rotation angles covering the Taylor branch, its switch point, moderate and near-pi values.
ANGLES = [0.0, 1e-9, 1e-6, 1e-4, 1e-2, 0.0999, 0.1001, 0.3, 1.0, 2.0, 3.0, math.pi - 1e-6]


def unit(rng, n=3):
    v = rng.normal(size=n)
    return v / np.linalg.norm(v)


def se3_twist(rng, angle):
    """Twist with rotation angle ``angle`` [rad] and a random translation part."""
    return np.concatenate([angle * unit(rng), rng.normal(size=3)])


def se2_twist(rng, angle):
    return np.array([angle * rng.choice([-1.0, 1.0]), *rng.normal(size=2)])


def random_se3(rng):
    return lie.se3_exp(np.concatenate([rng.uniform(-3, 3, 3) / math.sqrt(3), rng.normal(size=3)]))


def random_se2(rng):
    return lie.se2_exp(np.array([rng.uniform(-3, 3), *rng.normal(size=2)]))


def ad_series(ad, terms=30):
    """sum_{k<terms} (-ad)^k / (k+1)!: the right Jacobian from its definition."""
    out, power = np.zeros_like(ad), np.eye(len(ad))
    for k in range(terms):
        out += power / math.factorial(k + 1)
        power = power @ (-ad)
    return out


# Each group: (hat, vee, exp, log, ad, J_r, J_r^-1, Ad, twist generator, element generator).
SE3 = (lie.se3_hat, lie.se3_vee, lie.se3_exp, lie.se3_log, lie.se3_ad, lie.se3_right_jacobian,
       lie.se3_right_jacobian_inv, lie.se3_adjoint, se3_twist, random_se3)
SE2 = (lie.se2_hat, lie.se2_vee, lie.se2_exp, lie.se2_log, lie.se2_ad, lie.se2_right_jacobian,
       lie.se2_right_jacobian_inv, lie.se2_adjoint, se2_twist, random_se2)
SO3 = (lie.hat3, lie.vee3, lie.so3_exp, lie.so3_log, lie.hat3, lie.so3_right_jacobian,
       lie.so3_right_jacobian_inv, lambda R: R, lambda rng, t: t * unit(rng),
       lambda rng: Rotation.random(random_state=rng).as_matrix())
GROUPS = pytest.mark.parametrize('group', [SO3, SE3, SE2], ids=['so3', 'se3', 'se2'])


@GROUPS
@pytest.mark.parametrize('angle', ANGLES)
def test_exp_matches_expm(group, angle):
    """The exp equals scipy's Pade expm of the hat matrix, tiny and near-pi angles included."""
    hat, _, exp, *_, twist, _ = group
    rng = np.random.default_rng(1)
    for _ in range(5):
        xi = twist(rng, angle)
        np.testing.assert_allclose(exp(xi), expm(hat(xi)), rtol=0, atol=2e-15)


@GROUPS
@pytest.mark.parametrize('angle', ANGLES)
def test_log_inverts_exp(group, angle):
    """log(exp(xi)) = xi for rotation angles below pi (the principal branch)."""
    _, _, exp, log, *_, twist, _ = group
    rng = np.random.default_rng(2)
    for _ in range(5):
        xi = twist(rng, angle)
        np.testing.assert_allclose(log(exp(xi)), xi, rtol=0, atol=1e-12)


@GROUPS
def test_log_matches_logm(group):
    """The log equals vee(logm(g)) (scipy's principal logarithm) on random elements."""
    _, vee, _, log, *_, element = group
    rng = np.random.default_rng(3)
    for _ in range(20):
        g = element(rng)
        np.testing.assert_allclose(log(g), vee(np.real(logm(g))), rtol=0, atol=1e-11)


def test_so3_log_at_and_near_pi():
    """Near and at pi the rotation vector equals scipy's as_rotvec (up to sign at pi)."""
    rng = np.random.default_rng(4)
    for eps in [0.0, 1e-15, 1e-12, 1e-8, 1e-4]:
        u = unit(rng)
        R = Rotation.from_rotvec((math.pi - eps) * u).as_matrix()
        phi, ref = lie.so3_log(R), Rotation.from_matrix(R).as_rotvec()
        if eps == 0.0:
            ref = ref if ref @ phi >= 0 else -ref
        np.testing.assert_allclose(phi, ref, rtol=0, atol=1e-12)
        np.testing.assert_allclose(lie.so3_exp(phi), R, rtol=0, atol=1e-14)


@GROUPS
def test_hat_vee_round_trip(group):
    """vee(hat(xi)) = xi; hat3(a) b = a x b (numpy cross)."""
    hat, vee, *_ = group
    rng = np.random.default_rng(5)
    xi = group[8](rng, 1.3)
    np.testing.assert_array_equal(vee(hat(xi)), xi)
    a, b = rng.normal(size=3), rng.normal(size=3)
    np.testing.assert_allclose(lie.hat3(a) @ b, np.cross(a, b), rtol=0, atol=1e-15)


@GROUPS
def test_adjoint_is_conjugation(group):
    """hat(Ad_g eta) = G hat(eta) G^-1; Ad_gh = Ad_g Ad_h; ad_(Ad_g eta) = Ad_g ad_eta Ad_g^-1."""
    hat, _, _, _, ad, _, _, Ad, twist, element = group
    rng = np.random.default_rng(6)
    for _ in range(10):
        g, h, eta = element(rng), element(rng), twist(rng, 1.1)
        np.testing.assert_allclose(hat(Ad(g) @ eta), g @ hat(eta) @ np.linalg.inv(g), atol=1e-13)
        np.testing.assert_allclose(Ad(g @ h), Ad(g) @ Ad(h), atol=1e-13)
        np.testing.assert_allclose(ad(Ad(g) @ eta), Ad(g) @ ad(eta) @ np.linalg.inv(Ad(g)),
                                   atol=1e-12)


def test_adjoint_inverses_and_wrench_transport():
    """Ad_g^-1 is the matrix inverse; wrench transport is Ad_{g^-1}^T and conserves power."""
    rng = np.random.default_rng(7)
    for _ in range(10):
        g, eta_b, F_b = random_se3(rng), rng.normal(size=6), rng.normal(size=6)
        np.testing.assert_allclose(lie.se3_adjoint_inv(g), np.linalg.inv(lie.se3_adjoint(g)),
                                   atol=1e-13)
        np.testing.assert_allclose(lie.se3_inverse(g), np.linalg.inv(g), atol=1e-13)
        np.testing.assert_allclose(lie.se3_compose(g, lie.se3_inverse(g)), np.eye(4), atol=1e-14)
        T = lie.se3_wrench_transport(g)
        R, p = g[:3, :3], g[:3, 3]
        np.testing.assert_allclose(T[:3, 3:], lie.hat3(p) @ R, atol=1e-14)
        assert (T @ F_b) @ (lie.se3_adjoint(g) @ eta_b) == pytest.approx(F_b @ eta_b, rel=1e-12)
        g2 = random_se2(rng)
        np.testing.assert_allclose(lie.se2_adjoint_inv(g2), np.linalg.inv(lie.se2_adjoint(g2)),
                                   atol=1e-13)


@pytest.mark.parametrize('group, coad, n', [(SE3, lie.se3_coad, 6), (SE2, lie.se2_coad, 3)],
                         ids=['se3', 'se2'])
def test_ad_is_bracket_and_coad_is_dual(group, coad, n):
    """ad_eta eta' = vee([hat eta, hat eta']), Jacobi identity, <ad*_eta w, z> = <w, ad_eta z>."""
    hat, vee, _, _, ad, *_ = group
    rng = np.random.default_rng(8)
    for _ in range(10):
        x, y, z, w = (rng.normal(size=n) for _ in range(4))
        commutator = hat(x) @ hat(y) - hat(y) @ hat(x)
        np.testing.assert_allclose(ad(x) @ y, vee(commutator), atol=1e-14)
        jacobi = ad(x) @ ad(y) @ z + ad(y) @ ad(z) @ x + ad(z) @ ad(x) @ y
        np.testing.assert_allclose(jacobi, 0.0, atol=1e-13)
        assert (coad(x) @ w) @ z == pytest.approx(w @ (ad(x) @ z), rel=1e-12)


def test_se3_coad_formula():
    """ad*_eta (L, W) = (L x Omega + W x V, W x Omega), written out with numpy cross."""
    rng = np.random.default_rng(9)
    eta, wrench = rng.normal(size=6), rng.normal(size=6)
    (Om, V), (L, W) = np.split(eta, 2), np.split(wrench, 2)
    expected = np.concatenate([np.cross(L, Om) + np.cross(W, V), np.cross(W, Om)])
    np.testing.assert_allclose(lie.se3_coad(eta) @ wrench, expected, atol=1e-14)


@GROUPS
@pytest.mark.parametrize('angle', [1e-9, 1e-3, 0.5, 2.0, 3.0])
def test_right_jacobian_finite_differences(group, angle):
    """exp(X)^-1 (exp(X + e d) - exp(X - e d)) / (2e) -> hat(J_r(X) d) (central differences)."""
    hat, _, exp, _, _, jr, *_, twist, _ = group
    rng = np.random.default_rng(10)
    X = twist(rng, angle)
    e = 1e-6
    for _ in range(3):
        d = rng.normal(size=X.size)
        fd = np.linalg.inv(exp(X)) @ (exp(X + e * d) - exp(X - e * d)) / (2 * e)
        np.testing.assert_allclose(fd, hat(jr(X) @ d), atol=1e-8)


@GROUPS
@pytest.mark.parametrize('angle', ANGLES[:-1])
def test_right_jacobian_series_and_inverse(group, angle):
    """J_r = sum_k (-ad)^k/(k+1)! (30 terms) to 1e-14 across the series switch; J_r J_r^-1 = I."""
    *_, ad, jr, jr_inv, _, twist, _ = group
    rng = np.random.default_rng(11)
    for _ in range(3):
        X = twist(rng, angle)
        np.testing.assert_allclose(jr(X), ad_series(ad(X)), rtol=0, atol=1e-14)
        np.testing.assert_allclose(jr(X) @ jr_inv(X), np.eye(X.size), rtol=0, atol=1e-13)
        np.testing.assert_allclose(jr_inv(X), np.linalg.inv(ad_series(ad(X))), atol=1e-13)


def rkmk4(group, eta, g0, t_end, n):
    """RKMK with the classical RK4 tableau on Theta' = J_r(Theta)^-1 eta(t), g <- g0 exp(Theta)."""
    exp, jr_inv = group[2], group[6]
    g, h = g0.copy(), t_end / n
    for i in range(n):
        t = i * h
        k1 = eta(t)
        k2 = jr_inv(0.5 * h * k1) @ eta(t + 0.5 * h)
        k3 = jr_inv(0.5 * h * k2) @ eta(t + 0.5 * h)
        k4 = jr_inv(h * k3) @ eta(t + h)
        g = g @ exp(h / 6 * (k1 + 2 * k2 + 2 * k3 + k4))
    return g


def eta_of_t(n):
    """Return a smooth time-varying body twist eta(t) (rates up to ~2 rad/s)."""
    def eta(t):
        full = np.array([1.5 * math.sin(2 * t), 1.0 + 0.5 * math.cos(t), 0.8 * t,
                         0.3 + t, math.cos(3 * t), -0.5 * t * t])
        return full[:n] if n == 6 else full[[2, 3, 4]]
    return eta


@pytest.mark.parametrize('group', [SE3, SE2], ids=['se3', 'se2'])
def test_rkmk4_constant_twist_is_exact(group):
    """With a constant eta the exact solution is g0 exp(t eta); RKMK reproduces it."""
    rng = np.random.default_rng(12)
    g0, eta = group[9](rng), group[8](rng, 2.0)
    g = rkmk4(group, lambda t: eta, g0, 1.7, 7)
    np.testing.assert_allclose(g, g0 @ group[2](1.7 * eta), atol=1e-13)


@pytest.mark.parametrize('group', [SE3, SE2], ids=['se3', 'se2'])
def test_rkmk4_time_varying_twist_order_four(group):
    """RKMK4 vs solve_ivp (DOP853, rtol 1e-12) of G' = G hat(eta(t)): order ~4, R orthonormal."""
    hat = group[0]
    rng = np.random.default_rng(13)
    g0 = group[9](rng)
    m = len(g0)
    eta = eta_of_t(6 if m == 4 else 3)
    t_end = 2.0
    ref = solve_ivp(lambda t, y: (y.reshape(m, m) @ hat(eta(t))).ravel(), (0, t_end), g0.ravel(),
                    method='DOP853', rtol=1e-12, atol=1e-14).y[:, -1].reshape(m, m)
    errors = []
    for n in (40, 80):
        g = rkmk4(group, eta, g0, t_end, n)
        R = g[:-1, :-1]
        np.testing.assert_allclose(R.T @ R, np.eye(m - 1), rtol=0, atol=1e-13)
        np.testing.assert_array_equal(g[-1], np.eye(m)[-1])
        errors.append(np.abs(g - ref).max())
    assert errors[0] < 1e-4
    assert 3.6 < math.log2(errors[0] / errors[1]) < 4.4, errors


def test_quaternion_matrix_round_trip_against_scipy():
    """matrix_from_quat / quat_from_matrix equal scipy's Rotation ((x, y, z, w) reordered)."""
    rng = np.random.default_rng(14)
    rotations = list(Rotation.random(50, random_state=rng))
    # Near-pi rotations about each axis exercise every branch of Shepperd's method.
    rotations += [Rotation.from_rotvec((math.pi - 1e-9) * e) for e in np.eye(3)]
    rotations += [Rotation.from_rotvec(1e-10 * unit(rng))]
    for rot in rotations:
        xyzw = rot.as_quat()
        wxyz = np.roll(xyzw, 1) * (1.0 if xyzw[3] >= 0 else -1.0)
        np.testing.assert_allclose(lie.matrix_from_quat(wxyz), rot.as_matrix(), atol=1e-15)
        q = lie.quat_from_matrix(rot.as_matrix())
        assert q[0] >= 0.0
        np.testing.assert_allclose(q, wxyz, atol=1e-14)


def test_quaternion_product_and_exp_update():
    """R(p q) = R(p) R(q); quat_exp_update equals R expm(h hat(omega)) for all step sizes."""
    rng = np.random.default_rng(15)
    for _ in range(20):
        p, q = unit(rng, 4), unit(rng, 4)
        np.testing.assert_allclose(lie.matrix_from_quat(lie.quat_multiply(p, q)),
                                   lie.matrix_from_quat(p) @ lie.matrix_from_quat(q), atol=1e-14)
        omega = rng.normal(size=3)
        for h in (1e-12, 1e-5, 1e-2, 0.7):
            q_new = lie.quat_exp_update(q, omega, h)
            assert np.linalg.norm(q_new) == pytest.approx(1.0, abs=1e-15)
            np.testing.assert_allclose(lie.matrix_from_quat(q_new),
                                       lie.matrix_from_quat(q) @ expm(h * lie.hat3(omega)),
                                       atol=1e-14)


def test_urdf_origin_against_scipy_and_back():
    """se3_from_origin(xyz, rpy) = [[R, xyz], [0, 1]] with R scipy's extrinsic 'xyz' Euler
    rotation (URDF: fixed-axis roll, pitch, yaw); se3_origin gives a pose's (xyz, rpy) back,
    the same pose to round-off, also at pitch = +-pi/2 (gimbal lock)."""
    rng = np.random.default_rng(21)
    for k in range(200):
        rpy = rng.uniform(-math.pi, math.pi, 3)
        if k % 4 == 0:
            rpy[1] = math.copysign(math.pi / 2, rpy[1])
        xyz = rng.normal(size=3)
        pose = lie.se3_from_origin(xyz, rpy)
        np.testing.assert_allclose(pose[:3, :3], Rotation.from_euler('xyz', rpy).as_matrix(),
                                   atol=1e-15)
        np.testing.assert_array_equal(pose[:3, 3], xyz)
        back = lie.se3_from_origin(*lie.se3_origin(pose))
        np.testing.assert_allclose(back, pose, atol=2e-15)


@pytest.mark.parametrize('direction', [(1, 0, 0), (0, 0, 2), (-0.3922, 0, 0.1333),
                                       (0.2, -0.7, 0.1), (-1, 1e-12, 0), (-1, 0, 0)])
def test_aligning_rotation_is_the_smallest(direction):
    """so3_aligning(d) turns e_x onto d/|d| by the angle between them about an axis normal
    to both (the geodesic: scipy's rotation vector of R is perpendicular to e_x and d, its
    length the angle); for d opposite to e_x, the half turn about e_z."""
    d = np.asarray(direction, dtype=float)
    d = d / np.linalg.norm(d)
    R = lie.so3_aligning(direction)
    np.testing.assert_allclose(R @ R.T, np.eye(3), atol=1e-15)
    np.testing.assert_allclose(R[:, 0], d, atol=1e-15)
    phi = Rotation.from_matrix(R).as_rotvec()
    assert np.linalg.norm(phi) == pytest.approx(math.acos(np.clip(d[0], -1, 1)), abs=1e-7)
    if np.linalg.norm(np.cross((1, 0, 0), d)) > 1e-9:
        assert abs(phi @ d) < 1e-12 and abs(phi[0]) < 1e-12
    elif d[0] < 0:          # opposite, or next to it (continuous): the half turn about z
        np.testing.assert_allclose(R, np.diag([-1.0, -1.0, 1.0]), atol=1e-11)
