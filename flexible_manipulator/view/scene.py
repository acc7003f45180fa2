"""A browser view of the running graph, drawn with viser (ROS-free: `nodes.view_node` feeds it).

viser serves a three.js page and pushes scene updates over a websocket; this module only
says what to draw, from what the graph publishes:

* the arm as it is, once the robot description is known (`description`): each link a
  tube of its section along its deformed centre line through its TF section frames
  (`geometry`), each interval coloured by its curvature (the legend in the panel), the
  joints as cylinders on their axes, the payloads (spheres of their mass at water's
  density), the base (its cylinder, where its frame is: a floating base moves), the
  world and tool frames (toggled in the panel);
* without a description (or before it comes, or while a link's frames are missing): its
  TF frames joined in chain order, a thick line in the world frame;
* the tip trace: the last `TRACE_POINTS` positions of the last frame of the chain;
* the program path: the points of the controller's reference rows named ``<p>_x``,
  ``<p>_y`` (and ``<p>_z``), in the base frame of the arm, and the current target (a
  green sphere at its last point);
* a servo plant's markers (visualization_msgs): line strips (the contact path), arrows,
  spheres and cubes (its body), in their frames.

`FrameTree` keeps the latest transform of each frame; `ArmView` turns it into the scene.
"""

import logging
import math

import numpy as np
from transforms3d.quaternions import quat2mat
import viser

from . import geometry
from .geometry import mat2quat

TRACE_POINTS = 1000
TRACE_EVERY = 5                  # draws between re-sent traces (long lines: heavy)
AIM_PATIENCE = 40                # draws waiting for the description (aim, trace) [-]
ARM_COLOR = (200, 0, 200)        # the deformed links (a colour the page uses nowhere else)
TRACE_COLOR = (30, 90, 220)      # the tip's trace
PATH_COLOR = (40, 160, 60)       # the program path
JOINT_COLOR = (70, 70, 80)       # joint cylinders and the base
PAYLOAD_COLOR = (200, 170, 40)   # payload spheres (green well above 0.6 red: not the arm's)
WATER = 1000.0                   # density drawing a payload's mass as a sphere [kg/m^3]
CURVATURE_FLOOR = 0.2            # smallest top of the tubes' colour scale [1/m]
FOV = math.radians(60.0)         # the camera's vertical field of view [rad]
ASPECT = 0.75                    # narrowest canvas framed (width over height) [-]
MARGIN = 1.15                    # room about the arm's sphere in the view [-]
SKY_LIGHT = 1.5                  # hemisphere light (white above, grey below) [-]
AMBIENT_LIGHT = 0.8              # ambient light [-]


class _Preconnects(logging.Filter):
    """Drop the websockets server's report of a connection closed before its request.

    Browsers open spare connections ahead (Chromium's preconnect) and close them unused:
    the server logs each as a failed handshake with a traceback, for nothing wrong.
    """

    def filter(self, record):
        return record.getMessage() != 'opening handshake failed'


logging.getLogger('websockets.server').addFilter(_Preconnects())


def joint_rotation(axis):
    """Return a rotation (3 x 3) taking z onto the unit vector ``axis`` (a cylinder's)."""
    axis = np.asarray(axis, float)
    z = np.array([0.0, 0.0, 1.0])
    cross, dot = np.cross(z, axis), float(z @ axis)
    if np.linalg.norm(cross) < 1e-12:
        return np.eye(3) if dot > 0 else np.diag([1.0, -1.0, -1.0])
    k = np.array([[0, -cross[2], cross[1]], [cross[2], 0, -cross[0]],
                  [-cross[1], cross[0], 0]])
    return np.eye(3) + k + k @ k / (1.0 + dot)


