"""Model following's joint laws: the arm follows the internal model's joints.

Model following (`model_following`) runs the program's law on an internal simulation of
the full model and makes the arm's joints theta follow the internal model's theta_m. This
module holds that second law, in two forms. The filtered one, with e = theta - theta_m:

    u = u_m + g_r(theta) - g_r(theta_m) + Y p + y,
    y = L(s)^3 [M_r(theta_m) (-w^2 e - 2 w e') - k_i w^3 rho],

u_m the internal law's effort (the feedforward), g_r the rigid twin's gravity torques,
M_r its mass matrix, w the follower's bandwidth [rad/s], rho the integral of M_r e [N m s]
(less its payload part Y p, below) and L a first-order low pass at `FILTER_RATIO` w,
three times (`FILTER_ORDER`), held per period as its exact discrete pole
a = exp(-w_f T): x <- a x + (1 - a) input, stage after stage; y is the last stage's
state, so the effort of tick k answers the error of tick k - 1 (one more period of lag,
which the check below includes).

Why this shape. A real arm's flexible link has modes far above the rigid motion that are
lightly damped (1-2 %); with one or two periods of input delay, joint feedback that
reaches them with any gain pumps energy into them (delayed velocity feedback past 90
degrees of lag is negative damping). The rigid twin's computed torque (M_r, full
bandwidth) does, at 1-2 ms with 1-2 periods of delay, on the package's UR5e-like and
Panda-like arms. Here the feedback is rolled off at w_f: three decades per decade above
it, so a mode a decade above w_f sees the loop gain a thousand times smaller, while at
the rigid loop's crossover (about 2 w) the filter's lag is 3 atan(0.2) = 34 degrees. The
gain matrix is M_r's, as in computed torque: a diagonal gain sized to the joints'
diagonal inertia puts nearly parallel joints (the Panda's 1 and 3 near its upright
pose) at several times w in their difference and the filter's lag makes them unstable.
Gravity goes around the filter (its stiffness is a low-frequency term, and delaying it
would leave the arm's unstable gravity directions to the filtered loop); the integral
(`INTEGRAL_RATIO`) takes out what the feedforward misses statically (a payload off its
model). Coriolis and damping are the feedforward's: cancelling the joint damping on the
measured velocity is itself a delayed velocity feedback.

The payload. A tool or load off its model is the one error that moves with the pose: its
gravity torque changes along the motion faster than the integral, at the follower's
bandwidth, can re-learn it, and on a wrist joint (small M_r, so a small stiffness
M_r w^2) a few hundredths of a newton metre of it are milliradians. The payload's
regressor Y = ID_r(theta_m, theta_m', theta_m''; payload x2) - ID_r(...; payload x1)
(per unit of the payload factor, on the internal model's trajectory: a feedforward
signal, not the arm's state; inverse dynamics being linear in the inertias, it is the
payload's alone on massless links, `perturbation.payload_alone`: one walk) carries the
integral's part along it, as a factor:

    r = M_r(theta_m) e,   c = Y^T (rho + r T) / (Y^T Y + eps),
    rho <- rho + r T - c Y,   Phi <- Phi + c,   p = -k_i w^3 Phi,

the payload factor's estimate 1 + p kept within the declared payload range (what is
beyond it stays in rho). rho stays orthogonal to Y; the payload's efforts Y p go around
the filter, at every pose (gravity and inertia), so the integral does not have to follow
them along the motion. A pure payload error d = Y delta at a pose ends with rho = 0 and
p = delta. This is the desired-trajectory regressor of adaptive control (Sadegh and
Horowitz's desired compensation law) with its gain set by the integral's instead of a
free one, and the start-up check analyses it with the rest (`state_space`: Y at the
check's pose, Phi one more state).

Damping injected at the joints. The filter keeps the loop off the link's modes, so they
ring with their own damping: with a soft joint law the arm's first mode is the one with
its joints free (the link swinging against the rotor's armature: 40-50 Hz on the
package's 6- and 7-axis arms), in which the joints move, at an effective damping ratio of
0.1-0.3 % (the link's 1-2 % on a mode whose energy is partly the joint's). A collocated
damper -k M_r(theta_m) H(z) e' reaches it: H a band-pass (`bandpass`: unit gain, no
phase at its centre w_c) on the joint rate error, centred above the mode so that its
phase lead there takes back part of the input delay's lag (an unfiltered rate feedback
past 90 degrees of lag is negative damping, and the band-pass's roll-off keeps the
higher bending modes, 1000-2000 rad/s, out of its reach). Its effort goes around the low
pass, from this tick's rate. Centre and gain are chosen at start-up (below) for the
largest least damping ratio of the poles near that mode over the uncertainty set.

The law and its bandwidth are chosen at start-up (`admission.following_check`): for this
law and for computed torque on the rigid twin (`ComputedTorqueFollower`, unfiltered, the
most accurate where it passes), the largest w on a ladder from the program's alpha down by
`BANDWIDTH_STEP` for which the linearized sampled loop
(`loop_checks.LinearLoop.dynamic_radius`: the plant, this law's exact discrete states
(`state_space`), the input delay) has every pole damped by at least `DAMPING_MARGIN` on
the model and on every plant of the declared uncertainty, at the program's start and at
poses along its reference; the higher of the two wins (the filtered law on a tie). Then,
on the filtered law, the damper: `DAMPER_CENTRES` times the free mode by `DAMPER_GAINS`,
each admitted by the same check, the one that damps the poles in `DAMPER_BAND` times the
free mode the most (none when none does better than the law without it).
"""

