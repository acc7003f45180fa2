"""The rigid link: its body and payload only, no elastic coordinate."""

import numpy as np

from ... import lie
from . import layout
from .layout import CODE


class RigidStep:
    """The chain model's part of a link whose tip is a rigid step of its length.

    Shared by the kinds whose link beyond the joint (or the gear) is rigid: no segment
    or point rows in the model arrays, no section inertia (its bodies are the walk's hub
    and payload), a section at x one step of x (``kernels.to_section``).
    """

    def layout_counts(self, part):
        """Return (segments, points) of the model arrays: none (its step: ``kernels``)."""
        return 0, 0

    def node_inertias(self, part):
        """Return no segment inertia: its bodies are the walk's hub and payload."""
        return np.zeros((0, 6, 6))

    def fill_layout(self, part, arrays, j, segments, points):
        """Write nothing: its step is the translation by ``length`` (``kernels.walk``)."""

    def section_table(self, part, x, B1, B2, phi, slope, g):
        """Return (whole segments before x, partial step) to the section at x [m]: (0, x)."""
        return 0, x


class RigidKind(RigidStep):
    """`links.LinkKind` of a link without beam or rod."""

    name = 'rigid'
    key = None                  # a link without another kind's block
    layout = layout
    code = CODE                 # its ``link_kind`` in the kernels (``layout``)
    slender = False
    frequency_meaning = fewer_modes = None      # no elastic coordinate

    def matches(self, link):
        """Return True for a link with neither a beam, a rod nor another kind's element."""
        return link.beam is None and link.rod is None and link.element is None

    def parser(self, block, field):
        """Return the fields of no block: none (a rigid link has no key)."""
        return lambda length: {}

    def element(self, link):
        """Return None: no slender element."""
        return None

    def outline(self, link):
        """Return None: drawn as a bar."""
        return None

    def is_flexible(self, link):
        """Return False: no elastic coordinate."""
        return False

    def sections_move(self, link):
        """Return False: its sections are fixed in its frame."""
        return False

    def unit(self, link, name):
        """Raise: a rigid link has no elastic coordinate."""
        raise ValueError(f'link {link.name!r} is rigid: no elastic coordinate {name!r}')

    def amplitude(self, link, name):
        """Raise: a rigid link has no elastic coordinate."""
        raise ValueError(f'link {link.name!r} is rigid: no elastic coordinate {name!r}')

    def sag(self, link, gravity):
        """Return 0: a rigid link does not sag."""
        return 0.0

    def scaled(self, link, stiffness, damping):
        """Return no change: nothing elastic to scale."""
        return {}

    def reduced(self, link, modes):
        """Return no change: nothing to reduce."""
        return {}

    def rigid_twin(self, link):
        """Return no change: already rigid."""
        return {}

    # -- the chain model's part (``model.link_part.LinkPart``) --------------------------
    def part(self, link, stiffening):
        """Return the part's fields: none (no rod, beam or element; nothing added)."""
        return {}

    def coordinate_names(self, part):
        """Return []: no elastic coordinate."""
        return []

    def size(self, part):
        """Return 0 elastic coordinates."""
        return 0

    def elastic(self, part):
        """Return the (empty) stiffness and damping blocks."""
        return np.zeros((0, 0)), np.zeros((0, 0))

    def frequencies(self, part):
        """Return None: no mode."""
        return None

    def bodies(self, part, hub, payload):
        """Return the hub with the payload in it, and no payload: one body at the joint frame.

        Its tip frame is the joint frame moved by d = (length, 0, 0), so the payload's
        inertia at the joint frame is X^T I X with X = Ad of that move's inverse,
        X (w, v) = (w, v + w x d) (``chain_kernels.spatial``'s convention): exact, and
        the walk adds one body per rigid link instead of two.
        """
        move = np.eye(6)
        move[3:, :3] = -lie.hat3((part.length, 0.0, 0.0))
        return hub + move.T @ payload @ move, np.zeros((6, 6))


KIND = RigidKind()