class FrameTree:
    """The latest transform of each TF frame, and world poses composed from them."""

    def __init__(self):
        """Start empty."""
        self.parent = {}        # child frame -> parent frame
        self.matrix = {}        # child frame -> parent_T_child (4 x 4)
        self.moving = set()     # frames that came on /tf (not /tf_static)

    def set(self, child, parent, matrix, moving):
        """Store ``parent_T_child`` (4 x 4).

        ValueError (the last good one kept) if it is not finite, its rotation is not one
        (a malformed message) or it closes a loop.
        """
        matrix = np.asarray(matrix, dtype=float)
        if not np.all(np.isfinite(matrix)):
            raise ValueError(f'transform of {child!r}: not finite')
        if abs(np.linalg.det(matrix[:3, :3]) - 1.0) > 1e-3:
            raise ValueError(f'transform of {child!r}: its quaternion is not a unit one')
        if child == parent or self._ancestor(parent, child):
            raise ValueError(f'transform of {child!r} in {parent!r}: a loop in the tree')
        self.parent[child], self.matrix[child] = parent, matrix
        if moving:
            self.moving.add(child)

    def _ancestor(self, frame, of):
        """Tell whether ``of`` is ``frame`` or one of its ancestors."""
        while True:
            if frame == of:
                return True
            if frame not in self.parent:
                return False
            frame = self.parent[frame]

    def root(self, frame):
        """Return the frame at the top of ``frame``'s ancestors (``frame`` if it has none)."""
        while frame in self.parent:
            frame = self.parent[frame]
        return frame

    def depth(self, frame):
        """Return the number of ancestors of ``frame``."""
        count = 0
        while frame in self.parent:
            frame = self.parent[frame]
            count += 1
        return count

    def pose(self, frame):
        """Return root_T_frame (4 x 4) through the stored transforms."""
        transform = np.eye(4)
        while frame in self.parent:
            transform = self.matrix[frame] @ transform
            frame = self.parent[frame]
        return transform

    def arm_chain(self):
        """Return the moving frames and their static children, in chain order."""
        frames = set(self.moving) | {c for c, p in self.parent.items() if p in self.moving}
        return sorted(frames, key=self.depth)


def pose_matrix(position, wxyz):
    """Return the 4 x 4 transform of a position and a unit quaternion (w, x, y, z)."""
    matrix = np.eye(4)
    matrix[:3, :3] = quat2mat(wxyz)
    matrix[:3, 3] = position
    return matrix


def framing(points, direction, fov=FOV, aspect=ASPECT, margin=MARGIN, pad=0.0):
    """Return (position, look_at) of a camera seeing all ``points`` (n x 3) [m].

    It looks at the middle of their box along the unit vector of ``direction`` (from the
    point looked at to the camera), from the distance at which the sphere about that
    middle through the farthest point, grown by ``pad`` [m] and times ``margin``, fits in
    the narrower of the vertical field of view ``fov`` [rad] and the horizontal one of a
    canvas of width over height ``aspect``.
    """
    points = np.asarray(points, dtype=float).reshape(-1, 3)
    middle = 0.5 * (points.min(axis=0) + points.max(axis=0))
    radius = margin * (float(np.max(np.linalg.norm(points - middle, axis=1))) + pad)
    radius = max(radius, 0.05)
    half = min(fov / 2.0, math.atan(math.tan(fov / 2.0) * min(aspect, 1.0)))
    direction = np.asarray(direction, dtype=float)
    return middle + radius / math.sin(half) * direction / np.linalg.norm(direction), middle


def polyline(points):
    """Return the segments (n-1 x 2 x 3) joining consecutive ``points`` (n x 3)."""
    points = np.asarray(points, dtype=float)
    return np.stack([points[:-1], points[1:]], axis=1)


