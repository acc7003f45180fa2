"""The readable NumPy reference of a Cosserat chain: M, h, v', energy, section frames.

Tests check the compiled kernels (``model.kernels``, ``model.articulated``) against
it; nothing at run time calls it. One forward pass (Newton-Euler recursion in body
twists, angular first) gives every body b (hubs, rod nodes, a beam's point masses,
payloads) its pose, twist eta_b, Jacobian J_b (eta_b = J_b v) and bias acceleration
alpha_b (eta'_b = J_b v' + alpha_b; gravity enters as an upward base acceleration). Then,
with the body inertia matrices M_b (6 x 6, about the body frame),

    M = sum_b J_b^T M_b J_b + diag(armature),
    h = sum_b J_b^T (M_b alpha_b - ad*_{eta_b} M_b eta_b) + K q + D v + joint damping,

the Poincare (Newton-Euler on SE(3)) equations projected on the coordinates; their cost is
O(bodies nv^2). A link's steps from its joint frame: a rod's Magnus steps
(``cosserat_rod.steps_at``), a floating-frame beam's shift and two bending turns
(``modal_beam``), a rigid link's translation by its length, a flexible joint's turn by
its deflection and translation (its hub carried to its tip: ``links.flexible_joint``).
"""

import numpy as np

from . import cosserat_rod
from .. import arguments, lie


def link_steps(link, q, v=None):
    """Per segment: relative pose (4x4), S_k (6 x size), c_k (6) (`cosserat_rod.steps_at`).

    A rigid link is one segment: the translation by its length, no strain; a link behind
    a flexible joint two: its turn by the gear's deflection (`gear_turn`), the translation.
    """
    if link.element is not None:
        turn, motion = gear_turn(link, q)
        return (np.array([turn, _translation(link.length)]),
                np.array([motion, np.zeros((6, 1))]), np.zeros((2, 6)))
    if link.rod is None:
        return _translation(link.length)[None], np.zeros((1, 6, 0)), np.zeros((1, 6))
    return cosserat_rod.steps_at(link.rod, q, v)


def gear_turn(link, q):
    """Return exp(delta a) (4x4) and its twist per unit delta' (6 x 1): a flexible joint's.

    delta = q[0], the gear's deflection; a the joint's motion (the same axis as the
    motor's joint: the link's angle is theta + delta).
    """
    return lie.se3_exp(link.motion * q[0]), link.motion[:, None].copy()


def modal_steps(link, q, v, X, tables=None):
    """(poses, S, c) of the steps from the joint frame to a modal section at X [m].

    Trans(X e1 + u(X, q)), Rot(e3, psi_z), Rot(e2, psi_y) (``modal_beam``): relative
    poses (4x4), their twists per unit q' in the frame reached (6 x count), and their
    rate terms c (6): (0, -(q'^T G q') e1) for the translation, zero for the turns
    (psi is linear in q). ``tables``: (W, W', G) at X if already known.
    """
    beam = link.beam
    phi, slope, g = beam.section(X) if tables is None else tables
    shift, motion, rate = modal_shift(link, q, v, X, phi, g)
    turn_z, turn_y = np.zeros((6, beam.count)), np.zeros((6, beam.count))
    turn_z[2] = np.where(beam.planes == 1, slope, 0.0)
    turn_y[1] = np.where(beam.planes == 2, -slope, 0.0)
    poses = [shift] + [lie.se3_exp(S @ q) for S in (turn_z, turn_y)]
    return poses, [motion, turn_z, turn_y], [rate, np.zeros(6), np.zeros(6)]


def modal_shift(link, q, v, X, phi, g):
    """Return the first of `modal_steps`, Trans(X e1 + u(X, q)), its S and c (v: or None)."""
    u, du = link.beam.displacement(phi, g, q)
    shift = _translation(X)
    shift[:3, 3] += u
    motion = np.zeros((6, link.beam.count))
    motion[3:] = du
    rate = np.zeros(6)
    if v is not None:
        rate[3] = -v @ g @ v
    return shift, motion, rate


def link_section_pose(link, q, X, poses=None):
    """Pose (4x4) of the section at X [m] in the joint frame; ``poses``: `link_steps`'."""
    poses = link_steps(link, q)[0] if poses is None else poses
    pose = np.eye(4)
    for step in section_steps(link, q, X, poses)[0]:
        pose = pose @ step
    return pose


