"""The Cosserat rod link: strain-parameterized, geometrically exact (``cosserat.rod``)."""

import math


class RodKind:
    """`links.LinkKind` of a link with a ``rod``."""

    name = 'rod'

    def matches(self, link):
        """Return True for a link with a rod."""
        return link.rod is not None

    def element(self, link):
        """Return its ``cosserat.rod.CosseratRod``."""
        return link.rod

    def is_flexible(self, link):
        """Return True: a rod always has strain coordinates."""
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
        from ..cosserat.rod import CosseratRod, Section
        rod, section = link.rod, link.rod.section
        scaled = Section(section.linear_density, section.rotary_inertia,
                         section.stiffness * stiffness, section.damping_time * damping)
        return {'rod': CosseratRod(rod.basis, scaled, points=rod.weights.size - 2,
                                   rest_curvature=rod.reference[:3])}


KIND = RodKind()
