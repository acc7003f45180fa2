"""Joint-space programs q_d(t) with exact first and second derivatives.

A program is the holonomic constraint phi(q, t) = q - q_d(t) = 0 on every joint.
"""

import math

import numpy as np


class SinusoidalJointProgram:
    """q_d,i(t) = offset_i + amplitude_i sin(2 pi frequency_i t + phase_i)  [rad]."""

    def __init__(self, offset, amplitude, frequency, phase=None):
        """Set the program; all arguments are per-joint sequences (frequency in Hz)."""
        self.offset = np.asarray(offset, dtype=float)
        self.amplitude = np.asarray(amplitude, dtype=float)
        self.omega = 2.0 * math.pi * np.asarray(frequency, dtype=float)
        self.phase = np.zeros_like(self.offset) if phase is None else np.asarray(phase, float)
        sizes = {a.size for a in (self.offset, self.amplitude, self.omega, self.phase)}
        if len(sizes) != 1:
            raise ValueError('offset, amplitude, frequency and phase must have one entry per '
                             f'joint; got sizes {sorted(sizes)}')
        n = self.offset.size
        self.position = np.zeros(n)
        self.velocity = np.zeros(n)
        self.acceleration = np.zeros(n)
        self._angle = np.zeros(n)
        self._sin = np.zeros(n)

    @property
    def span(self):
        """Time [s] of one period of the slowest joint (0 if none moves)."""
        moving = np.abs(self.omega[self.amplitude != 0.0])
        moving = moving[moving > 0.0]
        return float(2.0 * math.pi / moving.min()) if moving.size else 0.0

    def evaluate(self, t):
        """Fill and return (q_d, q_d', q_d'') at time ``t`` [s]."""
        np.multiply(self.omega, t, out=self._angle)
        self._angle += self.phase
        np.sin(self._angle, out=self._sin)
        np.multiply(self.amplitude, self._sin, out=self.position)
        np.cos(self._angle, out=self.velocity)
        self.velocity *= self.amplitude * self.omega
        np.multiply(self.position, -self.omega * self.omega, out=self.acceleration)
        self.position += self.offset
        return self.position, self.velocity, self.acceleration
