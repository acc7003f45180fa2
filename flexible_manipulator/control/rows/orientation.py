"""The ``orientation`` row: a section follows an orientation (three rows)."""

import numpy as np
import transforms3d

from ...mechanics import lie
from ...config_checks import check_keys, ConfigError, number
from ..programs import OrientationProgram
from ..trajectories import OrientationTrajectory
from .base import Row
from .fields import FRACTION, Key, LINK, numbers, quintic_timing, REQUIRED, section, sub

REFERENCE = Key('reference', 'orientation reference', 'rad', REQUIRED,
                'R_d(t) as roll, pitch, yaw about the fixed base axes (URDF rpy): '
                '{type: constant, value} or {type: line, start, end, duration [s], '
                'start_time [s]}, the shorter rotation about one base axis with quintic '
                'timing')


def rotation(rpy, field):
    """R = Rz(yaw) Ry(pitch) Rx(roll) of a list [roll, pitch, yaw] [rad] (URDF rpy)."""
    return transforms3d.euler.euler2mat(*numbers(rpy, field, 3), axes='sxyz')


def orientation_reference(spec, field):
    """Build an `OrientationTrajectory` from its mapping (`REFERENCE`)."""
    check_keys(spec, field, ('type',), ('value', 'start', 'end', 'duration', 'start_time'))
    kind = spec['type']
    start_time = number(spec.get('start_time', 0.0), f'{field}.start_time')
    if kind == 'constant':
        return OrientationTrajectory(rotation(spec.get('value'), f'{field}.value'))
    if kind == 'line':
        timing = quintic_timing(spec, field, start_time)
        start = rotation(spec.get('start'), f'{field}.start')
        turn = lie.so3_log(rotation(spec.get('end'), f'{field}.end') @ start.T)
        angle = float(np.linalg.norm(turn))
        return OrientationTrajectory(start, turn / angle if angle > 0.0 else (0.0, 0.0, 1.0),
                                     angle, timing)
    raise ConfigError(f'{field}.type: unknown orientation reference type {kind!r} (known: '
                      'constant, line)')


class RotationVectorReference:
    """An orientation reference reported per row: (log R_d [rad], omega_d, omega_d').

    The rotation vector of R_d stands for the three rows' reference, with the angular
    velocity [rad/s] and acceleration [rad/s^2] of R_d (base frame) as its rates.
    """

    def __init__(self, orientation):
        """Report the `OrientationTrajectory` ``orientation``."""
        self.orientation = orientation

    @property
    def span(self):
        """Time [s] by which R_d(t) has taken every value it takes."""
        return self.orientation.span

    def evaluate(self, t):
        """Return (log R_d, omega_d, omega_d') at time ``t`` [s]."""
        R, omega, domega = self.orientation.evaluate(t)
        return lie.so3_log(R), omega, domega


class OrientationRow(Row):
    """A section follows an orientation R_d(t): phi = log(R_d^T R), three rows [rad].

    The rotation vector of the error in the desired frame (`programs.OrientationProgram`);
    it needs three independent rotations of the section (a spatial arm with a wrist), and
    an error below pi.
    """

    row_type = 'orientation'
    program_class = OrientationProgram
    keys = (LINK, REFERENCE, FRACTION)

    @classmethod
    def from_spec(cls, spec, model, field, rigid_twin=None):
        """Build the row on ``model`` (see `Row.from_spec`)."""
        link, abscissa = section(model, spec, field)
        reference = orientation_reference(spec[REFERENCE.name], sub(field, REFERENCE.name))
        return cls(OrientationProgram(model, link, abscissa, reference),
                   [f'{model.link_names[link]}_orientation_{a}' for a in 'xyz'])

    @property
    def reported_reference(self):
        """The rotation vector of R_d and its rates (`RotationVectorReference`)."""
        return RotationVectorReference(self.program.reference)
