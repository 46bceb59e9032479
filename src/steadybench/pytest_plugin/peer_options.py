"""pytest-benchmark's command-line flags, understood when pytest-benchmark itself is not active.

A suite moved from pytest-benchmark keeps its CI line (``pytest --benchmark-only
--benchmark-autosave --benchmark-compare --benchmark-compare-fail=min:5%``). When
pytest-benchmark is installed and not disabled (``-p no:benchmark``) it owns these names (two
plugins cannot declare one option) and nothing here is registered.

Each flag is one of three kinds:

* an alias of a steadybench option with the same meaning (``--benchmark-only`` is
  ``--steadybench-only``; ``--benchmark-json`` writes pytest-benchmark's JSON format, as
  pytest-benchmark does, so it is ``--steadybench-pb-json``);
* translated: ``--benchmark-compare[=NUM]`` compares with the latest record of the history
  (or record ``#NUM``), ``--benchmark-compare-fail=FIELD:X%`` fails the session when a
  benchmark is slower beyond X % (steadybench compares the interval of the ratio, whatever the
  field);
* accepted and ignored, with one line in the summary saying why: pytest-benchmark's knobs of its
  own calibration (``--benchmark-min-rounds``, ``--benchmark-timer``...) and of its tables.

Flag names follow pytest-benchmark 4/5 (its ``plugin.py``).
"""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

#: pytest-benchmark's plugin name in pytest's plugin manager
PYTEST_BENCHMARK = "benchmark"

#: pytest-benchmark flag -> the steadybench option it is an alias of
ALIASES = {
    "--benchmark-skip": "--steadybench-skip",
    "--benchmark-only": "--steadybench-only",
    "--benchmark-disable": "--steadybench-disable",
    "--benchmark-autosave": "--steadybench-autosave",
    "--benchmark-save": "--steadybench-save",
    "--benchmark-json": "--steadybench-pb-json",
}

#: flags of pytest-benchmark's own calibration and display: accepted, ignored, and why
IGNORED_VALUE = {
    "--benchmark-min-time": "each execution samples for --steadybench-time",
    "--benchmark-max-time": "each execution samples for --steadybench-time",
    "--benchmark-min-rounds": "each execution samples for --steadybench-time",
    "--benchmark-timer": "the clock is chosen and calibrated by steadybench",
    "--benchmark-calibration-precision": "the batch size is calibrated by steadybench",
    "--benchmark-warmup-iterations": "warm-up samples are steadybench's own",
    "--benchmark-sort": "the summary lists benchmarks by group",
    "--benchmark-group-by": "use --steadybench-group-by",
    "--benchmark-columns": "the summary shows the estimate and its interval",
    "--benchmark-name": "the summary names the test",
    "--benchmark-storage": "results are recorded in the history (--steadybench-history)",
    "--benchmark-netrc": "results are recorded in the history (--steadybench-history)",
    "--benchmark-time-unit": "units are chosen per value",
    "--benchmark-cprofile": "profiling is not part of a measurement",
    "--benchmark-cprofile-loops": "profiling is not part of a measurement",
    "--benchmark-cprofile-top": "profiling is not part of a measurement",
    "--benchmark-cprofile-dump": "profiling is not part of a measurement",
}
IGNORED_OPTIONAL = {
    "--benchmark-warmup": "warm-up samples are steadybench's own",
    "--benchmark-histogram": "use 'steadybench show FILE' on --steadybench-json's file",
}
IGNORED_FLAG = {
    "--benchmark-disable-gc": "the garbage collector is left as the code runs it",
    "--benchmark-enable": "benchmarks run unless --benchmark-disable",
    "--benchmark-verbose": "the summary is the same",
    "--benchmark-quiet": "the summary is the same",
    "--benchmark-save-data": "every value is always kept",
}


def _dest(flag: str) -> str:
    return "pb_" + flag[2:].replace("-", "_")


def pytest_benchmark_active(pluginmanager: Any) -> bool:
    """Whether pytest-benchmark will own its flags in this session: installed and not
    disabled with ``-p no:benchmark``."""
    if pluginmanager.is_blocked(PYTEST_BENCHMARK) or pluginmanager.is_blocked(
            "pytest_benchmark"):
        return False
    return importlib.util.find_spec("pytest_benchmark") is not None


def alias_names(pluginmanager: Any) -> dict[str, list[str]]:
    """The extra names of steadybench's options (pytest-benchmark's), when they are free."""
    if pytest_benchmark_active(pluginmanager):
        return {}
    names: dict[str, list[str]] = {}
    for flag, ours in ALIASES.items():
        names.setdefault(ours, []).append(flag)
    return names


def add_translated(group: Any, pluginmanager: Any) -> None:
    """The flags that are translated or ignored (see the module docs)."""
    if pytest_benchmark_active(pluginmanager):
        return
    add = group.addoption
    add("--benchmark-compare", dest=_dest("--benchmark-compare"), nargs="?", const="latest",
        default=None, metavar="NUM",
        help="pytest-benchmark's flag: compare with the latest record of the history, or with "
             "record #NUM (as --steadybench-compare).")
    add("--benchmark-compare-fail", dest=_dest("--benchmark-compare-fail"), default=None,
        metavar="FIELD:X%",
        help="pytest-benchmark's flag: fail when a benchmark is slower beyond X% (the ratio's "
             "interval decides, whatever FIELD).")
    for flag in IGNORED_VALUE:
        add(flag, dest=_dest(flag), default=None, help="pytest-benchmark's flag; ignored.")
    for flag in IGNORED_OPTIONAL:
        add(flag, dest=_dest(flag), nargs="?", const="yes", default=None,
            help="pytest-benchmark's flag; ignored.")
    for flag in IGNORED_FLAG:
        add(flag, dest=_dest(flag), action="store_true", default=False,
            help="pytest-benchmark's flag; ignored.")


def compare_reference(config: pytest.Config) -> str | None:
    """``--benchmark-compare[=NUM]`` as a history reference: ``latest`` or ``#NUM``."""
    value = _get(config, "--benchmark-compare")
    if value is None:
        return None
    text = str(value).strip()
    if text.isdigit():
        return f"#{int(text)}"
    return text or "latest"


def compare_fail(config: pytest.Config) -> str | None:
    """The threshold of ``--benchmark-compare-fail=FIELD:X%`` ("5%"), or None when not given.

    Raises :class:`pytest.UsageError` for an absolute threshold: steadybench compares ratios."""
    value = _get(config, "--benchmark-compare-fail")
    if not value:
        return None
    first = str(value).split(",")[0].strip()
    _, _, threshold = first.rpartition(":")
    if not threshold.endswith("%"):
        raise pytest.UsageError(f"--benchmark-compare-fail {value}: steadybench compares "
                                "ratios; give a percentage, e.g. min:5%")
    return threshold


def ignored_notes(config: pytest.Config) -> list[str]:
    """One line per pytest-benchmark flag given that has no effect here."""
    notes = []
    for table in (IGNORED_VALUE, IGNORED_OPTIONAL, IGNORED_FLAG):
        for flag, why in table.items():
            if _get(config, flag):
                notes.append(f"note: {flag} is pytest-benchmark's and is ignored ({why})")
    return notes


def _get(config: pytest.Config, flag: str) -> Any:
    try:
        return config.getoption(_dest(flag))
    except ValueError:  # not registered: pytest-benchmark owns the flag
        return None
