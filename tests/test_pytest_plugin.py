"""The pytest plugin, run as a user runs it: pytest in a subprocess on a small project."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import peers

#: fast settings: behaviour, not precision, is checked here
FAST = ["--steadybench-processes", "2", "--steadybench-time", "0.02"]

TESTS = textwrap.dedent('''
    import pytest

    def work(n):
        return sum(range(n))

    def test_module_function(benchmark):
        benchmark.extra_info["size"] = 500
        assert benchmark(work, 500) == sum(range(500))

    def test_lambda(benchmark):
        assert benchmark(lambda: work(100)) == sum(range(100))

    def test_pedantic(benchmark):
        result = benchmark.pedantic(work, args=(50,), rounds=7, iterations=3, warmup_rounds=2)
        assert result == sum(range(50))

    @pytest.mark.benchmark(group="sizes")
    def test_small(benchmark):
        benchmark(work, 10)

    @pytest.mark.benchmark(group="sizes")
    def test_large(benchmark):
        benchmark(work, 5000)

    def test_plain():
        assert work(3) == 3
''')


def pytest_run(project: Path, *args: str, env: dict[str, str] | None = None
               ) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    full_env.pop("PYTEST_ADDOPTS", None)
    full_env.pop("PYTEST_XDIST_WORKER", None) if env is None or \
        "PYTEST_XDIST_WORKER" not in env else None
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "no:randomly", *args], cwd=project, capture_output=True,
                          text=True, env=full_env, timeout=300)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "test_bench.py").write_text(TESTS)
    return tmp_path


@pytest.mark.slow
def test_benchmarks_are_measured_with_the_core(project: Path) -> None:
    out = pytest_run(project, "-p", "no:benchmark", *FAST, "--steadybench-json", "r.json")
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    assert "6 passed" in text
    assert "test_module_function:" in text and "[2 executions]" in text
    assert "test_lambda:" in text and "level: runs" in text and "lambda" in text
    assert "group sizes:" in text and "test_small is" in text and "faster than test_large" in text
    doc = json.loads((project / "r.json").read_text())
    cases = {c["name"].split("::")[1]: c for c in doc["benchmarks"]}
    assert set(cases) == {"test_module_function", "test_lambda", "test_pedantic", "test_small",
                          "test_large"}
    assert len(cases["test_module_function"]["processes"]) == 2
    assert cases["test_module_function"]["estimate"]["level"] == "executions"
    assert cases["test_module_function"]["extra"]["extra_info"] == {"size": 500}
    assert cases["test_lambda"]["estimate"]["level"] == "runs"
    assert "lambda" in cases["test_lambda"]["extra"]["in_process_reason"]
    pedantic = cases["test_pedantic"]
    assert pedantic["n"] == 7 * 2  # rounds in each of the 2 executions
    assert pedantic["method"] == "batch"
    assert cases["test_small"]["extra"]["group"] == "sizes"


@pytest.mark.slow
def test_skip_and_only(project: Path) -> None:
    out = pytest_run(project, "-p", "no:benchmark", *FAST, "--steadybench-skip")
    assert out.returncode == 0 and "1 passed, 5 skipped" in out.stdout
    out = pytest_run(project, "-p", "no:benchmark", *FAST, "--steadybench-only",
                     "--steadybench-in-process", "-k", "small or plain")
    assert out.returncode == 0, out.stdout
    assert "1 passed" in out.stdout and "deselected" in out.stdout
    assert "level: runs (--steadybench-in-process)" in out.stdout


def test_pytest_benchmark_keeps_its_fixture(project: Path) -> None:
    if not peers.available():
        pytest.skip(peers.REASON)
    (project / "test_both.py").write_text(textwrap.dedent('''
        def work():
            return sum(range(100))

        def test_theirs(benchmark):
            assert type(benchmark).__module__.startswith("pytest_benchmark")
            benchmark(work)

        def test_ours(steadybench_benchmark):
            steadybench_benchmark(work)
    '''))
    out = pytest_run(project, *FAST, "test_both.py", "--benchmark-disable", env=peers.env())
    assert out.returncode == 0, out.stdout + out.stderr
    assert "test_ours:" in out.stdout and "test_theirs:" not in out.stdout


def test_xdist_workers_call_once_and_warn(project: Path) -> None:
    out = pytest_run(project, "-p", "no:benchmark", *FAST, "-k", "module_function",
                     "--steadybench-json", "r.json", env={"PYTEST_XDIST_WORKER": "gw0"})
    assert out.returncode == 0, out.stdout
    assert "not measured in pytest-xdist workers" in out.stdout
    assert not (project / "r.json").exists()


@pytest.mark.slow
def test_save_compare_and_fail_on_a_slowdown(project: Path) -> None:
    (project / "slow.py").write_text("import time\nDELAY = 0.002\n"
                                     "def work():\n    time.sleep(DELAY)\n")
    (project / "test_slow.py").write_text("import slow\n\ndef run():\n    slow.work()\n\n"
                                          "def test_sleep(benchmark):\n    benchmark(run)\n")
    db = str(project / "h.sqlite")
    args = ["-p", "no:benchmark", "test_slow.py", "--steadybench-processes", "4",
            "--steadybench-time", "0.05", "--steadybench-history", db]
    out = pytest_run(project, *args, "--steadybench-save", "base")
    assert out.returncode == 0 and "recorded #1 as 'base'" in out.stdout, out.stdout
    (project / "slow.py").write_text("import time\nDELAY = 0.003\n"
                                     "def work():\n    time.sleep(DELAY)\n")
    out = pytest_run(project, *args, "--steadybench-compare", "base", "--steadybench-fail-on",
                     "slower", "--steadybench-markdown", "cmp.md")
    assert out.returncode == 1, out.stdout
    assert "test_slow.py::test_sleep: slower" in out.stdout
    assert "regression: test_slow.py::test_sleep: slower" in out.stdout
    assert "| test_slow.py::test_sleep" in (project / "cmp.md").read_text()
    # the same comparison without --fail-on only reports
    out = pytest_run(project, *args, "--steadybench-compare", "base")
    assert out.returncode == 0 and "slower" in out.stdout


def test_a_broken_history_costs_one_line_not_the_outputs(project: Path) -> None:
    bad = project / "bad.sqlite"
    bad.write_bytes(b"garbage" * 500)
    out = pytest_run(project, "-p", "no:benchmark", *FAST, "-k", "module_function",
                     "--steadybench-history", str(bad), "--steadybench-autosave",
                     "--steadybench-json", "r.json")
    assert out.returncode == 1
    errors = [line for line in out.stdout.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "not a SQLite database or is corrupt" in errors[0]
    assert json.loads((project / "r.json").read_text())["benchmarks"]
    assert "Traceback" not in out.stdout + out.stderr


@pytest.mark.slow
def test_real_xdist_runs_the_tests_and_warns(project: Path) -> None:
    pytest.importorskip("xdist", reason="pytest-xdist is not installed (the test extra)")
    out = pytest_run(project, "-p", "no:benchmark", *FAST, "-n", "2", "--steadybench-json",
                     "r.json")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "6 passed" in out.stdout
    assert "not measured in pytest-xdist workers" in out.stdout
    assert "steadybench benchmarks" not in out.stdout and not (project / "r.json").exists()


def test_bad_options_are_a_usage_error(project: Path) -> None:
    out = pytest_run(project, "-p", "no:benchmark", "--steadybench-confidence", "2")
    assert out.returncode == 4  # pytest's usage error
    assert "steadybench: --steadybench-confidence must be between 0 and 1" in out.stderr
    assert "Traceback" not in out.stderr
    out = pytest_run(project, "-p", "no:benchmark", "--steadybench-time", "nan")
    assert out.returncode == 4 and "--steadybench-time" in out.stderr
