"""Run-time test of the model: past it, the law gives way to its robust alternative.

With the elastic state estimated the test is the observer's; with it measured (strain
gauges, a simulation's modal states) the same observer predicts each tick from the last
measured modal state and the joint motion, and its innovation is the test all the same: a
stiffness off its model moves the measured modes away from the model's prediction, which
the joint rows of the step see through the modal inertia coupling (the demo arm at
stiffness x0.8 under config/sim.yaml's law, which declares the model exact: caught within
1.1 s and handed over to model following, where the law alone faults at the velocity
limit).
The observer's normalized innovation squared
e_k = nu_k^T S^-1 nu_k (``elastic_estimator``; S the innovation covariance of the gain's
design, ``observer_design``) is chi-square distributed with n degrees of freedom (n
joints) per tick while the arm is its model within the declared noise and uncertainty,
and the innovations of a Kalman filter are white: the mean of N ticks then exceeds
chi2_(1 - p)(n N) / N with probability p (the normalized-innovation test of filter
consistency; Bar-Shalom, Li, Kirubarajan, "Estimation with Applications to Tracking and
Navigation", 2001, sec. 5.4). When the mean over the last `WINDOW` seconds of corrected
ticks exceeds it at p = `FALSE_ALARM`, the arm is off its model beyond what the start-up
check admitted (the observer's covariances come from the declared ``uncertainty``), and
the law the start-up check found robust takes over (`MismatchGuard`): model following
(the law on an internal model, the arm following its joints on the rigid twin), else
computed torque on the rigid twin. The active program goes on where it was (program
time, held joints). The law stays degraded until the controller is built again (a node
restart): the model has to be fixed first.

Until the window is full the mean of the ticks so far is tested against the threshold of
that many ticks (41 for one tick of two joints), so a gross mismatch trips within a few
ticks. Noise-free simulation on the model gives means near zero. In the mismatch
benchmark (bench/README.md) the test stays below its threshold (3.27 for two joints and
125 ticks) on every plant and program but one, and on plants far outside the default set
(stiffness x0.5 to x2, payload x16, friction x50); it trips where the estimated law's error
grows: `hold` on motors with half the modelled armature (then within 0.04 s, and model
following holds the arm), lambda-point programs on links four times stiffer than
modelled, and joints whose friction is a thousand times the model's (a brake left on).
Sensors noisier than ``observer_noise`` declares make the test trip on the model: declare
them as they are.
"""

import numpy as np

# Window of the mean normalized innovation [s].
WINDOW = 0.25
# Probability of the mean of one window exceeding the threshold on the model. The test
# runs every tick: at 500 Hz this bounds false trips to one in 2e9 ticks (46 days).
FALSE_ALARM = 1e-9
MISMATCH_ACTIONS = ('degrade', 'warn')


def threshold(joints, ticks, false_alarm=FALSE_ALARM):
    """Mean of ``ticks`` chi-square(``joints``) draws exceeded with ``false_alarm``.

    The sum of the draws is chi-square(``joints`` ``ticks``): its inverse survival
    function at ``false_alarm`` (``scipy.special.chdtri``: exact at small probabilities,
    where 1 - p rounds; and no scipy.stats import at a controller's start), over
    ``ticks``.
    """
    from scipy.special import chdtri
    return float(chdtri(joints * ticks, false_alarm) / ticks)


class InnovationTest:
    """The windowed mean of the normalized innovation against its threshold (module doc).

    Until the window is full, the mean of the ticks so far is tested against the
    threshold of that many ticks (higher: a gross mismatch trips within a few ticks).
    """

    def __init__(self, joints, period, window=WINDOW):
        """Prepare for ``joints`` degrees of freedom, a tick per ``period`` [s]."""
        ticks = max(1, int(round(window / period)))
        self.values = np.zeros(ticks)        # the last ``ticks`` normalized innovations
        self.count = 0                       # values taken (saturates at ``ticks``)
        self.index = 0                       # ring index of the next value
        self.total = 0.0                     # their sum
        # Threshold of the mean of k + 1 ticks, k < ticks; the last is the full window's.
        self.limits = np.array([threshold(joints, k) for k in range(1, ticks + 1)])
        self.limit = float(self.limits[-1])
        self.mean = 0.0                      # mean of the values in the window

    def add(self, value):
        """Take one tick's value; True if the window's mean exceeds its threshold."""
        ticks = self.values.size
        self.total += value - self.values[self.index]
        self.values[self.index] = value
        self.index = (self.index + 1) % ticks
        self.count = min(self.count + 1, ticks)
        if self.index == 0:
            self.total = float(np.sum(self.values))   # no drift of the running sum
        self.mean = self.total / self.count
        return self.mean > self.limits[self.count - 1]


class MismatchGuard:
    """A `ProgramController` whose estimated model is tested at run time (module doc).

    Everything but `update` is the active law's (attributes and methods are delegated):
    ``law`` is the primary controller until the test trips, then ``robust``. ``degraded``
    says why it tripped ('' before); ``action``: ``degrade`` or ``warn`` (report only).
    """

    def __init__(self, primary, robust, action='degrade', note=''):
        """Guard ``primary`` (elastic state estimated); ``robust``: the law to take over.

        ``action``: one of `MISMATCH_ACTIONS` (checked with the settings); ``note``: what
        ``robust`` is, for the message.
        """
        self.primary, self.robust, self.action, self.note = primary, robust, action, note
        self.law = primary
        self.degraded = ''
        self.test = InnovationTest(primary.n_joints, primary.period)

    def __getattr__(self, name):
        """Delegate to the active law."""
        return getattr(self.__dict__['law'], name)

    def update(self, t, *state, **options):
        """Run the active law's ``update``; test the primary's innovation after each tick."""
        law = self.law
        effort = law.update(t, *state, **options)
        if law is self.primary and law.estimator is not None and law.estimator.corrected \
                and not self.degraded:
            if self.test.add(law.status.normalized_innovation):
                self._trip(t)
                if self.law is not law:
                    return self.law.update(t, *state, **options)
        return effort

    def _trip(self, t):
        """Say why; hand over to the robust law (``degrade``) where the program is."""
        test, primary = self.test, self.primary
        what = (f'the arm is off its model beyond the declared uncertainty: the mean '
                f'normalized innovation of the elastic-state observer over {test.count} ticks '
                f'is {test.mean:.3g} at t = {t:.3f} s (limit {test.limits[test.count - 1]:.3g}; '
                f'{primary.n_joints} on the model)')
        if self.action == 'warn' or self.robust is None:
            self.degraded = what + ('' if self.robust is None else '; mismatch_action: warn')
            return
        robust = self.robust
        robust.switch(primary.active)
        robust._start = primary._start
        for mine, theirs in zip(robust.entry.holds, primary.entry.holds):
            mine.reference.position[:] = theirs.reference.position
        robust.enabled = primary.enabled
        robust.fault = primary.fault
        robust.last_effort[:] = primary.last_effort
        self.law = robust
        self.degraded = f'{what}: switched to {self.note}'
