"""The program controller's safe action and its driver convention (`SafeActions`).

The safe action (``safe_action``, `safety`) is what the controller commands disabled or
faulted: zero; gravity, B^+ h(q, 0) on the control model at the measured joints and the
measured or estimated modes; or hold: the program `hold_program` (a ``hold`` row of every
joint at alpha = `HOLD_BANDWIDTH`, critically damped: e'' + 2 alpha e' + alpha^2 e = 0 on
the rigid twin, its gains alpha^2 M and 2 alpha M on the rigid twin's inertia M: gravity,
joint damping and a low-gain joint law) realized ideally on the rigid twin without rate
limit, admitted at construction by the same checks as the programs (refused: a
`ConfigError` naming ``safe_action``; `program_controller.build_hold_law`). Its target is
taken at the first safe tick at which every joint is slower than `SLOW_FRACTION` of its
velocity limit; until then (after a velocity fault) it is taken afresh at every tick:
gravity and damping only. The tick whose step failed commands zero; so do gravity and
hold when their own evaluation fails.

Driver convention (``driver_compensation``): a driver that adds gravity (its own rigid
model's, at the measured joints) or its joint friction to each command gets the effort
minus the rigid twin's gravity B^+ h_twin(q, 0) and the model's joint friction D v + F_c
tanh(v / v_s) (viscous and Coulomb, ``Chain.joint_friction``: the share of h that the
feedforward holds, so the command is the feedforward without it); the
elastic-state observer's applied effort (the command reported, or the one sent) gets them
added back, so that its innovation sees the torque the joints received. A zero safe
action sends zero: what the driver adds stays.
"""

import numpy as np

from ..config_checks import ConfigError
from .safety import LatchedSafety

# The hold law of the safe action ``hold``: its bandwidth [rad/s] (alpha of its hold row,
# critically damped), the program's name, and the share of each joint's velocity limit
# below which its target is taken (faster: damping only).
HOLD_BANDWIDTH = 2.0
HOLD_PROGRAM = 'safe_hold'
SLOW_FRACTION = 0.1


def hold_program(joints):
    """Return the program of the safe action ``hold``: a hold row of ``joints`` (module doc)."""
    return {'description': 'hold the joints where the arm stopped (safe_action: hold)',
            'gains': {'alpha': HOLD_BANDWIDTH}, 'rows': [{'type': 'hold',
                                                         'joints': list(joints)}]}


class SafeActions(LatchedSafety):
    """Mixin of `program_controller.ProgramController`: what it sends (module doc).

    The controller provides what `LatchedSafety` needs and ``_build_hold_law()``.
    """

    def _setup_safety(self, hold_law):
        """Check the safe action and the driver convention; build what they need."""
        s, model = self.settings, self.model
        n, nu = self.n_joints, model.nu
        self.status.safe_action = s.safe_action
        compensation = s.driver_compensation or ()
        self.compensates = tuple(compensation)
        self._driver = np.zeros(nu)          # what the driver adds at this state [N m]
        self._command = np.zeros(nu)         # the effort sent: the total minus the driver's
        self._applied_total = np.zeros(nu)
        self._total = False                  # the tick's effort is a total joint torque
        twin = self.rigid_twin
        if 'gravity' in compensation or s.safe_action == 'hold':
            if twin is None or twin.nv != n or twin.nu != nu:
                what = ('safe_action: hold' if s.safe_action == 'hold'
                        else 'driver_compensation: gravity')
                raise ConfigError(f'{what}: needs the rigid twin of the model')
            self._twin_data = twin.create_data()
            self._twin_pinv = np.linalg.pinv(twin.input_matrix())
            self._twin_static = np.zeros(n)
        self._friction = 'friction' in compensation
        self._hold_taken = False             # the hold law's target is taken
        self.hold_law = None
        if s.safe_action == 'hold':
            self.hold_law = hold_law if hold_law is not None else self._build_hold_law()

    def _send(self, effort):
        """Return the command for the tick's ``effort``; keep the total the joints get.

        With ``driver_compensation`` a total joint torque (tracking, gravity, hold) is sent
        less what the driver adds; a zero command is sent as it is, the driver's part then
        being the whole torque (module doc, "Driver convention").
        """
        sent = self._sent[self._sent_next]
        self._sent_next = (self._sent_next + 1) % self._sent.shape[0]
        if not self.compensates:
            sent[:] = effort
            return effort
        if self._total:
            sent[:] = effort
            np.subtract(effort, self._driver, out=self._command)
            return self._command
        np.add(effort, self._driver, out=sent)
        return effort

    def zero_effort(self):
        """Return zero effort: the command sent is zero (`safety.LatchedSafety`)."""
        self._total = False
        return super().zero_effort()

    def holding_effort(self):
        """Return the gravity effort at the last state, a total joint torque (`safety`)."""
        effort = super().holding_effort()
        self._total = self._valid
        return effort

    def safe_effort(self):
        """Return the safe action's command at the last state (stale states: the watchdog).

        ``hold`` evaluates its law at the last measured joints with zero velocity (the last
        measured velocity is stale). Never raises: zero if the action fails.
        """
        try:
            self._total = False
            if self.settings.safe_action == 'zero' or not self._valid:
                return self.zero_effort()
            n = self.n_joints
            effort = self._safe_tick(self._prev_time, np.zeros(n))
            if not np.isfinite(effort).all():
                return self.zero_effort()
            return self._command_of(effort)
        except Exception:                   # noqa: B902 - a safe command, whatever happens
            return self.zero_effort()

    def _command_of(self, effort):
        """Return the command sent for the effort ``effort`` of the last state (`_send`)."""
        if self.compensates and self._total:
            np.subtract(effort, self._driver, out=self._command)
            return self._command
        return effort

    def _safe_tick(self, t, joint_velocities):
        """Return the safe action's effort at the state in ``q`` (module doc).

        ``joint_velocities``: the joints' [rad/s] (the hold law damps them).
        """
        action = self.settings.safe_action
        if action == 'zero':
            return self.zero_effort()
        self.step = f'safe action {action}'
        if self.hold_law is not None:
            effort = self._hold(t, joint_velocities)
            if effort is not None:
                self.effort[:] = effort
                self.last_effort[:] = effort
                self._total = True
                return self.effort
        return self.holding_effort()

    def _hold(self, t, joint_velocities):
        """Return the hold law's effort at ``t``, or None when it did not realize its row.

        Its target is taken afresh (its program restarted) until a tick finds every joint
        slower than `SLOW_FRACTION` of its velocity limit (module doc).
        """
        law, n = self.hold_law, self.n_joints
        if not self._hold_taken or law.fault:
            law.enable()                    # the target: this state's joints
            slow = np.abs(joint_velocities) <= SLOW_FRACTION * self.velocity_limit
            self._hold_taken = bool(slow.all())
        effort = law.update(t, self.q[:n], joint_velocities)
        return effort if law.status.tracking else None

    def _driver_part(self):
        """Fill ``_driver``: what the driver adds at this state (module doc)."""
        n = self.n_joints
        self._driver[:] = 0.0
        if 'gravity' in self.compensates:
            twin = self.rigid_twin
            static = twin.bias_forces(self._twin_data, self.q[:n], np.zeros(n))
            np.matmul(self._twin_pinv, static, out=self._driver)
        if self._friction:
            self._driver += self.input_pinv[:, :n] @ self.model.joint_friction(self.v[:n])
