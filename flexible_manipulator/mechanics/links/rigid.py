"""The rigid link: its body and payload only, no elastic coordinate."""


class RigidKind:
    """`links.LinkKind` of a link without beam or rod."""

    name = 'rigid'

    def matches(self, link):
        """Return True for a link with neither a beam nor a rod."""
        return link.beam is None and link.rod is None

    def element(self, link):
        """Return None: no slender element."""
        return None

    def is_flexible(self, link):
        """Return False: its sections are fixed in its frame."""
        return False

    def amplitude(self, link, name):
        """Raise: a rigid link has no elastic coordinate."""
        raise ValueError(f'link {link.name!r} is rigid: no elastic coordinate {name!r}')

    def sag(self, link, gravity):
        """Return 0: a rigid link does not sag."""
        return 0.0

    def scaled(self, link, stiffness, damping):
        """Return no change: nothing elastic to scale."""
        return {}


KIND = RigidKind()
