"""The package's texts describe what is, not how it came to be; a figure has one source.

Checked: README.md, doc/*.md and bench/README.md (all their text), and the docstrings and
comments of every module under flexible_manipulator/, bench/ and test/ (this file's own
list excepted). A change's history belongs in git, an issue's talk in its tracker; a
document that says "was 75 µs, now 66 µs (this session)" goes stale with the next change
and disagrees with the table that measured it. Measured figures live in bench/README.md's
tables, each under one line that starts with ``Run:`` and names the run's date, machine and
the host's speed; every other text links to that table.

Each pattern is precise enough not to hit legitimate text (case-insensitive):

- session talk: ``this session``, ``the same session``, ``an earlier session``, ``session's``
  (no node, topic or tool of the package is called a session);
- issue talk: ``the issue``, ``this issue``, a hyphenated issue name (``the soft-arm
  issue``), ``(issue ...``, ``issue #12``; the verb (``to issue a command``) is not hit;
- commit hashes: a token of 7 to 40 lower-case hex digits with at least one digit and one
  letter (hex colours follow ``#`` and are not hit; words such as ``decade`` have no
  digit), and ``at the commit``, ``this commit``, ``the commit before``/``that added``;
- before/after of a change: a ``before``/``after`` column, ``before and after`` (but
  ``before and after the fit``, identification's plots), ``old and new``, ``before:``
  opening a clause and a figure followed by ``before`` and a closing mark (``75 µs
  before)``, ``1.00 before;``); plain ``before the`` is legitimate (``before the
  controller is up``), and so is ``the command before:``;
- was/now: ``(was``, ``used to be``, ``it used to``, ``is now``, ``are now``, ``'s default
  now``, ``now also``; ``no longer`` is not hit (``steps no longer than h``, ``no longer
  exact past 2^53``);
- release and provenance talk: ``kept for one release``, ``found by the fuzz``,
  ``earlier today``, ``the day before``, ``yesterday``;
- dates (``2026-11-28``) anywhere but on a table's ``Run:`` line (bench/README.md's
  tables; doc/setup.md's and doc/testing.md's records of checks run by hand).

The phrases in docstrings and comments are checked the same way, and in the package's
modules also timings (any figure in µs, ``takes 1.5 s``, ``~440 s``, ``costs 2 ms``): a
docstring states what code does, the bench states what it costs. A setting (``the period,
2 ms``) is not hit; bench/ and test/ name steps and timeouts in µs and s, so only the
phrases are checked there.
"""

import ast
import glob
import io
import os
import re
import tokenize

import pytest

from conftest import REPO

DOCUMENTS = ['README.md', 'bench/README.md'] + sorted(
    os.path.relpath(p, REPO) for p in glob.glob(os.path.join(REPO, 'doc', '*.md')))
SOURCES = sorted(
    os.path.relpath(p, REPO)
    for folder in ('flexible_manipulator', 'bench', 'test')
    for p in glob.glob(os.path.join(REPO, folder, '**', '*.py'), recursive=True)
    if os.path.basename(p) != 'test_doc_phrases.py')

