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
* Cosserat strain coordinate k of link i (Legendre coefficient, |P_k| <= 1): curvature
  (bending, torsion) |q_k| <= 4 pi / L_i [rad/m], the link wound twice round a circle;
  extension and shear |q_k| <= 1, the link twice its length or sheared by 45 degrees;
* elastic velocity: |q_k'| <= RANGE_FACTOR * omega_k * a_k, RANGE_FACTOR times the velocity
  of the bound a_k above oscillating at the coordinate's frequency omega_k (the
  ``mode_frequencies`` of the model: clamped-free for modes, one strain alone for
  Cosserat links; the joints' motion drives the modes, and rotation stiffens them).
"""


import numpy as np

from ..mechanics.links import kind_of

# How far past a configured or natural rate a measured rate may be before it is taken for
# a bad measurement rather than a fast arm.
RANGE_FACTOR = 10.0


class StateRange:
    """Bounds of the joint and modal coordinates of one chain model (module doc)."""

    def __init__(self, model, velocity_limit):
        """Derive the bounds of ``model`` (a chain model).

        ``velocity_limit``: the joint velocity limits in force (n_joints) [rad/s or m/s].
        """
        n = model.n_joints
        travel = model.upper - model.lower
        limited = np.isfinite(travel)
        self.joint_names, self.mode_names = model.joint_names, model.mode_names
        self.position_low = np.where(limited, model.lower - 0.5 * travel, -np.inf)
        self.position_high = np.where(limited, model.upper + 0.5 * travel, np.inf)
        self.speed = RANGE_FACTOR * np.asarray(velocity_limit, dtype=float).reshape(n)
        ranges = [_amplitude(model, i, k) for i in range(len(model.links))
                  for k in range(model.modes_of(i)[0])]
        self.amplitude = np.array([bound for bound, *_ in ranges]).reshape(model.n_modes)
        self.meaning = [meaning for _, *meaning in ranges]     # (unit, what the bound is)
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
            unit, meaning = self.meaning[k]
            return (f'mode {self.mode_names[k]!r} coordinate {positions[k]:.6g}{unit} is '
                    f'outside its physical range +-{self.amplitude[k]:.6g}{unit} ({meaning})')
        k = self._first_outside(velocities, self._low['modal_speed'], self.modal_speed, 2)
        if k >= 0:
            unit = self.meaning[k][0]
            return (f'mode {self.mode_names[k]!r} velocity {velocities[k]:.6g}{unit}/s is '
                    f'outside its physical range +-{self.modal_speed[k]:.6g}{unit}/s '
                    f'({RANGE_FACTOR:g} omega_k times its position range)')
        return None

    def _first_outside(self, values, low, high, scratch):
        """Index of the first entry of ``values`` outside [low, high], or -1."""
        ok, below_high = self._ok[scratch], self._ok[scratch + 1]
        np.greater_equal(values, low, out=ok)
        np.less_equal(values, high, out=below_high)
        ok &= below_high
        return -1 if ok.all() else int(np.argmin(ok))


def _amplitude(model, link, k):
    """(bound, unit, meaning) of elastic coordinate k of a link's range (module doc)."""
    return kind_of(model.links[link]).amplitude(model.links[link], model.modes_of(link)[1][k])
