"""The browser view (`view.*`, `nodes.view_node`): geometry, description, status, a real browser.

Expected values, unit tests: the composed poses of hand-made transforms (products written
out here); a tube's vertices at the section's radius from its centre line (the outline's
definition); the curvature of frames placed on a circle of radius R, 1/R; the section
radii, payload masses and effort limits of config/models/two_link_soft.yaml, read back from
the URDF `description.urdf` writes; the controller states of hand-made diagnostics values
(the keys `controller_base` publishes).

In a real headless Chromium (Debian's package, software WebGL; driven over its DevTools
protocol, `browser.py`) opened on ``bringup --params-file sim_soft --view`` (lockstep: in
real time a loaded machine makes the commands late and the controller degrades to
``hold``, which the page shows but this test does not want): the status panel reads
TRACKING; a screenshot shows the links as tubes of their sections (pixels of the tubes'
colour map; their width against their length is the model's diameter against the arm's
length); the page's Disable button turns the panel to DISABLED and the controller's
diagnostics to enabled False; the program switch reaches the controller (its diagnostics'
active_program); Pause and Resume reach the plant; the plots have data (uPlot canvases
drawn).
"""

import math
import os
import re
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

from browser import BROWSER, Page
from conftest import REPO
from flexible_manipulator.view import geometry, status
from flexible_manipulator.view.description import DescriptionError, read
from flexible_manipulator.view.panel import History

pytest.importorskip('viser', reason='viser (pip only: requirements-ros.txt) is not installed')
from flexible_manipulator.view.scene import FrameTree, pose_matrix, polyline  # noqa: E402


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
    assert tree.root('tip') == 'world' and tree.root('world') == 'world'
    np.testing.assert_allclose(tree.pose('tip')[:3, 3], [0, 1, 0.5], atol=1e-15)
    assert tree.arm_chain() == ['link', 'tip']
    np.testing.assert_array_equal(polyline([[0, 0, 0], [1, 0, 0], [1, 1, 0]]),
                                  [[[0, 0, 0], [1, 0, 0]], [[1, 0, 0], [1, 1, 0]]])


def test_frame_tree_refuses_bad_transforms_and_keeps_the_last_good_one():
    """A transform with NaN, one whose quaternion is not a unit one, and one that makes a
    loop are refused (ValueError naming the frame); the tree keeps the last good pose."""
    tree = FrameTree()
    tree.set('link', 'world', translation(1, 0, 0), True)
    bad = translation(np.nan, 0, 0)
    with pytest.raises(ValueError, match="'link'"):
        tree.set('link', 'world', bad, True)
    scaled = translation(0, 0, 0)
    scaled[:3, :3] *= 2.0
    with pytest.raises(ValueError, match='unit'):
        tree.set('link', 'world', scaled, True)
    with pytest.raises(ValueError, match='loop'):
        tree.set('world', 'link', translation(0, 0, 0), True)
    np.testing.assert_array_equal(tree.pose('link')[:3, 3], [1, 0, 0])


def circle_poses(radius, count, angle):
    """Frames on a circle of ``radius`` in the x-z plane, x axes tangent, over ``angle``."""
    poses = []
    for s in np.linspace(0.0, angle, count):
        pose = np.eye(4)
        # the centre line x = R sin s, z = R (1 - cos s); tangent (cos s, 0, sin s)
        pose[:3, 3] = (radius * np.sin(s), 0.0, radius * (1 - np.cos(s)))
        c, n = np.cos(s), np.sin(s)
        pose[:3, :3] = [[c, 0, -n], [0, 1, 0], [n, 0, c]]
        poses.append(pose)
    return poses


