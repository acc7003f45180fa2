"""Elastic modes of an arm linearized at rest at a pose: with its joints held and free.

A joint that follows its reference closely drives the links at their frequencies with the
joints held; a joint law of low bandwidth (model following's filtered follower) leaves the
joints nearly free at the links' frequencies, and the arm rings at those with the joints
free, where the joints move with the links (what damping injected at the joints reaches).
"""

from dataclasses import dataclass
import math

import numpy as np
from scipy.linalg import eigh

from ..mechanics.equilibrium import static_equilibrium
from .zero_dynamics import linearize


@dataclass
class Modes:
    """Elastic modes of a model linearized at rest at a pose [Hz], lowest first."""

    held: np.ndarray        # with the joints held (what a joint that follows drives)
    free: np.ndarray        # with the joints free (unactuated): the elastic eigenvalues

    @property
    def first(self):
        """The higher of the two first frequencies [Hz]: what the band must cover."""
        return float(max(self.held[0], self.free[0]))


def configuration_at(model, pose):
    """Return the rest configuration at ``pose``: the links at their static equilibrium."""
    q0 = np.asarray(model.neutral_configuration(), dtype=float).copy()
    q0[:model.n_joints] = pose
    return static_equilibrium(model, q0)


def elastic_modes(model, pose):
    """Return the `Modes` of ``model`` at rest at ``pose`` (joint angles) [Hz].

    Linearized (`zero_dynamics.linearize`: M and K = dh/dq, gravity's stiffness included)
    about the links' static equilibrium with the joints at ``pose``. Held: the generalized
    eigenvalues of the elastic block (K_ee, M_ee); free: those of (K, M) past the n_joints
    lowest (the joints' rigid motion, at most gravity's stiffness). A rigid model has none
    (empty arrays).
    """
    n = model.n_joints
    M, _, K, _ = linearize(model, configuration_at(model, pose))
    if M.shape[0] == n:
        return Modes(np.zeros(0), np.zeros(0))

    def hertz(values):
        return np.sqrt(np.maximum(np.sort(values), 0.0)) / (2.0 * math.pi)
    held = hertz(eigh(K[n:, n:], M[n:, n:], eigvals_only=True))
    free = hertz(eigh(K, M, eigvals_only=True))[n:]
    return Modes(held, free)
