"""Shapes of the deformed arm from its section frames (ROS-free; drawn by `view.scene`).

A link's centre line is known at its section frames (the link frame, ``<link>_s1`` ..
``<link>_sF``, ``<link>_tip``; `description.urdf`): their origins lie on it and their x
axes are its tangents (a rod's section normal; with shear the section is drawn as it is
turned). Between two frames the line is a cubic Hermite curve through both origins with
those tangents (scaled by the chord), the sections turned by the rotation between them
(slerp): a smooth tube from few frames, as the plant publishes them. Curvature is the
angle between two neighbouring frames over the chord between them [1/m].
"""

import functools

import numpy as np
from transforms3d.quaternions import quat2mat

RING = 20               # points round a round section
PIECES = 4              # Hermite pieces between two section frames
# Colour map of the tubes, by curvature: magenta (straight) -> crimson -> orange (the
# scale's top). Every colour has red well above green (the page's grid, text and trace
# are grey, black and blue; the program path green): pixels of the arm are told apart.
COLOR_STOPS = np.array([(200, 0, 200), (220, 20, 60), (255, 140, 0)], dtype=float)


def mat2quat(rotation):
    """Return the unit quaternion (w, x, y, z) of a rotation matrix, w >= 0 (Shepperd).

    transforms3d's takes an eigendecomposition (it fits any matrix); a draw converts a
    hundred rotations, which are rotations: the closed form is forty times faster.
    """
    m = rotation
    trace = m[0, 0] + m[1, 1] + m[2, 2]
    if trace > 0.0:
        s = 2.0 * np.sqrt(trace + 1.0)
        q = (0.25 * s, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s)
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = 2.0 * np.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2])
        q = ((m[2, 1] - m[1, 2]) / s, 0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s)
    elif m[1, 1] > m[2, 2]:
        s = 2.0 * np.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2])
        q = ((m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s)
    else:
        s = 2.0 * np.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1])
        q = ((m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s)
    q = np.array(q)
    q /= np.linalg.norm(q)
    return -q if q[0] < 0.0 else q


def slerp(q0, q1, s):
    """Return the unit quaternion (w, x, y, z) a fraction ``s`` of the way from q0 to q1."""
    q0, q1 = np.asarray(q0, float), np.asarray(q1, float)
    dot = q0 @ q1
    if dot < 0.0:                   # the shorter way round
        q1, dot = -q1, -dot
    if dot > 0.9995:                # nearly equal: linear, renormalized
        q = q0 + s * (q1 - q0)
        return q / np.linalg.norm(q)
    angle = np.arccos(dot)
    return (np.sin((1 - s) * angle) * q0 + np.sin(s * angle) * q1) / np.sin(angle)


def densify(poses, pieces=PIECES):
    """Return poses (4 x 4) along the centre line through ``poses``, ``pieces`` per interval.

    Positions: cubic Hermite through consecutive origins, tangents the frames' x axes
    times the chord; orientations: slerp. The given poses are kept (every ``pieces``-th).
    """
    poses = [np.asarray(p, float) for p in poses]
    out = [poses[0]]
    for a, b in zip(poses[:-1], poses[1:]):
        p0, p1 = a[:3, 3], b[:3, 3]
        chord = np.linalg.norm(p1 - p0)
        m0, m1 = a[:3, 0] * chord, b[:3, 0] * chord
        q0, q1 = mat2quat(a[:3, :3]), mat2quat(b[:3, :3])
        for k in range(1, pieces + 1):
            s = k / pieces
            h = (2 * s ** 3 - 3 * s ** 2 + 1, s ** 3 - 2 * s ** 2 + s, -2 * s ** 3 + 3 * s ** 2,
                 s ** 3 - s ** 2)
            pose = np.eye(4)
            pose[:3, 3] = h[0] * p0 + h[1] * m0 + h[2] * p1 + h[3] * m1
            pose[:3, :3] = quat2mat(slerp(q0, q1, s))
            out.append(pose)
    return out


def outline_points(outline, ring=RING):
    """Return the section's outline as (n x 2) points (y, z) [m], counter-clockwise.

    ``outline``: ('circle', r) or ('rectangle', width, height) (`description.urdf`).
    """
    if outline[0] == 'circle':
        angle = np.linspace(0.0, 2 * np.pi, ring, endpoint=False)
        return outline[1] * np.stack([np.cos(angle), np.sin(angle)], axis=1)
    w, h = 0.5 * outline[1], 0.5 * outline[2]
    return np.array([(w, -h), (w, h), (-w, h), (-w, -h)])


def tube_mesh(poses, outline):
    """Return (vertices (V x 3), faces (F x 3)) of a closed tube of section ``outline``.

    ``poses``: the sections' poses (4 x 4), in order; each section lies in its frame's
    y-z plane. The two ends are closed by fans round their centres.
    """
    ring = outline_points(outline)
    n, count = len(ring), len(poses)
    local = np.zeros((n, 3))
    local[:, 1:] = ring
    vertices = [pose[:3, :3] @ local.T + pose[:3, 3:4] for pose in poses]
    vertices = np.concatenate([v.T for v in vertices] +
                              [poses[0][:3, 3][None], poses[-1][:3, 3][None]])
    return vertices, tube_faces(count, n)


@functools.lru_cache(maxsize=64)
def tube_faces(count, n):
    """Return the faces (F x 3) of a tube of ``count`` rings of ``n`` points, ends closed.

    Vertex ``i n + j`` is point j of ring i; the two last vertices are the ends' centres.
    Made once per shape (a draw reuses them; only the vertices move).
    """
    i, j = np.meshgrid(np.arange(count - 1), np.arange(n), indexing='ij')
    a, b = i * n + j, i * n + (j + 1) % n
    sides = np.stack([np.stack([a, b + n, b], -1), np.stack([a, a + n, b + n], -1)],
                     axis=2).reshape(-1, 3)
    j = np.arange(n)
    first, last = count * n, count * n + 1
    caps = np.concatenate([np.stack([np.full(n, first), (j + 1) % n, j], -1),
                           np.stack([np.full(n, last), (count - 1) * n + j,
                                     (count - 1) * n + (j + 1) % n], -1)])
    faces = np.concatenate([sides, caps]).astype(np.uint32)
    faces.flags.writeable = False       # shared between calls
    return faces


def unit_piece(kind):
    """Return (vertices, faces) of a unit piece of a tube, which `pieces` scales.

    x runs from -0.5 to 0.5; the section has radius 1 ('circle') or sides 1 x 1
    ('rectangle').
    """
    ends = [translation_x(-0.5), translation_x(0.5)]
    vertices, faces = tube_mesh(ends, ('circle', 1.0) if kind == 'circle'
                                else ('rectangle', 1.0, 1.0))
    return vertices.astype(np.float32), faces


def translation_x(x):
    """Return the pose (4 x 4) at x along the x axis."""
    pose = np.eye(4)
    pose[0, 3] = x
    return pose


def pieces(poses, outline):
    """Return the straight pieces of a tube through ``poses``, one per consecutive pair.

    Returns (positions (n x 3) [m], wxyz (n x 4), scales (n x 3) [m]) of `unit_piece`
    instances. Each piece runs along its chord, its section turned as the two sections on
    average, scaled to the section's size;
    it is lengthened by the section's half-size times the bend over it, which closes the
    gap a bend opens between straight pieces.
    """
    size = (outline[1], outline[1]) if outline[0] == 'circle' else (outline[1], outline[2])
    poses = np.asarray(poses, dtype=float)
    a, b = poses[:-1], poses[1:]
    chord = b[:, :3, 3] - a[:, :3, 3]
    length = np.linalg.norm(chord, axis=1)
    x = np.where(length[:, None] > 1e-12, chord / np.maximum(length, 1e-300)[:, None],
                 a[:, :3, 0])
    # The two sections' average: their y axes summed (the bisector when one turns into
    # the other about one axis), made square to the chord.
    y = a[:, :3, 1] + b[:, :3, 1]
    y -= np.sum(y * x, axis=1)[:, None] * x
    y /= np.linalg.norm(y, axis=1)[:, None]
    rotations = np.stack([x, y, np.cross(x, y)], axis=2)
    bend = np.arccos(np.clip(0.5 * (np.einsum('kij,kij->k', a[:, :3, :3], b[:, :3, :3]) - 1),
                             -1.0, 1.0))
    scales = np.stack([length + 0.5 * max(size) * bend, np.full(len(length), size[0]),
                       np.full(len(length), size[1])], axis=1)
    wxyzs = np.array([mat2quat(rotation) for rotation in rotations])
    return 0.5 * (a[:, :3, 3] + b[:, :3, 3]), wxyzs, scales


def rotation_angle(a, b):
    """Return the angle [rad] of the rotation between the frames of poses a and b."""
    relative = a[:3, :3].T @ b[:3, :3]
    return float(np.arccos(np.clip(0.5 * (np.trace(relative) - 1.0), -1.0, 1.0)))


def curvatures(poses):
    """Return the curvature [1/m] of each interval between consecutive ``poses``.

    The angle between the two frames over the chord between their origins; 0 on an
    interval of zero length.
    """
    values = []
    for a, b in zip(poses[:-1], poses[1:]):
        chord = np.linalg.norm(b[:3, 3] - a[:3, 3])
        values.append(rotation_angle(a, b) / chord if chord > 1e-12 else 0.0)
    return np.array(values)


def deflection(poses):
    """Return the largest distance [m] of the section origins from the undeformed axis.

    The axis is the line through the first pose (the link frame) along its x axis: where
    a rigid link's sections would be; on a rod, extension along it is not counted.
    """
    origin, axis = poses[0][:3, 3], poses[0][:3, 0]
    offsets = np.array([p[:3, 3] - origin for p in poses])
    across = offsets - np.outer(offsets @ axis, axis)
    return float(np.max(np.linalg.norm(across, axis=1)))


def color_of(value, top):
    """Return the RGB (0-255 ints) of ``value`` on the map 0 .. ``top`` (clipped)."""
    s = 0.0 if not top > 0 else float(np.clip(value / top, 0.0, 1.0))
    s *= len(COLOR_STOPS) - 1
    k = min(int(s), len(COLOR_STOPS) - 2)
    rgb = COLOR_STOPS[k] + (s - k) * (COLOR_STOPS[k + 1] - COLOR_STOPS[k])
    return tuple(int(round(c)) for c in rgb)


def legend_html(top, unit='1/m', what='curvature'):
    """Return the HTML of the colour map's legend: a bar from 0 to ``top`` [``unit``]."""
    stops = ', '.join(f'rgb{tuple(int(c) for c in color)}' for color in COLOR_STOPS)
    return (f'<div style="font-size:0.8em">{what} [{unit}]'
            f'<div style="height:10px;background:linear-gradient(to right, {stops})"></div>'
            f'<div style="display:flex;justify-content:space-between"><span>0</span>'
            f'<span>{top:.3g}</span></div></div>')