def test_tube_vertices_lie_on_the_section_round_the_centre_line():
    """A round section of r = 0.015 m along frames on a circle: every ring vertex is r from
    its section's centre, in the section's plane (normal: the frame's x axis); densify
    keeps the given frames and puts the Hermite points on the circle to 1e-4 of R (a
    cubic through two points with the arc's tangents); a rectangle 0.04 x 0.01 has its
    corners at (+-0.02, +-0.005) in the section's y, z."""
    r, radius = 0.015, 0.5
    poses = circle_poses(radius, 5, 1.0)
    dense = geometry.densify(poses, pieces=4)
    assert len(dense) == 17
    for k, pose in enumerate(poses):
        np.testing.assert_allclose(dense[4 * k], pose, atol=1e-12)
    centre = np.array([0.0, 0.0, radius])
    for pose in dense:
        assert abs(np.linalg.norm(pose[:3, 3] - centre) - radius) < 1e-4 * radius
    vertices, faces = geometry.tube_mesh(dense, ('circle', r))
    ring = geometry.RING
    assert vertices.shape == (17 * ring + 2, 3) and faces.max() < len(vertices)
    for k, pose in enumerate(dense):
        offsets = vertices[k * ring:(k + 1) * ring] - pose[:3, 3]
        np.testing.assert_allclose(np.linalg.norm(offsets, axis=1), r, rtol=1e-12)
        np.testing.assert_allclose(offsets @ pose[:3, 0], 0.0, atol=1e-12)
    vertices, _ = geometry.tube_mesh([np.eye(4), translation(1, 0, 0)],
                                     ('rectangle', 0.04, 0.01))
    np.testing.assert_allclose(np.abs(vertices[:4, 1:]), [[0.02, 0.005]] * 4)


def test_the_drawn_pieces_follow_the_centre_line_with_the_section_size():
    """The instanced pieces of a round tube (r = 0.015 m) on a circle of R = 0.5 m: each
    centred on its chord's midpoint (R cos(h/2) from the centre, h the angle step), its x
    axis along the chord, scaled (chord + r h / 2 ... closing the bend's gap, r, r);
    their lengths sum to the arc R (1 rad) plus r/2 per radian; a rectangle 0.04 x 0.01
    scales y and z by its sides; the unit piece spans x -0.5..0.5 at radius 1."""
    r, radius = 0.015, 0.5
    dense = geometry.densify(circle_poses(radius, 5, 1.0))
    positions, wxyzs, scales = geometry.pieces(dense, ('circle', r))
    assert positions.shape == (16, 3) and wxyzs.shape == (16, 4)
    h = np.array([geometry.rotation_angle(a, b) for a, b in zip(dense[:-1], dense[1:])])
    np.testing.assert_allclose(np.linalg.norm(positions - [0, 0, radius], axis=1),
                               radius * np.cos(h / 2), rtol=1e-4)
    chords = np.linalg.norm(np.diff([pose[:3, 3] for pose in dense], axis=0), axis=1)
    np.testing.assert_allclose(scales, np.stack([chords + r * h / 2, np.full(16, r),
                                                 np.full(16, r)], axis=1), rtol=1e-12)
    assert scales[:, 0].sum() == pytest.approx(radius * 1.0 + r / 2, rel=1e-3)
    from transforms3d.quaternions import quat2mat
    for (a, b), wxyz in zip(zip(dense[:-1], dense[1:]), wxyzs):
        chord = b[:3, 3] - a[:3, 3]
        np.testing.assert_allclose(quat2mat(wxyz)[:, 0], chord / np.linalg.norm(chord),
                                   atol=1e-12)
    _, _, scales = geometry.pieces(dense, ('rectangle', 0.04, 0.01))
    np.testing.assert_allclose(scales[:, 1:], [[0.04, 0.01]] * 16)
    vertices, faces = geometry.unit_piece('circle')
    np.testing.assert_allclose(sorted(set(vertices[:, 0])), [-0.5, 0.5])
    np.testing.assert_allclose(np.linalg.norm(vertices[:-2, 1:], axis=1), 1.0, rtol=1e-6)


