"""Parameters of a model file named by path, their values, and the file rewritten with them.

A path names a number of a model file (`model_config`'s format). In a file of ``links:``:
``<link>.<field>[.<field>...]``, a number of the link's entry, e.g.
``forearm.beam.damping_ratio``, ``forearm.payload.mass``, ``forearm.mass``,
``forearm.joint.damping``, ``forearm.rod.material.young_modulus``,
``forearm.rod.damping_time``. In a file of ``urdf:`` the first part is a URDF link or one
of the file's top-level entries `TOP`:

* ``<urdf link>.beam.<field>...``, ``<urdf link>.rod.<field>...``,
  ``<urdf link>.hub.<field>``: the link's ``flexible:`` entry
  (``forearm_link.beam.bending_stiffness``);
* ``<urdf link>.mass``, ``.com``, ``.inertia``: the link's URDF ``<inertial>`` (mass [kg],
  centre of mass [m], inertia [ixx, iyy, izz, ixy, ixz, iyz] about it [kg m^2], in the
  link's frame), started from the file's ``inertials:`` entry when it holds the number,
  else from the URDF, and written into ``inertials:`` (the URDF is never written); a
  flexible link with a ``hub:`` has its inertia there instead;
* ``payload.<field>`` (the tool in the tip link's frame), ``armature`` (one number, or a
  mapping joint: value fitted as one factor) and ``armature.<joint>``;
* ``friction.<joint>``: the joint's Coulomb friction level [N m or N], started from the
  file's ``friction:`` entry when it holds the joint, else from the URDF's ``<dynamics
  friction>``, and written into ``friction:`` (a mapping joint: value, added when missing;
  the URDF is never written); ``friction`` when the file holds one number for every joint.

A joint's Coulomb friction (`ADDITIVE`: ``<link>.joint.friction`` in a file of
``links:``, ``friction.<joint>`` in one of ``urdf:``) is fitted **by its value**, not as a
factor: its unknown is the level itself [N m or N], from the file's value (0 when the file
does not hold it: a joint without Coulomb friction is the common start), bounded below by
0, written back as a new line of the joint's entry when the file did not hold it. Its
effect is measured per `Parameter.unit` (1 % of the joint's effort limit, else
`FRICTION_UNIT`) where a factor's is per 100 % (``fit``).

A field holding a list (or a mapping) of numbers is fitted as **one common factor** on all
its entries (``forearm.beam.bending_stiffness``: both planes' EI scale together, as the
material's E does); ``<field>[i]`` names entry i alone; ``<field>+<field>`` fits sibling
numbers with one factor (``forearm.rod.material.young_modulus+shear_modulus``: the
material stiffer at the same Poisson ratio, which the file's check E/2G - 1 in (-1, 0.5]
needs when the ratio is near 0.5, as in two_link_soft). Every parameter is fitted as the
factor x on its value in the file (x = 1 there): a field absent from the file (and, for
an inertial, from the URDF), or zero, has no value to start from and is refused.

The model is rebuilt by `model_config` from the file's content with the factors applied,
so every parameter passes the file's own checks. `rewrite` replaces the fitted numbers in
the file's text where they stand (found by the YAML parser's marks), so comments, layout
and every other number stay as they were; a number the file does not hold yet (an
inertial) is added as a line of its ``inertials:`` entry, which is added at the end of the
file when missing.
"""

import copy
import difflib
import re

import numpy as np
import yaml

from ..description.urdf_reader import MOVING
from ..mechanics.chain import Joint
from ..config_checks import ConfigError
from ..model_config import model_from_dict
from ..urdf_config import INERTIAL_KEYS, urdf_inertial, urdf_robot

INDEXED = re.compile(r'^(\w+)\[(\d+)\]$')
COUNTS = ('modes', 'points', 'frames', 'quadrature_points')     # integers of the file
TOP = ('payload', 'armature', 'friction')   # top-level entries of a URDF file with numbers
ADDITIVE = ('friction',)               # fitted by value (module doc): a joint's Coulomb level
FRICTION_UNIT = 1.0                    # N m or N: the unit of a friction without effort limit
EFFORT_SHARE = 0.01                    # a friction's unit: this share of its effort limit
FRICTION_COMMENT = ('# Coulomb friction level per joint [N m] (mechanics.friction), in place of '
                    'the URDF\'s\n# <dynamics friction>.\n')
FLEXIBLE = ('beam', 'rod', 'hub')      # the blocks of a ``flexible:`` entry


