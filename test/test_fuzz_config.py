"""Property-based fuzzing of the file parsers with mutated valid files.

Every model file of config/models and every program of the program files, mutated: keys
dropped, renamed, given another type, values out of range (negative, zero, huge, NaN,
inf). The contract (model_config, control.program_config): a model or program is built,
or `ConfigError` is raised whose message names the field (``source: field: ...``, the
dotted path of the field at fault); no other exception. Expected behaviour comes from that
documented contract.

`identify`'s parameter paths (identification.parameters), drawn from the names of the
model files (links, URDF links, fields, top-level entries, junk, indices, ``+``) on the
model files and on mutated ones: a list of parameters, or one `ParameterError` line that
starts with the path (or ``--fit``); a list found is rewritten into the file's text, which
reads back to the values `applied` gives.
"""

import re
import warnings

import pytest
import yaml
from hypothesis import given, strategies as st

from flexible_manipulator.control.program_config import parse_program
from flexible_manipulator.model_config import ConfigError, load_model, model_from_dict
from fuzzing import mutated
from test_program_controller import CONFIG

MODEL_FILES = sorted((CONFIG / 'models').glob('*.yaml'))
MODELS = str(CONFIG / 'models')     # where a model file's relative urdf: path starts
PROGRAM_FILES = {'two_link_flexible': 'programs_two_link_flexible.yaml',
                 'two_link_rigid': 'programs_two_link_rigid.yaml',
                 'two_link_soft': 'programs_two_link_soft.yaml'}
# ``source: field...: text``: the field is a dotted path with indices, or empty for the
# top level of a file (``source: expected a mapping ...``).
NAMED = re.compile(r'^fuzzed: ([A-Za-z_][\w.\[\]]*(: |\s)|[a-z])')


def spec_of(path):
    """The parsed YAML of ``path``."""
    with open(path, encoding='utf-8') as stream:
        return yaml.safe_load(stream)


MODEL_SPECS = {path.stem: spec_of(path) for path in MODEL_FILES}
PROGRAMS = [(model, name, spec) for model, file in PROGRAM_FILES.items()
            for name, spec in spec_of(CONFIG / file)['programs'].items()]
_MODELS = {}


@given(data=st.data(), name=st.sampled_from(sorted(MODEL_SPECS)))
def test_mutated_model_files_give_a_model_or_a_config_error_naming_the_field(data, name):
    """A mutated model file: a model, or ConfigError naming the field (module doc)."""
    spec = data.draw(mutated(MODEL_SPECS[name]), 'spec')
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')         # e.g. a large sag: a warning, not an error
        try:
            model_from_dict(spec, 'fuzzed', directory=MODELS)
        except ConfigError as error:
            assert NAMED.match(str(error)), str(error)


@given(data=st.data(), index=st.integers(0, len(PROGRAMS) - 1))
def test_mutated_programs_give_a_program_or_a_config_error_naming_the_field(data, index):
    """A mutated program: a program, or ConfigError naming the field (module doc)."""
    model_name, name, spec = PROGRAMS[index]
    if model_name not in _MODELS:
        model = load_model(str(CONFIG / 'models' / f'{model_name}.yaml'))
        _MODELS[model_name] = (model, model.rigid_twin() if model.nv > model.nu else None)
    model, twin = _MODELS[model_name]
    try:
        parse_program(model, data.draw(mutated(spec), 'spec'), f'fuzzed: {name}', twin)
    except ConfigError as error:
        assert str(error).startswith(f'fuzzed: {name}'), str(error)


def test_every_model_and_program_file_parses_unmutated():
    """The fuzzers start from valid files: each parses as it is."""
    for name, spec in MODEL_SPECS.items():
        model_from_dict(spec, name, directory=MODELS)
    assert len(PROGRAMS) >= 9
    with pytest.raises(ConfigError, match='^fuzzed: '):
        model_from_dict([], 'fuzzed')


def test_an_axis_that_is_not_a_name_is_a_config_error():
    """A list among a point row's axes (a mutated lambda_circle of
    programs_two_link_flexible.yaml) is a config error, not a TypeError (unhashable) out of
    the parser."""
    model = load_model(str(CONFIG / 'models' / 'two_link_flexible.yaml'))
    row = {'type': 'point', 'link': 'forearm', 'axes': [[], 'y'],
           'reference': {'type': 'constant', 'value': [0.5, 0.2]}}
    with pytest.raises(ConfigError, match=r'^p\.rows\[0\]\.axes: expected a list of x, y, z'):
        parse_program(model, {'gains': {'alpha': 5.0}, 'rows': [row]}, 'p')
    angle = {'type': 'angle', 'link': 'forearm', 'axis': ['z'],
             'reference': {'type': 'constant', 'value': [0.1]}}
    with pytest.raises(ConfigError, match=r'^p\.rows\[0\]\.axis: expected x, y or z'):
        parse_program(model, {'gains': {'alpha': 5.0}, 'rows': [angle]}, 'p')


