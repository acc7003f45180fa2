"""One named program of the program controller, built and admitted: `ProgramEntry`.

The controller builds one per program (`controller_setup`); the start-up analysis
(`admission`) writes its verdicts into it, and each tick fills its references and
constraint error.
"""

from dataclasses import dataclass, field

import numpy as np

from .programs import Program
from .stabilization import Stabilization


@dataclass
class ProgramEntry:
    """One named program, built and checked: rows, gains, names, buffers, verdicts."""

    name: str
    program: Program
    stabilization: Stabilization
    row_names: list
    references: list                    # (slice of rows, reference object)
    holds: list                         # HoldProgram rows (captured at the start)
    realization: object
    critical_period: float
    zero_dynamics: object = None        # ZeroDynamicsReport, or None if not analysed
    sampled_radius: float = None        # spectral radius of the linearized ZOH loop
    robustness_margin: float = None     # largest scaling of the uncertainty set survived
    worst_case: object = None           # uncertainty.Verdict at the declared set
    observer_gain: object = None        # observer_design.ObserverGain (modes estimated)
    model_test_gain: object = None      # the same, for the model test only (modes measured)
    lambda_limit: float = None          # offered lambda* when the program was refused
    follower: tuple = None              # model following's joint law (admission.following_check)
    along: list = None                  # joints at the reference's samples (admission)
    notes: list = field(default_factory=list)
    reference: np.ndarray = None        # r, r', r'' of every row (filled per tick)
    reference_rate: np.ndarray = None
    reference_acceleration: np.ndarray = None
    constraint_error: np.ndarray = None  # A q''_applied - b per row

    def __post_init__(self):
        """Allocate the per-row buffers."""
        size = self.program.size
        self.reference = np.zeros(size)
        self.reference_rate = np.zeros(size)
        self.reference_acceleration = np.zeros(size)
        self.constraint_error = np.zeros(size)

    @property
    def size(self):
        """Number of constraint rows."""
        return self.program.size

    @property
    def span(self):
        """Program time [s] by which every reference has taken all its values."""
        return max(reference.span for _, reference in self.references)

    def fill_reference(self, t):
        """Copy the references of the rows at program time ``t``.

        The program has just evaluated them at ``t``; references that keep their last
        values (``position``, ``velocity``, ``acceleration``) are read, others evaluated.
        """
        for rows, reference in self.references:
            try:
                r, dr, ddr = reference.position, reference.velocity, reference.acceleration
            except AttributeError:
                r, dr, ddr = reference.evaluate(t)
            self.reference[rows] = r
            self.reference_rate[rows] = dr
            self.reference_acceleration[rows] = ddr
