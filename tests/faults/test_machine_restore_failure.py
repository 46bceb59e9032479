"""Issue 12, item 6: a failed restore aborted the run.

A cpufreq folder that vanished mid-run (a CPU taken offline) made the restore fail: exit 2, no
outputs, the remaining benchmarks skipped. Now the failure is reported, the journal keeps the
file not restored, the outputs are written, the other benchmarks run, the exit status is
non-zero and the message says to run ``steadybench system reset``.
"""

from __future__ import annotations

import pytest
from machine_faults import bench, governors, machine, preset, read_json, state

from fake_machine import CPU, put
from steadybench import Benchmark, Manager, Parameters, Runner
from steadybench.cli import main
from steadybench.errors import SystemControlError
from steadybench.model.implementation import CallableImplementation
from steadybench.runner.actions import Action, FileWriteAction
from steadybench.runner.runner import Stage
from steadybench.runner.stop import build_stop_condition

VANISHING = """
    import os, shutil
    import steadybench as sb

    FOLDER = {folder!r}

    def vanish():
        if os.path.isdir(FOLDER):  # CPU 3 goes offline while the first benchmark runs
            shutil.rmtree(FOLDER)

    @sb.benchmark
    def first():
        return vanish

    @sb.benchmark
    def second():
        return lambda: None
"""


@pytest.mark.parametrize("mode", [["--in-process"], ["-p", "2"]], ids=["in-process", "workers"])
def test_vanished_cpufreq_folder_does_not_abort_the_run(tmp_path, monkeypatch, capsys, mode):
    root = machine(tmp_path)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    folder = root / f"{CPU}/cpu3/cpufreq"
    script = bench(tmp_path, VANISHING.format(folder=str(folder)))
    out = tmp_path / "r.json"
    code = main(["--root", str(root), "run", str(script), "--preset", str(preset(tmp_path)),
                 *mode, "--runs", "3", "--json", str(out), "-q"])
    err = capsys.readouterr().err
    assert code != 0
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: machine settings not restored"), err
    assert "cpu3/cpufreq/scaling_governor" in err and "steadybench system reset" in err
    assert "results were written" in err
    data = read_json(out)  # the outputs were written, both benchmarks measured
    assert [(b["name"], b["n"] > 0) for b in data["benchmarks"]] == [("first", True),
                                                                     ("second", True)]
    assert any("could not restore" in w for w in data["benchmarks"][0]["warnings"])
    assert governors(root, 3) == ["powersave"] * 3  # everything else restored
    assert (root / f"{CPU}/cpufreq/boost").read_text() == "1\n"
    journals = list(state(tmp_path).glob("run-*.json"))
    assert len(journals) == 1  # kept, with only the file it could not restore
    assert [e["path"] for e in read_json(journals[0])["entries"]] == [
        f"/{CPU}/cpu3/cpufreq/scaling_governor"]
    # once the CPU is back, reset puts it back too
    put(root, f"{CPU}/cpu3/cpufreq/scaling_governor", "performance\n")
    assert main(["--root", str(root), "system", "reset"]) == 0
    assert governors(root) == ["powersave"] * 4 and not journals[0].exists()


class _Refuses(Action):
    """A benchmark-stage action that fails with one of our errors (as tuning may)."""

    def __call__(self, ctx) -> None:
        raise SystemControlError("another tuned run holds the tuning lock")


def test_manager_goes_on_when_machine_control_fails_around_a_case():
    """Worker mode lets an error of a benchmark-stage action out of the runner; it must fail
    that case only, not the run."""
    failing = Runner(build_stop_condition(runs=2), processes=2)
    failing.add_action(Stage.BEFORE_BENCHMARK, _Refuses())
    first = Benchmark("first").add_configuration(failing, CallableImplementation(
        lambda: None, "python"))
    second = Benchmark("second").add_configuration(Runner(build_stop_condition(runs=2)),
                                                   CallableImplementation(lambda: None, "python"))
    results = Manager(benchmarks=[first, second]).run()
    assert [c.benchmark for c in results.cases] == ["first", "second"]
    assert results.cases[0].errors == ["another tuned run holds the tuning lock"]
    assert results.cases[1].n == 2 and not results.cases[1].errors


def test_file_write_action_that_cannot_restore_warns(tmp_path):
    path = tmp_path / "setting"
    path.write_text("old\n")
    runner = Runner(build_stop_condition(runs=2))

    def vanish() -> None:
        if path.is_file():
            path.unlink()
            path.mkdir()  # cannot be written back

    runner.add_action(Stage.BEFORE_BENCHMARK, FileWriteAction(path, "new\n"))
    case = runner.execute(CallableImplementation(vanish, "w"), Parameters())
    assert case.n == 2
    assert any(f"could not restore {path}" in w and "'old'" in w for w in case.warnings)
