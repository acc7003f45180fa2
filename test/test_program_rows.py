"""Program row types from files (control.rows): the registry and the ``orientation`` row.

Where expected values come from (per test): the row types' own declarations (the keys a
mapping is checked against); the URDF roll-pitch-yaw convention R = Rz(yaw) Ry(pitch)
Rx(roll) (transforms3d's 'sxyz', as the model files use it) for orientation references;
the documented contract of the parsers (a program, or a ConfigError naming the field);
and, for tracking, the designed error dynamics phi'' + 2 alpha phi' + alpha^2 phi = 0 of
the rows, which the ideal realization on the exact model imposes on phi = log(R_d^T R).
"""

import math
from pathlib import Path

import numpy as np
import pytest
import transforms3d
import yaml
from hypothesis import given, strategies as st

from flexible_manipulator.control.program_config import parse_program
from flexible_manipulator.control.program_controller import (ControllerSettings,
                                                             ProgramController)
from flexible_manipulator.control.rows import docs, ROW_TYPES, ROWS
from flexible_manipulator.control.rows.fields import REQUIRED
from flexible_manipulator.mechanics import lie
from flexible_manipulator.mechanics.simulation import Simulation
from flexible_manipulator.model_config import ConfigError, model_from_dict
from fuzzing import mutated

MODELS = Path(__file__).resolve().parents[1] / 'config' / 'models'


def wrist_arm():
    """The spatial arm of config/models with its elbow turned into a roll joint, rigid.

    three_link_spatial_flexible.yaml turns its forearm about the vertical (waist) and two
    parallel horizontal axes (shoulder, elbow): two independent rotations, so the third
    row of an orientation would add no rank. With the elbow about the forearm's own axis
    (x, along the link) the three joints turn the forearm about yaw, pitch and roll axes,
    independent unless the forearm points vertically. Its rigid twin: the plant and the
    control model of the ideal realization.
    """
    with open(MODELS / 'three_link_spatial_flexible.yaml', encoding='utf-8') as stream:
        spec = yaml.safe_load(stream)
    spec['links'][2]['joint']['axis'] = [1, 0, 0]
    return model_from_dict(spec, 'wrist_arm').rigid_twin()


@pytest.fixture(scope='module')
def arm():
    """The spatial arm with a roll elbow (`wrist_arm`)."""
    return wrist_arm()


def tip_rotation(model, q):
    """Orientation R of the forearm's tip section at joint angles ``q``."""
    return model.section_pose(model.create_data(), np.asarray(q, dtype=float), 2,
                              model.links[2].length)[0]


def rpy(R):
    """[roll, pitch, yaw] of R = Rz(yaw) Ry(pitch) Rx(roll) (URDF rpy)."""
    return [float(a) for a in transforms3d.euler.mat2euler(R, 'sxyz')]


def orientation_program(reference, alpha=5.0):
    """One program of one orientation row on the forearm's tip."""
    return {'gains': {'alpha': alpha},
            'rows': [{'type': 'orientation', 'link': 'forearm', 'reference': reference}]}


# -- the registry ---------------------------------------------------------------------------
def test_every_registered_row_type_checks_the_keys_it_declares(flexible):
    """A key no row type declares is refused naming the row's field and listing the
    declared keys (type, the row's own, gains: the allowed set of its declaration); a
    missing required key is named as missing."""
    for name, row_type in ROWS.items():
        assert row_type.row_type == name and name in ROW_TYPES
        declared = sorted(key.name for key in row_type.all_keys())
        with pytest.raises(ConfigError, match=rf'^p\.rows\[0\]\.zzz: unknown field \('
                                              rf'allowed: {", ".join(declared)}\)$'):
            parse_program(flexible, {'gains': {'alpha': 5.0},
                                     'rows': [{'type': name, 'zzz': 1}]}, 'p')
        required = [key.name for key in row_type.keys if key.default == REQUIRED]
        with pytest.raises(ConfigError, match=rf'^p\.rows\[0\]\.{required[0]}: required'):
            parse_program(flexible, {'gains': {'alpha': 5.0}, 'rows': [{'type': name}]}, 'p')


def test_an_unknown_row_type_lists_the_registered_ones(flexible):
    """The message lists the registry's types in its order."""
    with pytest.raises(ConfigError, match=r"^p\.rows\[0\]\.type: unknown program row type "
                                          r"'spiral' \(known: joint, point, angle, "
                                          r"lambda_point, hold, orientation, tcp\)$"):
        parse_program(flexible, {'gains': {'alpha': 5.0}, 'rows': [{'type': 'spiral'}]}, 'p')


def test_the_documented_row_types_are_the_registry():
    """doc/programs.md's row types, regenerated from the registry (`rows.docs`), are the
    document as it is; a document that differs (a key renamed here) fails the check."""
    path = Path(__file__).resolve().parents[1] / 'doc' / 'programs.md'
    text = path.read_text(encoding='utf-8')
    assert docs.update(text) == text, ('doc/programs.md differs from control/rows: run '
                                       'python -m flexible_manipulator.control.rows.docs '
                                       'doc/programs.md --write')
    for name, row_type in ROWS.items():
        section = text.split(f'### `{name}`')[1].split('###')[0]
        assert all(f'| `{key.name}` |' in section for key in row_type.all_keys())


