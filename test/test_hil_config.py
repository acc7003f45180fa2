"""The controller for a user's own arm from its model file: `hil_config` and the defaults.

The arms are the package's 6- and 7-axis models (config/models/ur5e_flexible_forearm.yaml,
panda_flexible_forearm.yaml) and the demo arm. Expected values come from the URDFs'
``<limit>`` elements (config/urdf/*.urdf), from the rules `control.arm_defaults` and
doc/hil.md state (the pose 0.3 rad clamped into the middle half of each joint's travel;
the sinusoids' amplitude at most 0.1 rad and a quarter of the travel, their peak speed
at most a tenth of the velocity limit; effort limits at config/hil.yaml's
``effort_limit_fraction``, 0.5) and from config/hil.yaml as written. The refusals are
what doc/nodes.md promises for bad input: exit status 2 and one line naming the field.
"""

import os
import re

import numpy as np
import pytest
import yaml

from conftest import CONFIG

from flexible_manipulator import hil_config
from flexible_manipulator.control.arm_defaults import analysis_pose
from flexible_manipulator.control.program_config import load_program_file
from flexible_manipulator.control.program_controller import (ControllerSettings,
                                                             ProgramController)
from flexible_manipulator.model_config import load_model
from flexible_manipulator.settings import from_parameters

CONTROLLER = 'flexible_manipulator.nodes.controller_node'
HIL = os.path.join(CONFIG, 'hil.yaml')
ARMS = ('ur5e_flexible_forearm', 'panda_flexible_forearm')
# Start-up of a controller on a 6- or 7-axis arm: every program's checks over the
# uncertainty, for the law and its robust alternative (a bound, not a measurement).
START_TIMEOUT = 600


def model_path(name):
    """Path of a model file of the package."""
    return os.path.join(CONFIG, 'models', f'{name}.yaml')


def write(tmp_path, name):
    """Write the files of ``name`` with this checkout's config/hil.yaml; return their paths."""
    return hil_config.write(model_path(name), str(tmp_path / f'{name}_hil.yaml'),
                            params_file=HIL)


def parameters(path):
    """The controller's parameters of a written parameter file."""
    return hil_config.controller_parameters(path)


def test_the_analysis_pose_is_0_3_rad_clamped_into_the_middle_half_of_the_travel():
    """UR5e: limits +-2 pi and (elbow) +-pi, 0.3 inside the middle half of each. Panda
    (config/urdf/panda_like.urdf): joint 4 in [-3.0718, -0.0698] gets its middle half's upper
    end -0.0698 - 3.002/4 = -0.82035, joint 6 in [-0.0175, 3.7525] the lower end -0.0175 +
    3.77/4 = 0.925; the others 0.3. The demo arm (+-3.14159, +-2.8): 0.3 as before."""
    assert analysis_pose(load_model(model_path('ur5e_flexible_forearm'))) == \
        pytest.approx([0.3] * 6)
    assert analysis_pose(load_model(model_path('panda_flexible_forearm'))) == pytest.approx(
        [0.3, 0.3, 0.3, -0.0698 - 3.002 / 4, 0.3, -0.0175 + 3.77 / 4, 0.3])
    assert analysis_pose(load_model(model_path('two_link_flexible'))) == \
        pytest.approx([0.3, 0.3])


def test_another_model_leaves_out_the_files_values_for_its_own_arm():
    """config/hil.yaml's joints, limits, pose, programs and law are the demo arm's: for
    another model they are dropped (what hil.launch.py model:= passes), the settings for a
    real arm kept as written but safe_action: hold, whose hold law (the rigid twin's
    computed torque at 2 rad/s) the start-up checks refuse on the Panda with its flexible
    forearm (not robust over the default uncertainty with 2 periods of delay): gravity
    there; for the demo arm itself nothing is dropped."""
    values, dropped = hil_config.for_model(HIL, model_path('panda_flexible_forearm'))
    assert dropped == ['active_program', 'analysis_positions', 'control_model',
                       'control_modes', 'effort_limits', 'effort_rate_limits', 'joints',
                       'program_file', 'realization', 'velocity_limits']
    assert values['model'] == model_path('panda_flexible_forearm')
    assert {k: values[k] for k in ('elastic_state', 'delay_periods', 'control_period',
                                   'effort_limit_fraction', 'require_limits',
                                   'safe_action', 'start_enabled')} == {
        'elastic_state': 'estimated', 'delay_periods': 2, 'control_period': 0.002,
        'effort_limit_fraction': 0.5, 'require_limits': True, 'safe_action': 'gravity',
        'start_enabled': False}
    same, dropped = hil_config.for_model(HIL, 'two_link_flexible')
    assert dropped == [] and same['joints'] == ['shoulder', 'elbow']
    assert same['safe_action'] == 'hold'


