"""Property-based fuzzing of the URDF reader with malformed URDF text.

Valid URDFs (the shipped arms, the test chains of test_urdf_model.py) mutated as text:
slices deleted, markup or junk inserted, attribute values replaced by hostile ones (empty,
NaN, inf, huge, negative, words, wrong counts, other joint types), lines dropped or
doubled; read with and without a flexible link and a named root or tip. The contract
(model_config's for every model file, module doc of description/urdf_reader.py): a model
is built, or `ConfigError` is raised with one line that starts with the source; no other
exception. The browser view reads robot descriptions with the same reader
(`view.description.read`): mutated descriptions of the package's arms give a
`Description` or a `DescriptionError`, nothing else.
"""

import os
import re
import warnings

from hypothesis import given, strategies as st

from flexible_manipulator.model_config import ConfigError, model_from_dict
from test_urdf_model import BEAM, FLEX, SYNTHETIC, URDFS

TEXTS = [SYNTHETIC, FLEX] + [open(os.path.join(URDFS, name)).read()
                             for name in ('ur5e_like.urdf', 'panda_like.urdf')]
VALUES = ['', ' ', 'nan', 'inf', '-inf', '-1', '0', '1e400', '1e300', '-1e300', '1e-300',
          'abc', '1 2', '1 2 3 4', '0 0 0', '0 0 1', 'revolute', 'continuous', 'prismatic',
          'fixed', 'floating', 'planar', 'base', 'l2', 'tool0', 'panda_link7', '&amp;']
JUNK = ['<', '>', '"', '</link>', '</joint>', '<link name="extra"/>', '<mimic joint="j1"/>',
        '<joint name="j9" type="revolute"><parent link="base"/><child link="l1"/></joint>',
        '<inertial/>', '<axis/>', '<limit/>', '&bogus;', '<!--', ']]>', '\x00', 'é']
ATTRIBUTE = re.compile(r'="[^"]*"')
NAMES = re.compile(r'<link name="([^"]+)"')


@st.composite
def mutated_text(draw, texts=TEXTS):
    """One of ``texts`` with 1-3 mutations at drawn places (module doc)."""
    text = draw(st.sampled_from(texts))
    for _ in range(draw(st.integers(1, 3))):
        action = draw(st.sampled_from(['value', 'value', 'value', 'delete', 'insert',
                                       'line']))
        if action == 'value':
            spans = [m.span() for m in ATTRIBUTE.finditer(text)]
            if spans:
                start, end = spans[draw(st.integers(0, len(spans) - 1))]
                value = draw(st.one_of(st.sampled_from(VALUES), st.text(max_size=8)))
                text = f'{text[:start]}="{value}"{text[end:]}'
        elif action == 'delete':
            start = draw(st.integers(0, len(text)))
            text = text[:start] + text[start + draw(st.integers(1, 40)):]
        elif action == 'insert':
            at = draw(st.integers(0, len(text)))
            junk = draw(st.one_of(st.sampled_from(JUNK), st.text(max_size=10)))
            text = text[:at] + junk + text[at:]
        else:
            lines = text.split('\n')
            k = draw(st.integers(0, len(lines) - 1))
            lines[k:k + 1] = [] if draw(st.booleans()) else [lines[k], lines[k]]
            text = '\n'.join(lines)
    return text


@given(text=mutated_text(), data=st.data())
def test_malformed_urdf_gives_a_model_or_a_config_error(text, data):
    """A mutated URDF: a model, or one ConfigError line starting with the source."""
    spec = {'name': 'fuzzed', 'type': 'serial_chain', 'urdf': '-'}
    names = NAMES.findall(text) or ['base']
    if data.draw(st.booleans(), 'flexible'):
        spec['flexible'] = {data.draw(st.sampled_from(names), 'link'): {'beam': BEAM}}
    for key in ('root', 'tip'):
        if data.draw(st.integers(0, 4), key) == 0:
            spec[key] = data.draw(st.sampled_from(names), f'{key} name')
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')          # a large sag: warnings
        try:
            model_from_dict(spec, 'fuzzed', robot_description=lambda: text)
        except ConfigError as error:
            message = str(error)
            assert message.startswith('fuzzed: ') and '\n' not in message, message


def descriptions():
    """The robot descriptions of the soft (rods) and flexible (beams) arms, as published."""
    from flexible_manipulator.description.urdf import urdf
    from flexible_manipulator.model_config import load_model
    from flexible_manipulator.nodes.common import resolve_model_path
    return [urdf(load_model(resolve_model_path(name)))
            for name in ('two_link_soft', 'two_link_flexible')]


@given(text=mutated_text(descriptions()))
def test_a_malformed_description_gives_the_view_a_description_or_its_error(text):
    """The view's reader: a `Description` or one `DescriptionError`, never another error."""
    from flexible_manipulator.view.description import Description, DescriptionError, read
    try:
        assert isinstance(read(text), Description)
    except DescriptionError as error:
        assert str(error) and '\n' not in str(error)


def test_the_fuzzed_texts_are_valid_before_mutation():
    """The fuzzer starts from URDFs that load (the Panda-like arm with its tip named: its
    two fingers leave the tip ambiguous)."""
    for text in TEXTS:
        tip = {'tip': 'panda_hand_tcp'} if 'panda' in text else {}
        model_from_dict(dict({'name': 'valid', 'type': 'serial_chain', 'urdf': '-'}, **tip),
                        robot_description=lambda: text)
    from flexible_manipulator.view.description import read
    for text in descriptions():
        assert read(text).links
