"""Time series of a recorded run, read from its MCAP file (ROS-free: `mcap_ros2` decodes).

`read` returns a `Run`: per topic, the values of every message against its header stamp
(the simulated time [s]), as arrays, plus what the plots need besides: the effort limits
from the recorded robot description, and the world positions of every TF frame over time.
A recording is an MCAP file, or the directory ``ros2 bag record -s mcap`` writes (its
``metadata.yaml`` and one or more ``.mcap`` files, read in the order the metadata lists
them, `bag_files`).
"""

from dataclasses import dataclass, field
import os
import re
import xml.etree.ElementTree as ElementTree

from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
import numpy as np
from transforms3d.quaternions import quat2mat
import yaml


@dataclass
class Named:
    """Values of named entries over time: ``values[k, i]`` is entry ``names[i]`` at ``t[k]``.

    Messages whose names differ from the first one's (a program switch) start a new
    `Named` in the run's list for that topic.
    """

    names: tuple
    t: list = field(default_factory=list)
    rows: dict = field(default_factory=dict)     # field ('position', ...) -> list of rows

    def add(self, t, **fields):
        """Append one message's fields (sequences in ``names`` order)."""
        self.t.append(t)
        for key, row in fields.items():
            self.rows.setdefault(key, []).append(list(row))

    def array(self, key):
        """Return the values of field ``key``: messages x names, NaN where a row is empty."""
        width = len(self.names)
        return np.array([row if len(row) == width else [np.nan] * width
                         for row in self.rows.get(key, [])], dtype=float).reshape(-1, width)

    @property
    def times(self):
        """Header stamps [s]."""
        return np.array(self.t, dtype=float)


@dataclass
class Run:
    """What `read` takes from a recording."""

    named: dict = field(default_factory=dict)    # topic -> [Named, ...]
    limits: dict = field(default_factory=dict)   # joint -> effort limit [N m or N]
    frames: dict = field(default_factory=dict)   # TF child frame -> (parent, t, T: n x 4 x 4)
    static: dict = field(default_factory=dict)   # TF child frame -> (parent, T)
    odometry: dict = field(default_factory=dict)  # 't', 'position' (n x 3), 'twist' (n x 6)

    def first(self, topic):
        """Return the first `Named` series of ``topic``, or None."""
        series = self.named.get(topic)
        return series[0] if series else None

    def frame_positions(self, frame, root, times=None):
        """World (``root``) positions [m] of ``frame``; returns (t, positions n x 3).

        At ``times`` [s], or at the stamps of the frame's nearest moving ancestor: the
        chain from ``root`` composed at each, every transform taken at its last stamp at or
        before that time (static transforms as they are).
        """
        chain, name = [], frame
        while name != root:
            entry = self.frames.get(name) or self.static.get(name)
            if entry is None:
                raise KeyError(f'frame {frame!r} is not connected to {root!r}')
            chain.append(name)
            name = entry[0]
        if times is None:
            moving = [c for c in chain if c in self.frames]
            times = self.frames[moving[0]][1] if moving else np.zeros(1)
        transform = np.broadcast_to(np.eye(4), (len(times), 4, 4))
        for name in chain:                      # frame first: root_T = parent_T_child @ ...
            if name in self.frames:
                _, stamps, matrices = self.frames[name]
                step = matrices[index_at(stamps, times)]
            else:
                step = self.static[name][1]
            transform = step @ transform
        return np.asarray(times, dtype=float), transform[:, :3, 3]


def index_at(stamps, times):
    """Return the index of the last of the sorted ``stamps`` at or before each time."""
    return np.maximum(np.searchsorted(stamps, times, side='right') - 1, 0)


def stamp_seconds(header):
    """Header stamp [s]."""
    return header.stamp.sec + 1e-9 * header.stamp.nanosec


def homogeneous(transform):
    """4x4 matrix of a geometry_msgs/Transform."""
    q, p = transform.rotation, transform.translation
    matrix = np.eye(4)
    matrix[:3, :3] = quat2mat((q.w, q.x, q.y, q.z))
    matrix[:3, 3] = p.x, p.y, p.z
    return matrix


def effort_limits(urdf):
    """Return {joint: effort limit} from a URDF text."""
    root = ElementTree.fromstring(urdf)
    return {joint.get('name'): float(joint.find('limit').get('effort'))
            for joint in root.iter('joint') if joint.find('limit') is not None}


class BagError(ValueError):
    """A recording directory that is not a readable rosbag2 MCAP bag (the line says why)."""


