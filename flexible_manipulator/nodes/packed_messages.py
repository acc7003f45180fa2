"""Per-tick messages kept serialized: numbers written into, and read from, the CDR bytes.

Publishing a message object costs rclpy a conversion of every field from Python to C and a
serialization, each time: for the soft arm's TF (14 transforms, each with two frame names)
every field a tick, of which the numbers that change are 98 doubles and 14 stamps; and
filling the message objects field by field costs as much again in Python. A
`PackedMessage` keeps the message serialized (CDR, `rclpy.serialization`) and writes only
those numbers into the buffer, through NumPy views; `Publisher.publish` sends `bytes` as
they are (a serialized message of the publisher's type), so nothing is converted.

Where each number lies in the buffer is found once, without assuming a CDR layout: the
template message is serialized with a distinct sentinel in every number to refresh, and
each sentinel's bytes are looked up (each must occur exactly once). The construction then
checks the buffer against the message itself: random numbers written both ways, the
buffer deserialized must equal the message. A message whose strings or sequence lengths
change (a controller's row names when its program changes) is rebuilt from a new template.

Taking a message costs rclpy as much the other way: a message object built and filled
field by field (for a `sensor_msgs/JointState` several times the cost of reading its
bytes). `JointStateReader` and `Float64ArrayReader` read a raw subscription's bytes
(plain CDR, either byte order) into NumPy views: the first message of a layout (its
strings and sequence lengths) is walked field by field, and the next ones whose layout
bytes are the same (every byte but the numbers, the stamp and the alignment padding,
which a writer may leave undefined) are read at the offsets found then. Bytes of another
representation go through `rclpy.serialization`; bytes that are no such message read as
None.
"""

import collections
import struct

import numpy as np
from rclpy.serialization import deserialize_message, serialize_message

from builtin_interfaces.msg import Time

# Sentinel bit patterns: finite doubles near 1e298 and 32-bit integers whose two high
# bytes are no ASCII, numbered in their low bits. No field of a template holds such a
# number (the construction refuses a sentinel found twice).
_DOUBLE_SENTINEL = 0x7E1E3C5A00000000
_SEC_SENTINEL = 0x7EAD0000
_NANOSEC_SENTINEL = 0x7EBD0000