import math

import numpy as np

from ..mechanics.perturbation import payload_alone

# w_f / w: the low pass's corner over the follower's bandwidth.
FILTER_RATIO = 10.0
# eps of the payload split (module doc) over the largest Y^T Y seen: where the payload's
# efforts vanish (its gravity along the joint axes), the integral keeps the error.
PAYLOAD_FLOOR = 1e-6
# Cascaded first-order stages of the low pass.
FILTER_ORDER = 3
# k_i: the integral gain is k_i w^3 (the PID's zeros stay below w).
INTEGRAL_RATIO = 0.5
# Least damping ratio of every closed-loop pole of the admitted follower: a twentieth of
# the least structural damping of the default uncertainty (2 % x 0.5).
DAMPING_MARGIN = 0.0005
# The damping injected at the joints (module doc): band-pass centres over the arm's first
# mode with its joints free, gains k [1/s], and the band-pass's damping ratio.
DAMPER_CENTRES = (1.5, 2.0, 3.0)
DAMPER_GAINS = (5.0, 10.0, 20.0)
DAMPER_ZETA = 0.5
# The poles the damper is for: within these factors of the first free mode's frequency.
DAMPER_BAND = (0.6, 1.5)
# The bandwidth ladder: from the program's alpha down by this factor, at most STEPS times.
BANDWIDTH_STEP = 0.8
BANDWIDTH_STEPS = 14