@pytest.mark.parametrize('name, place, value, named', [
    # Each found by the long profile: Python float arithmetic raised OverflowError out of
    # the parser (1e300 ** 2) instead of a ConfigError naming the field or block.
    ('sleigh_classical', ('offset',), 1e300, r'^fuzzed: .*inertia'),
    ('two_link_soft', ('links', 0, 'rod', 'section', 'radius'), 1e300, r'^fuzzed: links\[0\]'),
    ('two_link_flexible', ('links', 1, 'length'), 1e300, r'^fuzzed: links\[1\]'),
])
def test_absurd_values_found_by_the_fuzzer_are_config_errors(name, place, value, named):
    """Regression tests of the fuzzer's finds (module doc): ConfigError naming the field."""
    import copy
    spec = copy.deepcopy(MODEL_SPECS[name])
    node = spec
    for key in place[:-1]:
        node = node[key]
    node[place[-1]] = value
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        with pytest.raises(ConfigError, match=named):
            model_from_dict(spec, 'fuzzed')


def test_a_circle_on_one_axis_is_a_config_error():
    """Found by the long profile (lambda_circle with ``axes: [y]`` and a one-entry center):
    the circle path raised a bare ValueError (not enough values to unpack); a circle needs
    a row of two axes or more, named as the reference's type."""
    model = load_model(str(CONFIG / 'models' / 'two_link_flexible.yaml'))
    row = {'type': 'point', 'link': 'forearm', 'axes': ['y'],
           'reference': {'type': 'circle', 'center': [0.25], 'radius': 0.1, 'rate': 2.0}}
    with pytest.raises(ConfigError, match=r'^p\.rows\[0\]\.reference\.type: a circle needs'):
        parse_program(model, {'gains': {'alpha': 5.0}, 'rows': [row]}, 'p')


PARTS = ['forearm', 'upper_arm', 'forearm_link', 'upper_arm_link', 'wrist_1_link', 'base_link',
         'tool0', 'payload', 'armature', 'beam', 'rod', 'hub', 'mass', 'com', 'inertia',
         'bending_stiffness', 'damping_ratio', 'modes', 'joint', 'damping', 'material',
         'young_modulus', 'shear_modulus', 'damping_time', 'frames', 'section', 'radius',
         'linear_density', 'name', 'links', 'flexible', 'inertials', 'gravity', 'urdf',
         'shoulder_pan_joint', 'elbow', '']
URDF_SPECS = [name for name, spec in MODEL_SPECS.items() if 'urdf' in spec]


@st.composite
def parameter_paths(draw):
    """A comma-separated list of 1-3 paths of 1-4 parts drawn from `PARTS` or any text,
    a part sometimes indexed ``[i]`` or joined to another by ``+``."""
    paths = []
    for _ in range(draw(st.integers(1, 3))):
        parts = []
        for _ in range(draw(st.integers(1, 4))):
            part = draw(st.one_of(st.sampled_from(PARTS), st.sampled_from(PARTS),
                                  st.text(max_size=6)))
            decoration = draw(st.integers(0, 5))
            if decoration == 0:
                part += f'[{draw(st.integers(0, 7))}]'
            elif decoration == 1:
                part += '+' + draw(st.sampled_from(PARTS))
            parts.append(part)
        paths.append('.'.join(parts))
    return ','.join(paths)


@given(data=st.data(), name=st.sampled_from(sorted(MODEL_SPECS)), mutate=st.booleans())
def test_identify_paths_give_parameters_or_one_line_naming_the_path(data, name, mutate):
    """A drawn path list on a model file (mutated or not): parameters, or one line
    `ParameterError` naming the path (module doc); found ones rewrite the file's text."""
    import numpy as np
    from flexible_manipulator.identification import parameters
    spec = data.draw(mutated(MODEL_SPECS[name]), 'spec') if mutate else MODEL_SPECS[name]
    paths = data.draw(parameter_paths(), 'paths')
    try:
        found = parameters.parse(paths, spec, MODELS)
    except parameters.ParameterError as error:
        message = str(error)
        assert '\n' not in message and (message.startswith('--fit: ') or any(
            message.startswith(f'{path.strip()}: ') for path in paths.split(','))), message
        return
    if mutate:
        return
    factors = data.draw(st.lists(st.floats(0.5, 2.0), min_size=len(found),
                                 max_size=len(found)), 'factors')
    text = (CONFIG / 'models' / f'{name}.yaml').read_text()
    written = yaml.safe_load(parameters.rewrite(text, found, factors))
    expected = parameters.applied(spec, found, factors)
    for parameter in found:
        np.testing.assert_allclose(
            [parameters._leaf(parameter.node(written), leaf) for leaf in parameter.leaves],
            [parameters._leaf(parameter.node(expected), leaf) for leaf in parameter.leaves],
            rtol=1e-6)


def test_the_path_fuzzer_reaches_urdf_files_and_finds_parameters():
    """The path fuzzer's inputs include URDF model files whose paths resolve (the UR5e-like
    file's flexible block, URDF inertial, payload and armature)."""
    from flexible_manipulator.identification import parameters
    assert 'ur5e_flexible_forearm' in URDF_SPECS
    found = parameters.parse('forearm_link.beam.bending_stiffness,wrist_1_link.mass,'
                             'payload.mass,armature', MODEL_SPECS['ur5e_flexible_forearm'],
                             MODELS)
    assert [p.path for p in found][-1] == 'armature'
