"""Identification of elastic parameters from a recording (`flexible_manipulator.identification`).

Expected values come from the recordings themselves: each is made by the package's own
simulation with known parameters (the model files' values) and Gaussian sensor noise of a
stated size (`recording.synthetic`, through the recorder's writer; one over real DDS from
the plant node and the recorder), driven by a multisine effort. The fit starts from a
model file whose fitted numbers are off the truth by stated factors, and must come back
to the truth: within 2 % for bending stiffness, damping and payload mass on the
floating-frame arm (config/models/two_link_flexible.yaml) and on a Cosserat arm
(config/models/two_link_soft.yaml with bending to order 2 only); its 95 % intervals must
cover the truth as often as their level says over 40 noise draws (the binomial band). A
set the recording cannot determine (the elbow's mass at the upper arm's tip beside the
upper arm's payload there: one point mass; any parameter of an arm that never moves) is
refused naming the parameters. Bad input is one line naming the problem, exit status 2,
nothing written.

A model file of ``urdf:`` (config/models/ur5e_flexible_forearm.yaml): its paths name the
``flexible:`` blocks, the URDF links' inertials, the payload and the armature; a recording
of the UR5e-like arm made with the forearm's EI x1.15 and the upper arm's mass x1.1 (the
URDF's 8.058 kg), its stamps jittered as a real driver's, gives both back within their
reported intervals, and ``--write`` puts them into the model file (the inertial as a new
``inertials:`` entry), never into the URDF. Lost states (their effort held over the cycle
before) and a ``ros2 bag record -s mcap`` directory (the same messages split over files)
are read; the directory gives the fit of the single file, bit for bit.
"""

import os
import re
import subprocess
import sys

import numpy as np
import pytest
import yaml

from conftest import CONFIG, NodeProcess, PLANT

from flexible_manipulator import identification
from flexible_manipulator.identification import cli, fit as fitting, parameters
from flexible_manipulator.model_config import load_model, load_yaml, model_from_dict

FLEXIBLE = os.path.join(CONFIG, 'models', 'two_link_flexible.yaml')
SOFT = os.path.join(CONFIG, 'models', 'two_link_soft.yaml')
UR5E = os.path.join(CONFIG, 'models', 'ur5e_flexible_forearm.yaml')
RECORDER = 'flexible_manipulator.recording.recorder'
ELASTIC = ('forearm.beam.bending_stiffness', 'forearm.beam.damping_ratio',
           'forearm.payload.mass')

# One flexible link of the demo arm on its motor, in the horizontal plane: the small model
# of the repeated-draw and command-line tests (a few ms a replay).
ONE_LINK = '''\
# One flexible link (two_link_flexible's forearm) on a motor, horizontal plane.
name: one_link_flexible
type: serial_chain
links:
  - name: forearm
    joint: {name: elbow, axis: [0, 0, 1], damping: 0.02, armature: 0.005, effort_limit: 5.0,
            velocity_limit: 8.0}
    length: 0.4
    mass: 0.1                         # motor flange [kg]
    inertia: [5.0e-5, 5.0e-5, 5.0e-5, 0, 0, 0]
    beam:
      linear_density: 0.243
      bending_stiffness: [4.725, 472.5]   # in plane, out of plane [N m^2]
      modes: [2, 0]
      damping_ratio: 0.005            # of every mode
    payload:
      mass: 0.1                       # the tool [kg]
      inertia: [2.0e-5, 2.0e-5, 2.0e-5, 0, 0, 0]
'''


# The demo arm's forearm off the model file: EI x1.1, damping ratio x1.3, payload x0.9.
FOREARM_OFF = [('bending_stiffness: [4.725, 472.5]', 'bending_stiffness: [5.1975, 519.75]'),
               ('damping_ratio: 0.005', 'damping_ratio: 0.0065'),
               ('mass: 0.1\n      inertia: [2', 'mass: 0.09\n      inertia: [2')]


def scaled(text, link, replacements):
    """The model file ``text`` with, in ``link``'s entry, each 'old' replaced by 'new'."""
    start = text.index(f'- name: {link}')
    end = text.find('\n  - name:', start + 1)
    end = len(text) if end < 0 else end
    block = text[start:end]
    for old, new in replacements:
        assert block.count(old) == 1, old
        block = block.replace(old, new)
    return text[:start] + block + text[end:]


def record(path, model, seconds, amplitude, band, noise, step, integrator='rk4', seed=0,
           q0=None):
    """A synthetic recording of ``model`` under a multisine effort (module doc)."""
    from flexible_manipulator.recording import synthetic
    count = int(round(seconds / 0.002))
    efforts = synthetic.multisine(count, 0.002, amplitude, np.linspace(*band), seed=1)
    synthetic.record_simulation(str(path), model, efforts, 0.002, step, integrator, q0=q0,
                                noise=noise, seed=seed)
    return str(path)


def test_parameter_paths_name_the_model_files_numbers(tmp_path):
    """Paths resolve to the file's numbers (a list as one factor, an entry, siblings with
    '+'); every path the file cannot give is refused naming it; `rewrite` changes only the
    fitted numbers' characters (expected: every other line of the file, comments too, is
    unchanged) and the rewritten file loads to a model with the new values."""
    text = open(FLEXIBLE).read()
    spec = yaml.safe_load(text)
    found = parameters.parse('forearm.beam.bending_stiffness,forearm.payload.mass,'
                             'upper_arm.joint.damping,upper_arm.beam.bending_stiffness[0]',
                             spec)
    assert found[0].vector and list(found[0].start) == [4.725, 472.5]
    assert found[1].start == 0.1 and found[2].start == 0.02 and found[3].start == 4.725
    soft = parameters.parse('forearm.rod.material.young_modulus+shear_modulus',
                            load_yaml(SOFT))[0]
    assert list(soft.start) == [2.0e6, 6.667e5]
    for path, message in (
            ('wrist.mass', "no link 'wrist' in the model (links: upper_arm, forearm)"),
            ('forearm.beam.damping', "has no field 'damping' in the model file (did you "
                                     "mean 'damping_ratio'?"),
            ('forearm.beam.modes', 'a count, not a physical parameter'),
            ('forearm.joint.name', "is 'elbow' in the model file, not a number"),
            ('forearm.com', 'is 0 in the model file'),
            ('forearm.beam.bending_stiffness[2]', 'has no entry 2'),
            ('forearm', 'expected <link>.<field>')):
        with pytest.raises(parameters.ParameterError, match=re.escape(message)):
            parameters.parse(path, spec)
    with pytest.raises(parameters.ParameterError, match='scales a number'):
        parameters.parse('forearm.beam.bending_stiffness[0],forearm.beam.bending_stiffness',
                         spec)
    factors = [1.1, 0.5, 2.0, 0.9]
    written = parameters.rewrite(text, found, factors)
    changed = [(a, b) for a, b in zip(text.splitlines(), written.splitlines()) if a != b]
    assert len(text.splitlines()) == len(written.splitlines()) and len(changed) == 4
    assert ('      bending_stiffness: [5.1975, 519.75]' in written
            and '      bending_stiffness: [4.2525, 472.5]' in written)
    model = model_from_dict(yaml.safe_load(written))
    expected = model_from_dict(parameters.applied(spec, found, factors))
    np.testing.assert_allclose(model.elastic_coefficients()[0],
                               expected.elastic_coefficients()[0], rtol=1e-12)
    assert yaml.safe_load(written)['links'][1]['payload']['mass'] == 0.05


