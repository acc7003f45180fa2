"""The one MCAP writer of the package: ROS 2 messages as rosbag2 writes them.

`McapWriter` writes messages already serialized (CDR): one schema per message type (its
``ros2msg`` text from the installed interface packages, `definitions`), one channel per
topic, each message with its log and publish times [ns] and its sequence number on the
channel. The recorder node (`recorder`) hands it what its raw subscriptions receive;
`write_messages` serializes rclpy messages made without a node (a headless simulation's
states, `synthetic`) and writes them through the same writer, so both files read alike
(`series`, ``ros2 bag info``, Foxglove). `write_bag` writes the messages as the directory
``ros2 bag record -s mcap`` makes: the MCAP files of a split recording and rosbag2's
``metadata.yaml``.
"""

import os

import yaml

from . import definitions


def type_name(message_type):
    """Return 'package/msg/Type' of a message class."""
    return f'{message_type.__module__.split(".")[0]}/msg/{message_type.__name__}'


class McapWriter:
    """An MCAP file being written: `channel` registers a topic, `write` adds a message."""

    def __init__(self, path, library='flexible_manipulator recorder'):
        """Create (replace) the file at ``path`` and start its ``ros2`` profile."""
        try:
            from mcap.writer import CompressionType, Writer
        except ImportError:
            raise ImportError('recording needs the Python packages mcap and mcap-ros2-support '
                              '(pip install mcap mcap-ros2-support)') from None
        self.path = path
        self.stream = open(path, 'wb')
        self.writer = Writer(self.stream, compression=CompressionType.NONE)
        self.writer.start(profile='ros2', library=library)
        self.schemas = {}            # type name -> schema id
        self.channels = {}           # topic -> channel id
        self.counts = {}             # topic -> messages written

    def channel(self, topic, name):
        """Register ``topic`` (a resolved name) of type ``name`` ('pkg/msg/Type') once."""
        if topic not in self.channels:
            if name not in self.schemas:
                self.schemas[name] = self.writer.register_schema(
                    name=name, encoding='ros2msg', data=definitions.schema(name).encode())
            self.channels[topic] = self.writer.register_channel(
                topic=topic, message_encoding='cdr', schema_id=self.schemas[name])
            self.counts[topic] = 0
        return self.channels[topic]

    def write(self, topic, data, log_time):
        """Add one serialized message of a registered ``topic``, logged at ``log_time`` [ns]."""
        count = self.counts[topic]
        self.writer.add_message(self.channels[topic], log_time=log_time, data=data,
                                publish_time=log_time, sequence=count)
        self.counts[topic] = count + 1

    def close(self):
        """Finish the file (its summary and index) and close it; return the message count."""
        if not self.stream.closed:
            self.writer.finish()
            self.stream.close()
        return sum(self.counts.values())


def write_messages(path, messages):
    """Write rclpy ``messages``, (topic, message, log time [ns]) in order, to ``path``.

    Each is serialized by rclpy (as a publisher would send it) and written by `McapWriter`:
    the file is what the recorder writes for the same messages. Returns the message count.
    """
    from rclpy.serialization import serialize_message
    writer = McapWriter(path)
    try:
        for topic, message, log_time in messages:
            writer.channel(topic, type_name(type(message)))
            writer.write(topic, serialize_message(message), log_time)
    finally:
        count = writer.close()
    return count


def write_bag(directory, messages, files=1, distro='jazzy'):
    """Write rclpy ``messages`` (as `write_messages`) as a rosbag2 MCAP bag ``directory``.

    The messages are split over ``files`` MCAP files of about equal counts, named
    ``<directory name>_<i>.mcap`` as rosbag2 names a split recording, with rosbag2's
    ``metadata.yaml`` (``rosbag2_bagfile_information`` version 8: storage ``mcap``, the
    files in order with their start [ns since the epoch], duration [ns] and message count,
    each topic's type and count). Returns the paths of the MCAP files.
    """
    os.makedirs(directory, exist_ok=True)
    messages = list(messages)
    name = os.path.basename(os.path.normpath(directory))
    size = -(-len(messages) // files)
    written, entries, topics = [], [], {}
    for i in range(files):
        part = messages[i * size:(i + 1) * size]
        path = os.path.join(directory, f'{name}_{i}.mcap')
        write_messages(path, part)
        written.append(path)
        times = [log_time for _, _, log_time in part] or [0]
        entries.append({'path': os.path.basename(path),
                        'starting_time': {'nanoseconds_since_epoch': min(times)},
                        'duration': {'nanoseconds': max(times) - min(times)},
                        'message_count': len(part)})
        for topic, message, _ in part:
            entry = topics.setdefault(topic, [type_name(type(message)), 0])
            entry[1] += 1
    times = [log_time for _, _, log_time in messages] or [0]
    information = {
        'version': 8, 'storage_identifier': 'mcap',
        'duration': {'nanoseconds': max(times) - min(times)},
        'starting_time': {'nanoseconds_since_epoch': min(times)},
        'message_count': len(messages),
        'topics_with_message_count': [
            {'topic_metadata': {'name': topic, 'type': kind, 'serialization_format': 'cdr',
                                'offered_qos_profiles': '', 'type_description_hash': ''},
             'message_count': count} for topic, (kind, count) in topics.items()],
        'compression_format': '', 'compression_mode': '',
        'relative_file_paths': [entry['path'] for entry in entries],
        'files': entries, 'custom_data': {}, 'ros_distro': distro}
    with open(os.path.join(directory, 'metadata.yaml'), 'w', encoding='utf-8') as stream:
        yaml.safe_dump({'rosbag2_bagfile_information': information}, stream,
                       sort_keys=False)
    return written