class ArmView:
    """The viser scene of the graph (module doc); call `draw` to push an update."""

    def __init__(self, host='127.0.0.1', port=8080, camera=(0.3, -1.4, 0.5)):
        """Start the viser server on ``host:port`` (loopback by default).

        ``camera``: where pages opened from now on look from, relative to the point they
        look at (the middle of the arm and its base when first drawn), in units of the
        arm's reach (the length of its links; 1 m until its description is known); only
        its direction counts once the arm is known (`aim`).
        """
        self.server = viser.ViserServer(host=host, port=port, verbose=False)
        self.server.gui.configure_theme(control_layout='fixed', control_width='large',
                                        show_logo=False, show_share_button=False)
        scene = self.server.scene
        scene.configure_environment_map(None)        # no fade-in from 5 % (module doc)
        scene.add_light_hemisphere('/lights/sky', sky_color=(255, 255, 255),
                                   ground_color=(120, 120, 130), intensity=SKY_LIGHT)
        scene.add_light_ambient('/lights/ambient', intensity=AMBIENT_LIGHT)
        self.camera = np.asarray(camera, dtype=float)
        initial = self.server.initial_camera
        initial.fov = FOV
        initial.look_at = np.zeros(3)
        initial.position = self.camera       # until the arm is known: 1 m about the origin
        self.aimed = False
        self.server.scene.add_grid('/grid', width=2.0, height=2.0, cell_size=0.1,
                                   section_size=0.5)
        self.frames = FrameTree()
        self.description = None         # `description.Description` of the robot, if known
        self.trace = []                 # tip positions (world)
        self.path = []                  # program path points (world)
        self.markers = {}               # (ns, id) -> marker record (see `set_marker`)
        self._handles = {}              # (ns, id) -> the marker's scene handle
        self._drawn = set()             # names of the arm's scene nodes now shown
        self._nodes = {}                # name -> handle of the nodes made once (`node`)
        self.draws = 0
        self.curvature_top = CURVATURE_FLOOR     # top of the colour scale [1/m]
        self.deflections = {}           # link -> largest elastic deflection [m] (`draw`)
        self.show = {'world': False, 'tool': True, 'trace': True}

    @property
    def url(self):
        """Return the page's address."""
        return f'http://{self.server.get_host()}:{self.server.get_port()}'

    def add_reference(self, point, base_frame):
        """Add a program-path point given in ``base_frame`` (3)."""
        world = self.frames.pose(base_frame) @ np.append(point, 1.0)
        self.path.append(world[:3])
        del self.path[:-TRACE_POINTS]

    def set_marker(self, key, kind, frame, matrix, scale, color, points):
        """Store a marker: ``kind`` 'line', 'arrow', 'sphere' or 'cube' (see module doc).

        ``matrix``: frame_T_marker (4 x 4); ``scale`` (3); ``color`` RGB 0-255; ``points``
        (n x 3, in the marker's pose). A ``kind`` of None deletes it.
        """
        if kind is None:
            self.markers.pop(key, None)
            handle = self._handles.pop(key, None)
            if handle is not None:
                handle.remove()
            return
        self.markers[key] = (kind, frame, matrix, np.asarray(scale, float), color,
                             np.asarray(points, float).reshape(-1, 3))

    def link_poses(self):
        """Return {link: (world poses of its section frames, outline)}.

        Only the links whose frames are all known and hang from the description's root
        (not before /tf_static placed the base in the world); {} without a description.
        """
        if self.description is None:
            return {}
        found, root = {}, self.description.root
        for link, (stations, outline) in self.description.links.items():
            if all(frame in self.frames.parent for frame in stations) and (
                    root is None or self.frames.root(stations[0]) == root):
                found[link] = ([self.frames.pose(frame) for frame in stations], outline)
        return found

    def node(self, name, make, position=None, wxyz=None, **props):
        """Return the scene node ``name``: made by ``make()`` the first time, else updated.

        A node is made once and then only its changed ``props`` and its pose are sent: a
        node made again with a pose showed at the origin on a page opened meanwhile.
        """
        handle = self._nodes.get(name)
        if handle is None:
            handle = self._nodes[name] = make()
        else:
            for key, value in props.items():
                setattr(handle, key, value)
        if position is not None:
            handle.position = np.asarray(position, dtype=float)
        if wxyz is not None:
            handle.wxyz = np.asarray(wxyz, dtype=float)
        return handle

    def draw(self):
        """Push the arm, the tip trace, the program path and the markers to the page."""
        scene = self.server.scene
        chain = self.frames.arm_chain()
        shown = set()
        self.draws += 1
        slow = self.draws % TRACE_EVERY == 0        # the long lines, every few draws
        if chain:
            base = [self.frames.pose(self.frames.parent[chain[0]])[:3, 3]]
            links = self.link_poses()
            if links and len(links) < len(self.description.links):
                links = {}                      # not all frames yet: the line meanwhile
            if not self.aimed:
                self.aim(base[0], links)
            if links:
                shown |= self.draw_arm(links)
            else:
                points = np.array(base + [self.frames.pose(f)[:3, 3] for f in chain])
                scene.add_line_segments('/arm_line', polyline(points), ARM_COLOR,
                                        thickness=0.02)
                shown.add('/arm_line')
            # Not while the arm's frames are incomplete (a point off its base's mount);
            # without a description (a servo plant) once it had time to come.
            if links or (self.description is None and self.draws > AIM_PATIENCE):
                self.trace.append(self.frames.pose(self.tip_frame(chain))[:3, 3])
                del self.trace[:-TRACE_POINTS]
            if len(self.trace) > 1 and self.show['trace']:
                if slow or '/tip_trace' not in self._drawn:
                    scene.add_line_segments('/tip_trace', polyline(self.trace), TRACE_COLOR,
                                            thickness=0.004)
                shown.add('/tip_trace')
        if len(self.path) > 1:
            if slow or '/program_path' not in self._drawn:
                scene.add_line_segments('/program_path', polyline(self.path), PATH_COLOR,
                                        thickness=0.004)
            self.node('/program_target', lambda: scene.add_icosphere(
                '/program_target', radius=0.012, color=PATH_COLOR), position=self.path[-1])
            shown |= {'/program_path', '/program_target'}
        if self.show['world']:
            self.node('/world_frame', lambda: scene.add_frame(
                '/world_frame', axes_length=0.2, axes_radius=0.004))
            shown.add('/world_frame')
        for name in self._drawn - shown:        # links gone, a toggle off: remove
            handle = self._nodes.pop(name, None)
            if handle is not None:
                handle.remove()
            else:
                scene.remove_by_name(name)
        self._drawn = shown
        self.draw_markers()

    def tip_frame(self, chain):
        """Return the frame whose trace is drawn: the tool frame if known, else the last."""
        tool = self.description and self.description.tool
        return tool if tool in self.frames.parent else chain[-1]

    def draw_arm(self, links):
        """Draw the tubes, joints, payloads, base and tool frame; return the nodes' names."""
        scene, description = self.server.scene, self.description
        shown = set()
        self.deflections = {}
        for link, (poses, outline) in links.items():
            kappa = geometry.curvatures(poses)
            if len(poses) > 2:                  # section frames between: it may bend
                self.deflections[link] = geometry.deflection(poses)
            self.curvature_top = max(self.curvature_top, float(np.max(kappa, initial=0.0)))
            # One instanced mesh per link, its pieces moved and recoloured in place: a
            # mesh made anew each draw lagged seconds behind on a loaded page.
            dense = geometry.densify(poses)
            positions, wxyzs, scales = geometry.pieces(dense, outline)
            colors = np.repeat([geometry.color_of(k, self.curvature_top) for k in kappa],
                               geometry.PIECES, axis=0).astype(np.uint8)
            name = f'/arm/{link}'
            if name in self._nodes and len(self._nodes[name].batched_positions) != len(
                    positions):
                self._nodes.pop(name).remove()      # another number of sections
            unit = geometry.unit_piece(outline[0])
            self.node(name, lambda: scene.add_batched_meshes_simple(
                name, *unit, batched_wxyzs=wxyzs, batched_positions=positions,
                batched_scales=scales, batched_colors=colors, lod='off',
                flat_shading=outline[0] == 'rectangle'),
                batched_wxyzs=wxyzs.astype(np.float32),
                batched_positions=positions.astype(np.float32),
                batched_scales=scales.astype(np.float32), batched_colors=colors)
            shown.add(name)
        widest = {link: max(outline[1:]) for link, (_, outline) in links.items()}
        for joint in description.joints:
            if joint.child not in self.frames.parent:
                continue
            pose = self.frames.pose(joint.child)
            size = widest.get(joint.child, max(widest.values()))
            name = f'/joints/{joint.name}'
            self.node(name, lambda: scene.add_cylinder(
                name, radius=0.9 * size, height=2.6 * size, color=JOINT_COLOR),
                position=pose[:3, 3], wxyz=mat2quat(pose[:3, :3] @ joint_rotation(joint.axis)))
            shown.add(name)
        for frame, mass in description.payloads.items():
            if frame in self.frames.parent:
                radius = (3.0 * mass / (4.0 * math.pi * WATER)) ** (1.0 / 3.0)
                name = f'/payloads/{frame}'
                self.node(name, lambda: scene.add_icosphere(name, radius=radius,
                                                            color=PAYLOAD_COLOR),
                          position=self.frames.pose(frame)[:3, 3])
                shown.add(name)
        if description.base is not None and description.base[0] in self.frames.parent:
            frame, radius, length = description.base
            pose = self.frames.pose(frame)
            self.node('/base', lambda: scene.add_cylinder('/base', radius=radius,
                                                          height=length, color=JOINT_COLOR),
                      position=pose[:3, 3], wxyz=mat2quat(pose[:3, :3]))
            shown.add('/base')
        if self.show['tool'] and description.tool in self.frames.parent:
            pose = self.frames.pose(description.tool)
            self.node('/tool_frame', lambda: scene.add_frame(
                '/tool_frame', axes_length=0.08, axes_radius=0.003),
                position=pose[:3, 3], wxyz=mat2quat(pose[:3, :3]))
            shown.add('/tool_frame')
        return shown

    def legend(self):
        """Return the HTML legend of the tubes' colours (`geometry.legend_html`)."""
        return geometry.legend_html(self.curvature_top)

    def draw_markers(self):
        """Push the servo plant's markers (module doc)."""
        scene = self.server.scene
        for key, (kind, frame, matrix, scale, color, points) in self.markers.items():
            pose = self.frames.pose(frame) @ matrix
            name = f'/markers/{key[0]}_{key[1]}'
            if kind in ('line', 'arrow') and len(points) > 1:
                world = (pose[:3, :3] @ points.T).T + pose[:3, 3]
                width = max(scale[0], 0.002) * (1.0 if kind == 'line' else 0.5)
                self._handles[key] = scene.add_line_segments(name, polyline(world), color,
                                                             thickness=width)
            elif kind == 'sphere':
                self._handles[key] = scene.add_icosphere(
                    name, radius=0.5, color=color, scale=tuple(scale),
                    wxyz=mat2quat(pose[:3, :3]), position=pose[:3, 3])
            elif kind == 'cube':
                self._handles[key] = scene.add_box(name, color=color, dimensions=tuple(scale),
                                                   wxyz=mat2quat(pose[:3, :3]),
                                                   position=pose[:3, 3])

    def aim(self, base, links):
        """Point the camera at the arm whose base is ``base``: `framing` of its frames.

        With the links' section poses (`link_poses`) the camera frames the base and the
        sections' origins (and the tubes' and joints' girth) from `camera`'s direction: the
        initial camera of pages opened from now on, and the camera of those open (once,
        when the arm is first drawn: later the user's own view is left alone). Without
        them (the frames incomplete), the line of frames meanwhile.
        """
        points = [base] + [pose[:3, 3] for poses, _ in links.values() for pose in poses]
        if len(points) < 2:
            points = [base] + [self.frames.pose(f)[:3, 3] for f in self.frames.arm_chain()]
        pad = max((2.6 * max(outline[1:]) for _, outline in links.values()), default=0.0)
        position, middle = framing(points, self.camera, pad=pad)
        camera = self.server.initial_camera
        camera.look_at = middle
        camera.position = position
        self.aimed = bool(links) or self.draws > AIM_PATIENCE
        if self.aimed:
            for client in self.server.get_clients().values():
                if client.camera.update_timestamp == 0.0:
                    continue            # its camera not reported yet: the initial one
                with client.atomic():   # position first: it moves the point looked at
                    client.camera.position = position
                    client.camera.look_at = middle

    def stop(self):
        """Stop the server."""
        self.server.stop()
