"""Tests of the YAML model loader: the shipped model and refusal of bad files.

Expected values come from the YAML text itself (read here with PyYAML, independently of
the loader) and from rotation matrices written out in this file.
"""

import copy
import math
from pathlib import Path
import re

import numpy as np
import pytest
import yaml

from flexible_manipulator.model_config import ConfigError, load_model, model_from_dict

MODEL_FILE = Path(__file__).resolve().parents[1] / 'config' / 'models' / 'two_link_rigid.yaml'


def rot_x(a):
    """Rotation by ``a`` about x (right hand)."""
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def rot_y(a):
    """Rotation by ``a`` about y (right hand)."""
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def rot_z(a):
    """Rotation by ``a`` about z (right hand)."""
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def urdf_rpy(roll, pitch, yaw):
    """URDF fixed-axis roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll) (URDF spec, <origin>)."""
    return rot_z(yaw) @ rot_y(pitch) @ rot_x(roll)


def raw_spec():
    """Return the shipped model file as a plain dict (PyYAML, no loader involved)."""
    with open(MODEL_FILE, encoding='utf-8') as stream:
        return yaml.safe_load(stream)


def test_shipped_model_loads_with_file_values():
    """Every link field of the model equals the value written in the YAML file."""
    spec = raw_spec()
    model = load_model(str(MODEL_FILE))
    assert model.name == spec['name'] == 'two_link_rigid'
    assert model.nq == model.nv == model.nu == len(spec['links']) == 2
    assert model.joint_names == ('shoulder', 'elbow')
    assert model.link_names == ('upper_arm', 'forearm')
    assert model.base_frame == 'base_link'
    assert model.tool_frame == 'tool0'
    np.testing.assert_array_equal(model.base_xyz, spec['base']['xyz'])
    np.testing.assert_array_equal(model.base_rpy, spec['base']['rpy'])
    for field in ('length', 'mass', 'com', 'inertia', 'damping', 'effort_limit',
                  'velocity_limit', 'lower', 'upper'):
        np.testing.assert_array_equal(getattr(model, field),
                                      [link[field] for link in spec['links']], err_msg=field)


def test_shipped_model_gravity_in_base_frame():
    """gravity_base = R(rpy)^T g_world; for this arm (roll = pi/2) that is (0, -g, 0).

    The base x-y plane is the world x-z plane, so world 'down' (-z) is base -y: the arm
    moves in a vertical plane with gravity fully in its plane.
    """
    spec = raw_spec()
    model = load_model(str(MODEL_FILE))
    expected = urdf_rpy(*spec['base']['rpy']).T @ np.array(spec['gravity'])
    np.testing.assert_allclose(model.gravity_base, expected, atol=1e-12)
    np.testing.assert_allclose(model.gravity_base, [0.0, -9.80665, 0.0], atol=1e-12)


def test_gravity_rotated_into_general_base_orientation(tmp_path):
    """With a general rpy (all three angles non-zero) gravity_base = R^T g_world."""
    spec = raw_spec()
    spec['base']['rpy'] = [0.3, -0.4, 1.1]
    spec['gravity'] = [0.5, -1.0, -9.8]
    model = load_model(write(tmp_path, spec))
    expected = urdf_rpy(0.3, -0.4, 1.1).T @ np.array([0.5, -1.0, -9.8])
    np.testing.assert_allclose(model.gravity_base, expected, atol=1e-12)
    # A rotation keeps the magnitude: a cheap guard against a transposed or scaled R.
    assert np.linalg.norm(model.gravity_base) == pytest.approx(math.sqrt(0.25 + 1 + 96.04))


def test_defaults_for_optional_fields():
    """Optional fields default as documented: gravity 9.80665 down, zero base pose, tool0."""
    spec = raw_spec()
    for key in ('gravity', 'base', 'tool_frame', 'description'):
        del spec[key]
    for link in spec['links']:
        for key in ('damping', 'lower', 'upper'):
            del link[key]
    model = model_from_dict(spec)
    np.testing.assert_array_equal(model.gravity_base, [0.0, 0.0, -9.80665])
    np.testing.assert_array_equal(model.base_xyz, [0.0, 0.0, 0.0])
    assert model.base_frame == 'base_link' and model.tool_frame == 'tool0'
    np.testing.assert_array_equal(model.damping, [0.0, 0.0])
    assert np.all(model.lower == -math.inf) and np.all(model.upper == math.inf)


def write(tmp_path, content, name='model.yaml'):
    """Write ``content`` (a dict, dumped as YAML, or raw text) and return the path."""
    path = tmp_path / name
    text = content if isinstance(content, str) else yaml.safe_dump(content)
    path.write_text(text, encoding='utf-8')
    return str(path)


def refused(tmp_path, content):
    """Load ``content`` from a file; return the ConfigError message (must be raised)."""
    path = write(tmp_path, content)
    with pytest.raises(ConfigError) as info:
        load_model(path)
    message = str(info.value)
    assert message.startswith(path), message  # the file is named in every message
    return message


def mutated(change):
    """Return the shipped spec with ``change(spec)`` applied to a deep copy."""
    spec = copy.deepcopy(raw_spec())
    change(spec)
    return spec


def _set(path, value):
    """Return a function setting spec[path...] = value (path: keys and indices)."""
    def change(spec):
        target = spec
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return change


def _delete(path):
    """Return a function deleting spec[path...]."""
    def change(spec):
        target = spec
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return change


