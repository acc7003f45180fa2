"""Clamped-free Euler-Bernoulli mode shapes and the section tables of a flexible link.

A uniform beam of length L [m], linear density rho A [kg/m] and bending stiffness EI [N m^2],
clamped at x = 0 and free at x = L, has the natural modes

    W_k(x) = cosh b_k x - cos b_k x - s_k (sinh b_k x - sin b_k x),
    s_k = (sinh b_k L - sin b_k L) / (cosh b_k L + cos b_k L),
    1 + cos(b_k L) cosh(b_k L) = 0,    omega_k = (b_k L)^2 sqrt(EI / (rho A L^4)),

normalized so that int_0^L W_k^2 dx = L, hence W_k(L) = 2 (-1)^(k+1). The modal mass is
rho A L delta_kl and the modal stiffness EI int W_k'' W_l'' dx = EI b_k^4 L delta_kl.

Large b_k x makes cosh - s sinh cancel catastrophically; the functions below use
cosh y - s sinh y = e^y (1 - s)/2 + e^-y (1 + s)/2 with 1 - s computed without cancellation.

The foreshortening integrals G_kl(x) = int_0^x W_k' W_l' ds give the axial shortening
u_1(x) = -1/2 sum_kl G_kl(x) q_k q_l of a section whose bending coordinates are q (the
second-order kinematics that produce geometric stiffening).
"""

import functools
import math

import numpy as np

MAX_MODES = 10


def frequency_parameters(count):
    """First ``count`` roots b_k L of 1 + cos(x) cosh(x) = 0 (1.875104, 4.694091, ...)."""
    if not 1 <= count <= MAX_MODES:
        raise ValueError(f'mode count must be between 1 and {MAX_MODES}, got {count}')
    return _roots(count).copy()


@functools.lru_cache(maxsize=MAX_MODES)
def _roots(count):
    """Solve the roots of `frequency_parameters` once per count (every beam asks)."""
    # cos x + 1/cosh x has one root in each interval [(k-1) pi, k pi]: bisection to the
    # last bit (no scipy.optimize import for it: every node starting a beam asks).
    return np.array([_bisect(lambda x: math.cos(x) + 1.0 / math.cosh(x),
                             (k - 1) * math.pi, k * math.pi) for k in range(1, count + 1)])


def _bisect(f, low, high):
    """Return the root of ``f`` in [low, high], where its sign changes.

    The interval is halved until its midpoint is one of its ends: the root to the
    floating-point resolution.
    """
    f_low = f(low)
    while True:
        middle = 0.5 * (low + high)
        if middle in (low, high):
            return middle
        f_middle = f(middle)
        if f_middle == 0.0:
            return middle
        if (f_middle < 0.0) == (f_low < 0.0):
            low, f_low = middle, f_middle
        else:
            high = middle


def _one_minus_sigma(beta_l):
    """1 - s_k without cancellation: (e^-bL + cos bL + sin bL) / (cosh bL + cos bL)."""
    return (np.exp(-beta_l) + np.cos(beta_l) + np.sin(beta_l)) / (np.cosh(beta_l)
                                                                  + np.cos(beta_l))


def mode_values(length, count, x, derivative=0):
    """Values W_k^(derivative)(x) for k = 1..count at positions ``x`` [m]: shape (len(x), count).

    derivative 0 gives the deflection shape [-], 1 the slope [1/m], 2 the curvature [1/m^2].
    """
    beta = frequency_parameters(count) / length
    x = np.atleast_1d(np.asarray(x, dtype=float))[:, None]
    y = beta[None, :] * x
    one_minus_s = _one_minus_sigma(beta * length)[None, :]
    s = 1.0 - one_minus_s
    # Growing parts with the stable cancellation, oscillating parts as they are.
    cosh_m_s_sinh = 0.5 * np.exp(y) * one_minus_s + 0.5 * np.exp(-y) * (1.0 + s)
    sinh_m_s_cosh = 0.5 * np.exp(y) * one_minus_s - 0.5 * np.exp(-y) * (1.0 + s)
    if derivative == 0:
        values = cosh_m_s_sinh - np.cos(y) + s * np.sin(y)
    elif derivative == 1:
        values = beta * (sinh_m_s_cosh + np.sin(y) + s * np.cos(y))
    elif derivative == 2:
        values = beta ** 2 * (cosh_m_s_sinh + np.cos(y) - s * np.sin(y))
    else:
        raise ValueError(f'derivative must be 0, 1 or 2, got {derivative}')
    return values


def gauss_legendre(a, b, count):
    """Gauss-Legendre nodes and weights of ``count`` points on [a, b]."""
    nodes, weights = _legendre(count)
    half = 0.5 * (b - a)
    return a + half * (nodes + 1.0), half * weights


@functools.lru_cache(maxsize=64)
def _legendre(count):
    """Compute the nodes and weights on [-1, 1] once per count (an eigenproblem each)."""
    return np.polynomial.legendre.leggauss(count)


def foreshortening(length, count, x, points=24):
    """G_kl(x) = int_0^x W_k'(s) W_l'(s) ds for each x: shape (len(x), count, count) [1/m]."""
    x = np.atleast_1d(np.asarray(x, dtype=float))
    out = np.zeros((x.size, count, count))
    for i, upper in enumerate(x):
        if upper > 0.0:
            nodes, weights = gauss_legendre(0.0, upper, points)
            slope = mode_values(length, count, nodes, 1)
            out[i] = (slope * weights[:, None]).T @ slope
    return out
