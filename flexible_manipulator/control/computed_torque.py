"""Computed-torque realization of a joint program on a fully actuated arm.

With e = q_d - q, the control law

    tau = M(q) (q_d'' + k_d e' + k_p e) + h(q, q'),   k_p = omega_n^2,  k_d = 2 zeta omega_n,

makes the error obey e'' + 2 zeta omega_n e' + omega_n^2 e = 0 when the model is exact and
no torque saturates: the stabilized program constraint of Mukharlyamov / Baumgarte with
alpha = zeta omega_n and beta = omega_n. Torques are clipped to the model's effort limits;
which joints were clipped is reported with every result.
"""

import numpy as np


class ComputedTorqueController:
    """Stateless control law evaluated on one measured state at a time."""

    def __init__(self, model, program, natural_frequency, damping_ratio):
        """Prepare buffers; gains are given as omega_n [rad/s] and zeta [-]."""
        if not natural_frequency > 0.0:
            raise ValueError(f'natural_frequency must be > 0 rad/s, got {natural_frequency}')
        if not damping_ratio > 0.0:
            raise ValueError(f'damping_ratio must be > 0, got {damping_ratio}')
        if model.nv != model.nu:
            raise ValueError(f'computed torque needs a fully actuated model; {model.name!r} has '
                             f'{model.nv} coordinates for {model.nu} actuators (use its '
                             'rigid_twin())')
        self.model = model
        self.data = model.create_data()
        self.program = program
        self.kp = natural_frequency ** 2
        self.kd = 2.0 * damping_ratio * natural_frequency
        self.effort_limit = model.effort_limit
        n = model.nv
        self.commanded_acceleration = np.zeros(n)
        self._velocity_error = np.zeros(n)
        self.unsaturated = np.zeros(n)
        self.effort = np.zeros(n)
        self.saturated = np.zeros(n, dtype=bool)

    def compute(self, t, q, v):
        """Return the clipped joint torques [N m] for the state (q, v) measured at ``t``."""
        q_d, v_d, a_d = self.program.evaluate(t)
        acc = self.commanded_acceleration
        np.subtract(q_d, q, out=acc)
        acc *= self.kp
        acc += a_d
        np.subtract(v_d, v, out=self._velocity_error)
        self._velocity_error *= self.kd
        acc += self._velocity_error
        m = self.model.mass_matrix(self.data, q)
        np.matmul(m, acc, out=self.unsaturated)
        self.unsaturated += self.model.bias_forces(self.data, q, v)
        np.clip(self.unsaturated, -self.effort_limit, self.effort_limit, out=self.effort)
        np.not_equal(self.effort, self.unsaturated, out=self.saturated)
        return self.effort