def _rename_key(path, old, new):
    """Return a function renaming key ``old`` to ``new`` in spec[path...] (a typo)."""
    def change(spec):
        target = spec
        for key in path:
            target = target[key]
        target[new] = target.pop(old)
    return change


# (id, change, field that the message must name) -- the field paths follow the loader's
# documented convention (module docstring: "links[1].length").
BAD_SPECS = [
    ('negative length', _set(['links', 0, 'length'], -0.5), 'links[0].length'),
    ('zero length', _set(['links', 1, 'length'], 0.0), 'links[1].length'),
    ('zero mass', _set(['links', 0, 'mass'], 0.0), 'links[0].mass'),
    ('negative inertia', _set(['links', 1, 'inertia'], -0.01), 'links[1].inertia'),
    ('negative damping', _set(['links', 0, 'damping'], -0.1), 'links[0].damping'),
    ('missing effort_limit', _delete(['links', 1, 'effort_limit']), 'links[1].effort_limit'),
    ('missing links', _delete(['links']), 'links'),
    ('link key typo', _rename_key(['links', 0], 'damping', 'dampnig'), 'links[0].dampnig'),
    # A typo in a required key: the now missing required field is what gets named.
    ('required key typo', _rename_key(['links', 0], 'length', 'lenght'), 'links[0].length'),
    ('top-level key typo', _rename_key([], 'gravity', 'gravty'), 'gravty'),
    ('base key typo', _rename_key(['base'], 'rpy', 'rpy_'), 'base.rpy_'),
    ('unknown type', _set(['type'], 'planar_chian'), 'type'),
    ('lower equals upper', _set(['links', 1, 'lower'], 2.8), 'links[1].lower'),
    ('lower above upper', _set(['links', 0, 'lower'], 3.5), 'links[0].lower'),
    # Duplicates: the entry that repeats an earlier name is the one blamed.
    ('duplicate joint', _set(['links', 1, 'joint'], 'shoulder'), 'links[1].joint'),
    ('duplicate link name', _set(['links', 1, 'name'], 'upper_arm'), 'links[1].name'),
    # A point mass on its joint axis (com 0, inertia 0) has m c^2 + I = 0: the mass matrix
    # column of that joint vanishes (singular M), so the file is refused.
    ('no rotational inertia', lambda spec: spec['links'][1].update(com=0.0, inertia=0.0),
     'links[1].inertia'),
    ('link named like the base', _set(['links', 0, 'name'], 'base_link'), 'links[0].name'),
    ('empty links', _set(['links'], []), 'links'),
    ('links not a list', _set(['links'], {'name': 'x'}), 'links'),
    ('NaN mass', _set(['links', 0, 'mass'], math.nan), 'links[0].mass'),
    ('infinite length', _set(['links', 1, 'length'], math.inf), 'links[1].length'),
    ('string length', _set(['links', 0, 'length'], 'long'), 'links[0].length'),
    ('boolean mass', _set(['links', 1, 'mass'], True), 'links[1].mass'),
    ('string in gravity', _set(['gravity'], [0.0, 0.0, 'down']), 'gravity[2]'),
    ('short xyz', _set(['base', 'xyz'], [0.0, 1.0]), 'base.xyz'),
    ('bad joint name', _set(['links', 0, 'joint'], 'shoulder joint'), 'links[0].joint'),
    ('link not a mapping', _set(['links', 1], 'forearm'), 'links[1]'),
]


@pytest.mark.parametrize('change, field', [case[1:] for case in BAD_SPECS],
                         ids=[case[0] for case in BAD_SPECS])
def test_bad_field_is_refused_naming_the_field(tmp_path, change, field):
    """Each broken field gives a ConfigError whose message names that field's path."""
    message = refused(tmp_path, mutated(change))
    # The field must appear as a whole path (not e.g. 'links[0].length' inside a longer one).
    pattern = re.escape(field)
    assert re.search(r'(^|[\s:]){}[\s:]'.format(pattern), message), message


def test_nan_written_as_yaml_is_refused(tmp_path):
    """A NaN in YAML's own '.nan' spelling (not a Python-dumped float) is refused too."""
    text = MODEL_FILE.read_text(encoding='utf-8').replace('mass: 0.8', 'mass: .nan')
    assert '.nan' in text
    assert 'links[1].mass' in refused(tmp_path, text)


def test_yaml_syntax_error_is_refused(tmp_path):
    """A file that is not valid YAML is refused as such (not a raw yaml exception)."""
    message = refused(tmp_path, 'name: two_link\nlinks: [ {name: a,\n')
    assert 'not valid YAML' in message


@pytest.mark.parametrize('text', ['- a\n- b\n', 'just a string\n', ''])
def test_non_mapping_top_level_is_refused(tmp_path, text):
    """A list, a scalar or an empty file is not a model description."""
    assert 'mapping at the top level' in refused(tmp_path, text)


def test_missing_file_is_refused(tmp_path):
    """A path that does not exist gives a ConfigError naming the path."""
    path = str(tmp_path / 'absent.yaml')
    with pytest.raises(ConfigError, match=re.escape(path)):
        load_model(path)


def test_tool_frame_equal_to_base_frame_is_refused():
    """tool_frame == base.frame would make the URDF declare one link name twice."""
    with pytest.raises(ConfigError, match='tool_frame'):
        model_from_dict(mutated(_set(['tool_frame'], 'base_link')))


def test_non_string_model_name_is_refused():
    """A model name that is not a string is refused, naming the field 'name'."""
    with pytest.raises(ConfigError, match='name'):
        model_from_dict(mutated(_set(['name'], 123)))
