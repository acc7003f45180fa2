"""Named entries of a message picked by name into a fixed order, the mapping cached.

A `sensor_msgs/JointState` names its entries, in any order; a driver may name more joints
than the model has (a gripper's fingers beside the arm's joints). `NameMap` holds the
names a node wants (the model's joints or modes, or its command entries) and, for each
distinct list of names a message carries, the `Match`: where each wanted name is among
the message's entries, and which entries it ignores. A match is computed once per distinct
list and kept (the last few lists), so a stream of messages with the same names costs one
list comparison and one `numpy.take` per field, and allocates nothing.

A list that names an entry twice is refused (which of the two would be meant?); so is one
without a wanted name; one with names that are not wanted is refused or, with
``extras=True``, its other entries are ignored. No ROS here: the nodes and their tests use
it alike, and so does the ``joints`` parameter's check (`common.joint_order`).
"""

import collections

import numpy as np

# Distinct name lists kept: a driver publishes one list; a few cover a reconfigured one.
# Bounded so that a stream of ever-new lists (a hostile publisher) holds no memory.
CACHE_SIZE = 8
# Longest name list kept in the cache: a message's names are the sender's, and a hostile
# one's million names would stay in memory with it.
CACHED_NAMES = 256


def listed(names, most=8):
    """``names`` as text, the first ``most`` of them and how many in all beyond that.

    A message's names are the sender's: a hostile one may carry a million.
    """
    shown = ', '.join(str(name) for name in names[:most])
    return shown if len(names) <= most else f'{shown}, ... ({len(names)} in all)'


class Problem(collections.namedtuple('Problem', 'kind name')):
    """Why a name list is refused: ``kind`` 'twice', 'unknown' or 'missing', and the name."""

    def text(self, what, wanted):
        """Return the reason in words; ``what``: the entries' noun ('joint'); ``wanted``: names."""
        if self.kind == 'twice':
            return f'{what} {self.name!r} named twice'
        if self.kind == 'unknown':
            return f'unknown {what} {self.name!r} (the model has {listed(wanted)})'
        return f'no {what} {self.name!r}'


class Match:
    """Where the wanted names are in one list of message names (`NameMap.match`).

    ``take[k]``: the message entry of wanted name k; ``count``: entries the message names;
    ``ignored``: the names of the entries not wanted (``extras``), in message order.
    ``reported``: free for the caller (a node logs the ignored names once per list).
    """

    def __init__(self, take, count, ignored):
        """Match ``count`` message entries: ``take`` indices, ``ignored`` names."""
        self.take = np.asarray(take, dtype=np.intp)
        self.count = count
        self.ignored = tuple(ignored)
        self.reported = False

    def pick(self, values, out):
        """Write the wanted entries of ``values`` (one per message name) into ``out``.

        Returns False, writing nothing, when ``values`` has another length than the names.
        ``out``: a float array of one entry per wanted name.
        """
        if len(values) != self.count:
            return False
        # mode='clip': the indices are in range by construction, and the default 'raise'
        # buffers ``out`` (an allocation per call).
        np.take(values, self.take, out=out, mode='clip')
        return True


class NameMap:
    """The wanted ``names`` in order, and the matches of the message name lists seen.

    ``extras``: entries named outside ``names`` are ignored (True) or refuse the list.
    """

    def __init__(self, names, extras=False):
        """Map message names onto ``names`` (each once); ``extras`` as in the class doc."""
        self.names = tuple(names)
        if len(set(self.names)) != len(self.names):
            raise ValueError(f'names: {list(self.names)} names an entry twice')
        self.slot = {name: k for k, name in enumerate(self.names)}
        self.extras = extras
        self._cache = collections.OrderedDict()     # tuple of names -> Match or Problem
        self._last_names = None                     # a copy of the last list looked up
        self._last = None                           # its Match or Problem

    def match(self, names):
        """Return the `Match` of the message name list ``names``, or the `Problem`.

        The last list is compared first (no allocation when it comes again), then the
        cache of distinct lists.
        """
        if names == self._last_names:
            return self._last
        key = tuple(names)
        result = self._cache.get(key)
        if result is None:
            result = self._compute(key)
            if len(key) <= CACHED_NAMES:
                self._cache[key] = result
                if len(self._cache) > CACHE_SIZE:
                    self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(key)
        self._last_names, self._last = list(key), result
        return result

    def _compute(self, names):
        """Return the `Match` or `Problem` of ``names`` (a tuple); rules: the module doc."""
        seen = set()
        for name in names:
            if name in seen:
                return Problem('twice', name)
            seen.add(name)
        if not self.extras:
            for name in names:
                if name not in self.slot:
                    return Problem('unknown', name)
        where = {name: k for k, name in enumerate(names)}
        for name in self.names:
            if name not in where:
                return Problem('missing', name)
        return Match([where[name] for name in self.names], len(names),
                     [name for name in names if name not in self.slot])
