"""Link kinds (`mechanics.links`): one module per kind, the one dispatch on a link's kind.

Expected values: the model files' own keys (a link with ``rod:`` is a rod, ``beam:`` a
beam, neither rigid); the class a chain needs (a rod only runs in a Cosserat chain); the
closed forms the kinds state (a beam's clamped sag w L^4/8EI + P L^3/3EI; a rod's range of
curvature 4 pi / L). And the structural rule of the one chain model: outside the
link kinds, the chain classes and the reference code no module tells kinds apart by
``link.rod`` / ``link.beam`` or by the chain's class name.
"""

import glob
import math
import os
import re

import pytest
import yaml

from flexible_manipulator.mechanics.link_description import Beam, Joint, Link, RigidBody
from flexible_manipulator.mechanics.model.chain import Chain
from flexible_manipulator.mechanics.links import chain_from_links, KINDS, kind_of
from flexible_manipulator.model_config import load_model

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, 'flexible_manipulator')
MODELS = sorted(f for f in glob.glob(os.path.join(ROOT, 'config', 'models', '*.yaml'))
                if 'type: serial_chain' in open(f).read())
# Where a link's kind may still be told apart by its fields (the kernels' layouts).
# the kinds themselves and the tests' NumPy reference
KIND_AWARE = ('mechanics/links/', 'mechanics/reference/')


@pytest.mark.parametrize('path', MODELS, ids=os.path.basename)
def test_every_link_of_every_model_file_has_the_kind_of_its_key(path):
    spec = yaml.safe_load(open(path))
    model = load_model(path)
    # A file of a URDF (urdf:) names its flexible links under flexible: (<link>_beam or
    # <link>_rod in the model, a link of a kind that is not slender keeps its name); its
    # other links are rigid.
    flexible = spec.get('flexible', {})
    entries = spec['links'] if 'links' in spec else [
        flexible.get(link.name, flexible.get(link.name.rpartition('_')[0], {}))
        for link in model.links]
    assert len(entries) == len(model.links)
    for entry, link in zip(entries, model.links):
        keyed = [kind.name for kind in KINDS if kind.key in entry]
        expected = keyed[0] if keyed else 'rigid'
        assert [kind.name for kind in KINDS if kind.matches(link)][0] == expected
        assert kind_of(link).name == expected
    assert isinstance(model, Chain)


def test_chain_from_links_builds_the_one_chain_model_of_any_kinds():
    rigid = Link('a', Joint('j1'), 0.5, RigidBody(1.0, (0.25, 0.0, 0.0)))
    beam = Link('b', Joint('j2'), 0.4, RigidBody(0.5), Beam(0.3, (5.0, 5.0), (2, 0)))
    assert type(chain_from_links('arm', [rigid, beam], (0, 0, -9.81))) is Chain
    rod_arm = load_model(os.path.join(ROOT, 'config', 'models', 'two_link_soft.yaml'))
    model = chain_from_links('soft', list(rod_arm.links), (0, 0, -9.81))
    assert type(model) is Chain and model.nv == rod_arm.nv


def test_the_kinds_state_their_own_closed_forms():
    """The beam's sag is the clamped Euler-Bernoulli cantilever's; a rod's curvature range
    winds the link twice round a circle; a rigid link has no elastic coordinate."""
    link = Link('b', Joint('j'), 0.5, RigidBody(0.0), Beam(0.2, (4.0, 1.0), (2, 0)),
                RigidBody(0.1))
    g = 9.81
    expected = g * (0.2 * 0.5 ** 4 / (8 * 4.0) + 0.1 * 0.5 ** 3 / (3 * 4.0))   # EI of y only
    assert kind_of(link).sag(link, g) == pytest.approx(expected, rel=1e-14)
    soft = load_model(os.path.join(ROOT, 'config', 'models', 'two_link_soft.yaml'))
    rod_link = soft.links[0]
    bound, unit, _ = kind_of(rod_link).amplitude(rod_link, 'bending_y_0')
    assert (bound, unit) == (pytest.approx(4 * math.pi / rod_link.length), ' rad/m')
    rigid = Link('a', Joint('j1'), 0.5, RigidBody(1.0))
    with pytest.raises(ValueError, match='rigid'):
        kind_of(rigid).amplitude(rigid, 'y1')


def test_no_module_outside_the_link_kinds_tells_kinds_apart():
    """``link.rod`` / ``link.beam`` tests and the chain class's name decide nothing outside
    `KIND_AWARE` (a link kind is not an ``if`` spread over modules)."""
    pattern = re.compile(r"\.(rod|beam) is (not )?None|'cosserat_chain'")
    found = []
    for path in glob.glob(os.path.join(PACKAGE, '**', '*.py'), recursive=True):
        relative = os.path.relpath(path, PACKAGE).replace(os.sep, '/')
        if relative.startswith(KIND_AWARE):
            continue
        for number, line in enumerate(open(path), 1):
            if pattern.search(line):
                found.append(f'{relative}:{number}: {line.strip()}')
    assert found == []
