"""Mukharlyamov / Baumgarte stabilization of program constraints, and its discrete limits.

Continuous design. Instead of phi'' = 0 (or psi' = 0), which leaves any initial deviation
uncorrected, the realization enforces the perturbation equations

    position rows:  phi'' + 2 alpha phi' + beta^2 phi = 0   (alpha, beta > 0 [1/s])
    velocity rows:  psi' + gamma psi = 0                   (gamma > 0 [1/s])

With phi'' = J q'' + bias (see ``programs``) this is the acceleration-level constraint
A q'' = b with A = J and

    b = -bias - 2 alpha phi' - beta^2 phi     (position rows)
    b = -bias - gamma psi                     (velocity rows).

Exact motions (phi = 0) are unchanged; a deviation decays as
e(t) = (e0 + (e0' + alpha e0) t) e^(-alpha t) for alpha = beta and psi0 e^(-gamma t).

Discrete limits. The error state x = (phi, phi') obeys x' = G x, G = [[0, 1], [-beta^2,
-2 alpha]] (eigenvalues -alpha +- sqrt(alpha^2 - beta^2)) in continuous time; sampled, it
obeys x_{n+1} = Phi x_n, stable iff the spectral radius rho(Phi) < 1. Per ``scheme``:

* ``'zoh'``: a controller of period T holds the computed acceleration e'' = -2 alpha e'_n
  - beta^2 e_n over the period and the plant is integrated exactly (or by any Runge-Kutta
  method of order >= 2 with one step per period, exact for a constant acceleration):
      Phi = [[1 - beta^2 T^2/2, T - alpha T^2], [-beta^2 T, 1 - 2 alpha T]],
  characteristic polynomial z^2 - tr z + det, tr = 2 - 2 alpha T - beta^2 T^2/2,
  det = 1 - 2 alpha T + beta^2 T^2/2. The Jury (Schur-Cohn) conditions |det| < 1,
  1 - tr + det = beta^2 T^2 > 0 and 1 + tr + det = 4 - 4 alpha T > 0 give
      T < min(1/alpha, 4 alpha/beta^2)      (alpha T < 1 for alpha = beta);
  velocity rows: psi_{n+1} = (1 - gamma T) psi_n, T < 2/gamma. Applied d periods late
  (transport and computation delay), the hold gives psi_{n+1} = psi_n - gamma T psi_{n-d},
  characteristic polynomial z^{d+1} - z^d + gamma T; a root crosses the unit circle at
  z = e^{i theta} when gamma T = z^d (1 - z) is real and positive, i.e. theta = pi/(2d + 1),
  gamma T = |1 - z| = 2 sin(theta/2): stable iff T < 2 sin(pi/(2 (2d + 1)))/gamma (2, 1,
  0.618 for d = 0, 1, 2; `delayed_velocity_critical_period`).
* ``'euler'``: the closed loop integrated by explicit Euler with step T (or a ZOH
  controller with one Euler step per period): Phi = I + T G, characteristic polynomial
  z^2 - (2 - 2 alpha T) z + (1 - 2 alpha T + beta^2 T^2); Jury gives
      T < 2 alpha/beta^2 (alpha < beta),  T < 2/(alpha + sqrt(alpha^2 - beta^2)) (alpha >= beta);
  velocity rows: T < 2/gamma.
* ``'heun'``/``'rk2'``, ``'rk3'``, ``'rk4'``: the closed loop integrated by an explicit
  Runge-Kutta method of that order (control evaluated at every stage):
  Phi = R_p(T G), R_p(z) = sum_{k<=p} z^k/k!, stable iff |R_p(T lambda)| < 1 for both
  eigenvalues lambda of G (and of -gamma). The critical period is the smallest positive
  root of |R_p(T lambda)|^2 = 1, a real polynomial in T (for critical damping and
  first-order rows, T gamma < 2, 2, 2.5127, 2.7853 for p = 1..4).
"""

import math

import numpy as np

from .programs import POSITION

SCHEMES = ('zoh', 'euler', 'heun', 'rk2', 'rk3', 'rk4')
_ORDER = {'euler': 1, 'heun': 2, 'rk2': 2, 'rk3': 3, 'rk4': 4}


def _check_scheme(scheme):
    if scheme not in SCHEMES:
        raise ValueError(f'unknown hold/integration scheme {scheme!r} (known: '
                         f'{", ".join(SCHEMES)})')


def _check_gain(name, value):
    if not value > 0.0 or not math.isfinite(value):
        raise ValueError(f'stabilization gain {name} must be a finite number > 0 [1/s], '
                         f'got {value}')


def error_matrix(alpha, beta):
    """G of the continuous error dynamics (phi, phi')' = G (phi, phi') [1/s]."""
    return np.array([[0.0, 1.0], [-beta * beta, -2.0 * alpha]])


