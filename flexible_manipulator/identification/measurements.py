"""What a recording gives the fit: stamps, applied efforts and measured signals, as arrays.

Read with `recording.series` (the recorder's MCAP file, or a ``ros2 bag record -s mcap``
directory). The stamps need not be evenly spaced (a real driver's jitter and lost states):
the fit holds each effort over its own interval. From the joint states (default
``/joint_states``): each joint's position and, when recorded, velocity, and the **applied
effort** of the effort field, which is the effort applied over the period that ends at
that state (the plant's convention, doc/nodes.md; a ros2_control joint state broadcaster
reports the driver's applied command the same way). The effort commands
(``/effort_controller/commands``) are not used: they carry no stamp, and the plant clips
and holds them. From the modal states (default ``/modal_states``), when recorded: the
elastic coordinates and rates, taken at the joint states' stamps. Where two or more
states in a row are missing (a recorder that fell behind), a new window starts
(`windows`). Copies of a state (a
lock-step plant re-publishes an unanswered state with its stamp) count once.

Joint states may name joints the model does not have (a gripper's fingers beside the
arm's joints): those are ignored, as the controller ignores them. A recording that lacks
what the fit needs, or whose names are not the model's, is refused with one line naming
the problem (`IdentificationError`).
"""

from dataclasses import dataclass
import os

import numpy as np

from ..mechanics.links import kind_of
from ..recording import series


class IdentificationError(ValueError):
    """Bad input to the identification: a file, a topic, a name, a parameter path."""


@dataclass
class Signal:
    """One measured signal: an entry's position or velocity, and where it is in the state."""

    name: str        # 'shoulder position'
    topic: str
    state: int       # index into the state (q, v)
    unit: str


@dataclass
class Measurements:
    """The recording as the fit reads it (module doc)."""

    path: str
    times: np.ndarray       # K stamps [s], increasing
    efforts: np.ndarray     # K x nu: row k applied over [t_{k-1}, t_k] (row 0: before t_0)
    values: np.ndarray      # K x S measured signals, NaN where a sample is missing
    signals: list           # S `Signal`
    topics: list            # the topics the signals come from

    @property
    def period(self):
        """Median interval between states [s], to the stamps' nanosecond."""
        return round(float(np.median(np.diff(self.times))), 9)

    def measured(self, state):
        """Return the column of the signal measuring state entry ``state``, or None."""
        for i, signal in enumerate(self.signals):
            if signal.state == state:
                return i
        return None


def joint_units(model):
    """Position unit of each joint of a chain model, by joint name ('rad' or 'm')."""
    return {link.joint.name: 'm' if link.joint.type == 'prismatic' else 'rad'
            for link in model.links if link.joint.type != 'fixed'}


def mode_unit(model, name):
    """Return the unit of an elastic coordinate: its link kind's (``LinkKind.unit``).

    A beam's modal amplitude 'm', a rod's curvature '1/m' or strain '-'.
    """
    for j, link in enumerate(model.links):
        own = name[len(link.name) + 1:]
        if name.startswith(link.name + '_') and own in model.modes_of(j)[1]:
            return kind_of(link).unit(link, own)
    return '-'


def rate(unit):
    """Return the unit of the rate of a quantity in ``unit``."""
    return {'-': '1/s', '1/m': '1/(m s)'}.get(unit, f'{unit}/s')


def _series(run, topic, path):
    """Return the one `series.Named` of ``topic``, or None if not recorded."""
    named = run.named.get(topic)
    if not named:
        return None
    if len(named) > 1:
        raise IdentificationError(f'{path}: {topic}: the names change during the recording '
                                  f'({list(named[0].names)}, then {list(named[1].names)})')
    return named[0]


def _check_names(named, expected, topic, what, path, others=False):
    """Refuse names that are not ``expected`` (each once); ``others``: extra names allowed."""
    names = [n for n in named.names if n in expected] if others else list(named.names)
    if set(names) != set(expected) or len(names) != len(expected):
        missing = [n for n in expected if n not in named.names]
        extra = [n for n in named.names if n not in expected]
        detail = '; '.join(part for part in (
            f'missing {missing}' if missing else '', f'not in the model {extra}' if extra
            else '') if part)
        raise IdentificationError(f'{path}: {topic} names {list(named.names)}, the model\'s '
                                  f'{what} are {list(expected)} ({detail})')


def _rows(named, key, count, topic, path, required=False, columns=None):
    """Field ``key`` of every message as a K x count array, or None if never recorded.

    ``columns``: the entries to keep (of ``count``, each message's length); the others are
    not checked.
    """
    rows = named.rows.get(key, [])
    filled = [len(row) == count for row in rows]
    if not any(filled):
        if required:
            raise IdentificationError(f'{path}: {topic} has no {key} field recorded')
        return None
    if not all(filled):
        raise IdentificationError(f'{path}: {topic}: {filled.count(False)} of {len(rows)} '
                                  f'states have no {key}')
    values = np.array(rows, dtype=float)
    if columns is not None:
        values = values[:, columns]
    if not np.all(np.isfinite(values)):
        k = int(np.argwhere(~np.isfinite(values))[0, 0])
        raise IdentificationError(f'{path}: {topic}: a {key} that is not finite at t = '
                                  f'{named.t[k]:.6f} s')
    return values


