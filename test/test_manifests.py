"""The manifests agree with each other and with every import of the package and its tests.

The one source is the requirements files: each line names a pip requirement and either its
rosdep key (``rosdep KEY``: a key of rosdistro's ``rosdep/python.yaml``, or a ROS package)
or ``pip only`` (no key there). Checked against it:

* package.xml declares each key (run requirements as ``exec_depend``, test requirements as
  ``exec_depend`` or ``test_depend``) and names each pip-only requirement in its "pip only"
  comments (``run:`` or ``test:``); it declares no ``python3-*`` or ``*-pip`` key that no
  requirement has; requirements-ros.txt lists exactly the pip-only lines;
* setup.py's extras (read from its source, not run) are lines of the requirements files
  (requirements-rl.txt holds the optional ones: neither the set-up nor package.xml has them);
* every import of a module that is neither the standard library's
  (``sys.stdlib_module_names``) nor the repository's, found by walking the syntax trees of
  flexible_manipulator/, launch/, examples/ (run) and test/ (test), is a run (test)
  requirement, a setup.py extra, or a ROS package package.xml declares (``exec_depend``;
  for a test also ``test_depend``): an import of a new package fails here until it is
  declared;
* a test file that imports a pip-only module at load time (directly, or through the
  module-level imports of the package's modules and the test helpers) skips for it with
  ``pytest.importorskip(name, reason=...)`` first, so that a ROS 2 install without it
  skips that file with a reason instead of failing to collect it.

Import names that are not their distribution's name come from each distribution's
top-level modules (`IMPORT_NAMES`; where installed, `importlib.metadata` must agree).
"""

import ast
import functools
import importlib.metadata
import os
import re
import sys
import xml.etree.ElementTree as ElementTree

import pytest

from conftest import REPO

RUN_DIRS = ('flexible_manipulator', 'launch', 'examples')
TEST_DIRS = ('test',)
# Distribution -> the top-level module it installs, where the two names differ (each
# distribution's top_level.txt / RECORD; pin installs pinocchio through cmeel, which
# importlib.metadata does not map).
IMPORT_NAMES = {'PyYAML': 'yaml', 'mcap-ros2-support': 'mcap_ros2', 'pyelastica': 'elastica',
                'pin': 'pinocchio', 'pytest-timeout': 'pytest_timeout',
                'pytest-xdist': 'xdist'}
LINE = re.compile(r'^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?P<spec>[^#\s]*)\s*(#(?P<note>.*))?$')


def normal(name):
    """A distribution name as pip compares them (PEP 503)."""
    return re.sub(r'[-_.]+', '-', name).lower()


def module_of(distribution):
    """The top-level module ``distribution`` installs."""
    return IMPORT_NAMES.get(distribution, distribution.replace('-', '_'))


def requirements(name):
    """The requirement lines of ``name``: [(distribution, line, key or None)]."""
    lines = []
    with open(os.path.join(REPO, name)) as stream:
        for text in stream:
            if not text.strip() or text.startswith('#'):
                continue
            match = LINE.match(text.strip())
            assert match, f'{name}: cannot read {text!r}'
            note = match['note'] or ''
            key = re.search(r'\brosdep ([\w.-]+)', note)
            pip_only = re.search(r'\bpip only\b', note)
            if name != 'requirements-ros.txt':
                assert bool(key) != bool(pip_only), \
                    f'{name}: {text.strip()!r} names neither its rosdep key nor "pip only"'
            requirement = match['name'] + match['spec']
            lines.append((match['name'], requirement, key[1] if key else None))
    return lines


RUN = requirements('requirements.txt')
TEST = requirements('requirements-test.txt')
OPTIONAL = requirements('requirements-rl.txt')


def package_xml():
    """package.xml's depends by tag, and the names in its "pip only" comments by section."""
    root = ElementTree.parse(os.path.join(REPO, 'package.xml'),
                             ElementTree.XMLParser(target=ElementTree.TreeBuilder(
                                 insert_comments=True))).getroot()
    depends = {'exec_depend': set(), 'test_depend': set(), 'depend': set()}
    pip_only = {'run': set(), 'test': set()}
    for element in root:
        if element.tag in depends:
            depends[element.tag].add(element.text.strip())
        elif element.tag is ElementTree.Comment and 'pip only' in element.text:
            for section, names in re.findall(r'\b(run|test):([^:]*)', element.text):
                pip_only[section] |= set(re.findall(r'([A-Za-z][\w.-]*) \(', names))
    run = depends['exec_depend'] | depends['depend']
    return run, run | depends['test_depend'], pip_only