def _stability_polynomial(order):
    """Coefficients of R_p(z) = sum_{k<=p} z^k / k!, lowest power first."""
    return np.array([1.0 / math.factorial(k) for k in range(order + 1)])


def transition_matrix(alpha, beta, period, scheme):
    """Phi with (phi, phi')_{n+1} = Phi (phi, phi')_n over one period [s] (module doc)."""
    _check_scheme(scheme)
    T = float(period)
    if scheme == 'zoh':
        b2 = beta * beta
        return np.array([[1.0 - 0.5 * b2 * T * T, T - alpha * T * T],
                         [-b2 * T, 1.0 - 2.0 * alpha * T]])
    TG = T * error_matrix(alpha, beta)
    out, power = np.eye(2), np.eye(2)
    for k in range(1, _ORDER[scheme] + 1):
        power = power @ TG / k
        out = out + power
    return out


def velocity_factor(gamma, period, scheme):
    """psi_{n+1} / psi_n over one period for psi' = -gamma psi (module doc)."""
    _check_scheme(scheme)
    x = -gamma * period
    if scheme == 'zoh':
        return 1.0 + x
    return float(np.polynomial.polynomial.polyval(x, _stability_polynomial(_ORDER[scheme])))


def spectral_radius(alpha, beta, period, scheme):
    """rho(Phi): the error shrinks per period by this factor asymptotically (< 1: stable)."""
    return float(max(abs(np.linalg.eigvals(transition_matrix(alpha, beta, period, scheme)))))


def _first_unit_crossing(rate, order):
    """Smallest T > 0 with |R_p(T rate)| = 1 for a complex rate with Re(rate) < 0.

    |R_p(T rate)|^2 - 1 is a real polynomial in T of degree 2p with a root at T = 0.
    """
    coefficients = _stability_polynomial(order) * rate ** np.arange(order + 1)
    square = np.polynomial.polynomial.polymul(coefficients, np.conj(coefficients)).real
    square[0] -= 1.0
    roots = np.polynomial.polynomial.polyroots(square[1:])   # divide out the root T = 0
    positive = [r.real for r in roots if abs(r.imag) <= 1e-9 * abs(r) and r.real > 0.0]
    return min(positive) if positive else math.inf


def critical_period(alpha, beta, scheme):
    """Largest control period / step T* [s]: stable for 0 < T < T* (module doc)."""
    _check_gain('alpha', alpha)
    _check_gain('beta', beta)
    _check_scheme(scheme)
    if scheme == 'zoh':
        return min(1.0 / alpha, 4.0 * alpha / beta ** 2)
    if scheme == 'euler':
        if alpha < beta:
            return 2.0 * alpha / beta ** 2
        return 2.0 / (alpha + math.sqrt(alpha * alpha - beta * beta))
    root = np.sqrt(complex(alpha * alpha - beta * beta))
    return min(_first_unit_crossing(-alpha + root, _ORDER[scheme]),
               _first_unit_crossing(-alpha - root, _ORDER[scheme]))


def velocity_critical_period(gamma, scheme):
    """Largest period T* [s] for psi' = -gamma psi: 2/gamma for zoh and Euler (module doc)."""
    _check_gain('gamma', gamma)
    _check_scheme(scheme)
    if scheme in ('zoh', 'euler'):
        return 2.0 / gamma
    return _first_unit_crossing(complex(-gamma), _ORDER[scheme])


def delayed_velocity_critical_period(gamma, delay):
    """Largest period T* [s] for psi' = -gamma psi held (zoh) and applied ``delay`` periods late.

    T* = 2 sin(pi/(2 (2 d + 1)))/gamma (module doc); d = 0 is `velocity_critical_period`
    for 'zoh'.
    """
    _check_gain('gamma', gamma)
    if not (isinstance(delay, (int, np.integer)) and delay >= 0):
        raise ValueError(f'delay must be a whole number of periods >= 0, got {delay!r}')
    return 2.0 * math.sin(math.pi / (2.0 * (2 * delay + 1))) / gamma


def delayed_velocity_radius(gamma, period, delay):
    """Spectral radius of psi_{n+1} = psi_n - gamma T psi_{n-d} (< 1: stable; module doc)."""
    coefficients = np.zeros(delay + 2)
    coefficients[:2] = 1.0, -1.0
    coefficients[-1] += gamma * period
    return float(max(abs(np.roots(coefficients))))


