"""Reference trajectories for program constraints: timing laws, paths and orientations.

A reference is an object with ``evaluate(t)`` returning the desired value and its first
two time derivatives, each a preallocated array that the next call overwrites:

* vector references (joint angles, point positions, planar angles) return (r, r', r''),
  the interface of `joint_program.SinusoidalJointProgram`;
* orientation references return (R_d, omega_d, omega_d'): a rotation matrix and the
  angular velocity and acceleration in base-frame components, R_d' = [omega_d]x R_d.

A geometric path P(s) (line, circle, spline through waypoints) becomes a trajectory through
a timing law s(t):

    r = P(s),   r' = P'(s) s',   r'' = P''(s) s'^2 + P'(s) s''          (chain rule)
"""

import math

import numpy as np


class QuinticTiming:
    """Rest-to-rest timing law s(t) from 0 to 1 over ``duration`` seconds from ``start``.

    With tau = (t - start) / duration clipped to [0, 1],

        s = 10 tau^3 - 15 tau^4 + 6 tau^5,   s' = 30 tau^2 (1 - tau)^2 / T,
        s'' = 60 tau (1 - tau)(1 - 2 tau) / T^2,

    the quintic with zero velocity and acceleration at both ends (s, s', s'' continuous).
    """

    def __init__(self, duration, start=0.0):
        """Set the duration [s] (> 0) and the start time [s]."""
        if not duration > 0.0 or not math.isfinite(duration):
            raise ValueError(f'timing duration must be a positive number of seconds, got '
                             f'{duration}')
        self.duration = float(duration)
        self.start = float(start)

    @property
    def span(self):
        """Time [s] from which s stays at 1: start + duration."""
        return self.start + self.duration

    def evaluate(self, t):
        """Return (s, s' [1/s], s'' [1/s^2]) at time ``t`` [s]."""
        tau = (t - self.start) / self.duration
        if tau <= 0.0:
            return 0.0, 0.0, 0.0
        if tau >= 1.0:
            return 1.0, 0.0, 0.0
        rest = 1.0 - tau
        s = tau ** 3 * (10.0 - 15.0 * tau + 6.0 * tau * tau)
        ds = 30.0 * tau * tau * rest * rest / self.duration
        dds = 60.0 * tau * rest * (1.0 - 2.0 * tau) / self.duration ** 2
        return s, ds, dds


class ConstantRateTiming:
    """Timing law s(t) = initial + rate (t - start): constant speed along the path.

    s' = rate, s'' = 0. Before ``start`` s stays at ``initial``. Meant for closed paths
    (a circle parametrized by its angle), where s grows without bound.
    """

    def __init__(self, rate, start=0.0, initial=0.0):
        """Set the rate [path units/s], start time [s] and initial parameter."""
        self.rate = float(rate)
        self.start = float(start)
        self.initial = float(initial)

    @property
    def span(self):
        """Time [s] by which s has covered one turn of an angle: start + 2 pi / |rate|."""
        return self.start + (2.0 * math.pi / abs(self.rate) if self.rate else 0.0)

    def evaluate(self, t):
        """Return (s, s', s'') at time ``t`` [s]."""
        if t < self.start:
            return self.initial, 0.0, 0.0
        return self.initial + self.rate * (t - self.start), self.rate, 0.0


class LinePath:
    """Straight segment P(s) = start + s (end - start), s in [0, 1] (clipped)."""

    def __init__(self, start, end):
        """Set the end points (same length: 1, 2 or 3 coordinates)."""
        self.start = np.array(start, dtype=float).ravel()
        self.delta = np.array(end, dtype=float).ravel() - self.start
        if self.start.shape != self.delta.shape:
            raise ValueError(f'line end points differ in size: {self.start.size} and '
                             f'{self.delta.size}')
        self.dimension = self.start.size
        self.point = np.zeros(self.dimension)
        self.tangent = self.delta.copy()
        self.curvature = np.zeros(self.dimension)

    def evaluate(self, s):
        """Return (P, dP/ds, d2P/ds2)."""
        np.multiply(self.delta, min(max(s, 0.0), 1.0), out=self.point)
        self.point += self.start
        return self.point, self.tangent, self.curvature


