"""The arrays of a Cosserat chain built from its links: its `layout.Model` and workspaces."""

import numpy as np

from ..tuple_tables import allocate, spec_fields
from .layout import KIND_LAYOUTS, MODEL, Model, Workspace, WORKSPACE, data_table


def model_arrays(chain):
    """Build the ``Model`` of a ``chain.Chain`` (K and D must be diagonal).

    The fields every link has, then each kind's rows (``KIND_LAYOUTS``): allocated here
    (zeros of their extents: n links, m the widest link, S segments, P points), written
    by each link's kind (``LinkKind.fill_layout``) on its rows and its slices of the
    segments and points.
    """
    links = chain.parts
    n = len(links)
    width = max([1] + [link.size for link in links])
    counts, points = zip(*[link.kind.layout_counts(link) for link in links])
    sizes = {'n': n, 'm': width, 'S': sum(counts), 'P': sum(points)}
    arrays = {name: np.zeros([sizes[e] if e in sizes else int(e) for e in extents], dtype=kind)
              for layout in KIND_LAYOUTS
              for (name, _, _), (kind, extents) in zip(layout.MODEL, spec_fields(layout.MODEL))}
    arrays.update(
        joint_motion=np.array([link.motion for link in links]),
        joint_index=np.array(chain.joint_index, dtype=np.int64),
        link_kind=np.array([link.kind.code for link in links], dtype=np.int64),
        offset_R=np.array([link.offset[:3, :3] for link in links]),
        offset_p=np.array([link.offset[:3, 3] for link in links]),
        hub=np.array([link.hub for link in links]),
        payload=np.array([link.payload for link in links]),
        armature=np.array([link.armature for link in links]),
        strain_start=np.array(chain.strain_start, dtype=np.int64),
        strain_count=np.array([link.size for link in links], dtype=np.int64),
        base_R=chain.base[:3, :3].copy(), base_p=chain.base[:3, 3].copy(),
        floating=int(chain.floating_base is not None),
        base_inertia=(np.zeros((6, 6)) if chain.base_inertia is None else chain.base_inertia),
        length=np.array([link.length for link in links]),
        gravity=chain.gravity.copy(), stiffness=np.diag(chain.stiffness).copy(),
        damping=np.diag(chain.damping).copy(), friction=chain.friction.copy(),
        friction_velocity=chain.friction_velocity.copy())
    for K, name in ((chain.stiffness, 'stiffness'), (chain.damping, 'damping')):
        off = np.abs(K - np.diag(np.diag(K))).max()
        if off > 1e-9 * max(np.abs(K).max(), 1e-300):
            raise ValueError(f'Cosserat chain: the {name} matrix is not diagonal (off-diagonal '
                             f'{off:.3g}); the kernels need Legendre strains on a uniform rod')
    segment, point = 0, 0
    for j, link in enumerate(links):
        link.kind.fill_layout(link, arrays, j, slice(segment, segment + counts[j]),
                              slice(point, point + points[j]))
        segment, point = segment + counts[j], point + points[j]
    return Model(*[np.ascontiguousarray(arrays[name]) if extents else arrays[name]
                   for (name, _, _), (_, extents) in zip(MODEL, spec_fields(MODEL))])


def workspace(nv, width, links):
    """Allocate a `layout.Workspace`: nv coordinates, ``links`` links, bases <= ``width``."""
    data = allocate(Workspace, WORKSPACE, {'n': links, 'nv': nv, 'm': width, 'k': width + 1,
                                           'g': width + 6})
    data_table(data)
    return data