def test_the_quaternion_of_a_rotation_matches_transforms3d():
    """`geometry.mat2quat` (closed form) against transforms3d's (eigendecomposition) on
    rotations drawn at random and near each branch (trace < 0 about x, y and z): the
    same unit quaternion up to sign, w >= 0."""
    from transforms3d.quaternions import mat2quat, quat2mat
    rng = np.random.default_rng(3)
    quats = list(rng.normal(size=(200, 4)))
    quats += [(0.01, 1, 0.02, 0), (0.01, 0, 1, 0.02), (0.01, 0.02, 0, 1), (1, 0, 0, 0)]
    for q in quats:
        rotation = quat2mat(np.asarray(q) / np.linalg.norm(q))
        expected = mat2quat(rotation)
        expected = -expected if expected[0] < 0 else expected
        np.testing.assert_allclose(geometry.mat2quat(rotation), expected, atol=1e-12)


def test_curvature_deflection_and_colours():
    """Frames on a circle of R = 0.5 m: curvature 1/R = 2 1/m on each interval (the angle
    between frames over the chord: 2 sin(h/2)/h of it, h the angle step, within 0.1 %);
    deflection from the first frame's x axis at the last frame: R (1 - cos 1) (the
    circle's height); a straight link: 0 and 0. The colour map's ends are its stops."""
    kappa = geometry.curvatures(circle_poses(0.5, 11, 1.0))
    np.testing.assert_allclose(kappa, 2.0, rtol=1e-3)
    poses = circle_poses(0.5, 11, 1.0)
    assert geometry.deflection(poses) == pytest.approx(0.5 * (1 - np.cos(1.0)), rel=1e-12)
    straight = [translation(x, 0, 0) for x in (0.0, 0.1, 0.2)]
    assert geometry.deflection(straight) == 0.0
    np.testing.assert_array_equal(geometry.curvatures(straight), [0.0, 0.0])
    assert geometry.color_of(0.0, 2.0) == tuple(geometry.COLOR_STOPS[0])
    assert geometry.color_of(5.0, 2.0) == tuple(geometry.COLOR_STOPS[-1])
    assert '2' in geometry.legend_html(2.0)


def test_the_view_reads_the_section_joints_and_payloads_from_the_urdf():
    """The URDF written for config/models/two_link_soft.yaml: round sections of radius
    0.015 and 0.012 m (the file's rod sections), sections s1..s4 between link and tip
    (frames: 4), payloads 0.05 and 0.02 kg, effort limits 8 and 3 N m, joint axes y, the
    tool frame tool0, a fixed base; a rectangular rod section is drawn as its box; bad
    text is refused with a reason."""
    from flexible_manipulator.description.urdf import urdf
    from flexible_manipulator.model_config import load_model, model_from_dict
    from flexible_manipulator.nodes.common import resolve_model_path
    import yaml
    path = resolve_model_path('two_link_soft')
    found = read(urdf(load_model(path)))
    assert found.links['upper_arm'] == (['upper_arm'] + [f'upper_arm_s{k}' for k in
                                                         range(1, 5)] + ['upper_arm_tip'],
                                        ('circle', 0.015))
    assert found.links['forearm'][1] == ('circle', 0.012)
    assert found.payloads == {'upper_arm_tip': 0.05, 'forearm_tip': 0.02}
    assert found.effort_limits == {'shoulder': 8.0, 'elbow': 3.0}
    assert [j.axis for j in found.joints] == [(0.0, 1.0, 0.0)] * 2
    assert found.tool == 'tool0' and not found.floating and found.base[0] == 'base_link'
    assert found.root == 'world'
    with open(path) as stream:
        spec = yaml.safe_load(stream)
    spec['links'][1]['rod']['section'] = {'shape': 'rectangle', 'width': 0.04,
                                          'height': 0.01}
    assert read(urdf(model_from_dict(spec))).links['forearm'][1] == ('rectangle', 0.04, 0.01)
    # A beam's drawn section (config/models/two_link_flexible.yaml: 3 mm x 30 mm strips).
    flexible = read(urdf(load_model(resolve_model_path('two_link_flexible'))))
    assert {flexible.links[name][1] for name in ('upper_arm', 'forearm')} == {
        ('rectangle', 0.003, 0.03)}
    for text, reason in (('<robot', 'not well-formed XML'), ('<sdf/>', 'expected a <robot>'),
                         ('<robot name="x"><link name="a"/></robot>', 'tip frame')):
        with pytest.raises(DescriptionError, match=reason):
            read(text)


