"""Parent-to-child transforms of a fixed list of frames, one compiled call per update.

The robot description's TF tree (joints and the section frames along flexible links)
asks these at every published state: `FrameTransforms` tabulates each section's constants
once (`chain.Chain.section_table`) and `update` runs `kernels.local_transforms` on them.
"""

import numpy as np

from . import kernels


class FrameTransforms:
    """Parent-to-child transforms of a fixed list of frames (``frame_transforms``).

    Entry (j, None) is joint j (link frame j in the tip frame of link j-1); (j, x) is the
    section at abscissa x of link j in link frame j. After ``update(data, q)``, ``R[i]``,
    its unit quaternion ``quat[i]`` (w, x, y, z; w >= 0) and ``p[i]`` hold entry i. Each
    section's tables are found once (`Chain.section_table`); one compiled call
    (`kernels.local_transforms`) computes them all.
    """

    def __init__(self, model, entries):
        """Tabulate every section entry's constants once."""
        entries = list(entries)
        count, width = len(entries), model.arrays.seg_B1.shape[2]
        self.model = model
        self.links = np.array([j for j, _ in entries], dtype=np.int64)
        self.is_section = np.array([x is not None for _, x in entries], dtype=np.int64)
        self.segments = np.zeros(count, dtype=np.int64)
        self.h, self.xs = np.zeros(count), np.zeros(count)
        self.B1, self.B2 = np.zeros((count, 6, width)), np.zeros((count, 6, width))
        self.phi, self.slope = np.zeros((count, width)), np.zeros((count, width))
        self.g = np.zeros((count, width, width))
        for i, (j, x) in enumerate(entries):
            if x is not None:
                (self.segments[i], self.h[i], self.B1[i], self.B2[i], self.phi[i],
                 self.slope[i], self.g[i], self.xs[i]) = model.section_table(j, x)
        self.R, self.p = np.zeros((count, 3, 3)), np.zeros((count, 3))
        self.quat = np.zeros((count, 4))

    def update(self, data, q):
        """Compute every transform at coordinates q."""
        model = self.model
        q, _ = model._check(q)
        model._run(kernels.local_transforms, data, q, model._zero, self.links,
                   self.is_section, self.segments, self.h, self.B1, self.B2, self.phi,
                   self.slope, self.g, self.xs, self.R, self.p, self.quat)
