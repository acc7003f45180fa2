"""Tuples of arrays handed to kernels as tables of addresses (`mechanics.tuple_tables`).

Expected values: a kernel that receives the table of a namedtuple sees the same arrays
(it reads the values written from Python and its writes land in the caller's arrays), the
same scalars (an int and a float, bit for bit) and the same shapes; a table refuses a value
of the wrong kind, dimensions or layout and names the field; and every chain model's
tables describe its constant arrays and workspace (so the entries of
`chain_kernels.entries` run on the same memory as the tuple-taking kernels).
"""

from collections import namedtuple

import numba
import numpy as np
import pytest

from flexible_manipulator.mechanics.model import layout as chain_layout
from flexible_manipulator.mechanics.tuple_tables import Layout, unpack
from flexible_manipulator.compile_kernels import model_file
from flexible_manipulator.model_config import load_model

Sample = namedtuple('Sample', 'matrix count scale cube')
LAYOUT = Layout(Sample, [('f8', 2), ('i8', 0), ('f8', 0), ('i8', 3)])
SAMPLE = LAYOUT.type


@numba.njit(cache=False)
def _touch(rows):
    """Double the matrix in place; return its sum, the scalars and the cube's shape."""
    sample = unpack(rows, SAMPLE)
    sample.matrix[:] *= 2.0
    return (sample.matrix.sum(), sample.count, sample.scale, sample.cube.shape[0],
            sample.cube.shape[1], sample.cube.shape[2], sample.cube[1, 2, 3])


def test_a_kernel_sees_and_writes_the_callers_arrays_through_the_table():
    matrix = np.arange(6.0).reshape(2, 3)
    cube = np.arange(2 * 3 * 4).reshape(2, 3, 4)
    sample = Sample(matrix, 7, 0.1 + 2e-17, cube)
    total, count, scale, *shape, last = _touch(LAYOUT.table(sample))
    assert total == 2 * 15.0 and count == 7 and scale == sample.scale
    assert shape == [2, 3, 4] and last == cube[1, 2, 3]
    np.testing.assert_array_equal(matrix, 2.0 * np.arange(6.0).reshape(2, 3))


@pytest.mark.parametrize('field, value, words', [
    ('matrix', np.zeros((3, 2)).T, 'C-contiguous'),
    ('matrix', np.zeros(3), '2 dimensions'),
    ('matrix', np.zeros((2, 2), dtype=np.float32), 'f8'),
    ('cube', np.zeros((1, 1, 1)), 'i8'),
    ('count', np.zeros(1), 'scalar'),
])
def test_a_table_refuses_what_a_kernel_would_misread(field, value, words):
    """Refuse what a kernel would misread, naming the field and what was expected."""
    good = dict(matrix=np.zeros((2, 2)), count=1, scale=1.0,
                cube=np.zeros((1, 1, 1), dtype=np.int64))
    with pytest.raises(ValueError, match=f'Sample.{field}: .*{words}'):
        LAYOUT.table(Sample(**dict(good, **{field: value})))


@pytest.mark.parametrize('name', ['two_link_flexible', 'two_link_soft'])
def test_chain_tables_point_at_the_models_arrays_and_workspace(name):
    layouts = chain_layout
    model = load_model(model_file(name))
    data = model.create_data()
    assert model.kernel_inputs(data)[0] is model.kernel_inputs(data)[0]
    for layout, values in ((layouts.MODEL_LAYOUT, model.arrays), (layouts.DATA_LAYOUT, data)):
        table = layout.table(values)
        arrays = [v for v in values if isinstance(v, np.ndarray)]
        rows = [r for r, v in zip(table, values) if isinstance(v, np.ndarray)]
        assert [r[0] for r in rows] == [a.ctypes.data for a in arrays]
        assert all(tuple(r[1:1 + a.ndim]) == a.shape for r, a in zip(rows, arrays))
    assert data.table is data.table            # built once, kept with the workspace


def _layouts(name):
    """(spec, values) of a model file's constants and workspace, for every model family."""
    from flexible_manipulator.mechanics import servo
    from flexible_manipulator.model_config import load_model as load
    model = load(model_file(name))
    data = model.create_data()
    if isinstance(model, servo.ServoSystem):
        return [(servo.SERVO_MODEL, model.arrays), (servo.SERVO_WORKSPACE, data)]
    return [(chain_layout.MODEL, model.arrays), (chain_layout.WORKSPACE, data)]


@pytest.mark.parametrize('name', ['two_link_flexible', 'satellite_soft_boom',
                                  'suslov_heavy_kharlamova', 'sleigh_incline'])
def test_every_field_is_declared_once_with_its_meaning_kind_and_extents(name):
    """Each model family's constants and workspace are declared one line per field (name,
    kind and extents, meaning): the values built have exactly those fields, each of the
    declared kind and number of dimensions (`tuple_tables.spec_layout` refuses any other),
    numeric extents as written and each size name one size throughout."""
    from flexible_manipulator.mechanics.tuple_tables import spec_fields, spec_layout
    for spec, values in _layouts(name):
        assert type(values)._fields == tuple(field for field, _, _ in spec)
        spec_layout(type(values), spec).table(values)          # kinds and dimensions
        sizes = {}
        for (field, _, meaning), (_, extents), value in zip(spec, spec_fields(spec), values):
            assert len(meaning) > 5 and getattr(type(values), field).__doc__ == meaning
            for extent, size in zip(extents, np.shape(value)):
                if extent.isdigit():
                    assert size == int(extent), field
                else:
                    assert sizes.setdefault(extent, size) == size, (field, extent)
