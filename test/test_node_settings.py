"""Each node declares exactly its settings schema, and refuses a bad value with its check.

Expected: a node created with its defaults (the controller as doc/nodes.md's table is
generated, `parameter_docs.NODES`) has one parameter per `Setting` of its class's
``SETTINGS`` and no other (besides rclpy's own), each with the setting's description,
read-only flag and, where not overridden, the setting's default as its value (for
``joints``: the model's joints). A node started with a bad value of a checked parameter
exits 2 with one line carrying the message of that setting's own check
(`Setting.validate`, prefixed 'parameter '): the schema is the one place the check is
written.
"""

import importlib

import pytest

from conftest import CONTROLLER, PLANT, SERVO_CONTROLLER

from flexible_manipulator.model_config import ConfigError
from flexible_manipulator.nodes import parameter_docs

pytestmark = [pytest.mark.ros, pytest.mark.timeout(240)]

SERVO_PLANT = 'flexible_manipulator.nodes.servo_node'


def node_class(key):
    module, name, _ = parameter_docs.NODES[key]
    return getattr(importlib.import_module(f'flexible_manipulator.nodes.{module}'), name)


def same(value, default):
    """Equal, and of the same type (a float parameter is no integer); arrays as lists."""
    if isinstance(default, (list, tuple)):
        return value is not None and list(value) == list(default)
    return value == default and type(value) is type(default)


@pytest.mark.parametrize('key', sorted(parameter_docs.NODES))
def test_a_node_declares_its_schema_and_nothing_else(domain_id, key):
    import rclpy
    from rclpy.parameter import Parameter
    cls = node_class(key)
    overrides = dict(parameter_docs.NODES[key][2])
    schema = {setting.name: setting for setting in cls.SETTINGS}
    assert len(schema) == len(cls.SETTINGS), 'a parameter named twice in the schema'
    context = rclpy.Context()
    rclpy.init(args=[], context=context, domain_id=domain_id)
    node = None
    try:
        node = cls(context=context, parameter_overrides=[
            Parameter(name, value=value) for name, value in overrides.items()])
        names = sorted(n for n in node._parameters if n not in parameter_docs.ROS_PARAMETERS)
        # A setting's former name is declared beside it, unset (`Setting.formerly`).
        former = {s.formerly[0]: s for s in cls.SETTINGS if s.formerly}
        assert names == sorted([*schema, *former])
        for name in former:
            assert node._parameters[name].value is None
            assert node.describe_parameters([name])[0].description == \
                former[name].former_text
        names = sorted(schema)
        for name, descriptor in zip(names, node.describe_parameters(names)):
            setting = schema[name]
            assert descriptor.description == setting.text, name
            assert descriptor.read_only == setting.read_only, name
            default = setting.default_for(node.model)
            assert node.parameter_defaults[name] == default, name     # doc/nodes.md's
            if name not in overrides:
                value = node._parameters[name].value    # get_parameter refuses unset ones
                assert (value is None) if default is None else same(value, default), \
                    (name, value, default)
    finally:
        if node is not None:
            node.destroy_node()
        context.try_shutdown()


# (node module, schema key of parameter_docs.NODES, parameter, bad value as on the command
# line, the same value in Python): one per kind of check and per node.
BAD = [
    (PLANT, 'plant', 'timing_mode', 'sometimes', 'sometimes'),
    (PLANT, 'plant', 'update_period', '-0.002', -0.002),
    (SERVO_PLANT, 'servo_plant', 'path_length', '1', 1),
    (SERVO_PLANT, 'servo_plant', 'marker_scale', '0.0', 0.0),
    (CONTROLLER, 'controller', 'hold', 'foh', 'foh'),
    (CONTROLLER, 'controller', 'delay_periods', '51', 51),
    (CONTROLLER, 'controller', 'redefine_margin', '1.5', 1.5),
    (CONTROLLER, 'controller', 'delay_patience', '-1.0', -1.0),
    (SERVO_CONTROLLER, 'controller_servo', 'servo_gain', '-100.0', -100.0),
    (SERVO_CONTROLLER, 'controller_servo', 'safe_action', 'brake', 'brake'),
]


def test_a_bad_value_is_refused_with_the_message_of_its_setting(start_node):
    started = []
    for module, key, name, text, value in BAD:
        setting = next(s for s in node_class(key).SETTINGS if s.name == name)
        with pytest.raises(ConfigError) as refusal:
            setting.validate(value)
        node = start_node(module, params_file=None, parameters=[(name, text)],
                          name=f'{key}-{name}')
        started.append((node, f'refusing to start: parameter {refusal.value}'))
    for node, expected in started:
        assert node.wait(120) == 2, node.output()
        lines = [line for line in node.output().splitlines() if 'refusing to start' in line]
        assert len(lines) == 1 and lines[0].endswith(expected), (expected, node.output())
