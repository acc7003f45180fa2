"""The arrays a Cosserat chain's kernels read (``Model``) and write (``Workspace``).

n links, S Magnus segments in all, nv coordinates, m = the largest strain basis of a link
(bases padded with zero columns). Every field is a float64 array unless said otherwise.
"""

from collections import namedtuple

import numpy as np

from .kernels import MAX_TERMS

MODEL_FIELDS = {
    'joint_motion': "(n, 6) the joint's twist per unit rate in its frame",
    'joint_index': "(n,) int64 the joint's coordinate in q, -1 for a fixed joint",
    'offset_R': "(n, 3, 3) rotation of the joint frame at zero in the parent's tip frame",
    'offset_p': '(n, 3) position of the same [m]',
    'hub': '(n, 6, 6) inertia of the hub at the joint frame',
    'payload': '(n, 6, 6) inertia of the payload at the tip frame',
    'armature': '(n,) rotor inertia on the joint coordinate [kg m^2 or kg]',
    'strain_start': '(n,) int64 index of the link\'s first strain coordinate in q',
    'strain_count': '(n,) int64 size of the link\'s strain basis',
    'segment_start': '(n,) int64 index of the link\'s first Magnus segment',
    'segment_count': '(n,) int64 Magnus segments of the link',
    'seg_h': '(S,) segment lengths [m]',
    'seg_B1': '(S, 6, m) strain basis at the first Gauss point of each segment',
    'seg_B2': '(S, 6, m) strain basis at the second Gauss point',
    'node_inertia': '(S, 6, 6) section inertia w diag(rho J, rho A) at each segment\'s end '
                    '(zero at the tip)',
    'seg_reference': '(S, 6) the unstrained strain twist of each segment\'s rod (rest '
                     'curvatures, 1, 0, 0)',
    'base_R': '(3, 3) rotation of a fixed base frame in the world',
    'base_p': '(3,) position of a fixed base frame in the world [m]',
    'floating': 'int: 1 for a free-floating base (pose in q, twist in v, after the chain\'s), '
                '0 for a fixed one',
    'base_inertia': '(6, 6) inertia of a floating base at its frame (zero if fixed)',
    'length': '(n,) link lengths [m]',
    'point_start': '(n,) int64 index of a modal link\'s first mass point',
    'point_count': '(n,) int64 mass points of a modal link (0 for rigid and rod links)',
    'point_x': '(P,) abscissa of each mass point [m]',
    'point_phi': '(P, m) mode values W_k at each mass point',
    'point_g': '(P, m, m) foreshortening matrix G at each mass point [1/m]',
    'point_inertia': '(P, 6, 6) inertia of each point mass at its frame',
    'mode_plane': '(n, m) int64 plane of each mode of a modal link: 1 y, 2 z (0 otherwise)',
    'tip_phi': '(n, m) mode values at the tip of a modal link',
    'tip_slope': '(n, m) mode slopes W_k\'(L) at the tip [1/m]',
    'tip_g': '(n, m, m) G(L) at the tip [1/m]',
    'gravity': '(3,) gravity in the world [m/s^2]',
    'stiffness': '(nv,) diagonal of K (zero on joints) [N m/rad, N m^2, ...]',
    'damping': '(nv,) diagonal of D: joint damping and Kelvin-Voigt strain damping',
}


def _documented(name, fields, doc):
    """Return a namedtuple class with a docstring per field."""
    cls = namedtuple(name, tuple(fields))
    cls.__doc__ = doc
    for field, text in fields.items():
        getattr(cls, field).__doc__ = text
    return cls


Model = _documented('Model', MODEL_FIELDS, 'Constant arrays of a Cosserat chain (module doc).')
SCALARS = ('floating',)

