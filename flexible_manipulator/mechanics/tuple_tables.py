"""A namedtuple of arrays handed to a kernel as one table of addresses and shapes.

Calling a numba kernel from Python unboxes every array argument (~45 ns each: a check and
a reference-count wrapper per array), so a chain model's constant tuple and workspace
(~130 arrays) cost as much per call as the dynamics of a 6-joint arm. Instead the
caller passes each tuple as an int64 table built once (`Layout.table`), with one row per field:

    array:   [address of the first element, shape_0, shape_1, shape_2]  (C-contiguous)
    int:     [value, 0, 0, 0]
    float:   [the value's 64 bits, 0, 0, 0]

and the kernel rebuilds the tuple of views at no cost (`unpack`, a numba intrinsic that
writes the array structures straight from the table). The table holds raw addresses: it is
valid while the tuple's arrays live, so it is stored with the tuple it describes.
"""

from collections import namedtuple

import numpy as np
from numba import types
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

COLUMNS = 4             # address or scalar, then up to three extents
DTYPES = {'f8': types.float64, 'i8': types.int64}


class Layout:
    """The fields of a namedtuple class of arrays and scalars: its numba type and tables.

    ``fields``: one ``(kind, ndim)`` per field of ``cls``, in order: kind 'f8' or 'i8',
    ndim 0 for a scalar, else the dimensions of a C-contiguous array (at most 3).
    """

    def __init__(self, cls, fields):
        """Check ``fields`` against ``cls`` and build the numba type ``self.type``."""
        if len(fields) != len(cls._fields):
            raise ValueError(f'{cls.__name__} has {len(cls._fields)} fields, '
                             f'{len(fields)} given')
        self.cls, self.fields = cls, tuple(fields)
        self.type = types.NamedTuple(
            [DTYPES[kind] if ndim == 0 else types.Array(DTYPES[kind], ndim, 'C')
             for kind, ndim in self.fields], cls)

    def table(self, values):
        """Return the (fields x 4) int64 table of ``values``, an instance of the class.

        Raises ValueError naming a field whose value has the wrong kind, dimensions or
        memory layout (the kernel would read its memory wrongly).
        """
        out = np.zeros((len(self.fields), COLUMNS), np.int64)
        for i, ((kind, ndim), value) in enumerate(zip(self.fields, values)):
            name = f'{self.cls.__name__}.{self.cls._fields[i]}'
            if ndim == 0:
                if isinstance(value, np.ndarray):
                    raise ValueError(f'{name}: a scalar is needed, got an array')
                out[i, 0] = (np.float64(value).view(np.int64) if kind == 'f8'
                             else int(value))
                continue
            if not (isinstance(value, np.ndarray) and value.dtype == np.dtype(kind)
                    and value.ndim == ndim and value.flags.c_contiguous):
                raise ValueError(f'{name}: a C-contiguous {kind} array of {ndim} dimensions '
                                 f'is needed, got {type(value).__name__} '
                                 f'{getattr(value, "dtype", "")} '
                                 f'{getattr(value, "shape", "")}')
            out[i, 0] = value.ctypes.data
            out[i, 1:1 + ndim] = value.shape
        return out


@intrinsic
def unpack(typingctx, rows, kind):
    """Rebuild the tuple of numba type ``kind`` (a `Layout.type`) from its table ``rows``."""
    target = kind.instance_type

    def codegen(context, builder, signature, args):
        data = make_array(signature.args[0])(context, builder, args[0]).data

        def cell(field, column):
            index = context.get_constant(types.intp, field * COLUMNS + column)
            return builder.load(builder.gep(data, [index]))

        members = []
        for i, member in enumerate(target.types):
            if not isinstance(member, types.Array):
                value = cell(i, 0)
                if isinstance(member, types.Float):
                    value = builder.bitcast(value, context.get_value_type(member))
                members.append(value)
                continue
            array = make_array(member)(context, builder)
            itemsize = context.get_abi_sizeof(context.get_data_type(member.dtype))
            shape = [cell(i, 1 + d) for d in range(member.ndim)]
            strides, stride = [], context.get_constant(types.intp, itemsize)
            for extent in reversed(shape):                    # C order
                strides.insert(0, stride)
                stride = builder.mul(stride, extent)
            populate_array(array, data=builder.inttoptr(cell(i, 0), array.data.type),
                           shape=shape, strides=strides,
                           itemsize=context.get_constant(types.intp, itemsize), meminfo=None)
            members.append(array._getvalue())
        return context.make_tuple(builder, target, members)

    return target(rows, kind), codegen


# -- layouts declared as specs -------------------------------------------------------------
# A chain's constants and workspace are declared once, one line per field (Pinocchio's
# Model and Data): ``(name, shape, meaning)``, the shape a kind word then its extents,
# 'i8 n 3' or 'f8 nv' ('f8' if the kind is left out; no extent: a scalar). An extent is a
# number or a size name that `allocate` looks up ('n', 'nv', '6+k', ...).


def spec_fields(spec):
    """Return the (kind, extents) of every field of ``spec``: ('f8', ['n', '3']), ..."""
    out = []
    for _, shape, _ in spec:
        words = shape.split()
        out.append((words.pop(0) if words and words[0] in DTYPES else 'f8', words))
    return out


def record(name, spec, doc, module):
    """Return a namedtuple class of ``spec``'s fields, each documented by its meaning.

    ``module``: the name of the module that binds the class to ``name`` (numba's on-disk
    cache pickles the class by reference). Its instances take attributes (no
    ``__slots__``): a workspace keeps its table on itself (`table_of`) so that the table
    lives as long as the arrays it points at.
    """
    base = namedtuple(name, [field for field, _, _ in spec], module=module)
    cls = type(name, (base,), {'__doc__': doc, '__module__': module})
    for field, _, meaning in spec:
        getattr(base, field).__doc__ = meaning
    return cls


def spec_layout(cls, spec):
    """Return the `Layout` of the record class ``cls`` declared by ``spec``."""
    return Layout(cls, [(kind, len(extents)) for kind, extents in spec_fields(spec)])


def allocate(cls, spec, sizes):
    """Return an instance of ``cls`` with zeroed arrays of the extents in ``spec``.

    ``sizes`` maps each size name to its value; scalar fields get 0.
    """
    values = []
    for kind, extents in spec_fields(spec):
        shape = [sizes[e] if e in sizes else int(e) for e in extents]
        values.append(np.zeros(shape, dtype=kind) if shape else 0)
    return cls(*values)


def table_of(values, layout):
    """Return the table of ``values`` (a `record` instance), built on first use and kept."""
    try:
        return values.table
    except AttributeError:
        values.table = layout.table(values)
        return values.table
