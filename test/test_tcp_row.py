"""The ``tcp`` program row: a named frame of the model follows a path (control/rows/tcp.py).

Where expected values come from (per test):

* position: the robot description's TF tree (description/urdf.py ``joint_frames``)
  composed by hand from the base frame to the frame, each moving transform from the plant
  node's path (``model.frame_transforms``: the compiled ``local_transforms``, not the
  ``section_kinematics`` the row reads), each fixed one from its URDF origin (Rz Ry Rx,
  transforms3d 'sxyz');
* Jacobian: central differences of the row's position, h = 1e-6 (error ~h^2 |p'''| +
  eps/h, well below the 1e-6 asserted); drift: J' v = d/ds J(q + s v) v at s = 0 by
  central differences of the Jacobian along v (the same step);
* closed loop: see `test_a_flexible_arm_keeps_its_tcp_on_a_line_with_the_default_settings`;
* errors: the documented contract of the row parsers, a ConfigError of one line naming the
  dotted field (here with the frames the model has).
"""

import os
import re

import numpy as np
import pytest
import transforms3d

from flexible_manipulator.control.arm_defaults import analysis_pose
from flexible_manipulator.control.lockstep import run_lockstep
from flexible_manipulator.control.program_config import parse_program
from flexible_manipulator.control.program_controller import (ControllerSettings,
                                                             ProgramController)
from flexible_manipulator.control.programs import FramePointProgram
from flexible_manipulator.control.rows.tcp import frame_on_link
from flexible_manipulator.control.trajectories import ConstantReference
from flexible_manipulator.control.uncertainty import EXACT_MODEL
from flexible_manipulator.control.zero_dynamics import link_angle_output
from flexible_manipulator.description.urdf import joint_frames
from flexible_manipulator.mechanics.delay_line import DelayLine
from flexible_manipulator.mechanics.equilibrium import static_equilibrium
from flexible_manipulator.mechanics.simulation import Simulation
from flexible_manipulator.model_config import ConfigError, load_model
from conftest import CONFIG

MODELS = ('ur5e_flexible_forearm', 'panda_flexible_forearm', 'two_link_flexible')
# Frames checked per model: the tool frame (UR5e's tool0 behind flange on wrist_3, the
# Panda's panda_hand_tcp three fixed joints past link 7, tool0 added by the description on
# the demo's flexible forearm tip), a URDF link hung on a flexible beam's frame with a
# rotation (forearm_link, panda_link4), a section frame of a flexible link.
FRAMES = {'ur5e_flexible_forearm': ['tool0', 'flange', 'forearm_link',
                                    'forearm_link_beam_s2'],
          'panda_flexible_forearm': ['panda_hand_tcp', 'panda_leftfinger', 'panda_link4'],
          'two_link_flexible': ['tool0', 'forearm_s3']}
# Rest positions of the closed-loop runs (test_arms.py's, the held arm's start).
ARMS = {'ur5e_flexible_forearm': [0.0, -1.2, 1.5, -1.9, -1.57, 0.0],
        'panda_flexible_forearm': [0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8]}
STEP = 1e-6


@pytest.fixture(scope='module', params=MODELS)
def model(request):
    """A model file of config/models."""
    return load_model(os.path.join(CONFIG, 'models', f'{request.param}.yaml'))


def tf_position(model, q, frame):
    """Origin of ``frame`` in the base frame, the TF tree composed by hand (module doc)."""
    tree = [f for f in joint_frames(model) if f.parent != 'world']
    moving = [f for f in tree if f.moving]
    transforms = model.frame_transforms([(f.link, f.x if f.kind == 'section' else None)
                                         for f in moving])
    transforms.update(model.create_data(), q)
    poses = {model.base_frame: np.eye(4)}
    for f in tree:
        local = np.eye(4)
        if f.moving:
            i = moving.index(f)
            local[:3, :3], local[:3, 3] = transforms.R[i], transforms.p[i]
        else:
            local[:3, :3] = transforms3d.euler.euler2mat(*f.rpy, axes='sxyz')
            local[:3, 3] = f.xyz
        poses[f.child] = poses[f.parent] @ local
    return poses[frame][:3, 3]


def random_state(model, rng):
    """Joints anywhere in (-pi, pi), elastic coordinates of a few mm, any velocities."""
    n = model.n_joints
    q, v = np.zeros(model.nq), rng.uniform(-1.0, 1.0, model.nv)
    q[:n] = rng.uniform(-np.pi, np.pi, n)
    q[n:] = rng.uniform(-5e-3, 5e-3, model.nq - n)
    v[n:] *= 0.1
    return q, v


def still_row(frame):
    """A program of one tcp row on ``frame`` at the origin: phi is the frame's position."""
    return {'gains': {'alpha': 5.0},
            'rows': [{'type': 'tcp', 'frame': frame,
                      'reference': {'type': 'constant', 'value': [0.0, 0.0, 0.0]}}]}