@pytest.fixture(scope='module')
def flexible_recording(tmp_path_factory):
    """1.5 s of the demo arm (rk4 at 1 ms) under efforts up to 1 and 0.5 N m over
    0.25-20 Hz; noise: joints 2e-4 rad and 2e-3 rad/s, modes 2e-5 m and 2e-3 m/s."""
    noise = {'joint_position': 2e-4, 'joint_velocity': 2e-3, 'modal_position': 2e-5,
             'modal_velocity': 2e-3}
    return record(tmp_path_factory.mktemp('flexible') / 'run.mcap', load_model(FLEXIBLE),
                  1.5, [1.0, 0.5], (0.25, 20.0, 40), noise, 0.001)


@pytest.mark.parametrize('signals', ['joints and modes', 'joints'])
def test_the_flexible_arm_s_forearm_is_recovered_within_2_percent(
        flexible_recording, tmp_path, signals):
    """From a model file with the forearm's EI x1.1, damping ratio x1.3 and payload x0.9,
    the fit to the joint and modal states, or to the joint states alone (the windows'
    elastic starts then estimated), returns the file's values within 2 %, each well inside
    (> 3 standard errors from) that bound, and no signal's residual is colored at a
    family-wise false-alarm rate of 0.1 % (the command's 5 % would fail one correct fit in
    twenty)."""
    start = tmp_path / 'start.yaml'
    start.write_text(scaled(open(FLEXIBLE).read(), 'forearm', FOREARM_OFF))
    result = identification.identify(flexible_recording, str(start), ','.join(ELASTIC),
                                     step=0.001, modal_topic=None if signals == 'joints'
                                     else '/modal_states')
    truth = {'forearm.beam.bending_stiffness': 4.725, 'forearm.beam.damping_ratio': 0.005,
             'forearm.payload.mass': 0.1}
    for estimate in result.estimates:
        value = np.atleast_1d(estimate.value)[0]
        error = value / truth[estimate.path] - 1.0
        relative_std = estimate.std / estimate.factor
        assert abs(error) < 0.02 and relative_std < 0.02 / 3, (estimate, error)
    assert len(result.data.signals) == (4 if signals == 'joints' else 16)
    assert result.outcome.converged
    white = 1e-3 / len(result.data.signals)
    assert all(p >= white for _, p, _ in result.outcome.whiteness), result.report()


def test_a_cosserat_arm_s_forearm_is_recovered_within_2_percent(tmp_path):
    """The soft arm (two_link_soft.yaml, its rods bending to order 2, vertical plane:
    the arm falls and swings under gravity and a multisine effort; rosenbrock3 at 2 ms as
    in config/sim_soft.yaml), recorded 1.5 s with noise 1e-3 rad, 1e-2 rad/s on the joints
    and 1e-2 1/m, 1e-1 1/(m s) on the strains; from a file with the forearm's material
    stiffness (E and G) x1.1, Kelvin-Voigt time x1.1 and payload x1.1, the fit returns the
    file's values within 2 %, well inside that bound."""
    from flexible_manipulator.mechanics.equilibrium import static_equilibrium
    text = open(SOFT).read().replace('strains: {bending_y: 4, extension: 1, shear_z: 1}',
                                     'strains: {bending_y: 2}')
    truth = tmp_path / 'soft.yaml'
    truth.write_text(text)
    model = load_model(str(truth))
    noise = {'joint_position': 1e-3, 'joint_velocity': 1e-2, 'modal_position': 1e-2,
             'modal_velocity': 1e-1}
    path = record(tmp_path / 'soft.mcap', model, 1.5, [1.0, 0.3], (0.25, 10.0, 30), noise,
                  0.002, 'rosenbrock3', q0=static_equilibrium(model,
                                                              model.neutral_configuration()))
    start = tmp_path / 'start.yaml'
    start.write_text(scaled(text, 'forearm', [
        ('young_modulus: 2.0e+6, shear_modulus: 6.667e+5',
         'young_modulus: 2.2e+6, shear_modulus: 7.3337e+5'),
        ('damping_time: 0.01', 'damping_time: 0.011'),
        ('mass: 0.02\n      inertia: [2', 'mass: 0.022\n      inertia: [2')]))
    result = identification.identify(
        path, str(start), 'forearm.rod.material.young_modulus+shear_modulus,'
        'forearm.rod.damping_time,forearm.payload.mass', integrator='rosenbrock3')
    assert result.step == 0.002
    for estimate, value in zip(result.estimates, (2.0e6, 0.01, 0.02)):
        error = np.atleast_1d(estimate.value)[0] / value - 1.0
        assert abs(error) < 0.02 and estimate.std / estimate.factor < 0.02 / 3, estimate


