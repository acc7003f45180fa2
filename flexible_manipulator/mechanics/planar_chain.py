"""Rigid planar serial chain of revolute joints: recursive Newton-Euler dynamics.

The chain moves in the x-y plane of its base frame; every joint axis is the base z axis.
Link i is a rigid body attached at joint i, with its frame at the joint, its x axis along
the link, and

    length  l_i   [m]       distance from joint i to joint i+1 (or to the tool frame),
    mass    m_i   [kg],
    com     c_i   [m]       centre of mass on the link's x axis, measured from joint i,
    inertia I_i   [kg m^2]  about the centre of mass, normal to the plane,
    damping d_i   [N m s]   viscous friction of joint i.

Generalized coordinates are the relative joint angles q [rad] and rates v = q' [rad/s].
The equations of motion are

    M(q) v' + h(q, v) = tau,    h = C(q, v) v + g(q) + D v,

with tau the joint torques [N m]. Inverse dynamics is the recursive Newton-Euler
algorithm in the plane (SE(2) twists (omega, v_x, v_y) of each link frame); gravity
enters as an upward acceleration of the base, so g(q) needs no separate pass.

`PlanarChainModel` holds the constant description; `PlanarChainData` the workspace that
every function writes into, so repeated calls do not allocate (Pinocchio's model/data).
"""

from dataclasses import dataclass
import math

import numpy as np


@dataclass(frozen=True)
class RigidLink:
    """Constant description of one rigid link and the revolute joint that drives it."""

    name: str
    joint: str
    length: float
    mass: float
    com: float
    inertia: float
    damping: float = 0.0
    effort_limit: float = math.inf
    velocity_limit: float = math.inf
    lower: float = -math.inf
    upper: float = math.inf


class PlanarChainModel:
    """Constant description of a planar serial chain (never written by the algorithms)."""

    def __init__(self, name, links, gravity_base=(0.0, 0.0, 0.0), base_frame='base_link',
                 base_xyz=(0.0, 0.0, 0.0), base_rpy=(0.0, 0.0, 0.0), tool_frame='tool0'):
        """Build the model.

        :param links: sequence of `RigidLink`, from the base outwards.
        :param gravity_base: gravity acceleration in base-frame coordinates [m/s^2]; only
            its in-plane (x, y) part does work, the normal part is carried by the bearings.
        :param base_xyz, base_rpy: pose of the base frame in the world [m, rad] (URDF
            fixed-axis roll-pitch-yaw); used for TF and the robot description only.
        """
        self.name = name
        self.base_frame = base_frame
        self.base_xyz = np.array(base_xyz, dtype=float)
        self.base_rpy = np.array(base_rpy, dtype=float)
        self.tool_frame = tool_frame
        self.links = tuple(links)
        n = len(self.links)
        self.nq = self.nv = self.nu = n
        self.joint_names = tuple(link.joint for link in self.links)
        self.link_names = tuple(link.name for link in self.links)
        self.length = np.array([link.length for link in self.links])
        self.mass = np.array([link.mass for link in self.links])
        self.com = np.array([link.com for link in self.links])
        self.inertia = np.array([link.inertia for link in self.links])
        self.damping = np.array([link.damping for link in self.links])
        self.effort_limit = np.array([link.effort_limit for link in self.links])
        self.velocity_limit = np.array([link.velocity_limit for link in self.links])
        self.lower = np.array([link.lower for link in self.links])
        self.upper = np.array([link.upper for link in self.links])
        self.gravity_base = np.array(gravity_base, dtype=float)
        # Plain Python floats for the scalar recursion: indexing a NumPy array returns a
        # boxed NumPy scalar, which costs more than the arithmetic it feeds.
        self._rows = [(link.length, link.mass, link.com, link.inertia, link.damping)
                      for link in self.links]

    def create_data(self):
        """Return a fresh workspace for this model."""
        return PlanarChainData(self)

    def forward_dynamics(self, data, q, v, u):
        """Accelerations under actuator efforts ``u`` (one torque per joint); see below."""
        return forward_dynamics(self, data, q, v, u)

    def mass_matrix(self, data, q):
        """M(q); see `mass_matrix`."""
        return mass_matrix(self, data, q)

    def bias_forces(self, data, q, v):
        """h(q, v); see `bias_forces`."""
        return bias_forces(self, data, q, v)

    def frame_poses(self, data, q):
        """Planar poses of the link frames and the tool; see `frame_poses`."""
        return frame_poses(self, data, q)


class PlanarChainData:
    """Workspace of a `PlanarChainModel`: every algorithm writes its result here."""

    def __init__(self, model):
        """Allocate all buffers once, sized for ``model``."""
        n = model.nv
        self.tau = np.zeros(n)            # inverse dynamics result [N m]
        self.mass_matrix = np.zeros((n, n))
        self.bias = np.zeros(n)           # h(q, v) [N m]
        self.acceleration = np.zeros(n)   # forward dynamics result [rad/s^2]
        self.frames = np.zeros((n + 1, 3))  # (x, y, theta) of joint frames and the tool
        self.unit = np.zeros(n)
        self.zero = np.zeros(n)
        # Per-link intermediate values of the recursion (Python lists of floats).
        self._cos = [0.0] * n
        self._sin = [0.0] * n
        self._alpha = [0.0] * n
        self._acc_com = [(0.0, 0.0)] * n