def read(path, model, spec=None, joint_topic='/joint_states', modal_topic='/modal_states'):
    """Read the recording at ``path`` for the chain ``model`` (its names, units); module doc.

    ``spec``: the parsed model file, not needed (the model holds what is read).

    ``modal_topic``: None to leave the modal states out even when recorded.
    """
    if not os.path.isfile(path) and not os.path.isdir(path):
        raise IdentificationError(f'no recording {path!r}')
    try:
        run = series.read(path)
    except series.BagError as error:
        raise IdentificationError(str(error)) from None
    except Exception as error:          # noqa: B902 - any reader failure is the file's
        raise IdentificationError(f'{path}: not a readable MCAP recording ({type(error).__name__}'
                                  f': {error})') from None
    joints = _series(run, joint_topic, path)
    if joints is None:
        recorded = ', '.join(sorted(run.named)) or 'none'
        raise IdentificationError(f'{path}: no {joint_topic} in the recording (its joint-state '
                                  f'topics: {recorded}); the fit needs the joint states with '
                                  'their applied efforts')
    names, n = list(model.joint_names), model.n_joints
    # A driver's joint states may name joints the model does not have (a gripper's
    # fingers): ignored, as the controller ignores them.
    _check_names(joints, names, joint_topic, 'joints', path, others=True)
    joint_order = [list(joints.names).index(name) for name in names]
    width = len(joints.names)
    stamps = joints.times
    keep = np.concatenate([[True], np.diff(stamps) != 0.0])     # re-published copies
    back = np.flatnonzero(np.diff(stamps) < 0.0)
    if back.size:
        raise IdentificationError(f'{path}: {joint_topic}: the stamps go back in time after '
                                  f't = {stamps[back[0]]:.6f} s (more than one run in the '
                                  'file, e.g. a plant reset); cut the recording')
    efforts = _rows(joints, 'effort', width, joint_topic, path, columns=joint_order)
    if efforts is None:
        raise IdentificationError(f'{path}: {joint_topic} has no applied efforts (its effort '
                                  'field is empty): the fit replays them through the model')
    position = _rows(joints, 'position', width, joint_topic, path, required=True,
                     columns=joint_order)
    velocity = _rows(joints, 'velocity', width, joint_topic, path, columns=joint_order)
    times = stamps[keep]
    if times.size < 10:
        raise IdentificationError(f'{path}: {joint_topic}: {times.size} states, too few to fit '
                                  '(at least 10)')
    units = joint_units(model)
    signals, columns = [], []
    for i, name in enumerate(names):
        signals.append(Signal(f'{name} position', joint_topic, i, units[name]))
        columns.append(position[keep][:, i])
    if velocity is not None:
        for i, name in enumerate(names):
            signals.append(Signal(f'{name} velocity', joint_topic, model.nq + i,
                                  rate(units[name])))
            columns.append(velocity[keep][:, i])
    topics = [joint_topic]
    modal = _series(run, modal_topic, path) if modal_topic and model.n_modes else None
    if modal is not None:
        modes = list(model.mode_names)
        _check_names(modal, modes, modal_topic, 'elastic coordinates', path)
        index = {int(round(t * 1e9)): k for k, t in enumerate(modal.times)}
        rows = [index.get(int(round(t * 1e9))) for t in times]
        if all(row is None for row in rows):
            raise IdentificationError(f'{path}: {modal_topic}: no state has a stamp of '
                                      f'{joint_topic}')
        mode_order = [modal.names.index(name) for name in modes]
        for key, offset, unit_of in (('position', 0, lambda u: u), ('velocity', model.nq, rate)):
            values = _rows(modal, key, len(modes), modal_topic, path, required=key == 'position')
            if values is None:
                continue
            for j, name in enumerate(modes):
                column = np.array([values[row, mode_order[j]] if row is not None else np.nan
                                   for row in rows])
                signals.append(Signal(f'{name} {key}', modal_topic, offset + n + j,
                                      unit_of(mode_unit(model, name))))
                columns.append(column)
        topics.append(modal_topic)
    return Measurements(path, times, efforts[keep], np.column_stack(columns),
                        signals, topics)


# A gap of more than this many periods between states (two or more states lost in a row,
# a recorder that fell behind) starts a new window: the efforts over the gap are unknown,
# and the window's estimated initial state takes up where the recording does.
GAP = 2.5


def windows(times, length):
    """Split the samples into windows of about ``length`` [s]: [(first, stop), ...].

    Each window is the samples first..stop-1; a remainder shorter than half a window joins
    the last one. A gap of more than `GAP` periods between two states ends a window (the
    states after it start the next; a single lost state is held over, module doc).
    """
    period = float(np.median(np.diff(times)))
    size = max(int(round(length / period)), 2)
    cuts = [0, *(np.flatnonzero(np.diff(times) > GAP * period) + 1).tolist(), times.size]
    found = []
    for begin, end in zip(cuts, cuts[1:]):
        starts = list(range(begin, end, size))
        if len(starts) > 1 and end - starts[-1] < size / 2:
            starts.pop()
        found += [(first, stop) for first, stop in zip(starts, starts[1:] + [end])]
    return found