@pytest.mark.slow
def test_the_intervals_cover_the_truth_at_their_level(tmp_path):
    """40 noise draws on one flexible link (0.8 s, rk4 at 2 ms, one window; noise 1e-4 rad,
    1e-3 rad/s, 1e-5 m, 1e-3 m/s), fitted from the truth: each parameter's 95 % interval
    covers the truth in at least 34 of 40 draws (binomial(40, 0.95): P(at most 33) =
    0.34 %), and the reported standard errors match the estimates' spread over the draws
    (ratio in [0.7, 1.4]: the sample standard deviation of 40 draws is within +-29 % of
    the true one with probability 0.99)."""
    model_path = tmp_path / 'one_link.yaml'
    model_path.write_text(ONE_LINK)
    model = load_model(str(model_path))
    noise = {'joint_position': 1e-4, 'joint_velocity': 1e-3, 'modal_position': 1e-5,
             'modal_velocity': 1e-3}
    covered, estimates, errors = np.zeros(3), [], []
    for draw in range(40):
        path = record(tmp_path / 'draw.mcap', model, 0.8, [0.3], (0.5, 40.0, 40), noise,
                      0.002, seed=draw)
        result = identification.identify(path, str(model_path), ','.join(ELASTIC),
                                         window=0.8)
        covered += [low <= 1.0 <= high for low, high in (e.interval for e in result.estimates)]
        estimates.append([e.factor for e in result.estimates])
        errors.append([e.std for e in result.estimates])
    assert result.integrator == 'rk4' and result.step == 0.002 and len(result.windows) == 1
    assert np.all(covered >= 34), covered
    ratio = np.std(estimates, axis=0, ddof=1) / np.mean(errors, axis=0)
    assert np.all((ratio > 0.7) & (ratio < 1.4)), ratio


@pytest.fixture(scope='module')
def short_recording(tmp_path_factory):
    """0.5 s of the demo arm under the multisine, noise 1e-4 rad, 1e-3 rad/s, 1e-5 m."""
    noise = {'joint_position': 1e-4, 'joint_velocity': 1e-3, 'modal_position': 1e-5}
    return record(tmp_path_factory.mktemp('short') / 'run.mcap', load_model(FLEXIBLE), 0.5,
                  [1.0, 0.5], (0.25, 20.0, 40), noise, 0.001)


def test_a_set_the_recording_cannot_determine_is_refused_naming_it(short_recording,
                                                                   tmp_path, capsys):
    """The forearm's mass sits at the upper arm's tip, where the upper arm's payload is:
    one point mass, so only their sum is seen (expected: their scaled sensitivities equal
    up to the difference quotients' error, condition number far above 1e4); an arm at rest
    (zero efforts: no link moves) gives no parameter any effect. Both are refused with
    exit status 3, naming the parameters, and no number is printed; a determinable set of
    the same recording passes the same check (condition number below 100)."""
    code = cli.main([short_recording, '--model', FLEXIBLE, '--fit',
                     'upper_arm.payload.mass,forearm.mass', '--no-figures'])
    captured = capsys.readouterr()
    assert code == 3 and captured.out == ''
    line, = captured.err.splitlines()
    assert line.startswith('identify: refused at the start value: upper_arm.payload.mass, '
                           'forearm.mass: their effects on the recorded signals cannot be '
                           'told apart (scaled sensitivity rank 1 of 2, condition number ')
    assert float(re.search(r'condition number (\S+) >', line).group(1)) > 1e5
    still = record(tmp_path / 'still.mcap', load_model(FLEXIBLE), 0.2, [0.0, 0.0],
                   (1.0, 2.0, 2), {'joint_position': 1e-4}, 0.001)
    code = cli.main([still, '--model', FLEXIBLE, '--fit', 'forearm.payload.mass',
                     '--no-figures'])
    line, = capsys.readouterr().err.splitlines()
    assert code == 3 and line.startswith('identify: refused at the start value: '
                                         'forearm.payload.mass: no measurable effect')
    spec = load_yaml(FLEXIBLE)
    model = model_from_dict(spec)
    from flexible_manipulator.identification import measurements
    data = measurements.read(short_recording, model, spec)
    replay = fitting.Replay(spec, FLEXIBLE, parameters.parse(','.join(ELASTIC), spec), data,
                            measurements.windows(data.times, 1.0), 'rk4', 0.001)
    problem = fitting.Problem(replay, 16)
    z = np.concatenate([np.ones(3), fitting.start_states(replay, 16).ravel()])
    weights = 1.0 / fitting.noise_level(data.values)[replay.row_signal]
    jacobian = -problem.derivatives(z) * weights[:, None]
    assert fitting.conditioning(fitting.project_starts(jacobian, problem)[0],
                                np.ones(3)).condition < 100


