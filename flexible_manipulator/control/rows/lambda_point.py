"""The ``lambda_point`` row: the redefined output of a flexible arm, on the rigid twin."""

import numpy as np

from ...config_checks import ConfigError, number
from ..programs import LambdaPointProgram, PointProgram
from .base import Row
from .fields import AXES_KEY, AXIS_NAMES, FRACTION, Key, LINK, PATH, point_path, REQUIRED, \
    sub

LAMBDA = Key('lambda', 'number, or list of one per link, in (0, 1]', '', REQUIRED,
             'where the redefined output y_j = theta_j + w_j(lambda L_j)/(lambda L_j) looks '
             'along each link')


def lambda_values(value, count, field):
    """One lambda for every link, or one per link, each in (0, 1]."""
    values = np.atleast_1d(np.asarray(value, dtype=object))
    if values.size not in (1, count):
        raise ConfigError(f'{field}: expected one value or one per link ({count}), got '
                          f'{value!r}')
    lambdas = np.array([number(x, field, 0.0, strict_minimum=True) for x in values])
    if np.any(lambdas > 1.0):
        raise ConfigError(f'{field}: must be in (0, 1], got {lambdas.tolist()}')
    return lambdas


class LambdaPointRow(Row):
    """A point of the rigid twin at the redefined joint outputs follows a path [m].

    The lambda-point (`programs.LambdaPointProgram`): the point ``fraction`` of ``link``
    of the rigid arm at joint angles y_j = theta_j + w_j(lambda L_j)/(lambda L_j). Its zero
    dynamics are stable for lambda < lambda*, the limit a refused ``point`` row is offered
    with (``non_minimum_phase: redefine`` substitutes this row for it).
    """

    row_type = 'lambda_point'
    program_class = LambdaPointProgram
    keys = (LINK, LAMBDA, PATH, FRACTION, AXES_KEY)

    @classmethod
    def from_spec(cls, spec, model, field, rigid_twin=None):
        """Build the row on ``model`` (see `Row.from_spec`)."""
        link, abscissa, indices, reference = point_path(model, spec, field)
        return cls._build(model, link, abscissa, reference, indices, spec[LAMBDA.name], field,
                          rigid_twin)

    @classmethod
    def on_point(cls, point, lambdas, model, field, rigid_twin=None):
        """Return the row on ``point`` (a `PointProgram`: its link, abscissa, reference, axes)."""
        return cls._build(model, point.link, point.abscissa, point.reference, point.axes,
                          lambdas, field, rigid_twin)

    def scaled(self, factor, model, field, rigid_twin=None):
        """Return this row with every lambda times ``factor``."""
        return self.on_point(self.program.point, self.program.lambdas * factor, model, field,
                             rigid_twin)

    @classmethod
    def _build(cls, model, link, abscissa, reference, indices, lambdas, field, rigid_twin):
        lambdas = lambda_values(lambdas, model.n_joints, sub(field, LAMBDA.name))
        try:
            twin = model.rigid_twin() if rigid_twin is None else rigid_twin
            program = LambdaPointProgram(model, PointProgram(twin, link, abscissa, reference,
                                                             indices), lambdas)
        except ValueError as error:        # no rigid twin or joint outputs (fixed joints)
            raise ConfigError(f'{sub(field, "type")}: lambda_point: {error}') from None
        return cls(program, [f'{model.link_names[link]}_lambda_{AXIS_NAMES[a]}'
                             for a in indices])
