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

import os
import signal

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
def _load_is_not_the_subject(monkeypatch: pytest.MonkeyPatch) -> None:
    """Results taken while the machine's CPU was contended are not compared across time
    (steadybench.cpu_pressure). The suite must pass beside two CPU hogs, where every case is
    contended; that rule is tested in tests/test_cpu_pressure.py, and turned off elsewhere."""
    monkeypatch.setenv("STEADYBENCH_BUSY_SHARE", "off")


@pytest.fixture(autouse=True)
def _own_state_directory(monkeypatch: pytest.MonkeyPatch,
                         tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))


def pytest_sessionstart(session: pytest.Session) -> None:
    """The xdist controller writes the suite's bytecode once before its workers start, so
    that they do not each rewrite every test file (tests/suite_bytecode.py)."""
    config = session.config
    if getattr(config, "workerinput", None) is None and config.getoption("numprocesses", None):
        from pathlib import Path

        from suite_bytecode import write_suite_bytecode

        write_suite_bytecode(config, Path(__file__).parent)


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


#: processor seconds a test file costs when tests/file_costs.txt does not list it, per test
_UNLISTED_SECONDS_PER_TEST = 0.3


def _file_costs() -> dict[str, float]:
    """tests/file_costs.txt: measured processor seconds per test file (tests/file_costs.py)."""
    from pathlib import Path

    costs: dict[str, float] = {}
    for line in Path(__file__).with_name("file_costs.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            seconds, path = line.split(None, 1)
            costs[path.strip()] = float(seconds)
    return costs


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The costliest files first, each file's tests in their order. ``make test`` runs two
    xdist workers a whole file at a time (``--dist loadfile --no-loadscope-reorder``: xdist
    would otherwise order the files by their number of tests, and a file of one 30-second test
    came last); given the files longest first, each worker takes the next file when it is
    done, and the run ends on short files, so neither worker waits long for the other. A file
    that tests/file_costs.txt does not list counts 0.3 s per test. Only the order depends on
    these figures, never a test's outcome."""
    from collections import Counter
    from pathlib import Path

    here = Path(__file__).parent
    listed = _file_costs()
    tests = Counter(item.path for item in items)
    order = {path: i for i, path in enumerate(tests)}

    def cost(path: Path) -> float:
        try:
            name = path.relative_to(here).as_posix()
        except ValueError:
            name = str(path)
        return listed.get(name, _UNLISTED_SECONDS_PER_TEST * tests[path])

    costs = {path: cost(path) for path in tests}
    items.sort(key=lambda item: (-costs[item.path], order[item.path]))


# -- opt-in: CPU time per test (STEADYBENCH_TEST_CPU_LOG=file) -------------------------------
# Wall times lie on a loaded machine; the processor time a test costs (this process's and its
# waited-for children's, user + system) does not. Each worker appends one line per test:
# "nodeid<TAB>cpu seconds"; the setup of a module-scoped fixture counts for its first test.
_CPU_LOG = __import__("os").environ.get("STEADYBENCH_TEST_CPU_LOG")


def _cpu_now() -> float:
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


if _CPU_LOG:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
        before = _cpu_now()
        yield
        with open(_CPU_LOG, "a") as log:
            log.write(f"{item.nodeid}\t{_cpu_now() - before:.3f}\n")


_ENDING_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                        if hasattr(signal, name))


def _ending_signals_deliverable() -> None:
    """The suite starts with Ctrl-C, SIGTERM and SIGHUP at their usual actions, whatever it
    inherited. A shell without job control starts its background jobs with SIGINT ignored
    (``make test &`` in a script, a CI step run that way), ``nohup`` ignores SIGHUP, and an
    ignored signal stays ignored in every process started from there: steadybench keeps such
    a signal ignored on purpose (the user asked for it), so the Ctrl-C tests' commands then ran
    to the end, and the in-process ones found no handler to wrap (ten failures in a run
    started from a background script)."""
    for signum in _ENDING_SIGNALS:
        if signal.getsignal(signum) is signal.SIG_IGN:
            signal.signal(signum, signal.default_int_handler if signum == signal.SIGINT
                          else signal.SIG_DFL)


_ending_signals_deliverable()


@pytest.fixture(autouse=True)
def _ending_signal_handlers_put_back(request: pytest.FixtureRequest):
    """Every test leaves the handlers of SIGINT, SIGTERM and SIGHUP as it found them: a test
    that left one changed (SIGINT ignored, or a counting wrapper) broke every Ctrl-C test run
    after it in the same xdist worker, which order alone decided (a fresh-clone run beside two
    hogs). A handler found changed is put back; with STEADYBENCH_TEST_SIGNAL_LOG=FILE the test
    is named there."""
    before = {signum: signal.getsignal(signum) for signum in _ENDING_SIGNALS}
    yield
    changed = [signum for signum in _ENDING_SIGNALS
               if signal.getsignal(signum) is not before[signum]]
    for signum in changed:
        handler = before[signum]
        signal.signal(signum, signal.SIG_DFL if handler is None else handler)
    log = os.environ.get("STEADYBENCH_TEST_SIGNAL_LOG")
    if changed and log:
        with open(log, "a") as fh:
            fh.write(f"{request.node.nodeid} {[signal.Signals(s).name for s in changed]}\n")