class CirclePath:
    """Circle P(s) = center + radius (cos(s) u + sin(s) w), s the polar angle [rad].

    u and w are orthonormal axes spanning the circle's plane (default: the first two base
    axes). A 2-component center gives a planar circle with u = (1, 0), w = (0, 1).
    """

    def __init__(self, center, radius, axes=None):
        """Set the center [m], radius [m] (> 0) and optional axes (u, w)."""
        self.center = np.array(center, dtype=float).ravel()
        self.dimension = self.center.size
        if not radius > 0.0:
            raise ValueError(f'circle radius must be > 0 m, got {radius}')
        self.radius = float(radius)
        if axes is None:
            axes = np.eye(self.dimension)[:2]
        self.u, self.w = (np.array(a, dtype=float).ravel() for a in axes)
        gram = np.array([[self.u @ self.u, self.u @ self.w], [self.w @ self.u, self.w @ self.w]])
        if self.u.size != self.dimension or not np.allclose(gram, np.eye(2), atol=1e-9):
            raise ValueError('circle axes must be two orthonormal vectors of the center\'s '
                             'dimension')
        self.point = np.zeros(self.dimension)
        self.tangent = np.zeros(self.dimension)
        self.curvature = np.zeros(self.dimension)

    def evaluate(self, s):
        """Return (P, dP/ds, d2P/ds2)."""
        c, s_ = self.radius * math.cos(s), self.radius * math.sin(s)
        np.multiply(self.u, -s_, out=self.tangent)
        self.tangent += c * self.w
        np.multiply(self.u, -c, out=self.curvature)
        self.curvature -= s_ * self.w
        np.subtract(self.center, self.curvature, out=self.point)
        return self.point, self.tangent, self.curvature


class SplinePath:
    """Natural cubic spline through waypoints, parameter s in [0, 1] (clipped).

    Knots u_0 = 0 < ... < u_n = 1 by cumulative chord length (``'chord'``, about uniform
    speed in space) or equally spaced (``'uniform'``). On segment i with h = u_{i+1} - u_i
    and tau = s - u_i, with m_i = P''(u_i):

        P = P_i + b_i tau + m_i tau^2 / 2 + (m_{i+1} - m_i) tau^3 / (6 h),
        b_i = (P_{i+1} - P_i) / h - h (2 m_i + m_{i+1}) / 6,

    and m solves the tridiagonal continuity system of P'
    h_{i-1} m_{i-1} + 2 (h_{i-1} + h_i) m_i + h_i m_{i+1} = 6 (d_i - d_{i-1}),
    d_i = (P_{i+1} - P_i) / h_i, with m_0 = m_n = 0 (natural ends). P is C^2.
    """

    def __init__(self, waypoints, knots='chord'):
        """Fit the spline to ``waypoints`` (n+1 points of equal dimension, n >= 1)."""
        points = np.array(waypoints, dtype=float)
        if points.ndim == 1:
            points = points[:, None]
        if points.ndim != 2 or points.shape[0] < 2:
            raise ValueError(f'a spline needs at least two waypoints, got {points.shape[0]}')
        steps = np.linalg.norm(np.diff(points, axis=0), axis=1)
        if knots == 'chord':
            if np.any(steps <= 0.0):
                raise ValueError('consecutive spline waypoints must differ (chord knots)')
            u = np.concatenate([[0.0], np.cumsum(steps)]) / steps.sum()
        elif knots == 'uniform':
            u = np.linspace(0.0, 1.0, points.shape[0])
        else:
            raise ValueError(f"spline knots must be 'chord' or 'uniform', got {knots!r}")
        self.knots = u
        self.dimension = points.shape[1]
        self._coefficients(points, u)
        self.point = np.zeros(self.dimension)
        self.tangent = np.zeros(self.dimension)
        self.curvature = np.zeros(self.dimension)

    def _coefficients(self, points, u):
        h = np.diff(u)
        slopes = np.diff(points, axis=0) / h[:, None]
        n = h.size
        second = np.zeros_like(points)
        if n > 1:
            # Interior second derivatives: a small dense solve, once, at construction.
            system = np.zeros((n - 1, n - 1))
            for i in range(n - 1):
                system[i, i] = 2.0 * (h[i] + h[i + 1])
                if i > 0:
                    system[i, i - 1] = h[i]
                if i < n - 2:
                    system[i, i + 1] = h[i + 1]
            second[1:-1] = np.linalg.solve(system, 6.0 * np.diff(slopes, axis=0))
        self._p = points[:-1].copy()
        self._b = slopes - h[:, None] * (2.0 * second[:-1] + second[1:]) / 6.0
        self._c = 0.5 * second[:-1]
        self._d = (second[1:] - second[:-1]) / (6.0 * h[:, None])

    def evaluate(self, s):
        """Return (P, dP/ds, d2P/ds2)."""
        s = min(max(s, 0.0), 1.0)
        i = min(int(np.searchsorted(self.knots, s, side='right')) - 1, self._p.shape[0] - 1)
        tau = s - self.knots[i]
        b, c, d = self._b[i], self._c[i], self._d[i]
        np.multiply(d, 6.0 * tau, out=self.curvature)
        self.curvature += 2.0 * c
        np.multiply(d, 3.0 * tau * tau, out=self.tangent)
        self.tangent += 2.0 * tau * c
        self.tangent += b
        np.multiply(d, tau ** 3, out=self.point)
        self.point += tau * tau * c
        self.point += tau * b
        self.point += self._p[i]
        return self.point, self.tangent, self.curvature


