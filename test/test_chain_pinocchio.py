"""Rigid limit of the chain model against Pinocchio, built by hand for the same robot.

Pinocchio is an independent implementation of Featherstone's algorithms (CRBA, RNEA, ABA,
forward kinematics, frame Jacobians, energies). Each robot below is written once as a list
of `Link` and translated here into a `pinocchio.Model` with Pinocchio's own SE3 and
roll-pitch-yaw (never the package's transforms): joint j sits at Trans(L_(j-1) e_x) SE3(rpy,
xyz) of the previous joint, a link body is an `Inertia` on its joint, a payload one at
Trans(L e_x), and a beam (joint rows at zero modal state only) a rod of mass rho A L with its
centre at L/2 and inertia diag(0, m L^2 / 12, m L^2 / 12). Pinocchio orders spatial vectors
(linear, angular); the chain's Jacobians are (angular, linear).

Tolerance: |ours - pinocchio| <= 1e-9 max(1, max |pinocchio|) on every compared array.
"""

from dataclasses import replace

import numpy as np
import pinocchio
import pytest

from flexible_manipulator.mechanics.link_description import Beam, Joint, Link, RigidBody
from flexible_manipulator.mechanics.links import chain_from_links

TOL = 1e-9
STATES = 20
SECTION = 0.37          # a mid-link section, as a fraction of the length


def random_body(rng, scale=1.0, planar=False):
    """Random mass, COM (off the x axis too) and SPD inertia A A^T + eps I about the COM."""
    a = rng.normal(size=(3, 3)) * 0.1 * scale
    com = rng.uniform(-0.3, 0.3, 3) * scale
    return RigidBody(rng.uniform(0.2, 3.0), tuple(com),
                     tuple(map(tuple, a @ a.T + 1e-3 * np.eye(3))))


def planar_chain(seed, n, gravity):
    rng = np.random.default_rng(seed)
    links = [Link(f'link{j}', Joint(f'joint{j}'), rng.uniform(0.2, 1.0), random_body(rng))
             for j in range(n)]
    return chain_from_links(f'planar{n}', links, gravity_base=gravity)


def spatial_chain(seed):
    """6 DOF: axes z, y, oblique, x, prismatic, z; random origins; payload on the last link."""
    rng = np.random.default_rng(seed)
    oblique = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
    joints = [('revolute', (0, 0, 1)), ('revolute', (0, 1, 0)), ('revolute', tuple(oblique)),
              ('revolute', (1, 0, 0)), ('prismatic', (0.6, 0.0, -0.8)), ('revolute', (0, 0, 1))]
    links = []
    for j, (kind, axis) in enumerate(joints):
        joint = Joint(f'joint{j}', kind, axis, tuple(rng.uniform(-0.2, 0.2, 3)),
                      tuple(rng.uniform(-np.pi, np.pi, 3)))
        links.append(Link(f'link{j}', joint, rng.uniform(0.1, 0.6), random_body(rng, 0.5),
                          payload=random_body(rng, 0.3) if j == 5 else RigidBody()))
    return chain_from_links('spatial6', links, gravity_base=(1.3, -2.1, -9.3))


def flexible_chain(seed):
    """Two spatial flexible links and a rigid one between them."""
    rng = np.random.default_rng(seed)
    beams = [Beam(1.5, (40.0, 25.0), (2, 1)), None, Beam(0.8, (10.0, 10.0), (1, 2))]
    axes = [(0, 0, 1), (0, 1, 0), (1, 0, 1)]
    links = [Link(f'link{j}', Joint(f'joint{j}', axis=axes[j], xyz=(0.0, 0.05, 0.1),
                                    rpy=(0.3, -0.2, 0.5)),
                  rng.uniform(0.4, 1.0), random_body(rng, 0.5), beams[j], random_body(rng, 0.2))
             for j in range(3)]
    return chain_from_links('flexible3', links, gravity_base=(0.4, -9.5, 1.1))


