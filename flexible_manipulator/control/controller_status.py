"""What the program controller's last tick did: `ControllerStatus` and its message."""

import numpy as np

from .realization import RealizationStatus


class ControllerStatus:
    """What the last tick did; ``message`` explains anything that is not plain tracking."""

    def __init__(self, nu):
        """Allocate the per-input arrays."""
        self.mode = 'disabled'          # tracking | disabled | fault
        self.fault = ''
        self.safe_action = 'zero'       # commanded while disabled or faulted
        self.program = ''
        self.program_time = 0.0
        self.realization = None         # RealizationStatus of the active program
        self.elastic_source = 'none'    # measured | estimated | model | none (rigid model)
        self.following_error = 0.0      # model following: max |theta - theta_m| [rad]
        self.payload_factor = 1.0       # model following: the payload's estimated factor
        self.innovation = None          # observer: nu of the last corrected tick [N m]
        self.normalized_innovation = 0.0   # observer: nu^T S^-1 nu of that tick [-]
        self.unsaturated = np.zeros(nu)
        self.dropped = np.zeros(nu)
        self.clipped = np.zeros(nu, dtype=bool)
        self.rate_limited = np.zeros(nu, dtype=bool)
        self.constraint_error = np.zeros(0)
        self.constraint_error_norm = 0.0
        self.residual = np.zeros(0)
        self.residual_rate = np.zeros(0)

    @property
    def tracking(self):
        """True if the last tick realized the program (enabled, no fault)."""
        return self.mode == 'tracking'

    @property
    def saturated(self):
        """True if any effort was clipped or rate-limited in the last tick."""
        return bool(self.clipped.any() or self.rate_limited.any())

    @property
    def message(self):
        """One line: mode, realization problems, dropped efforts and their consequence."""
        if self.mode == 'fault':
            return f'fault: {self.fault}'
        if self.mode == 'disabled':
            return f'disabled: {self.safe_action} effort'
        parts = []
        realization = self.realization
        if realization is not None and realization.code not in ('exact', 'redundant'):
            parts.append(RealizationStatus.message.fget(_without_saturation(realization)))
        if self.saturated:
            clipped = np.flatnonzero(self.clipped).tolist()
            limited = np.flatnonzero(self.rate_limited).tolist()
            text = []
            if clipped:
                text.append(f'clipped on inputs {clipped}')
            if limited:
                text.append(f'rate-limited on inputs {limited}')
            parts.append(f'efforts {" and ".join(text)} (dropped '
                         f'{np.round(self.dropped, 4).tolist()}): constraint-acceleration '
                         f'error {self.constraint_error_norm:.3g}')
        return '; '.join(parts) if parts else 'tracking'


def _without_saturation(status):
    """Copy a realization status with the clipping flags cleared (for its message)."""
    copy = RealizationStatus(status.clipped.size, status.kind)
    copy.__dict__.update(status.__dict__)
    copy.clipped = np.zeros_like(status.clipped)
    return copy