def test_bad_input_is_one_line_exit_2_and_nothing_written(short_recording, tmp_path, capsys):
    """Each bad input: exit status 2, one line on stderr naming the problem, no figure
    directory, the --write target not created (expected messages: the module's own)."""
    from flexible_manipulator.recording.writer import write_messages
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String
    no_joints = str(tmp_path / 'no_joints.mcap')
    write_messages(no_joints, [('/robot_description', String(data='<robot/>'), 0)])
    no_effort = str(tmp_path / 'no_effort.mcap')
    messages = []
    for k in range(20):
        state = JointState(name=['shoulder', 'elbow'], position=[0.0, 0.1 * k])
        state.header.stamp.nanosec = 2_000_000 * k
        messages.append(('/joint_states', state, k))
    write_messages(no_effort, messages)
    backwards = str(tmp_path / 'backwards.mcap')
    for message in messages:
        message[1].effort = [0.0, 0.0]
    messages[10][1].header.stamp.nanosec = 1_000_000
    write_messages(backwards, messages)
    ur5e = str(tmp_path / 'ur5e.yaml')         # its URDF by an absolute path: written anywhere
    with open(ur5e, 'w') as stream:
        stream.write(open(UR5E).read().replace(
            'urdf: ../urdf/', f'urdf: {os.path.join(CONFIG, "urdf")}/'))
    sqlite = tmp_path / 'sqlite_bag'
    sqlite.mkdir()
    (sqlite / 'metadata.yaml').write_text(
        'rosbag2_bagfile_information:\n  version: 8\n  storage_identifier: sqlite3\n'
        '  relative_file_paths: [sqlite_bag_0.db3]\n')
    spatial = os.path.join(CONFIG, 'models', 'three_link_spatial_flexible.yaml')
    target, out = str(tmp_path / 'written.yaml'), str(tmp_path / 'figures')
    cases = [
        ([str(tmp_path / 'missing.mcap'), '--model', FLEXIBLE, '--fit', ELASTIC[0]],
         f"no recording '{tmp_path / 'missing.mcap'}'"),
        ([short_recording, '--model', str(tmp_path / 'nope.yaml'), '--fit', ELASTIC[0]],
         'cannot read model file'),
        ([no_joints, '--model', FLEXIBLE, '--fit', ELASTIC[0]],
         'no /joint_states in the recording'),
        ([no_effort, '--model', FLEXIBLE, '--fit', ELASTIC[0]],
         'has no applied efforts'),
        ([short_recording, '--model', spatial, '--fit', 'forearm.beam.damping_ratio'],
         "/joint_states names ['shoulder', 'elbow'], the model's joints are ['waist', "
         "'shoulder', 'elbow'] (missing ['waist'])"),
        ([short_recording, '--model', FLEXIBLE, '--fit', 'forearm.beam.stiffness'],
         "forearm.beam.stiffness: forearm.beam has no field 'stiffness'"),
        ([backwards, '--model', FLEXIBLE, '--fit', ELASTIC[0]],
         '/joint_states: the stamps go back in time after t = 0.018000 s'),
        ([short_recording, '--model', ur5e, '--fit', 'forearm_link.beam.stiffness'],
         "forearm_link.beam.stiffness: forearm_link.beam has no field 'stiffness'"),
        ([short_recording, '--model', ur5e, '--fit', 'elbow.mass'],
         "elbow.mass: no link 'elbow' in the URDF (its links: base_link, "),
        ([short_recording, '--model', UR5E, '--fit', 'payload.mass'],
         "the model file's urdf: ../urdf/ur5e_like.urdf is relative to its own directory"),
        ([str(sqlite), '--model', FLEXIBLE, '--fit', ELASTIC[0]],
         "storage_identifier 'sqlite3': only MCAP bags are read"),
        ([short_recording, '--model', FLEXIBLE, '--fit', ELASTIC[0], '--integrator', 'rk4',
          '--step', '0.002'], 'the model cannot replay the recording with rk4 at 0.002 s: '),
        ([short_recording, '--model', FLEXIBLE, '--fit', ELASTIC[0], '--window', '-1'],
         '--window: expected a length > 0 s'),
        ([short_recording, '--model', FLEXIBLE], 'the following arguments are required: --fit'),
    ]
    for arguments, message in cases:
        code = run(arguments + ['--write', target, '--out', out])
        captured = capsys.readouterr()
        assert code == 2 and captured.out == '', (arguments, captured)
        line, = captured.err.splitlines()
        assert line.startswith('identify: ') and message in line, (message, line)
        assert not os.path.exists(target) and not os.path.exists(out)


def run(arguments):
    """`cli.main`'s exit status, whether returned or raised (argparse's errors)."""
    try:
        return cli.main(arguments)
    except SystemExit as exit:
        return exit.code


def test_the_command_prints_draws_and_writes_the_model(tmp_path, capsys):
    """`identify` on a one-link recording from a file with EI x1.1: it prints a row per
    parameter with its estimate and 95 % interval, a row per signal with its RMS and
    whiteness; it draws one PNG per signal whose lines are the recording and the replays
    before and after the fit; --write PATH writes the file with the estimates (every other
    line as it was) and leaves the model file alone; without --write nothing is written."""
    truth = tmp_path / 'truth.yaml'
    truth.write_text(ONE_LINK)
    path = record(tmp_path / 'run.mcap', load_model(str(truth)), 0.6, [0.3], (0.5, 40.0, 40),
                  {'joint_position': 1e-4, 'joint_velocity': 1e-3, 'modal_position': 1e-5,
                   'modal_velocity': 1e-3}, 0.002)
    start = tmp_path / 'start.yaml'
    start.write_text(ONE_LINK.replace('[4.725, 472.5]', '[5.1975, 519.75]'))
    written, out = tmp_path / 'fitted.yaml', tmp_path / 'figures'
    code = cli.main([path, '--model', str(start), '--fit', ELASTIC[0] + ',' + ELASTIC[2],
                     '--write', str(written), '--out', str(out)])
    report = capsys.readouterr().out
    assert code == 0 and start.read_text() == ONE_LINK.replace('[4.725, 472.5]',
                                                               '[5.1975, 519.75]')
    row = re.search(r'^forearm\.beam\.bending_stiffness +5\.1975 +(\S+) \[ *(\S+), +(\S+)\]',
                    report, re.M)
    value, low, high = (float(row.group(i)) for i in (1, 2, 3))
    assert low < value < high and abs(value / 4.725 - 1.0) < 0.01
    assert re.search(r'^forearm_y1 velocity +\S+ m/s +Q = \S+, p = \S+: (NOT )?white$',
                     report, re.M)
    fitted = yaml.safe_load(written.read_text())
    stiffness = fitted['links'][0]['beam']['bending_stiffness'][0]
    assert stiffness == pytest.approx(value, rel=1e-5)
    differing = [a for a, b in zip(start.read_text().splitlines(),
                                   written.read_text().splitlines()) if a != b]
    assert len(differing) == 2          # the stiffness and the payload mass lines
    pngs = sorted(os.listdir(out))
    assert pngs == sorted(f'identify_{name}.png' for name in (
        'elbow_position', 'elbow_velocity', 'forearm_y1_position', 'forearm_y2_position',
        'forearm_y1_velocity', 'forearm_y2_velocity'))
    from flexible_manipulator.identification import plots
    result = identification.identify(path, str(start), ELASTIC[0] + ',' + ELASTIC[2])
    drawn = plots.draw(result, str(tmp_path / 'again'))
    top, bottom = drawn['identify_elbow_velocity'][1].axes
    recorded, before, after = top.lines[:3]
    np.testing.assert_array_equal(recorded.get_ydata(), result.data.values[:, 1])
    np.testing.assert_array_equal(before.get_ydata(), result.outcome.before[:, 1])
    np.testing.assert_array_equal(after.get_ydata(), result.outcome.after[:, 1])
    np.testing.assert_array_equal(bottom.lines[0].get_ydata(), result.outcome.residual[:, 1])
    code = cli.main([path, '--model', str(start), '--fit', ELASTIC[2], '--no-figures'])
    assert code == 0 and sorted(os.listdir(tmp_path)) == sorted(
        ['truth.yaml', 'run.mcap', 'start.yaml', 'fitted.yaml', 'figures', 'again'])