def to_pinocchio(chain):
    """The same rigid robot in Pinocchio, with frames 'tip<j>' and 'mid<j>' on every link.

    A floating base becomes a JointModelFreeFlyer at the world origin carrying the base body.
    """
    model = pinocchio.Model()
    parent, parent_length = 0, 0.0
    if chain.floating_base is not None:
        base = chain.floating_base
        parent = model.addJoint(0, pinocchio.JointModelFreeFlyer(), pinocchio.SE3.Identity(),
                                'base')
        model.appendBodyToJoint(parent, pinocchio.Inertia(
            base.mass, np.array(base.com), np.array(base.inertia)), pinocchio.SE3.Identity())
    for j, link in enumerate(chain.links):
        joint = link.joint
        axis = np.asarray(joint.axis, dtype=float) / np.linalg.norm(joint.axis)
        joint_model = (pinocchio.JointModelRevoluteUnaligned(axis) if joint.type == 'revolute'
                       else pinocchio.JointModelPrismaticUnaligned(axis))
        origin = pinocchio.SE3(pinocchio.rpy.rpyToMatrix(*joint.rpy),
                               np.array([parent_length, 0.0, 0.0]) + joint.xyz)
        parent = model.addJoint(parent, joint_model, origin, joint.name)
        tip = pinocchio.SE3(np.eye(3), np.array([link.length, 0.0, 0.0]))
        for body, placement in ((link.body, pinocchio.SE3.Identity()), (link.payload, tip)):
            model.appendBodyToJoint(parent, pinocchio.Inertia(
                body.mass, np.array(body.com), np.array(body.inertia)), placement)
        if link.beam is not None:
            m = link.beam.linear_density * link.length
            rod = np.diag([0.0, 1.0, 1.0]) * m * link.length ** 2 / 12.0
            model.appendBodyToJoint(parent, pinocchio.Inertia(
                m, np.array([link.length / 2.0, 0.0, 0.0]), rod), pinocchio.SE3.Identity())
        for name, x in (('tip', link.length), ('mid', SECTION * link.length)):
            model.addFrame(pinocchio.Frame(f'{name}{j}', parent, pinocchio.SE3(
                np.eye(3), np.array([x, 0.0, 0.0])), pinocchio.FrameType.OP_FRAME))
        parent_length = link.length
    model.gravity = pinocchio.Motion(np.asarray(chain.gravity_base), np.zeros(3))
    return model


CHAINS = {
    'planar2_inplane': lambda: planar_chain(1, 2, (0.0, -9.81, 0.0)),
    'planar2_outplane': lambda: planar_chain(2, 2, (2.0, -6.0, -7.5)),
    'planar4_inplane': lambda: planar_chain(3, 4, (-9.81, 0.0, 0.0)),
    'planar4_outplane': lambda: planar_chain(4, 4, (1.0, 3.0, -9.2)),
    'spatial6': lambda: spatial_chain(5),
}


class Case:
    """A chain, its workspace, the Pinocchio twin and its data."""

    def __init__(self, chain):
        self.chain, self.data = chain, chain.create_data()
        self.model = to_pinocchio(chain)
        self.pdata = self.model.createData()
        self.n = chain.n_joints

    def states(self, seed=0):
        """Random (q, v, a) on the joints (prismatic within +-0.3 m); modal entries zero."""
        rng = np.random.default_rng(seed)
        prismatic = np.array([link.joint.type == 'prismatic' for link in self.chain.links])
        for _ in range(STATES):
            q = np.where(prismatic, rng.uniform(-0.3, 0.3, self.n),
                         rng.uniform(-np.pi, np.pi, self.n))
            yield q, rng.normal(0.0, 2.0, self.n), rng.normal(0.0, 5.0, self.n)

    def full(self, x):
        """Joint vector padded with zero modal entries (length nv of the chain)."""
        return np.concatenate([x, np.zeros(self.chain.nv - self.n)])


@pytest.fixture(scope='module', params=sorted(CHAINS))
def rigid(request):
    return Case(CHAINS[request.param]())


@pytest.fixture(scope='module')
def flexible():
    return Case(flexible_chain(6))


def assert_close(ours, expected, what):
    ours, expected = np.asarray(ours, dtype=float), np.asarray(expected, dtype=float)
    scale = max(1.0, float(np.max(np.abs(expected))))
    error = float(np.max(np.abs(ours - expected)))
    assert error <= TOL * scale, (f'{what}: error {error:.3e} (scale {scale:.3e})\n'
                                  f'{ours}\n{expected}')


def pinocchio_mass(case, q):
    M = pinocchio.crba(case.model, case.pdata, q)
    return np.triu(M) + np.triu(M, 1).T


