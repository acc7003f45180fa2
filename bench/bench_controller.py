"""Cost of one control tick of the program-constraint controller, against Pinocchio.

A tick evaluates a task-space program (a point of the arm on a circle: phi, J, J'v), its
Baumgarte stabilization (b = -J'v - 2 alpha phi' - beta^2 phi), the dynamics M(q), h(q, v),
and the realization that turns them into efforts. Two cases:

* the default flexible arm (`two_link_flexible`, 8 coordinates, 2 inputs), the forearm's
  lambda-point (x = 0.25 L) on a circle, **servo** realization (efforts only on the
  joints, the modes unactuated);
* the rigid 6-DOF UR-like arm of `bench_rigid_dynamics.py`, its tool point on a circle
  (3 rows), **ideal** (Udwadia-Kalaba) realization.

Reference, in the same process: the same tick with Pinocchio's `crba`, `nonLinearEffects`,
`getFrameJacobian` and `getFrameClassicalAcceleration` (after `forwardKinematics` with
zero acceleration) on the rigid twin, and the same NumPy realization. Both ticks are
checked to give the same efforts on the rigid arm first. Target: a tick of the default
arm below 20% of a 1 kHz control period (200 us).
Run: ``.venv/bin/python bench/bench_controller.py``.
"""

import numpy as np
import pinocchio

import bench_common as common
from bench_rigid_dynamics import ur_like_arm
from flexible_manipulator.control.programs import PointProgram
from flexible_manipulator.control.realization import IdealRealization, ServoRealization
from flexible_manipulator.control.stabilization import Stabilization
from flexible_manipulator.control.trajectories import CirclePath, ConstantRateTiming, Trajectory
from flexible_manipulator.model_config import load_model

CALLS, REPEATS = 300, 9
TARGET_US = 200.0           # 20% of a 1 kHz period
ALPHA = 10.0                # 1/s, critically damped rows (beta = alpha)


class Tick:
    """Program + stabilization + dynamics + realization on our model: efforts per state."""

    def __init__(self, model, link, fraction, axes, center, realization):
        self.model, self.data = model, model.create_data()
        reference = Trajectory(CirclePath(center, 0.05), ConstantRateTiming(1.0))
        self.program = PointProgram(model, link, fraction * model.links[link].length,
                                    reference, axes)
        self.stabilization = Stabilization.for_program(self.program, ALPHA)
        self.B = model.input_matrix()
        self.realization = realization

    def __call__(self, t, q, v):
        self.program.evaluate(t, q, v)
        b = self.stabilization.evaluate(self.program)
        M = self.model.mass_matrix(self.data, q)
        h = self.model.bias_forces(self.data, q, v)
        return self.realization.realize(M, h, self.program.jacobian, b, self.B)


class PinocchioTick:
    """The same tick for a rigid arm with Pinocchio computing M, h, J and J'v of the point."""

    def __init__(self, chain, link, fraction, axes, center, realization):
        self.model = common.to_pinocchio(chain)
        self.model.addFrame(pinocchio.Frame('point', link + 1, pinocchio.SE3(
            np.eye(3), np.array([fraction * chain.links[link].length, 0.0, 0.0])),
            pinocchio.FrameType.OP_FRAME))
        self.data = self.model.createData()
        self.frame = self.model.getFrameId('point')
        self.axes = np.array(axes)
        self.reference = Trajectory(CirclePath(center, 0.05), ConstantRateTiming(1.0))
        self.stabilization = Stabilization([2] * len(axes), ALPHA)
        self.damping = common.joint_damping(chain)
        self.B = np.eye(chain.nv)
        self.realization = realization
        self.zero = np.zeros(chain.nv)

    def __call__(self, t, q, v):
        m, d, f = self.model, self.data, self.frame
        pinocchio.forwardKinematics(m, d, q, v, self.zero)
        pinocchio.updateFramePlacement(m, d, f)
        frame = pinocchio.LOCAL_WORLD_ALIGNED
        J = pinocchio.computeFrameJacobian(m, d, q, f, frame)[self.axes]
        jdot_v = pinocchio.getFrameClassicalAcceleration(m, d, f, frame).linear[self.axes]
        r, dr, ddr = self.reference.evaluate(t)
        phi = d.oMf[f].translation[self.axes] - r
        rate = J @ v - dr
        b = -(jdot_v - ddr) - 2.0 * ALPHA * rate - ALPHA ** 2 * phi
        M = pinocchio.crba(m, d, q)
        M = np.triu(M) + np.triu(M, 1).T
        h = pinocchio.nonLinearEffects(m, d, q, v) + self.damping * v
        return self.realization.realize(M, h, J, b, self.B)