def section_steps(link, q, X, poses=None):
    """(poses, S) of the steps from the joint frame to the section at X [m].

    With ``poses`` (of `link_steps`) given, only the poses are meaningful.
    """
    link.check_abscissa(X)
    if link.beam is not None:
        return modal_steps(link, q, None, X)[:2]
    if link.element is not None:
        turn, motion = gear_turn(link, q)
        return [turn, _translation(X)], [motion, np.zeros((6, 1))]
    if link.rod is None:
        return [_translation(X)], [np.zeros((6, 0))]
    rod = link.rod
    if poses is None:
        poses, motions, _ = cosserat_rod.steps_at(rod, q)
    else:
        motions = [None] * len(poses)     # poses only
    k = min(int(np.searchsorted(rod.nodes, X, side='right')) - 1, rod.segments - 1)
    poses, motions = list(poses[:k]), list(motions[:k])
    h = X - rod.nodes[k]
    if h > 0.0:
        pose, motion = cosserat_rod.partial_step(rod, q, rod.nodes[k], h)
        poses.append(pose)
        motions.append(motion)
    return poses, motions


class Bodies:
    """Result of a forward pass: per body its pose (world), twist, bias, Jacobian, inertia."""

    def __init__(self):
        """Start empty; ``add`` appends one body."""
        self.poses, self.twists, self.biases, self.jacobians, self.inertias = [], [], [], [], []

    def add(self, pose, twist, bias, jacobian, inertia):
        """Append a body (copies of the running frame state)."""
        self.poses.append(pose.copy())
        self.twists.append(twist.copy())
        self.biases.append(bias.copy())
        self.jacobians.append(jacobian.copy())
        self.inertias.append(inertia)


def forward_pass(chain, q, v=None, gravity=True):
    """Bodies of the chain at (q, v) (module doc); v None: at rest, bias = gravity only.

    A floating base is the first body: its twist is v's last six entries (body axes,
    angular first), its Jacobian their identity columns.
    """
    q, v = chain._check(q, v)
    rates = np.zeros(chain.nv) if v is None else v
    bodies = Bodies()
    pose = chain.base_pose(q)
    twist, bias, jacobian = np.zeros(6), np.zeros(6), np.zeros((6, chain.nv))
    if gravity:
        bias[3:] = -pose[:3, :3].T @ chain.gravity     # upward base acceleration
    if chain.floating_base is not None:
        jacobian[:, chain.nv - 6:] = np.eye(6)
        twist = rates[chain.nv - 6:].copy()
        bodies.add(pose, twist, bias, jacobian, chain.base_inertia)
    state = pose, twist, bias, jacobian
    for j, link in enumerate(chain.parts):
        state = _moved(link.offset, *state)
        i = chain.joint_index[j]
        if i >= 0:
            motion = np.zeros((6, chain.nv))
            motion[:, i] = link.motion
            state = _advance(state, link.joint_pose(q[i]), motion, np.zeros(6), rates)
        bodies.add(*state, link.hub)
        cols = chain._strains(j)
        modes = None if v is None else v[cols]
        if link.beam is not None:
            beam = link.beam
            for x, phi, g, inertia in zip(beam.x, beam.phi, beam.g, link.point_inertias()):
                shift, motion, offset = modal_shift(link, q[cols], modes, x, phi, g)
                bodies.add(*_advance(state, shift, _wide(chain, cols, motion), offset,
                                     rates), inertia)
            steps = zip(*modal_steps(link, q[cols], modes, link.length))
            inertias = [None] * 3
        else:
            steps = list(zip(*link_steps(link, q[cols], modes)))
            inertias = [None] * len(steps) if link.rod is None else link.node_inertias()
        for (step, motion, offset), inertia in zip(steps, inertias):
            state = _advance(state, step, _wide(chain, cols, motion), offset, rates)
            if inertia is not None and inertia[5, 5] > 0.0:
                bodies.add(*state, inertia)
        bodies.add(*state, link.payload)
    return bodies


def _wide(chain, cols, motion):
    """Widen a step's twist per unit rate of its link's coordinates ``cols`` to 6 x nv."""
    out = np.zeros((6, chain.nv))
    out[:, cols] = motion
    return out


def mass_matrix(chain, q):
    """M(q) (nv x nv) [kg m^2, kg, ...] from `forward_pass` (the readable reference)."""
    bodies = forward_pass(chain, q, gravity=False)
    M = sum(J.T @ I @ J for J, I in zip(bodies.jacobians, bodies.inertias))
    for j, link in enumerate(chain.parts):
        if chain.joint_index[j] >= 0:
            M[chain.joint_index[j], chain.joint_index[j]] += link.armature
    return M


def bias_forces(chain, q, v, gravity=True):
    """h(q, v) = C(q, v) v + g(q) + K q + D v (nv) [N m, N] from `forward_pass`."""
    q, v = chain._check(q, v)
    bodies = forward_pass(chain, q, v, gravity)
    h = chain.stiffness @ chain._shape(q) + chain.damping @ v
    for J, I, eta, alpha in zip(bodies.jacobians, bodies.inertias, bodies.twists,
                                bodies.biases):
        momentum = I @ eta
        h += J.T @ (I @ alpha - lie.se3_ad(eta).T @ momentum)
    return h