@pytest.mark.parametrize('name', ARMS)
def test_the_written_files_hold_the_models_limits_and_programs_within_them(tmp_path, name):
    """The parameter file: the model's joints, half its effort limits (the URDF's), its
    velocity limits, the pose; the program file: hold and joint_sine on those joints, the
    sinusoids inside the joint limits and at most a tenth of the velocity limits."""
    params_path, programs_path = write(tmp_path, name)
    model = load_model(model_path(name))
    given = parameters(params_path)
    assert given['joints'] == list(model.joint_names)
    assert given['effort_limits'] == pytest.approx(0.5 * model.effort_limit)
    assert given['velocity_limits'] == pytest.approx(model.velocity_limit)
    assert given['analysis_positions'] == pytest.approx(analysis_pose(model), abs=1e-6)
    assert given['program_file'] == programs_path
    programs, default = load_program_file(programs_path)
    assert default == 'hold' and list(programs) == ['hold', 'joint_sine']
    assert programs['hold']['rows'] == [{'type': 'hold', 'joints': list(model.joint_names)}]
    reference = programs['joint_sine']['rows'][0]['reference']
    offset, amplitude = np.array(reference['offset']), np.array(reference['amplitude'])
    speed = 2 * np.pi * np.array(reference['frequency']) * amplitude
    assert np.all(speed <= 0.1 * model.velocity_limit + 1e-9)
    assert np.all(offset - amplitude >= model.lower) and np.all(offset + amplitude
                                                                <= model.upper)
    assert np.all(amplitude > 0.0)
    with open(params_path) as stream:       # every value with a comment above or beside it
        lines = [line for line in stream.read().splitlines() if line.strip()]
    for before, line in zip(lines, lines[1:]):
        if re.match(r'\s+\w+: \S', line):
            assert before.lstrip().startswith('#'), line


@pytest.mark.parametrize('name', ARMS)
def test_the_start_up_checks_admit_the_generated_programs(tmp_path, name):
    """At control_period 0.002 with delay_periods 1, the settings the launch file gives
    for the model (config/hil.yaml less the demo arm's values): hold and joint_sine are
    admitted over the declared uncertainty (margin 1: the whole set), and the limits and
    pose the controller takes from the model are those the written file holds."""
    params_path, programs_path = write(tmp_path, name)
    written = parameters(params_path)
    values, _ = hil_config.for_model(HIL, model_path(name))
    values.update(control_period=0.002, delay_periods=1)
    model = load_model(model_path(name))
    programs, default = load_program_file(programs_path)
    law = ProgramController(model, programs, from_parameters(ControllerSettings, values),
                            default, source=programs_path)
    assert law.program_names == ['hold', 'joint_sine']
    for entry in law.entries.values():
        assert entry.robustness_margin == 1.0, entry.name
    assert law.effort_limit == pytest.approx(written['effort_limits'])
    assert law.velocity_limit == pytest.approx(written['velocity_limits'])
    assert law.analysis_positions == pytest.approx(written['analysis_positions'], abs=1e-6)


@pytest.mark.parametrize('name', ARMS)
def test_the_controller_node_starts_from_the_written_files(start_node, tmp_path, name):
    """A real controller node over DDS, the written parameter file unedited: it starts
    (its start-up log line) on the written programs, disabled, and keeps running."""
    params_path, _ = write(tmp_path, name)
    node = start_node(CONTROLLER, params_file=params_path)
    started = "programs ['hold', 'joint_sine'], active 'hold'"
    output = wait_for(node, started)
    assert started in output, output
    assert node.alive()


def test_the_controller_node_starts_on_a_model_alone(start_node, tmp_path):
    """What hil.launch.py model:=<arm> gives the node (config/hil.yaml less the demo arm's
    values, model set): joints, limits, pose and programs from the model."""
    values, _ = hil_config.for_model(HIL, model_path('panda_flexible_forearm'))
    path = tmp_path / 'launch.yaml'
    path.write_text(yaml.safe_dump({'controller': {'ros__parameters': values}}))
    node = start_node(CONTROLLER, params_file=str(path))
    started = "programs ['hold', 'joint_sine'], active 'hold'"
    output = wait_for(node, started)
    assert started in output, output
    assert node.alive()


def wait_for(node, text):
    """Wait until the node logs ``text`` or exits; return its output."""
    import time
    deadline = time.monotonic() + START_TIMEOUT
    while text not in node.output() and node.alive() and time.monotonic() < deadline:
        time.sleep(0.5)
    return node.output()


def refusal(node):
    """The node's exit status and the lines it printed."""
    status = node.wait(START_TIMEOUT)
    return status, [line for line in node.output().splitlines() if line.strip()]


