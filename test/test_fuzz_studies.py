"""Property-based fuzzing of the study file's parser and the dotted paths (hypothesis).

The contract (`studies.spec`, `closed_loop.parse_path`): a study file is parsed, or
`StudyError` is raised whose message starts with the field at fault (``duration: ...``,
``parameters.<path>...: ...``); a dotted path is split, or `ConfigError` names it; no other
exception. Expected behaviour comes from that documented contract. The study is a valid
file using every kind of parameter, mutated (fuzzing.mutated: keys dropped, renamed,
retyped, values out of range).
"""

import re

from hypothesis import given, settings, strategies as st

from flexible_manipulator.closed_loop import parse_path
from flexible_manipulator.model_config import ConfigError
from flexible_manipulator.studies.spec import parse_study, StudyError
from fuzzing import mutated

VALID = {
    'base': {'params_file': 'sim', 'values': {'controller.delay_periods': 1}},
    'duration': 1.0, 'mode': 'closed_loop', 'record': {'mcap': False}, 'seed': 3, 'draws': 2,
    'parameters': {
        'model.links[1].payload.mass': [0.05, 0.1],
        'controller.control_period': {'grid': [0.001, 0.002]},
        'plant.initial_positions[0]': {'linspace': [-0.3, -0.1, 3]},
        'model.links[0].beam.damping_ratio': {'uniform': [0.002, 0.01]},
        'model.links[0].beam.bending_stiffness[0]': {'log_uniform': [3.0, 6.0]},
        'plant.initial_velocities[1]': {'normal': [0.0, 0.05]},
        'program.programs.hold.gains.alpha': {'choice': [4.0, 6.0]}}}
# A field: a dotted path with [index]es (the top level's message starts with the source).
NAMED = re.compile(r'^([A-Za-z_][\w.\[\]\-]*(: |\s)|fuzzed: )')


def test_the_valid_study_parses_and_checks():
    study = parse_study(VALID, 'fuzzed')
    assert len(study.runs()) == 2 * 2 * 3 * 2


@given(spec=mutated(VALID))
def test_mutated_studies_parse_or_raise_a_study_error_naming_the_field(spec):
    try:
        parse_study(spec, 'fuzzed', check=False)
    except StudyError as error:
        assert NAMED.match(str(error)), str(error)


@settings(max_examples=60)      # each example builds the models and programs it names
@given(spec=mutated(VALID))
def test_mutated_studies_checked_against_the_graph_raise_only_study_errors(spec):
    try:
        parse_study(spec, 'fuzzed')
    except StudyError as error:
        assert NAMED.match(str(error)), str(error)


@given(path=st.one_of(st.text(max_size=40), st.from_regex(
    r'(plant|controller|model|plant_model|program|x)(\.[a-z_\[\]0-9]{0,12}){0,4}',
    fullmatch=True), st.integers(), st.none()))
def test_a_dotted_path_is_split_or_refused_naming_it(path):
    try:
        namespace, keys = parse_path(path)
    except ConfigError as error:
        assert str(error).startswith((f'{path}:', f'{path!r}:')), str(error)
    else:
        assert path.startswith(namespace + '.') and keys