def state_space(mass, stiffness, period, bandwidth, payload=None, damper=None):
    """Return the law of the module doc linearized at rest, a discrete system on (e, e').

    ``mass``, ``stiffness``: M_r and the rigid twin's gravity stiffness dg_r/dtheta at the
    linearization (n x n); ``payload``: the payload's regressor Y there (its gravity per
    unit factor, n), or None for a law without the payload's estimate; ``damper``: (centre
    [rad/s], gain [1/s]) of the damping injected at the joints, or None. Returns (A, B, C,
    D) with the state x = (rho, Phi, stage 1, ..., stage k, damper) (Phi only with
    ``payload``, the damper's 2 n states only with ``damper``),
    x_(k+1) = A x_k + B (e_k, e'_k), u_k - u_m = C x_k + D (e_k, e'_k) (D: the gravity
    difference, around the filter).
    """
    n, w, T = mass.shape[0], float(bandwidth), float(period)
    a = math.exp(-FILTER_RATIO * w * T)
    gain = INTEGRAL_RATIO * w ** 3
    m = 0 if payload is None else 1               # Phi
    size = n * (1 + FILTER_ORDER) + m
    A, B, C = np.eye(size), np.zeros((size, 2 * n)), np.zeros((n, size))
    # rho_(k+1) = rho_k + T (I - y y^T) M e_k; Phi_(k+1) = Phi_k + T Y^T M e_k / Y^T Y.
    B[:n, :n] = T * mass
    if m:
        Y = np.asarray(payload, dtype=float)
        B[n, :n] = T * (Y @ mass) / (Y @ Y)
        B[:n, :n] -= np.outer(Y, B[n, :n])
        C[:, n] = -gain * Y                       # Y p, p = -k_i w^3 Phi: around the filter
    first = slice(n + m, 2 * n + m)
    A[first, first] = a * np.eye(n)
    A[first, :n] = -(1.0 - a) * gain * np.eye(n)
    B[first, :n] = -(1.0 - a) * w ** 2 * mass
    B[first, n:] = -(1.0 - a) * 2.0 * w * mass
    for stage in range(1, FILTER_ORDER):
        rows = slice(n * (1 + stage) + m, n * (2 + stage) + m)
        A[rows, rows] = a * np.eye(n)
        A[rows, n * stage + m:n * (1 + stage) + m] = (1.0 - a) * np.eye(n)
    C[:, n * FILTER_ORDER + m:] = np.eye(n)
    D = np.hstack([stiffness, np.zeros((n, n))])
    if damper is None:
        return A, B, C, D
    # The band-pass on e' per joint, x1 <- -a1 x1 - a2 x2 + e', x2 <- x1,
    # y = c1 x1 + c2 x2 + b0 e'; its effort -k M_r y.
    (a1, a2), (b0, c1, c2) = bandpass(damper[0], period)
    gain = float(damper[1]) * mass
    A = _grown(A, 2 * n)
    A[size:size + n, size:size + n] = -a1 * np.eye(n)
    A[size:size + n, size + n:] = -a2 * np.eye(n)
    A[size + n:, size:size + n] = np.eye(n)
    B = np.vstack([B, np.zeros((2 * n, 2 * n))])
    B[size:size + n, n:] = np.eye(n)
    C = np.hstack([C, -c1 * gain, -c2 * gain])
    D[:, n:] -= b0 * gain
    return A, B, C, D


def _grown(A, extra):
    """Return A with ``extra`` zero rows and columns appended."""
    grown = np.zeros((A.shape[0] + extra, A.shape[1] + extra))
    grown[:A.shape[0], :A.shape[1]] = A
    return grown


def bandpass(centre, period):
    """Return ((a1, a2), (b0, c1, c2)) of the damper's discrete band-pass (module doc).

    H(s) = 2 zeta w_c s / (s^2 + 2 zeta w_c s + w_c^2) (zeta = `DAMPER_ZETA`, unit gain
    and no phase at w_c), by Tustin's map prewarped at w_c: H(z) = (b0 + b1 z^-1 +
    b2 z^-2) / (1 + a1 z^-1 + a2 z^-2), written as the state update of `state_space`
    (c1 = b1 - b0 a1, c2 = b2 - b0 a2).
    """
    w, T, zeta = float(centre), float(period), DAMPER_ZETA
    c = w / math.tan(0.5 * w * T)
    norm = c * c + 2.0 * zeta * w * c + w * w
    b0, b1, b2 = 2.0 * zeta * w * c / norm, 0.0, -2.0 * zeta * w * c / norm
    a1 = (2.0 * w * w - 2.0 * c * c) / norm
    a2 = (c * c - 2.0 * zeta * w * c + w * w) / norm
    return (a1, a2), (b0, b1 - b0 * a1, b2 - b0 * a2)


