"""The base of every program row type: its declaration and a built row.

A row type is a subclass of `Row` in a module of its own (``rows/<type>.py``) that says

* ``row_type``: the ``type`` of its rows in a program file;
* ``program_class``: the `programs.Program` class its rows build (named in the
  documentation);
* ``keys``: its keys as `fields.Key` lines (name, value, unit, default, meaning), in the
  order they are checked; ``type`` and ``gains``, which every row has, are added here;
* ``from_spec(spec, model, field, rigid_twin)``: the built row of a checked mapping;

and, in its docstring, what its rows constrain (the documentation's text). An instance is
a built row: its program on the control model, the labels of its constraint rows, its
gains and the reference reported per row (`reported_reference`).
"""

from abc import ABC, abstractmethod

from ...config_checks import check_keys
from .fields import GAINS, Key, REQUIRED

TYPE = Key('type', 'row type', '', REQUIRED, 'one of the row types of this document')


class Row(ABC):
    """A built program row (see module docstring); subclasses are the row types."""

    row_type = None
    program_class = None
    keys = ()
    # Whether `redefined(lambdas, model, field, rigid_twin)` gives this row's redefined,
    # minimum-phase output (admission substitutes it under ``non_minimum_phase: redefine``).
    redefinable = False
    # Whether this row's output is minimum phase as it is, on any model: joint coordinates,
    # collocated with the joint inputs; a redefinition of the program keeps such rows.
    minimum_phase = False

    def __init__(self, program, labels):
        """Keep the row's ``program`` and one label per constraint row (topics, messages)."""
        self.program = program
        self.labels = list(labels)
        self.gains = None   # {alpha, beta, gamma} [1/s]: parse_program sets, a swap keeps

    @classmethod
    def all_keys(cls):
        """Every key of the row type: ``type``, its own, then ``gains``."""
        return (TYPE,) + tuple(cls.keys) + (GAINS,)

    @classmethod
    def check(cls, spec, field):
        """Refuse unknown keys and missing required ones (`config_checks.check_keys`)."""
        keys = cls.all_keys()
        check_keys(spec, field, tuple(k.name for k in keys if k.default == REQUIRED),
                   tuple(k.name for k in keys if k.default != REQUIRED))

    @classmethod
    @abstractmethod
    def from_spec(cls, spec, model, field, rigid_twin=None):
        """Build the row of ``spec`` (its keys checked) on ``model``; raise ConfigError.

        ``field`` is the row's dotted path in messages; ``rigid_twin``: the model whose
        kinematics rows on the rigid arm use, ``model.rigid_twin()`` when not given.
        """

    @property
    def reported_reference(self):
        """The reference reported per constraint row: evaluate(t) -> (r, r', r'') and span."""
        return self.program.reference
