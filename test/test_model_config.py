"""Tests of the YAML model loader: the shipped models and refusal of bad files.

Expected values come from the YAML text itself (read here with PyYAML, independently of
the loader), from the defaults documented in the loader's module docstring and from
rotation matrices written out in this file.
"""

import copy
import math
from pathlib import Path
import re

import numpy as np
import pytest
import yaml

from flexible_manipulator.model_config import ConfigError, load_model, model_from_dict

MODELS = Path(__file__).resolve().parents[1] / 'config' / 'models'
MODEL_FILE = MODELS / 'two_link_rigid.yaml'
FLEXIBLE_FILE = MODELS / 'two_link_flexible.yaml'


def urdf_rpy(roll, pitch, yaw):
    """URDF fixed-axis roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll) (URDF spec, <origin>)."""
    cr, sr, cp, sp, cy, sy = (math.cos(roll), math.sin(roll), math.cos(pitch),
                              math.sin(pitch), math.cos(yaw), math.sin(yaw))
    rot_x = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])   # right-hand rotations
    rot_y = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    rot_z = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return rot_z @ rot_y @ rot_x


def raw_spec(path=MODEL_FILE):
    """Return a model file as a plain dict (PyYAML, no loader involved)."""
    with open(path, encoding='utf-8') as stream:
        return yaml.safe_load(stream)


def tensor(values):
    """[ixx, iyy, izz, ixy, ixz, iyz] as the symmetric 3x3 matrix."""
    ixx, iyy, izz, ixy, ixz, iyz = values
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


def check_body(body, spec, label):
    np.testing.assert_array_equal(body.mass, spec.get('mass', 0.0), err_msg=label)
    np.testing.assert_array_equal(body.com, spec.get('com', [0.0] * 3), err_msg=label)
    np.testing.assert_array_equal(body.inertia, tensor(spec.get('inertia', [0.0] * 6)),
                                  err_msg=label)


# Joint fields and their documented defaults (None: required).
JOINT_FIELDS = {'type': 'revolute', 'axis': [0.0, 0.0, 1.0], 'xyz': [0.0] * 3,
                'rpy': [0.0] * 3, 'damping': 0.0, 'armature': 0.0, 'effort_limit': None,
                'velocity_limit': None, 'lower': -math.inf, 'upper': math.inf}
SHIPPED = [  # file, joints, links, nq, n_modes
    ('two_link_rigid', ('shoulder', 'elbow'), ('upper_arm', 'forearm'), 2, 0),
    ('two_link_flexible', ('shoulder', 'elbow'), ('upper_arm', 'forearm'), 8, 6),
    ('three_link_spatial_flexible', ('waist', 'shoulder', 'elbow'),
     ('column', 'upper_arm', 'forearm'), 11, 8)]


@pytest.mark.parametrize('name, joints, links, nq, n_modes', SHIPPED,
                         ids=[case[0] for case in SHIPPED])
