"""Link kinds: what each kind of link brings, one module each, and the one dispatch.

A link (``chain.Link``) is rigid, a floating-frame beam (``beam:`` in a model file,
``chain.Beam``) or a geometrically exact rod (``rod:``, ``cosserat.rod.CosseratRod``).
Each kind's module (`rigid`, `beam`, `rod`) defines its `LinkKind`; `kind_of` finds a
link's, and whatever differs between kinds outside the kernels (the robot description's
inertia and frames, the state ranges, the perturbed plants, and the chain model's part:
its coordinates, stiffness, arrays and section tables) asks it instead of testing
``link.rod`` or ``link.beam``; `chain_from_links` builds the one chain model of any mix.

Adding a kind: its module here (a `LinkKind`), its entry in `KINDS`, its parser entry in
``link_config.parse_link``, its tests; doc/architecture.md, "How to add a link kind".
"""

from typing import Protocol

from . import beam, rigid, rod


class LinkKind(Protocol):
    """What a kind of link provides (SI units)."""

    name: str                   # 'rigid', 'beam' or 'rod'
    code: int                   # its ``link_kind`` in the kernels (``<kind>.layout.CODE``)

    def matches(self, link):
        """Return True if ``link`` (a ``chain.Link``) is of this kind."""

    def element(self, link):
        """Return the link's slender beam or rod (None if rigid)."""

    def is_flexible(self, link):
        """Return True if the link has elastic coordinates (its sections move)."""

    def amplitude(self, link, name):
        """Return (bound, unit, meaning) of the range of the elastic coordinate ``name``.

        ``name``: the coordinate's name without the link's prefix (``modes_of``); the
        bound is where the physical range ends (``control.state_range``).
        """

    def sag(self, link, gravity):
        """Return the gravity sag [m] whose ratio to the length bounds the kind's validity.

        ``model_config`` refuses a link sagging past its length and warns past 10 %;
        a kind valid at any deflection returns 0.
        """

    def scaled(self, link, stiffness, damping):
        """Return the ``chain.Link`` fields to replace: stiffness and damping scaled."""

    def reduced(self, link, modes):
        """Return the ``chain.Link`` fields to replace: at most ``modes`` per strain or plane."""

    def rigid_twin(self, link):
        """Return the ``chain.Link`` fields to replace: the link without elastic coordinates."""

    # The chain model's part (``model.chain.CosseratLink``, built by `part`): what the
    # model and its arrays (``model.arrays``) ask of a kind. A part's kind is
    # `kind_of(part)` (it has ``rod`` and ``beam`` too).
    frequency_meaning: str      # what `frequencies` (or the chain's) are; None if rigid
    fewer_modes: str            # advice: how to keep fewer coordinates; None if rigid

    def part(self, link, stiffening):
        """Return (rod, modal beam, 6 x 6 inertia added to the hub) of a ``chain.Link``."""

    def coordinate_names(self, part):
        """Return the names of the part's elastic coordinates (without the link's prefix)."""

    def size(self, part):
        """Return the number of the part's elastic coordinates."""

    def elastic(self, part):
        """Return the part's stiffness and damping blocks (size x size) [N/m, N s/m, ...]."""

    def frequencies(self, part):
        """Return the part's own mode frequencies [rad/s], or None (the chain's M and K)."""

    def layout_counts(self, part):
        """Return (segments, points): its rows in the model's segment and point arrays."""

    def node_inertias(self, part):
        """Return (segments, 6, 6): the section inertia carried at the end of each segment."""

    def fill_layout(self, part, arrays, j, segments, points):
        """Write the part's fields of the model arrays (link j; its slices of segment, point)."""

    def bodies(self, part, hub, payload):
        """Return the hub and payload inertias (6 x 6 at the joint and tip frames) it carries.

        A kind whose tip frame is fixed in its joint frame may carry the payload in the hub
        (one body fewer in every walk).
        """

    def section_table(self, part, x, B1, B2, phi, slope, g):
        """Fill a section's kind tables at x [m]; return (whole segments, partial step h)."""


KINDS = (rod.KIND, beam.KIND, rigid.KIND)       # the first that matches is the link's


def kind_of(link):
    """Return the `LinkKind` of a ``chain.Link``."""
    return next(kind for kind in KINDS if kind.matches(link))


def chain_from_links(name, links, gravity_base=(0.0, 0.0, 0.0), **description):
    """Build the chain model of a list of ``chain.Link``, whatever their kinds.

    One model for every link kind: ``model.chain.Chain`` (its walk runs rigid
    links, floating-frame beams and Cosserat rods in any mix). ``gravity_base``: gravity in
    the base frame [m/s^2] (world axes for a floating base). ``description``: base_frame,
    base_xyz, base_rpy, tool_frame, geometric_stiffening, floating_base (`from_links`).
    """
    from ..model.chain import Chain
    return Chain.from_links(name, list(links), gravity_base, **description)