def test_the_row_is_the_frames_tf_position_with_its_jacobian_and_drift(model):
    """At random states: phi of a row at the origin is the frame's TF position; J = dp/dq
    and bias = J' v by central differences, each to 1e-6 (module doc)."""
    rng = np.random.default_rng(7)
    for frame in FRAMES[model.name]:
        program = parse_program(model, still_row(frame), 'p').program
        assert isinstance(program, FramePointProgram)
        for _ in range(3):
            q, v = random_state(model, rng)
            program.evaluate(0.0, q, v)
            phi, J, bias = program.phi.copy(), program.jacobian.copy(), program.bias.copy()
            np.testing.assert_allclose(phi, tf_position(model, q, frame), atol=1e-12)
            steps = np.eye(model.nv) * STEP
            numeric = np.array([program.evaluate(0.0, q + e, v).phi.copy()
                                - program.evaluate(0.0, q - e, v).phi for e in steps]).T
            np.testing.assert_allclose(J, numeric / (2 * STEP), atol=1e-6)
            ahead = program.evaluate(0.0, q + STEP * v, v).jacobian.copy()
            behind = program.evaluate(0.0, q - STEP * v, v).jacobian
            np.testing.assert_allclose(bias, (ahead - behind) @ v / (2 * STEP), atol=1e-6)


def test_the_default_frame_is_the_tool_frame_and_axes_select_rows(model):
    """Without ``frame`` the row is on the model's tool_frame (the URDF's tip link, or the
    one the description adds); ``axes`` keeps those base components, in its order."""
    rng = np.random.default_rng(3)
    q, v = random_state(model, rng)
    parsed = parse_program(model, {'gains': {'alpha': 5.0}, 'rows': [
        {'type': 'tcp', 'axes': ['z', 'x'],
         'reference': {'type': 'constant', 'value': [0.0, 0.0]}}]}, 'p')
    assert parsed.row_names == [f'{model.tool_frame}_z', f'{model.tool_frame}_x']
    phi = parsed.program.evaluate(0.0, q, v).phi
    np.testing.assert_allclose(phi, tf_position(model, q, model.tool_frame)[[2, 0]],
                               atol=1e-12)


@pytest.mark.parametrize('frame', ['tool9', 'base_link', 'world', 3])
def test_a_frame_the_model_does_not_move_is_refused_listing_the_frames(frame):
    """A name not in the description, the base frame (fixed: no joint moves it), the
    world, a number: one line naming the field and listing the frames a row may take."""
    ur5e = load_model(os.path.join(CONFIG, 'models', 'ur5e_flexible_forearm.yaml'))
    with pytest.raises(ConfigError) as refused:
        parse_program(ur5e, still_row(frame), 'p')
    text = str(refused.value)
    assert '\n' not in text
    assert re.match(rf"^p\.rows\[0\]\.frame: unknown frame {re.escape(repr(frame))} "
                    r"\(known: shoulder_link, .*, flange, tool0\)$", text), text
    assert 'base_link_inertia' not in text       # fixed to the base


def test_a_tcp_past_a_flexible_link_is_redefined_on_request():
    """The demo's tool0 on its flexible forearm's tip (a servo realization, as
    test_program_controller.py's tip point): refused as non-minimum phase with the lambda
    limit under ``non_minimum_phase: refuse``; ``redefine``, and the policy not given
    under realization auto, substitute the frame's redefined output at 0.8 lambda*, on the
    same frame, path and axes."""
    flexible = load_model(os.path.join(CONFIG, 'models', 'two_link_flexible.yaml'))
    circle = {'type': 'circle', 'center': [0.55, 0.25], 'radius': 0.1, 'rate': 2.0}
    program = {'gains': {'alpha': 10.0},
               'rows': [{'type': 'tcp', 'axes': ['x', 'y'], 'reference': circle}]}
    settings = ControllerSettings(period=0.002, control_modes=1, uncertainty=EXACT_MODEL,
                                  analysis_positions=[-0.3, 1.5])
    with pytest.raises(ConfigError) as refused:
        ProgramController(flexible, {'tip': dict(program, non_minimum_phase='refuse')},
                          settings)
    text = str(refused.value)
    assert 'NON-MINIMUM PHASE' in text
    limit = float(text.split('for lambda < ')[1].split(':')[0])
    for policy, automatic in (('redefine', False), (None, True)):
        spec = program if policy is None else dict(program, non_minimum_phase=policy)
        entry = ProgramController(flexible, {'tip': spec}, settings).entry
        assert entry.row_names == ['tool0_lambda_x', 'tool0_lambda_y']
        assert entry.program.lambdas[0] == pytest.approx(0.8 * limit, rel=1e-3)
        assert entry.program.point.offset.tolist() == [0.0, 0.0, 0.0]
        assert ('substituted (auto: non_minimum_phase not given) for the tcp row (rows[0])'
                in entry.notes[0]) == automatic, entry.notes
    written = parse_program(flexible, dict(program, rows=[dict(program['rows'][0],
                                                               **{'lambda': 0.3})]), 'p')
    row, = written.rows
    assert not row.redefinable                # a redefined output is not redefined again
    scaled = row.scaled(0.5, flexible, 'p.rows[0]')     # the robustness retry's smaller lambda
    assert scaled.labels == ['tool0_lambda_x', 'tool0_lambda_y']
    assert scaled.program.lambdas.tolist() == [0.15, 0.15]
    assert scaled.program.reference is row.program.reference