class FilteredFollower:
    """The filtered law of the module doc, one tick at a time; allocates nothing per tick."""

    def __init__(self, twin, period, payload_range=(1.0, 1.0)):
        """Prepare for the rigid twin ``twin`` (n joints, fully actuated) at ``period``.

        ``payload_range``: the payload factors the arm may have (the declared uncertainty's);
        the payload estimate of the module doc stays within it; (1, 1): none.
        """
        self.twin, self.period = twin, float(period)
        n = twin.n_joints
        self.data = twin.create_data()
        self.bandwidth = 0.0
        self._a = 1.0
        self._integral = np.zeros(n)        # rho: the integral of M_r e off the payload [N m s]
        self._stages = np.zeros((FILTER_ORDER, n))
        self._raw, self._scratch = np.zeros(n), np.zeros(n)
        self._mass = np.zeros((n, n))
        self._gravity, self._gravity_m = np.zeros(n), np.zeros(n)
        self._zero = np.zeros(n)
        self._error, self._rate = np.zeros(n), np.zeros(n)
        self.out = np.zeros(n)
        self.largest_error = 0.0           # max |theta - theta_m| at the last tick [rad]
        # The payload's regressor Y (module doc): the inverse dynamics of the payload alone.
        low, high = (float(x) - 1.0 for x in payload_range)
        self._payload = payload_alone(twin) if high > low else None
        self._payload_data = None if self._payload is None else self._payload.create_data()
        self._payload_bounds = (low, high)  # p's range
        self._regressor = np.zeros(n)
        self._payload_integral = 0.0        # Phi
        self._largest_yy = 0.0              # max Y^T Y since the reset [N^2 m^2]
        self.payload_factor = 1.0           # 1 + p: the payload's factor the law applies
        self.damper = None                  # (centre [rad/s], gain [1/s]) or None
        self._bandpass = ((0.0, 0.0), (0.0, 0.0, 0.0))
        self._damper_states = np.zeros((2, n))   # x1, x2 of the band-pass, per joint
        self._damper_out, self._damper_rate = np.zeros(n), np.zeros(n)
        self._damper_term = np.zeros(n)

    def set_bandwidth(self, bandwidth):
        """Follow with bandwidth w [rad/s] (the filter's pole moves with it)."""
        self.bandwidth = float(bandwidth)
        self._a = math.exp(-FILTER_RATIO * self.bandwidth * self.period)

    def set_damper(self, damper):
        """Inject damping at the joints: ``damper`` = (centre [rad/s], gain [1/s]) or None."""
        self.damper = None if damper is None else (float(damper[0]), float(damper[1]))
        if self.damper is not None:
            self._bandpass = bandpass(self.damper[0], self.period)
        self._damper_states[:] = 0.0

    def take_over(self, other):
        """Go on from ``other``'s states (a program switch that changed the law's gains).

        The integral, the payload's estimate and the low pass carry over (they are torques
        and a factor, whatever the gains); the damper's band-pass starts at rest. From a
        law without these states (computed torque), a reset.
        """
        if not isinstance(other, FilteredFollower):
            self.reset()
            return
        self._integral[:] = other._integral
        self._stages[:] = other._stages
        self._damper_states[:] = 0.0
        self._largest_yy, self.payload_factor = other._largest_yy, other.payload_factor
        gain = INTEGRAL_RATIO * self.bandwidth ** 3
        self._payload_integral = -(self.payload_factor - 1.0) / gain if gain > 0.0 else 0.0

    def reset(self):
        """Forget the integral, the payload and the filters (the arm starts on the model)."""
        self._integral[:] = 0.0
        self._stages[:] = 0.0
        self._damper_states[:] = 0.0
        self._payload_integral, self._largest_yy, self.payload_factor = 0.0, 0.0, 1.0

    def effort(self, feedforward, theta, rate, theta_m, rate_m, acceleration_m):
        """Return u (module doc) for the measured joints and the internal model's.

        ``acceleration_m``: the internal model's joint accelerations (the payload's
        regressor). The array is reused by the next call.
        """
        twin, data, w, a = self.twin, self.data, self.bandwidth, self._a
        error = np.subtract(theta, theta_m, out=self._error)
        error_rate = np.subtract(rate, rate_m, out=self._rate)
        self.largest_error = float(np.abs(error, out=self._scratch).max()) if error.size else 0.0
        out = self.out
        out[:] = self._stages[-1]            # y_k: the filter's state, answering tick k - 1
        out += twin.bias_forces(data, theta, self._zero, self._gravity)
        # M_r(theta_m) and g(theta_m) from one walk of the twin.
        mass, gravity_m = twin.mass_and_bias(data, theta_m, self._zero, self._mass,
                                             self._gravity_m)
        out -= gravity_m
        out += feedforward
        # The next filter state: M_r(theta_m) (-w^2 e - 2 w e') - k_i w^3 rho.
        raw, scratch = self._raw, self._scratch
        gain = INTEGRAL_RATIO * w ** 3
        np.multiply(error, -w * w, out=scratch)
        error_rate *= 2.0 * w
        scratch -= error_rate
        np.matmul(mass, scratch, out=raw)
        np.multiply(self._integral, gain, out=scratch)
        raw -= scratch
        if self.damper is not None:         # -k M_r H(z) e', from this tick's e'
            out -= self._damping(mass, rate, rate_m)
        # Y every tick: the internal model's accelerations carry its modes, which a Y held
        # over ticks samples into a slow error (the payload x2 plants track 30 % worse).
        regressor = self._payload_regressor(theta_m, rate_m, acceleration_m)
        if regressor is not None:              # Y p, around the filter
            np.multiply(regressor, self.payload_factor - 1.0, out=scratch)
            out += scratch
        stages = self._stages
        for stage in range(FILTER_ORDER - 1, 0, -1):     # each stage from the old one before
            stages[stage] *= a
            np.multiply(stages[stage - 1], 1.0 - a, out=scratch)
            stages[stage] += scratch
        np.multiply(raw, 1.0 - a, out=scratch)
        stages[0] *= a
        stages[0] += scratch
        # The integral: r = M_r e, split along Y (module doc).
        np.matmul(mass, error, out=scratch)
        scratch *= self.period
        if regressor is None:
            self._integral += scratch
        else:
            self._split(scratch, regressor, gain)
        if not math.isfinite(float(out @ out)):
            raise FloatingPointError('model following: the effort is not finite')
        return out

    def _damping(self, mass, rate, rate_m):
        """Return k M_r y, y = H(z) e' (`bandpass`), and advance the band-pass one tick."""
        (a1, a2), (b0, c1, c2) = self._bandpass
        x1, x2 = self._damper_states
        y, e_rate, term = self._damper_out, self._damper_rate, self._damper_term
        np.subtract(rate, rate_m, out=e_rate)
        np.multiply(x1, c1, out=y)
        y += np.multiply(x2, c2, out=term)
        y += np.multiply(e_rate, b0, out=term)
        # x1 <- -a1 x1 - a2 x2 + e', x2 <- x1 (the old x1).
        e_rate -= np.multiply(x1, a1, out=term)
        e_rate -= np.multiply(x2, a2, out=term)
        x2[:] = x1
        x1[:] = e_rate
        np.matmul(mass, y, out=term)
        term *= self.damper[1]
        return term

    def _payload_regressor(self, theta_m, rate_m, acceleration_m):
        """Return Y (module doc) at the internal model's state, or None without a payload."""
        if self._payload is None:
            return None
        return self._payload.rnea(self._payload_data, theta_m, rate_m, acceleration_m,
                                  self._regressor)

    def _split(self, increment, regressor, gain):
        """Add ``increment`` (r T) to the integral, its part along Y as the payload.

        The whole integral's part along Y, rho's included (what the range once kept out,
        or what a pose change turned towards Y), goes to Phi: rho stays orthogonal to Y
        while p is within its range; the sum rho + Y Phi is unchanged.
        """
        rho = self._integral
        rho += increment
        yy = float(regressor @ regressor)
        self._largest_yy = max(self._largest_yy, yy)
        c = float(regressor @ rho) / (yy + PAYLOAD_FLOOR * self._largest_yy + 1e-300)
        low, high = self._payload_bounds
        estimate = min(max(-gain * (self._payload_integral + c), low), high)
        c = -estimate / gain - self._payload_integral if gain > 0.0 else 0.0
        self._payload_integral += c
        rho -= c * regressor
        self.payload_factor = 1.0 + estimate


