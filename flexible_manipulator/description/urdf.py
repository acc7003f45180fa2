"""Robot description (URDF) and TF frame tree of a serial chain model.

Frames, from the world to the tool:

    world --(fixed: base pose)--> base_link --(joint 1)--> link1 --> link1_s1 ... link1_sF
    link1 --> link1_tip --(joint 2)--> link2 ... linkN_tip --(fixed)--> tool0

``link_sK`` are section frames at x = K L / (F + 1) along the link (F = the link's
``frames``), ``link_tip`` the tip frame at x = L. On a rigid link they are fixed; on a
flexible link they follow the deformation and the URDF declares them ``floating`` (the
plant computes and publishes them; robot_state_publisher cannot). A free-floating base is
a ``floating`` joint from the world too. Fixed joints go to /tf_static, all others to /tf.

A link's ``attached`` frames (``link_description.FixedFrame``: a user's URDF links merged into the
chain's bodies, ``urdf_reader``) follow its own, fixed to their parents, with their URDF
link and joint names and geometry; the tool frame is added only when no frame has its name
(a model read from a URDF: its tip link).
"""

from dataclasses import dataclass
import math
from xml.sax.saxutils import quoteattr

import numpy as np

from ..mechanics import lie
from ..mechanics.links import kind_of


@dataclass(frozen=True)
class JointFrame:
    """One parent-to-child transform of the tree.

    kind is 'fixed' (constant xyz/rpy), 'joint' (a model joint: origin xyz/rpy, then its
    motion), 'section' (a material section at abscissa x of link ``link``) or 'base' (a
    free-floating base; xyz/rpy is its initial pose).
    """

    joint: str
    parent: str
    child: str
    xyz: tuple
    rpy: tuple
    kind: str
    link: int = -1
    x: float = 0.0

    @property
    def moving(self):
        """True when the transform changes with the state (published on /tf)."""
        return self.kind != 'fixed'


def section_abscissae(link):
    """Abscissae [m] of the section frames of a link: K L / (F + 1), K = 1..F."""
    return [link.length * (k + 1) / (link.frames + 1) for k in range(link.frames)]


def tool_frame_added(links, tool_frame):
    """Tell whether the description adds ``tool_frame`` on the last tip.

    It does unless ``tool_frame`` is already a frame of the chain's ``links`` (a link's
    own or an attached one).
    """
    return not any(tool_frame == name for link in links
                   for name in [link.name] + [frame.name for frame in link.attached])


def is_world(model, world_frame):
    """Tell whether the model's base frame is the world frame itself (no mount).

    A URDF rooted at ``world`` (the frame robots are fixed to in many URDFs) with the base
    fixed at the identity: its root is the world, not a frame placed in it.
    """
    return (model.base_frame == world_frame and model.floating_base is None
            and not np.any(model.base_xyz) and not np.any(model.base_rpy))


def joint_frames(model, world_frame='world'):
    """List the model's transforms from the world to the tool, in tree order."""
    base_kind = 'fixed' if model.floating_base is None else 'base'
    frames = [] if is_world(model, world_frame) else [
        JointFrame(f'{model.base_frame}_mount', world_frame, model.base_frame,
                   tuple(model.base_xyz), tuple(model.base_rpy), base_kind)]
    parent = model.base_frame
    for j, link in enumerate(model.links):
        joint = link.joint
        frames.append(JointFrame(joint.name, parent, link.name, tuple(joint.xyz),
                                 tuple(joint.rpy), 'fixed' if joint.type == 'fixed' else 'joint',
                                 j))
        flexible = kind_of(link).sections_move(link)
        for k, x in enumerate(section_abscissae(link) + [link.length]):
            child = f'{link.name}_tip' if k == link.frames else f'{link.name}_s{k + 1}'
            if flexible:
                frames.append(JointFrame(f'{child}_section', link.name, child, (x, 0.0, 0.0),
                                         (0.0, 0.0, 0.0), 'section', j, x))
            else:
                frames.append(JointFrame(f'{child}_section', link.name, child, (x, 0.0, 0.0),
                                         (0.0, 0.0, 0.0), 'fixed', j, x))
        frames += [JointFrame(frame.joint, frame.parent, frame.name, tuple(frame.xyz),
                              tuple(frame.rpy), 'fixed') for frame in link.attached]
        parent = f'{link.name}_tip'
    if tool_frame_added(model.links, model.tool_frame):
        frames.append(JointFrame(f'{model.tool_frame}_mount', parent, model.tool_frame,
                                 (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), 'fixed'))
    return frames


