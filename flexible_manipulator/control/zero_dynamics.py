"""Internal (zero) dynamics of a servo realization on a flexible arm, linearized at rest.

Linearized plant about a configuration q0 at rest (v = 0):

    M x'' + D x' + K x = B u,    y = C x,

M the mass matrix at q0, (K0, D) = ``model.elastic_coefficients()`` (D: joint friction and
modal damping), K = dh/dq at v = 0 by central differences: the modal stiffness K0 plus any
gravity stiffness (none when gravity is normal to the plane of motion). B = [I; 0]:
joints are actuated, flexible modes are not.

A servo realization keeps the output y = C x at its program (m = nu rows). On y = 0 the
motion is x = N z, N a basis of null(C), and the unforced part of the equations is their
projection by L, a basis of the left null space of B (L B = 0):

    (L M N) z'' + (L D N) z' + (L K N) z = 0,

the zero dynamics; their eigenvalues s are the transmission zeros of C (s^2 M + s D +
K)^-1 B. L M N is invertible iff C M^-1 B is (an x in null(C) with M x = B u has
C M^-1 B u = 0): the realizability condition of the servo. The output is minimum phase if
no zero lies in the open right half plane; undamped zeros +-i omega sit on the axis (a
zero pair +-sigma on the real axis means the internal dynamics diverge as e^(sigma t)).

Classic facts this reproduces (see the tests): with the joint angle as output the zeros
are the clamped-free frequencies of the link; the tip of a flexible link on a hub is a
non-minimum-phase output. Moving the output point inward, the lambda-point at x = lambda L
(or the redefined joint output y = theta + w(lambda L)/(lambda L)), keeps the model's zero
dynamics stable up to a limit lambda*. In an N-mode model lambda* falls roughly like 1/N:
the continuum beam has infinitely many non-minimum-phase zeros for any non-collocated
output (Spector & Flashner 1990), so lambda* is a property of the modelled dynamics.
"""

from dataclasses import dataclass

import numpy as np

FINITE_DIFFERENCE_STEP = 1e-6


def linearize(model, q0=None):
    """Return (M, D, K, B) of the model at rest at q0 (zeros by default); see module doc."""
    nv = model.nv
    q0 = np.zeros(nv) if q0 is None else np.asarray(q0, dtype=float)
    data = model.create_data()
    M = model.mass_matrix(data, q0).copy()
    zero = np.zeros(nv)
    K = np.zeros((nv, nv))
    q = q0.copy()
    for i in range(nv):
        step = FINITE_DIFFERENCE_STEP * max(1.0, abs(q0[i]))
        q[i] = q0[i] + step
        plus = model.bias_forces(data, q, zero).copy()
        q[i] = q0[i] - step
        K[:, i] = (plus - model.bias_forces(data, q, zero)) / (2.0 * step)
        q[i] = q0[i]
    # The Hessian of a potential is symmetric; the average removes finite-difference noise.
    K = 0.5 * (K + K.T)
    D = np.diag(model.elastic_coefficients()[1])
    return M, D, K, model.input_matrix()


def _null_space(matrix, rcond=1e-12):
    """Orthonormal basis (columns) of the null space of ``matrix``."""
    _, s, vt = np.linalg.svd(matrix)
    rank = int(np.count_nonzero(s > rcond * (s[0] if s.size else 0.0)))
    return vt[rank:].T


def _singular(matrix, rcond):
    """Whether ``matrix`` is singular to ``rcond`` once its rows, then columns, have unit norm.

    The scaling first: coordinates of other units (an assumed mode carrying a link, a
    high strain order) must not read as singular.
    """
    rows = np.linalg.norm(matrix, axis=1, keepdims=True)
    if not np.all(rows > 0.0):
        return True
    scaled = matrix / rows
    scaled = scaled / np.linalg.norm(scaled, axis=0, keepdims=True)
    s = np.linalg.svd(scaled, compute_uv=False)
    return bool(s[-1] <= rcond * s[0])