class Trajectory:
    """A path followed with a timing law: r(t) = P(s(t)) and its derivatives (module doc)."""

    def __init__(self, path, timing):
        """Combine a path (evaluate(s)) and a timing law (evaluate(t) -> s, s', s'')."""
        self.path = path
        self.timing = timing
        self.position = np.zeros(path.dimension)
        self.velocity = np.zeros(path.dimension)
        self.acceleration = np.zeros(path.dimension)

    @property
    def span(self):
        """Time [s] by which r(t) has taken every value it takes (that of the timing)."""
        return self.timing.span

    def evaluate(self, t):
        """Return (r, r', r'') at time ``t`` [s]."""
        s, ds, dds = self.timing.evaluate(t)
        point, tangent, curvature = self.path.evaluate(s)
        self.position[:] = point
        np.multiply(tangent, ds, out=self.velocity)
        np.multiply(curvature, ds * ds, out=self.acceleration)
        self.acceleration += dds * tangent
        return self.position, self.velocity, self.acceleration


class ConstantReference:
    """A value held still: (r, 0, 0)."""

    def __init__(self, value):
        """Set the held value (a sequence of numbers)."""
        self.position = np.array(value, dtype=float).ravel()
        self.velocity = np.zeros_like(self.position)
        self.acceleration = np.zeros_like(self.position)

    span = 0.0          # s: the value at t = 0 is every value

    def evaluate(self, t):
        """Return (r, 0, 0)."""
        return self.position, self.velocity, self.acceleration


def skew(w):
    """[w]x, the 3x3 matrix with [w]x y = w x y."""
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def rotation_exp(w):
    """exp([w]x) by Rodrigues' formula: I + sin(a)/a [w] + (1 - cos a)/a^2 [w]^2, a = |w|."""
    angle = math.sqrt(float(w @ w))
    k = skew(w)
    if angle < 1e-8:
        return np.eye(3) + k + 0.5 * k @ k
    return (np.eye(3) + math.sin(angle) / angle * k
            + (1.0 - math.cos(angle)) / angle ** 2 * k @ k)