def bag_files(directory):
    """Return the MCAP files of a rosbag2 bag directory in recording order (`BagError`).

    Listed by its ``metadata.yaml`` (``rosbag2_bagfile_information``:
    ``storage_identifier`` mcap, ``relative_file_paths``); without one, its ``.mcap``
    files in the order of their split index (``<name>_<index>.mcap``, as rosbag2 names
    them). A file compressed as a whole (``compression_mode: file``) is refused.
    """
    metadata = os.path.join(directory, 'metadata.yaml')
    if not os.path.exists(metadata):
        names = [name for name in os.listdir(directory) if name.endswith('.mcap')]
        if not names:
            raise BagError(f'{directory}: a directory with neither a metadata.yaml nor .mcap '
                           'files (a recording is an MCAP file or a rosbag2 MCAP bag)')

        def index(name):
            found = re.search(r'_(\d+)\.mcap$', name)
            return (int(found.group(1)) if found else -1, name)
        return [os.path.join(directory, name) for name in sorted(names, key=index)]
    try:
        with open(metadata, encoding='utf-8') as stream:
            information = yaml.safe_load(stream)['rosbag2_bagfile_information']
        storage = information.get('storage_identifier', 'mcap')
        compression = information.get('compression_mode') or ''
        paths = list(information['relative_file_paths'])
    except (OSError, yaml.YAMLError, TypeError, KeyError, AttributeError) as error:
        raise BagError(f'{metadata}: not a rosbag2 metadata file ({type(error).__name__}: '
                       f'{error})') from None
    if storage != 'mcap':
        raise BagError(f'{metadata}: storage_identifier {storage!r}: only MCAP bags are read '
                       '(record with ros2 bag record -s mcap, or convert with ros2 bag convert)')
    if str(compression).lower() == 'file':
        raise BagError(f'{metadata}: its files are compressed whole (compression_mode file): '
                       'decompress them first (ros2 bag convert)')
    files = [os.path.join(directory, str(name)) for name in paths]
    missing = [name for name in files if not os.path.isfile(name)]
    if not files or missing:
        raise BagError(f'{metadata}: ' + (f'lists {missing[0]}, which does not exist' if files
                                          else 'lists no files (relative_file_paths)'))
    return files


def read(path):
    """Read a recording, an MCAP file or a bag directory, into a `Run` (module doc)."""
    run = Run()
    odometry = {'t': [], 'position': [], 'twist': []}
    for name in bag_files(path) if os.path.isdir(path) else [path]:
        _read_file(name, run, odometry)
    for name, (parent, stamped) in run.frames.items():
        stamped.sort(key=lambda pair: pair[0])
        run.frames[name] = (parent, np.array([t for t, _ in stamped]),
                            np.array([matrix for _, matrix in stamped]))
    if odometry['t']:
        run.odometry = {key: np.array(value) for key, value in odometry.items()}
    return run


def _read_file(path, run, odometry):
    """Add the messages of one MCAP file to ``run`` and ``odometry`` (`read`)."""
    with open(path, 'rb') as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        for schema, channel, _, message in reader.iter_decoded_messages():
            kind = schema.name.split('/')[-1]
            if kind == 'JointState':
                _add_named(run, channel.topic, message)
            elif kind == 'TFMessage':
                for tf in message.transforms:
                    matrix = homogeneous(tf.transform)
                    if channel.topic.endswith('tf_static'):
                        run.static[tf.child_frame_id] = (tf.header.frame_id, matrix)
                    else:
                        entry = run.frames.setdefault(tf.child_frame_id,
                                                      (tf.header.frame_id, []))
                        entry[1].append((stamp_seconds(tf.header), matrix))
            elif kind == 'String' and channel.topic.endswith('robot_description'):
                run.limits = effort_limits(message.data)
            elif kind == 'Odometry':
                pose, twist = message.pose.pose.position, message.twist.twist
                odometry['t'].append(stamp_seconds(message.header))
                odometry['position'].append((pose.x, pose.y, pose.z))
                odometry['twist'].append((twist.linear.x, twist.linear.y, twist.linear.z,
                                          twist.angular.x, twist.angular.y, twist.angular.z))


def _add_named(run, topic, message):
    """Append a JointState (or a named vector) to its topic's current `Named` series."""
    names = tuple(message.name)
    series = run.named.setdefault(topic, [])
    if not series or series[-1].names != names:
        series.append(Named(names))
    series[-1].add(stamp_seconds(message.header), position=message.position,
                   velocity=message.velocity, effort=message.effort)
