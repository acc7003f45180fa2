"""The Cosserat rod link: strain-parameterized, geometrically exact (``cosserat.rod``)."""

import math

from . import layout
from .layout import CODE

CURVATURES = ('torsion', 'bending_y', 'bending_z')      # kept by `RodKind.reduced`


class RodKind:
    """`links.LinkKind` of a link with a ``rod``."""

    name = 'rod'
    key = 'rod'                 # its block under a link: ``link_config.parse_rod``
    layout = layout
    code = CODE                 # its ``link_kind`` in the kernels (``layout``)
    slender = True
    frequency_meaning = 'one strain coordinate alone'
    fewer_modes = ('leave the stiff strains out of the control model (control_modes: k keeps '
                   'torsion and bending to k coefficients, drops extension and shear)')

    def matches(self, link):
        """Return True for a link with a rod."""
        return link.rod is not None

    def parser(self, block, field):
        """Return the function of the length giving its ``rod`` (``link_config``'s parsers).

        The section's errors are raised now; the strain basis needs the length.
        """
        from ....config_checks import naming         # the model file's checks, not kernel code
        from ....link_config import parse_rod, parse_section
        with naming(field):
            parse_section(block, field)

        def rod(length):
            with naming(field):
                return {'rod': parse_rod(block, field, length)}
        return rod

    def element(self, link):
        """Return its ``cosserat.rod.CosseratRod``."""
        return link.rod

    def outline(self, link):
        """Return the outline of its section: the model file's ``section``."""
        return link.rod.section.shape

    def unit(self, link, name):
        """Return a strain coefficient's unit: '1/m' for a curvature, '-' for a strain."""
        return '1/m' if name.startswith(('bending', 'torsion')) else '-'

    def is_flexible(self, link):
        """Return True: a rod always has strain coordinates."""
        return True

    def sections_move(self, link):
        """Return True: its sections follow its strains."""
        return True

    def amplitude(self, link, name):
        """Return the range of a strain coefficient (``bending_z_0``, ``extension_0``...).

        A curvature (bending, torsion) of 4 pi / L winds the link twice round a circle; an
        axial or shear strain of 1 doubles its length or shears it by 45 degrees.
        """
        if name.startswith(('bending', 'torsion')):
            return 4.0 * math.pi / link.length, ' rad/m', 'the link wound twice round a circle'
        return 1.0, '', 'the link twice its length or sheared by 45 degrees'

    def sag(self, link, gravity):
        """Return 0: a rod is geometrically exact, any sag is within its model."""
        return 0.0

    def scaled(self, link, stiffness, damping):
        """Return the rod with its section stiffness and relaxation time scaled."""
        from ...cosserat.rod import CosseratRod, Section
        rod, section = link.rod, link.rod.section
        scaled = Section(section.linear_density, section.rotary_inertia,
                         section.stiffness * stiffness, section.damping_time * damping,
                         shape=section.shape)
        return {'rod': CosseratRod(rod.basis, scaled, points=rod.weights.size - 2,
                                   rest_curvature=rod.reference[:3])}

    def reduced(self, link, modes):
        """Return the rod keeping curvature strains of orders 0 .. modes - 1 (a control model).

        Torsion and bending keep their Legendre orders (the L2 projection of the strain:
        the basis is orthogonal), extension and shear are dropped (inextensible,
        unshearable); same section and Gauss points. ValueError if it has no curvature.
        """
        from ...cosserat.rod import CosseratRod
        from ...cosserat.strain_basis import STRAINS, StrainBasis
        rod = link.rod
        active = dict(zip(rod.basis.strains, rod.basis.orders))
        kept = {name: min(active[STRAINS[name]], modes - 1) for name in CURVATURES
                if STRAINS[name] in active}
        if not kept:
            raise ValueError(f'link {link.name!r}: no curvature strain (torsion, bending) to '
                             'keep in a reduced model')
        return {'rod': CosseratRod(StrainBasis(kept, rod.length), rod.section,
                                   rod.weights.size - 2)}

    def rigid_twin(self, link):
        """Return a beam without modes of the rod's rho A: the rigid slender rod.

        ValueError for a pre-curved rod (``rest_curvature``): it is no straight rod.
        """
        from ...link_description import Beam
        if link.rod.reference[:3].any():
            raise ValueError(f'the rigid twin of a pre-curved rod (link {link.name!r}, '
                             'rest_curvature) is not built: it is no straight rod')
        return {'rod': None, 'beam': Beam(link.rod.section.linear_density, (1.0, 1.0),
                                          modes=(0, 0))}

    # -- the chain model's part (``model.link_part.LinkPart``) --------------------------
    def part(self, link, stiffening):
        """Return the part's fields: the rod itself."""
        return {'rod': link.rod}

    def coordinate_names(self, part):
        """Return its strain coefficients' names (``StrainBasis.names``)."""
        return list(part.rod.basis.names)

    def size(self, part):
        """Return its number of strain coefficients."""
        return part.rod.size

    def elastic(self, part):
        """Return its stiffness and damping matrices (``CosseratRod``)."""
        return part.rod.stiffness_matrix, part.rod.damping_matrix

    def frequencies(self, part):
        """Return None: a strain coordinate's frequency comes from the chain's M and K."""
        return None

    def layout_counts(self, part):
        """Return (segments, points) of the model arrays: its Magnus steps, no point."""
        return part.rod.segments, 0

    def node_inertias(self, part):
        """Return the section inertia carried at the end of each step (zero at the tip)."""
        return part.rod.weights[1:, None, None] * part.rod.section.inertia

    def fill_layout(self, part, arrays, j, segments, points):
        """Write its steps into the model arrays (``model.layout.MODEL``).

        ``segments`` and ``points``: its slices of the segment and point arrays.
        """
        rod = part.rod
        arrays['segment_start'][j], arrays['segment_count'][j] = segments.start, rod.segments
        arrays['node_inertia'][segments] = self.node_inertias(part)
        arrays['seg_h'][segments] = rod.steps
        arrays['seg_reference'][segments] = rod.reference
        arrays['seg_B1'][segments, :, :rod.size] = rod.B1
        arrays['seg_B2'][segments, :, :rod.size] = rod.B2

    def bodies(self, part, hub, payload):
        """Return the hub and payload as given: its tip moves with its coordinates."""
        return hub, payload

    def section_table(self, part, x, B1, B2, phi, slope, g):
        """Write B at the partial step's Gauss points; return (whole segments, its length)."""
        plan = part.rod.section_plan([x])
        B1[:, :part.rod.size], B2[:, :part.rod.size] = plan.B1[0], plan.B2[0]
        return int(plan.segment[0]), float(plan.h[0])


KIND = RodKind()