class OrientationTrajectory:
    """R_d(t) = exp(s(t) angle [axis]x) R_0: a rotation about a fixed base-frame axis.

    omega_d = axis angle s',  omega_d' = axis angle s'' (base frame), since
    R_d' = [axis angle s']x R_d. Without ``timing`` the orientation R_0 is held.
    """

    def __init__(self, initial, axis=(0.0, 0.0, 1.0), angle=0.0, timing=None):
        """Set R_0 (3x3 rotation), the unit axis (base frame) and the total angle [rad]."""
        self.initial = np.array(initial, dtype=float)
        if self.initial.shape != (3, 3) or not np.allclose(self.initial.T @ self.initial,
                                                           np.eye(3), atol=1e-9):
            raise ValueError('initial orientation must be a 3x3 rotation matrix')
        axis = np.array(axis, dtype=float)
        if abs(np.linalg.norm(axis) - 1.0) > 1e-9:
            raise ValueError(f'rotation axis must be a unit vector, got {axis.tolist()}')
        self.axis_angle = axis * float(angle)
        self.timing = timing
        self.rotation = self.initial.copy()
        self.angular_velocity = np.zeros(3)
        self.angular_acceleration = np.zeros(3)

    @property
    def span(self):
        """Time [s] by which R_d(t) has taken every value it takes (that of the timing)."""
        return 0.0 if self.timing is None else self.timing.span

    def evaluate(self, t):
        """Return (R_d, omega_d [rad/s], omega_d' [rad/s^2]) at time ``t`` [s]."""
        if self.timing is None:
            return self.rotation, self.angular_velocity, self.angular_acceleration
        s, ds, dds = self.timing.evaluate(t)
        np.matmul(rotation_exp(s * self.axis_angle), self.initial, out=self.rotation)
        np.multiply(self.axis_angle, ds, out=self.angular_velocity)
        np.multiply(self.axis_angle, dds, out=self.angular_acceleration)
        return self.rotation, self.angular_velocity, self.angular_acceleration


