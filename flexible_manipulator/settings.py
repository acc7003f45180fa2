"""Settings declared once: each one's parameter name, kind, default, description and check.

No ROS here. A `Setting` is one parameter of a node: the name a node declares it under,
its default, a description (units in brackets, SI), its allowed values (``choices``) or a
check, and whether it may change at run time. A ROS-free settings class
(`control.controller_settings.ControllerSettings`, `control.servo_controller.ServoSettings`)
is a dataclass whose fields are made by `Setting.field` (or `group` for a field that
gathers several parameters, such as ``uncertainty.<factor>``): its defaults are the
settings' defaults, `schema` lists its settings, `from_parameters` builds it from
parameter values. Parameters only a node has (topics, rates, ``start_enabled``) are
`Setting` tuples beside that node. A node declares the settings of its schema with
`nodes.common.declare_settings` (the one place that talks to rclpy), which runs each
setting's `Setting.check`; the controllers run the same checks on the settings they are
given (`check_declared`), so a ROS-free caller gets the same refusals. doc/nodes.md's
parameter tables are generated from what the nodes declare (`nodes.parameter_docs`).

Adding a parameter: one `Setting` in its schema (and the code that uses the value), and
its tests.
"""

from dataclasses import dataclass, field as dataclass_field, fields
import math

from .config_checks import ConfigError

# Kinds of value a setting holds; a node maps them onto its parameter types.
KINDS = ('float', 'int', 'bool', 'str', 'floats', 'strings')
_KIND_OF = {float: 'float', int: 'int', bool: 'bool', str: 'str'}
_METADATA = 'setting'       # dataclass field metadata key: the field's Setting or group


@dataclass(frozen=True)
class Setting:
    """One parameter: name, default, description, allowed values, check (module doc).

    ``default``: the value when none is given; None for an array left unset; or a
    function of the node's model (`default_for`, e.g. the model's joints). ``kind``: one
    of `KINDS`, from the default when not given. ``choices``: the allowed strings (the
    description then ends with them). ``renamed``: old value -> new name, still accepted
    (with a warning). ``formerly``: (old parameter name, {old value: value}): the
    parameter's former name, still read (with a warning naming this one) when it is given,
    its values mapped. ``check(value, name)``: returns the value, normalized, or raises
    `ConfigError` starting with ``name``. ``read(value)``: the value a settings class
    holds for the parameter's value (e.g. -1 -> None: "all"); the field's default is
    ``read(default)``. ``read_only``: False for a parameter that may change at run time.
    """

    name: str
    default: object
    description: str
    kind: str = None
    choices: tuple = None
    check: object = None
    renamed: dict = None
    formerly: tuple = None
    read: object = None
    read_only: bool = True

    def __post_init__(self):
        """Infer the kind from the default; write float defaults as floats."""
        kind = self.kind
        if kind is None:
            if isinstance(self.default, (list, tuple)):
                kind = 'strings' if all(isinstance(x, str) for x in self.default) else 'floats'
            else:
                kind = _KIND_OF.get(type(self.default))
        if kind not in KINDS:
            raise ValueError(f'setting {self.name}: kind {kind!r} is not one of {KINDS}')
        object.__setattr__(self, 'kind', kind)
        if kind == 'float' and isinstance(self.default, int):
            object.__setattr__(self, 'default', float(self.default))
        if kind == 'floats' and isinstance(self.default, (list, tuple)):
            object.__setattr__(self, 'default', [float(x) for x in self.default])

    @property
    def former_text(self):
        """The description of the former name (``formerly``), or None."""
        if not self.formerly:
            return None
        old, values = self.formerly
        mapped = ''.join(f'; {a} reads {b}' for a, b in (values or {}).items() if a != b)
        return f'Deprecated name of {self.name}, read when given{mapped}.'

    def former_value(self, value):
        """Return what the former name's ``value`` reads as under this name."""
        return (self.formerly[1] or {}).get(value, value)

    @property
    def text(self):
        """The description, with the allowed values when there are choices."""
        if self.choices:
            return f'{self.description} One of: {", ".join(self.choices)}.'
        return self.description

    def default_for(self, model=None):
        """Return the default; for a default derived from the model, its value for ``model``."""
        return self.default(model) if callable(self.default) else self.default

    def validate(self, value):
        """Return ``value`` checked (and an empty array as None); `ConfigError` if bad.

        The message starts with the parameter's name; a node puts 'parameter ' before it.
        """
        if self.kind in ('floats', 'strings') and value is not None:
            value = list(value) or None      # an empty array is as good as unset
        if self.choices is not None and value not in self.choices:
            raise ConfigError(f'{self.name}: must be one of {", ".join(self.choices)}; got '
                              f'{value!r}')
        if self.kind == 'bool' and not isinstance(value, bool):
            raise ConfigError(f'{self.name}: expected true or false, got {value!r}')
        return value if self.check is None else self.check(value, self.name)

    def value(self, parameter):
        """Return what a settings class holds for the parameter value ``parameter``."""
        return parameter if self.read is None else self.read(parameter)

    def field(self):
        """Return a dataclass field holding this setting, its default ``read(default)``."""
        return dataclass_field(default=self.value(self.default), metadata={_METADATA: self})


