"""The suite's bytecode, written once by the pytest-xdist controller before its workers start
(``conftest.pytest_sessionstart``).

pytest rewrites the asserts of every test module and ``conftest.py`` when it imports them, and
caches the rewritten code in ``__pycache__``, unless ``sys.dont_write_bytecode``
(``PYTHONDONTWRITEBYTECODE``, which the development VM's shells set). Then every xdist worker
rewrote and compiled all of the suite's files while collecting: 9.5 s of processor time for a
collection without that cache, 4 s with it, paid three times by ``make test``. And on a fresh
clone, with bytecode allowed, the three workers rewrite the same files at the same moment.

Here the controller writes each file's cache once with pytest's own rewriting and pyc format
(keyed on the source's hash: never stale), and the helper modules' ordinary bytecode as
checked-hash pycs. Only the time of collection depends on this: if pytest's internals differ
(they are not a public API), nothing is written and the workers rewrite as before.
"""

from __future__ import annotations

import compileall
import fnmatch
import py_compile
from pathlib import Path

import pytest


def _rewritten_by_pytest(path: Path, config: pytest.Config) -> bool:
    """What pytest's assertion rewriting takes: conftest.py and the test-file patterns."""
    patterns = config.getini("python_files")
    return path.name == "conftest.py" or any(fnmatch.fnmatch(path.name, p) for p in patterns)


def write_suite_bytecode(config: pytest.Config, root: Path) -> int:
    """Write the rewritten pyc of every test file under ``root`` that lacks a current one, and
    the bytecode of the other modules there; the number of test files rewritten."""
    try:
        from _pytest.assertion import rewrite
        from _pytest.assertion.rewrite import assertstate_key

        state = config.stash[assertstate_key]
    except (ImportError, KeyError, AttributeError):
        return 0  # another pytest, or assertion rewriting off (--assert=plain)
    written = 0
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        if not _rewritten_by_pytest(path, config):
            compileall.compile_file(path, quiet=2,
                                    invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
            continue
        try:
            cache = rewrite.get_cache_dir(path)
            pyc = cache / (path.name[:-3] + rewrite.PYC_TAIL)
            if rewrite._read_pyc(path, pyc, state.trace) is not None:
                continue
            if not rewrite.try_makedirs(cache):
                return written
            source_key, code = rewrite._rewrite_test(path, config)
            written += rewrite._write_pyc(state, code, source_key, pyc)
        except (AttributeError, TypeError, ValueError, OSError, SyntaxError):
            return written  # pytest's internals changed, or a file pytest will report itself
    return written