def payload_gravity(twin, joints, payload_range):
    """Return the payload's regressor Y at rest at ``joints`` (module doc), or None.

    None when the law estimates no payload: ``payload_range`` is (1, 1), the twin has no
    payload, or its payload's gravity vanishes at ``joints``.
    """
    alone = payload_alone(twin) if payload_range[1] > payload_range[0] else None
    if alone is None:
        return None
    Y = alone.bias_forces(alone.create_data(), np.asarray(joints, dtype=float),
                          np.zeros(twin.n_joints))
    return Y if float(Y @ Y) > 0.0 else None


class ComputedTorqueFollower:
    """Computed torque on the rigid twin about the internal model's joints (unfiltered).

    u = u_m + M_r(theta) (theta_m'' - K_p e - K_d e') + h_r(theta, theta')
          - (M_r(theta_m) theta_m'' + h_r(theta_m, theta_m')):

    the most accurate follower where its loop is admitted (full bandwidth, the twin's
    Coriolis, damping and gravity cancelled about the trajectory); on arms whose link
    modes sit within reach of the sampled, delayed loop the check refuses it and the
    filtered law takes over (`admission.following_check`).
    """

    def __init__(self, twin, period, kp, kd):
        """Prepare for the rigid twin ``twin`` with gains K_p [1/s^2], K_d [1/s]."""
        self.twin, self.kp, self.kd = twin, float(kp), float(kd)
        n = twin.n_joints
        self.data = twin.create_data()
        self._M, self._Mm = np.zeros((n, n)), np.zeros((n, n))
        self._h, self._hm = np.zeros(n), np.zeros(n)
        self._target, self._scratch = np.zeros(n), np.zeros(n)
        self._error, self._rate = np.zeros(n), np.zeros(n)
        self.out = np.zeros(n)
        self.largest_error = 0.0           # max |theta - theta_m| at the last tick [rad]

    def reset(self):
        """Nothing to forget: the law has no states."""

    def effort(self, feedforward, theta, rate, theta_m, rate_m, acceleration_m):
        """Return u (class doc); the array is reused by the next call."""
        twin, data = self.twin, self.data
        error = np.subtract(theta, theta_m, out=self._error)
        self.largest_error = float(np.abs(error, out=self._scratch).max()) if error.size else 0.0
        error_rate = np.subtract(rate, rate_m, out=self._rate)
        target = self._target
        np.multiply(error, -self.kp, out=target)
        error_rate *= self.kd
        target -= error_rate
        target += acceleration_m
        out = self.out
        np.matmul(twin.mass_matrix(data, theta, self._M), target, out=out)
        out += twin.bias_forces(data, theta, rate, self._h)
        out -= np.matmul(twin.mass_matrix(data, theta_m, self._Mm), acceleration_m,
                         out=self._scratch)
        out -= twin.bias_forces(data, theta_m, rate_m, self._hm)
        out += feedforward
        if not math.isfinite(float(out @ out)):
            raise FloatingPointError('model following: the effort is not finite')
        return out