def controller_values(**changes):
    """Diagnostics values of a tracking controller (the keys `controller_base` sends)."""
    values = {'active_program': 'joint_sine', 'enabled': 'True', 'fault': '',
              'degraded': '', 'state_stale': 'False', 'programs': 'joint_sine, hold'}
    values.update(changes)
    return values


def test_status_classification():
    """Tracking, a warning, disabled, stale, degraded to hold, fault (by level or value),
    in that order of precedence; the level may come as rclpy's bytes; a plant paused or
    faulted; the figures from the two statuses; the panel escapes the graph's text."""
    name = 'controller: program controller'
    classify = status.classify_controller
    assert classify(name, b'\x00', '', controller_values()).text == "TRACKING 'joint_sine'"
    assert classify(name, 1, 'late', controller_values()).kind == 'warning'
    assert classify(name, 0, '', controller_values(enabled='False')).kind == 'disabled'
    assert classify(name, 1, '', controller_values(state_stale='True')).kind == 'stale'
    degraded = classify(name, 1, '', controller_values(degraded='5 periods late',
                                                       active_program='hold'))
    assert degraded.kind == 'degraded' and "'hold'" in degraded.text
    assert classify(name, b'\x02', 'boom', controller_values()).text == 'FAULT: boom'
    assert classify(name, 0, '', controller_values(fault='law failed')).kind == 'fault'
    assert classify(name, 0, '', controller_values()).node == 'controller'
    plant = 'plant: simulation'
    assert status.classify_plant(plant, 0, '', {'paused': 'True'}).kind == 'paused'
    assert status.classify_plant(plant, 2, 'blew up', {}).kind == 'fault'
    figures = status.Figures()
    status.update_figures(figures, plant, {'simulated_time': '1.5',
                                           'real_time_factor': '0.8'})
    status.update_figures(figures, name, controller_values(
        ticks='480', residual_max='shoulder: 0.002, elbow: -0.01'))
    assert (figures.simulated_time, figures.real_time_factor, figures.ticks_per_second,
            figures.residual, figures.program) == (1.5, 0.8, 480.0, 0.01, 'joint_sine')
    text = status.panel_html(None, None, figures, ['bad <script>'])
    assert '<script>' not in text and '&lt;script&gt;' in text and 'not heard' in text


def test_history_slides_and_restarts_on_new_rows():
    """A window of 3 keeps the last 3 samples; other names (another program) or a time
    going back (a reset) restart it; arrays are (t, one series per name)."""
    history = History(size=3)
    for t in range(5):
        history.add(t, ['a', 'b'], [t, -t])
    t, a, b = history.arrays()
    np.testing.assert_array_equal(t, [2, 3, 4])
    np.testing.assert_array_equal(b, [-2, -3, -4])
    assert history.take_changed() and not history.take_changed()
    history.add(5, ['x'], [1.0])
    assert history.take_changed() and len(history.arrays()[0]) == 1
    history.add(0.5, ['x'], [2.0])
    assert list(history.arrays()[0]) == [0.5]


def free_port():
    """A TCP port free on the loopback interface now."""
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


def tube_pixels(image):
    """Mask of the pixels of the tubes' colour map (magenta, crimson, orange), whatever the
    shading: red dominant, green under 0.6 of it, blue not above red (the page's grid and
    text are grey, the trace blue, the path green, joints grey, payloads gold, the panel's
    buttons blue: none passes)."""
    red, green, blue = image[:, :, 0], image[:, :, 1], image[:, :, 2]
    for stop in geometry.COLOR_STOPS:          # the map's own colours pass
        assert stop[0] > 90 and stop[1] < 0.6 * stop[0] and stop[2] <= stop[0] + 20
    return (red > 90) & (green < 0.6 * red) & (blue <= red + 20)


