"""Generated blocks of the documents in doc/: a table cell, and the write-or-check command.

A generated block sits between two HTML comment markers of its document; its generator
(`nodes.parameter_docs` for the node parameters, `control.rows.docs` for the program row
types) renders it from what the code declares and runs `write_or_check`: ``--write``
rewrites the document in place, ``--check`` exits 1 when the document differs (the tests
run it, so a document cannot drift from the code). No ROS here.
"""

import argparse
import sys


def cell(text):
    """Return ``text`` on one line with its ``|`` escaped: one cell of a markdown table."""
    return ' '.join(str(text).split()).replace('|', '\\|')


def write_or_check(argv, description, update, stale):
    """Run the command line of a generator; return its exit status.

    ``update(text)``: the document's text with its blocks generated again; ``stale``: what
    ``--check`` prints after the document's name when they differ.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument('document')
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument('--write', action='store_true', help='rewrite the blocks in place')
    mode.add_argument('--check', action='store_true', help='exit 1 if the blocks differ')
    options = parser.parse_args(argv)
    with open(options.document, encoding='utf-8') as stream:
        text = stream.read()
    updated = update(text)
    if options.check:
        if updated != text:
            print(f'{options.document}: {stale}; run with --write', file=sys.stderr)
            return 1
        return 0
    with open(options.document, 'w', encoding='utf-8') as stream:
        stream.write(updated)
    return 0