def setup_extras():
    """setup.py's ``extras_require``, read from its syntax tree (setup.py is not run)."""
    with open(os.path.join(REPO, 'setup.py')) as stream:
        tree = ast.parse(stream.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == 'extras_require':
            return ast.literal_eval(node.value)
    return {}


def python_files(directories):
    """Every .py file below ``directories`` of the repository."""
    for directory in directories:
        for path, dirs, files in os.walk(os.path.join(REPO, directory)):
            dirs[:] = [d for d in dirs if d != '__pycache__']
            yield from (os.path.join(path, f) for f in sorted(files) if f.endswith('.py'))


def importorskips(tree):
    """The modules of the ``pytest.importorskip('name', ...)`` calls in ``tree``."""
    return {node.args[0].value for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == 'importorskip' and node.args
            and isinstance(node.args[0], ast.Constant)}


def imports(tree):
    """The absolute module names ``tree`` imports anywhere (and skips for)."""
    names = set(importorskips(tree))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module)
    return names


def local_modules():
    """The top-level names this repository provides (its package, test helpers, launch)."""
    names = {'flexible_manipulator'}
    for directory in RUN_DIRS + TEST_DIRS:
        names |= {os.path.basename(p)[:-3] for p in python_files([directory])}
    return names


def third_party(directories):
    """{top-level module: [files]} of the imports outside the stdlib and this repository."""
    local = local_modules()
    found = {}
    for path in python_files(directories):
        with open(path) as stream:
            tree = ast.parse(stream.read(), path)
        for name in imports(tree):
            top = name.split('.')[0]
            if top not in sys.stdlib_module_names and top not in local:
                found.setdefault(top, []).append(os.path.relpath(path, REPO))
    return found


def test_the_import_names_are_the_installed_distributions():
    """`IMPORT_NAMES` and the default (the name with ``_`` for ``-``) against what the
    installed distributions say they provide (importlib.metadata; those not installed, and
    pin's cmeel layout, are not checked)."""
    provided = importlib.metadata.packages_distributions()
    for distribution, _, _ in RUN + TEST:
        module = module_of(distribution)
        if module in provided:
            assert normal(distribution) in {normal(d) for d in provided[module]}, \
                (distribution, module, provided[module])


def test_package_xml_declares_each_rosdep_key_and_names_each_pip_only_requirement():
    run_depends, all_depends, pip_only = package_xml()
    for lines, depends, section in ((RUN, run_depends, 'run'), (TEST, all_depends, 'test')):
        for distribution, requirement, key in lines:
            if key:
                assert key in depends, f'{requirement}: package.xml lacks <{section}> {key}'
            else:
                assert distribution in pip_only[section], \
                    f'{requirement}: not named in package.xml\'s "pip only" {section}: comment'
    keys = {key for _, _, key in RUN + TEST if key}
    stale = {d for d in all_depends if d.startswith('python3-') or d.endswith('-pip')} - keys
    assert not stale, f'package.xml declares keys no requirement has: {sorted(stale)}'
    named = pip_only['run'] | pip_only['test']
    assert named == {d for d, _, key in RUN + TEST if not key}, named


def test_requirements_ros_lists_exactly_the_pip_only_requirements():
    expected = {requirement for _, requirement, key in RUN + TEST if not key}
    assert {r for _, r, _ in requirements('requirements-ros.txt')} == expected


def test_setup_extras_are_requirement_lines():
    lines = {requirement for _, requirement, _ in RUN + TEST + OPTIONAL}
    extras = setup_extras()
    assert extras, 'setup.py has no extras_require'
    for extra, specs in extras.items():
        for spec in specs:
            assert spec in lines, f"setup.py's extra {extra!r}: {spec} is no requirement line"