def arm_pixels(image):
    """`tube_pixels` of the 3D view (the left two thirds: not the panel), the arm alone:
    the largest of the masked regions joined across gaps of up to 30 pixels (a joint's grey
    cylinder in front of a tube). Drops other pixels of the map's colours: the orange bar
    of viser's note on software WebGL, which a loaded machine may leave on the page."""
    from scipy import ndimage
    mask = tube_pixels(image[:, :image.shape[1] * 2 // 3])
    regions, count = ndimage.label(ndimage.binary_dilation(mask, iterations=15))
    if count == 0:
        return mask
    sizes = ndimage.sum(mask, regions, index=range(1, count + 1))
    return mask & (regions == 1 + int(np.argmax(sizes)))


def width_over_length(mask):
    """Mean width over length of the masked shape [-]: its area over the square of its
    extent along its principal axis (a bar of width w and length l gives w / l)."""
    ys, xs = np.nonzero(mask)
    points = np.stack([xs, ys], axis=1).astype(float)
    points -= points.mean(axis=0)
    axis = np.linalg.svd(points, full_matrices=False)[2][0]
    along = points @ axis
    length = along.max() - along.min()
    return len(points) / length ** 2


def diagnostics_of(messages, suffix):
    """The values of the last status whose name ends with ``suffix``, or None."""
    for msg in reversed(messages):
        for entry in msg.status:
            if entry.name.endswith(suffix):
                return {kv.key: kv.value for kv in entry.values}
    return None


@pytest.mark.slow
@pytest.mark.ros
@pytest.mark.timeout(600)
def test_the_page_shows_the_arm_and_controls_the_graph(domain_id, probe, tmp_path):
    """``bringup --params-file sim_soft --view`` (lockstep) in a real Chromium (module doc):
    the status panel says TRACKING; the links are tubes whose width over length in the
    picture is the model's mean diameter over the arm's length (0.5 to 2 times: the arm
    bends and is seen at an angle) and they move between two screenshots; the three plots
    drew their first series; Disable turns the panel and the controller's diagnostics to
    disabled, Enable back; choosing ``hold`` and Switch makes it the controller's active
    program; Pause turns the panel and the plant's diagnostics to paused, Resume back.
    VIEW_PICTURE=doc/view.png saves a screenshot while paused (the README's picture)."""
    assert BROWSER, 'no chromium: the test set-up installs Debian\'s chromium (setup_env.sh)'
    from diagnostic_msgs.msg import DiagnosticArray
    from flexible_manipulator.model_config import load_model
    from flexible_manipulator.nodes.common import resolve_model_path
    model = load_model(resolve_model_path('two_link_soft'))     # sim_soft's model
    length = sum(link.length for link in model.links)
    diameter = sum(2 * link.rod.section.shape[1] * link.length for link in model.links) / length
    port = free_port()
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain_id))
    log = open(tmp_path / 'bringup.log', 'w')
    graph = subprocess.Popen([sys.executable, '-m', 'flexible_manipulator.nodes.bringup',
                              '--params-file', 'sim_soft', '--timing-mode', 'lockstep',
                              '--view', '--view-port', str(port)],
                             env=env, stdout=log, stderr=subprocess.STDOUT, cwd=REPO)
    diagnostics = probe.subscribe(DiagnosticArray, '/diagnostics', 50)
    suffix = status.CONTROLLER_SUFFIX
    try:
        # The page loads while the plant and the controller start (the view serves first).
        probe.spin_until(lambda: 'view of the graph at' in (tmp_path / 'bringup.log')
                         .read_text(), 240, 'the view up')
        with Page(f'http://127.0.0.1:{port}') as page:
            probe.spin_until(lambda: diagnostics_of(diagnostics, suffix) is not None and
                             int(diagnostics_of(diagnostics, suffix)['ticks']) > 0, 240,
                             'the controller answering states')
            page.wait_for(lambda p: "Controller: TRACKING 'joint_sine'" in p.text(), 120,
                          'the status panel tracking')
            assert 'Plant: RUNNING' in page.text()

            def tubes(p):
                p.close_notifications()
                mask = arm_pixels(p.screenshot(tmp_path / 'page.png'))
                return (mask,) if mask.sum() > 400 else None
            mask, = page.wait_for(tubes, 120, 'the tubes on the page')
            ratio = width_over_length(mask)
            assert 0.5 < ratio / (diameter / length) < 2.0, (ratio, diameter / length)
            page.wait_for(lambda p: (arm_pixels(p.screenshot(tmp_path / 'second.png'))
                                     ^ mask).sum() > 50, 60, 'the arm moving')

            page.wait_for(lambda p: all(n > 20 for n in p.inked('.uplot canvas',
                                                                (31, 119, 180))), 60,
                          'three plots with their first series drawn')

            page.press('Disable controller', lambda p: 'Controller: DISABLED' in p.text(), 90,
                       'DISABLED')
            assert 'disabled: zero effort' in page.text()       # the service's reply
            probe.spin_until(lambda: diagnostics_of(diagnostics, suffix)['enabled'] ==
                             'False', 30, 'the controller disabled')
            page.press('Enable controller', lambda p: 'Controller: TRACKING' in p.text(), 90,
                       'TRACKING')

            page.choose('Program', 'hold')
            page.press('Switch program', lambda p: "switched to 'hold'" in p.text(), 90,
                       'the reply')
            probe.spin_until(lambda: diagnostics_of(diagnostics, suffix)['active_program'] ==
                             'hold', 30, 'the controller tracking hold')
            page.wait_for(lambda p: "switched to 'hold'" in p.text() and
                          'Program: hold' in p.text(), 30, 'the reply and the panel')

            page.press('Pause plant', lambda p: 'Plant: PAUSED' in p.text(), 90, 'PAUSED')
            probe.spin_until(lambda: diagnostics_of(diagnostics, status.PLANT_SUFFIXES[0])[
                'paused'] == 'True', 30, 'the plant paused')
            if os.environ.get('VIEW_PICTURE'):     # paused: the page has caught up
                page.close_notifications()
                probe.spin_for(2.0)
                page.screenshot(os.environ['VIEW_PICTURE'])
            page.press('Resume plant', lambda p: 'Plant: RUNNING' in p.text(), 90,
                       'RUNNING again')
    finally:
        graph.send_signal(signal.SIGINT)
        code = graph.wait(30)
        log.close()
    assert code == 0
    assert not re.search(r'Traceback|\[view\]: bad ', open(tmp_path / 'bringup.log').read())