def zero_dynamics_matrix(M, D, K, B, C, rcond=1e-9):
    """First-order matrix of the zero dynamics, state (z, z') (module doc).

    Raises ValueError if C is not square with B (m != nu) or if C M^-1 B is singular
    (the output cannot be kept by the inputs: not realizable).
    """
    m, nu = C.shape[0], B.shape[1]
    if m != nu:
        raise ValueError(f'zero dynamics need as many outputs as inputs: {m} outputs, {nu} '
                         'inputs')
    N = _null_space(C)
    L = _null_space(B.T).T
    if N.shape[1] != L.shape[0]:
        raise ValueError(f'output rows are dependent: rank {M.shape[0] - N.shape[1]} < {m}')
    Mz, Dz, Kz = L @ M @ N, L @ D @ N, L @ K @ N
    if Mz.size and _singular(Mz, rcond):
        gain = C @ np.linalg.solve(M, B)
        raise ValueError(f'C M^-1 B is singular (det {np.linalg.det(gain):.3g}): the '
                         'output is not realizable by the inputs (a zero at infinity)')
    k = Mz.shape[0]
    out = np.zeros((2 * k, 2 * k))
    out[:k, k:] = np.eye(k)
    out[k:, :k] = -np.linalg.solve(Mz, Kz)
    out[k:, k:] = -np.linalg.solve(Mz, Dz)
    return out


def transmission_zeros(M, D, K, B, C):
    """Zeros s [rad/s] of C (s^2 M + s D + K)^-1 B, sorted by |s| (module doc)."""
    zeros = np.linalg.eigvals(zero_dynamics_matrix(M, D, K, B, C))
    return zeros[np.argsort(np.abs(zeros), kind='stable')]


def unstable_zeros(zeros, tolerance=1e-7):
    """Zeros with Re s > tolerance max(1, |s|) (the axis allows for round-off)."""
    return zeros[zeros.real > tolerance * np.maximum(1.0, np.abs(zeros))]


def point_output(model, link, fraction, axes=(0, 1), q0=None):
    """C rows (m x nv) of the base-frame position of the point at x = fraction L of a link.

    The linearization of p(q) about q0: the linear rows ``3 + axes`` of the section
    Jacobian.
    """
    q0 = np.zeros(model.nv) if q0 is None else np.asarray(q0, dtype=float)
    x = fraction * model.links[link].length
    J = model.section_kinematics(model.create_data(), q0, np.zeros(model.nv), link, x).J
    return J[3 + np.asarray(axes)]


def link_angle_output(model, fractions):
    """C (n_joints x nv) of the redefined joint outputs y_j = theta_j + w_j(l_j) / l_j.

    Here l_j = lambda_j L_j and w_j is the deflection of link j at l_j along its lateral
    direction axis_j x e_x (the direction a point of the link moves when the joint turns),
    linearized about the straight link: w_j = n_j . dp(l_j)/de_j e_j over link j's own
    elastic coordinates e_j (assumed modes: the mode shapes at l_j; Cosserat strains: the
    section Jacobian's linear rows), n_j the lateral direction in base components at q = 0.
    For a single link on a hub, l y is the lateral displacement of the lambda-point. Rigid
    links and prismatic joints give y_j = q_j. ``fractions``: one lambda per link, or one
    for all, each in (0, 1]. Needs one joint per link (no fixed joints).
    """
    n = model.n_joints
    if n != len(model.links):
        raise ValueError(f'model {model.name!r}: redefined joint outputs need one joint per '
                         f'link ({n} joints, {len(model.links)} links)')
    fractions = np.broadcast_to(np.asarray(fractions, dtype=float), (n,))
    C = np.zeros((n, model.nv))
    data, rest = model.create_data(), np.zeros(model.nv)
    for j in range(n):
        C[j, j] = 1.0
        count = model.modes_of(j)[0]
        if count == 0 or model.links[j].joint.type != 'revolute':
            continue
        if not 0.0 < fractions[j] <= 1.0:
            raise ValueError(f'lambda for link {j} must be in (0, 1], got {fractions[j]}')
        reach = fractions[j] * model.links[j].length
        section = model.section_kinematics(data, rest, rest, j, reach)
        # At q = 0 the section's axes are the joint frame's (the link is straight).
        lateral = section.R @ np.cross(model.joint_axis(j), (1.0, 0.0, 0.0))
        start = model.mode_start(j)
        C[j, start:start + count] = lateral @ section.J[3:, start:start + count] / reach
    return C