def tcp_line(name, row, **settings):
    """Close the loop on the line of `test_a_flexible_arm_keeps_its_tcp_on_a_line_with_the_
    default_settings` with its tcp row's other keys ``row`` and the controller's
    ``settings`` (beside 2 ms and 1 period of delay); return (law, hold run, line run,
    sag offset [m] of the redefined output at the lambda admitted), printing the figures.

    The line's path is evaluated on the plant's TCP, the sag as that test's docstring says.
    """
    model = load_model(os.path.join(CONFIG, 'models', f'{name}.yaml'))
    rest, n, period, duration = np.array(ARMS[name]), model.n_joints, 0.002, 2.0
    q0 = model.neutral_configuration().astype(float)
    q0[:n] = rest
    q0 = static_equilibrium(model, q0)
    where = frame_on_link(model, model.tool_frame, 'tcp')
    tcp = FramePointProgram(model, *where, ConstantReference(np.zeros(3)))
    start = tcp.evaluate(0.0, q0, np.zeros(model.nv)).phi.copy()
    end = start + [0.0, 0.03, -0.02]
    joints = list(model.joint_names)
    held = joints[3:] if n == 6 else [joints[2]] + joints[4:]
    line = {'type': 'line', 'start': start.tolist(), 'end': end.tolist(),
            'duration': duration}
    programs = {'hold': {'gains': {'alpha': 6.0}, 'rows': [{'type': 'hold',
                                                            'joints': joints}]},
                'line': {'gains': {'alpha': 6.0}, 'rows': [
                    dict(row, type='tcp', reference=line),
                    {'type': 'hold', 'joints': held}]}}
    law = ProgramController(model, programs, ControllerSettings(
        period=period, delay_periods=1, **settings), 'hold')
    assert law.entries['line'].row_names[:3] == [f'{model.tool_frame}_lambda_{a}'
                                                 for a in 'xyz']
    lam = float(law.entries['line'].program.programs[0].lambdas[0])
    sim = Simulation(model, period / 4, 'rk4', q0=q0)
    law.enable()
    delay = DelayLine(model.nu, 1)
    hold = run_lockstep(law, sim, 1.0, period, True, input_delay=delay)
    law.switch('line')
    path = FramePointProgram(model, *where, law.entries['line'].program.programs[0].reference)
    began = sim.time

    def tcp_error(controller, simulation):
        return float(np.linalg.norm(path.evaluate(simulation.time - began, simulation.q,
                                                  simulation.v).phi))
    run = run_lockstep(law, sim, duration + 1.0, period, True, residual=tcp_error,
                       input_delay=delay)
    twin = FramePointProgram(model.rigid_twin(), *where, ConstantReference(np.zeros(3)))
    sag = np.linalg.norm(twin.evaluate(0.0, link_angle_output(model, lam) @ sim.q,
                                       np.zeros(n)).phi
                         - tcp.evaluate(0.0, sim.q, np.zeros(model.nv)).phi)
    print(f'{name}: lambda {lam:.4g}, TCP error RMS {run.rms * 1e3:.3f} mm, peak '
          f'{run.peak * 1e3:.3f} mm, final {run.residual[-1] * 1e3:.3f} mm, sag offset '
          f'{sag * 1e3:.3f} mm')
    return law, hold, run, sag


def assert_on_the_line(hold, run, sag):
    """No fault; the final TCP error is the sag offset to 0.1 mm, its RMS below 2 mm."""
    assert not hold.fault and not run.fault, (hold.fault, run.fault)
    assert 2e-4 < sag < 1.5e-3
    assert abs(run.residual[-1] - sag) < 1e-4
    assert run.rms < 2e-3, run.rms