class MultisineReference:
    """Per coordinate, an offset plus a windowed sum of sinusoids (an excitation).

    r_i(t) = offset_i + w(tau) m_i(tau),  m_i = sum_k a_ik sin(2 pi f_ik tau + phi_ik),
    tau = t - start, and r' = w' m + w m',  r'' = w'' m + 2 w' m' + w m''. The window
    w rises from 0 to 1 over ``ramp`` seconds by the quintic rest-to-rest law
    (`QuinticTiming`) and, with a ``duration``, falls back to 0 over the last ``ramp``
    seconds of it: the reference starts and, with a duration, ends at rest at the offset
    (w, w' and w'' are zero there). ``ramp`` 0: no window (the sum from tau = 0, which
    starts with a velocity unless every phase makes it zero). Coordinates may have
    different numbers of components (none: held at the offset).
    """

    def __init__(self, offset, frequencies, amplitudes, phases, ramp=0.0, duration=None,
                 start=0.0):
        """Set the offsets, per coordinate the components' [Hz, rad, rad], and the window.

        ``ramp`` [s] (>= 0), ``duration`` [s] (None: no end; else > 0 and at least twice
        the ramp), ``start`` [s]. Raises ValueError on sizes or values out of range.
        """
        self.offset = np.array(offset, dtype=float).ravel()
        n = self.offset.size
        lists = [list(frequencies), list(amplitudes), list(phases)]
        if any(len(values) != n for values in lists):
            raise ValueError(f'frequencies, amplitudes and phases need one list per '
                             f'coordinate ({n}); got {[len(values) for values in lists]}')
        width = max([len(f) for f in lists[0]] + [0])
        # Padded to a rectangle: the unused components have zero amplitude.
        self.omega, self.amplitude, self.phase = (np.zeros((n, width)) for _ in range(3))
        for i in range(n):
            sizes = {len(values[i]) for values in lists}
            if len(sizes) != 1:
                raise ValueError(f'coordinate {i}: frequencies, amplitudes and phases differ '
                                 f'in length ({[len(values[i]) for values in lists]})')
            k = sizes.pop()
            self.omega[i, :k] = 2.0 * math.pi * np.asarray(lists[0][i], dtype=float)
            self.amplitude[i, :k] = lists[1][i]
            self.phase[i, :k] = lists[2][i]
        if not ramp >= 0.0 or not math.isfinite(ramp):
            raise ValueError(f'ramp must be >= 0 s, got {ramp}')
        if duration is not None and (not math.isfinite(duration) or not duration > 0.0
                                     or duration < 2.0 * ramp):
            raise ValueError(f'duration must be > 0 s and at least twice the ramp '
                             f'({2.0 * ramp:g} s), got {duration}')
        self.ramp = float(ramp)
        self.duration = None if duration is None else float(duration)
        self.start = float(start)
        self._rise = QuinticTiming(ramp) if ramp > 0.0 else None
        self.position = np.zeros(n)
        self.velocity = np.zeros(n)
        self.acceleration = np.zeros(n)
        self._angle = np.zeros((n, width))
        self._sin = np.zeros((n, width))
        self._cos = np.zeros((n, width))
        self._sum = (np.zeros(n), np.zeros(n), np.zeros(n))

    @property
    def span(self):
        """Time [s] by which r(t) has taken its values: the end, else the slowest period."""
        if self.duration is not None:
            return self.start + self.duration
        moving = self.omega[(self.amplitude != 0.0) & (self.omega > 0.0)]
        slowest = float(2.0 * math.pi / moving.min()) if moving.size else 0.0
        return self.start + self.ramp + slowest

    def window(self, tau):
        """Return (w, w' [1/s], w'' [1/s^2]) at time ``tau`` [s] from the start."""
        if tau <= 0.0 or (self.duration is not None and tau >= self.duration):
            return 0.0, 0.0, 0.0
        if self._rise is None:
            return 1.0, 0.0, 0.0
        if self.duration is not None and tau > self.duration - self.ramp:
            w, dw, ddw = self._rise.evaluate(self.duration - tau)
            return w, -dw, ddw
        return self._rise.evaluate(tau)

    def sample(self, times):
        """Return (r, r', r''), each len(times) x coordinates, at the times [s] (new arrays).

        What `evaluate` gives at each time, computed for all of them at once (a design's
        peaks over thousands of samples).
        """
        tau = np.asarray(times, dtype=float).ravel() - self.start
        window = np.array([self.window(x) for x in tau]).reshape(-1, 3)
        shape = (tau.size, self.offset.size)
        out = [np.zeros(shape) for _ in range(3)]
        sums = [np.zeros(shape) for _ in range(3)]
        for i in range(self.offset.size):
            used = self.amplitude[i] != 0.0
            a, omega = self.amplitude[i, used], self.omega[i, used]
            angle = np.multiply.outer(tau, omega) + self.phase[i, used]
            sums[0][:, i] = np.sin(angle) @ a
            sums[1][:, i] = np.cos(angle) @ (a * omega)
            sums[2][:, i] = -(np.sin(angle) @ (a * omega * omega))
        w, dw, ddw = (window[:, k:k + 1] for k in range(3))
        m, dm, ddm = sums
        out[0][:] = self.offset + w * m
        out[1][:] = dw * m + w * dm
        out[2][:] = ddw * m + 2.0 * dw * dm + w * ddm
        return tuple(out)

    def evaluate(self, t):
        """Fill and return (r, r', r'') at time ``t`` [s]."""
        tau = t - self.start
        w, dw, ddw = self.window(tau)
        self.position[:] = self.offset
        if w == 0.0 and dw == 0.0 and ddw == 0.0:
            self.velocity[:] = 0.0
            self.acceleration[:] = 0.0
            return self.position, self.velocity, self.acceleration
        m, dm, ddm = self._sum
        np.multiply(self.omega, tau, out=self._angle)
        self._angle += self.phase
        np.sin(self._angle, out=self._sin)
        np.cos(self._angle, out=self._cos)
        self._sin *= self.amplitude
        self._cos *= self.amplitude
        self._sin.sum(axis=1, out=m)
        self._cos *= self.omega
        self._cos.sum(axis=1, out=dm)
        self._sin *= self.omega
        self._sin *= self.omega
        self._sin.sum(axis=1, out=ddm)
        ddm *= -1.0
        # r = offset + w m; r' = w' m + w m'; r'' = w'' m + 2 w' m' + w m''.
        np.multiply(m, ddw, out=self.acceleration)
        ddm *= w
        self.acceleration += ddm
        np.multiply(dm, 2.0 * dw, out=ddm)
        self.acceleration += ddm
        np.multiply(m, dw, out=self.velocity)
        dm *= w
        self.velocity += dm
        m *= w
        self.position += m
        return self.position, self.velocity, self.acceleration
