"""A browser view of the running graph, drawn with viser (ROS-free: `nodes.view_node` feeds it).

viser serves a three.js page and pushes scene updates over a websocket; this module only
says what to draw, from what the graph publishes:

* the arm: its TF frames (joints, the section frames along each deformed link, the tips
  and the tool frame) joined in chain order, a thick line in the world frame;
* the tip trace: the last `TRACE_POINTS` positions of the last frame of the chain;
* the program path: the points of the controller's reference rows named ``<p>_x``,
  ``<p>_y`` (and ``<p>_z``), in the base frame of the arm;
* a servo plant's markers (visualization_msgs): line strips (the contact path), arrows,
  spheres and cubes (its body), in their frames.

`FrameTree` keeps the latest transform of each frame; `ArmView` turns it into the scene.
"""

import numpy as np
from transforms3d.quaternions import mat2quat, quat2mat
import viser

TRACE_POINTS = 2000
ARM_COLOR = (200, 0, 200)        # the deformed links (a colour the page uses nowhere else)
TRACE_COLOR = (30, 90, 220)      # the tip's trace
PATH_COLOR = (40, 160, 60)       # the program path


class FrameTree:
    """The latest transform of each TF frame, and world poses composed from them."""

    def __init__(self):
        """Start empty."""
        self.parent = {}        # child frame -> parent frame
        self.matrix = {}        # child frame -> parent_T_child (4 x 4)
        self.moving = set()     # frames that came on /tf (not /tf_static)

    def set(self, child, parent, matrix, moving):
        """Store ``parent_T_child`` (4 x 4)."""
        self.parent[child], self.matrix[child] = parent, matrix
        if moving:
            self.moving.add(child)

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


def polyline(points):
    """Return the segments (n-1 x 2 x 3) joining consecutive ``points`` (n x 3)."""
    points = np.asarray(points, dtype=float)
    return np.stack([points[:-1], points[1:]], axis=1)


class ArmView:
    """The viser scene of the graph (module doc); call `draw` to push an update."""

    def __init__(self, host='127.0.0.1', port=8080, camera=(0.3, -0.9, 0.9)):
        """Start the viser server on ``host:port`` (loopback by default).

        ``camera``: where pages opened from now on look from, relative to the arm's base
        (they look at 0.3 m along its x axis) [m].
        """
        self.server = viser.ViserServer(host=host, port=port, verbose=False)
        self.server.gui.configure_theme(control_layout='collapsible', show_logo=False,
                                        show_share_button=False)
        self.camera = np.asarray(camera, dtype=float)
        self.aimed = False
        self.server.scene.add_grid('/grid', width=2.0, height=2.0, cell_size=0.1,
                                   section_size=0.5)
        self.frames = FrameTree()
        self.trace = []                 # tip positions (world)
        self.path = []                  # program path points (world)
        self.markers = {}               # (ns, id) -> marker record (see `set_marker`)
        self._handles = {}              # (ns, id) -> the marker's scene handle

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

    def draw(self):
        """Push the arm, the tip trace, the program path and the markers to the page."""
        scene = self.server.scene
        chain = self.frames.arm_chain()
        if chain:
            base = [self.frames.pose(self.frames.parent[chain[0]])[:3, 3]]
            if not self.aimed:
                self.aim(base[0])
            points = np.array(base + [self.frames.pose(f)[:3, 3] for f in chain])
            scene.add_line_segments('/arm', polyline(points), ARM_COLOR, thickness=0.02)
            self.trace.append(points[-1])
            del self.trace[:-TRACE_POINTS]
            if len(self.trace) > 1:
                scene.add_line_segments('/tip_trace', polyline(self.trace), TRACE_COLOR,
                                        thickness=0.004)
        if len(self.path) > 1:
            scene.add_line_segments('/program_path', polyline(self.path), PATH_COLOR,
                                    thickness=0.004)
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

    def aim(self, base):
        """Point the camera of pages opened from now on at the arm whose base is ``base``."""
        camera = self.server.initial_camera
        camera.look_at = base + (0.3, 0.0, 0.0)
        camera.position = base + self.camera
        self.aimed = True

    def stop(self):
        """Stop the server."""
        self.server.stop()