@pytest.mark.parametrize('directories, kind', [(RUN_DIRS, 'run'), (TEST_DIRS, 'test')])
def test_every_third_party_import_is_declared(directories, kind):
    """Run imports: requirements.txt, an extra, or an exec_depend; test imports also
    requirements-test.txt or a test_depend (module doc)."""
    run_depends, all_depends, _ = package_xml()
    extras = [re.match(r'[\w.-]+', s)[0] for specs in setup_extras().values() for s in specs]
    lines = RUN + (TEST if kind == 'test' else [])
    declared = {module_of(d) for d, _, _ in lines} | {module_of(d) for d in extras}
    declared |= run_depends if kind == 'run' else all_depends
    found = third_party(directories)
    assert {'numpy', 'rclpy', 'viser'} <= set(found) or kind == 'test', sorted(found)
    undeclared = {name: files for name, files in found.items() if name not in declared}
    assert not undeclared, (f'imported but declared nowhere (requirements, setup.py extras, '
                            f'package.xml): {undeclared}')


@functools.lru_cache(maxsize=None)
def module_path(name):
    """The file of the repository's module ``name`` (a package's __init__), or None."""
    parts = name.split('.')
    for base in (REPO, os.path.join(REPO, 'test')):
        for path in (os.path.join(base, *parts) + '.py',
                     os.path.join(base, *parts, '__init__.py')):
            if os.path.isfile(path):
                return path
    return None


def statement_imports(node, package):
    """Absolute module names the module-level statement ``node`` imports (also under
    if/try), relative imports resolved in ``package``."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names}
    if isinstance(node, ast.ImportFrom):
        base = node.module or ''
        if node.level:
            parts = package.split('.')
            base = '.'.join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
        return {base} | {f'{base}.{alias.name}' for alias in node.names}
    names = set()
    if isinstance(node, (ast.If, ast.Try)):
        for child in node.body + node.orelse + [n for h in getattr(node, 'handlers', [])
                                                for n in h.body]:
            names |= statement_imports(child, package)
    return names


def package_of(path):
    """The dotted package of the file ``path`` of the repository."""
    return os.path.relpath(os.path.dirname(path), REPO).replace(os.sep, '.')


def reached_at_load(names):
    """Top-level names of every module that importing ``names`` loads: through the
    repository's modules (their parent packages too) and their module-level imports."""
    reached, seen = set(), set()
    todo = list(names)
    while todo:
        parts = todo.pop().split('.')
        reached.add(parts[0])
        for k in range(1, len(parts) + 1):
            path = module_path('.'.join(parts[:k]))
            if path and path not in seen:
                seen.add(path)
                todo += module_imports(path)
    return reached


@functools.lru_cache(maxsize=None)
def module_imports(path):
    """The names the module-level statements of the repository's module ``path`` import
    (parsed once for the whole file: every test file's statements reach the same modules)."""
    with open(path) as stream:
        tree = ast.parse(stream.read(), path)
    return tuple(name for node in tree.body
                 for name in statement_imports(node, package_of(path)))


def module_level_skip(node):
    """(module, whether a reason is given) of a module-level ``[x =]
    pytest.importorskip(module, ...)``, or None."""
    call = node.value if isinstance(node, (ast.Expr, ast.Assign)) else None
    if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr == 'importorskip'):
        return call.args[0].value, 'reason' in {k.arg for k in call.keywords}
    return None


def test_a_test_needing_a_pip_only_module_skips_for_it():
    """Each module-level statement of a test file, in order: a pip-only module it loads
    must have been skipped for by an earlier statement."""
    pip_only = {module_of(d) for d, _, key in RUN + TEST if not key}
    assert {'viser', 'pyarrow', 'elastica', 'ray'} <= pip_only
    missing = []
    for path in python_files(TEST_DIRS):
        if not os.path.basename(path).startswith('test_'):
            continue
        with open(path) as stream:
            tree = ast.parse(stream.read(), path)
        skipped = set()
        for node in tree.body:
            skip = module_level_skip(node)
            if skip and not skip[1]:
                missing.append((os.path.relpath(path, REPO), node.lineno, 'no reason'))
            skipped.add(skip and skip[0])
            needed = reached_at_load(statement_imports(node, package_of(path))) & pip_only
            if needed - skipped:
                missing.append((os.path.relpath(path, REPO), node.lineno,
                                sorted(needed - skipped)))
    assert not missing, f'not skipped for first (pytest.importorskip with reason): {missing}'