def follower(kind, bandwidth):
    """Return the verdict of a follower law of bandwidth w [rad/s].

    ``('computed_torque', K_p, K_d)`` with K_p = w^2, K_d = 2 w, or ``('filtered', w)``
    (`admission.following_check`); the filtered law with damping injected at the joints
    is ``('filtered', w, centre, gain)``.
    """
    if kind == 'computed_torque':
        return (kind, bandwidth * bandwidth, 2.0 * bandwidth)
    return (kind, bandwidth)


def damper_of(verdict):
    """Return the damper (centre [rad/s], gain [1/s]) of a follower verdict, or None."""
    return tuple(verdict[2:4]) if verdict[0] == 'filtered' and len(verdict) == 4 else None


def bandwidth_of(verdict):
    """Return the bandwidth w [rad/s] of a follower verdict (`follower`)."""
    return 0.5 * verdict[2] if verdict[0] == 'computed_torque' else verdict[1]


def make_follower(twin, period, follower, payload_range=(1.0, 1.0)):
    """Build the follower law of an `admission.following_check` verdict ``follower``.

    ``payload_range``: the payload factors the filtered law's estimate may take.
    """
    kind, *gains = follower
    if kind == 'computed_torque':
        return ComputedTorqueFollower(twin, period, *gains)
    law = FilteredFollower(twin, period, payload_range)
    law.set_bandwidth(gains[0])
    law.set_damper(damper_of(follower))
    return law