def check_joint_rows(case):
    """Joint rows of M, h and rnea (zero modal state) equal CRBA and RNEA of the twin."""
    c, d, n = case.chain, case.data, case.n
    for q, v, a in case.states():
        M = c.mass_matrix(d, case.full(q)).copy()
        assert_close(M[:n, :n], pinocchio_mass(case, q), f'M at q={q}')
        h = c.bias_forces(d, case.full(q), case.full(v)).copy()
        assert_close(h[:n], pinocchio.rnea(case.model, case.pdata, q, v, 0 * a), 'h')
        assert_close(h[:n], pinocchio.nonLinearEffects(case.model, case.pdata, q, v), 'nle')
        tau = c.rnea(d, case.full(q), case.full(v), case.full(a)).copy()
        assert_close(tau[:n], pinocchio.rnea(case.model, case.pdata, q, v, a), 'rnea')


def check_kinematics(case):
    """Link, tip and mid-section poses and Jacobians equal Pinocchio's oMi, oMf, J."""
    c, d, n = case.chain, case.data, case.n
    for q, v, _ in case.states(1):
        link_R, link_p, tip_R, tip_p = (x.copy() for x in c.frame_placements(d, case.full(q)))
        pinocchio.forwardKinematics(case.model, case.pdata, q)
        pinocchio.updateFramePlacements(case.model, case.pdata)
        for j in range(n):
            oMi = case.pdata.oMi[j + 1]
            assert_close(link_R[j], oMi.rotation, f'link_R[{j}]')
            assert_close(link_p[j], oMi.translation, f'link_p[{j}]')
            oMf = case.pdata.oMf[case.model.getFrameId(f'tip{j}')]
            assert_close(tip_R[j], oMf.rotation, f'tip_R[{j}]')
            assert_close(tip_p[j], oMf.translation, f'tip_p[{j}]')
            for name, x in (('tip', c.links[j].length), ('mid', SECTION * c.links[j].length)):
                frame = case.model.getFrameId(f'{name}{j}')
                R, p = c.section_pose(d, case.full(q), j, x)
                assert_close(R, case.pdata.oMf[frame].rotation, f'{name} R[{j}]')
                assert_close(p, case.pdata.oMf[frame].translation, f'{name} p[{j}]')
                J = c.section_jacobian(d, case.full(q), j, x)[:, :n]
                Jp = pinocchio.computeFrameJacobian(case.model, case.pdata, q, frame,
                                                    pinocchio.LOCAL_WORLD_ALIGNED)
                assert_close(J, np.vstack([Jp[3:], Jp[:3]]), f'{name} J[{j}]')


def check_energies(case):
    """T = v^T M v / 2 and V = -sum m g . c equal computeKinetic/PotentialEnergy.

    Pinocchio's potential is also -sum m_i g . c_i with c_i in the base frame (zero at the
    base origin), the chain's convention for undeformed links.
    """
    c, d = case.chain, case.data
    for q, v, _ in case.states(2):
        assert_close(c.kinetic_energy(d, case.full(q), case.full(v)),
                     pinocchio.computeKineticEnergy(case.model, case.pdata, q, v), 'T')
        assert_close(c.potential_energy(d, case.full(q)),
                     pinocchio.computePotentialEnergy(case.model, case.pdata, q), 'V')


def test_mass_bias_and_rnea_match_crba_and_rnea(rigid):
    """M = CRBA (upper triangle symmetrized), h = RNEA(q, v, 0) = nonLinearEffects, tau = RNEA."""
    check_joint_rows(rigid)


def test_forward_dynamics_matches_aba(rigid):
    """Accelerations equal Pinocchio's articulated-body algorithm at random (q, v, u)."""
    c, d = rigid.chain, rigid.data
    for q, v, a in rigid.states(3):
        u = 10.0 * a
        assert_close(c.forward_dynamics(d, q, v, u),
                     pinocchio.aba(rigid.model, rigid.pdata, q, v, u), f'aba at q={q}')


def test_kinematics_match_forward_kinematics_and_frame_jacobians(rigid):
    """Link/tip/section placements equal oMi/oMf; section Jacobians equal LOCAL_WORLD_ALIGNED."""
    check_kinematics(rigid)


def test_energies_match(rigid):
    """Kinetic and potential energy equal computeKineticEnergy and computePotentialEnergy."""
    check_energies(rigid)


