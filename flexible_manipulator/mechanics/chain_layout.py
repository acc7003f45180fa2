"""The data layout of a serial chain: its constant arrays and its workspace, field by field.

`ModelArrays` (the model's constants, built by `chain.SerialChain`) and `ChainData` (the
workspace of every algorithm, `SerialChain.create_data`) are namedtuples of float64 and
int64 arrays that every kernel of `chain_kernels` takes. Each field is documented in one
line below. Their layouts (`MODEL_LAYOUT`, `DATA_LAYOUT`) let the kernels take both as two
small tables (`tuple_tables`), from which a kernel rebuilds the tuples of the numba types
`MODEL_TYPE` and `DATA_TYPE`.
"""

from .tuple_tables import record, spec_layout, table_of

# The constants of a chain model, one line per field (Pinocchio's Model): name, kind
# (f8 float64, i8 int64) and shape (n joints, nv velocities, k = most modes on one link,
# p beam points of all links; empty: a scalar) and meaning. Link quantities are in the
# link frame (the joint frame at zero joint coordinate), payloads in the tip frame.
MODEL = (
    ('joint_type', 'i8 n', 'JOINT_REVOLUTE or JOINT_PRISMATIC (chain_kernels.kinematics)'),
    ('joint_axis', 'f8 n 3', 'unit axis of each joint'),
    ('joint_R0', 'f8 n 3 3', 'rotation of link frame j in the parent tip frame at zero'),
    ('joint_p0', 'f8 n 3', 'origin of link frame j in the parent tip frame at zero [m]'),
    ('armature', 'f8 n', 'rotor inertia on each joint [kg m^2 or kg]'),
    ('mass', 'f8 n', 'mass of the rigid part (a modeless beam folded in as a rod) [kg]'),
    ('first_moment', 'f8 n 3', 'its first moment of mass about the link frame origin [kg m]'),
    ('inertia', 'f8 n 3 3', 'its inertia about the link frame origin [kg m^2]'),
    ('payload_mass', 'f8 n', 'mass carried at each tip frame [kg]'),
    ('payload_first_moment', 'f8 n 3', 'its first moment about the tip origin [kg m]'),
    ('payload_inertia', 'f8 n 3 3', 'its inertia about the tip origin [kg m^2]'),
    ('length', 'f8 n', 'length L of each link (tip frame at x = L) [m]'),
    ('mode_start', 'i8 n', 'index in v of the first mode of each link'),
    ('mode_count', 'i8 n', 'number of modes of each link'),
    ('mode_plane', 'i8 n k', 'displacement direction of each mode: 1 = y, 2 = z'),
    ('stiffness', 'f8 nv', 'diagonal stiffness: 0 on joints, K_k on modes [N m]'),
    ('damping', 'f8 nv', 'joint friction; 2 zeta omega_k rho A L on modes [N m s]'),
    ('point_start', 'i8 n+1', 'first beam point of each link, then the total'),
    ('point_x', 'f8 p', 'abscissa of each beam point (Gauss-Legendre) [m]'),
    ('point_mass', 'f8 p', 'mass of each beam point, rho A times its weight [kg]'),
    ('point_phi', 'f8 p k', 'mode values at each beam point [m]'),
    ('point_g', 'f8 p k k', 'foreshortening matrix G(x) at each beam point [1/m]'),
    ('tip_phi', 'f8 n k', 'mode values at each tip [m]'),
    ('tip_slope', 'f8 n k', 'mode slopes at each tip'),
    ('tip_g', 'f8 n k k', 'G(L) of each link [1/m]'),
    ('gravity', 'f8 3', 'gravity in the base frame [m/s^2]'),
    ('floating', 'i8', '1 for a free-floating base, 0 for a fixed one'),
    ('base_mass', 'f8', 'mass of a free-floating base [kg]'),
    ('base_first_moment', 'f8 3', 'its first moment about its frame origin [kg m]'),
    ('base_inertia', 'f8 3 3', 'its inertia about its frame origin [kg m^2]'),
    ('body_spatial', 'f8 n 6 6', 'spatial inertia of each rigid part (angular first)'),
    ('payload_spatial', 'f8 n 6 6', 'spatial inertia of each payload at its tip frame'),
    ('base_spatial', 'f8 6 6', 'spatial inertia of a free-floating base'),
)
ModelArrays = record('ModelArrays', MODEL, 'Constant arrays of a chain model (`MODEL`).',
                     __name__)

