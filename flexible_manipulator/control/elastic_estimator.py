"""Observer of the modal state of a flexible arm from its joint motion and applied efforts.

On a real arm only the joints are measured. `ElasticStateEstimator` integrates the modal
coordinates eta of the full model (``mechanics.link_description`` units) from its modal
rows, driven by the measured joint motion,

    M_ee(q) eta'' + D_e eta' + K_e eta = -M_e,theta(q) theta'' - f_e(q, v),

f_e = h_e - D_e eta' - K_e eta (centrifugal, Coriolis, gravity and stiffening loads), with
theta'' [rad/s^2] the mean joint acceleration over the last interval from two successive
measured velocities, M and f_e frozen at the start of each step and the linear part
integrated by the theta-method with theta = `THETA` (one step per control period, sub-steps
of at most the period over gaps). theta = 0.6 rather than the trapezoidal 1/2: a stiff
mode (h |lambda| >> 1, e.g. a soft rod's Kelvin-Voigt shear and extension, lambda ~ -1e5
1/s) is then damped by -(1 - theta)/theta = -0.67 per step instead of flipping sign
undamped, an error that entered the bending rows through M and saturated a lambda-point
law on the soft arm; a mode of frequency omega gets a numerical damping ratio of about
(theta - 1/2) omega h / 2 (0.006 at 60 rad/s and 2 ms). All modes of the model are
integrated (a reduced model's first mode is not the full model's); the controller
(`program_controller`) then picks its control model's modes by name.

Correction by measurement. Integrated alone, the estimate's error obeys the free modal
dynamics and decays with the structural damping only, and any model error grows into the
law (an unstable sampled loop for the demo arm's joint programs). With the effort u
applied over the step known (the controller's own command, or the torque a plant reports),
the joint rows of the model over the step are a measurement, the innovation [N m or N]

    nu = B_theta u - M_theta,theta theta'' - M_theta,e (w+ - w) / T - h_theta(q, v),

w+ - w the modal velocity change of the step just predicted; it is zero on the model with
the true modal state. The estimate is corrected by xhat += L nu, L the steady-state Kalman
gain of ``observer_design`` (designed at the program's rest from the declared noise and
uncertainty; ``set_gain``). On the model a wrong initial estimate then decays with the
observer's error dynamics E - L H; off it, nu measures the mismatch (published on
/diagnostics) and the normalized innovation squared nu^T S^-1 nu (S the innovation
covariance the gain assumes; mean n, the number of joints, on the model within the
declared noise) is the run-time test of the model. Corrections are made on a tick of one
period (not across a gap, where the estimate is only integrated). Joint friction,
armature and the motor torque enter only through nu.

The estimate starts from the static equilibrium of the modal rows at the first state
(``initialize``; undeformed for a horizontal arm).
"""

import math

import numpy as np

from ..mechanics.equilibrium import static_equilibrium
from .control_kernels import theta_modal_step
from .observer_design import THETA