def test_a_wrong_model_leaves_a_residual_that_is_not_white(tmp_path):
    """The one-link recording, its EI and payload fitted with a model whose joint
    friction is 5 times the recording's (and not fitted): the joints' residual then carries
    the unmodelled torque, which the Ljung-Box test flags (expected: p far below the 5 %
    family-wise level), where the right model's residuals are white. With the damping
    ratio fitted too, the fit runs it to 0 to make up for the friction, and is refused."""
    truth = tmp_path / 'truth.yaml'
    truth.write_text(ONE_LINK)
    path = record(tmp_path / 'run.mcap', load_model(str(truth)), 0.6, [0.3], (0.5, 40.0, 40),
                  {'joint_position': 1e-4, 'joint_velocity': 1e-3, 'modal_position': 1e-5,
                   'modal_velocity': 1e-3}, 0.002)
    wrong = tmp_path / 'wrong.yaml'
    wrong.write_text(ONE_LINK.replace('damping: 0.02', 'damping: 0.1'))
    for model, white in ((truth, True), (wrong, False)):
        result = identification.identify(path, str(model), ELASTIC[0] + ',' + ELASTIC[2])
        level = fitting.WHITE_LEVEL / len(result.data.signals)
        p = [p for _, p, _ in result.outcome.whiteness]
        assert (min(p) >= level) == white, result.report()
    assert p[1] < 1e-6                 # the elbow's velocity
    with pytest.raises(identification.Unidentifiable,
                       match='forearm.beam.damping_ratio: the fit ran to 0'):
        identification.identify(path, str(wrong), ','.join(ELASTIC))


