"""The browser view (`view.scene`, `nodes.view_node`): frame geometry, and a real browser.

Expected values: the composed poses of hand-made transforms (products written out here);
and, in a real headless Chromium (Debian's package, software WebGL) opened on ``bringup
--view`` of the demo graph running in lockstep (in real time, a loaded machine makes the
controller's commands late and it holds the arm still, as it should), screenshots that
show the arm (pixels of the arm's colour, which the page uses for nothing else) and show
it moved between two screenshots taken at least a wall second apart (the program moves
the arm along a circle).
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

from flexible_manipulator.view.scene import ARM_COLOR, FrameTree, pose_matrix, polyline

BROWSER = shutil.which('chromium') or shutil.which('chromium-browser')


def translation(x, y, z):
    """A pure translation (4 x 4)."""
    return pose_matrix((x, y, z), (1.0, 0.0, 0.0, 0.0))


def test_frame_tree_composes_poses_and_orders_the_chain():
    """world <- base (static, +0.5 z) <- link (moving, 90 deg about z) <- tip (static, +1 x):
    the tip is at (0, 1, 0.5) (the rotation turns the tip's x offset into y); the arm's
    chain is [link, tip] (moving frames and their static children, by depth)."""
    tree = FrameTree()
    half = np.sqrt(0.5)
    tree.set('base', 'world', translation(0, 0, 0.5), False)
    tree.set('link', 'base', pose_matrix((0, 0, 0), (half, 0, 0, half)), True)
    tree.set('tip', 'link', translation(1, 0, 0), False)
    np.testing.assert_allclose(tree.pose('tip')[:3, 3], [0, 1, 0.5], atol=1e-15)
    assert tree.arm_chain() == ['link', 'tip']
    np.testing.assert_array_equal(polyline([[0, 0, 0], [1, 0, 0], [1, 1, 0]]),
                                  [[[0, 0, 0], [1, 0, 0]], [[1, 0, 0], [1, 1, 0]]])


def free_port():
    """A TCP port free on the loopback interface now."""
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


def screenshot(url, path):
    """Open ``url`` in headless Chromium and save a 800 x 600 screenshot; return the pixels."""
    import matplotlib.image
    # Without the ROS wheels' library path, which this Python process runs with.
    env = {k: v for k, v in os.environ.items() if k != 'LD_LIBRARY_PATH'}
    subprocess.run([BROWSER, '--headless', '--no-sandbox', '--use-angle=swiftshader',
                    '--enable-unsafe-swiftshader', '--window-size=800,600',
                    '--virtual-time-budget=4000', f'--screenshot={path}', url],
                   env=env, capture_output=True, timeout=90, check=True)
    return (matplotlib.image.imread(path)[:, :, :3] * 255).round().astype(int)


def arm_in_view(url, path, patience=60.0):
    """Screenshots of ``url`` until one shows the arm (> 200 pixels of its colour) or
    ``patience`` wall seconds pass; the last mask. A page opened on a busy machine may be
    drawn before the scene reaches it over the websocket, so one blank page is no verdict."""
    deadline = time.monotonic() + patience
    while True:
        mask = arm_pixels(screenshot(url, path))
        if mask.sum() > 200 or time.monotonic() > deadline:
            return mask


def arm_pixels(image):
    """Mask of the pixels of the arm's magenta, whatever the shading: red and blue high
    and alike, green low (the page's grid, text and trace are grey, black and blue)."""
    red, green, blue = image[:, :, 0], image[:, :, 1], image[:, :, 2]
    assert ARM_COLOR == (200, 0, 200)
    return (red > 150) & (blue > 150) & (green < 120) & (np.abs(red - blue) < 40)


@pytest.mark.ros
@pytest.mark.timeout(360)
def test_a_browser_shows_the_arm_moving(domain_id, probe, tmp_path):
    """``bringup --view`` on the demo graph (lockstep); two screenshots at least a wall
    second apart each show the arm (> 200 pixels of its colour), and they differ (> 50 pixels in
    one and not the other): the page follows /tf."""
    assert BROWSER, 'no chromium: the test set-up installs Debian\'s chromium (setup_env.sh)'
    from tf2_msgs.msg import TFMessage
    port = free_port()
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain_id))
    log = open(tmp_path / 'bringup.log', 'w')
    graph = subprocess.Popen([sys.executable, '-m', 'flexible_manipulator.nodes.bringup',
                              '--local', '--timing-mode', 'lockstep', '--view',
                              '--view-port', str(port)],
                             env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        tf = probe.subscribe(TFMessage, '/tf', 10)
        probe.spin_until(lambda: len(tf) > 10, 90, 'the arm moving on /tf')
        deadline = time.monotonic() + 60
        while 'view of the graph at' not in open(tmp_path / 'bringup.log').read():
            assert time.monotonic() < deadline and graph.poll() is None, 'no view node'
            time.sleep(0.2)
        url = f'http://127.0.0.1:{port}'
        first = arm_in_view(url, tmp_path / 'first.png')
        probe.spin_for(1.0)
        second = arm_in_view(url, tmp_path / 'second.png')
    finally:
        graph.send_signal(signal.SIGINT)
        code = graph.wait(30)
        log.close()
    assert first.sum() > 200 and second.sum() > 200, (first.sum(), second.sum())
    assert (first ^ second).sum() > 50, 'the arm did not move between the screenshots'
    assert code == 0
