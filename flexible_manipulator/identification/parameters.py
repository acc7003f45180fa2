"""Parameters of a model file named by path, their values, and the file rewritten with them.

A path names a number of a link's entry in the model file (`model_config`'s format):
``<link>.<field>[.<field>...]``, e.g. ``forearm.beam.damping_ratio``,
``forearm.payload.mass``, ``forearm.mass``, ``forearm.joint.damping``,
``forearm.rod.material.young_modulus``, ``forearm.rod.damping_time``. A field holding a
list of numbers is fitted as **one common factor** on all its entries
(``forearm.beam.bending_stiffness``: both planes' EI scale together, as the material's E
does); ``<field>[i]`` names entry i alone; ``<field>+<field>`` fits sibling numbers with
one factor (``forearm.rod.material.young_modulus+shear_modulus``: the material stiffer at
the same Poisson ratio, which the file's check E/2G - 1 in (-1, 0.5] needs when the ratio
is near 0.5, as in two_link_soft). Every parameter is fitted as the factor x on
its value in the file (x = 1 there): a field absent from the file, or zero, has no value
to start from and is refused.

The model is rebuilt by `model_config` from the file's content with the factors applied,
so every parameter passes the file's own checks. `rewrite` replaces the fitted numbers in
the file's text where they stand (found by the YAML parser's marks), so comments, layout
and every other number stay as they were.
"""

import copy
import difflib
import re

import numpy as np
import yaml

from ..model_config import ConfigError, model_from_dict

INDEXED = re.compile(r'^(\w+)\[(\d+)\]$')
COUNTS = ('modes', 'points', 'frames', 'quadrature_points')     # integers of the file


class ParameterError(ValueError):
    """A parameter path that names no usable number of the model file."""


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class Parameter:
    """One fitted parameter: the numbers of the model file it scales, their values there."""

    def __init__(self, path, spec):
        """Resolve ``path`` in the parsed model file ``spec`` (module doc); check its values."""
        self.path = path
        parts = path.split('.')
        if len(parts) < 2 or not all(parts):
            raise ParameterError(f'{path}: expected <link>.<field>[.<field>...] (e.g. '
                                 'forearm.beam.damping_ratio)')
        links = spec.get('links') if isinstance(spec, dict) else None
        names = [link.get('name') for link in links or [] if isinstance(link, dict)]
        if parts[0] not in names:
            raise ParameterError(f'{path}: no link {parts[0]!r} in the model (links: '
                                 f'{", ".join(map(str, names))})')
        self.link = names.index(parts[0])
        self.keys = parts[1:-1]                  # the mappings down to the numbers
        node, where = links[self.link], parts[0]
        for key in self.keys:
            node, where = _field(node, key, where, path), f'{where}.{key}'
        last = parts[-1]
        match = INDEXED.match(last)
        self.leaves = []                         # (field, entry or None) of each number
        for key in ([match.group(1)] if match else last.split('+')):
            if key in COUNTS:
                raise ParameterError(f'{path}: {where}.{key} is a count, not a physical '
                                     'parameter')
            value = _field(node, key, where, path)
            if match:
                index = int(match.group(2))
                if not isinstance(value, list) or index >= len(value):
                    raise ParameterError(f'{path}: {where}.{key} has no entry {index}')
                self.leaves.append((key, index))
                value = value[index]
            elif isinstance(value, list):
                self.leaves += [(key, i) for i in range(len(value))]
            else:
                self.leaves.append((key, None))
            for number in value if isinstance(value, list) else [value]:
                if not _number(number):
                    raise ParameterError(f'{path}: {where}.{key} is {value!r} in the model '
                                         'file, not a number or a list of numbers')
        values = np.array([_leaf(node, leaf) for leaf in self.leaves], dtype=float)
        self.start = values if values.size > 1 else float(values[0])
        if not np.all(values):
            raise ParameterError(f'{path}: is 0 in the model file: the fit scales the file\'s '
                                 'value, put a nonzero first guess there')

    @property
    def vector(self):
        """True for several numbers fitted as one common factor."""
        return isinstance(self.start, np.ndarray)

    def value(self, factor):
        """Return the parameter's value at ``factor`` (a number, or its numbers)."""
        return factor * self.start

    def numbers(self):
        """(link, mapping keys, leaf) of each number it scales (to tell overlaps)."""
        return {(self.link, tuple(self.keys), leaf) for leaf in self.leaves}

    def set(self, spec, factor):
        """Write the value at ``factor`` into the parsed file ``spec`` (in place)."""
        node = spec['links'][self.link]
        for key in self.keys:
            node = node[key]
        for (key, index), value in zip(self.leaves, np.atleast_1d(self.value(factor))):
            if index is None:
                node[key] = float(value)
            else:
                node[key][index] = float(value)


