"""Settings declared once (`flexible_manipulator.settings`): defaults, checks, reading.

Expected values come from the settings' definitions as documented (doc/nodes.md's
tables: a positive period, the choices of a hold scheme, -1 modes meaning all of them)
and from config/hil.yaml as written; the refusals are the messages the nodes give
(doc/nodes.md: "exit code 2 and a message that names the field"). The nodes' side (what
they declare is their schema) is test/test_node_settings.py.
"""

import os

import pytest
import yaml

from conftest import CONFIG

from flexible_manipulator import settings
from flexible_manipulator.control.loop_settings import DELAY_PERIODS
from flexible_manipulator.control.observer_design import DEFAULT_NOISE
from flexible_manipulator.control.program_controller import ControllerSettings, ProgramController
from flexible_manipulator.control.servo_controller import ServoController, ServoSettings
from flexible_manipulator.model_config import ConfigError, load_model
from flexible_manipulator.settings import Setting


def test_a_setting_takes_its_kind_from_its_default_and_lists_its_choices():
    """An integer written as the default of a positive number is still a float parameter
    (``update_period:=1`` must stay refused as an integer); choices end the description."""
    period = Setting('period', 1, 'Period [s].', kind='float')
    assert period.default == 1.0 and isinstance(period.default, float)
    assert Setting('count', 3, 'Count.').kind == 'int'
    assert Setting('names', ['a', 'b'], 'Names.').kind == 'strings'
    assert Setting('limits', [1, 2], 'Limits.').default == [1.0, 2.0]
    hold = Setting('hold', 'zoh', 'Hold scheme.', choices=('zoh', 'rk4'))
    assert hold.text == 'Hold scheme. One of: zoh, rk4.'
    with pytest.raises(ValueError, match='kind'):
        Setting('unset', None, 'No default and no kind.')


def test_validate_refuses_with_the_name_first_and_reads_an_empty_array_as_unset():
    hold = Setting('hold', 'zoh', 'Hold scheme.', choices=('zoh', 'rk4'))
    with pytest.raises(ConfigError, match=r"^hold: must be one of zoh, rk4; got 'foh'$"):
        hold.validate('foh')
    flag = Setting('flag', False, 'A flag.')
    with pytest.raises(ConfigError, match='^flag: expected true or false, got 1$'):
        flag.validate(1)
    limits = Setting('limits', None, 'Limits.', kind='floats', check=settings.numbers)
    assert limits.validate([]) is None and limits.validate(None) is None
    assert limits.validate([1.0, float('inf')]) == [1.0, float('inf')]
    with pytest.raises(ConfigError, match='^limits: expected numbers'):
        limits.validate([float('nan')])
    with pytest.raises(ConfigError, match='^x: must be a positive number, got 0.0$'):
        settings.positive(0.0, 'x')
    with pytest.raises(ConfigError, match='^x: must be < 1, got 1$'):
        settings.fraction(1.0, 'x')
    with pytest.raises(ConfigError, match='^x: must be a number > 1, got 1.0$'):
        settings.greater_than(1.0)(1.0, 'x')
    with pytest.raises(ConfigError, match=r'^x: expected a whole number of periods in 0\.\.50'):
        settings.whole_number(0, 50, 'periods')(True, 'x')


def test_delay_periods_has_one_default_for_both_controllers_and_their_nodes():
    """One period (a real-time plant: `loop_settings`), the same object in both classes."""
    assert DELAY_PERIODS.default == 1
    assert ControllerSettings().delay_periods == ServoSettings().delay_periods == 1
    assert DELAY_PERIODS in settings.schema(ControllerSettings)
    assert DELAY_PERIODS in settings.schema(ServoSettings)


def test_the_controller_settings_of_a_parameter_file_read_as_the_node_reads_them():
    """config/hil.yaml's controller section, as written there; what the file leaves out
    keeps the schema's default (uncertainty: None, the library's set)."""
    with open(os.path.join(CONFIG, 'hil.yaml')) as stream:
        parameters = yaml.safe_load(stream)['controller']['ros__parameters']
    read = settings.from_parameters(ControllerSettings, settings.flatten(parameters))
    assert read == ControllerSettings(
        period=0.002, hold='zoh', realization='servo', control_model='full',
        elastic_state='estimated', effort_limits=[4.0, 2.0],
        effort_rate_limits=[200.0, 100.0], velocity_limits=[3.0, 4.0], control_modes=1,
        delay_periods=2, analysis_positions=[-0.3, 1.5], mismatch_action='degrade',
        effort_limit_fraction=0.5, require_limits=True, safe_action='hold',
        observer_noise={'velocity_noise': 0.001, 'effort_noise': 0.01})
    # -1 modes (the parameter's default) read as None: all of the model file.
    assert settings.from_parameters(ControllerSettings, {'control_modes': -1}).control_modes \
        is None
    # A group given in part: the rest from the settings' defaults (those of the library).
    partial = settings.from_parameters(ControllerSettings, {'observer.effort_noise': 0.02})
    assert partial.observer_noise == {'velocity_noise': DEFAULT_NOISE.velocity_noise,
                                      'effort_noise': 0.02}


def test_the_controllers_refuse_bad_settings_with_the_nodes_checks():
    """A ROS-free caller gets the refusal the node gives (without 'parameter ')."""
    rigid = load_model(os.path.join(CONFIG, 'models', 'two_link_rigid.yaml'))
    programs = {'hold': {'gains': {'alpha': 5.0},
                         'rows': [{'type': 'hold', 'joints': ['shoulder', 'elbow']}]}}
    for values, message in [
            (dict(hold='foh'), "^hold: must be one of zoh, euler, heun, rk2, rk3, rk4; got 'foh'"),
            (dict(period=-0.002), '^control_period: must be a positive number'),
            (dict(delay_periods=51), r'^delay_periods: expected a whole number of periods'),
            (dict(redefine_margin=1.2), '^redefine_margin: must be < 1'),
            (dict(condition_limit=0.5), '^condition_limit: must be a number > 1'),
            (dict(realization='magic'), '^realization: must be one of auto, servo, ideal')]:
        with pytest.raises(ConfigError, match=message):
            ProgramController(rigid, programs, ControllerSettings(**values))
    top = load_model(os.path.join(CONFIG, 'models', 'suslov_free_actuated.yaml'))
    with pytest.raises(ConfigError, match='^delay_periods: expected a whole number'):
        ServoController(top, ServoSettings(delay_periods=-1))