def test_flexible_chain_joint_rows_at_zero_modal_state(flexible):
    """At zero modal q, v, a a flexible chain's joint rows are the rigid robot's.

    The beams move as rigid rods then (the foreshortening and its rates vanish at q = 0), so
    the joint block of M, the joint entries of h and rnea, the poses, the joint columns of
    the Jacobians and the energies equal Pinocchio's for the twin with rod inertias. The
    modal rows and the accelerations are not compared: the modes add inertia.
    """
    assert flexible.chain.n_modes == 6
    check_joint_rows(flexible)
    check_kinematics(flexible)
    check_energies(flexible)


def test_zero_mode_beam_is_refused_or_a_rigid_rod():
    """A Beam with modes (0, 0) is either refused (ValueError) or carries its mass as a rod.

    Expected values: Pinocchio with the rod inertia (mass rho A L at L/2, diag(0, mL^2/12,
    mL^2/12) about its centre), as for the flexible chain at zero modal state.
    """
    rng = np.random.default_rng(7)
    links = [Link(f'link{j}', Joint(f'joint{j}'), 0.8, random_body(rng),
                  Beam(2.0, (50.0, 50.0), (0, 0))) for j in range(2)]
    try:
        chain = chain_from_links('rods', links, gravity_base=(0.0, -9.81, 0.0))
    except ValueError:
        return
    case = Case(chain)
    assert case.chain.nv == 2
    check_joint_rows(case)
    check_energies(case)


@pytest.mark.parametrize('name', ['planar2_outplane', 'spatial6'])
def test_joint_damping_and_armature(name):
    """h gains damping * v; M gains the armature on its diagonal, as model.armature in CRBA.

    Pinocchio 4 adds model.armature to the CRBA diagonal and uses it in ABA; it has no
    viscous joint friction in RNEA, so D v is added by hand to its RNEA and to the ABA input.
    """
    base = CHAINS[name]()
    rng = np.random.default_rng(8)
    damping = rng.uniform(0.1, 2.0, base.n_joints)
    armature = rng.uniform(0.01, 0.5, base.n_joints)
    links = [replace(link, joint=replace(link.joint, damping=b, armature=r))
             for link, b, r in zip(base.links, damping, armature)]
    case = Case(chain_from_links(name, links, gravity_base=base.gravity_base))
    case.model.armature = armature
    c, d = case.chain, case.data
    for q, v, a in case.states(4):
        assert_close(c.mass_matrix(d, q), pinocchio_mass(case, q), 'M with armature')
        assert_close(c.bias_forces(d, q, v), pinocchio.rnea(case.model, case.pdata, q, v,
                                                            0 * a) + damping * v, 'h')
        assert_close(c.rnea(d, q, v, a), pinocchio.rnea(case.model, case.pdata, q, v, 0 * a)
                     + damping * v + pinocchio_mass(case, q) @ a, 'rnea')
        assert_close(c.forward_dynamics(d, q, v, 10 * a), pinocchio.aba(
            case.model, case.pdata, q, v, 10 * a - damping * v), 'aba')


def floating(chain, seed):
    """The same links on a free-floating base with a random body, gravity in the world."""
    rng = np.random.default_rng(seed)
    return chain_from_links(chain.name + '_floating', chain.links, gravity_base=chain.gravity_base,
                            floating_base=random_body(rng, 2.0))


def floating_permutation(chain):
    """P with v_pinocchio = P v_ours: ours is (joints, w, v), Pinocchio's (v, w, joints)."""
    n = chain.n_joints
    order = [n + 3, n + 4, n + 5, n, n + 1, n + 2] + list(range(n))
    return np.eye(chain.nv)[order]


def floating_states(chain, seed):
    """Random joint angles, base position and unit quaternion, velocities and accelerations.

    Yields ours (q, v, a) and Pinocchio's (q, v, a): q_pin = (p, (x, y, z, w), joints).
    """
    rng = np.random.default_rng(seed)
    n, P = chain.n_joints, floating_permutation(chain)
    for _ in range(STATES):
        joints, p = rng.uniform(-np.pi, np.pi, n), rng.normal(size=3)
        quat = rng.normal(size=4)
        quat /= np.linalg.norm(quat)
        q = np.concatenate([joints, p, quat])
        v, a = rng.normal(0.0, 2.0, chain.nv), rng.normal(0.0, 5.0, chain.nv)
        yield (q, v, a), (np.concatenate([p, quat[1:], quat[:1], joints]), P @ v, P @ a)