def _field(node, key, where, path):
    """``node[key]``, or a ParameterError naming the fields there."""
    if not isinstance(node, dict) or key not in node:
        fields = sorted(map(str, node)) if isinstance(node, dict) else []
        close = difflib.get_close_matches(key, fields, n=1)
        hint = f'did you mean {close[0]!r}? ' if close else ''
        raise ParameterError(f'{path}: {where} has no field {key!r} in the model file '
                             f'({hint}fields there: {", ".join(fields) or "none"})')
    return node[key]


def _leaf(node, leaf):
    key, index = leaf
    return node[key] if index is None else node[key][index]


def parse(paths, spec):
    """Return the `Parameter` of each path (a comma-separated text or a list), checked."""
    if isinstance(paths, str):
        paths = [p.strip() for p in paths.split(',')]
    if not paths or not all(paths):
        raise ParameterError('--fit: expected a comma-separated list of parameter paths, got '
                             f'{",".join(paths)!r}')
    if len(set(paths)) != len(paths):
        twice = sorted(p for p in set(paths) if paths.count(p) > 1)
        raise ParameterError(f'{twice[0]}: named twice')
    found = [Parameter(path, spec) for path in paths]
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


def build(spec, parameters, factors, source):
    """Build the model of ``spec`` with the parameters at ``factors`` (`ConfigError`)."""
    return model_from_dict(applied(spec, parameters, factors), source)


def _scalars(root, parameter):
    """Return the YAML scalar nodes of ``parameter``'s numbers in the document ``root``."""
    def child(node, key):
        for k, v in node.value:
            if k.value == key:
                return v
        raise KeyError(key)
    node = child(root, 'links').value[parameter.link]
    for key in parameter.keys:
        node = child(node, key)
    return [child(node, key) if index is None else child(node, key).value[index]
            for key, index in parameter.leaves]


def rewrite(text, parameters, factors):
    """Return the model file's ``text`` with each parameter's numbers at its factor.

    Only the numbers' characters change (7 significant digits); comments and layout stay.
    The result is read back and checked.
    """
    edits = []
    root = yaml.compose(text)
    for parameter, factor in zip(parameters, factors):
        edits += [(node.start_mark.index, node.end_mark.index, f'{value:.7g}')
                  for node, value in zip(_scalars(root, parameter),
                                         np.atleast_1d(parameter.value(factor)))]
    for start, end, number in sorted(edits, reverse=True):
        text = text[:start] + number + text[end:]
    written = yaml.safe_load(text)
    for parameter, factor in zip(parameters, factors):
        node = written['links'][parameter.link]
        for key in parameter.keys:
            node = node[key]
        values = [_leaf(node, leaf) for leaf in parameter.leaves]
        if not np.allclose(values, np.atleast_1d(parameter.value(factor)), rtol=1e-6, atol=0):
            raise ConfigError(f'{parameter.path}: the rewritten file holds {values}, not '
                              f'{parameter.value(factor)}')
    return text
