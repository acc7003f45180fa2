"""The floating-frame beam link: assumed clamped-free modes (``chain.Beam``, ``modal_beam``)."""

import dataclasses


class BeamKind:
    """`links.LinkKind` of a link with a ``beam``."""

    name = 'beam'

    def matches(self, link):
        """Return True for a link with a beam."""
        return link.beam is not None

    def element(self, link):
        """Return its ``chain.Beam``."""
        return link.beam

    def is_flexible(self, link):
        """Return True if it keeps at least one mode (no modes: a rigid slender rod)."""
        return sum(link.beam.modes) > 0

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


KIND = BeamKind()