_FIGURE = r'\d[\d.,]*(?:\s*(?:µs|us|ms|s|x|%|MB))?'
PHRASES = [
    (r'\b(?:this|that|the same|an earlier|earlier|previous|another) sessions?\b', 'session'),
    (r"\bsession's\b", 'session'),
    (r"\b(?:the|this|that) issue(?:'s)?\b", 'issue'),
    (r'\b\w+(?:-\w+)+ issue\b', 'issue'),
    (r'\(issue\b|\bissue #?\d+', 'issue'),
    (r'(?<![#\w-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w-])',
     'commit hash'),
    (r'\bat the commit\b|\bthis commit\b|\bthe commit (?:before|that added)\b', 'commit'),
    (r'\|\s*before\s*\||\|\s*after\s*\||\bbefore and after\b(?! (?:the|a) fit)|\bold and new\b',
     'before/after'),
    (r'(?:^|[;(.,|]\s*)before:', 'before/after'),
    (_FIGURE + r'\s+before\s*[);,:]', 'before/after'),
    (r'\(was\b|\bused to be\b|\b(?:it|they|which) used to\b', 'was/now'),
    (r"\b(?:is|are) now\b|'s default now\b|\bnow also\b", 'was/now'),
    (r'\bkept for one release\b|\bfound by the fuzz', 'provenance'),
    (r'\bearlier today\b|\bthe day before\b|\byesterday\b', 'history'),
]
DATE = re.compile(r'\b20\d\d-\d\d-\d\d\b')
TIMING = re.compile(r'\d[\d.]*(?:-\d[\d.]*)?\s*(?:µs|us)\b'
                    r'|\b(?:takes?|took|costs?|about|~)\s*~?\d[\d.]*(?:-\d[\d.]*)?\s*(?:ms|s)\b')
COMPILED = [(re.compile(p, re.IGNORECASE), why) for p, why in PHRASES]


def _document_lines(document):
    """(line number, text) of a document."""
    with open(os.path.join(REPO, document)) as stream:
        lines = stream.read().split('\n')
    yield from enumerate(lines, 1)


def _source_texts(source):
    """(line number, text) of a module's docstrings and comments."""
    with open(os.path.join(REPO, source)) as stream:
        code = stream.read()
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                             ast.AsyncFunctionDef)):
            docstring = ast.get_docstring(node, clean=False)
            if docstring:
                first = node.body[0].lineno
                for offset, line in enumerate(docstring.split('\n')):
                    yield first + offset, line


def findings(lines, dates_allowed_on_run_lines, timings):
    """Every phrase of the list in (line number, text) pairs: (line, why, match)."""
    found = []
    for number, line in lines:
        for pattern, why in COMPILED:
            for match in pattern.finditer(line):
                found.append((number, why, match.group(0)))
        if not (dates_allowed_on_run_lines and line.startswith('Run:')):
            found += [(number, 'date', m.group(0)) for m in DATE.finditer(line)]
        if timings:
            found += [(number, 'timing', m.group(0)) for m in TIMING.finditer(line)]
    return found


@pytest.mark.parametrize('document', DOCUMENTS)
def test_documents_tell_no_history(document):
    found = findings(_document_lines(document), True, False)
    assert not found, f'{document}: ' + '; '.join(
        f'line {n}: {why} {text!r}' for n, why, text in found)


@pytest.mark.parametrize('source', SOURCES)
def test_docstrings_and_comments_tell_no_history(source):
    found = findings(_source_texts(source), False, source.startswith('flexible_manipulator'))
    assert not found, f'{source}: ' + '; '.join(
        f'line {n}: {why} {text!r}' for n, why, text in found)


def test_the_phrases_hit_history_and_spare_legitimate_text():
    history = ['measured in this session', "the soft-arm issue's budget", 'at b9af02f',
               '| measurement | before | after |', '66 µs (75 µs before)', '(was 10x)',
               'kept for one release', 'found by the fuzz test', 'is now composed',
               'before: 2.2x', '38x; before: 30x', 'the executor is now composed']
    legitimate = ['before the controller is up', 'the node may issue a command',
                  'colour #a1b2c3d', 'a decade of data', 'before any program',
                  '1e-4 m after 2 s', 'started before it', 'the command before: ambiguous',
                  'steps no longer than h', 'the replays before and after the fit']
    assert all(findings([(1, text)], False, False) for text in history)
    assert not any(findings([(1, text)], False, False) for text in legitimate)
    assert findings([(1, 'Run: 2026-11-28, AMD EPYC')], True, False) == []
    assert findings([(1, 'measured (2026-11-28)')], True, False)
    assert findings([(1, 'one tick takes 30 µs')], False, True)
    assert findings([(1, 'a JointState 45-105 µs on a loaded machine')], False, True)
    assert not findings([(1, 'the period, 2 ms by default')], False, True)