@dataclass
class ZeroDynamicsReport:
    """Zeros of one output choice and what they mean for a servo realization."""

    label: str
    zeros: np.ndarray
    unstable: np.ndarray
    lambda_limit: float = None
    redefined_limit: float = None

    @property
    def minimum_phase(self):
        """True if no zero lies in the open right half plane."""
        return self.unstable.size == 0

    @property
    def message(self):
        """Verdict, the fastest unstable zero and the redefined outputs that are stable."""
        if self.minimum_phase:
            return (f'{self.label}: minimum phase ({self.zeros.size} zeros, none in the right '
                    'half plane); its servo realization has stable internal dynamics')
        text = (f'{self.label}: NON-MINIMUM PHASE, {self.unstable.size} zeros in the right '
                f'half plane (largest Re s = {self.unstable.real.max():.4g} rad/s): a servo '
                'realization of this program has unstable internal dynamics (the flexible '
                'modes diverge)')
        if self.lambda_limit is not None:
            text += (f'; the point at x = lambda L is minimum phase for lambda < '
                     f'{self.lambda_limit:.4g}' if self.lambda_limit > 0.0 else
                     '; no point of this link is minimum phase (the output carries the '
                     'deflection of flexible links before it)')
        if self.redefined_limit is not None and self.redefined_limit > 0.0:
            text += ('; redefined joint outputs y_j = theta_j + w_j(lambda L_j)/(lambda L_j) '
                     f'(link_angle_output) are minimum phase for lambda < '
                     f'{self.redefined_limit:.4g}')
        return text


def analyze_output(model, C, q0=None, damping=True, label='output'):
    """Zeros of output C at rest at q0 and the minimum-phase verdict."""
    M, D, K, B = linearize(model, q0)
    zeros = transmission_zeros(M, D if damping else 0.0 * D, K, B, C)
    return ZeroDynamicsReport(label, zeros, unstable_zeros(zeros))


def stable_fraction(stable, samples=100, iterations=30):
    """Largest lambda* in [0, 1] with ``stable(lambda)`` true on (0, lambda*).

    A scan over lambda = k / samples finds the first unstable value, then bisection refines
    the boundary. Returns 1.0 if every sample is stable, 0.0 if the first one is not.
    """
    lower, upper = 0.0, None
    for k in range(1, samples + 1):
        if not stable(k / samples):
            upper = k / samples
            break
        lower = k / samples
    if upper is None:
        return 1.0
    if lower == 0.0:
        return 0.0
    for _ in range(iterations):
        middle = 0.5 * (lower + upper)
        lower, upper = (middle, upper) if stable(middle) else (lower, middle)
    return lower


def lambda_limit(model, output, q0=None, damping=True, samples=200, iterations=40):
    """Largest lambda* in (0, 1] with stable zero dynamics for every lambda in (0, lambda*).

    ``output(lambda)`` returns C for that lambda. A scan over lambda = k / samples finds
    the first unstable value, then bisection refines the boundary. Returns 1.0 if every
    lambda is stable and 0.0 if the first sample already is not. An output that is not
    realizable at some lambda (a zero at infinity) counts as unstable there.
    """
    M, D, K, B = linearize(model, q0)
    if not damping:
        D = 0.0 * D

    def stable(lam):
        try:
            zeros = transmission_zeros(M, D, K, B, output(lam))
        except ValueError:
            return False
        return unstable_zeros(zeros).size == 0

    return stable_fraction(stable, samples, iterations)


def assess_point_program(model, link, fraction, axes=(0, 1), q0=None, damping=True):
    """Report on a program for the point at x = fraction L of ``link`` (servo realization).

    If the point is non-minimum phase (e.g. the tip, fraction = 1) the report carries the
    lambda limit of points on the same link and of the redefined joint outputs, so that the
    message offers a stable replacement.
    """
    label = (f'point at x = {fraction:g} L of link {model.links[link].name!r} '
             f'(axes {tuple(axes)})')
    report = analyze_output(model, point_output(model, link, fraction, axes, q0), q0,
                            damping, label)
    if not report.minimum_phase:
        report.lambda_limit = lambda_limit(
            model, lambda lam: point_output(model, link, lam, axes, q0), q0, damping)
        if model.n_joints == model.nu:
            report.redefined_limit = lambda_limit(
                model, lambda lam: link_angle_output(model, lam), q0, damping)
    return report
