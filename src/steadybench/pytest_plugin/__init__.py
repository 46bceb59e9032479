"""steadybench's pytest plugin (registered through the ``pytest11`` entry point).

A ``benchmark`` fixture with pytest-benchmark's calls, measured by steadybench's core
(:mod:`.fixture`, :mod:`.measure`); saving to the history, comparing with a baseline and failing
on a regression (:mod:`.session`); ``docs/pytest.md`` has the options.

It stays out of the way of suites that do not use it: no option changes anything until a test
asks for the fixture. When pytest-benchmark is active too, its ``benchmark`` fixture is left to
it (two plugins cannot own one name) and steadybench's is ``steadybench_benchmark``; say
``-p no:benchmark`` to measure the suite's ``benchmark`` tests with steadybench. Under
pytest-xdist, workers do not measure (a benchmark would share the CPU with the other workers'
tests): the function is called once, and the session warns.
"""

from __future__ import annotations

from typing import Any

import pytest

from .peer_options import PYTEST_BENCHMARK


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    from . import peer_options

    group = parser.getgroup("steadybench", "steadybench benchmarks (docs/pytest.md)")
    aliases = peer_options.alias_names(pluginmanager)

    def add(name: str, **kwargs: Any) -> None:
        # pytest-benchmark's name too, when pytest-benchmark is not there to own it
        group.addoption(name, *aliases.get(name, ()), **kwargs)

    add("--steadybench-skip", action="store_true", default=False,
        help="Skip the tests that use the benchmark fixture.")
    add("--steadybench-only", action="store_true", default=False,
        help="Run only the tests that use the benchmark fixture.")
    add("--steadybench-disable", action="store_true", default=False,
        help="Call benchmarked functions once without measuring them.")
    add("--steadybench-processes", type=int, default=None, metavar="K",
        help="Independent executions (worker processes) per benchmark (default 5).")
    add("--steadybench-in-process", action="store_true", default=False,
        help="Measure in the pytest process (not isolated: the interval describes one "
             "execution).")
    add("--steadybench-time", default=None, metavar="SECONDS",
        help="Seconds of samples in each execution (default 0.15).")
    add("--steadybench-measure", default="time", choices=("time", "instructions", "cycles"),
        help="What to measure: time (default), or instructions / estimated cycles counted "
             "under valgrind (exact and repeatable; not time; docs/methods.md, \"Counts\").")
    add("--steadybench-profile", action="store_true", default=False,
        help="Also profile each benchmark in one extra, separate execution (never a measured "
             "one): where its time goes, in the summary, the results' JSON and the report "
             "(docs/profiles.md).")
    add("--steadybench-confidence", default=None, metavar="LEVEL",
        help="Confidence level of intervals and verdicts (default 0.95).")
    add("--steadybench-group-by", default="group", choices=("group", "module", "func", "param"),
        help="How the summary groups benchmarks (default: the benchmark's group).")
    add("--steadybench-save", default=None, metavar="NAME",
        help="Record the results in the history under NAME.")
    add("--steadybench-autosave", action="store_true", default=False,
        help="Record the results in the history (no name).")
    add("--steadybench-history", default=None, metavar="URL",
        help="History store: a SQLite file or postgresql://... (default "
             ".steadybench/history.sqlite in the project; also STEADYBENCH_HISTORY_URL).")
    add("--steadybench-compare", default=None, metavar="REF",
        help="Compare with a baseline: a history reference (saved name, git ref, #ID) or a "
             "results file (steadybench, pytest-benchmark, asv, pyperf, hyperfine).")
    add("--steadybench-fail-on", default="never", choices=("slower", "change", "never"),
        help="Fail the session when a benchmark is significantly slower (or changed) than the "
             "baseline.")
    add("--steadybench-threshold", default=None, metavar="X%",
        help="Practical threshold: slower needs the ratio's interval beyond 1 + X.")
    from .formats import result_formats

    for option, cls in result_formats():  # every output format: --steadybench-json, -xml...
        add(option, default=None, metavar="PATH", help=f"Write the results as {cls.label}.")
    add("--steadybench-markdown", default=None, metavar="PATH",
        help="Write the comparison with the baseline as a Markdown table.")
    peer_options.add_translated(group, pluginmanager)


def pytest_report_header(config: pytest.Config) -> str | None:
    """When pytest-benchmark is active too, one line says whose ``benchmark`` fixture the
    tests get (a suite otherwise measured by the other plugin prints nothing of ours)."""
    if not config.pluginmanager.has_plugin(PYTEST_BENCHMARK):
        return None
    return ("steadybench: the 'benchmark' fixture is pytest-benchmark's here; steadybench's "
            "is 'steadybench_benchmark' (or run with -p no:benchmark)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "benchmark(group=None, max_time=None): steadybench benchmark options "
                   "(pytest-benchmark's marker)")
    from . import fixture

    if not config.pluginmanager.has_plugin(PYTEST_BENCHMARK):
        config.pluginmanager.register(fixture.BenchmarkName(), "steadybench-benchmark-fixture")
    config.pluginmanager.register(fixture, "steadybench-fixtures")


def _uses_fixture(item: pytest.Item) -> bool:
    names = getattr(item, "fixturenames", ())
    if "steadybench_benchmark" in names:
        return True
    config = item.config
    return "benchmark" in names and not config.pluginmanager.has_plugin(PYTEST_BENCHMARK)


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    from .session import session_of

    bench = session_of(config)
    if bench.skip and bench.only:
        raise pytest.UsageError("--steadybench-skip and --steadybench-only exclude each other")
    if bench.only:
        kept = [item for item in items if _uses_fixture(item)]
        deselected = [item for item in items if not _uses_fixture(item)]
        if deselected:
            config.hook.pytest_deselected(items=deselected)
            items[:] = kept


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    from .session import session_of

    bench = session_of(session.config)
    if bench.worker:
        return
    out = bench.finish(interrupted=exitstatus == pytest.ExitCode.INTERRUPTED)
    failed = out.errors or (out.regressions and bench.fail_on != "never")
    if failed and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    from .session import session_of

    bench = session_of(config)
    tr = terminalreporter
    if bench.worker:
        return
    out = bench.outcome
    if not bench.cases and (out is None or not out.errors):
        return
    # at the terminal's width (or COLUMNS), between words only (a number never apart from its
    # unit); into a file or a pipe, unwrapped: it has no width
    import os

    from ..output.console import wrap_words

    writer = getattr(tr, "_tw", None)
    stream = getattr(writer, "_file", None)
    wrap = bool(os.environ.get("COLUMNS", "").strip().isdigit()) or bool(
        stream is not None and hasattr(stream, "isatty") and stream.isatty())
    width = getattr(writer, "fullwidth", 80) or 80

    def write(line: str, **markup: bool) -> None:
        for part in (wrap_words(line, width) if wrap else line).split("\n"):
            tr.write_line(part, **markup)

    tr.write_sep("-", "steadybench benchmarks")
    for line in bench.summary_lines():
        write(line)
    if out is not None:
        for line in out.regressions:
            write(f"regression: {line}", red=True, bold=True)
        if out.regressions and bench.fail_on != "never":
            write(f"failing the session (--steadybench-fail-on {bench.fail_on})", red=True)
        for line in out.errors:
            write(f"error: {line}", red=True)

