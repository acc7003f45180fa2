"""The view's scene from its first frame: the camera frames the arm, no fade-in (`view.scene`).

Expected values: the frames of config/models/two_link_soft.yaml's arm (links 0.4 and
0.3 m, sections at k L / 5), bent at the shoulder and the elbow, composed here from
rotations about y written out (not the view's `FrameTree`); a point is seen when, in the
camera's frame (looking from its position at the point it looks at, z up), its angle off
the view axis is within half the vertical field of view upwards and within half the
horizontal one (a canvas 0.75 as wide as high, the narrowest the view frames) sideways.
The arm must also fill the view (its frames span more than a third of the field), else
a camera far away would pass.

In a real headless Chromium (`browser.py`), the first screenshot showing the arm at all
shows it in its colours: viser's default environment map kept the canvas at 5 % opacity
for seconds (a faint, almost white arm); the threshold is midway between white and the
mean brightness of the arm's pixels in the settled render of the same page.
"""

import math
import socket
import time

import numpy as np
import pytest

pytest.importorskip('viser', reason='viser (pip only: requirements-ros.txt) is not installed')
from flexible_manipulator.view import scene  # noqa: E402
from flexible_manipulator.view.description import read  # noqa: E402

LENGTHS = {'upper_arm': 0.4, 'forearm': 0.3}
BASE_HEIGHT = 1.0
ANGLES = {'upper_arm': -0.7, 'forearm': 1.1}     # about y [rad]: up, then folded down


def rotation_y(angle):
    """4 x 4 rotation about y."""
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, 0.0, s, 0.0], [0.0, 1.0, 0.0, 0.0], [-s, 0.0, c, 0.0],
                     [0.0, 0.0, 0.0, 1.0]])


def shifted(x=0.0, z=0.0):
    """4 x 4 translation along x and z."""
    matrix = np.eye(4)
    matrix[0, 3], matrix[2, 3] = x, z
    return matrix


def arm_transforms():
    """The bent arm's transforms: [(child, parent, parent_T_child, moving)]."""
    found = [('base_link', 'world', shifted(z=BASE_HEIGHT), False),
             ('upper_arm', 'base_link', rotation_y(ANGLES['upper_arm']), True),
             ('forearm', 'upper_arm_tip', rotation_y(ANGLES['forearm']), True)]
    for link, length in LENGTHS.items():
        found += [(f'{link}_s{k}', link, shifted(k * length / 5), True) for k in range(1, 5)]
        found.append((f'{link}_tip', link, shifted(length), True))
    found.append(('tool0', 'forearm_tip', np.eye(4), False))
    return found


def world_points():
    """The world positions of the arm's frames, composed here (module doc)."""
    a, b = ANGLES['upper_arm'], ANGLES['forearm']
    base = np.array([0.0, 0.0, BASE_HEIGHT])
    up = np.array([math.cos(a), 0.0, -math.sin(a)])            # R_y(a) x
    fore = np.array([math.cos(a + b), 0.0, -math.sin(a + b)])  # R_y(a + b) x
    elbow = base + LENGTHS['upper_arm'] * up
    return np.array([base] + [base + k / 5 * LENGTHS['upper_arm'] * up for k in range(1, 6)]
                    + [elbow + k / 5 * LENGTHS['forearm'] * fore for k in range(1, 6)])


def view_angles(points, position, look_at):
    """(up-down, sideways) angles [rad] of ``points`` off the view axis of a z-up camera."""
    forward = np.asarray(look_at, float) - np.asarray(position, float)
    forward /= np.linalg.norm(forward)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    relative = np.asarray(points, float) - position
    depth = relative @ forward
    assert np.all(depth > 0), 'a point behind the camera'
    return np.arctan2(relative @ up, depth), np.arctan2(relative @ right, depth)


def in_view(points, position, look_at, fov, aspect):
    """Tell whether all ``points`` are in the frustum; return also their spans [rad]."""
    vertical, sideways = view_angles(points, position, look_at)
    half_v = fov / 2
    half_h = math.atan(math.tan(fov / 2) * aspect)
    inside = bool(np.all(np.abs(vertical) < half_v) and np.all(np.abs(sideways) < half_h))
    return inside, np.ptp(vertical) / fov, np.ptp(sideways) / (2 * half_h)


def free_port():
    """A TCP port free on the loopback interface now."""
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


def drawn_view(port=None):
    """An `ArmView` of the bent two_link_soft arm, drawn once."""
    from flexible_manipulator.description.urdf import urdf
    from flexible_manipulator.model_config import load_model
    from flexible_manipulator.nodes.common import resolve_model_path
    view = scene.ArmView('127.0.0.1', port or free_port())
    view.description = read(urdf(load_model(resolve_model_path('two_link_soft'))))
    for child, parent, matrix, moving in arm_transforms():
        view.frames.set(child, parent, matrix, moving)
    view.draw()
    return view