WORKSPACE_FIELDS = {
    'J': '(6, nv) body Jacobian of the current frame',
    'IJ': '(6, nv) I J of the current body',
    'eta': '(6,) twist of the current frame',
    'alpha': '(6,) bias acceleration of the current frame (J v\' + alpha = eta\')',
    'cols': '(nv,) int64 active columns of J, in the order they became non-zero',
    'count': '(1,) int64 number of active columns',
    'mass': '(nv, nv) M(q)',
    'bias': '(nv,) h(q, v)',
    'chol': '(nv, nv) Cholesky factor of M',
    'force': '(nv,) B u - h',
    'acceleration': '(nv,) v\'',
    'R': '(3, 3) rotation of the current relative step',
    'p': '(3,) position of the current relative step [m]',
    'omega': '(6,) Magnus Omega of the segment',
    'phi': '(6, m) dOmega/dq of the segment',
    'rate': '(6,) Omega\' = Phi v',
    'xi1': '(6,) strain twist at the first Gauss point',
    'xi2': '(6,) strain twist at the second Gauss point',
    'd1': '(6,) its rate B1 v',
    'd2': '(6,) B2 v',
    's': '(6,) relative twist of a joint or segment',
    'coefficients': '(4,) coefficients of the closed-form J_r of the segment',
    'work': '(10, 3) scratch of J_r products',
    'powers': '(MAX_TERMS + 1, 6) ad_Omega^m Omega\'',
    'partial': '(6,) partial sum of a series',
    'column': '(6,) one column of J',
    'carry': '(9,) scratch of a twist transport',
    't1': '(6,) scratch',
    't2': '(6,) scratch',
    't3': '(6,) scratch',
    'stiff_M': '(nv, nv) M kept by the implicit stepper',
    'stiff_W': '(nv, nv) M + gh D + gh^2 K',
    'stiff_chol': '(nv, nv) its Cholesky factor',
    'stiff_rhs': '(nv,) right-hand side of the implicit stage',
    'stiff_sol': '(nv,) its solution',
    'base_R': '(3, 3) rotation of the base in the world (a floating base\'s from q)',
    'pose_R': '(3, 3) rotation of the current frame in the world',
    'pose_p': '(3,) position of the current frame in the world [m]',
    'saved_J': '(6, nv) J kept at a modal link\'s frame while its points branch off',
    'saved_eta': '(6,) eta kept there',
    'saved_alpha': '(6,) alpha kept there',
    'saved_R': '(3, 3) pose_R kept there',
    'saved_p': '(3,) pose_p kept there [m]',
    'gq': '(m,) G q of a modal section',
    'energy': '(1,) gravity energy summed over the bodies [J]',
    # articulated-body forward dynamics (``articulated``), k = m + 1 local coordinates
    'aba_X': '(6, 6) Ad_g^-1 of the current body or tip relative to its link\'s handle',
    'aba_IX': '(6, 6) I X of the same',
    'aba_J': '(6, k) local Jacobian of the current body',
    'aba_IJT': '(6, k) I J of the current body or the child at a tip',
    'aba_HH': '(n, 6, 6) M_HH of each link (and then its child)',
    'aba_Hl': '(n, 6, k) M_Hl of each link',
    'aba_ll': '(n, k, k) M_ll of each link (then D, armature added)',
    'aba_pH': '(n, 6) p_H of each link',
    'aba_pl': '(n, k) p_l of each link',
    'aba_TR': '(n, 3, 3) rotation of each link\'s tip frame relative to its handle',
    'aba_Tp': '(n, 3) position of the same [m]',
    'aba_TJ': '(n, 6, k) local Jacobian J_T of each tip frame',
    'aba_Tc': '(n, 6) bias acceleration c_T of each tip frame',
    'aba_cols': '(n, k) int64 the coordinate (index in v) of each local coordinate',
    'aba_count': '(n,) int64 local coordinates of each link',
    'aba_L': '(n, k, k) Cholesky factor of each link\'s D',
    'aba_W': '(n, k, 6) D^-1 M_Hl^T of each link',
    'aba_y': '(n, k) D^-1 u of each link',
    'aba_IA': '(6, 6) articulated inertia I^A at the current handle',
    'aba_pA': '(6,) its bias wrench p^A',
    'aba_a': '(6,) acceleration of the current handle (gravity as an upward acceleration)',
    'aba_f': '(6,) scratch wrench',
    'aba_rhs': '(k,) scratch',
    'aba_sol': '(k,) scratch',
    'aba_L6': '(6, 6) Cholesky factor of a floating base\'s articulated inertia',
}
Workspace = _documented('Workspace', WORKSPACE_FIELDS,
                        "Workspace of a Cosserat chain's kernels (module doc).")