def test_the_documented_program_file_builds_on_the_flexible_arm(flexible):
    """doc/programs.md's example file parses (programs and default as written) and each
    program builds on the demo's flexible arm, with the rows its comments describe."""
    text = (Path(__file__).resolve().parents[1] / 'doc' / 'programs.md').read_text(
        encoding='utf-8')
    content = yaml.safe_load(text.split('```yaml\n')[1].split('```')[0])
    assert content['default'] == 'circle'
    built = {name: parse_program(flexible, spec, name, flexible.rigid_twin())
             for name, spec in content['programs'].items()}
    assert built['circle'].row_names == ['shoulder', 'elbow', 'forearm_tip_x',
                                         'forearm_tip_y']
    assert built['lambda_circle'].row_names == ['forearm_lambda_x', 'forearm_lambda_y']
    assert built['hold'].row_names == ['shoulder', 'elbow'] and built['hold'].holds
    assert built['tool_line'].row_names == ['tool0_lambda_x', 'tool0_lambda_y']
    np.testing.assert_allclose(built['circle'].stabilization.alpha, [8.0, 8.0, 12.0, 12.0])


def test_the_row_type_check_fails_on_a_drifted_document(tmp_path):
    """The --check mode exits 1 on a document whose table says another default, 0 once
    --write has rewritten it."""
    document = tmp_path / 'programs.md'
    text = (Path(__file__).resolve().parents[1] / 'doc' / 'programs.md').read_text(
        encoding='utf-8')
    document.write_text(text.replace('| `z` |', '| `x` |'), encoding='utf-8')
    assert docs.main([str(document), '--check']) == 1
    assert docs.main([str(document), '--write']) == 0
    assert docs.main([str(document), '--check']) == 0
    assert document.read_text(encoding='utf-8') == text


# -- the orientation row --------------------------------------------------------------------
def test_an_orientation_row_reads_roll_pitch_yaw_and_turns_about_one_axis(arm):
    """constant: R_d = Rz(yaw) Ry(pitch) Rx(roll), so at the joints that give that
    orientation phi = 0; line: R_d(0) and R_d(duration) are the start and end
    orientations, and halfway through the quintic timing (s = 1/2) R_d is the rotation
    halfway along the shorter turn, exp(log(R_1 R_0^T) / 2) R_0; reported per row there:
    its rotation vector and omega_d = log(R_1 R_0^T) s' with s' = 30 / (16 duration) (the
    quintic's rate at tau = 1/2)."""
    q = np.array([0.3, 0.5, -0.4])
    R = tip_rotation(arm, q)
    parsed = parse_program(arm, orientation_program({'type': 'constant', 'value': rpy(R)}))
    assert parsed.row_names == ['forearm_orientation_x', 'forearm_orientation_y',
                                'forearm_orientation_z']
    np.testing.assert_allclose(parsed.program.evaluate(0.0, q, np.zeros(3)).phi, 0.0,
                               atol=1e-12)
    R0, R1 = lie.so3_exp(np.array([0.2, -0.1, 0.3])), lie.so3_exp(np.array([-0.4, 0.5, 0.9]))
    line = {'type': 'line', 'start': rpy(R0), 'end': rpy(R1), 'duration': 2.0,
            'start_time': 1.0}
    parsed = parse_program(arm, orientation_program(line))
    reference = parsed.program.reference
    np.testing.assert_allclose(reference.evaluate(1.0)[0], R0, atol=1e-12)
    np.testing.assert_allclose(reference.evaluate(3.0)[0], R1, atol=1e-12)
    turn = lie.so3_log(R1 @ R0.T)
    halfway = lie.so3_exp(0.5 * turn) @ R0
    np.testing.assert_allclose(reference.evaluate(2.0)[0], halfway, atol=1e-12)
    rows, reported = parsed.references[0]
    assert rows == slice(0, 3)
    vector, rate, _ = reported.evaluate(2.0)
    np.testing.assert_allclose(vector, lie.so3_log(halfway), atol=1e-12)
    np.testing.assert_allclose(rate, turn * 30.0 / (16.0 * 2.0), atol=1e-12)


@pytest.mark.parametrize('edit, message', [
    (lambda row: row['reference'].update(type='circle'),
     r"^p\.rows\[0\]\.reference\.type: unknown orientation reference type 'circle' "
     r"\(known: constant, line\)$"),
    (lambda row: row['reference'].update(start=[0.0, 0.1]),
     r'^p\.rows\[0\]\.reference\.start: expected a list of 3 numbers'),
    (lambda row: row['reference'].update(duration=0.0),
     r'^p\.rows\[0\]\.reference\.duration: must be > 0'),
    (lambda row: row.update(axes=['x']), r'^p\.rows\[0\]\.axes: unknown field'),
    (lambda row: row.update(fraction=2.0), r'^p\.rows\[0\]\.fraction: must be <= 1'),
])
def test_orientation_row_errors_name_the_field(arm, edit, message):
    """A bad value of an orientation row is refused naming its dotted field."""
    spec = orientation_program({'type': 'line', 'start': [0.0, 0.1, 0.2],
                                'end': [0.1, 0.2, 0.3], 'duration': 1.0})
    edit(spec['rows'][0])
    with pytest.raises(ConfigError, match=message):
        parse_program(arm, spec, 'p')