def frames_on_links(model):
    """Every frame of the tree that rides on a link: {name: (link, x, pose)}, tree order.

    A frame rides on the section at abscissa x [m] of link ``link`` at the fixed ``pose``
    (4x4, the URDF origins of the fixed joints between them composed) in that section's
    frame: a link's own frame (x = 0), its section and tip frames (identity), its
    attached frames and the tool frame the description adds on the last tip. The base
    frame and what is fixed to it (or the world) are not listed: they do not move with
    the joints.
    """
    sections = {}
    for j, link in enumerate(model.links):
        sections[link.name] = (j, 0.0)
        sections.update({f'{link.name}_s{k + 1}': (j, x)
                         for k, x in enumerate(section_abscissae(link))})
        sections[f'{link.name}_tip'] = (j, link.length)
    tree = joint_frames(model)
    fixed = {f.child: f for f in tree if f.kind == 'fixed'}
    found = {}
    for frame in [f.child for f in tree]:
        name, chain = frame, []
        while name not in sections and name in fixed:
            chain.append(fixed[name])
            name = fixed[name].parent
        if name in sections:
            pose = np.eye(4)
            for step in reversed(chain):
                pose = pose @ lie.se3_from_origin(step.xyz, step.rpy)
            found[frame] = sections[name] + (pose,)
    return found


def _vec(values):
    return ' '.join(f'{float(v):.17g}' for v in values)


def _inertial(body, link=None):
    """Rigid-body inertia of ``body``, plus the beam or rod of ``link`` as a rigid rod."""
    mass = body.mass
    first = body.first_moment()
    inertia_o = body.inertia_about_origin()
    slender = None if link is None else kind_of(link).element(link)
    if slender is not None:
        rod_mass, rod_first, rod_inertia = slender.as_rod(link.length)
        mass, first, inertia_o = mass + rod_mass, first + rod_first, inertia_o + rod_inertia
    if mass <= 0.0:
        return ''
    com = first / mass
    inertia_c = inertia_o - mass * (com @ com * np.eye(3) - np.outer(com, com))
    inertia_c = inertia_c + 1e-9 * np.eye(3)     # URDF consumers want strictly positive
    i = inertia_c
    return f'''    <inertial>
      <origin xyz="{_vec(com)}" rpy="0 0 0"/>
      <mass value="{mass:.17g}"/>
      <inertia ixx="{i[0, 0]:.17g}" ixy="{i[0, 1]:.17g}" ixz="{i[0, 2]:.17g}"
               iyy="{i[1, 1]:.17g}" iyz="{i[1, 2]:.17g}" izz="{i[2, 2]:.17g}"/>
    </inertial>
'''


BAR_SIDE = 0.03     # side of the square bar drawn for a link whose section is not known [m]
BAR_OUTLINE = ('rectangle', BAR_SIDE, BAR_SIDE)


def section_outline(link):
    """Return the outline of a link's section: ('circle', r) or ('rectangle', w, h) [m].

    Its kind's (``LinkKind.outline``): a rod's section is its model file's
    (``rod.section``), a beam's its optional drawn section (``beam.section``: its dynamics
    need only rho A and EI); without one, and for a rigid link, a square bar of side
    `BAR_SIDE`.
    """
    shape = kind_of(link).outline(link)
    return shape if shape is not None else BAR_OUTLINE


