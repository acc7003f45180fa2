"""The physical range of a measured arm state: beyond it a state is a bad measurement.

A state the arm cannot be in (a joint at 1e6 rad/s, a 0.45 m link deflected by 1e100 m) is
not a motion to react to but a broken sensor, driver or message: the controller node
rejects it like a non-finite state (no command, the reason logged and counted), before the
law runs. Inside the range a state may still break a safety limit, which latches a fault
(`program_controller`: a joint faster than its velocity limit). Bounds per coordinate:

* joint position: the joint limits widened on each side by half the joint's travel,
  [lower - (upper - lower)/2, upper + (upper - lower)/2] [rad or m]; none for a joint
  without limits (a continuous joint);
* joint velocity: |v| <= RANGE_FACTOR * its velocity limit [rad/s or m/s];
* modal coordinate k of link i: |q_k| <= L_i / 2 [m], the coordinate at which this mode
  alone deflects the tip by the link's length (modes are scaled to W_k(L) = +-2); the
  floating-frame model is trusted to about a tenth of that;
* modal velocity: |q_k'| <= RANGE_FACTOR * omega_k * L_i / 2 [m/s], RANGE_FACTOR times the
  velocity of that deflection oscillating at the mode's clamped-free frequency omega_k
  (the joints' motion drives the modes, and rotation stiffens them).
"""

import numpy as np

# How far past a configured or natural rate a measured rate may be before it is taken for
# a bad measurement rather than a fast arm.
RANGE_FACTOR = 10.0


class StateRange:
    """Bounds of the joint and modal coordinates of one chain model (module doc)."""

    def __init__(self, model, velocity_limit):
        """Derive the bounds of ``model`` (a `SerialChain`).

        ``velocity_limit``: the joint velocity limits in force (n_joints) [rad/s or m/s].
        """
        n = model.n_joints
        travel = model.upper - model.lower
        limited = np.isfinite(travel)
        self.joint_names, self.mode_names = model.joint_names, model.mode_names
        self.position_low = np.where(limited, model.lower - 0.5 * travel, -np.inf)
        self.position_high = np.where(limited, model.upper + 0.5 * travel, np.inf)
        self.speed = RANGE_FACTOR * np.asarray(velocity_limit, dtype=float).reshape(n)
        self.amplitude = np.array([0.5 * link.length for i, link in enumerate(model.links)
                                   for _ in range(model.modes_of(i)[0])]).reshape(model.n_modes)
        self.modal_speed = RANGE_FACTOR * model.mode_frequencies * self.amplitude
        # Lower bounds of the symmetric ranges, kept: the per-tick checks allocate nothing.
        self._low = {'speed': -self.speed, 'amplitude': -self.amplitude,
                     'modal_speed': -self.modal_speed}
        sizes = (n, n, model.n_modes, model.n_modes)
        self._ok = [np.zeros(size, dtype=bool) for size in sizes]     # scratch of the checks

    def joint_problem(self, positions, velocities):
        """Return None if the joint state (model order) is in range, else the reason."""
        j = self._first_outside(positions, self.position_low, self.position_high, 0)
        if j >= 0:
            return (f'joint {self.joint_names[j]!r} at {positions[j]:.6g} is outside its '
                    f'physical range [{self.position_low[j]:.6g}, '
                    f'{self.position_high[j]:.6g}] (its limits widened by half its travel)')
        j = self._first_outside(velocities, self._low['speed'], self.speed, 0)
        if j >= 0:
            return (f'joint {self.joint_names[j]!r} velocity {velocities[j]:.6g} is outside '
                    f'its physical range +-{self.speed[j]:.6g} ({RANGE_FACTOR:g} times its '
                    f'velocity limit)')
        return None

    def modal_problem(self, positions, velocities):
        """Return None if the modal state (model mode order) is in range, else the reason."""
        k = self._first_outside(positions, self._low['amplitude'], self.amplitude, 2)
        if k >= 0:
            return (f'mode {self.mode_names[k]!r} coordinate {positions[k]:.6g} m is outside '
                    f'its physical range +-{self.amplitude[k]:.6g} m (the tip deflected by '
                    f'the link length)')
        k = self._first_outside(velocities, self._low['modal_speed'], self.modal_speed, 2)
        if k >= 0:
            return (f'mode {self.mode_names[k]!r} velocity {velocities[k]:.6g} m/s is outside '
                    f'its physical range +-{self.modal_speed[k]:.6g} m/s ({RANGE_FACTOR:g} '
                    f'omega_k L/2)')
        return None

    def _first_outside(self, values, low, high, scratch):
        """Index of the first entry of ``values`` outside [low, high], or -1."""
        ok, below_high = self._ok[scratch], self._ok[scratch + 1]
        np.greater_equal(values, low, out=ok)
        np.less_equal(values, high, out=below_high)
        ok &= below_high
        return -1 if ok.all() else int(np.argmin(ok))
