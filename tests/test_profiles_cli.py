"""``--profile`` on the commands: the profile is one extra execution after the measured ones,
so the estimate is exactly what it is without it; a profiler that fails is one line and the
measurement stands; the console shows the verdict first, then the function responsible.

The A/B tests inject deterministic variants (their times are a fixed function of the round)
and a fake profile backend that records when it runs, so "the estimate is unchanged" is checked
exactly, with no clock to race.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

from steadybench.ab.variants import Outcome
from steadybench.cli import main
from steadybench.profiles.model import SAMPLES, Frame, Profile, ProfileFailure


class DeterministicVariant:
    """A command-like variant whose k-th execution takes ``base · (1 + 0.01 · (k mod 5))``."""

    kind = "command"

    def __init__(self, label: str, base: float, log: list[str]) -> None:
        self.label, self.base, self.log = label, base, log
        self.description = f"fake {label}"
        self.cwd = None
        self.argv = ["fake", label]
        self.executions = 0

    def check(self) -> None:
        pass

    def execute(self) -> Outcome:
        self.log.append(f"execute {self.label}")
        value = self.base * (1 + 0.01 * (self.executions % 5))
        self.executions += 1
        return Outcome(value, runs=1)

    def probe_output(self) -> str:
        return ""


def _profile(extra: float) -> Profile:
    main_f = Frame("main", "/u/prog.py", 1)
    parse, render = Frame("parse", "/u/prog.py", 10), Frame("render", "/u/prog.py", 20)
    return Profile(SAMPLES, "s", "fake", (((main_f, parse), 500.0),
                                          ((main_f, render), 500.0 + extra)),
                   calls=10, total_per_call=1e-3, sample_count=int(1000 + extra))


@pytest.fixture
def fake_ab(monkeypatch: pytest.MonkeyPatch):
    log: list[str] = []
    variants = {"A": DeterministicVariant("A", 1.0e-3, log),
                "B": DeterministicVariant("B", 1.3e-3, log)}

    @contextlib.contextmanager
    def fake_variants(a, b, opts):
        for v in variants.values():
            v.executions = 0
        log.clear()
        yield variants["A"], variants["B"]

    failing: dict[str, ProfileFailure] = {}

    def fake_take_profile(backend, time_left):
        log.append(f"profile {backend.label}")
        if backend.label in failing:
            return failing[backend.label]
        return _profile(0.0 if backend.label == "A" else 600.0)

    monkeypatch.setattr("steadybench.cli.ab._variants", fake_variants)
    monkeypatch.setattr("steadybench.profiles.pair.take_profile", fake_take_profile)
    return log, failing


ARGS = ["ab", "a", "b", "-c", "--max-rounds", "16", "--min-rounds", "16", "--max-time", "0",
        "--seed", "4"]


def test_the_estimate_is_the_same_with_and_without_profile(fake_ab, tmp_path: Path,
                                                           capsys) -> None:
    log, _ = fake_ab
    plain, profiled = tmp_path / "plain.json", tmp_path / "profiled.json"
    assert main([*ARGS, "--json", str(plain)]) == 0
    assert not any(entry.startswith("profile") for entry in log)
    assert main([*ARGS, "--json", str(profiled), "--profile"]) == 0
    # the profiles come after every measured execution, one per variant, none in between
    assert log[-2:] == ["profile A", "profile B"]
    assert all(entry.startswith("execute") for entry in log[:-2])
    a, b = json.loads(plain.read_text()), json.loads(profiled.read_text())
    assert a["rounds"] == b["rounds"] and a["result"] == b["result"]
    assert a["verdict"] == b["verdict"] == "slower" and a["medians"] == b["medians"]
    assert "profiles" not in a and b["profiles"]["difference"]["ranked"][0]["function"] == \
        "render"
    out = capsys.readouterr().out
    second = out.split("verdict: B is slower", 2)[2]
    # after the verdict, the reason: the responsible function on the first row
    rows = [line for line in second.splitlines() if line.startswith("  ")]
    assert rows[0].split()[0] == "function" and rows[1].split()[0] == "render"


def test_a_failing_profiler_leaves_the_measurement(fake_ab, tmp_path: Path, capsys) -> None:
    log, failing = fake_ab
    failing["B"] = ProfileFailure("profile not taken: py-spy may not trace the process "
                                  "(ptrace not permitted); the measurement is not affected",
                                  "not-permitted")
    plain, profiled = tmp_path / "plain.json", tmp_path / "profiled.json"
    assert main([*ARGS, "--json", str(plain)]) == 0
    assert main([*ARGS, "--json", str(profiled), "--profile"]) == 0
    a, b = json.loads(plain.read_text()), json.loads(profiled.read_text())
    assert a["result"] == b["result"] and b["verdict"] == "slower"
    out = capsys.readouterr()
    assert "B: profile not taken: py-spy may not trace the process" in out.out
    assert "Traceback" not in out.out + out.err
    assert b["profiles"]["failures"] == {"B": failing["B"].message}
    assert b["profiles"]["difference"] is None


def test_profile_out_writes_files_other_tools_open(fake_ab, tmp_path: Path) -> None:
    out_dir = tmp_path / "profiles"
    assert main([*ARGS, "--profile", "--profile-out", str(out_dir), "-q"]) == 0
    names = sorted(p.name for p in out_dir.iterdir())
    assert names == ["A.collapsed", "A.speedscope.json", "B.collapsed", "B.speedscope.json"]
    doc = json.loads((out_dir / "B.speedscope.json").read_text())
    assert doc["profiles"][0]["type"] == "sampled"
    assert "render (/u/prog.py:20) 1100" in (out_dir / "B.collapsed").read_text()


def test_profile_is_refused_with_counts_and_fleets(capsys) -> None:
    assert main(["ab", "true", "false", "-c", "--measure", "instructions", "--profile"]) == 2
    assert "--profile" in capsys.readouterr().err


def test_ctrl_c_while_profiling_keeps_the_comparison(fake_ab, monkeypatch, tmp_path: Path,
                                                     capsys) -> None:
    def interrupted(backend, time_left):
        raise KeyboardInterrupt

    monkeypatch.setattr("steadybench.profiles.pair.take_profile", interrupted)
    out = tmp_path / "ab.json"
    assert main([*ARGS, "--json", str(out), "--profile"]) == 130
    doc = json.loads(out.read_text())
    assert doc["verdict"] == "slower" and len(doc["rounds"]) == 16
    assert "profile interrupted: not taken" in capsys.readouterr().err


PYTEST_PROJECT = '''\
def render(n):
    return sum(i % 11 for i in range(n))


def page():
    render(20000)


def test_page(benchmark):
    benchmark(page)


def test_lambda(benchmark):
    benchmark(lambda: render(100))
'''


@pytest.mark.slow
def test_pytest_plugin_profiles_each_benchmark(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    (tmp_path / "test_page.py").write_text(PYTEST_PROJECT)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS",
                                                            "PYTEST_XDIST_WORKER")}
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-p", "no:benchmark", "--steadybench-processes", "2",
                          "--steadybench-time", "0.02", "--steadybench-profile",
                          "--steadybench-json", "r.json"], cwd=tmp_path, capture_output=True,
                         text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "profile of test_page.py::test_page" in out.stdout
    doc = json.loads((tmp_path / "r.json").read_text())
    profiles = doc["context"]["profiles"]
    page = Profile.from_dict(profiles["test_page.py::test_page"])
    funcs = {f.frame.function: f for f in page.functions()}
    assert funcs["render"].share > 0.9 and funcs["render"].frame.where == "test_page.py:1"
    # a lambda cannot be sent to a fresh interpreter: one line instead of a profile
    assert "message" in profiles["test_page.py::test_lambda"]
    assert "Traceback" not in out.stdout


def test_history_compare_ranks_what_moved_between_profiled_records(tmp_path: Path,
                                                                  capsys) -> None:
    from steadybench.model.results import Results
    from steadybench.output.results_io import results_to_json
    from steadybench.profiles.pair import compare_profiles
    from test_plots_support import make_case

    pair = compare_profiles({"A": _profile(0.0), "B": _profile(600.0)}).to_dict()["profiles"]
    url = str(tmp_path / "h.sqlite")
    for side, name in (("A", "base.json"), ("B", "new.json")):
        case = make_case("convert")
        doc = Results(suite="s", cases=[case], context={"profiles": {case.label: pair[side]}})
        (tmp_path / name).write_text(results_to_json(doc))
        assert main(["history", "import", str(tmp_path / name), "--history-url", url]) == 0
    capsys.readouterr()
    assert main(["history", "compare", "#1", "#2", "--history-url", url]) in (0, 1)
    out = capsys.readouterr().out
    after = out.split("(A = BASE, B = NEW):", 1)[1].splitlines()
    rows = [line.split() for line in after if line.startswith("  ")]
    assert rows[0][0] == "function" and rows[1][0] == "render"


@pytest.mark.slow
def test_run_profile_is_an_extra_execution_never_merged(tmp_path: Path, capsys) -> None:
    bench = tmp_path / "bench_run.py"
    bench.write_text("from steadybench import benchmark\n\n\ndef render(n):\n"
                     "    return sum(i % 11 for i in range(n))\n\n\n@benchmark\n"
                     "def page():\n    return lambda: render(3000)\n")
    out = tmp_path / "r.json"
    assert main(["run", str(bench), "-p", "3", "--max-time", "0.02", "--profile",
                 "--profile-time", "0.3", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    (case,) = doc["benchmarks"]
    # three measured executions, as asked: the profiled one is not among them
    assert len(case["processes"]) == 3 and case["estimate"]["n_executions"] == 3
    profile = Profile.from_dict(doc["context"]["profiles"]["page"])
    assert profile.total_per_call == case["estimate"]["value"]  # scaled to the estimate
    assert profile.profiled_per_call is not None and profile.calls >= 1
    top = max(profile.functions(), key=lambda f: f.self_weight)
    assert top.frame.function == "render" and top.frame.where == "bench_run.py:4"
    said = capsys.readouterr()
    assert "profile of page:" in said.out + said.err