def model_arrays(chain):
    """Build the ``Model`` of a ``chain.CosseratChain`` (K and D must be diagonal)."""
    links = chain.parts
    n = len(links)
    width = max([1] + [link.size for link in links])
    counts = [0 if link.beam is not None else link.node_inertias().shape[0] for link in links]
    segments = sum(counts)
    points = [0 if link.beam is None else link.beam.x.size for link in links]
    arrays = dict(
        joint_motion=np.array([link.motion for link in links]),
        joint_index=np.array(chain.joint_index, dtype=np.int64),
        offset_R=np.array([link.offset[:3, :3] for link in links]),
        offset_p=np.array([link.offset[:3, 3] for link in links]),
        hub=np.array([link.hub for link in links]),
        payload=np.array([link.payload for link in links]),
        armature=np.array([link.armature for link in links]),
        strain_start=np.array(chain.strain_start, dtype=np.int64),
        strain_count=np.array([link.size for link in links], dtype=np.int64),
        segment_start=np.zeros(n, dtype=np.int64),
        segment_count=np.array(counts, dtype=np.int64),
        seg_h=np.zeros(segments), seg_B1=np.zeros((segments, 6, width)),
        seg_B2=np.zeros((segments, 6, width)), node_inertia=np.zeros((segments, 6, 6)),
        seg_reference=np.tile([0.0, 0.0, 0.0, 1.0, 0.0, 0.0], (segments, 1)),
        base_R=chain.base[:3, :3].copy(), base_p=chain.base[:3, 3].copy(),
        floating=int(chain.floating_base is not None),
        base_inertia=(np.zeros((6, 6)) if chain.base_inertia is None else chain.base_inertia),
        length=np.array([link.length for link in links]),
        point_start=np.cumsum([0] + points[:-1]).astype(np.int64),
        point_count=np.array(points, dtype=np.int64),
        point_x=np.zeros(sum(points)), point_phi=np.zeros((sum(points), width)),
        point_g=np.zeros((sum(points), width, width)),
        point_inertia=np.zeros((sum(points), 6, 6)),
        mode_plane=np.zeros((n, width), dtype=np.int64), tip_phi=np.zeros((n, width)),
        tip_slope=np.zeros((n, width)), tip_g=np.zeros((n, width, width)),
        gravity=chain.gravity.copy(), stiffness=np.diag(chain.stiffness).copy(),
        damping=np.diag(chain.damping).copy())
    for K, name in ((chain.stiffness, 'stiffness'), (chain.damping, 'damping')):
        off = np.abs(K - np.diag(np.diag(K))).max()
        if off > 1e-9 * max(np.abs(K).max(), 1e-300):
            raise ValueError(f'Cosserat chain: the {name} matrix is not diagonal (off-diagonal '
                             f'{off:.3g}); the kernels need Legendre strains on a uniform rod')
    start = 0
    for j, link in enumerate(links):
        count = arrays['segment_count'][j]
        arrays['segment_start'][j] = start
        span = slice(start, start + count)
        arrays['node_inertia'][span] = link.node_inertias()
        if link.beam is not None:
            beam, span = link.beam, slice(arrays['point_start'][j],
                                          arrays['point_start'][j] + points[j])
            arrays['point_x'][span] = beam.x
            arrays['point_phi'][span, :beam.count] = beam.phi
            arrays['point_g'][span, :beam.count, :beam.count] = beam.g
            arrays['point_inertia'][span] = link.point_inertias()
            arrays['mode_plane'][j, :beam.count] = beam.planes
            phi, slope, g = beam.section(link.length)
            arrays['tip_phi'][j, :beam.count] = phi
            arrays['tip_slope'][j, :beam.count] = slope
            arrays['tip_g'][j, :beam.count, :beam.count] = g
        elif link.rod is None:        # one strain-free step: the translation by the length
            arrays['seg_h'][span] = link.length
        else:
            arrays['seg_h'][span] = link.rod.steps
            arrays['seg_reference'][span] = link.rod.reference
            arrays['seg_B1'][span, :, :link.size] = link.rod.B1
            arrays['seg_B2'][span, :, :link.size] = link.rod.B2
        start += count
    return Model(**{name: arrays[name] if name in SCALARS else np.ascontiguousarray(arrays[name])
                    for name in MODEL_FIELDS})


def workspace(nv, width, links):
    """Allocate a ``Workspace``: nv coordinates, ``links`` links, strain bases <= ``width``."""
    n, k = links, width + 1
    shapes = dict(J=(6, nv), IJ=(6, nv), cols=(nv,), count=(1,), mass=(nv, nv), bias=(nv,),
                  chol=(nv, nv), force=(nv,), acceleration=(nv,), R=(3, 3), p=(3,),
                  phi=(6, width), powers=(MAX_TERMS + 1, 6), coefficients=(4,), work=(10, 3),
                  carry=(9,), stiff_M=(nv, nv), stiff_W=(nv, nv), stiff_chol=(nv, nv),
                  stiff_rhs=(nv,), stiff_sol=(nv,), base_R=(3, 3), saved_J=(6, nv),
                  gq=(width,), energy=(1,), pose_R=(3, 3), pose_p=(3,), saved_R=(3, 3),
                  saved_p=(3,),
                  aba_X=(6, 6), aba_IX=(6, 6), aba_J=(6, k), aba_IJT=(6, k), aba_HH=(n, 6, 6),
                  aba_Hl=(n, 6, k), aba_ll=(n, k, k), aba_pH=(n, 6), aba_pl=(n, k),
                  aba_TR=(n, 3, 3), aba_Tp=(n, 3), aba_TJ=(n, 6, k), aba_Tc=(n, 6),
                  aba_cols=(n, k), aba_count=(n,), aba_L=(n, k, k), aba_W=(n, k, 6),
                  aba_y=(n, k), aba_IA=(6, 6), aba_rhs=(k,), aba_sol=(k,), aba_L6=(6, 6))
    integers = ('cols', 'count', 'aba_cols', 'aba_count')
    return Workspace(**{name: np.zeros(shapes.get(name, (6,)),
                                       dtype=np.int64 if name in integers else float)
                        for name in WORKSPACE_FIELDS})
