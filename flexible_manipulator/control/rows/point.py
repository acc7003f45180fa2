"""The ``point`` row: a material point of a link follows a path."""

from ..programs import PointProgram
from .base import Row
from .fields import AXES_KEY, AXIS_NAMES, FRACTION, LINK, PATH, point_path
from .lambda_point import LambdaPointRow


class PointRow(Row):
    """The origin of a section follows a path, in base-frame components [m].

    On a flexible link the tip is non-minimum phase under the servo realization; its
    redefined output is the ``lambda_point`` row on the same point.
    """

    row_type = 'point'
    program_class = PointProgram
    keys = (LINK, PATH, FRACTION, AXES_KEY)
    redefinable = True

    @classmethod
    def from_spec(cls, spec, model, field, rigid_twin=None):
        """Build the row on ``model`` (see `Row.from_spec`)."""
        link, abscissa, indices, reference = point_path(model, spec, field)
        length = model.links[link].length         # a URDF's rigid link has none
        fraction = abscissa / length if length > 0.0 else 1.0
        where = 'tip' if fraction == 1.0 else f'{fraction:g}L'
        return cls(PointProgram(model, link, abscissa, reference, indices),
                   [f'{model.link_names[link]}_{where}_{AXIS_NAMES[a]}' for a in indices])

    def redefined(self, lambdas, model, field, rigid_twin=None):
        """Return the ``lambda_point`` row on this row's point (`LambdaPointRow.on_point`)."""
        return LambdaPointRow.on_point(self.program, lambdas, model, field, rigid_twin)
