"""Link kinds: what each kind of link brings, one package each, and the one dispatch.

A link (``link_description.Link``) is rigid, a floating-frame beam (``beam:`` in a model
file, ``link_description.Beam``), a geometrically exact rod (``rod:``,
``cosserat.rod.CosseratRod``) or a rigid link behind an elastic gear (``flexible_joint:``,
`flexible_joint.FlexibleJoint`).
Each kind's package (`rigid`, `beam`, `rod`, `flexible_joint`) defines its `LinkKind`;
`kind_of` finds a link's, and whatever differs between kinds (the model file's key and
its parser, the robot description's inertia, frames and outline, the URDF reader's
frames, the state ranges, the measurement units, the perturbed plants, and the chain
model's part: its coordinates, stiffness, arrays and section tables, its rows of the
kernels' arrays) asks it instead of testing ``link.rod`` or ``link.beam``;
`chain_from_links` builds the one chain model of any mix.

Adding a kind: its package here (a `LinkKind`, its ``layout`` and ``kernels``), its
entry in `KINDS`, its branch in the compiled dispatch (``model.dispatch``), its tests;
doc/architecture.md, "How to add a link kind".
"""

from typing import Protocol

from . import beam, flexible_joint, rigid, rod


class LinkKind(Protocol):
    """What a kind of link provides (SI units)."""

    name: str                   # 'rigid', 'beam', 'rod', 'flexible_joint'
    key: str                    # its block's key under a link of a model file (None: rigid)
    layout: object              # its rows of the kernels' arrays (``<kind>.layout``)
    code: int                   # its ``link_kind`` in the kernels (``layout.CODE``)
    slender: bool               # runs along the link's x axis to the next joint (URDF)

    def matches(self, link):
        """Return True if ``link`` (a description's ``Link`` or a model's part) is its kind's."""

    def parser(self, block, field):
        """Return a function of the link's length [m] giving its ``link_description.Link`` fields.

        ``block``: the mapping under the kind's `key` (a model file's link, a URDF
        overlay's ``flexible:`` entry), ``field`` its dotted path; a ``ConfigError`` naming
        the field at fault, raised now for what does not depend on the length.
        """

    def element(self, link):
        """Return the link's slender beam or rod (None if it has none)."""

    def outline(self, link):
        """Return its section's outline drawn by the robot description, or None (a bar)."""

    def is_flexible(self, link):
        """Return True if the link has elastic coordinates."""

    def sections_move(self, link):
        """Return True if its section frames move in its link frame (TF publishes them)."""

    def unit(self, link, name):
        """Return the unit of its elastic coordinate ``name`` in a recording ('m', 'rad'...)."""

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
        """Return the ``link_description.Link`` fields to replace: stiffness and damping scaled."""

    def reduced(self, link, modes):
        """Return the ``Link`` fields to replace: at most ``modes`` per strain or plane."""

    def rigid_twin(self, link):
        """Return the ``Link`` fields to replace: the link without elastic coordinates."""

    # The chain model's part (``model.link_part.LinkPart``, built by `part`): what the
    # model and its arrays (``model.arrays``) ask of a kind. A part's kind is
    # `kind_of(part)` (it has ``rod``, ``beam`` and ``element`` too).
    frequency_meaning: str      # what `frequencies` (or the chain's) are; None if rigid
    fewer_modes: str            # advice: how to keep fewer coordinates; None if rigid

    def part(self, link, stiffening):
        """Return the ``model.link_part.LinkPart`` fields of a ``link_description.Link``'s kind.

        A dict: ``rod``, ``beam`` or ``element`` (what `matches` the part), ``hub`` (a
        6 x 6 inertia added to the hub) and ``armature`` (added on the joint coordinate
        [kg m^2 or kg]), each optional.
        """

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
        """Write the part's rows of the model arrays (link j; its slices of segment, point).

        Its `layout`'s fields are allocated (zeros) by ``model.arrays``; the kind writes
        its own rows.
        """

    def bodies(self, part, hub, payload):
        """Return the hub and payload inertias (6 x 6 at the joint and tip frames) it carries.

        A kind whose tip frame is fixed in its joint frame may carry the payload in the hub
        (one body fewer in every walk).
        """

    def section_table(self, part, x, B1, B2, phi, slope, g):
        """Fill a section's kind tables at x [m]; return (whole segments, partial step h)."""


# The registered kinds: the first that matches is a link's. A kind's place in the
# compiled walk is its branch in ``model.dispatch`` (numba needs static code).
KINDS = (rod.KIND, beam.KIND, flexible_joint.KIND, rigid.KIND)


def kind_of(link):
    """Return the `LinkKind` of a ``link_description.Link``."""
    return next(kind for kind in KINDS if kind.matches(link))


def chain_from_links(name, links, gravity_base=(0.0, 0.0, 0.0), **description):
    """Build the chain model of a list of ``link_description.Link``, whatever their kinds.

    One model for every link kind: ``model.chain.Chain`` (its walk runs rigid
    links, floating-frame beams and Cosserat rods in any mix). ``gravity_base``: gravity in
    the base frame [m/s^2] (world axes for a floating base). ``description``: base_frame,
    base_xyz, base_rpy, tool_frame, geometric_stiffening, floating_base (`from_links`).
    """
    from ..model.chain import Chain
    return Chain.from_links(name, list(links), gravity_base, **description)
