"""The floating-frame beam link: assumed clamped-free modes (``Beam``, ``modal_beam``)."""

import dataclasses

import numpy as np

from ...chain_kernels.spatial import spatial_inertia
from ...modal_beam import ModalBeam
from . import layout
from .layout import CODE


class BeamKind:
    """`links.LinkKind` of a link with a ``beam``."""

    name = 'beam'
    key = 'beam'                # its block under a link: ``link_config.parse_beam``
    layout = layout
    code = CODE                 # its ``link_kind`` in the kernels (``layout``)
    slender = True
    frequency_meaning = 'clamped-free'
    fewer_modes = 'keep fewer modes per link in the control model (control_modes)'

    def matches(self, link):
        """Return True for a link with a beam."""
        return link.beam is not None

    def parser(self, block, field):
        """Return the function of the length giving its ``beam`` (``link_config``'s parser)."""
        from ....link_config import parse_beam      # the model file's checks, not kernel code
        beam = parse_beam(block, field)
        return lambda length: {'beam': beam}

    def element(self, link):
        """Return its ``link_description.Beam``."""
        return link.beam

    def outline(self, link):
        """Return its optional drawn section (its dynamics need only rho A and EI)."""
        return link.beam.shape

    def unit(self, link, name):
        """Return 'm': a modal amplitude (the tip deflection per W_k(L) = +-2)."""
        return 'm'

    def is_flexible(self, link):
        """Return True if it keeps at least one mode (no modes: a rigid slender rod)."""
        return sum(link.beam.modes) > 0

    def sections_move(self, link):
        """Return True if it keeps a mode: its sections follow the deflection."""
        return self.is_flexible(link)

    def amplitude(self, link, name):
        """Return the range of an assumed mode: its tip deflection by half the link length.

        A mode normalized to int W^2 = L has |W(L)| = 2: an amplitude L/2 deflects the tip
        by the whole link length.
        """
        return 0.5 * link.length, ' m', 'the tip deflected by the link length'

    def sag(self, link, gravity):
        """Return the tip deflection [m] as a clamped beam under gravity [m/s^2] across it.

        delta = w L^4 / (8 EI) + P L^3 / (3 EI): its own weight w = rho A g and the
        payload's P = m g at the tip, EI the softest modelled bending plane
        (Euler-Bernoulli statics; the worst orientation of gravity); zero without modes.
        The floating-frame model holds for a moderate sag only (``model_config``).
        """
        beam = link.beam
        planes = [ei for ei, modes in zip(beam.bending_stiffness, beam.modes) if modes]
        if not planes:
            return 0.0
        ei, length = min(planes), link.length
        return gravity * (beam.linear_density * length ** 4 / (8.0 * ei)
                          + link.payload.mass * length ** 3 / (3.0 * ei))

    def scaled(self, link, stiffness, damping):
        """Return the beam with its bending stiffness and damping ratio scaled."""
        beam = link.beam
        return {'beam': dataclasses.replace(
            beam, bending_stiffness=tuple(x * stiffness for x in beam.bending_stiffness),
            damping_ratio=beam.damping_ratio * damping)}

    def reduced(self, link, modes):
        """Return the beam with at most ``modes`` assumed modes per plane (a control model)."""
        beam = link.beam
        return {'beam': dataclasses.replace(
            beam, modes=tuple(min(modes, count) for count in beam.modes))}

    def rigid_twin(self, link):
        """Return the beam without modes: a rigid slender rod of the same mass."""
        return self.reduced(link, 0)

    # -- the chain model's part (``model.link_part.LinkPart``) --------------------------
    def part(self, link, stiffening):
        """Return the part's fields: its modal beam, or the rigid rod added to the hub.

        Its ``modal_beam.ModalBeam`` (``stiffening``: the foreshortening); a beam without
        modes is a rigid slender rod (``link_description.Beam.as_rod``), added to the hub.
        """
        beam = ModalBeam(link.beam, link.length, stiffening)
        if beam.count:
            return {'beam': beam}
        mass, first_moment, inertia = link.beam.as_rod(link.length)
        return {'hub': np.array(spatial_inertia(mass, first_moment, inertia))}

    def coordinate_names(self, part):
        """Return its modes' names (``y1``, ``z2``...)."""
        return list(part.beam.names)

    def size(self, part):
        """Return its number of modes."""
        return part.beam.count

    def elastic(self, part):
        """Return its modal stiffness and damping (diagonal: orthogonal modes)."""
        return np.diag(part.beam.stiffness), np.diag(part.beam.damping)

    def frequencies(self, part):
        """Return its clamped-free omega_k [rad/s]."""
        return part.beam.frequencies

    def layout_counts(self, part):
        """Return (segments, points) of the model arrays: its point masses, no segment."""
        return 0, part.beam.x.size

    def node_inertias(self, part):
        """Return no segment inertia: its mass is in its points (``point_inertias``)."""
        return np.zeros((0, 6, 6))

    def fill_layout(self, part, arrays, j, segments, points):
        """Write its points and tip tables into the model arrays (``model.layout.MODEL``).

        ``segments`` and ``points``: its slices of the segment and point arrays.
        """
        beam, count = part.beam, part.beam.count
        arrays['point_start'][j], arrays['point_count'][j] = points.start, beam.x.size
        arrays['point_x'][points] = beam.x
        arrays['point_phi'][points, :count] = beam.phi
        arrays['point_g'][points, :count, :count] = beam.g
        arrays['point_mass'][points] = beam.mass
        arrays['mode_plane'][j, :count] = beam.planes
        phi, slope, g = beam.section(part.length)
        arrays['tip_phi'][j, :count] = phi
        arrays['tip_slope'][j, :count] = slope
        arrays['tip_g'][j, :count, :count] = g

    def bodies(self, part, hub, payload):
        """Return the hub and payload as given: its tip moves with its coordinates."""
        return hub, payload

    def section_table(self, part, x, B1, B2, phi, slope, g):
        """Write the mode tables at x [m] into phi, slope, g; return (0, x)."""
        count = part.beam.count
        tables = part.beam.section(x)
        phi[:count], slope[:count] = tables[0], tables[1]
        g[:count, :count] = tables[2]
        return 0, x

    def point_inertias(self, part):
        """Inertias (points, 6, 6) of its point masses at their frames (the reference)."""
        out = np.zeros((part.beam.x.size, 6, 6))
        for i in range(3, 6):
            out[:, i, i] = part.beam.mass
        return out


KIND = BeamKind()
