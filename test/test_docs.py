"""The documentation stays short at the top and its links lead somewhere.

Expected: README.md is at most 8000 bytes (the two commands, what the package does, the
node graph and links into doc/); every relative link in README.md, doc/*.md and
bench/README.md names a file or directory of the repository, and a link to a heading
(``file.md#anchor``) names a heading of that file (GitHub's anchor rule: lower case,
punctuation dropped, spaces to hyphens).
"""

import glob
import os
import re

import pytest

from conftest import REPO

DOCUMENTS = ['README.md', 'bench/README.md'] + sorted(
    os.path.relpath(p, REPO) for p in glob.glob(os.path.join(REPO, 'doc', '*.md')))
LINK = re.compile(r'\[[^\]]*\]\(([^)\s]+)\)')


def anchors(path):
    """GitHub anchors of the headings of a markdown file."""
    with open(path) as stream:
        headings = [line.lstrip('#').strip() for line in stream if line.startswith('#')]
    return {re.sub(r'[^\w\- ]', '', h.lower()).replace(' ', '-') for h in headings}


def test_readme_is_short():
    assert os.path.getsize(os.path.join(REPO, 'README.md')) <= 8000


@pytest.mark.parametrize('document', DOCUMENTS)
def test_relative_links_resolve(document):
    path = os.path.join(REPO, document)
    with open(path) as stream:
        targets = LINK.findall(stream.read())
    for target in targets:
        if re.match(r'[a-z]+:', target):
            continue                        # http(s), mailto: not checked here
        file_part, _, anchor = target.partition('#')
        resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) \
            if file_part else path
        assert os.path.exists(resolved), f'{document}: broken link {target}'
        if anchor:
            assert anchor in anchors(resolved), f'{document}: no heading for {target}'