def rnea(model, data, q, v, a, with_gravity=True, with_damping=True):
    """Inverse dynamics tau = M(q) a + C(q, v) v + g(q) + D v (recursive Newton-Euler).

    Forward pass (base to tip), link i with absolute angle theta_i = q_1 + ... + q_i:
        omega_i = sum v,  alpha_i = sum a,
        a_C,i   = a_O,i + alpha_i k x (c_i e_i) - omega_i^2 c_i e_i,
        a_O,i+1 = a_O,i + alpha_i k x (l_i e_i) - omega_i^2 l_i e_i,
    with a_O,1 = -g (gravity as an upward base acceleration).
    Backward pass (tip to base), joint force f_i and moment n_i about joint i:
        f_i = m_i a_C,i + f_i+1,
        n_i = I_i alpha_i + c_i e_i x m_i a_C,i + l_i e_i x f_i+1 + n_i+1,
        tau_i = n_i + d_i v_i.
    Writes and returns ``data.tau``.
    """
    if with_gravity:
        ax, ay = -model.gravity_base[0], -model.gravity_base[1]
    else:
        ax = ay = 0.0
    theta = omega = alpha = 0.0
    cos_, sin_, alpha_, acc_com = data._cos, data._sin, data._alpha, data._acc_com
    for i, (length, _, com, _, _) in enumerate(model._rows):
        theta += q[i]
        omega += v[i]
        alpha += a[i]
        c, s = math.cos(theta), math.sin(theta)
        w2 = omega * omega
        cos_[i], sin_[i], alpha_[i] = c, s, alpha
        acc_com[i] = (ax - alpha * s * com - w2 * c * com, ay + alpha * c * com - w2 * s * com)
        ax += -alpha * s * length - w2 * c * length
        ay += alpha * c * length - w2 * s * length
    fx = fy = moment = 0.0
    tau = data.tau
    for i in range(model.nv - 1, -1, -1):
        length, mass, com, inertia, damping = model._rows[i]
        c, s = cos_[i], sin_[i]
        max_, may_ = mass * acc_com[i][0], mass * acc_com[i][1]
        moment += (inertia * alpha_[i] + com * (c * may_ - s * max_)
                   + length * (c * fy - s * fx))
        fx += max_
        fy += may_
        tau[i] = moment + (damping * v[i] if with_damping else 0.0)
    return tau


def mass_matrix(model, data, q):
    """Joint-space mass matrix M(q) [kg m^2], column j = rnea(q, 0, e_j) without gravity.

    Writes and returns ``data.mass_matrix`` (symmetric positive definite).
    """
    unit, zero, out = data.unit, data.zero, data.mass_matrix
    for j in range(model.nv):
        unit[j] = 1.0
        out[:, j] = rnea(model, data, q, zero, unit, with_gravity=False, with_damping=False)
        unit[j] = 0.0
    return out


def bias_forces(model, data, q, v):
    """Bias forces h(q, v) = C(q, v) v + g(q) + D v [N m]; writes ``data.bias``."""
    data.bias[:] = rnea(model, data, q, v, data.zero)
    return data.bias


def forward_dynamics(model, data, q, v, tau):
    """Joint accelerations v' = M(q)^-1 (tau - h(q, v)) [rad/s^2]; writes ``data.acceleration``."""
    rhs = tau - bias_forces(model, data, q, v)
    data.acceleration[:] = np.linalg.solve(mass_matrix(model, data, q), rhs)
    return data.acceleration


def frame_poses(model, data, q):
    """Planar poses (x [m], y [m], theta [rad]) in the base frame of every link frame.

    Row i < n is the frame of link i (at joint i); row n is the tool frame at the tip.
    Writes and returns ``data.frames``.
    """
    x = y = theta = 0.0
    out = data.frames
    for i, row in enumerate(model._rows):
        theta += q[i]
        out[i, 0], out[i, 1], out[i, 2] = x, y, theta
        x += row[0] * math.cos(theta)
        y += row[0] * math.sin(theta)
    out[model.nv, 0], out[model.nv, 1], out[model.nv, 2] = x, y, theta
    return out


def potential_energy(model, data, q):
    """Gravitational potential energy V = -sum m_i g . p_C,i [J] (zero at the base)."""
    frames = frame_poses(model, data, q)
    gx, gy = model.gravity_base[0], model.gravity_base[1]
    energy = 0.0
    for i, (_, mass, com, _, _) in enumerate(model._rows):
        x, y, theta = frames[i]
        energy -= mass * (gx * (x + com * math.cos(theta)) + gy * (y + com * math.sin(theta)))
    return energy


def kinetic_energy(model, data, q, v):
    """Kinetic energy T = v^T M(q) v / 2 [J]."""
    return 0.5 * float(v @ mass_matrix(model, data, q) @ v)
