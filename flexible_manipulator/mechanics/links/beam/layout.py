"""The beam kind's rows of the chain model's arrays (``model.layout``), one line per field.

P: the mass points of every modal link in all; m: the most modes of a link; g = m + 6
generalized velocities of a modal link frame (its twist, then its modal rates). Filled
by ``BeamKind.fill_layout``.
"""

CODE = 1                    # ``link_kind`` of a floating-frame link

MODEL = (
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
)

WORKSPACE = (
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
)
