"""The arrays the chain model's kernels read (`MODEL`) and write (`WORKSPACE`), field by field.

One line per field (the convention of `tuple_tables`: name, kind and extents, meaning):
n links, nv coordinates, m = the largest strain basis or mode count of a link, k = m + 1
local coordinates of a link; then each link kind's own rows (``links.<kind>.layout``:
its extents, S segments of the rods, P mass points of the beams, are stated there),
`KIND_LAYOUTS`: those of the kinds registered in ``links.KINDS``. Python builds them
(`arrays`); the kernels take them as two tables (`tuple_tables`) and rebuild the tuples
of the numba types `MODEL_TYPE` and `DATA_TYPE`.
"""

from ..links import KINDS
from ..tuple_tables import record, spec_layout, table_of

# every registered link kind's rows (``links.KINDS``), in the order of their codes
KIND_LAYOUTS = tuple(sorted({kind.layout for kind in KINDS}, key=lambda layout: layout.CODE))

MODEL = (
    ('joint_motion', 'f8 n 6', "the joint's twist per unit rate in its frame"),
    ('link_kind', 'i8 n', "the link's kind: its ``links.<kind>.layout.CODE``"),
    ('joint_index', 'i8 n', "the joint's coordinate in q, -1 for a fixed joint"),
    ('offset_R', 'f8 n 3 3', "rotation of the joint frame at zero in the parent's tip frame"),
    ('offset_p', 'f8 n 3', 'position of the same [m]'),
    ('hub', 'f8 n 6 6', 'inertia of the hub at the joint frame'),
    ('payload', 'f8 n 6 6', 'inertia of the payload at the tip frame'),
    ('armature', 'f8 n', 'rotor inertia on the joint coordinate [kg m^2 or kg]'),
    ('strain_start', 'i8 n', "index of the link's first strain coordinate in q"),
    ('strain_count', 'i8 n', "size of the link's strain basis"),
    ('base_R', 'f8 3 3', 'rotation of a fixed base frame in the world'),
    ('base_p', 'f8 3', 'position of a fixed base frame in the world [m]'),
    ('floating', 'i8',
     "1 for a free-floating base (pose in q, twist in v, after the chain's), 0 for a "
     'fixed one'),
    ('base_inertia', 'f8 6 6', 'inertia of a floating base at its frame (zero if fixed)'),
    ('length', 'f8 n', 'link lengths [m]'),
    ('gravity', 'f8 3', 'gravity in the world [m/s^2]'),
    ('stiffness', 'f8 nv', 'diagonal of K (zero on joints) [N m/rad, N m^2, ...]'),
    ('damping', 'f8 nv', 'diagonal of D: joint damping and Kelvin-Voigt strain damping'),
    ('friction', 'f8 nv', 'Coulomb friction level F_c of each joint, 0 off the joints [N m, N]'),
    ('friction_velocity', 'f8 nv', 'its regularization velocity v_s (> 0) [rad/s, m/s]'),
) + sum((kind.MODEL for kind in KIND_LAYOUTS), ())
Model = record('Model', MODEL, 'Constant arrays of a Cosserat chain (`MODEL`).', __name__)