@pytest.mark.parametrize('name', ['planar2_outplane', 'spatial6'])
def test_floating_base_matches_free_flyer(name):
    """A floating base: M, h, rnea and forward dynamics equal Pinocchio's with a FreeFlyer
    root, and the link, tip and section frames and Jacobians are in the world.

    Expected values: Pinocchio's CRBA/RNEA/ABA for the same bodies on a JointModelFreeFlyer
    (body-frame twist (v, w), quaternion (x, y, z, w)), permuted to our order; its oMi,
    oMf and LOCAL_WORLD_ALIGNED frame Jacobians (the contract: world components with a
    floating base).
    """
    chain = floating(CHAINS[name](), 9)
    case = Case(chain)
    c, d, P = chain, case.data, floating_permutation(chain)
    assert (c.nq, c.nv) == (c.n_joints + 7, c.n_joints + 6)
    for (q, v, a), (qp, vp, ap) in floating_states(chain, 10):
        assert_close(c.mass_matrix(d, q), P.T @ pinocchio_mass(case, qp) @ P, 'M')
        assert_close(c.bias_forces(d, q, v),
                     P.T @ pinocchio.nonLinearEffects(case.model, case.pdata, qp, vp), 'h')
        assert_close(c.rnea(d, q, v, a),
                     P.T @ pinocchio.rnea(case.model, case.pdata, qp, vp, ap), 'rnea')
        u = a[:c.nu]
        tau = np.concatenate([np.zeros(6), u])          # the base is not actuated
        assert_close(c.forward_dynamics(d, q, v, u),
                     P.T @ pinocchio.aba(case.model, case.pdata, qp, vp, tau), 'aba')
        assert_close(c.potential_energy(d, q),
                     pinocchio.computePotentialEnergy(case.model, case.pdata, qp), 'V')
        link_R, link_p, tip_R, tip_p = c.frame_placements(d, q)
        pinocchio.computeJointJacobians(case.model, case.pdata, qp)
        pinocchio.updateFramePlacements(case.model, case.pdata)
        for j in range(c.n_joints):
            oMi = case.pdata.oMi[j + 2]                 # after the universe and the base
            assert_close(link_R[j], oMi.rotation, f'link_R[{j}]')
            assert_close(link_p[j], oMi.translation, f'link_p[{j}]')
            frame = case.model.getFrameId(f'tip{j}')
            assert_close(tip_R[j], case.pdata.oMf[frame].rotation, f'tip_R[{j}]')
            assert_close(tip_p[j], case.pdata.oMf[frame].translation, f'tip_p[{j}]')
            x = SECTION * c.links[j].length
            frame = case.model.getFrameId(f'mid{j}')
            R, p = c.section_pose(d, q, j, x)
            assert_close(R, case.pdata.oMf[frame].rotation, f'mid R[{j}]')
            assert_close(p, case.pdata.oMf[frame].translation, f'mid p[{j}]')
            Jp = pinocchio.getFrameJacobian(case.model, case.pdata, frame,
                                            pinocchio.LOCAL_WORLD_ALIGNED)
            assert_close(c.section_jacobian(d, q, j, x), np.vstack([Jp[3:], Jp[:3]]) @ P,
                         f'mid J[{j}]')
            here = c.section_kinematics(d, q, v, j, x)
            assert_close(here.J, np.vstack([Jp[3:], Jp[:3]]) @ P, f'kinematics J[{j}]')


def test_section_kinematics_is_pose_jacobian_and_motion_in_one_call(flexible):
    """section_kinematics = (section_pose, section_jacobian, J v) at the same state.

    Expected values: the separate calls (each checked above against Pinocchio; J' v by
    the finite differences of test_model_contract.py); on the flexible chain with random
    modal coordinates.
    """
    c, d = flexible.chain, flexible.data
    rng = np.random.default_rng(12)
    for _ in range(5):
        q, v = rng.normal(0.0, 0.3, c.nv), rng.normal(0.0, 1.0, c.nv)
        j = int(rng.integers(c.n_joints))
        x = float(rng.uniform(0.0, c.links[j].length))
        R, p, J, twist, accel = (a.copy() for a in c.section_kinematics(d, q, v, j, x))
        R0, p0 = c.section_pose(d, q, j, x)
        assert_close(R, R0, 'R')
        assert_close(p, p0, 'p')
        assert_close(J, c.section_jacobian(d, q, j, x), 'J')
        assert_close(twist, J @ v, 'twist = J v')
        assert np.all(np.isfinite(accel))