@pytest.mark.slow
@pytest.mark.ros
@pytest.mark.timeout(300)
def test_a_recording_of_the_plant_node_over_dds_identifies_its_model(
        domain_id, tmp_path, probe):
    """The plant node (two_link_flexible, lock-step, rk4 at 0.5 ms as config/sim.yaml) and
    the recorder over real DDS; this test answers each joint state with the next multisine
    effort. `identify` (the module's command, in its own process) fits the forearm's EI,
    damping ratio and payload from a file off by x1.1, x1.3, x0.9 to the plant's values:
    the plant's recording is noise-free, so within 1e-4 (expected 0: the same simulation
    replays the same efforts), and the applied-effort convention is the plant's (an error
    of one period would leave a residual far above this)."""
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from flexible_manipulator.recording import synthetic
    path = tmp_path / 'plant.mcap'
    recorder = NodeProcess(RECORDER, domain_id, tmp_path / 'recorder.log', None,
                           [('path', str(path))])
    plant = NodeProcess(PLANT, domain_id, tmp_path / 'plant.log',
                        os.path.join(CONFIG, 'sim.yaml'), [('timing_mode', 'lockstep')])
    efforts = synthetic.multisine(400, 0.002, [1.0, 0.5], np.linspace(0.25, 20.0, 40))
    states = probe.subscribe(JointState, '/joint_states')
    command = probe.publisher(Float64MultiArray, '/effort_controller/commands')
    answered = set()
    try:
        probe.spin_until(lambda: 'recording' in recorder.output() and states, 60,
                         'the recorder and the first state')
        probe.spin_for(1.0)             # the recorder's subscriptions match the plant

        def answer():
            while states:
                state = states.pop(0)
                k = int(round((state.header.stamp.sec + 1e-9 * state.header.stamp.nanosec)
                              / 0.002))
                if k not in answered and k < len(efforts):
                    answered.add(k)
                    command.publish(Float64MultiArray(data=efforts[k].tolist()))
            return len(answered) == len(efforts)
        probe.spin_until(answer, 180, 'the plant to take every effort')
        probe.spin_for(0.5)
    finally:
        plant.stop()
        recorder.stop()
    start = tmp_path / 'start.yaml'
    start.write_text(scaled(open(FLEXIBLE).read(), 'forearm', FOREARM_OFF))
    result = subprocess.run(
        [sys.executable, '-m', 'flexible_manipulator.identification', str(path), '--model',
         str(start), '--fit', ','.join(ELASTIC), '--step', '0.0005', '--write'],
        capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr
    fitted = yaml.safe_load(start.read_text())['links'][1]
    assert fitted['beam']['bending_stiffness'][0] == pytest.approx(4.725, rel=1e-4)
    assert fitted['beam']['damping_ratio'] == pytest.approx(0.005, rel=1e-4)
    assert fitted['payload']['mass'] == pytest.approx(0.1, rel=1e-4)
    assert os.path.isdir(tmp_path / 'plant_identification')


def urdf_arm(directory, text=None):
    """The UR5e-like model file (or ``text``) and its URDF copied into ``directory``, the
    file's relative ``urdf:`` kept (models/ and urdf/ side by side, as in config/)."""
    import shutil
    (directory / 'models').mkdir(exist_ok=True)
    (directory / 'urdf').mkdir(exist_ok=True)
    shutil.copy(os.path.join(CONFIG, 'urdf', 'ur5e_like.urdf'), directory / 'urdf')
    path = directory / 'models' / 'ur5e.yaml'
    path.write_text(open(UR5E).read() if text is None else text)
    return path


def test_urdf_paths_name_the_flexible_blocks_the_inertials_payload_and_armature(tmp_path):
    """On the UR5e-like file: a flexible block's number is the file's, a rigid link's
    inertial the URDF's (its mass 8.058 kg, its inertia entry the URDF's tensor in the link
    frame, `model_config.urdf_inertial`), the payload's and the armature the file's top
    level; a path that names nothing is refused naming it and what exists; an
    ``inertials:`` entry of a link not in the URDF, of a flexible link with a hub, or with
    an unknown field is refused naming it. `rewrite`
    changes only the fitted numbers' characters and adds the inertials as an
    ``inertials:`` entry at the end (expected: every line of the file as it was but the
    fitted ones, then the new block), the URDF untouched; the rewritten file builds the
    model of the parsed file with the factors applied (the same mass matrix)."""
    from flexible_manipulator.model_config import urdf_inertial, urdf_robot
    path = urdf_arm(tmp_path)
    text, urdf = path.read_text(), (tmp_path / 'urdf' / 'ur5e_like.urdf').read_text()
    spec, directory = yaml.safe_load(text), str(tmp_path / 'models')
    robot = urdf_robot(spec, directory)[0]
    found = parameters.parse('forearm_link.beam.bending_stiffness,forearm_link.hub.mass,'
                             'upper_arm_link.mass,wrist_1_link.inertia[0],payload.mass,'
                             'armature', spec, directory)
    assert list(found[0].start) == [2330.0, 2330.0] and found[1].start == 2.65
    assert found[2].start == 8.058
    assert found[3].start == urdf_inertial(robot.links['wrist_1_link'])['inertia'][0]
    assert found[4].start == 1.0 and found[5].start == 0.1
    for bad, message in (
            ('elbow.mass', "no link 'elbow' in the URDF (its links: base_link, base, "),
            ('upper_arm_link.beam.bending_stiffness', 'upper_arm_link is rigid in the model '
             'file (flexible: forearm_link): its numbers are upper_arm_link.mass'),
            ('forearm_link.mass', 'flexible.forearm_link.hub replaces the URDF <inertial> of '
             'forearm_link: fit forearm_link.hub.mass'),
            ('forearm_link.beam.modes', 'a count, not a physical parameter'),
            ('forearm_link.stiffness', "forearm_link has no field 'stiffness' (fields there: "
             'mass, com, inertia, beam, flexible_joint, rod, hub)'),
            ('payload.weight', "payload has no field 'weight'"),
            ('armature.elbow_joint', 'armature is one number for every joint'),
            ('base_link.mass', 'is 0 in the URDF (or the link has no <inertial>)'),
            ('gravity', "no link 'gravity' in the URDF")):
        with pytest.raises(parameters.ParameterError, match='^' + re.escape(bad) + ': .*'
                           + re.escape(message)):
            parameters.parse(bad, spec, directory)
    with pytest.raises(parameters.ParameterError, match='scales a number'):
        parameters.parse('wrist_1_link.inertia[0],wrist_1_link.inertia', spec, directory)
    factors = [1.15, 0.9, 1.1, 0.8, 2.0, 1.5]
    written = parameters.rewrite(text, found, factors)
    old, new = text.splitlines(), written.splitlines()
    changed = [k for (k, a), b in zip(enumerate(old), new) if a != b]
    assert [old[k].split(':')[0].strip() for k in changed] == [
        'armature', 'payload', 'mass', 'bending_stiffness']
    assert new[len(old):] == [
        '# In place of the URDF <inertial> values: mass [kg], com [m], inertia [ixx, iyy, '
        'izz,', "# ixy, ixz, iyz] about the com [kg m^2], in the link's frame.",
        'inertials:', '  upper_arm_link: {mass: 8.8638}',
        '  wrist_1_link: {inertia: [' + ', '.join(
            parameters._text(v) for v in [0.8 * found[3].start] + urdf_inertial(
                robot.links['wrist_1_link'])['inertia'][1:]) + ']}']
    assert (tmp_path / 'urdf' / 'ur5e_like.urdf').read_text() == urdf
    model = model_from_dict(yaml.safe_load(written), 'written', directory)
    expected = model_from_dict(parameters.applied(spec, found, factors), 'applied', directory)
    q = model.neutral_configuration() + 0.3
    np.testing.assert_allclose(model.mass_matrix(model.create_data(), q),
                               expected.mass_matrix(expected.create_data(), q), rtol=1e-6)
    from flexible_manipulator.model_config import ConfigError
    for inertials, message in (({'elbow': {'mass': 1.0}}, "inertials.elbow: no link 'elbow' "
                                'in the URDF'),
                               ({'forearm_link': {'mass': 1.0}}, 'inertials.forearm_link: '
                                'flexible.forearm_link.hub replaces'),
                               ({'upper_arm_link': {'weight': 1.0}}, 'inertials.'
                                "upper_arm_link.weight: unknown field")):
        with pytest.raises(ConfigError, match='^bad: ' + re.escape(message)):
            model_from_dict(dict(spec, inertials=inertials), 'bad', directory)
    again = parameters.parse('upper_arm_link.mass,upper_arm_link.com[2]',
                             yaml.safe_load(written), directory)
    assert again[0].start == pytest.approx(8.8638)
    twice = parameters.rewrite(written, again, [1.0, 1.0])
    assert twice.splitlines()[:-2] == written.splitlines()[:-2]
    assert yaml.safe_load(twice)['inertials']['upper_arm_link']['com'][2] == pytest.approx(
        urdf_inertial(robot.links['upper_arm_link'])['com'][2])


@pytest.fixture(scope='module')
def ur5e_recording(tmp_path_factory):
    """1 s of the UR5e-like arm hanging from its shoulder (shoulder lift pi/2, elastic
    coordinates at their static rest) under multisine efforts up to 4 N m on the large
    joints and 1 N m on the wrists (0.5-30 Hz), the forearm's EI x1.15 and the upper arm's
    mass x1.1; a driver's 2 ms cycles jittered by a uniform +-0.3 ms (stamps to the
    nanosecond); joint states alone, noise 1e-4 rad and 1e-3 rad/s; rk4 at 0.5 ms (at most,
    `Simulation.advance_over`)."""
    from flexible_manipulator.mechanics.equilibrium import static_equilibrium
    from flexible_manipulator.recording import synthetic
    directory = tmp_path_factory.mktemp('ur5e')
    truth = urdf_arm(directory, open(UR5E).read().replace('[2330.0, 2330.0]', '[2679.5, 2679.5]')
                     + 'inertials: {upper_arm_link: {mass: 8.8638}}\n')
    model = load_model(str(truth))
    q0 = model.neutral_configuration()
    q0[1] = np.pi / 2
    q0 = static_equilibrium(model, q0)
    stamps, dropped = synthetic.jittered(500, 0.002, 0.0006, seed=3)
    assert not dropped.size
    efforts = synthetic.multisine(500, 0.002, [4.0, 4.0, 4.0, 1.0, 1.0, 1.0],
                                  np.linspace(0.5, 30.0, 40), seed=1)
    path = str(directory / 'run.mcap')
    synthetic.record_simulation(path, model, efforts, 0.002, 0.0005, q0=q0, times=stamps,
                                noise={'joint_position': 1e-4, 'joint_velocity': 1e-3},
                                modal_states=False)
    return path, stamps


@pytest.mark.slow
def test_a_urdf_arm_is_identified_from_jittered_stamps_and_written_back(ur5e_recording,
                                                                        tmp_path, capsys):
    """From the shipped UR5e-like file (EI 2330 N m^2, the URDF's 8.058 kg upper arm), the
    jittered recording (no two intervals alike: no replay step divides them) gives EI
    2679.5 = 2330 x 1.15 and 8.8638 kg = 8.058 x 1.1 back inside the reported 95 %
    intervals (a fixed noise draw), within 0.1 % (the relative standard errors are near
    0.01 %), and white residuals (the model is the recording's); ``--write`` writes both
    into the model file in place (the EI line changed, an ``inertials:`` entry added,
    every other line and the URDF as they were)."""
    path, stamps = ur5e_recording
    intervals = np.diff(stamps)
    assert intervals.min() < 0.00175 and intervals.max() > 0.00225
    model = urdf_arm(tmp_path)
    text, urdf = model.read_text(), (tmp_path / 'urdf' / 'ur5e_like.urdf').read_text()
    code = cli.main([path, '--model', str(model), '--fit', 'forearm_link.beam.bending_stiffness,'
                     'upper_arm_link.mass', '--window', '0.5', '--write', '--no-figures'])
    report = capsys.readouterr().out
    assert code == 0, report
    for name, truth in (('forearm_link.beam.bending_stiffness', 2679.5),
                        ('upper_arm_link.mass', 8.8638)):
        row = re.search(rf'^{re.escape(name)} +\S+ +(\S+) \[ *(\S+), +(\S+)\]', report, re.M)
        value, low, high = (float(row.group(i)) for i in (1, 2, 3))
        assert low <= truth <= high and abs(value / truth - 1.0) < 1e-3, report
    assert 'NOT white' not in report, report
    fitted = yaml.safe_load(model.read_text())
    stiffness = fitted['flexible']['forearm_link']['beam']['bending_stiffness']
    assert stiffness[0] == stiffness[1] == pytest.approx(2679.5, rel=1e-3)
    assert fitted['inertials']['upper_arm_link'] == {
        'mass': pytest.approx(8.8638, rel=1e-3)}
    old, new = text.splitlines(), model.read_text().splitlines()
    assert [a for a, b in zip(old, new) if a != b] == [
        '      bending_stiffness: [2330.0, 2330.0]  # N m^2']
    mass = fitted['inertials']['upper_arm_link']['mass']
    assert new[len(old) + 2:] == ['inertials:', f'  upper_arm_link: {{mass: {mass:.7g}}}']
    assert (tmp_path / 'urdf' / 'ur5e_like.urdf').read_text() == urdf


def test_lost_states_and_a_bag_directory_are_read(tmp_path, capsys):
    """The one-link arm recorded 0.8 s with 2 ms cycles jittered by +-0.3 ms: written as a
    ``ros2 bag record -s mcap`` directory of 3 files (rosbag2's metadata.yaml,
    `writer.write_bag`) and as one MCAP file, the two read alike (every stamp and value)
    and fit alike (the same estimates, bit for bit); the figures of the directory go
    beside it (``<bag>_identification``). With 1-4 % of the states lost (each lost cycle's
    effort unknown: the next one is held over both), the fit still returns EI within
    0.5 %: the wrong effort acts over those cycles alone (this draw: 4 lost, -0.05 %, a
    bias its interval does not hold)."""
    from flexible_manipulator.recording import series, synthetic
    truth = tmp_path / 'truth.yaml'
    truth.write_text(ONE_LINK)
    model = load_model(str(truth))
    stamps, _ = synthetic.jittered(400, 0.002, 0.0006, seed=2)
    efforts = synthetic.multisine(400, 0.002, [0.3], np.linspace(0.5, 40.0, 40), seed=1)
    noise = {'joint_position': 1e-4, 'joint_velocity': 1e-3, 'modal_position': 1e-5,
             'modal_velocity': 1e-3}
    single, bag = str(tmp_path / 'run.mcap'), str(tmp_path / 'run_bag')
    for path, files in ((single, None), (bag, 3)):
        synthetic.record_simulation(path, model, efforts, 0.002, 0.0005, times=stamps,
                                    noise=noise, seed=4, bag=files)
    metadata = yaml.safe_load(open(os.path.join(bag, 'metadata.yaml')))
    information = metadata['rosbag2_bagfile_information']
    assert information['relative_file_paths'] == [f'run_bag_{i}.mcap' for i in range(3)]
    assert series.bag_files(bag) == [os.path.join(bag, f'run_bag_{i}.mcap') for i in range(3)]
    one, split = series.read(single), series.read(bag)
    for topic in ('/joint_states', '/modal_states'):
        a, b = one.first(topic), split.first(topic)
        np.testing.assert_array_equal(a.times, b.times)
        for key in ('position', 'velocity', 'effort'):
            np.testing.assert_array_equal(a.array(key), b.array(key))
    fit = ELASTIC[0] + ',' + ELASTIC[2]
    results = [identification.identify(path, str(truth), fit, window=0.8)
               for path in (single, bag)]
    np.testing.assert_array_equal(results[0].outcome.factors, results[1].outcome.factors)
    code = cli.main([bag + os.sep, '--model', str(truth), '--fit', ELASTIC[0]])
    assert code == 0 and os.path.isdir(bag + '_identification'), capsys.readouterr()
    assert sorted(os.listdir(bag)) == ['metadata.yaml'] + [f'run_bag_{i}.mcap'
                                                           for i in range(3)]
    stamps, lost = synthetic.jittered(400, 0.002, 0.0006, lost=0.02, seed=2)
    assert 4 <= lost.size <= 16
    lossy = str(tmp_path / 'lossy.mcap')
    synthetic.record_simulation(lossy, model, efforts, 0.002, 0.0005, times=stamps,
                                noise=noise, seed=4, dropped=lost)
    result = identification.identify(lossy, str(truth), ELASTIC[0], window=0.8)
    assert result.data.times.size == 401 - lost.size
    assert abs(result.estimates[0].factor - 1.0) < 0.005, result.report()


def test_a_joint_s_coulomb_friction_is_fitted_from_zero_and_written_back(tmp_path):
    """One flexible link (ONE_LINK) recorded 1.5 s (rk4 at 2 ms) with a Coulomb friction of
    0.05 N m on its joint and the file's viscous 0.02 N m s/rad, efforts up to 0.3 N m over
    0.25-20 Hz, noise 1e-4 rad, 1e-3 rad/s, 1e-5 m, 1e-3 m/s. From the file without
    friction (0: fitted by value, `parameters`) and the viscous damping x1.3, the fit
    returns both within 2 %, each more than 3 standard errors inside that bound (so the
    2 % follows from the noise, not from luck), and ``rewrite`` adds ``friction:`` to the
    joint's flow mapping (the other lines as they were, but the damping's); the written
    file builds the model of the estimates."""
    truth_path = tmp_path / 'truth.yaml'
    truth_path.write_text(ONE_LINK.replace('damping: 0.02,', 'damping: 0.02, friction: 0.05,'))
    model = load_model(str(truth_path))
    assert model.friction[0] == 0.05
    noise = {'joint_position': 1e-4, 'joint_velocity': 1e-3, 'modal_position': 1e-5,
             'modal_velocity': 1e-3}
    path = record(tmp_path / 'rough.mcap', model, 1.5, [0.3], (0.25, 20.0, 40), noise, 0.002)
    start_text = ONE_LINK.replace('damping: 0.02,', 'damping: 0.026,')
    start = tmp_path / 'start.yaml'
    start.write_text(start_text)
    fitted = 'forearm.joint.friction,forearm.joint.damping'
    found = parameters.parse(fitted, yaml.safe_load(start_text))
    assert found[0].additive and found[0].start == 0.0 and found[0].initial == 0.0
    assert found[0].unit == pytest.approx(0.05)          # 1 % of the 5 N m effort limit
    result = identification.identify(path, str(start), fitted)
    assert result.integrator == 'rk4' and result.step == 0.002
    for estimate, truth in zip(result.estimates, (0.05, 0.02)):
        value = float(np.atleast_1d(estimate.value)[0])
        error = value / truth - 1.0
        assert abs(error) < 0.02 and estimate.std / estimate.factor < 0.02 / 3, (estimate, error)
    assert result.estimates[0].value == result.estimates[0].factor        # by value
    written = result.rewrite(start_text)
    old, new = start_text.splitlines(), written.splitlines()
    changed = [k for k, (a, b) in enumerate(zip(old, new)) if a != b]
    assert len(old) == len(new) and changed == [5, 6], new
    assert 'damping: 0.01' in new[5] and new[6].endswith(
        f'velocity_limit: 8.0, friction: {parameters._text(result.estimates[0].value)}}}')
    rebuilt = load_yaml_text(written, tmp_path)
    assert rebuilt.friction[0] == pytest.approx(result.estimates[0].value, rel=1e-6)
    assert rebuilt.elastic_coefficients()[1][0] == pytest.approx(result.estimates[1].value,
                                                                 rel=1e-6)


def load_yaml_text(text, directory):
    """The model of a model file's ``text``."""
    path = directory / 'written.yaml'
    path.write_text(text)
    return load_model(str(path))


def test_a_urdf_joint_s_friction_is_fitted_into_the_model_file_never_the_urdf(tmp_path):
    """``friction.<joint>`` on the UR5e-like file: its start is the URDF's <dynamics
    friction> (0 there), its unit 1 % of the joint's effort limit (150 N m); ``rewrite``
    adds a ``friction:`` mapping at the end of the model file (every other line as it
    was, the URDF untouched), a second joint then goes into that mapping, and the model
    built from the written file has those levels. A joint that does not move, or a file
    whose ``friction:`` is one number for every joint, is refused naming it."""
    path = urdf_arm(tmp_path)
    text, urdf = path.read_text(), (tmp_path / 'urdf' / 'ur5e_like.urdf').read_text()
    spec, directory = yaml.safe_load(text), str(tmp_path / 'models')
    found = parameters.parse('friction.elbow_joint', spec, directory)
    assert found[0].additive and found[0].start == 0.0 and found[0].unit == pytest.approx(1.5)
    written = parameters.rewrite(text, found, [2.5])
    assert written.startswith(text) and written[len(text):].endswith(
        'friction: {elbow_joint: 2.5}\n')
    again = parameters.parse('friction.elbow_joint,friction.wrist_1_joint',
                             yaml.safe_load(written), directory)
    assert again[0].start == 2.5 and again[1].start == 0.0
    twice = parameters.rewrite(written, again, [2.5, 0.75])
    assert yaml.safe_load(twice)['friction'] == {'elbow_joint': 2.5, 'wrist_1_joint': 0.75}
    assert (tmp_path / 'urdf' / 'ur5e_like.urdf').read_text() == urdf
    model = model_from_dict(yaml.safe_load(twice), 'written', directory)
    levels = dict(zip(model.joint_names, model.friction))
    assert levels['elbow_joint'] == 2.5 and levels['wrist_1_joint'] == 0.75
    assert sum(levels.values()) == 3.25
    for bad, fields, message in (
            ('friction.base_link_base_joint', {}, "no moving joint 'base_link_base_joint'"),
            ('friction.elbow_joint', {'friction': 1.0}, 'friction is one number for every '
             'joint in the model file: fit friction'),
            ('friction', {}, 'the model file holds no one friction for every joint')):
        with pytest.raises(parameters.ParameterError, match='^' + re.escape(bad) + ': .*'
                           + re.escape(message)):
            parameters.parse(bad, dict(spec, **fields), directory)
