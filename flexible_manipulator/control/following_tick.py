"""Model following's part of the program controller's tick (`FollowingTick`).

Model following (``model_following``, `model_following.ModelFollowing`): the
controller's law runs on an internal simulation of the full model (its modes are the
internal model's; no estimator), ``delay_periods`` ahead of the arm, and the arm follows
the internal model's joints by a joint law the check chooses (`joint_follower`: computed
torque on the rigid twin, or a filtered joint law for fast lightly damped link modes);
check (b) of `controller_setup` then checks the law's loop on the internal model (no
delay) and the follower's check the arm's loop (the plant, the joint law's states,
``delay_periods``; every pole damped by ``joint_follower.DAMPING_MARGIN``) on the model
and over the uncertainty.
"""

import numpy as np


class FollowingTick:
    """Mixin of `program_controller.ProgramController`: the internal model's state (module doc).

    Used when the controller has ``following`` (`model_following.ModelFollowing`).
    """

    def _internal_state(self, t, first, measured):
        """Model following: move the internal model to ``t``; the law takes its state.

        The measured joints go to ``_arm``; the internal model starts at them (modes at
        rest) on the first state and after a gap (enable restarts); a program switch goes
        on with it.
        """
        n, following = self.n_joints, self.following
        arm_q, arm_v = self._arm
        arm_q[:] = self.q[:n]
        arm_v[:] = self.v[:n]
        if first or following.simulation is None:
            # The efforts sent that the arm has not received yet (newest delay_periods).
            ring, d = self._sent, self.delay_periods
            following.reset(t, arm_q, arm_v, [ring[(self._sent_next + k) % (d + 1)]
                                              for k in range(1, d + 1)])
            following.set_follower(self.entry.follower)
        else:
            # A program switch goes on from the internal model where it is: restarted at
            # the arm under the efforts in flight (the follower's corrections for an arm
            # off its model among them), it would jump away from the arm.
            following.advance(t)
            if self._start is None:
                following.set_follower(self.entry.follower)
        qm, vm = following.simulation.q, following.simulation.v
        self.q[:n], self.v[:n] = qm[:n], vm[:n]
        np.take(qm[n:], self.mode_select, out=self.q[n:])
        np.take(vm[n:], self.mode_select, out=self.v[n:])
        if not measured:                # the arm's modes: the internal model's at its time
            lagged_q, lagged_v = following.lagged()
            self._measured[0][:], self._measured[1][:] = lagged_q[n:], lagged_v[n:]

    def _report_arm(self, tau):
        """Evaluate the rows on the arm (model following): the residual is the arm's.

        Joints measured; modes measured when they came with the state, else the internal
        model's. ``status.following_error`` is max |theta - theta_m| [rad].
        """
        n, q, v = self.n_joints, self._report_q, self._report_v
        q[:n], v[:n] = self._arm
        np.take(self._measured[0], self.mode_select, out=q[n:])
        np.take(self._measured[1], self.mode_select, out=v[n:])
        self.entry.program.evaluate(tau, q, v)
        self.status.following_error = self.following.error
        self.status.payload_factor = self.following.payload_factor
