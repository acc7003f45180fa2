"""What the view draws of the robot description (URDF text; ROS-free, `view.scene` uses it).

The URDF on ``robot_description`` (`description.urdf` writes it from the model) says, for
the view: the links whose section frames carry the centre line (a link ``L`` with a tip
frame ``L_tip``, and section frames ``L_s1`` .. ``L_sF`` between), the section of each
(the ``<visual>`` of its segments: a cylinder, round, or a box, rectangular), the joints
(axis, effort limit), the payloads (mass at the tip frames) and the base (its visual
cylinder, and whether it floats). One source: the model gives the URDF, the URDF the view.
A user's URDF link without such a visual is drawn as the square bar the description uses.
"""

from dataclasses import dataclass, field
import math
import re
import xml.etree.ElementTree as ElementTree

import numpy as np

from ..description.urdf import BAR_SIDE

DEFAULT_OUTLINE = ('rectangle', BAR_SIDE, BAR_SIDE)


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


def _floats(text, count, what):
    values = [float(x) for x in (text or '').split()]
    if len(values) != count or not all(math.isfinite(v) for v in values):
        raise DescriptionError(f'{what}: {count} finite numbers expected, got {text!r}')
    return tuple(values)


def _outline(link):
    """Return the section outline of a URDF link's first visual, or None."""
    geometry = link.find('visual/geometry')
    if geometry is None:
        return None
    cylinder, box = geometry.find('cylinder'), geometry.find('box')
    if cylinder is not None:
        radius = float(cylinder.get('radius', 'nan'))
        return ('circle', radius) if math.isfinite(radius) and radius > 0 else None
    if box is not None:
        size = _floats(box.get('size'), 3, f'link {link.get("name")!r} box size')
        return ('rectangle', size[1], size[2]) if min(size[1:]) > 0 else None
    return None


def read(text):
    """Return the `Description` of URDF ``text``; `DescriptionError` if it is not one."""
    try:
        robot = ElementTree.fromstring(text)
    except ElementTree.ParseError as error:
        raise DescriptionError(f'not XML: {error}') from None
    if robot.tag != 'robot':
        raise DescriptionError(f'root element <{robot.tag}>, not <robot>')
    links = {link.get('name'): link for link in robot.findall('link')}
    found = Description(name=robot.get('name', ''))
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
        found.links[name] = (stations, outline or DEFAULT_OUTLINE)
        mass = links[name + '_tip'].find('inertial/mass')
        if mass is not None and float(mass.get('value', 0.0)) > 0.0:
            found.payloads[name + '_tip'] = float(mass.get('value'))
    floating = []               # children of floating joints: sections, or a free base
    children = {child.get('link') for child in robot.findall('joint/child')}
    roots = [name for name in links if name not in children]
    found.root = roots[0] if len(roots) == 1 else None
    for joint in robot.findall('joint'):
        kind, child = joint.get('type'), joint.find('child')
        child = None if child is None else child.get('link')
        if kind in ('revolute', 'continuous', 'prismatic'):
            axis = joint.find('axis')
            axis = (1.0, 0.0, 0.0) if axis is None else _floats(
                axis.get('xyz'), 3, f'joint {joint.get("name")!r} axis')
            limit = joint.find('limit')
            effort = math.inf if limit is None else float(limit.get('effort', 'inf'))
            norm = float(np.linalg.norm(axis))
            if norm == 0.0:
                raise DescriptionError(f'joint {joint.get("name")!r}: zero axis')
            found.joints.append(Joint(joint.get('name'), child,
                                      tuple(np.asarray(axis) / norm), kind,
                                      effort if effort > 0 else math.inf))
        elif kind == 'floating':
            floating.append(child)
        elif kind == 'fixed' and joint.find('parent') is not None:
            parent = joint.find('parent').get('link', '')
            if parent.endswith('_tip') and parent[:-4] in found.links:
                found.tool = child      # the last tip's is the last one met
    stations = {frame for frames, _ in found.links.values() for frame in frames}
    found.floating = any(child not in stations for child in floating)
    for name, link in links.items():
        cylinder = link.find('visual/geometry/cylinder')
        if cylinder is not None and name not in stations:
            found.base = (name, float(cylinder.get('radius')), float(cylinder.get('length')))
            break
    if not found.links:
        raise DescriptionError('no link with a tip frame (<link>_tip): not a description of '
                               'this package\'s models')
    return found