class ElasticStateEstimator:
    """Modal coordinates driven by the measured joint motion (module doc).

    ``position`` and ``velocity`` hold the estimate of (eta, eta') in the model's mode
    order; ``advance`` moves it over one interval of measured joint motion.
    """

    def __init__(self, model):
        """Prepare for ``model`` (a fixed-base chain: joints first, then modes)."""
        self.model = model
        self.data = model.create_data()
        self._mass = np.zeros((model.nv, model.nv))      # M and h of each sub-step
        self._bias = np.zeros(model.nv)
        self.n = model.n_joints
        self.count = model.nv - model.n_joints
        stiffness, damping = model.elastic_coefficients()
        self.stiffness, self.damping = stiffness[self.n:], damping[self.n:]
        self.position = np.zeros(self.count)
        self.velocity = np.zeros(self.count)
        self._q = np.zeros(model.nv)
        self._v = np.zeros(model.nv)
        self._dt = None
        n, m = self.n, self.count
        self.input_rows = np.ascontiguousarray(model.input_matrix()[:n])   # B_theta
        self.gain = None                       # L (2 m x n); None: no correction
        self._inverse_covariance = np.zeros((n, n))   # S^-1 of the gain's design
        self.innovation = np.zeros(n)          # nu of the last corrected step [N m or N]
        self.normalized = 0.0                  # nu^T S^-1 nu of the last corrected step
        self.corrected = False                 # whether the last advance was corrected
        self._w0 = np.zeros(m)                 # modal velocity before the step
        self._change = np.zeros(m)             # w+ - w, then per unit time
        self._joint = np.zeros(n)              # scratch of the innovation
        self._correction = np.zeros(2 * m)
        self._weighted = np.zeros(n)

    def set_gain(self, observer_gain):
        """Correct with ``observer_gain`` (`observer_design.ObserverGain`), or None."""
        if observer_gain is None:
            self.gain = None
            return
        self.gain = np.ascontiguousarray(observer_gain.L)
        self._inverse_covariance[:] = np.linalg.inv(observer_gain.covariance)

    def initialize(self, joint_positions):
        """Start at rest at the static equilibrium of the modal rows, h_e(q, 0) = 0.

        `equilibrium.static_equilibrium` (Newton's method from the undeformed arm; e = 0
        when gravity is normal to the plane of motion). If it fails the estimate starts
        undeformed.
        """
        self.velocity[:] = 0.0
        q = self._q
        q[:self.n] = joint_positions
        q[self.n:] = 0.0
        try:
            self.position[:] = static_equilibrium(self.model, q, self.data)[self.n:]
        except ValueError:
            self.position[:] = 0.0

    def advance(self, joint_positions, joint_velocities, joint_acceleration, duration,
                max_step, effort=None):
        """Advance (eta, eta') over ``duration`` [s] from the joint state at its start.

        The joint acceleration [rad/s^2] is held; sub-steps of at most ``max_step``.
        ``effort``: the input u applied over the interval (model input order); with a gain
        set and a single step, the estimate is corrected by the innovation (module doc).
        """
        steps = max(1, int(math.ceil(duration / max_step - 1e-9)))
        self.corrected = False
        dt = duration / steps
        q, v, n = self._q, self._v, self.n
        for k in range(steps):
            tau = k * dt
            np.multiply(joint_acceleration, tau, out=v[:n])
            v[:n] += joint_velocities
            q[:n] = joint_positions
            q[:n] += (joint_velocities + 0.5 * joint_acceleration * tau) * tau
            q[n:], v[n:] = self.position, self.velocity
            mass, bias = self.model.mass_and_bias(self.data, q, v, self._mass, self._bias)
            self._w0[:] = self.velocity
            self.step(mass, bias, joint_acceleration, dt)
            if steps == 1 and effort is not None and self.gain is not None:
                self._correct(mass, bias, joint_acceleration, dt, effort)

    def _correct(self, mass, bias, joint_acceleration, dt, effort):
        """Compute the innovation of the step just taken and correct the estimate by it."""
        n, m = self.n, self.count
        change = np.subtract(self.velocity, self._w0, out=self._change)
        change /= dt
        innovation = np.matmul(self.input_rows, effort, out=self.innovation)
        innovation -= np.matmul(mass[:n, :n], joint_acceleration, out=self._joint)
        innovation -= np.matmul(mass[:n, n:], change, out=self._joint)
        innovation -= bias[:n]
        np.matmul(self._inverse_covariance, innovation, out=self._weighted)
        self.normalized = float(innovation @ self._weighted)
        correction = np.matmul(self.gain, innovation, out=self._correction)
        self.position += correction[:m]
        self.velocity += correction[m:]
        self.corrected = True

    def step(self, mass, bias, joint_acceleration, dt):
        """One theta-method step of (eta, eta') over ``dt`` [s] (`theta_modal_step`).

        ``mass``, ``bias``: M(q) and h(q, v) of the model at the start of the step (with
        the current estimate); the joint acceleration [rad/s^2] is held over it. With
        w_theta = theta w+ + (1 - theta) w and f = -M_e,theta a - (h_e - D w - K eta):

            M_ee (w+ - w) = dt (f - D w_theta - K (eta + theta dt w_theta)),
            eta+ = eta + dt w_theta.
        """
        if dt != self._dt:
            self._dt = dt
            self._lhs_diagonal = THETA * dt * self.damping + (THETA * dt) ** 2 * self.stiffness
            self._w_factor = (THETA * dt * self.damping
                              - THETA * (1.0 - THETA) * dt * dt * self.stiffness)
        theta_modal_step(mass, bias, self.n, joint_acceleration, dt, THETA, self._lhs_diagonal,
                         self._w_factor, self.position, self.velocity)
