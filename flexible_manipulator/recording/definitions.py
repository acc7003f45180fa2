"""Message definitions for MCAP schemas, read from the installed interface packages.

An MCAP channel of ROS 2 messages (encoding ``cdr``) carries a schema of encoding
``ros2msg``: the type's ``.msg`` text followed by that of every type it uses, each after a
separator line and ``MSG: <package>/<Type>``, the form rosbag2 writes and Foxglove,
PlotJuggler and `mcap_ros2` read. The texts are the ``share/<package>/msg/<Type>.msg``
files of the ament prefixes (a ROS 2 install, or the pip environment's), never written by
hand here.
"""

import os
import re

from ament_index_python.packages import get_package_share_directory

SEPARATOR = '=' * 80
CONSTANT = re.compile(r'^\S+\s+\w+\s*=')       # 'byte OK=0'
PRIMITIVES = {'bool', 'byte', 'char', 'float32', 'float64', 'int8', 'uint8', 'int16',
              'uint16', 'int32', 'uint32', 'int64', 'uint64', 'string', 'wstring'}


def message_text(package, name):
    """Return the ``.msg`` text of ``package/name`` from its package's share directory."""
    path = os.path.join(get_package_share_directory(package), 'msg', f'{name}.msg')
    with open(path) as stream:
        return stream.read()


def field_types(text, package):
    """Return the non-primitive field types of a ``.msg`` text as 'package/Type' names."""
    types = []
    for line in text.splitlines():
        line = line.split('#', 1)[0].strip()
        if not line:
            continue
        if CONSTANT.match(line):
            continue
        kind = line.split()[0]
        kind = re.sub(r'\[.*\]$', '', kind)                # arrays, bounded or not
        kind = re.sub(r'<=\d+$', '', kind)                 # bounded strings
        if kind in PRIMITIVES:
            continue
        if kind == 'Header':
            kind = 'std_msgs/Header'
        types.append(kind if '/' in kind else f'{package}/{kind}')
    return types


def schema(type_name):
    """Return the ``ros2msg`` schema text of ``type_name`` ('pkg/msg/Type' or 'pkg/Type')."""
    package, name = type_name.split('/')[0], type_name.split('/')[-1]
    text = message_text(package, name)
    parts, seen = [text.rstrip('\n')], {f'{package}/{name}'}
    pending = field_types(text, package)
    while pending:
        dependency = pending.pop(0)
        if dependency in seen:
            continue
        seen.add(dependency)
        dep_package, dep_name = dependency.split('/')
        dep_text = message_text(dep_package, dep_name)
        parts.append(f'{SEPARATOR}\nMSG: {dependency}\n{dep_text.rstrip(chr(10))}')
        pending += field_types(dep_text, dep_package)
    return '\n'.join(parts) + '\n'