@given(data=st.data())
def test_mutated_orientation_programs_give_a_program_or_a_config_error_naming_the_field(
        arm, data):
    """The contract of test_fuzz_config.py for the row type no program file holds."""
    spec = dict(orientation_program({'type': 'line', 'start': [0.0, 0.1, 0.2],
                                     'end': [0.1, 0.2, 0.3], 'duration': 1.0,
                                     'start_time': 0.5}),
                non_minimum_phase='refuse', description='a turn')
    try:
        parse_program(arm, data.draw(mutated(spec), 'spec'), 'fuzzed')
    except ConfigError as error:
        assert str(error).startswith('fuzzed'), str(error)


def orientation_run(arm, period, q_start, start, end, duration, alpha):
    """Track a line of orientations from rest at ``q_start``; residuals per tick, plant."""
    program = orientation_program({'type': 'line', 'start': start, 'end': end,
                                   'duration': duration}, alpha)
    controller = ProgramController(arm, {'turn': program},
                                   ControllerSettings(period=period,
                                                      analysis_positions=list(q_start)))
    assert controller.realization_kind == 'ideal'
    sim = Simulation(arm, min(period, 5e-4), 'rk4', q0=np.array(q_start))
    controller.enable()
    residuals = []
    for _ in range(int(round((duration + 1.0) / period)) + 1):
        effort = controller.update(sim.time, sim.q, sim.v).copy()
        assert controller.status.tracking, controller.status.message
        residuals.append(controller.status.residual.copy())
        sim.advance(effort, period)
    return np.array(residuals), sim


def test_the_spatial_arm_tracks_an_orientation_program_as_designed(arm):
    """From rest 0.2 rad off the start of a 2 s turn of the forearm (yaw, pitch and roll
    all change), the error phi = log(R_d^T R) follows the designed decay phi(t) = phi_0
    (1 + alpha t) e^(-alpha t) (phi'' + 2 alpha phi' + alpha^2 phi = 0, phi'_0 = 0: the
    arm and the quintic reference start at rest), alpha = 5 /s.

    phi_0 is the rotation between the file's start (URDF rpy) and the arm's pose. The
    controller holds its effort over the 2 ms period, so the law is exact only as T -> 0:
    the deviation from the design at 0.2, 0.5 and 1 s must be first order in T (halving T
    about halves it: ratio 1.6..2.4) and its extrapolation to T = 0 (2 D(T/2) - D(T),
    Richardson) below 0.5 % of |phi_0|, against 3 % at 2 ms. One second after the
    reference stops, the design leaves (1 + alpha) e^(-alpha) = 4 % of any error at the
    stop (< 5 % of |phi_0|, the sampling deviation): the forearm's orientation, from the
    plant's pose, is within 1 % of |phi_0| of the file's end orientation.
    """
    alpha, duration = 5.0, 2.0
    q_start = [0.2, 0.4, -0.3]
    start = rpy(tip_rotation(arm, [0.3, 0.5, -0.1]))
    end = rpy(tip_rotation(arm, [0.5, 0.6, 0.3]))
    deviations, checkpoints = {}, (0.2, 0.5, 1.0)
    for period in (0.002, 0.001):
        residuals, sim = orientation_run(arm, period, q_start, start, end, duration, alpha)
        phi0 = lie.so3_log(transforms3d.euler.euler2mat(*start, 'sxyz').T
                           @ tip_rotation(arm, q_start))
        np.testing.assert_allclose(residuals[0], phi0, atol=1e-12)
        assert 0.15 < np.linalg.norm(phi0) < 0.25
        deviations[period] = np.array([
            residuals[int(round(t / period))] - phi0 * (1 + alpha * t) * math.exp(-alpha * t)
            for t in checkpoints])
        final = lie.so3_log(transforms3d.euler.euler2mat(*end, 'sxyz').T
                            @ tip_rotation(arm, sim.q))
        assert np.linalg.norm(final) < 0.01 * np.linalg.norm(phi0)
    scale = np.linalg.norm(phi0)
    coarse = np.linalg.norm(deviations[0.002], axis=1)
    ratio = coarse / np.linalg.norm(deviations[0.001], axis=1)
    assert np.all((1.6 < ratio) & (ratio < 2.4)), ratio
    extrapolated = np.linalg.norm(2.0 * deviations[0.001] - deviations[0.002], axis=1)
    assert np.all(extrapolated < 0.005 * scale), extrapolated / scale
    assert np.all(coarse < 0.05 * scale), coarse / scale