def main():
    """Check the rigid case against Pinocchio, time both cases, print the table."""
    rng = np.random.default_rng(0)
    arm = ur_like_arm()
    center = (0.4, 0.1, 0.3)
    ours = Tick(arm, 5, 1.0, (0, 1, 2), center, IdealRealization(arm.nv, arm.nu, 3))
    theirs = PinocchioTick(arm, 5, 1.0, (0, 1, 2), center, IdealRealization(arm.nv, arm.nu, 3))
    for _ in range(10):
        q, v, t = rng.uniform(-2.0, 2.0, arm.nv), rng.normal(0.0, 1.0, arm.nv), rng.uniform(0, 5)
        np.testing.assert_allclose(ours(t, q, v), theirs(t, q, v), rtol=1e-8, atol=1e-8)
    flexible = load_model(common.model_path('two_link_flexible'))
    servo = Tick(flexible, 1, 0.25, (0, 1), (0.5, 0.3), ServoRealization(
        flexible.nv, flexible.nu, 2, flexible.effort_limit))
    twin = flexible.rigid_twin()
    twin_tick = PinocchioTick(twin, 1, 0.25, (0, 1), (0.5, 0.3), ServoRealization(
        twin.nv, twin.nu, 2, twin.effort_limit))
    qf = np.zeros(flexible.nv)
    qf[:2] = (-0.6, 1.2)
    qf[2:] = rng.normal(0.0, 1e-3, flexible.nv - 2)
    vf = rng.normal(0.0, 0.2, flexible.nv)
    q, v = rng.uniform(-2.0, 2.0, arm.nv), rng.normal(0.0, 1.0, arm.nv)
    times = common.time_interleaved({
        'flexible': lambda: servo(1.0, qf, vf),
        'flexible_twin_pinocchio': lambda: twin_tick(1.0, qf[:2], vf[:2]),
        'rigid6': lambda: ours(1.0, q, v),
        'rigid6_pinocchio': lambda: theirs(1.0, q, v),
    }, CALLS, REPEATS)
    print(f'machine: {common.machine()}; pinocchio {pinocchio.__version__}')
    print(f'median of {REPEATS} batches of {CALLS} ticks; one tick = program + stabilization '
          '+ M, h + realization\n')
    print('| case | ours [us/tick] | Pinocchio-based tick [us] | ours / Pinocchio |\n'
          '|---|---|---|---|')
    print(f"| two_link_flexible (nv = 8), lambda-point circle, servo realization "
          f"| {times['flexible']:.1f} | {times['flexible_twin_pinocchio']:.1f} (rigid twin, "
          f"nv = 2) | {times['flexible'] / times['flexible_twin_pinocchio']:.1f} |")
    print(f"| UR-like 6-DOF rigid arm, tool point circle, ideal realization "
          f"| {times['rigid6']:.1f} | {times['rigid6_pinocchio']:.1f} "
          f"| {times['rigid6'] / times['rigid6_pinocchio']:.1f} |")
    share = times['flexible'] / 1000.0 * 100.0
    print(f'\ntarget: a tick of the default arm below {TARGET_US:g} us (20% of 1 kHz): '
          f"{times['flexible']:.1f} us = {share:.1f}% of 1 ms -> "
          f"{'met' if times['flexible'] < TARGET_US else 'NOT met'}")


if __name__ == '__main__':
    main()
