"""Model following: the flexible law runs on the model; the arm follows the model's joints.

A flexible law that inverts the model's elastic forces on the measured (or estimated)
state is exact on its model and fragile off it: the cancellation leaves a force
proportional to the deflection, which the program's feedback closes into a lightly damped
loop of its own (bench/README.md, ``bench_mismatch.py``). Model following splits the two
jobs (a two-degree-of-freedom structure):

* **the internal model**: a simulation of the controller's full model (`Simulation`, the
  elastic coordinates included) under the program's law, which there is exact: at each
  tick the law takes the internal model's state and returns u_m, and the internal model
  advances one control period under u_m. Its joint trajectory theta_m(t) and
  acceleration theta_m'' (its forward dynamics under u_m) are what the arm should do;
* **the arm follows it** by computed torque on the rigid twin (M_r, h_r) about that
  trajectory, e = theta - theta_m:

      u = u_m + M_r(theta) (theta_m'' - K_p e - K_d e') + h_r(theta, theta')
              - (M_r(theta_m) theta_m'' + h_r(theta_m, theta_m')),

  with K_p = beta^2 and K_d = 2 alpha from the program's gains (the smallest over its
  rows). On the exact plant e stays at the integration error and u = u_m: the flexible
  law's accuracy. Off it, the feedback is the rigid twin's, which nothing elastic
  cancels: the plant's loop is robust as the rigid twin is, and u_m is a feedforward that
  does not depend on the plant's state.

Linearized at rest the closed loop is block-triangular (the internal model does not see
the plant): its eigenvalues are those of the law on the model (the nominal checks) and
those of the rigid twin's joint loop on the plant, which the robustness check evaluates
over the uncertainty (`admission.check_robustness`). Only joints are measured: the law's
modes are the internal model's, no estimator is needed. ``following_error`` (max |e|
[rad]) says how far the arm is from its model (on /diagnostics).
"""

import math

import numpy as np

from ..mechanics.equilibrium import static_equilibrium
from ..mechanics.simulation import Simulation

# Integration of the internal model: linearly implicit (stiff strain modes of a Cosserat
# model), steps per control period.
INTEGRATOR = 'rosenbrock2'
STEPS_PER_PERIOD = 2


class ModelFollowing:
    """The internal model and the joint-following law of the module doc."""

    def __init__(self, model, rigid_twin, period):
        """Prepare for the controller's full ``model`` and its rigid twin at ``period``."""
        self.model, self.twin, self.period = model, rigid_twin, float(period)
        self.n = model.n_joints
        self.data, self.twin_data = model.create_data(), rigid_twin.create_data()
        self.simulation = None             # the internal model, from the first state
        self.effort = np.zeros(model.nu)   # u_m of the last tick
        self.acceleration = np.zeros(self.n)
        self.gains = (0.0, 0.0)            # K_p [1/s^2], K_d [1/s]
        self.error = 0.0                   # max |theta - theta_m| [rad] at the last tick
        self._time = None
        n = self.n
        self._M, self._Mm = np.zeros((n, n)), np.zeros((n, n))
        self._h, self._hm = np.zeros(n), np.zeros(n)
        self._target, self._out, self._scratch = np.zeros(n), np.zeros(model.nu), np.zeros(n)
        self._error, self._rate = np.zeros(n), np.zeros(n)
        self._full = np.zeros(model.nv)    # the internal model's accelerations

    @staticmethod
    def gains_of(stabilization):
        """(K_p, K_d) = (min beta^2, 2 min alpha) over the program's position rows."""
        return float(np.min(stabilization.k0)), float(np.min(stabilization.k1))

    def set_gains(self, stabilization):
        """Follow with the program's gains (`gains_of`)."""
        self.gains = self.gains_of(stabilization)

    def reset(self, t, joint_positions, joint_velocities):
        """Start the internal model at the measured joints, its modes at rest."""
        q = self.model.neutral_configuration().astype(float)
        q[:self.n] = joint_positions
        try:
            q = static_equilibrium(self.model, q, self.data)
        except ValueError:
            pass                           # a rest the solver misses: straight links
        v = np.zeros(self.model.nv)
        v[:self.n] = joint_velocities
        self.simulation = Simulation(self.model, self.period / STEPS_PER_PERIOD, INTEGRATOR,
                                     q0=q, v0=v, refuse_unstable=False)
        self.effort[:] = 0.0
        self._time = t

    def advance(self, t):
        """Move the internal model to ``t`` [s] under the last u_m (whole periods, >= 1)."""
        periods = max(1, int(round((t - self._time) / self.period)))
        self.simulation.advance(self.effort, periods * self.period)
        self._time = t

    def follow(self, effort, joint_positions, joint_velocities):
        """Take the law's u_m; return u (module doc), reused by the next call."""
        self.effort[:] = effort
        sim, n = self.simulation, self.n
        qm, vm = sim.q, sim.v
        full = self.model.forward_dynamics(self.data, qm, vm, effort, self._full)
        self.acceleration[:] = full[:n]
        twin, data = self.twin, self.twin_data
        kp, kd = self.gains
        error = np.subtract(joint_positions, qm[:n], out=self._error)
        self.error = float(np.max(np.abs(error))) if n else 0.0
        rate = np.subtract(joint_velocities, vm[:n], out=self._rate)
        np.multiply(error, -kp, out=self._target)
        rate *= kd
        self._target -= rate
        self._target += self.acceleration
        M = twin.mass_matrix(data, joint_positions, self._M)
        h = twin.bias_forces(data, joint_positions, joint_velocities, self._h)
        out = self._out
        np.matmul(M, self._target, out=out)
        out += h
        Mm = twin.mass_matrix(data, qm[:n], self._Mm)
        hm = twin.bias_forces(data, qm[:n], vm[:n], self._hm)
        out -= np.matmul(Mm, self.acceleration, out=self._scratch)
        out -= hm
        out += effort
        if not math.isfinite(float(out @ out)):
            raise FloatingPointError('model following: the effort is not finite')
        return out