class ParameterError(ValueError):
    """A parameter path that names no usable number of the model file."""


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class Parameter:
    """One fitted parameter: the numbers of the model file it scales, their values there.

    ``where``: the keys (and list indices) from the file's top to the mapping holding the
    numbers; ``leaves``: (field, entry or None) of each number there; ``base``: for an
    inertial, the URDF's values of the fields the file does not hold (else None).
    """

    def __init__(self, path, spec, robot=None):
        """Resolve ``path`` in the parsed model file ``spec`` (module doc); check its values.

        ``robot``: a function returning the file's parsed URDF (``urdf_reader.Robot``),
        called for a file of ``urdf:`` only.
        """
        self.path = path
        self.additive, self.unit, self.comment = False, 1.0, INERTIALS_COMMENT
        parts = path.split('.')
        if not isinstance(spec, dict):
            raise ParameterError(f'{path}: the model file is not a mapping')
        if 'urdf' in spec:
            node, where = self._urdf(parts, spec, robot)
        else:
            node, where = self._links(parts, spec)
        self.leaves = []                         # (field, entry or None) of each number
        last = parts[-1]
        match = INDEXED.match(last)
        for key in ([match.group(1)] if match else last.split('+')):
            if key in COUNTS:
                raise ParameterError(f'{path}: {_name(where, key)} is a count, not a '
                                     'physical parameter')
            value = shown = _field(node, key, where, path)
            if match:
                index = int(match.group(2))
                if not isinstance(value, list) or index >= len(value):
                    raise ParameterError(f'{path}: {_name(where, key)} has no entry {index}')
                self.leaves.append((key, index))
                value = value[index]
            elif isinstance(value, list):
                self.leaves += [(key, i) for i in range(len(value))]
            elif isinstance(value, dict) and value:
                self.leaves += [(key, entry) for entry in value]
                value = list(value.values())
            else:
                self.leaves.append((key, None))
            for number in value if isinstance(value, list) else [value]:
                if not _number(number):
                    raise ParameterError(f'{path}: {_name(where, key)} is {shown!r} in the '
                                         'model file, not a number or a list of numbers')
        values = np.array([_leaf(node, leaf) for leaf in self.leaves], dtype=float)
        self.start = values if values.size > 1 else float(values[0])
        if not np.all(values) and not self.additive:
            if self.base is not None:
                raise ParameterError(f'{path}: is 0 in the URDF (or the link has no '
                                     '<inertial>): the fit scales the value, put a nonzero '
                                     f'first guess in the model file\'s inertials.{parts[0]}')
            raise ParameterError(f'{path}: is 0 in the model file: the fit scales the file\'s '
                                 'value, put a nonzero first guess there')

    def _links(self, parts, spec):
        """(node, its name) of a path in a file of ``links:``."""
        path = self.path
        if len(parts) < 2 or not all(parts):
            raise ParameterError(f'{path}: expected <link>.<field>[.<field>...] (e.g. '
                                 'forearm.beam.damping_ratio)')
        links = spec.get('links')
        links = links if isinstance(links, list) else []
        names = [link.get('name') if isinstance(link, dict) else None for link in links]
        if parts[0] not in names:
            raise ParameterError(f'{path}: no link {parts[0]!r} in the model (links: '
                                 f'{", ".join(str(n) for n in names if n is not None)})')
        self.where, self.base = ('links', names.index(parts[0])), None
        node, where = self._walk(links[self.where[1]], parts[0], parts[1:-1])
        if parts[1:-1] == ['joint'] and parts[-1] in ADDITIVE and isinstance(node, dict):
            self._friction(node, {'friction': Joint.friction}, node.get('effort_limit'))
            node = dict(self.base, **node)
        return node, where

    def _friction(self, given, base, effort_limit):
        """Make this a Coulomb friction (module doc): fitted by value from ``base``.

        ``given``: the file's mapping of it; ``base``: the values it takes where the file
        holds none (added to the file when written).
        """
        self.additive, self.comment = True, FRICTION_COMMENT
        self.base = {key: value for key, value in base.items() if key not in given}
        limit = effort_limit if _number(effort_limit) else None
        self.unit = (EFFORT_SHARE * limit if limit is not None and 0.0 < limit < np.inf
                     else FRICTION_UNIT)

    def _urdf(self, parts, spec, robot):
        """(node, its name) of a path in a file of ``urdf:`` (module doc)."""
        path, first = self.path, parts[0]
        if not all(parts):
            raise ParameterError(f'{path}: expected <urdf link>.<field>[.<field>...], '
                                 'payload.<field> or armature[.<joint>]')
        self.base = None
        if first == 'friction' and len(parts) == 2:
            return self._urdf_friction(parts[1], spec, robot)
        if first == 'friction' and len(parts) == 1:
            if not _number(spec.get('friction')):
                raise ParameterError(f'{path}: the model file holds no one friction for every '
                                     'joint: fit friction.<joint>, joint by joint')
            self.where = ()
            self._friction(spec, {}, None)
            return spec, None
        if first in TOP:
            if len(parts) == 1 and first == 'payload':
                raise ParameterError(f'{path}: expected payload.<field> (mass, com, inertia)')
            if (len(parts) == 2 and first == 'armature' and 'armature' in spec
                    and not isinstance(spec['armature'], dict)):
                raise ParameterError(f'{path}: armature is one number for every joint in the '
                                     'model file: fit armature, or write it as {joint: value}')
            self.where = ()
            return self._walk(spec, None, parts[:-1])
        links = robot().links
        flexible = spec.get('flexible')
        flexible = flexible if isinstance(flexible, dict) else {}
        if first not in links:
            close = difflib.get_close_matches(first, list(links), n=1)
            hint = f'did you mean {close[0]!r}? ' if close else ''
            raise ParameterError(f'{path}: no link {first!r} in the URDF ({hint}its links: '
                                 f'{", ".join(links)}; the model file\'s {", ".join(TOP)})')
        if len(parts) < 2:
            raise ParameterError(f'{path}: expected {first}.<field> (mass, com, inertia'
                                 f'{", beam, rod, hub" if first in flexible else ""})')
        field = INDEXED.match(parts[1]).group(1) if INDEXED.match(parts[1]) else parts[1]
        if len(parts) == 2 and all(key in INERTIAL_KEYS for key in field.split('+')):
            entry = flexible.get(first)
            if isinstance(entry, dict) and 'hub' in entry:
                raise ParameterError(f'{path}: flexible.{first}.hub replaces the URDF '
                                     f'<inertial> of {first}: fit {first}.hub.{parts[1]}')
            inertials = spec.get('inertials')
            given = inertials.get(first) if isinstance(inertials, dict) else None
            given = given if isinstance(given, dict) else {}
            self.where = ('inertials', first)
            self.base = urdf_inertial(links[first])
            return dict(self.base, **given), first
        if parts[1] not in FLEXIBLE:
            known = list(INERTIAL_KEYS) + (list(FLEXIBLE) if first in flexible else [])
            raise ParameterError(f'{path}: {first} has no field {parts[1]!r} (fields there: '
                                 f'{", ".join(known)})')
        if first not in flexible:
            raise ParameterError(f'{path}: {first} is rigid in the model file (flexible: '
                                 f'{", ".join(map(str, flexible)) or "none"}): its numbers '
                                 f'are {first}.mass, {first}.com, {first}.inertia')
        self.where = ('flexible', first)
        return self._walk(flexible[first], first, parts[1:-1])

    def _urdf_friction(self, joint, spec, robot):
        """(node, its name) of ``friction.<joint>`` in a file of ``urdf:`` (module doc)."""
        path, given = self.path, spec.get('friction', {})
        if not isinstance(given, dict):
            raise ParameterError(f'{path}: friction is one number for every joint in the '
                                 'model file: fit friction, or write it as {joint: value}')
        joints = robot().joints
        moving = [name for name, item in joints.items() if item.type in MOVING]
        if joint not in moving:
            close = difflib.get_close_matches(joint, moving, n=1)
            hint = f'did you mean {close[0]!r}? ' if close else ''
            raise ParameterError(f'{path}: no moving joint {joint!r} in the URDF ({hint}its '
                                 f'moving joints: {", ".join(moving)})')
        limit = joints[joint].limit or {}
        self.where = ('friction',)
        self._friction(given, {joint: float(joints[joint].friction)}, limit.get('effort'))
        return dict(self.base, **given), 'friction'

    def _walk(self, node, where, keys):
        """Follow ``keys`` down from ``node`` (named ``where``, None: the top); (node, name)."""
        for key in keys:
            node = _field(node, key, where, self.path)
            where = _name(where, key)
        self.where += tuple(keys)
        return node, where

    @property
    def vector(self):
        """True for several numbers fitted as one common factor."""
        return isinstance(self.start, np.ndarray)

    @property
    def initial(self):
        """The unknown at the file's value: the factor 1, or a friction's value."""
        return float(self.start) if self.additive else 1.0

    def value(self, factor):
        """Return the parameter's value at ``factor`` (a number, or its numbers).

        ``factor``: the unknown, a factor on the file's value or, for a Coulomb friction
        (``additive``), the value itself.
        """
        return factor if self.additive else factor * self.start

    def size(self, factor):
        """Return the change of the unknown its effect is measured for (module doc).

        A factor's: itself (a 100 % change); a friction's: its value, at least its unit.
        """
        return max(factor, self.unit) if self.additive else factor

    def bound(self):
        """Return the unknown below which the fit ran to the bound 0, over `fit.BOUND`."""
        return self.unit if self.additive else 1.0

    def numbers(self):
        """Return (mapping keys, leaf) of each number it scales (to tell overlaps)."""
        return {(self.where, leaf) for leaf in self.leaves}

    def node(self, spec, create=False):
        """Return the mapping of ``spec`` holding the numbers (``create``: an inertial's)."""
        node = spec
        for key in self.where:
            if create and isinstance(node, dict) and node.get(key) is None:
                node[key] = {}
            node = node[key]
        if create:
            for key, _ in self.leaves:
                if key not in node:
                    node[key] = copy.deepcopy(self.base[key])
        return node

    def set(self, spec, factor):
        """Write the value at ``factor`` into the parsed file ``spec`` (in place)."""
        node = self.node(spec, create=self.base is not None)
        for (key, index), value in zip(self.leaves, np.atleast_1d(self.value(factor))):
            if index is None:
                node[key] = float(value)
            else:
                node[key][index] = float(value)


