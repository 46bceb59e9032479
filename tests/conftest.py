"""Suite-wide settings.

``steadybench run`` measures each benchmark in ``steadybench.defaults.PROCESSES`` (25) spawned
worker processes. The tests that run the command check behaviour, not precision, so they use 2
executions: the suite then starts 5× fewer interpreters and stays fast on a busy 2-core machine.
``tests/test_workers.py::test_run_defaults`` checks the real default.

Every test also gets its own state directory (``XDG_STATE_HOME``: the machine-control journals
and the tuning lock), so no test shares them with another test, another worker of a parallel
run, or steadybench runs elsewhere on the machine.
"""

from __future__ import annotations

import pytest

from steadybench import defaults

#: executions per benchmark in the tests that run ``steadybench run`` without ``-p``
TEST_PROCESSES = 2


@pytest.fixture(autouse=True)
def _two_executions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(defaults, "PROCESSES", TEST_PROCESSES)


@pytest.fixture(autouse=True)
def _own_baselines(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
                   ) -> None:
    """``run`` keeps its last result per case (steadybench.history.last_run): in a folder of
    the test's own, never the project's."""
    monkeypatch.setenv("STEADYBENCH_BASELINE_DIR", str(tmp_path_factory.mktemp("baselines")))


@pytest.fixture(autouse=True)
def _own_state_directory(monkeypatch: pytest.MonkeyPatch,
                         tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))


#: what pytest-xdist puts in a worker's environment (make test runs two workers): a test
#: sees the environment of a serial run, so the commands and the pytest sessions it starts
#: neither take a fixed 80-column terminal nor believe they are xdist workers themselves
_XDIST_ENVIRONMENT = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT",
                      "PYTEST_XDIST_TESTRUNUID", "COLUMNS", "LINES")


@pytest.fixture(autouse=True)
def _serial_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    if os.environ.get("PYTEST_XDIST_WORKER"):
        for name in _XDIST_ENVIRONMENT:
            monkeypatch.delenv(name, raising=False)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Files with the most tests marked ``slow`` first, each file's tests in their order: the
    two xdist workers of ``make test`` (``--dist loadfile``) start on the long files, so no
    long file is left for one worker at the end while the other waits. The order of the
    tests inside a file, and of files without slow tests, is kept."""
    from collections import Counter

    slow = Counter(item.path for item in items if item.get_closest_marker("slow"))
    order = {path: i for i, path in enumerate(dict.fromkeys(item.path for item in items))}
    items.sort(key=lambda item: (-slow[item.path], order[item.path]))