def test_framing_keeps_every_point_in_the_frustum():
    """`framing` of scattered boxes, from several directions: every point is inside the
    frustum of the narrowest canvas, and the points span more than a third of it."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        points = rng.normal(size=(30, 3)) * rng.uniform(0.05, 2.0, size=3) + rng.normal(
            size=3)
        direction = rng.normal(size=3)
        direction[2] = abs(direction[2]) * 0.5      # not straight down the up axis
        position, look_at = scene.framing(points, direction)
        inside, span_v, span_h = in_view(points, position, look_at, scene.FOV, scene.ASPECT)
        assert inside
        assert max(span_v, span_h) > 1 / 3, (span_v, span_h)


def test_the_initial_camera_frames_the_bent_arm():
    """The view of the bent arm (module doc): its initial camera (pages opened from now
    on) sees every frame of the arm, base to tool, and the arm fills a third of the view
    at least; before the arm is known it looks at the origin from about a metre."""
    view = scene.ArmView('127.0.0.1', free_port())
    try:
        camera = view.server.initial_camera
        assert 1.0 < np.linalg.norm(camera.position - camera.look_at) < 2.0
    finally:
        view.stop()
    view = drawn_view()
    try:
        assert view.aimed
        camera = view.server.initial_camera
        assert camera.fov == pytest.approx(scene.FOV)
        inside, span_v, span_h = in_view(world_points(), camera.position, camera.look_at,
                                         camera.fov, scene.ASPECT)
        assert inside, (camera.position, camera.look_at)
        assert max(span_v, span_h) > 1 / 3, (span_v, span_h)
        # The frames the view's own tree composed are the test's (its composition is right).
        names = ['base_link'] + [f'{link}_{s}' for link in LENGTHS for s in
                                 ('s1', 's2', 's3', 's4', 'tip')]
        composed = np.array([view.frames.pose(name)[:3, 3] for name in names])
        assert np.allclose(composed, world_points(), atol=1e-12)
    finally:
        view.stop()


def arm_box(mask):
    """The bounding box (rows, columns slices) of the masked pixels."""
    rows, cols = np.nonzero(mask)
    return slice(rows.min(), rows.max() + 1), slice(cols.min(), cols.max() + 1)


def magenta(image):
    """Pixels of the arm's hues at all, however faint: red over green by 8 (0-255)."""
    return (image[:, :, 0] - image[:, :, 1] > 8) & (image[:, :, 2] - image[:, :, 1] > 8)


def settled_view(page, path, patience, still=1.0):
    """The 3D view (the left two thirds) once it has settled: no notification left on the
    page (viser's note on software WebGL covers part of the view; closed here), and over
    ``still`` s of screenshots the arm's pixels as in the first of them (the same mask
    within 0.5 % of its pixels, the same mean brightness within 1 of 255). A fade-in
    changes the brightness between screenshots, so it is over by then; an arm held faint
    stays faint here too, and fails the test's check that the settled arm is coloured."""
    held = {}

    def steady(p):
        p.close_notifications()
        image = p.screenshot(path).astype(float)
        image = image[:, :image.shape[1] * 2 // 3]
        mask = magenta(image)
        if p.evaluate('document.querySelectorAll(".mantine-Notification-root").length') \
                or mask.sum() == 0:
            held.clear()
            return None
        now, kept = time.monotonic(), held.get('mask')
        if kept is None or (mask ^ kept).sum() > 0.005 * kept.sum() or \
                abs(image[mask].mean() - held['brightness']) > 1.0:
            held.update(mask=mask, brightness=image[mask].mean(), since=now)
            return None
        return (image,) if now - held['since'] >= still else None
    return page.wait_for(steady, patience, 'the view settled')[0]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_first_frame_of_the_page_shows_the_arm_in_its_colours(tmp_path):
    """A real Chromium on the view of the bent arm (module doc): the first screenshot in
    which the arm shows at all has the mean brightness of the arm's pixels below the
    midpoint between white and their settled render's; the arm is on the page, not cut by
    its edges."""
    from browser import BROWSER, Page
    assert BROWSER, 'no chromium: the test set-up installs Debian\'s chromium (setup_env.sh)'
    port = free_port()
    view = drawn_view(port)
    try:
        with Page(f'http://127.0.0.1:{port}') as page:
            deadline = time.monotonic() + 120
            while True:
                first = page.screenshot(tmp_path / 'first.png').astype(float)
                first = first[:, :first.shape[1] * 2 // 3]       # the 3D view, not the panel
                if magenta(first).sum() > 50:
                    break
                assert time.monotonic() < deadline, 'the arm never showed'
                view.draw()
            settled = settled_view(page, tmp_path / 'settled.png', 120)
    finally:
        view.stop()
    mask = magenta(settled)
    assert mask.sum() > 2000, mask.sum()
    rows, cols = arm_box(mask)
    assert rows.start > 0 and cols.start > 0 and rows.stop < settled.shape[0] and \
        cols.stop < settled.shape[1], 'the arm cut by the edge of the view'
    good = settled[mask].mean()
    assert good < 200, good
    threshold = good + 0.5 * (255.0 - good)
    assert first[mask].mean() < threshold, (first[mask].mean(), threshold, good)
