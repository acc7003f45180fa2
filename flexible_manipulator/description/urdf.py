"""Robot description (URDF) and TF frame structure of a planar chain model.

Frames, as robot_state_publisher would publish them from this URDF:

    world --(fixed: base pose)--> base_link --(joint 1, rot z q_1)--> link 1
      --(joint 2: x = l_1, rot z q_2)--> link 2 ... link n --(fixed: x = l_n)--> tool

Fixed joints go to /tf_static, revolute joints to /tf.
"""

from dataclasses import dataclass
import math
from xml.sax.saxutils import quoteattr


@dataclass(frozen=True)
class JointFrame:
    """A parent-to-child transform: fixed offset ``xyz``/``rpy``, then rotation about z."""

    joint: str
    parent: str
    child: str
    xyz: tuple
    rpy: tuple
    moving: bool


def joint_frames(model, world_frame='world'):
    """List the model's transforms from the world to the tool, in tree order."""
    frames = [JointFrame(f'{model.base_frame}_mount', world_frame, model.base_frame,
                         tuple(model.base_xyz), tuple(model.base_rpy), False)]
    parent, offset = model.base_frame, 0.0
    for link in model.links:
        frames.append(JointFrame(link.joint, parent, link.name, (offset, 0.0, 0.0),
                                 (0.0, 0.0, 0.0), True))
        parent, offset = link.name, link.length
    frames.append(JointFrame(f'{model.tool_frame}_mount', parent, model.tool_frame,
                             (offset, 0.0, 0.0), (0.0, 0.0, 0.0), False))
    return frames


def _vec(values):
    return ' '.join(f'{float(v):.17g}' for v in values)


def _link_xml(link):
    # A slender bar along x: the in-plane inertia (izz, and iyy for the bar) comes from the
    # model; ixx about the bar's own axis is taken as negligible but positive.
    half = 0.5 * link.length
    izz = link.inertia
    return f'''  <link name={quoteattr(link.name)}>
    <inertial>
      <origin xyz="{_vec((link.com, 0, 0))}" rpy="0 0 0"/>
      <mass value="{link.mass:.17g}"/>
      <inertia ixx="{1e-6 * link.mass:.17g}" ixy="0" ixz="0" iyy="{izz:.17g}" iyz="0"
               izz="{izz:.17g}"/>
    </inertial>
    <visual>
      <origin xyz="{_vec((half, 0, 0))}" rpy="0 0 0"/>
      <geometry><box size="{_vec((link.length, 0.04, 0.04))}"/></geometry>
      <material name="link"><color rgba="0.8 0.45 0.1 1"/></material>
    </visual>
  </link>
'''


def urdf(model, world_frame='world'):
    """Return the URDF of ``model`` as a string (root link: ``world_frame``)."""
    parts = [f'<?xml version="1.0"?>\n<robot name={quoteattr(model.name)}>\n',
             f'  <link name={quoteattr(world_frame)}/>\n',
             f'''  <link name={quoteattr(model.base_frame)}>
    <visual>
      <geometry><cylinder radius="0.05" length="0.08"/></geometry>
      <material name="base"><color rgba="0.3 0.3 0.3 1"/></material>
    </visual>
  </link>
''']
    parts += [_link_xml(link) for link in model.links]
    parts.append(f'  <link name={quoteattr(model.tool_frame)}/>\n')
    links = {link.joint: link for link in model.links}
    for frame in joint_frames(model, world_frame):
        origin = f'<origin xyz="{_vec(frame.xyz)}" rpy="{_vec(frame.rpy)}"/>'
        if not frame.moving:
            kind, extra = 'fixed', ''
        else:
            link = links[frame.joint]
            bounded = math.isfinite(link.lower) and math.isfinite(link.upper)
            kind = 'revolute' if bounded else 'continuous'
            limits = f' lower="{link.lower:.17g}" upper="{link.upper:.17g}"' if bounded else ''
            extra = (f'\n    <axis xyz="0 0 1"/>\n    <limit effort="{link.effort_limit:.17g}" '
                     f'velocity="{link.velocity_limit:.17g}"{limits}/>\n'
                     f'    <dynamics damping="{link.damping:.17g}"/>')
        parts.append(f'''  <joint name={quoteattr(frame.joint)} type="{kind}">
    <parent link={quoteattr(frame.parent)}/>
    <child link={quoteattr(frame.child)}/>
    {origin}{extra}
  </joint>
''')
    parts.append('</robot>\n')
    return ''.join(parts)