@pytest.mark.parametrize('name', sorted(ARMS))
def test_a_flexible_arm_keeps_its_tcp_on_a_line_with_the_default_settings(name):
    """UR5e and Panda model files at 2 ms, 1 period of input delay, default settings (auto:
    the checks pick the law): 1 s held, then the TCP on a 36 mm line (3 cm sideways, 2 cm
    down) in 2 s of quintic timing (peak speed 34 mm/s, under 0.1 rad/s at the joints: a
    tenth of the URDFs' velocity limits and far below the forearm's first mode, 23 Hz) with
    the wrist joints (UR5e; the Panda's joints 3, 5-7) held, then 1 s at the end.

    The TCP past the flexible forearm is non-minimum phase (its admission message offers
    lambda < ~0.09 at 2 ms): the row gives its redefined output, lambda = 0.07. That output
    is the rigid twin's TCP at y = C q, which does not see the forearm's static sag under
    the wrist and tool: at rest the plant's TCP is off it by |p(q) - p_twin(C q)|, ~0.6 mm
    (F L^3 / 3 EI ~ 0.3 mm at the forearm's tip, its slope F L^2 / 2 EI ~ 1.2 mrad over the
    ~0.2 m to the TCP). Asserted, on the plant's own state (not the controller's residual):
    no fault; at the end the TCP's error is that sag offset to 0.1 mm; and over the run its
    RMS against the path is below 2e-3 m, the sag plus the tracking of a slow path
    (test_arms.py's 2e-3 rad joint residual, for faster sinusoids, is ~1 mm at this reach).
    """
    law, hold, run, sag = tcp_line(name, {'lambda': 0.07},
                                   analysis_positions=ARMS[name])
    assert law.entries['line'].program.programs[0].lambdas[0] == 0.07
    assert_on_the_line(hold, run, sag)


def test_a_tcp_line_without_lambda_is_redefined_by_auto_and_tracked():
    """The UR5e's line of the test above with nothing but the period and the delay given:
    no ``lambda`` on the row, no ``non_minimum_phase``, no analysis_positions (the checks
    solve the program's start from the default analysis pose). Under realization auto the
    program, refused as is (its TCP non-minimum phase), is redefined: its tcp row only, at
    0.8 x the limit the check computes (the limit ~0.1 there: lambda ~0.08; model
    following, as the servo law refuses the hold program), the hold row kept; the note says
    which rows. Tracked as the test above, to the same bounds.
    """
    law, hold, run, sag = tcp_line('ur5e_flexible_forearm', {})
    entry = law.entries['line']
    note, = [note for note in entry.notes if 'Redefined output substituted' in note]
    assert ('(auto: non_minimum_phase not given) for the tcp row (rows[0]) with lambda = '
            in note and 'the hold row (rows[1]) kept' in note), note
    assert 'lambda_point' not in note.split('Redefined output substituted')[1]
    lam = entry.program.programs[0].lambdas[0]
    limit = float(note.split('the limit ')[1].split(')')[0])
    assert lam == pytest.approx(0.8 * limit, rel=1e-3) and 0.05 < lam < 0.1
    assert entry.row_names[3:] == ['wrist_1_joint', 'wrist_2_joint', 'wrist_3_joint']
    assert_on_the_line(hold, run, sag)


def test_auto_names_the_program_an_alternative_law_refuses():
    """Two programs on the UR5e at 2 ms, 1 period of delay: every joint held (refused by
    the servo law on the flexible model: its sampled loop unstable) and the TCP on a line
    with ``non_minimum_phase: refuse`` (refused under every law auto knows: its output is
    non-minimum phase). Auto's alternatives admit the first; model following refuses the
    second: the refusal leads with that program and its reason, not the first's.
    """
    model = load_model(os.path.join(CONFIG, 'models', 'ur5e_flexible_forearm.yaml'))
    joints = list(model.joint_names)
    q = model.neutral_configuration().astype(float)
    q[:model.n_joints] = analysis_pose(model)       # where the checks solve the start
    tcp = FramePointProgram(model, *frame_on_link(model, model.tool_frame, 'tcp'),
                            ConstantReference(np.zeros(3)))
    start = tcp.evaluate(0.0, q, np.zeros(model.nv)).phi
    line = {'type': 'line', 'start': start.tolist(), 'end': (start + [0.0, 0.03, 0.0]).tolist(),
            'duration': 2.0}
    programs = {'hold': {'gains': {'alpha': 6.0}, 'rows': [{'type': 'hold',
                                                            'joints': joints}]},
                'line': {'gains': {'alpha': 6.0}, 'non_minimum_phase': 'refuse',
                         'rows': [{'type': 'tcp', 'reference': line},
                                  {'type': 'hold', 'joints': joints[3:]}]}}
    with pytest.raises(ConfigError) as refused:
        ProgramController(model, programs, ControllerSettings(period=0.002,
                                                              delay_periods=1))
    text = str(refused.value)
    assert text.startswith('programs: line: refused'), text
    assert 'NON-MINIMUM PHASE' in text.split('; auto:')[0]
    assert '(auto: under model following' in text
    assert 'programs: hold: refused' in text.split('the others refused: ')[1]
