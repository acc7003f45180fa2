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
* **the arm follows it** by a filtered joint law about that trajectory (`joint_follower`:
  the internal law's effort u_m as feedforward, the rigid twin's gravity difference, and
  M_r-weighted PID feedback on e = theta - theta_m rolled off well below the link's
  modes, at the largest bandwidth the start-up check admits). On the exact plant e stays
  at the integration error and u = u_m: the flexible law's accuracy. Off it, the feedback
  is the follower's, which nothing elastic cancels: the plant's loop is robust as the
  follower's check says, and u_m is a feedforward that does not depend on the plant's
  state.

Linearized at rest the closed loop is block-triangular (the internal model does not see
the plant): its eigenvalues are those of the law on the model (the nominal checks) and
those of the follower's loop on the plant, which the start-up check evaluates on the
model and over the uncertainty (`admission.following_check`). Only joints are measured:
the law's modes are the internal model's, no estimator is needed. ``following_error``
(max |e| [rad]) says how far the arm is from its model (on /diagnostics).
"""

import numpy as np

from ..mechanics.equilibrium import static_equilibrium
from ..mechanics.simulation import Simulation
from .joint_follower import make_follower

# Integration of the internal model: linearly implicit (stiff strain modes of a Cosserat
# model), steps per control period.
INTEGRATOR = 'rosenbrock2'
STEPS_PER_PERIOD = 2


class ModelFollowing:
    """The internal model and the joint-following law of the module doc.

    With ``lead`` periods of input delay (the controller's ``delay_periods``) the internal
    model runs that far ahead of the arm: the effort computed at tick k reaches the arm over
    period k + lead, the interval over which the internal model applies it, so on the exact
    plant the arm is where the internal model was ``lead`` ticks before, and the follower
    compares it with that state (kept in a ring), not with the newest.
    """

    def __init__(self, model, rigid_twin, period, lead=0, payload_range=(1.0, 1.0)):
        """Prepare for the controller's full ``model`` and its rigid twin at ``period``.

        ``payload_range``: the payload factors the arm may have (the follower estimates its
        payload within them: `joint_follower`).
        """
        self.model, self.twin, self.period = model, rigid_twin, float(period)
        self.payload_range = tuple(payload_range)
        self.n, self.lead = model.n_joints, int(lead)
        self.data = model.create_data()
        self.simulation = None             # the internal model, from the first state
        self.effort = np.zeros(model.nu)   # u_m of the last tick
        self.follower = None               # the joint law (`set_follower`)
        self._followers = {}               # verdict -> its law, built once
        self.error = 0.0                   # max |theta - theta_m| [rad] at the last tick
        self.payload_factor = 1.0          # the follower's payload estimate (`joint_follower`)
        self._time = None                  # the internal model's time [s]
        # The internal model's states of the last lead + 1 ticks; row _next: the oldest.
        self._past_q = np.zeros((self.lead + 1, model.nq))
        self._past_v = np.zeros((self.lead + 1, model.nv))
        self._past_a = np.zeros((self.lead + 1, model.nv))   # their accelerations under u_m
        self._next = 0
        self._full = np.zeros(model.nv)

    def set_follower(self, follower):
        """Follow with the law the start-up check chose (`admission.following_check`)."""
        if follower not in self._followers:
            self._followers[follower] = make_follower(self.twin, self.period, follower,
                                                      self.payload_range)
        law = self._followers[follower]
        if law is not self.follower:
            if self.follower is not None and hasattr(law, 'take_over'):
                law.take_over(self.follower)      # the estimates go on
            else:
                law.reset()
            self.follower = law

    def reset(self, t, joint_positions, joint_velocities, in_flight=()):
        """Start the internal model at the measured joints (modes at rest).

        It starts at the arm's time ``t``, then moves ``lead`` periods ahead under
        ``in_flight``: the efforts already sent that the arm gets over those periods
        (oldest first; zero when fewer are given), so that it starts where the arm will
        be (a Smith predictor's start). The follower's states are forgotten too.
        """
        q = self.model.neutral_configuration().astype(float)
        q[:self.n] = joint_positions
        try:
            q = static_equilibrium(self.model, q, self.data)
        except ValueError:
            pass                           # a rest the solver misses: straight links
        v = np.zeros(self.model.nv)
        v[:self.n] = joint_velocities
        self.simulation = sim = Simulation(self.model, self.period / STEPS_PER_PERIOD,
                                           INTEGRATOR, q0=q, v0=v, refuse_unstable=False)
        if self.follower is not None:
            self.follower.reset()
        self._past_a[:] = 0.0
        self._past_q[0], self._past_v[0] = sim.q, sim.v
        in_flight = list(in_flight)
        for k in range(1, self.lead + 1):
            self.effort[:] = in_flight[k - 1] if k - 1 < len(in_flight) else 0.0
            sim.advance(self.effort, self.period)
            self._past_q[k], self._past_v[k] = sim.q, sim.v
        self.effort[:] = 0.0
        self._time = t + self.lead * self.period
        self._next = 0

    def advance(self, t):
        """Move the internal model to ``t`` [s] plus the lead under the last u_m.

        Whole periods, at least one; its state is kept for the follower.
        """
        target = t + self.lead * self.period
        periods = max(1, int(round((target - self._time) / self.period)))
        self.simulation.advance(self.effort, periods * self.period)
        self._time = target
        self._past_q[self._next] = self.simulation.q
        self._past_v[self._next] = self.simulation.v
        self._next = (self._next + 1) % (self.lead + 1)

    def lagged(self):
        """Return the internal model's (q, v) at the arm's time: ``lead`` ticks ago."""
        return self._past_q[self._next], self._past_v[self._next]

    def follow(self, effort, joint_positions, joint_velocities):
        """Take the law's u_m; return u (module doc), reused by the next call."""
        self.effort[:] = effort
        n, sim = self.n, self.simulation
        # The newest state's acceleration under u_m, kept for when the arm gets there.
        newest = (self._next - 1) % (self.lead + 1)
        self._past_a[newest] = self.model.forward_dynamics(self.data, sim.q, sim.v, effort,
                                                           self._full)
        # The oldest kept state (the newest itself without lead).
        qm, vm, am = self._past_q[self._next], self._past_v[self._next], self._past_a[self._next]
        out = self.follower.effort(effort, joint_positions, joint_velocities, qm[:n], vm[:n],
                                   am[:n])
        self.error = self.follower.largest_error
        self.payload_factor = getattr(self.follower, 'payload_factor', 1.0)
        return out
