"""The ``hold`` row: joints kept where the program starts."""

from ..programs import HoldProgram
from .base import Row
from .fields import joints, Key, REQUIRED


class HoldRow(Row):
    """The listed joints are held at the angles measured when the program starts."""

    row_type = 'hold'
    program_class = HoldProgram
    minimum_phase = True
    keys = (Key('joints', 'list of joint names or indices', '', REQUIRED,
                'the joints held, one row each'),)

    @classmethod
    def from_spec(cls, spec, model, field, rigid_twin=None):
        """Build the row on ``model`` (see `Row.from_spec`)."""
        names = list(model.joint_names)
        indices = joints(spec, names, field, 'joint')
        return cls(HoldProgram(model.nv, indices), [names[j] for j in indices])