def transform(parent, child, xyz, wxyz=(1.0, 0.0, 0.0, 0.0)):
    """A geometry_msgs/TransformStamped of ``child`` in ``parent``."""
    from geometry_msgs.msg import TransformStamped
    message = TransformStamped()
    message.header.frame_id, message.child_frame_id = parent, child
    t, q = message.transform.translation, message.transform.rotation
    t.x, t.y, t.z = xyz
    q.w, q.x, q.y, q.z = wxyz
    return message


@pytest.mark.ros
@pytest.mark.timeout(300)
def test_the_view_survives_bad_input_and_says_so(domain_id, probe, start_node, tmp_path):
    """The view node alone, fed by this test as a real arm's driver would be (no plant, a
    controller's status but not its services): the straight two_link_soft arm from /tf
    (the URDF `description.urdf` writes, stations at K L / 5) is drawn as tubes; then a
    transform with NaN, one with a quaternion of norm 2, residuals with two names and one
    value, and a robot description that is not XML: the page names each ('bad /tf',
    'bad controller/residuals', 'bad robot_description'), keeps drawing the arm, and the
    buttons are disabled with their reason; SIGINT ends the node with 0."""
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
    from rclpy.qos import DurabilityPolicy, QoSProfile
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String
    from tf2_msgs.msg import TFMessage
    from flexible_manipulator.description.urdf import urdf
    from flexible_manipulator.model_config import load_model
    from flexible_manipulator.nodes.common import resolve_model_path
    port = free_port()
    view = start_node('flexible_manipulator.nodes.view_node', params_file=None,
                      parameters=[('port', port)])
    latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    description = probe.publisher(String, '/robot_description', latched)
    description.publish(String(data=urdf(load_model(resolve_model_path('two_link_soft')))))
    probe.publisher(TFMessage, '/tf_static', latched).publish(TFMessage(transforms=[
        transform('world', 'base_link', (0.0, 0.0, 1.0)),
        transform('forearm_tip', 'tool0', (0.0, 0.0, 0.0))]))
    frames = [transform('base_link', 'upper_arm', (0.0, 0.0, 0.0)),
              transform('upper_arm_tip', 'forearm', (0.0, 0.0, 0.0))]
    for link, length in (('upper_arm', 0.4), ('forearm', 0.3)):
        frames += [transform(link, f'{link}_s{k}', (k * length / 5, 0.0, 0.0))
                   for k in range(1, 5)]
        frames.append(transform(link, f'{link}_tip', (length, 0.0, 0.0)))
    tf = probe.publisher(TFMessage, '/tf')
    residuals = probe.publisher(JointState, '/controller/residuals')
    diagnostics = probe.publisher(DiagnosticArray, '/diagnostics')
    controller = DiagnosticStatus(name='controller' + status.CONTROLLER_SUFFIX, values=[
        KeyValue(key=k, value=v) for k, v in controller_values(ticks='not a number').items()])

    def feed(seconds, *bad):
        """Publish the good arm (and the ``bad`` messages) at 10 Hz for ``seconds``."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            tf.publish(TFMessage(transforms=frames))
            diagnostics.publish(DiagnosticArray(status=[controller]))
            for publisher, message in bad:
                publisher.publish(message)
            probe.spin_for(0.1)

    probe.spin_until(lambda: 'view of the graph at' in view.output(), 60, 'the view up')
    with Page(f'http://127.0.0.1:{port}') as page:
        deadline = time.monotonic() + 120
        while "Controller: TRACKING 'joint_sine'" not in page.text():
            assert time.monotonic() < deadline, page.text()
            feed(0.5)
        page.wait_for(lambda p: feed(0.3) or tube_pixels(p.screenshot(tmp_path / 'a.png'))
                      .sum() > 300, 60, 'the arm drawn')
        bad = ((tf, TFMessage(transforms=[transform('upper_arm', 'upper_arm_s2',
                                                    (math.nan, 0.0, 0.0))])),
               (tf, TFMessage(transforms=[transform('upper_arm', 'upper_arm_s3', (0.2, 0, 0),
                                                    (2.0, 0.0, 0.0, 0.0))])),
               (residuals, JointState(name=['shoulder', 'elbow'], position=[0.1])))
        page.wait_for(lambda p: feed(0.3, *bad) or all(
            note in p.text() for note in ('bad /tf', 'bad controller/residuals')), 60,
            'the notes on the bad /tf and residuals')
        description.publish(String(data='<robot'))
        page.wait_for(lambda p: feed(0.3) or all(
            note in p.text() for note in ('bad /tf', 'bad controller/residuals',
                                          'bad robot_description')), 60, 'the notes')
        assert tube_pixels(page.screenshot(tmp_path / 'b.png')).sum() > 300
        assert 'no simulated plant heard' in page.text()
        assert 'service controller/enable is not offered' in page.text()
        assert not page.click('Disable controller') and not page.click('Pause plant')
    assert view.alive()
    view.process.send_signal(signal.SIGINT)
    assert view.wait(30) == 0