def check_delayed_velocity_stability(gamma, period, delay):
    """Raise ValueError unless the delayed zero-order-hold velocity map is stable (module doc)."""
    bound = delayed_velocity_critical_period(gamma, delay)
    if not 0.0 < period < bound:
        raise ValueError(
            f'gamma={gamma:g} [1/s] with period {period:g} s under \'zoh\' applied {delay} '
            f'period(s) late is outside the stable region: need period < 2 sin(pi/(2 (2d + 1)))'
            f'/gamma = {bound:.6g} s (spectral radius of the error map '
            f'{delayed_velocity_radius(gamma, period, delay):.6g})')


def _bound_text(alpha, beta, scheme):
    if scheme == 'zoh':
        return 'min(1/alpha, 4 alpha/beta^2)'
    if scheme == 'euler':
        return ('2 alpha/beta^2' if alpha < beta else
                '2/(alpha + sqrt(alpha^2 - beta^2))')
    return (f'the first T with |R_{_ORDER[scheme]}(T lambda)| = 1, '
            'lambda = -alpha +- sqrt(alpha^2 - beta^2)')


def check_discrete_stability(alpha, beta, period, scheme):
    """Raise ValueError unless the position-row error map is stable at this period [s]."""
    bound = critical_period(alpha, beta, scheme)
    if not 0.0 < period < bound:
        raise ValueError(
            f'alpha={alpha:g}, beta={beta:g} [1/s] with period {period:g} s under {scheme!r} '
            f'is outside the stable region: need period < {_bound_text(alpha, beta, scheme)}'
            f' = {bound:.6g} s (spectral radius of the error map '
            f'{spectral_radius(alpha, beta, period, scheme):.6g})')


def check_velocity_stability(gamma, period, scheme):
    """Raise ValueError unless the velocity-row error map is stable at this period [s]."""
    bound = velocity_critical_period(gamma, scheme)
    if not 0.0 < period < bound:
        text = '2/gamma' if scheme in ('zoh', 'euler') else (
            f'the first T with |R_{_ORDER[scheme]}(-gamma T)| = 1')
        raise ValueError(
            f'gamma={gamma:g} [1/s] with period {period:g} s under {scheme!r} is outside the '
            f'stable region: need period < {text} = {bound:.6g} s (error factor per period '
            f'{velocity_factor(gamma, period, scheme):.6g})')


class Stabilization:
    """Per-row gains and the stabilized right-hand side b of A q'' = b (module doc)."""

    def __init__(self, order, alpha=None, beta=None, gamma=None):
        """Set gains per row [1/s]; scalars apply to every row of their kind.

        :param order: per-row program order (``program.order``: 2 position, 1 velocity).
        :param alpha, beta: damping and frequency of position rows (beta defaults to alpha:
            critical damping).
        :param gamma: rate of velocity rows.
        """
        self.order = np.array(order, dtype=np.int64)
        position = self.order == POSITION
        size = self.order.size
        self.alpha = np.zeros(size)
        self.beta = np.zeros(size)
        self.gamma = np.zeros(size)
        if position.any():
            if alpha is None:
                raise ValueError('position rows need the gain alpha')
            self.alpha[position] = np.broadcast_to(alpha, size)[position]
            self.beta[position] = np.broadcast_to(alpha if beta is None else beta,
                                                  size)[position]
        if (~position).any():
            if gamma is None:
                raise ValueError('velocity rows need the gain gamma')
            self.gamma[~position] = np.broadcast_to(gamma, size)[~position]
        for i in range(size):
            if position[i]:
                _check_gain(f'alpha[{i}]', self.alpha[i])
                _check_gain(f'beta[{i}]', self.beta[i])
            else:
                _check_gain(f'gamma[{i}]', self.gamma[i])
        # b = -bias - k1 phi' - k0 phi, with k1 = 2 alpha, k0 = beta^2 (position rows)
        # and k1 = 0, k0 = gamma (velocity rows, whose phi is psi).
        self.k1 = 2.0 * self.alpha
        self.k0 = np.where(position, self.beta ** 2, self.gamma)
        self.target = np.zeros(size)
        self._work = np.zeros(size)

    @classmethod
    def for_program(cls, program, alpha=None, beta=None, gamma=None):
        """Gains for the rows of ``program``."""
        return cls(program.order, alpha, beta, gamma)

    def evaluate(self, program):
        """Fill and return ``target`` = b, the desired value of J q'' (module doc)."""
        np.negative(program.bias, out=self.target)
        np.multiply(self.k1, program.rate, out=self._work)
        self.target -= self._work
        np.multiply(self.k0, program.phi, out=self._work)
        self.target -= self._work
        return self.target

    def check(self, period, scheme):
        """Raise ValueError if any row is unstable at this control period/step [s]."""
        for i in range(self.order.size):
            if self.order[i] == POSITION:
                check_discrete_stability(self.alpha[i], self.beta[i], period, scheme)
            else:
                check_velocity_stability(self.gamma[i], period, scheme)