def _name(where, key):
    """Return the dotted name of ``key`` under ``where`` (None: the file's top)."""
    return str(key) if where is None else f'{where}.{key}'


def _field(node, key, where, path):
    """``node[key]``, or a ParameterError naming the fields there (``where`` None: top)."""
    if not isinstance(node, dict) or key not in node:
        if where is None:
            there = [name for name in TOP if isinstance(node, dict) and name in node]
            raise ParameterError(f'{path}: the model file has no {key!r} (its top-level '
                                 f'numbers: {", ".join(there) or "none"})')
        fields = sorted(map(str, node)) if isinstance(node, dict) else []
        close = difflib.get_close_matches(key, fields, n=1)
        hint = f'did you mean {close[0]!r}? ' if close else ''
        raise ParameterError(f'{path}: {where} has no field {key!r} in the model file '
                             f'({hint}fields there: {", ".join(fields) or "none"})')
    return node[key]


def _text(value):
    """Return a number as YAML text (7 significant digits) read back as a float.

    YAML 1.1 (PyYAML) reads ``2e-05`` as text: an exponent gets a decimal point.
    """
    text = f'{value:.7g}'
    if 'e' in text and '.' not in text:
        text = text.replace('e', '.0e')
    return text


def _leaf(node, leaf):
    key, index = leaf
    return node[key] if index is None else node[key][index]


