"""The rod kind's rows of the chain model's arrays (``model.layout``), one line per field.

S: the Magnus segments of every rod in all; m: the largest strain basis of a link (bases
padded with zero columns). Filled by ``RodKind.fill_layout``.
"""

CODE = 2                    # ``link_kind`` of a rod link (``kernels._link`` dispatches on it)

MODEL = (
    ('segment_start', 'i8 n', "index of the link's first Magnus segment"),
    ('segment_count', 'i8 n', 'Magnus segments of the link'),
    ('seg_h', 'f8 S', 'segment lengths [m]'),
    ('seg_B1', 'f8 S 6 m', 'strain basis at the first Gauss point of each segment'),
    ('seg_B2', 'f8 S 6 m', 'strain basis at the second Gauss point'),
    ('node_inertia', 'f8 S 6 6',
     "section inertia w diag(rho J, rho A) at each segment's end (zero at the tip)"),
    ('seg_reference', 'f8 S 6',
     "the unstrained strain twist of each segment's rod (rest curvatures, 1, 0, 0)"),
)

WORKSPACE = (
    ('omega', 'f8 6', 'Magnus Omega of the segment'),
    ('phi', 'f8 6 m', 'dOmega/dq of the segment'),
    ('rate', 'f8 6', "Omega' = Phi v"),
    ('xi1', 'f8 6', 'strain twist at the first Gauss point'),
    ('xi2', 'f8 6', 'strain twist at the second Gauss point'),
    ('d1', 'f8 6', 'rate B1 v of xi1'),
    ('d2', 'f8 6', 'rate B2 v of xi2'),
    ('coefficients', 'f8 6', "coefficients of the segment's closed-form J_r and their rates"),
    ('jacobian', 'f8 2 3 3', "blocks A, Q_r of the segment's J_r = [[A, 0], [Q_r, A]]"),
)
