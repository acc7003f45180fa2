"""Memory that a large message costs goes back to the system once it is handled.

A flood of commands carrying 10^6-entry arrays raised a node's memory by 50-90 MB for good
(measured with the plant: +16 MB after 2 such messages, +54 MB after 10, +85 MB after 40).
Two things kept it:

* rmw_fastrtps gives every reader and writer the preallocated-with-realloc history policy,
  whose sample buffers grow to the largest message seen and never shrink (up to the queue
  depth times that message);
* glibc's dynamic mmap threshold: once a large block is freed, blocks of that size are
  served from the heap, where freed memory stays with the process.

`bound_message_memory` (run by `common.run` before ``rclpy.init``) turns both off: the
Fast DDS profile ``dds_memory.xml`` (dynamic history: a sample is allocated per message and
freed once taken), applied through ``RMW_FASTRTPS_USE_QOS_FROM_XML`` unless the user set a
profile of their own, and ``mallopt(M_MMAP_THRESHOLD, 128 KiB)``, which also fixes the
threshold. With both, 40 such messages leave the plant within 0.2 % of its memory.
"""

import ctypes
import os

PROFILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'dds_memory.xml')
PROFILE_VARIABLES = ('FASTDDS_DEFAULT_PROFILES_FILE', 'FASTRTPS_DEFAULT_PROFILES_FILE')
PROFILE_VARIABLE = PROFILE_VARIABLES[0]     # the one set (the other is deprecated)
M_MMAP_THRESHOLD = -3           # glibc's mallopt parameter number
MMAP_THRESHOLD = 128 * 1024     # bytes: glibc's default, kept fixed


def bound_message_memory(environ=os.environ):
    """Apply the profile and the fixed mmap threshold (module doc); return what was done.

    Leaves a user's own Fast DDS profile, another RMW, or a libc without ``mallopt`` alone.
    """
    done = []
    rmw = environ.get('RMW_IMPLEMENTATION', 'rmw_fastrtps_cpp')
    if rmw.startswith('rmw_fastrtps') and not any(environ.get(v) for v in PROFILE_VARIABLES) \
            and 'RMW_FASTRTPS_USE_QOS_FROM_XML' not in environ:
        environ[PROFILE_VARIABLE] = PROFILE
        environ['RMW_FASTRTPS_USE_QOS_FROM_XML'] = '1'
        done.append('dynamic DDS history')
    try:
        if ctypes.CDLL(None).mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1:
            done.append('fixed mmap threshold')
    except (AttributeError, OSError):
        pass                    # not glibc: its allocator is left as it is
    return done
