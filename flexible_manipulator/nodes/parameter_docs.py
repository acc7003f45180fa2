"""The parameter tables of doc/nodes.md, generated from the nodes' own descriptors.

Each node declares every parameter of its settings schema, with the setting's default and
description (`settings.Setting`, `common.declare_settings`); that is the one source (a
default derived from the model, ``joints``, shows as the default model gives it). This
module creates each node in this process (with the overrides below: the controller once
per mode), reads back its parameters and writes one markdown table per node between the
marker lines of the document::

    <!-- parameters:plant -->
    ...generated table...
    <!-- /parameters -->

``python -m flexible_manipulator.nodes.parameter_docs --write doc/nodes.md`` rewrites the
tables; ``--check`` exits 1 when the document differs (a test runs the same check).
Run it with the package's environment (``. .venv/fm_env.sh``); it keeps DDS on this host.
"""

import os
import re
import sys

from ..doc_blocks import cell, write_or_check

# Table key: (module, node class, parameter overrides that let the node start; the tables
# show the schema's defaults, `common.declare_settings`). The default program file on
# the full flexible model is refused (the sampled loop with all 6 modes modelled is
# unstable at 2 ms), so the controller is built as config/sim.yaml builds it.
NODES = {
    'plant': ('plant_node', 'PlantNode', ()),
    'servo_plant': ('servo_node', 'ServoNode', ()),
    'controller': ('controller_node', 'ControllerNode', (('control_modes', 1),)),
    'controller_servo': ('servo_controller_node', 'ServoControllerNode', ()),
}
MARKER = re.compile(r'(<!-- parameters:(\w+) -->\n)(.*?)(<!-- /parameters -->)', re.S)
ROS_PARAMETERS = ('use_sim_time', 'start_type_description_service')   # declared by rclpy


def _default(value):
    if value is None:
        return 'unset'
    if isinstance(value, str):
        return f'`{value}`' if value else '""'
    if isinstance(value, bool):
        return f'`{str(value).lower()}`'
    if isinstance(value, (list, tuple)) or hasattr(value, 'tolist'):
        values = list(value)
        return '`[' + ', '.join(f'{v:g}' if isinstance(v, float) else str(v)
                                for v in values) + ']`'
    if isinstance(value, float):
        return f'`{value:g}`'
    return f'`{value}`'


def node_parameters(key):
    """Return [(name, default, description, dynamic)] of one node of `NODES`, by name."""
    import importlib
    import rclpy
    from rclpy.parameter import Parameter
    module, cls, overrides = NODES[key]
    context = rclpy.Context()
    rclpy.init(args=[], context=context)
    node_class = getattr(importlib.import_module(f'flexible_manipulator.nodes.{module}'), cls)
    node = None
    try:
        node = node_class(context=context, parameter_overrides=[
            Parameter(name, value=value) for name, value in overrides])
        names = sorted(n for n in node._parameters if n not in ROS_PARAMETERS)
        rows = []
        for name, descriptor in zip(names, node.describe_parameters(names)):
            rows.append((name, node.parameter_defaults[name], descriptor.description,
                         not descriptor.read_only))
        return rows
    finally:
        if node is not None:
            node.destroy_node()
        context.try_shutdown()


def render(rows):
    """Return a markdown table of ``rows`` (see `node_parameters`), sorted by name."""
    lines = ['| parameter | default | meaning |', '|---|---|---|']
    for name, value, description, dynamic in rows:
        note = ' Settable at run time (`ros2 param set`).' if dynamic else ''
        lines.append(f'| `{name}` | {_default(value)} | {cell(description)}{note} |')
    return '\n'.join(lines) + '\n'


def update(text, tables):
    """Return ``text`` with every marked table replaced by ``tables[key]``."""
    def replace(match):
        key = match.group(2)
        if key not in tables:
            raise KeyError(f'unknown parameter table {key!r}; known: {", ".join(tables)}')
        return f'{match.group(1)}\n{tables[key]}\n{match.group(4)}'
    return MARKER.sub(replace, text)


def generate():
    """Return {key: table} for every node of `NODES`."""
    os.environ.setdefault('FASTDDS_BUILTIN_TRANSPORTS', 'SHM')
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    return {key: render(node_parameters(key)) for key in NODES}


def main(argv=None):
    """Write or check the tables of a document."""
    return write_or_check(argv, __doc__.split('\n')[0],
                          lambda text: update(text, generate()),
                          "parameter tables differ from the nodes' descriptors")


if __name__ == '__main__':
    sys.exit(main())
