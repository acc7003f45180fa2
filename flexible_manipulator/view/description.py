"""What the view draws of the robot description (URDF text; ROS-free, `view.scene` uses it).

The URDF on ``robot_description`` (`description.urdf` writes it from the model) says, for
the view: the links whose section frames carry the centre line (a link ``L`` with a tip
frame ``L_tip``, and section frames ``L_s1`` .. ``L_sF`` between), the section of each
(the ``<visual>`` of its segments: a cylinder, round, or a box, rectangular), the joints
(axis, effort limit), the payloads (mass at the tip frames) and the base (its visual
cylinder, and whether it floats). One source: the model gives the URDF, the URDF the view;
one reader: the text is parsed by `description.urdf_reader`, as a user's URDF is.
A user's URDF link without such a visual is drawn as the square bar the description uses.
"""

from dataclasses import dataclass, field
import math
import re

import numpy as np

from ..description import urdf_reader
from ..description.urdf import BAR_OUTLINE


class DescriptionError(ValueError):
    """The text is not a URDF the view can read (the message says why)."""


@dataclass
class Joint:
    """A moving joint: its name, the frame it drives, axis (in that frame), effort limit."""

    name: str
    child: str
    axis: tuple
    kind: str
    effort_limit: float = math.inf     # [N m or N]; inf when the URDF gives none


@dataclass
class Description:
    """What the view draws of a URDF (module doc).

    ``links``: {link: (section frame names from the link frame to the tip, outline)};
    ``joints``: `Joint` list; ``payloads``: {tip frame: mass [kg]}; ``base``: (frame,
    radius, length) of the base's cylinder [m] or None; ``floating``: the base moves;
    ``tool``: the tool frame (the child of the last tip's fixed joint), or None;
    ``root``: the URDF's root link (the frame the others hang from: the world).
    """

    name: str = ''
    links: dict = field(default_factory=dict)
    joints: list = field(default_factory=list)
    payloads: dict = field(default_factory=dict)
    base: tuple = None
    floating: bool = False
    tool: str = None
    root: str = None

    @property
    def effort_limits(self):
        """Return {joint name: effort limit}."""
        return {joint.name: joint.effort_limit for joint in self.joints}


def _outline(link):
    """Return the section outline of a URDF link's first visual (a cylinder or a box), or None."""
    shape = link.visual or ('',)
    if shape[0] == 'cylinder':
        return ('circle', shape[1])
    if shape[0] == 'box':
        return ('rectangle', shape[2], shape[3])
    return None


def read(text):
    """Return the `Description` of URDF ``text``; `DescriptionError` if it is not one.

    The text is read by the package's URDF reader (`urdf_reader.parse`): what it refuses
    is refused here with its reason.
    """
    try:
        robot = urdf_reader.parse(text)
    except urdf_reader.URDFError as error:
        raise DescriptionError(str(error)) from None
    links = robot.links
    found = Description(name=robot.name, root=robot.root)
    for name in links:
        if name + '_tip' not in links:
            continue
        sections = sorted((int(m.group(1)), other) for other in links
                          for m in [re.fullmatch(re.escape(name) + r'_s(\d+)', other)] if m)
        stations = [name] + [other for _, other in sections] + [name + '_tip']
        outline = None
        for station in stations[1:-1] + stations[:1]:   # sections first: the link frame
            outline = _outline(links[station])          # may show a user's mesh
            if outline is not None:
                break
        found.links[name] = (stations, outline or BAR_OUTLINE)
        payload = links[name + '_tip'].body
        if payload is not None and payload.mass > 0.0:
            found.payloads[name + '_tip'] = payload.mass
    floating = []               # children of floating joints: sections, or a free base
    for joint in robot.joints.values():
        if joint.type in urdf_reader.MOVING:
            norm = float(np.linalg.norm(joint.axis))
            if norm == 0.0:
                raise DescriptionError(f'joint {joint.name!r}: zero axis')
            effort = (joint.limit or {}).get('effort', math.inf)
            found.joints.append(Joint(joint.name, joint.child,
                                      tuple(float(x) for x in joint.axis / norm), joint.type,
                                      effort if effort > 0 else math.inf))
        elif joint.type == 'floating':
            floating.append(joint.child)
        elif joint.type == 'fixed':
            if joint.parent.endswith('_tip') and joint.parent[:-4] in found.links:
                found.tool = joint.child    # the last tip's is the last one met
    stations = {frame for frames, _ in found.links.values() for frame in frames}
    found.floating = any(child not in stations for child in floating)
    for name, link in links.items():
        if link.visual is not None and link.visual[0] == 'cylinder' and name not in stations:
            found.base = (name, link.visual[1], link.visual[2])
            break
    if not found.links:
        raise DescriptionError('no link with a tip frame (<link>_tip): not a description of '
                               'this package\'s models')
    return found
