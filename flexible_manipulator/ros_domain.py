"""A private ROS domain id for a graph on this machine, claimed so that no other holds it.

Two graphs on one machine (two demos, a demo beside a test session, two test workers)
that share a ROS_DOMAIN_ID see each other's topics: a controller would read another
arm's joint states. A claim is an exclusive lock on a file per id under the system's
temporary directory; it lasts while the lock's file is open, and ends with its process.
Every local graph of the package (``bringup --local``, the tests) claims its id here.
"""

import fcntl
import itertools
import os
import random
import tempfile

DOMAIN_IDS = range(1, 102)          # the ids ROS 2 allows on every platform's port range
LOCKS = os.path.join(tempfile.gettempdir(), 'flexible_manipulator-ros-domains')


def claim_domain_id(start=None):
    """Return (id, lock): a domain id no other process of the package holds now.

    The ids are tried in turn from ``start`` (default: a random one); keep ``lock``
    open while the id is in use. Raises RuntimeError if every id is held.
    """
    os.makedirs(LOCKS, exist_ok=True)
    first = random.randrange(len(DOMAIN_IDS)) if start is None else start
    for offset in range(len(DOMAIN_IDS)):
        candidate = DOMAIN_IDS[(first + offset) % len(DOMAIN_IDS)]
        lock = open(os.path.join(LOCKS, f'{candidate}.lock'), 'w')
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return candidate, lock
        except OSError:
            lock.close()
    raise RuntimeError(f'every ROS domain id {DOMAIN_IDS.start}..{DOMAIN_IDS.stop - 1} is '
                       f'held by another graph of this package on this machine')


def claims_in_turn(start):
    """Return a function claiming ids in turn from ``start`` (the order of a test run)."""
    counter = itertools.count(start)

    def claim():
        return claim_domain_id(next(counter) % len(DOMAIN_IDS))
    return claim