WORKSPACE = (
    ('J', 'f8 6 nv', 'body Jacobian of the current frame'),
    ('IJ', 'f8 6 nv', 'I J of the current body'),
    ('eta', 'f8 6', 'twist of the current frame'),
    ('alpha', 'f8 6', "bias acceleration of the current frame (J v' + alpha = eta')"),
    ('cols', 'i8 nv', 'active columns of J, in the order they became non-zero'),
    ('count', 'i8 1', 'number of active columns'),
    ('mass', 'f8 nv nv', 'M(q), the mass matrix [kg m^2, kg]'),
    ('bias', 'f8 nv', 'h(q, v), the bias forces [N m, N] (M a + h: inverse dynamics)'),
    ('given', 'f8 nv', "the generalized acceleration a of inverse dynamics [rad/s^2, ...]"),
    ('chol', 'f8 nv nv', 'Cholesky factor of M'),
    ('force', 'f8 nv', 'B u - h, the forces that accelerate'),
    ('acceleration', 'f8 nv', "v', the forward dynamics' result"),
    ('R', 'f8 3 3', 'rotation of the current relative step'),
    ('p', 'f8 3', 'position of the current relative step [m]'),
    ('step_R', 'f8 3 3', "rotation of a joint's offset and motion composed"),
    ('step_p', 'f8 3', 'position of the same [m]'),
    ('s', 'f8 6', 'relative twist of a joint or segment'),
    ('column', 'f8 6', 'one column of J'),
    ('carry', 'f8 9', 'scratch of a twist transport'),
    ('t1', 'f8 6', 'scratch'),
    ('t2', 'f8 6', 'scratch'),
    ('t3', 'f8 6', 'scratch'),
    ('stiff_M', 'f8 nv nv', 'M kept by the implicit stepper'),
    ('stiff_W', 'f8 nv nv', 'M + gh (D + C_f) + gh^2 K'),
    ('velocity', 'f8 nv', 'v of the last h(q, v) (the Coulomb friction in W)'),
    ('stiff_chol', 'f8 nv nv', 'its Cholesky factor'),
    ('stiff_rhs', 'f8 nv', 'right-hand side of the implicit stage'),
    ('stiff_sol', 'f8 nv', 'its solution'),
    ('base_R', 'f8 3 3', "rotation of the base in the world (a floating base's from q)"),
    ('pose_R', 'f8 3 3', 'rotation of the current frame in the world'),
    ('pose_p', 'f8 3', 'position of the current frame in the world [m]'),
    ('energy', 'f8 1', 'gravity energy summed over the bodies [J]'),
    # -- articulated-body forward dynamics (``articulated``), k = m + 1 local coordinates
    ('aba_J', 'f8 6 k', 'local Jacobian of the current body'),
    ('aba_IJT', 'f8 g k', 'I J of the current body, modal link or the child at a tip'),
    ('aba_HH', 'f8 n 6 6', 'M_HH of each link (and then its child)'),
    ('aba_Hl', 'f8 n 6 k', 'M_Hl of each link'),
    ('aba_ll', 'f8 n k k', 'M_ll of each link (then D, armature added)'),
    ('aba_pH', 'f8 n 6', 'p_H of each link'),
    ('aba_pl', 'f8 n k', 'p_l of each link'),
    ('aba_TR', 'f8 n 3 3', "rotation of each link's tip frame relative to its handle"),
    ('aba_Tp', 'f8 n 3', 'position of the same [m]'),
    ('aba_TJ', 'f8 n 6 k', 'local Jacobian J_T of each tip frame'),
    ('aba_Tc', 'f8 n 6', 'bias acceleration c_T of each tip frame'),
    ('aba_cols', 'i8 n k', 'the coordinate (index in v) of each local coordinate'),
    ('aba_count', 'i8 n', 'local coordinates of each link'),
    ('aba_L', 'f8 n k k', "Cholesky factor of each link's D"),
    ('aba_W', 'f8 n k 6', 'D^-1 M_Hl^T of each link'),
    ('aba_y', 'f8 n k', 'D^-1 u of each link'),
    ('aba_IA', 'f8 6 6', 'articulated inertia I^A at the current handle'),
    ('aba_pA', 'f8 6', 'its bias wrench p^A'),
    ('aba_a', 'f8 6', 'acceleration of the current handle (gravity as an upward acceleration)'),
    ('aba_f', 'f8 6', 'scratch wrench'),
    ('aba_rhs', 'f8 k', 'scratch'),
    ('aba_sol', 'f8 k', 'scratch'),
    ('aba_L6', 'f8 6 6', "Cholesky factor of a floating base's articulated inertia"),
) + sum((kind.WORKSPACE for kind in KIND_LAYOUTS), ())
Workspace = record('Workspace', WORKSPACE, "Workspace of a Cosserat chain's kernels "
                   '(`WORKSPACE`); `data_table` keeps its table on it.', __name__)

MODEL_LAYOUT = spec_layout(Model, MODEL)
DATA_LAYOUT = spec_layout(Workspace, WORKSPACE)
MODEL_TYPE, DATA_TYPE = MODEL_LAYOUT.type, DATA_LAYOUT.type     # for `tuple_tables.unpack`


def data_table(data):
    """Return the table of a `Workspace` (built and kept on it on first use)."""
    return table_of(data, DATA_LAYOUT)
