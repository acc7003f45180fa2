"""The ``tcp`` row: a named frame of the model (the tool frame by default) follows a path."""

from ...description.urdf import frames_on_links
from ...config_checks import ConfigError
from ..programs import FramePointProgram, LambdaPointProgram
from .base import Row
from .fields import AXES_KEY, AXIS_NAMES, axes, Key, PATH, sub, TOOL_FRAME, vector_reference
from .lambda_point import LAMBDA, lambda_values

FRAME = Key('frame', 'frame name', '', TOOL_FRAME,
            'the frame whose origin follows the path: a frame of the robot description that '
            'rides on a link (a link, section or tip frame, a URDF link merged into a body, '
            'the tool frame)')
TCP_LAMBDA = LAMBDA._replace(
    default=None, meaning='none: the frame itself; given: its redefined output, the frame '
    'of the rigid twin at y_j = theta_j + w_j(lambda L_j)/(lambda L_j) (as lambda_point)')


def frame_on_link(model, name, field):
    """Return (link, abscissa [m], offset [m]) of the frame ``name`` of ``model``.

    The offset is the frame's origin in the frame of the section it rides on
    (`description.urdf.frames_on_links`); ConfigError naming ``field`` and listing the
    frames when the model has no such frame.
    """
    frames = frames_on_links(model)
    if not isinstance(name, str) or name not in frames:
        raise ConfigError(f'{field}: unknown frame {name!r} (known: {", ".join(frames)})')
    link, abscissa, pose = frames[name]
    return link, abscissa, pose[:3, 3]


class TcpRow(Row):
    """The origin of a frame of the model follows a path, in base-frame components [m].

    The tool centre point: by default the model's ``tool_frame`` (a URDF's tip link, e.g.
    ``tool0``, or the frame the description adds on the last tip), or any frame fixed to
    a link (``frame``), carried rigidly by the section it rides on, elastic coordinates
    included. Past a flexible link the frame is non-minimum phase under the servo
    realization; its redefined output (``lambda``, `programs.LambdaPointProgram` on the
    frame of the rigid twin) is what ``non_minimum_phase: redefine`` substitutes.
    """

    row_type = 'tcp'
    program_class = FramePointProgram
    keys = (FRAME, PATH, AXES_KEY, TCP_LAMBDA)

    def __init__(self, program, labels, where):
        """Keep the program, its labels and ``where``: (frame, link, abscissa, offset)."""
        super().__init__(program, labels)
        self.where = where
        self.redefinable = not isinstance(program, LambdaPointProgram)

    @classmethod
    def from_spec(cls, spec, model, field, rigid_twin=None):
        """Build the row on ``model`` (see `Row.from_spec`)."""
        name = spec.get(FRAME.name, model.tool_frame)
        where = (name,) + frame_on_link(model, name, sub(field, FRAME.name))
        indices = axes(spec, field)
        reference = vector_reference(spec[PATH.name], sub(field, PATH.name), len(indices))
        return cls._build(model, where, reference, indices, spec.get(TCP_LAMBDA.name),
                          field, rigid_twin)

    @classmethod
    def _build(cls, model, where, reference, indices, lambdas, field, rigid_twin):
        name, link, abscissa, offset = where
        if lambdas is None:
            return cls(FramePointProgram(model, link, abscissa, offset, reference, indices),
                       [f'{name}_{AXIS_NAMES[a]}' for a in indices], where)
        lambdas = lambda_values(lambdas, model.n_joints, sub(field, TCP_LAMBDA.name))
        try:
            twin = model.rigid_twin() if rigid_twin is None else rigid_twin
            program = LambdaPointProgram(model, FramePointProgram(
                twin, link, abscissa, offset, reference, indices), lambdas)
        except ValueError as error:        # no rigid twin or joint outputs (fixed joints)
            raise ConfigError(f'{sub(field, TCP_LAMBDA.name)}: {error}') from None
        return cls(program, [f'{name}_lambda_{AXIS_NAMES[a]}' for a in indices], where)

    def redefined(self, lambdas, model, field, rigid_twin=None):
        """Return this row's redefined output: the same frame and path at ``lambdas``."""
        return self._build(model, self.where, self.program.reference,
                           list(self.program.axes), lambdas, field, rigid_twin)

    def scaled(self, factor, model, field, rigid_twin=None):
        """Return this redefined row with every lambda times ``factor``."""
        return self._build(model, self.where, self.program.reference,
                           list(self.program.point.axes), self.program.lambdas * factor,
                           field, rigid_twin)