def _bar(length, outline=BAR_OUTLINE):
    """Visual of a segment of ``length`` along the frame's x axis, of section ``outline``.

    A round section is a cylinder turned from the URDF's z axis onto x (pitch pi/2); a
    rectangle a box of width along y and height along z (`section_outline`).
    """
    if outline[0] == 'circle':
        rpy, shape = (0.0, 0.5 * math.pi, 0.0), f'<cylinder radius="{outline[1]:.17g}" ' \
            f'length="{length:.17g}"/>'
    else:
        rpy, shape = (0.0, 0.0, 0.0), f'<box size="{_vec((length, outline[1], outline[2]))}"/>'
    return f'''    <visual>
      <origin xyz="{_vec((0.5 * length, 0, 0))}" rpy="{_vec(rpy)}"/>
      <geometry>{shape}</geometry>
      <material name="link"><color rgba="0.8 0.45 0.1 1"/></material>
    </visual>
'''


def _links_xml(link):
    """URDF links of one model link: the link frame, its sections, its tip, its attached.

    The link frame shows the link's own ``geometry`` (a URDF's) if it has one, else a bar
    to the next section (none on a link of zero length).
    """
    stations = [0.0] + section_abscissae(link) + [link.length]
    names = [link.name] + [f'{link.name}_s{k + 1}' for k in range(link.frames)]
    outline = section_outline(link)
    parts = []
    for k, frame in enumerate(names):
        inertial = _inertial(link.body, link) if k == 0 else ''
        step = stations[k + 1] - stations[k]
        shape = (link.geometry if k == 0 and link.geometry
                 else _bar(step, outline) if step > 0 else '')
        parts.append(f'  <link name={quoteattr(frame)}>\n{inertial}{shape}  </link>\n')
    parts.append(f'  <link name={quoteattr(link.name + "_tip")}>\n{_inertial(link.payload)}'
                 '  </link>\n')
    parts += [f'  <link name={quoteattr(frame.name)}>\n{frame.geometry}  </link>\n'
              for frame in link.attached]
    return ''.join(parts)


def _joint_xml(frame, joint):
    origin = f'<origin xyz="{_vec(frame.xyz)}" rpy="{_vec(frame.rpy)}"/>'
    extra = ''
    if frame.kind == 'fixed':
        kind = 'fixed'
    elif frame.kind in ('section', 'base'):
        kind = 'floating'
    else:
        bounded = math.isfinite(joint.lower) and math.isfinite(joint.upper)
        kind = joint.type if bounded or joint.type == 'prismatic' else 'continuous'
        limits = f' lower="{joint.lower:.17g}" upper="{joint.upper:.17g}"' if bounded else ''
        extra = (f'\n    <axis xyz="{_vec(joint.axis)}"/>\n    <limit '
                 f'effort="{joint.effort_limit:.17g}" velocity="{joint.velocity_limit:.17g}"'
                 f'{limits}/>\n    <dynamics damping="{joint.damping:.17g}" '
                 f'friction="{joint.friction:.17g}"/>')
    return f'''  <joint name={quoteattr(frame.joint)} type="{kind}">
    <parent link={quoteattr(frame.parent)}/>
    <child link={quoteattr(frame.child)}/>
    {origin}{extra}
  </joint>
'''


def urdf(model, world_frame='world'):
    """Return the URDF of ``model`` as a string (root link: ``world_frame``)."""
    parts = [f'<?xml version="1.0"?>\n<robot name={quoteattr(model.name)}>\n',
             '' if is_world(model, world_frame) else f'  <link name={quoteattr(world_frame)}/>\n',
             f'''  <link name={quoteattr(model.base_frame)}>
{_inertial(model.floating_base) if model.floating_base is not None else ''}    <visual>
      <geometry><cylinder radius="0.05" length="0.08"/></geometry>
      <material name="base"><color rgba="0.3 0.3 0.3 1"/></material>
    </visual>
  </link>
''']
    parts += [_links_xml(link) for link in model.links]
    if tool_frame_added(model.links, model.tool_frame):
        parts.append(f'  <link name={quoteattr(model.tool_frame)}/>\n')
    joints = {link.joint.name: link.joint for link in model.links}
    parts += [_joint_xml(frame, joints.get(frame.joint))
              for frame in joint_frames(model, world_frame)]
    parts.append('</robot>\n')
    return ''.join(parts)
