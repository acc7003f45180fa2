"""doc/nodes.md's parameter tables are the nodes' own parameter descriptors.

Expected: regenerating the tables from the real nodes (created in a process of their own
on this test's ROS domain) leaves doc/nodes.md unchanged; a table that drifts from the
code (a renamed parameter, a new default) fails here with the command that fixes it.
"""

import os
import subprocess
import sys

from conftest import REPO

from flexible_manipulator.nodes import parameter_docs


def test_the_node_parameter_tables_match_the_descriptors(domain_id):
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain_id))
    result = subprocess.run(
        [sys.executable, '-m', 'flexible_manipulator.nodes.parameter_docs', 'doc/nodes.md',
         '--check'], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]


def test_every_table_of_the_generator_has_markers_in_the_document():
    with open(os.path.join(REPO, 'doc', 'nodes.md')) as stream:
        keys = [match.group(2) for match in parameter_docs.MARKER.finditer(stream.read())]
    assert sorted(keys) == sorted(parameter_docs.NODES)


def test_update_replaces_only_the_marked_table():
    text = ('intro\n<!-- parameters:plant -->\n\nold table\n\n<!-- /parameters -->\nafter\n')
    table = parameter_docs.render([('integrator', 'rk4', 'Scheme.', False),
                                   ('active_program', 'hold', 'Program.', True)])
    updated = parameter_docs.update(text, {'plant': table})
    assert updated.startswith('intro\n<!-- parameters:plant -->\n\n| parameter |')
    assert '| `integrator` | `rk4` | Scheme. |' in updated
    assert 'Settable at run time' in updated and 'old table' not in updated
    assert updated.endswith('<!-- /parameters -->\nafter\n')