def parse(paths, spec, directory=None):
    """Return the `Parameter` of each path (a comma-separated text or a list), checked.

    ``directory``: where a relative ``urdf:`` path of ``spec`` starts (the model file's).
    """
    if isinstance(paths, str):
        paths = [p.strip() for p in paths.split(',')]
    if not paths or not all(paths):
        raise ParameterError('--fit: expected a comma-separated list of parameter paths, got '
                             f'{",".join(paths)!r}')
    if len(set(paths)) != len(paths):
        twice = sorted(p for p in set(paths) if paths.count(p) > 1)
        raise ParameterError(f'{twice[0]}: named twice')
    read = []

    def robot():
        if not read:
            try:
                read.append(urdf_robot(spec, directory)[0])
            except ConfigError as error:
                raise ParameterError(str(error)) from None
        return read[0]
    found = [Parameter(path, spec, robot) for path in paths]
    for i, a in enumerate(found):
        for b in found[:i]:
            if a.numbers() & b.numbers():
                raise ParameterError(f'{a.path}: scales a number {b.path} scales too')
    return found


def applied(spec, parameters, factors):
    """Return a copy of the parsed file ``spec`` with each parameter at its factor."""
    spec = copy.deepcopy(spec)
    for parameter, factor in zip(parameters, factors):
        parameter.set(spec, factor)
    return spec


def build(spec, parameters, factors, source, directory=None):
    """Build the model of ``spec`` with the parameters at ``factors`` (`ConfigError`).

    ``directory``: where a relative ``urdf:`` path starts (the model file's).
    """
    return model_from_dict(applied(spec, parameters, factors), source, directory)