def unlimited_model(tmp_path):
    """The UR5e model on its URDF with wrist_3_joint continuous and without <limit>."""
    with open(os.path.join(CONFIG, 'urdf', 'ur5e_like.urdf')) as stream:
        urdf = stream.read()
    urdf, count = re.subn(r'(<joint name="wrist_3_joint" type=")revolute(">.*?)\s*<limit [^>]*/>',
                          r'\1continuous\2', urdf, flags=re.S)
    assert count == 1
    (tmp_path / 'arm.urdf').write_text(urdf)
    with open(model_path('ur5e_flexible_forearm')) as stream:
        spec = yaml.safe_load(stream)
    spec['urdf'] = str(tmp_path / 'arm.urdf')
    path = tmp_path / 'unlimited.yaml'
    path.write_text(yaml.safe_dump(spec))
    return str(path)


def test_a_joint_without_limits_is_refused_by_the_writer_and_the_node(start_node, tmp_path):
    """A continuous joint without <limit> has no effort limit (the URDF reader: infinite):
    hil_config exits 2 naming effort_limits and the joint, writes nothing; the node given
    the model with config/hil.yaml (require_limits: true) refuses with the same line."""
    model = unlimited_model(tmp_path)
    output = tmp_path / 'out' / 'arm_hil.yaml'
    assert hil_config.main([model, '-o', str(output), '--params-file', HIL]) == 2
    assert not (tmp_path / 'out').exists()
    values, _ = hil_config.for_model(HIL, model)
    path = tmp_path / 'launch.yaml'
    path.write_text(yaml.safe_dump({'controller': {'ros__parameters': values}}))
    status, lines = refusal(start_node(CONTROLLER, params_file=str(path)))
    assert status == 2
    assert lines[-1] == ("[ControllerNode] refusing to start: effort_limits: joint "
                         "'wrist_3_joint' of model 'ur5e_flexible_forearm' has no effort limit "
                         '(require_limits: a real arm needs one per joint): give '
                         'effort_limits, or the limit in the model (a URDF <limit>)')
    assert not any('controlling' in line for line in lines)


def test_the_writer_refuses_a_limit_without_effort_naming_the_element(tmp_path, capsys):
    """The URDF reader's refusal of <limit> without effort, on one line, exit 2."""
    model = unlimited_model(tmp_path)
    with open(os.path.join(CONFIG, 'urdf', 'ur5e_like.urdf')) as stream:
        urdf = stream.read()
    urdf = urdf.replace('effort="28" velocity', 'velocity', 1)
    (tmp_path / 'arm.urdf').write_text(urdf)
    assert hil_config.main([model, '-o', str(tmp_path / 'x.yaml'), '--params-file', HIL]) == 2
    error = capsys.readouterr().err.strip()
    assert '\n' not in error and "joint 'wrist_1_joint' <limit>: no effort" in error, error
    assert not (tmp_path / 'x.yaml').exists()


def test_a_program_naming_a_joint_the_arm_lacks_is_refused(start_node, tmp_path):
    """The written Panda files with the hold program's last joint renamed 'elbow' (the
    demo arm's): exit 2, the line names the program file's row and the joint."""
    params_path, programs_path = write(tmp_path, 'panda_flexible_forearm')
    with open(programs_path) as stream:
        text = stream.read()
    text = text.replace('panda_joint7]', 'elbow]', 1)
    with open(programs_path, 'w') as stream:
        stream.write(text)
    status, lines = refusal(start_node(CONTROLLER, params_file=params_path))
    assert status == 2
    assert lines[-1].startswith('[ControllerNode] refusing to start: ')
    assert "hold.rows[0].joints[6]: unknown joint 'elbow'" in lines[-1], lines[-1]


def test_a_joints_list_that_disagrees_with_the_model_is_refused(start_node, tmp_path):
    """The written Panda parameter file with the demo arm's joints: exit 2, one line
    naming the parameter joints."""
    params_path, _ = write(tmp_path, 'panda_flexible_forearm')
    with open(params_path) as stream:
        text = stream.read()
    text = re.sub(r'joints: \[panda_joint1.*?\]', 'joints: [shoulder, elbow]', text, count=1)
    with open(params_path, 'w') as stream:
        stream.write(text)
    status, lines = refusal(start_node(CONTROLLER, params_file=params_path))
    assert status == 2
    assert lines[-1] == ("[ControllerNode] refusing to start: parameter joints: unknown joint "
                         "'shoulder' (model 'panda_flexible_forearm' has panda_joint1, "
                         'panda_joint2, panda_joint3, panda_joint4, panda_joint5, '
                         'panda_joint6, panda_joint7)')