def forward_dynamics(chain, q, v, u):
    """Return v' = M^-1 (B u - h) for the efforts u (nu) on the joints (reference)."""
    u = arguments.vector('u', u, chain.nu, chain.name, 'joint efforts (nu)')
    force = -bias_forces(chain, q, v)
    force[:chain.n_joints] += u
    return np.linalg.solve(mass_matrix(chain, q), force)


def potential_energy(chain, q):
    """Elastic (1/2) q^T K q plus gravity -sum_b m_b g . c_b [J] from `forward_pass`."""
    q, _ = chain._check(q)
    energy = 0.5 * chain._shape(q) @ chain.stiffness @ chain._shape(q)
    bodies = forward_pass(chain, q, gravity=False)
    for pose, I in zip(bodies.poses, bodies.inertias):
        mass = I[5, 5]
        if mass > 0.0:
            com = lie.vee3(I[:3, 3:] / mass)                 # hat(c) = I_12 / m
            energy -= mass * chain.gravity @ (pose[:3, :3] @ com + pose[:3, 3])
    return float(energy)


def link_frames(chain, q):
    """World poses (4x4) of each link's joint frame and tip frame: two lists (reference)."""
    q, _ = chain._check(q)
    roots, tips, pose = [], [], chain.base_pose(q)
    for j, link in enumerate(chain.parts):
        pose = pose @ link.offset @ chain._joint_pose(j, q)
        roots.append(pose)
        for step in section_steps(link, q[chain._strains(j)], link.length)[0]:
            pose = pose @ step
        tips.append(pose)
    return roots, tips


def section_pose(chain, q, j, X):
    """World pose (4x4) of the section at arc length X [m] of link j (NumPy reference)."""
    j = arguments.link_index(j, len(chain.parts), chain.name)
    pose = link_frames(chain, q)[0][j]
    for step in section_steps(chain.parts[j], q[chain._strains(j)], X)[0]:
        pose = pose @ step
    return arguments.checked(pose, 'section_pose')


def section_jacobian(chain, q, j, X):
    """Body Jacobian (6 x nv) of the section at X [m] of link j (NumPy reference)."""
    j = arguments.link_index(j, len(chain.parts), chain.name)
    q, _ = chain._check(q)
    jacobian = np.zeros((6, chain.nv))
    if chain.floating_base is not None:
        jacobian[:, chain.nv - 6:] = np.eye(6)
    zero = np.zeros(6)
    for i, link in enumerate(chain.parts[:j + 1]):
        if i > 0:           # through link i - 1 to its tip
            prev = chain.parts[i - 1]
            cols = chain._strains(i - 1)
            for pose, motion in zip(*section_steps(prev, q[cols], prev.length)):
                jacobian = _moved(pose, np.eye(4), zero, zero, jacobian)[3]
                jacobian[:, cols] += motion
        jacobian = _moved(link.offset @ chain._joint_pose(i, q), np.eye(4), zero, zero,
                          jacobian)[3]
        if chain.joint_index[i] >= 0:
            jacobian[:, chain.joint_index[i]] += link.motion
    cols = chain._strains(j)
    for pose, motion in zip(*section_steps(chain.parts[j], q[cols], X)):
        jacobian = _moved(pose, np.eye(4), zero, zero, jacobian)[3]
        jacobian[:, cols] += motion
    return arguments.checked(jacobian, 'section_jacobian')


def _translation(x):
    """Pose (4x4) of the translation by x [m] along the link's x axis."""
    pose = np.eye(4)
    pose[0, 3] = x
    return pose


def _advance(state, g, motion, offset, rates):
    """Frame state (pose, twist, bias, Jacobian) after a step g (4x4) moving with ``motion``.

    The step's relative twist is s = motion v (6 x nv, in the frame reached) and its
    relative acceleration s' = motion v' + ``offset``: eta = Ad_g^-1 eta_parent + s,
    alpha = Ad_g^-1 alpha_parent + ad_eta s + offset, J = Ad_g^-1 J_parent + motion.
    """
    pose, twist, bias, jacobian = _moved(g, *state)
    step = motion @ rates
    twist = twist + step
    return pose, twist, bias + lie.se3_ad(twist) @ step + offset, jacobian + motion


def _moved(g, pose, twist, bias, jacobian):
    """Carry the frame state to the frame g (4x4) relative to it (no relative motion)."""
    X = lie.se3_adjoint_inv(g)
    return pose @ g, X @ twist, X @ bias, X @ jacobian