def _child(node, key):
    """Return the value node of ``key`` in a YAML mapping (index: sequence), or None."""
    if isinstance(node, yaml.SequenceNode):
        return node.value[key] if isinstance(key, int) and key < len(node.value) else None
    if not isinstance(node, yaml.MappingNode):
        return None
    for k, v in node.value:
        if k.value == str(key):
            return v
    return None


def _flow(value):
    """YAML flow text of a number, a list of numbers or a mapping of them (7 digits)."""
    if isinstance(value, dict):
        return '{' + ', '.join(f'{k}: {_flow(v)}' for k, v in value.items()) + '}'
    if isinstance(value, list):
        return '[' + ', '.join(_flow(v) for v in value) + ']'
    return _text(value)


def _last_leaf(node):
    """Return the last scalar or flow collection of a node (where its text ends)."""
    while (isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and not node.flow_style
           and node.value):
        node = node.value[-1][1] if isinstance(node, yaml.MappingNode) else node.value[-1]
    return node


INERTIALS_COMMENT = ('# In place of the URDF <inertial> values: mass [kg], com [m], inertia '
                     '[ixx, iyy, izz,\n# ixy, ixz, iyz] about the com [kg m^2], in the '
                     'link\'s frame.\n')


def _insert(text, mapping, key, value, comment=''):
    """``text`` with ``key: value`` added to the YAML mapping node ``mapping``.

    A block mapping gets a line after its last entry's (``value`` a mapping of mappings
    is written as a block, the inner ones in flow style), ``comment`` lines before it; a
    flow mapping, an entry before its closing brace.
    """
    if mapping.flow_style:
        end = mapping.end_mark.index - 1            # the closing brace
        separator = ', ' if mapping.value else ''
        return f'{text[:end]}{separator}{key}: {_flow(value)}{text[end:]}'
    indent = ' ' * (mapping.value[0][0].start_mark.column if mapping.value else 0)
    if isinstance(value, dict) and all(isinstance(v, dict) for v in value.values()):
        inner = ''.join(f'\n{indent}  {k}: {_flow(v)}' for k, v in value.items())
        line = f'{comment}{indent}{key}:{inner}\n'
    else:
        line = f'{comment}{indent}{key}: {_flow(value)}\n'
    at = _last_leaf(mapping).end_mark.index if mapping.value else len(text)
    newline = text.find('\n', at)
    if newline < 0:
        text, newline = text + '\n', len(text)
    return text[:newline + 1] + line + text[newline + 1:]


def _added(text, parameter):
    """``text`` with the numbers of an inertial that the file does not hold yet added."""
    for key, _ in parameter.leaves:
        node, missing = yaml.compose(text), None
        for depth, step in enumerate(parameter.where + (key,)):
            child = _child(node, step)
            if child is None:
                missing = depth
                break
            node = child
        if missing is None:
            continue
        keys = (parameter.where + (key,))[missing:]
        value = copy.deepcopy(parameter.base[key])
        for outer in reversed(keys[1:]):
            value = {outer: value}
        text = _insert(text, node, keys[0], value, parameter.comment if missing == 0 else '')
    return text


def _scalars(root, parameter):
    """Return the YAML scalar nodes of ``parameter``'s numbers in the document ``root``."""
    node = root
    for key in parameter.where:
        node = _child(node, key)
    return [_child(node, key) if index is None else _child(_child(node, key), index)
            for key, index in parameter.leaves]


def rewrite(text, parameters, factors):
    """Return the model file's ``text`` with each parameter's numbers at its factor.

    Only the numbers' characters change (7 significant digits), and the lines of numbers
    the file did not hold are added (module doc); comments and layout stay. The result is
    read back and checked.
    """
    for parameter in parameters:
        if parameter.base is not None:
            text = _added(text, parameter)
    edits = []
    root = yaml.compose(text)
    for parameter, factor in zip(parameters, factors):
        edits += [(node.start_mark.index, node.end_mark.index, _text(value))
                  for node, value in zip(_scalars(root, parameter),
                                         np.atleast_1d(parameter.value(factor)))]
    for start, end, number in sorted(edits, reverse=True):
        text = text[:start] + number + text[end:]
    written = yaml.safe_load(text)
    for parameter, factor in zip(parameters, factors):
        node = parameter.node(written)
        values = [_leaf(node, leaf) for leaf in parameter.leaves]
        if not np.allclose(values, np.atleast_1d(parameter.value(factor)), rtol=1e-6, atol=0):
            raise ConfigError(f'{parameter.path}: the rewritten file holds {values}, not '
                              f'{parameter.value(factor)}')
    return text