def group(*settings):
    """Return a dataclass field gathering ``settings``: {key: value}, None by default.

    Each setting is named ``<field>.<key>`` (``uncertainty.stiffness``); None stands for
    the settings' own defaults (the class that reads the field knows them: they are the
    same constants).
    """
    return dataclass_field(default=None, metadata={_METADATA: tuple(settings)})


def schema(cls):
    """Return the settings of a settings class in field order (a group's in place)."""
    found = []
    for item in fields(cls):
        entry = item.metadata.get(_METADATA)
        if isinstance(entry, Setting):
            found.append(entry)
        elif entry is not None:
            found.extend(entry)
    return tuple(found)


def from_parameters(cls, values, **others):
    """Build the settings class ``cls`` from parameter values {name: value}.

    Parameters that are not in ``values`` keep their defaults; names of other parameters
    are ignored. ``others``: fields that are no parameter.
    """
    kwargs = dict(others)
    for item in fields(cls):
        entry = item.metadata.get(_METADATA)
        if isinstance(entry, Setting):
            if entry.name in values:
                kwargs[item.name] = entry.value(values[entry.name])
        elif entry is not None and any(s.name in values for s in entry):
            kwargs[item.name] = {s.name.rsplit('.', 1)[1]: s.value(values.get(s.name, s.default))
                                 for s in entry}
    return cls(**kwargs)


def flatten(mapping, prefix=''):
    """Parameter names of a parameter file's nested mapping: {'observer.effort_noise': ..}."""
    flat = {}
    for key, value in mapping.items():
        if isinstance(value, dict):
            flat.update(flatten(value, f'{prefix}{key}.'))
        else:
            flat[f'{prefix}{key}'] = value
    return flat


def check_declared(settings):
    """Run the check of each parameter field of ``settings`` that holds its value as given.

    A ROS-free caller gets the refusal a node gives for the same value. Left to the code
    that reads them: a field holding a read value (``read``), a group, and a per-joint
    array (kind ``floats``: the controllers read it per joint, one number for every joint
    too, with errors naming the entry).
    """
    for item in fields(settings):
        setting = item.metadata.get(_METADATA)
        if isinstance(setting, Setting) and setting.read is None and setting.kind != 'floats':
            setting.validate(getattr(settings, item.name))


# -- checks: check(value, name) -> value, or ConfigError starting with name -----------------
def positive(value, name):
    """Check a positive finite number."""
    if not (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and value > 0.0):
        raise ConfigError(f'{name}: must be a positive number, got {value!r}')
    return float(value)


def non_negative(value, name):
    """Check a finite number >= 0."""
    if not (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and value >= 0.0):
        raise ConfigError(f'{name}: must be a number >= 0, got {value!r}')
    return float(value)


def greater_than(bound):
    """Return a check of a finite number > ``bound``."""
    def check(value, name):
        if not (isinstance(value, (int, float)) and not isinstance(value, bool)
                and math.isfinite(value) and value > bound):
            raise ConfigError(f'{name}: must be a number > {bound:g}, got {value!r}')
        return float(value)
    return check


def fraction(value, name):
    """Check a number in (0, 1)."""
    value = positive(value, name)
    if value >= 1.0:
        raise ConfigError(f'{name}: must be < 1, got {value:g}')
    return value


def numbers(value, name):
    """Check an array of numbers, each finite or +inf (no limit); None when unset."""
    if value is not None and not all(math.isfinite(x) or x == math.inf for x in value):
        raise ConfigError(f'{name}: expected numbers, got {value}')
    return value


def whole_number(lowest, highest, what):
    """Return a check of a whole number of ``what`` in lowest..highest."""
    def check(value, name):
        if isinstance(value, bool) or not isinstance(value, int) \
                or not lowest <= value <= highest:
            raise ConfigError(f'{name}: expected a whole number of {what} in '
                              f'{lowest}..{highest}, got {value!r}')
        return value
    return check


def parameter_files(arguments):
    """Return the paths given by ``--params-file`` among command-line ``arguments``."""
    return [arguments[k + 1] for k, argument in enumerate(arguments[:-1])
            if argument == '--params-file']


def parameter_file_problem(path):
    """Return why ROS 2 would not read the parameter file ``path`` as written, or None.

    YAML anchors and aliases (``&name``, ``*name``, ``<<: *name``) are valid YAML, but
    rcl's parameter-file parser refuses them ("Will not support aliasing") or misreads a
    merge key as a value before ``ros__parameters``, and rclpy then raises while it
    parses the command line. Other problems (a missing file, text that is no YAML) are
    left to rcl's own message: None.
    """
    import yaml
    try:
        with open(path, encoding='utf-8') as stream:
            for event in yaml.parse(stream):
                if isinstance(event, yaml.AliasEvent) or getattr(event, 'anchor', None):
                    return (f'{path}: line {event.start_mark.line + 1}: YAML anchors and '
                            'aliases (&name, *name, <<: *name) are not read by ROS 2 '
                            'parameter files: write the values out in full')
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    return None
