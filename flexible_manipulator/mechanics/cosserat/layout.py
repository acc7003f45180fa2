"""The arrays a Cosserat chain's kernels read (`MODEL`) and write (`WORKSPACE`), field by field.

One line per field (the convention of `tuple_tables`: name, kind and extents, meaning):
n links, S Magnus segments in all, P mass points of the modal links, nv coordinates,
m = the largest strain basis or mode count of a link (bases padded with zero columns),
k = m + 1 local coordinates of a link, g = m + 6 generalized velocities of a modal link
frame (its twist, then its modal rates), terms = MAX_TERMS + 1. Python builds them
(`arrays`); the kernels take them as two tables (`tuple_tables`) and rebuild the tuples of
the numba types `MODEL_TYPE` and `DATA_TYPE`.
"""

from ..tuple_tables import record, spec_layout, table_of

# The most terms of the series of the tangent map's rate (``kernels.right_jacobian_rate``).
MAX_TERMS = 40

MODEL = (
    ('joint_motion', 'f8 n 6', "the joint's twist per unit rate in its frame"),
    ('joint_index', 'i8 n', "the joint's coordinate in q, -1 for a fixed joint"),
    ('offset_R', 'f8 n 3 3', "rotation of the joint frame at zero in the parent's tip frame"),
    ('offset_p', 'f8 n 3', 'position of the same [m]'),
    ('hub', 'f8 n 6 6', 'inertia of the hub at the joint frame'),
    ('payload', 'f8 n 6 6', 'inertia of the payload at the tip frame'),
    ('armature', 'f8 n', 'rotor inertia on the joint coordinate [kg m^2 or kg]'),
    ('strain_start', 'i8 n', "index of the link's first strain coordinate in q"),
    ('strain_count', 'i8 n', "size of the link's strain basis"),
    ('segment_start', 'i8 n', "index of the link's first Magnus segment"),
    ('segment_count', 'i8 n', 'Magnus segments of the link'),
    ('seg_h', 'f8 S', 'segment lengths [m]'),
    ('seg_B1', 'f8 S 6 m', 'strain basis at the first Gauss point of each segment'),
    ('seg_B2', 'f8 S 6 m', 'strain basis at the second Gauss point'),
    ('node_inertia', 'f8 S 6 6',
     "section inertia w diag(rho J, rho A) at each segment's end (zero at the tip)"),
    ('seg_reference', 'f8 S 6',
     "the unstrained strain twist of each segment's rod (rest curvatures, 1, 0, 0)"),
    ('base_R', 'f8 3 3', 'rotation of a fixed base frame in the world'),
    ('base_p', 'f8 3', 'position of a fixed base frame in the world [m]'),
    ('floating', 'i8',
     "1 for a free-floating base (pose in q, twist in v, after the chain's), 0 for a "
     'fixed one'),
    ('base_inertia', 'f8 6 6', 'inertia of a floating base at its frame (zero if fixed)'),
    ('length', 'f8 n', 'link lengths [m]'),
    ('point_start', 'i8 n', "index of a modal link's first mass point"),
    ('point_count', 'i8 n', 'mass points of a modal link (0 for rigid and rod links)'),
    ('point_x', 'f8 P', 'abscissa of each mass point [m]'),
    ('point_phi', 'f8 P m', 'mode values W_k at each mass point'),
    ('point_g', 'f8 P m m', 'foreshortening matrix G at each mass point [1/m]'),
    ('point_mass', 'f8 P', 'mass of each point [kg]'),
    ('mode_plane', 'i8 n m', 'plane of each mode of a modal link: 1 y, 2 z (0 otherwise)'),
    ('tip_phi', 'f8 n m', 'mode values at the tip of a modal link'),
    ('tip_slope', 'f8 n m', "mode slopes W_k'(L) at the tip [1/m]"),
    ('tip_g', 'f8 n m m', 'G(L) at the tip [1/m]'),
    ('gravity', 'f8 3', 'gravity in the world [m/s^2]'),
    ('stiffness', 'f8 nv', 'diagonal of K (zero on joints) [N m/rad, N m^2, ...]'),
    ('damping', 'f8 nv', 'diagonal of D: joint damping and Kelvin-Voigt strain damping'),
)
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
    ('omega', 'f8 6', 'Magnus Omega of the segment'),
    ('phi', 'f8 6 m', 'dOmega/dq of the segment'),
    ('rate', 'f8 6', "Omega' = Phi v"),
    ('xi1', 'f8 6', 'strain twist at the first Gauss point'),
    ('xi2', 'f8 6', 'strain twist at the second Gauss point'),
    ('d1', 'f8 6', 'rate B1 v of xi1'),
    ('d2', 'f8 6', 'rate B2 v of xi2'),
    ('s', 'f8 6', 'relative twist of a joint or segment'),
    ('coefficients', 'f8 4', 'coefficients of the closed-form J_r of the segment'),
    ('work', 'f8 10 3', 'scratch of J_r products'),
    ('powers', 'f8 terms 6', "ad_Omega^m Omega'"),
    ('partial', 'f8 6', 'partial sum of a series'),
    ('column', 'f8 6', 'one column of J'),
    ('carry', 'f8 9', 'scratch of a twist transport'),
    ('t1', 'f8 6', 'scratch'),
    ('t2', 'f8 6', 'scratch'),
    ('t3', 'f8 6', 'scratch'),
    ('stiff_M', 'f8 nv nv', 'M kept by the implicit stepper'),
    ('stiff_W', 'f8 nv nv', 'M + gh D + gh^2 K'),
    ('stiff_chol', 'f8 nv nv', 'its Cholesky factor'),
    ('stiff_rhs', 'f8 nv', 'right-hand side of the implicit stage'),
    ('stiff_sol', 'f8 nv', 'its solution'),
    ('base_R', 'f8 3 3', "rotation of the base in the world (a floating base's from q)"),
    ('pose_R', 'f8 3 3', 'rotation of the current frame in the world'),
    ('pose_p', 'f8 3', 'position of the current frame in the world [m]'),
    ('beam_M', 'f8 g g', "generalized mass of a modal link's points in (w, v, q') of its frame"),
    ('beam_F', 'f8 g', 'their generalized inertial force at zero acceleration'),
    ('beam_E', 'f8 g nv', "(w, v, q') of the modal link frame per active column"),
    ('beam_ME', 'f8 g nv', 'beam_M beam_E'),
    ('beam_rate', 'f8 g', "E a: the modal link frame's (w', v', q'') of inverse dynamics"),
    ('beam_r', 'f8 3', 'position of a mass point in its link frame [m]'),
    ('beam_rd', 'f8 3', 'its velocity relative to the link frame [m/s]'),
    ('beam_a', 'f8 3', 'its acceleration at zero generalized acceleration [m/s^2]'),
    ('beam_S', 'f8 3 m', 'S = du/dq of a mass point: its displacement per modal coordinate'),
    ('gq', 'f8 m', 'G q of a modal section'),
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
)
Workspace = record('Workspace', WORKSPACE, "Workspace of a Cosserat chain's kernels "
                   '(`WORKSPACE`); `data_table` keeps its table on it.', __name__)

MODEL_LAYOUT = spec_layout(Model, MODEL)
DATA_LAYOUT = spec_layout(Workspace, WORKSPACE)
MODEL_TYPE, DATA_TYPE = MODEL_LAYOUT.type, DATA_LAYOUT.type     # for `tuple_tables.unpack`


def data_table(data):
    """Return the table of a `Workspace` (built and kept on it on first use)."""
    return table_of(data, DATA_LAYOUT)