class _Slots:
    """Positions of some numbers of one type in the buffer: a view and an index per group.

    The numbers are grouped by their offset modulo the item size, each group read through
    its own aligned view of the buffer (XCDR1 aligns every number to its size, so one
    group is the rule).
    """

    def __init__(self, buffer, dtype, offsets):
        dtype = np.dtype(dtype)
        size = dtype.itemsize
        offsets = np.asarray(offsets, dtype=np.int64)
        self.groups = []
        for residue in sorted(set((offsets % size).tolist())):
            where = np.flatnonzero(offsets % size == residue)
            view = np.frombuffer(buffer, dtype=dtype, offset=residue,
                                 count=(len(buffer) - residue) // size)
            index = (offsets[where] - residue) // size
            if len(index) and np.array_equal(index, np.arange(index[0], index[0] + len(index))):
                view, index = view[index[0]:index[0] + len(index)], Ellipsis   # contiguous
            self.groups.append((view, index, None if len(where) == len(offsets) else where))

    def write(self, values):
        """Write ``values`` (one per position, or a scalar for all) into the buffer."""
        for view, index, where in self.groups:
            view[index] = values if where is None or np.ndim(values) == 0 else \
                np.asarray(values)[where]


class PackedMessage:
    """A serialized message whose numbers are refreshed in place (module doc).

    ``template``: the message with its final strings and sequence lengths (it is changed:
    the sentinels and the check's numbers are written into it). ``doubles``: {name:
    (count, setter)}, ``setter(msg, values)`` writing ``count`` floats into the fields
    that `set` ``name`` refreshes; ``stamps``: setters ``setter(msg, time)`` of the
    `builtin_interfaces/Time` fields that `set_stamp` refreshes, all to the same time.
    """

    def __init__(self, template, doubles=None, stamps=()):
        doubles = dict(doubles or {})
        self.msg_type = type(template)
        sentinels, k = {}, 0
        for name, (count, setter) in doubles.items():
            bits = np.arange(k, k + count, dtype=np.uint64) + np.uint64(_DOUBLE_SENTINEL)
            sentinels[name] = bits.view(np.float64).tolist()
            setter(template, sentinels[name])
            k += count
        for k, setter in enumerate(stamps):
            setter(template, Time(sec=_SEC_SENTINEL + k, nanosec=_NANOSEC_SENTINEL + k))
        self._buffer = bytearray(serialize_message(template))
        # The encapsulation header's second byte: odd for little-endian representations.
        order = '<' if self._buffer[1] & 1 else '>'
        self._doubles = {
            name: _Slots(self._buffer, order + 'f8',
                         [self._find(struct.pack(order + 'd', x)) for x in values])
            for name, values in sentinels.items()}
        self._sec = _Slots(self._buffer, order + 'i4', [
            self._find(struct.pack(order + 'i', _SEC_SENTINEL + k)) for k in range(len(stamps))])
        self._nanosec = _Slots(self._buffer, order + 'u4', [
            self._find(struct.pack(order + 'I', _NANOSEC_SENTINEL + k))
            for k in range(len(stamps))])
        self._check(template, doubles, stamps)

    def _find(self, pattern):
        offset = self._buffer.find(pattern)
        if offset < 0 or self._buffer.find(pattern, offset + 1) >= 0:
            raise ValueError(f'{self.msg_type.__name__}: a number to refresh is not found '
                             'once in the serialized template')
        return offset

    def _check(self, template, doubles, stamps):
        """Write random numbers both ways; the buffer must deserialize to the message."""
        rng = np.random.default_rng(0)
        for name, (count, setter) in doubles.items():
            values = rng.standard_normal(count)
            setter(template, values.tolist())
            self.set(name, values)
        time = Time(sec=int(rng.integers(0, 2**31 - 1)), nanosec=int(rng.integers(0, 10**9)))
        for setter in stamps:
            setter(template, time)
        self.set_stamp(time.sec, time.nanosec)
        if deserialize_message(self.data(), self.msg_type) != template:
            raise ValueError(f'{self.msg_type.__name__}: the packed buffer does not '
                             'deserialize to its message')

    def set(self, name, values):
        """Write the numbers ``name`` (a sequence of their count, or one for all)."""
        self._doubles[name].write(values)

    def set_stamp(self, sec, nanosec):
        """Write every stamp: ``sec``, ``nanosec`` as in `builtin_interfaces/Time`."""
        self._sec.write(sec)
        self._nanosec.write(nanosec)

    def data(self):
        """Return the serialized message, for `Publisher.publish`."""
        return bytes(self._buffer)


def joint_state(names, fields=('position', 'velocity', 'effort'), frame_id=''):
    """Return a packed `sensor_msgs/JointState` of ``names``: numbers ``fields``, one stamp.

    The fields not in ``fields`` are empty sequences.
    """
    from sensor_msgs.msg import JointState
    count = len(names)
    template = JointState(name=list(names))
    template.header.frame_id = frame_id
    return PackedMessage(
        template, {field: (count, _field_setter(field)) for field in fields},
        stamps=(_header_stamp,))


def _field_setter(field):
    return lambda msg, values: setattr(msg, field, values)


def _header_stamp(msg, time):
    msg.header.stamp = time


# What a reader returns: the fields of a JointState that the nodes read, as a message
# object has them (``header.stamp.sec``, ``name``, ``position``, ...); the arrays are
# read-only NumPy views of the bytes.
Stamp = collections.namedtuple('Stamp', 'sec nanosec')
Header = collections.namedtuple('Header', 'stamp frame_id')
JointStateView = collections.namedtuple('JointStateView',
                                        'header name position velocity effort')
_EMPTY = np.zeros(0)
_BYTE = np.dtype(np.uint8)
_EMPTY.flags.writeable = False


class _Walk:
    """A cursor over plain CDR bytes.

    XCDR1: every number is aligned to its size from the start of the payload, after the
    4-byte encapsulation header. The cursor records the spans of bytes that fix the
    layout (``fixed``): the header, sequence lengths, strings; not the numbers nor the
    padding. ValueError or struct.error when the bytes are not such a message.
    """

    def __init__(self, data):
        if len(data) < 4 or data[0] != 0 or data[1] not in (0, 1):
            raise ValueError('not plain CDR')
        self.data, self.pos = data, 4
        self.order = '<' if data[1] else '>'
        self.fixed = [(0, 4)]

    def _align(self, size):
        self.pos = 4 + -(-(self.pos - 4) // size) * size

    def u32(self, fixed=True):
        """Read a uint32 (a length, or a number when not ``fixed``)."""
        self._align(4)
        start = self.pos
        (value,) = struct.unpack_from(self.order + 'I', self.data, start)
        self.pos += 4
        if fixed:
            self.fixed.append((start, self.pos))
        return value

    def string(self):
        """Read a text field (its length counts the closing NUL)."""
        size = self.u32()
        start, end = self.pos, self.pos + size
        if end > len(self.data) or (size and self.data[end - 1] != 0):
            raise ValueError('not a string')
        self.fixed[-1] = (self.fixed[-1][0], end)
        self.pos = end
        return self.data[start:end - 1].decode() if size else ''

    def doubles(self):
        """Read a float64 sequence's length; return (offset, count) of its numbers."""
        count = self.u32()
        if count:
            self._align(8)
        start = self.pos
        self.pos += 8 * count
        if self.pos > len(self.data):
            raise ValueError('sequence beyond the message')
        return start, count


class _Layout:
    """The fixed bytes of one layout (`_Walk.fixed`), compared in one NumPy gather."""

    def __init__(self, walk):
        data = walk.data
        self.size = len(data)
        self.doubles = np.dtype(walk.order + 'f8')
        self.stamp = struct.Struct(walk.order + 'iI')
        self.index = np.concatenate([np.arange(a, b) for a, b in walk.fixed])
        self.reference = np.frombuffer(data, _BYTE)[self.index].tobytes()

    def matches(self, data):
        """Whether ``data`` has this layout (the same size and fixed bytes)."""
        return (len(data) == self.size
                and np.frombuffer(data, _BYTE)[self.index].tobytes() == self.reference)

    def array(self, data, offset, count):
        """Return the ``count`` doubles at ``offset``, a read-only view."""
        return np.frombuffer(data, self.doubles, count, offset) if count else _EMPTY


class JointStateReader:
    """Read `sensor_msgs/JointState` bytes into a `JointStateView` (module doc)."""

    def __init__(self):
        """Start with no layout."""
        self._layout = None

    def read(self, data):
        """Return the message in ``data`` (a view, or a message object), or None."""
        layout = self._layout
        if layout is None or not layout.matches(data):
            try:
                layout = self._learn(data)
            except (ValueError, struct.error):
                return _deserialized(data, 'sensor_msgs.msg', 'JointState')
        sec, nanosec = layout.stamp.unpack_from(data, 4)
        position, velocity, effort = layout.arrays
        return JointStateView(Header(Stamp(sec, nanosec), layout.frame_id), layout.names,
                              layout.array(data, *position), layout.array(data, *velocity),
                              layout.array(data, *effort))

    def _learn(self, data):
        walk = _Walk(data)
        walk.u32(fixed=False)                  # header.stamp.sec, nanosec
        walk.u32(fixed=False)
        frame_id = walk.string()
        names = [walk.string() for _ in range(walk.u32())]
        arrays = [walk.doubles() for _ in range(3)]    # position, velocity, effort
        layout = _Layout(walk)
        layout.frame_id, layout.names, layout.arrays = frame_id, names, arrays
        self._layout = layout
        return layout


class Float64ArrayReader:
    """Read `std_msgs/Float64MultiArray` bytes; `read` returns the ``data`` numbers.

    ``labels``: the ``layout.dim`` labels of the message read last (a tuple).
    """

    def __init__(self):
        """Start with no layout."""
        self._layout = None
        self.labels = ()

    def read(self, data):
        """Return the ``data`` field of the message in ``data`` (an array), or None."""
        layout = self._layout
        if layout is None or not layout.matches(data):
            try:
                walk = _Walk(data)
                labels = []
                for _ in range(walk.u32()):        # layout.dim: label, size, stride
                    labels.append(walk.string())
                    walk.u32()
                    walk.u32()
                walk.u32()                         # layout.data_offset
                at = walk.doubles()
                layout = self._layout = _Layout(walk)
                layout.at, layout.labels = at, tuple(labels)
            except (ValueError, struct.error):
                msg = _deserialized(data, 'std_msgs.msg', 'Float64MultiArray')
                self.labels = () if msg is None else tuple(d.label for d in msg.layout.dim)
                return None if msg is None else np.asarray(msg.data)
        self.labels = layout.labels
        return layout.array(data, *layout.at)


def _deserialized(data, module, name):
    """Return the message of type ``module.name`` in ``data`` (another representation), or None."""
    import importlib
    try:
        return deserialize_message(bytes(data), getattr(importlib.import_module(module), name))
    except Exception:           # noqa: B902 - whatever the middleware says: not a message
        return None