def test_shipped_model_loads_with_file_values(name, joints, links, nq, n_modes):
    """Names, sizes and every link, joint, beam and payload field equal the YAML file's."""
    spec = raw_spec(MODELS / f'{name}.yaml')
    model = load_model(str(MODELS / f'{name}.yaml'))
    assert model.name == spec['name'] == name
    assert model.joint_names == joints and model.link_names == links
    assert model.nq == model.nv == nq and model.n_modes == n_modes
    assert model.nu == model.n_joints == len(spec['links']) == len(joints)
    assert model.base_frame == spec['base']['frame'] == 'base_link'
    assert model.tool_frame == spec['tool_frame'] == 'tool0'
    assert model.geometric_stiffening is spec.get('geometric_stiffening', True)
    np.testing.assert_array_equal(model.base_xyz, spec['base']['xyz'])
    np.testing.assert_array_equal(model.base_rpy, spec['base']['rpy'])
    for link, raw in zip(model.links, spec['links']):
        assert link.length == raw['length'] and link.frames == raw.get('frames', 0)
        check_body(link.body, raw, link.name)
        check_body(link.payload, raw.get('payload', {}), link.name + '.payload')
        for field, default in JOINT_FIELDS.items():
            np.testing.assert_array_equal(getattr(link.joint, field),
                                          raw['joint'].get(field, default), err_msg=field)
        if 'beam' not in raw:
            assert link.beam is None
            continue
        beam = raw['beam']
        assert (link.beam.linear_density, link.beam.bending_stiffness, link.beam.modes,
                link.beam.damping_ratio, link.beam.quadrature_points) == (
            beam['linear_density'], tuple(beam['bending_stiffness']), tuple(beam['modes']),
            beam.get('damping_ratio', 0.0), beam.get('quadrature_points', 0))
    for field in ('effort_limit', 'velocity_limit', 'lower', 'upper'):
        np.testing.assert_array_equal(
            getattr(model, field), [raw['joint'].get(field, JOINT_FIELDS[field])
                                    for raw in spec['links']], err_msg=field)


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
    """Optional fields default as documented.

    Gravity 9.80665 down, zero base pose, tool0, stiffening on; revolute joints about z at
    the parent tip, no friction, no limits; no payload, no section frames.
    """
    spec = raw_spec(FLEXIBLE_FILE)
    for key in ('gravity', 'base', 'tool_frame', 'description', 'geometric_stiffening'):
        del spec[key]
    for link in spec['links']:
        for key in ('type', 'axis', 'xyz', 'rpy', 'damping', 'armature', 'lower', 'upper'):
            link['joint'].pop(key, None)
        for key in ('payload', 'frames'):
            del link[key]
        del link['beam']['damping_ratio']
    model = model_from_dict(spec)
    np.testing.assert_array_equal(model.gravity_base, [0.0, 0.0, -9.80665])
    np.testing.assert_array_equal(model.base_xyz, [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(model.base_rpy, [0.0, 0.0, 0.0])
    assert model.base_frame == 'base_link' and model.tool_frame == 'tool0'
    assert model.geometric_stiffening is True
    for link in model.links:
        assert (link.joint.type, link.joint.axis, link.joint.xyz, link.joint.rpy) == (
            'revolute', (0.0, 0.0, 1.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
        assert link.joint.damping == link.joint.armature == 0.0
        assert (link.joint.lower, link.joint.upper) == (-math.inf, math.inf)
        assert link.payload.mass == 0.0 and not np.any(link.payload.inertia)
        assert link.frames == 0
        assert link.beam.damping_ratio == 0.0 and link.beam.quadrature_points == 0


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


def mutated(change, path=MODEL_FILE):
    """Return the spec of file ``path`` with ``change(spec)`` applied to a deep copy."""
    spec = copy.deepcopy(raw_spec(path))
    change(spec)
    return spec


def _target(spec, path):
    for key in path:
        spec = spec[key]
    return spec


def _set(path, value):
    """Return a function setting spec[path...] = value (path: keys and indices)."""
    return lambda spec: _target(spec, path[:-1]).__setitem__(path[-1], value)


def _delete(path):
    """Return a function deleting spec[path...]."""
    return lambda spec: _target(spec, path[:-1]).__delitem__(path[-1])


def _rename_key(path, old, new):
    """Return a function renaming key ``old`` to ``new`` in spec[path...] (a typo)."""
    def change(spec):
        target = _target(spec, path)
        target[new] = target.pop(old)
    return change


L0, L1, J0, J1 = ['links', 0], ['links', 1], ['links', 0, 'joint'], ['links', 1, 'joint']
B0, B1 = ['links', 0, 'beam'], ['links', 1, 'beam']

# (id, change, field that the message must name) on the rigid file -- the field paths
# follow the loader's documented convention (module docstring: dotted path of the field).
BAD_SPECS = [
    ('negative length', _set(L0 + ['length'], -0.5), 'links[0].length'),
    ('negative mass', _set(L0 + ['mass'], -1.0), 'links[0].mass'),
    ('negative inertia', _set(L1 + ['inertia'], [-0.01, 0.01, 0.01, 0, 0, 0]),
     'links[1].inertia'),
    # Positive diagonal, but eigenvalues 1 +- 2 < 0: not an inertia tensor.
    ('non-PSD inertia', _set(L1 + ['inertia'], [1.0, 1.0, 1.0, 2.0, 0, 0]), 'links[1].inertia'),
    ('short inertia', _set(L0 + ['inertia'], [0.1, 0.1, 0.1]), 'links[0].inertia'),
    ('short com', _set(L0 + ['com'], [0.25, 0.0]), 'links[0].com'),
    ('negative damping', _set(J0 + ['damping'], -0.1), 'links[0].joint.damping'),
    ('negative armature', _set(J1 + ['armature'], -0.1), 'links[1].joint.armature'),
    ('zero velocity limit', _set(J0 + ['velocity_limit'], 0.0), 'links[0].joint.velocity_limit'),
    ('missing effort_limit', _delete(J1 + ['effort_limit']), 'links[1].joint.effort_limit'),
    ('missing joint', _delete(L1 + ['joint']), 'links[1].joint'),
    ('joint not a mapping', _set(J0, 'shoulder'), 'links[0].joint'),
    ('unknown joint type', _set(J0 + ['type'], 'spherical'), 'links[0].joint.type'),
    ('non-unit axis', _set(J1 + ['axis'], [0.0, 0.0, 2.0]), 'links[1].joint.axis'),
    ('zero axis', _set(J0 + ['axis'], [0.0, 0.0, 0.0]), 'links[0].joint.axis'),
    ('short joint xyz', _set(J0 + ['xyz'], [0.0, 0.0]), 'links[0].joint.xyz'),
    ('string in joint rpy', _set(J1 + ['rpy'], [0.0, 'x', 0.0]), 'links[1].joint.rpy[1]'),
    ('missing links', _delete(['links']), 'links'),
    ('link key typo', _rename_key(L0, 'mass', 'mas'), 'links[0].mas'),
    ('joint key typo', _rename_key(J0, 'damping', 'dampnig'), 'links[0].joint.dampnig'),
    # A typo in a required key: the typo is named (with the closest key, see below), not
    # the correct key as missing.
    ('required key typo', _rename_key(L0, 'length', 'lenght'), 'links[0].lenght'),
    ('top-level key typo', _rename_key([], 'gravity', 'gravty'), 'gravty'),
    ('base key typo', _rename_key(['base'], 'rpy', 'rpy_'), 'base.rpy_'),
    ('unknown type', _set(['type'], 'planar_chain'), 'type'),
    ('stiffening not a bool', _set(['geometric_stiffening'], 'yes'), 'geometric_stiffening'),
    ('lower equals upper', _set(J1 + ['lower'], 2.8), 'links[1].joint.lower'),
    ('lower above upper', _set(J0 + ['lower'], 3.5), 'links[0].joint.lower'),
    # Duplicates: the entry that repeats an earlier name is the one blamed.
    ('duplicate joint', _set(J1 + ['name'], 'shoulder'), 'links[1].joint.name'),
    ('duplicate link name', _set(L1 + ['name'], 'upper_arm'), 'links[1].name'),
    # Each link owns <name>_tip too: a link named like another's tip frame clashes.
    ('link named like a tip', _set(L1 + ['name'], 'upper_arm_tip'), 'links[1].name'),
    ('tip named like a link', _set(L0 + ['name'], 'forearm_tip'), 'links[1].name'),
    ('link named like the tool', _set(L1 + ['name'], 'tool0'), 'links[1].name'),
    # A point mass on its joint axis (com 0, inertia 0) has no inertia about the axis:
    # the mass matrix column of that joint vanishes (singular M), so the file is refused.
    ('no rotational inertia',
     lambda spec: spec['links'][1].update(com=[0.0] * 3, inertia=[0.0] * 6),
     'links[1].inertia'),
    ('massless prismatic link',
     lambda spec: (spec['links'][0].update(mass=0.0), spec['links'][0]['joint'].update(
         type='prismatic')), 'links[0].mass'),
    ('link named like the base', _set(L0 + ['name'], 'base_link'), 'links[0].name'),
    # tool_frame == base.frame would make the URDF declare one link name twice.
    ('tool frame is the base', _set(['tool_frame'], 'base_link'), 'tool_frame'),
    ('non-string model name', _set(['name'], 123), 'name'),
    ('empty links', _set(['links'], []), 'links'),
    ('links not a list', _set(['links'], {'name': 'x'}), 'links'),
    ('NaN mass', _set(L0 + ['mass'], math.nan), 'links[0].mass'),
    ('infinite length', _set(L1 + ['length'], math.inf), 'links[1].length'),
    ('string length', _set(L0 + ['length'], 'long'), 'links[0].length'),
    ('boolean mass', _set(L1 + ['mass'], True), 'links[1].mass'),
    ('string in gravity', _set(['gravity'], [0.0, 0.0, 'down']), 'gravity[2]'),
    ('short xyz', _set(['base', 'xyz'], [0.0, 1.0]), 'base.xyz'),
    ('bad joint name', _set(J0 + ['name'], 'shoulder joint'), 'links[0].joint.name'),
    ('link not a mapping', _set(L1, 'forearm'), 'links[1]'),
] + [(f'frames {value!r}', _set(L0 + ['frames'], value), 'links[0].frames')
     for value in (-1, 51, 2.0, True, '3')]

# The same on the flexible file (beams, payloads, section frames).
BAD_FLEXIBLE_SPECS = [
    ('zero linear_density', _set(B0 + ['linear_density'], 0.0), 'links[0].beam.linear_density'),
    ('negative linear_density', _set(B1 + ['linear_density'], -0.2),
     'links[1].beam.linear_density'),
    ('zero EI along y', _set(B0 + ['bending_stiffness'], [0.0, 472.5]),
     'links[0].beam.bending_stiffness[0]'),
    ('negative EI along z', _set(B1 + ['bending_stiffness'], [4.7, -1.0]),
     'links[1].beam.bending_stiffness[1]'),
    ('one EI', _set(B0 + ['bending_stiffness'], [4.7]), 'links[0].beam.bending_stiffness'),
    ('11 modes', _set(B0 + ['modes'], [11, 0]), 'links[0].beam.modes[0]'),
    ('-1 modes', _set(B1 + ['modes'], [3, -1]), 'links[1].beam.modes[1]'),
    ('fractional modes', _set(B0 + ['modes'], [2.5, 0]), 'links[0].beam.modes'),
    ('boolean modes', _set(B0 + ['modes'], [True, 0]), 'links[0].beam.modes'),
    ('scalar modes', _set(B0 + ['modes'], 3), 'links[0].beam.modes'),
    ('three mode counts', _set(B1 + ['modes'], [1, 1, 1]), 'links[1].beam.modes'),
    ('negative damping_ratio', _set(B0 + ['damping_ratio'], -0.01),
     'links[0].beam.damping_ratio'),
    ('missing linear_density', _delete(B0 + ['linear_density']),
     'links[0].beam.linear_density'),
    ('beam key typo', _rename_key(B1, 'damping_ratio', 'damping'), 'links[1].beam.damping'),
    ('beam not a mapping', _set(B0, 0.243), 'links[0].beam'),
    ('beam section zero width', _set(B0 + ['section', 'width'], 0.0),
     'links[0].beam.section.width'),
    ('beam section shape', _set(B1 + ['section', 'shape'], 'hexagon'),
     'links[1].beam.section.shape'),
    ('beam section key typo', _rename_key(B0 + ['section'], 'height', 'thickness'),
     'links[0].beam.section.thickness'),
    ('zero length of a beam', _set(L1 + ['length'], 0.0), 'links[1].length'),
    ('negative payload mass', _set(L0 + ['payload', 'mass'], -0.25), 'links[0].payload.mass'),
    ('non-PSD payload inertia', _set(L1 + ['payload', 'inertia'], [1, 1, 1, 0, 0, 3]),
     'links[1].payload.inertia'),
    ('payload key typo', _rename_key(L0 + ['payload'], 'mass', 'weight'),
     'links[0].payload.weight'),
    ('link named like a section', _set(L1 + ['name'], 'upper_arm_s4'), 'links[1].name'),
] + [(f'quadrature_points {value!r}', _set(B0 + ['quadrature_points'], value),
      'links[0].beam.quadrature_points') for value in (-1, 201, 2.5, True, 'auto')]

R0 = L0 + ['rod']
BAD_SOFT_SPECS = [
    ('rod density zero', _set(R0 + ['material', 'density'], 0.0),
     'links[0].rod.material.density'),
    ('rod E negative', _set(R0 + ['material', 'young_modulus'], -1.0),
     'links[0].rod.material.young_modulus'),
    ('rod Poisson ratio 1', _set(R0 + ['material', 'shear_modulus'], 5.0e5),
     'links[0].rod.material.shear_modulus'),
    ('rod radius zero', _set(R0 + ['section', 'radius'], 0.0), 'links[0].rod.section.radius'),
    ('rod section shape', _set(R0 + ['section', 'shape'], 'hexagon'),
     'links[0].rod.section.shape'),
    ('rod no strain', _set(R0 + ['strains'], {}), 'links[0].rod.strains'),
    ('rod order 21', _set(R0 + ['strains'], {'bending_y': 21}), 'links[0].rod.strains'),
    ('rod strain typo', _set(R0 + ['strains'], {'bend_y': 2}), 'links[0].rod.strains'),
    ('rod points 0', _set(R0 + ['points'], 0), 'links[0].rod.points'),
    ('rod damping negative', _set(R0 + ['damping_time'], -1.0), 'links[0].rod.damping_time'),
    ('rod rest curvature size', _set(R0 + ['rest_curvature'], [0.0, 1.0]),
     'links[0].rod.rest_curvature'),
    ('rod rest curvature NaN', _set(R0 + ['rest_curvature'], [0.0, float('nan'), 0.0]),
     'links[0].rod.rest_curvature[1]'),
    ('rod and beam', _set(L0 + ['beam'], {'linear_density': 1.0, 'bending_stiffness': [1, 1],
                                          'modes': [1, 0]}), 'links[0].rod'),
]
BAD_RIGID_FIXED = [('fixed joint on a rigid link', _set(L0 + ['joint', 'type'], 'fixed'),
                    'links[0].joint.type')]
SOFT_FILE = MODELS / 'two_link_soft.yaml'
CASES = ([(MODEL_FILE,) + case for case in BAD_SPECS + BAD_RIGID_FIXED]
         + [(FLEXIBLE_FILE,) + case for case in BAD_FLEXIBLE_SPECS]
         + [(SOFT_FILE,) + case for case in BAD_SOFT_SPECS])


def test_the_soft_arm_has_cosserat_links_with_the_sections_of_its_file():
    """Circle of radius r: A = pi r^2, I = pi r^4/4, J = pi r^4/2, Cowper's shear factor
    6 (1 + nu)/(7 + 6 nu) with nu = E/2G - 1; strain coordinates named <link>_<strain>_<k>."""
    spec = raw_spec(SOFT_FILE)
    model = load_model(str(SOFT_FILE))
    assert model.kind == 'serial_chain' and model.joint_names == ('shoulder', 'elbow')
    assert model.mode_names[:7] == tuple(f'upper_arm_bending_y_{k}' for k in range(5)) + (
        'upper_arm_extension_0', 'upper_arm_extension_1')
    for link, raw in zip(model.links, spec['links']):
        material, r = raw['rod']['material'], raw['rod']['section']['radius']
        rho, young, shear = material['density'], material['young_modulus'], \
            material['shear_modulus']
        nu = young / (2 * shear) - 1
        area, second = math.pi * r ** 2, math.pi * r ** 4 / 4
        section = link.rod.section
        assert section.linear_density == pytest.approx(rho * area)
        np.testing.assert_allclose(section.rotary_inertia, rho * second * np.array([2, 1, 1]))
        kappa = 6 * (1 + nu) / (7 + 6 * nu)
        np.testing.assert_allclose(section.stiffness, [
            shear * 2 * second, young * second, young * second, young * area,
            kappa * shear * area, kappa * shear * area])
        assert section.damping_time == raw['rod']['damping_time']
        assert link.rod.basis.names[:5] == [f'bending_y_{k}' for k in range(5)]


@pytest.mark.parametrize('path, change, field', [(c[0],) + c[2:] for c in CASES],
                         ids=[case[1] for case in CASES])
def test_bad_field_is_refused_naming_the_field(tmp_path, path, change, field):
    """Each broken field gives a ConfigError whose message names that field's path."""
    message = refused(tmp_path, mutated(change, path))
    # The field must appear as a whole path (not e.g. 'links[0].length' inside a longer one).
    pattern = re.escape(field)
    assert re.search(r'(^|[\s:]){}[\s:]'.format(pattern), message), message


def test_a_rigid_link_of_zero_length_has_its_tip_at_its_joint(tmp_path):
    """A rigid link may have length 0 (a URDF's links: doc/models.md): its tip frame is its
    joint frame, so the forearm's joint sits where the upper arm's does (the file's
    shoulder origin, the base frame's origin)."""
    spec = raw_spec()
    spec['links'][0]['length'] = 0.0
    model = load_model(write(tmp_path, spec))
    link_R, link_p, tip_R, tip_p = model.frame_placements(model.create_data(), [0.7, -0.4])
    np.testing.assert_allclose(tip_p[0], link_p[0], atol=1e-15)
    np.testing.assert_allclose(link_p[1], link_p[0], atol=1e-15)
    np.testing.assert_allclose(link_R[1], urdf_rpy(0, 0, 0.3), atol=1e-15)


def test_frames_and_quadrature_extremes_are_accepted():
    """The range ends load: frames 0 and 50, quadrature_points 0 and 200, 10 modes."""
    def change(spec):
        spec['links'][0].update(frames=50)
        spec['links'][1].update(frames=0)
        spec['links'][0]['beam'].update(quadrature_points=200, modes=[10, 0])
        spec['links'][1]['beam'].update(quadrature_points=0)
    model = model_from_dict(mutated(change, FLEXIBLE_FILE))
    assert [link.frames for link in model.links] == [50, 0]
    assert model.n_modes == 10 + 3


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


def test_a_misspelled_key_is_named_with_the_closest_known_key(tmp_path):
    """'lenght' for 'length' (required) and 'dampnig' for 'damping' (optional): the typo is
    named and the intended key suggested."""
    message = refused(tmp_path, mutated(_rename_key(L0, 'length', 'lenght')))
    assert "links[0].lenght: unknown field (did you mean 'length'?" in message
    message = refused(tmp_path, mutated(_rename_key(J0, 'damping', 'dampnig')))
    assert "did you mean 'damping'?" in message


def test_gravity_sag_past_the_link_length_is_refused_and_past_validity_warned(tmp_path):
    """The flexible arm's upper link (L, EI = bending_stiffness, rho A = linear_density,
    tip payload m) sags delta = g (rho A L^4 / (8 EI) + m L^3 / (3 EI)) under gravity
    across it (Euler-Bernoulli cantilever). A density giving delta = 2 L is refused naming
    the beam and the ratio; one giving delta = 0.2 L loads with a ModelWarning naming 20 %."""
    import warnings
    from flexible_manipulator.model_config import ModelWarning
    spec = yaml.safe_load(FLEXIBLE_FILE.read_text())
    beam, length = spec['links'][0]['beam'], spec['links'][0]['length']
    ei = min(ei for ei, modes in zip(beam['bending_stiffness'], beam['modes']) if modes)
    payload = spec['links'][0].get('payload', {}).get('mass', 0.0)

    def density(ratio):
        g = 9.80665
        return (ratio * length - g * payload * length ** 3 / (3.0 * ei)) * 8.0 * ei / (
            g * length ** 4)
    message = refused(tmp_path, mutated(_set(B0 + ['linear_density'], density(2.0)),
                                        FLEXIBLE_FILE))
    assert 'links[0].beam' in message and 'sag 2 times its length' in message
    path = write(tmp_path, mutated(_set(B0 + ['linear_density'], density(0.2)), FLEXIBLE_FILE))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        load_model(path)
    texts = [str(w.message) for w in caught if issubclass(w.category, ModelWarning)]
    assert len(texts) == 1 and 'links[0].beam: sags 20 % of its length' in texts[0], texts