# The workspace of every chain algorithm, one line per field (Pinocchio's Data): name,
# shape (n joints, nv velocities, k = most modes on one link) and meaning. Body
# components are in the named frame's own axes, angular first; "scratch" fields hold
# nothing between calls.
WORKSPACE = (
    # -- forward pass (kinematics.forward_pass) ----------------------------------------
    ('w', 'n 3', 'angular velocity of each link frame, body components [rad/s]'),
    ('v', 'n 3', 'velocity of each link frame origin, body components [m/s]'),
    ('dw', 'n 3', 'time derivative of w [rad/s^2]'),
    ('dv', 'n 3', 'time derivative of v, gravity included as a base acceleration [m/s^2]'),
    ('parent_w', '3', 'twist and acceleration of the current parent frame (scratch) [rad/s]'),
    ('parent_v', '3', 'as parent_w: velocity [m/s]'),
    ('parent_dw', '3', 'as parent_w: angular acceleration [rad/s^2]'),
    ('parent_dv', '3', 'as parent_w: acceleration [m/s^2]'),
    ('joint_R', 'n 3 3', 'rotation of link frame j in the parent tip frame'),
    ('joint_p', 'n 3', 'origin of link frame j in the parent tip frame [m]'),
    ('tip_w', 'n 3', 'angular velocity of tip frame j, body components [rad/s]'),
    ('tip_v', 'n 3', 'velocity of tip frame j origin, body components [m/s]'),
    ('tip_dw', 'n 3', 'time derivative of tip_w [rad/s^2]'),
    ('tip_dv', 'n 3', 'time derivative of tip_v [m/s^2]'),
    ('tip_p', 'n 3', 'tip frame origin in its link frame, L e1 + u(L, q) [m]'),
    ('tip_gq', 'n k', 'G(L) q of each link (foreshortening of the tip)'),
    ('tip_angles', 'n 6', 'tip bending angles psi_z, rate, accel., psi_y, rate, accel.'),
    ('tip_Rz', 'n 3 3', 'tip rotation Rot(e3, psi_z)'),
    ('tip_Ry', 'n 3 3', 'tip rotation Rot(e2, psi_y); the tip frame is Rz Ry in the link'),
    ('base_R', '3 3', 'floating base orientation in the world (identity if fixed)'),
    ('base_w', '3', 'base angular velocity, body components [rad/s]'),
    ('base_v', '3', 'base velocity, body components [m/s]'),
    ('base_dw', '3', 'time derivative of base_w [rad/s^2]'),
    ('base_dv', '3', 'time derivative of base_v minus gravity [m/s^2]'),
    ('base_g', '3', 'gravity in base axes [m/s^2] (potential energy)'),
    # -- inverse dynamics (rnea) and beam points ---------------------------------------
    ('tau', 'nv', 'RNEA result: joint efforts [N m or N], then modal forces [N m]'),
    ('outboard_m', '3', 'moment of the outboard chain on the current frame [N m]'),
    ('outboard_f', '3', 'force of the outboard chain on the current frame [N]'),
    ('carried_m', '3', 'outboard_m carried to the next frame inwards (scratch) [N m]'),
    ('carried_f', '3', 'outboard_f carried to the next frame inwards (scratch) [N]'),
    ('point_r', '3', 'position of the current beam point in its link frame [m]'),
    ('point_du', '3', 'rate of its displacement u [m/s]'),
    ('point_ddu', '3', 'acceleration of its displacement u [m/s^2]'),
    ('point_load', '3', 'its inertial force w_i a_i [N]'),
    ('point_gq', 'k', 'G(x) q of the current section'),
    ('point_dudq', '3 6+k', 'du/dq of the current beam point (columns: modes)'),
    # -- mass matrix ----------------------------------------------------------------
    ('mass', 'nv nv', 'M(q), armature on the joint diagonal [kg m^2, kg]'),
    ('link_mass', 'n 6+k 6+k', 'generalized mass of each link in (w, v, modal rates)'),
    ('link_jac', '6 nv', 'twist of the current link frame per unit velocity'),
    ('link_E', '6+k nv', 'link_jac stacked on the modal-rate rows of the current link'),
    ('tip_map', '6 6+k', 'tip twist of the current link from its (w, v, modal rates)'),
    ('scratch_E', '6+k nv', 'scratch for M_link E'),
    ('scratch_T', '6 6+k', 'scratch for I T_q (mass_matrix.add_tip_projected)'),
    # -- forward dynamics and the implicit stepper -------------------------------------
    ('rhs', 'nv', 'B u - h(q, v) (scratch zeros in the section kernels)'),
    ('chol', 'nv nv', 'Cholesky factor of mass'),
    ('acceleration', 'nv', "forward dynamics result v' [rad/s^2, m/s^2]"),
    ('stiff_M', 'nv nv', 'M at the implicit step linearization point'),
    ('stiff_W', 'nv nv', 'M + gh D + gh^2 K of the implicit step'),
    ('stiff_chol', 'nv nv', 'Cholesky factor of stiff_W'),
    ('stiff_rhs', 'nv', 'right-hand side of the implicit step solve'),
    ('stiff_sol', 'nv', 'solution of the implicit step solve'),
    # -- articulated-body forward dynamics (chain_kernels.aba) -------------------------
    ('aba_T', 'n 6 6+k', 'tip map T_j of each link (tip twist from its link eta)'),
    ('aba_aT', 'n 6', 'tip acceleration of each link from its velocities alone'),
    ('aba_c', 'n 6', 'velocity product ad_V (xi s\') of each joint'),
    ('aba_r', 'n 6+k', 'local bias b_j of each link: link wrench, modal forces'),
    ('aba_K', '6+k 6+k', 'M_j + T^T I_T T of the current link'),
    ('aba_rhs', '6+k', 'b_j + T^T (I_T a_T + p_T) of the current link'),
    ('aba_IT', '6 6', 'articulated inertia of the outboard chain at the current tip'),
    ('aba_pT', '6', 'its bias wrench'),
    ('aba_t6', '6', 'scratch 6-vector'),
    ('aba_IA', '6 6', 'articulated inertia at the current link frame, modes condensed'),
    ('aba_pA', '6', 'its bias wrench'),
    ('aba_Kqq', 'k k', 'modal block of aba_K'),
    ('aba_L', 'k k', 'Cholesky factor of aba_Kqq'),
    ('aba_Y', 'n k 6', 'K_qq^-1 K_qV of each link (modal response to its link acceleration)'),
    ('aba_y', 'n k', 'K_qq^-1 r_q of each link'),
    ('aba_col', 'k', 'scratch modal vector (right-hand side)'),
    ('aba_sol', 'k', 'scratch modal vector (solution)'),
    ('aba_xi', '6', 'unit twist of the current joint'),
    ('aba_U', 'n 6', 'I_A xi of each joint'),
    ('aba_D', 'n', 'xi^T I_A xi + armature of each joint'),
    ('aba_ubar', 'n', 'u - d s\' - xi^T p_A - U^T c of each joint'),
    ('aba_Ia', '6 6', 'I_A - U U^T / D of the current joint'),
    ('aba_pa', '6', 'p_A + I_A c + U ubar / D of the current joint'),
    ('aba_Lb', '6 6', 'Cholesky factor of a free-floating base\'s articulated inertia'),
    ('aba_A', '6', 'acceleration of the current parent tip frame (base first)'),
    ('aba_AL', '6', 'acceleration of the current link frame'),
    ('aba_XA', '6', 'aba_A in the current link frame'),
    # -- placements and sections (frames) ----------------------------------------------
    ('link_R', 'n 3 3', 'orientation of each link frame in the base frame'),
    ('link_p', 'n 3', 'origin of each link frame in the base frame [m]'),
    ('tip_R', 'n 3 3', 'orientation of each tip frame in the base frame'),
    ('tip_pos', 'n 3', 'origin of each tip frame in the base frame [m]'),
    ('sec_p', '3', 'origin of the current section in its link frame [m]'),
    ('sec_angles', '6', 'bending angles of the current section (as tip_angles)'),
    ('sec_Rz', '3 3', 'Rot(e3, psi_z) of the current section'),
    ('sec_Ry', '3 3', 'Rot(e2, psi_y) of the current section'),
    ('sec_w', '3', 'angular velocity of the current section, body components [rad/s]'),
    ('sec_v', '3', 'velocity of the current section origin, body components [m/s]'),
    ('sec_dw', '3', 'time derivative of sec_w [rad/s^2]'),
    ('sec_dv', '3', 'time derivative of sec_v [m/s^2]'),
    ('sec_motion', '12', "section_motion result: J v and J' v, base axes"),
    # -- constants and scratch -------------------------------------------------------
    ('eye3', '3 3', 'identity (constant)'),
    ('zero3', '3', 'zero vector (constant)'),
    ('zero_nv', 'nv', 'zero vector (set before use)'),
    ('unit_nv', 'nv', 'unit vector e_k (section Jacobian columns)'),
    ('scratch_a', '3', 'scratch 3-vector'),
    ('scratch_b', '3', 'scratch 3-vector'),
    ('scratch_c', '3', 'scratch 3-vector'),
    ('scratch_R', '3 3', 'scratch rotation'),
)
ChainData = record('ChainData', WORKSPACE, 'Workspace of a chain model (`WORKSPACE`); '
                   '`data_table` keeps its table on it.', __name__)


def data_table(data):
    """Return the table of a `ChainData` (built and kept on it on first use)."""
    return table_of(data, DATA_LAYOUT)


MODEL_LAYOUT = spec_layout(ModelArrays, MODEL)
DATA_LAYOUT = spec_layout(ChainData, WORKSPACE)
MODEL_TYPE, DATA_TYPE = MODEL_LAYOUT.type, DATA_LAYOUT.type     # for `tuple_tables.unpack`
