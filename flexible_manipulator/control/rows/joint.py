"""The ``joint`` row: selected coordinates follow a reference."""

from ..programs import JointProgram
from .base import Row
from .fields import joints, Key, REQUIRED, sub, vector_reference


class JointRow(Row):
    """Selected coordinates (joints first, then the modes) follow a reference: phi = q_i - r."""

    row_type = 'joint'
    program_class = JointProgram
    keys = (Key('joints', 'list of coordinate names or indices', '', REQUIRED,
                'the coordinates that follow the reference, one row each'),
            Key('reference', 'vector reference', 'rad (m for a prismatic joint)', REQUIRED,
                'one value per listed coordinate'))

    @classmethod
    def from_spec(cls, spec, model, field, rigid_twin=None):
        """Build the row on ``model`` (see `Row.from_spec`)."""
        names = list(model.coordinate_names)
        indices = joints(spec, names, field, 'coordinate')
        row = cls(JointProgram(model.nv, indices,
                               vector_reference(spec['reference'], sub(field, 'reference'),
                                                len(indices))),
                  [names[j] for j in indices])
        row.minimum_phase = all(j < model.n_joints for j in indices)    # no modes
        return row
