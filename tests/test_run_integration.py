"""`steadybench run` with the other issues' parts: methods, processes, presets, flags."""

import json
import textwrap

import pytest

from steadybench.cli import main
from steadybench.model import CaseResult
from steadybench.model.estimate import Estimate
from steadybench.output.format import headline
from steadybench.processors import MachineStateFlagger

BENCH = textwrap.dedent("""
    import steadybench as sb

    @sb.benchmark(n=[50])
    def sort_reversed(n):
        data = list(range(n, 0, -1))
        return lambda: sorted(data)
""")


@pytest.fixture
def bench(tmp_path):
    path = tmp_path / "bench.py"
    path.write_text(BENCH)
    return path


def test_method_and_processes_through_the_cli(bench, tmp_path):
    out = tmp_path / "r.json"
    code = main(
        [
            "run",
            str(bench),
            "--method",
            "linefit",
            "--method-option",
            "points=5",
            "--processes",
            "2",
            "--runs",
            "20",
            "--json",
            str(out),
            "-q",
        ]
    )
    assert code == 0
    entry = json.loads(out.read_text())["benchmarks"][0]
    assert entry["method"] == "linefit" and len(entry["processes"]) == 2
    est = entry["estimate"]
    assert est["value"] > 0 and est["level"] == "executions" and est["n_executions"] == 2
    assert est["ci_low"] is not None and est["ci_high"] is not None
    assert entry["extra"]["fit"]["x_label"] == "executions"


QUICK_MANAGED = textwrap.dedent("""
    name = "managed-quick"
    base = "managed"
    [quiet]
    max_wait = 0.2
    [settle]
    max_wait = 0.2
""")


def test_managed_preset_on_this_machine_lists_what_it_skipped(bench, tmp_path, capsys):
    """On this machine (a VM without cpufreq or thermal files), the managed preset runs with the
    countermeasures it can apply and lists the others as skipped, with the reason. The waits
    for a quiet machine and for the boot to settle are shortened so the test stays fast."""
    preset = tmp_path / "quick.toml"
    preset.write_text(QUICK_MANAGED)
    out = tmp_path / "r.json"
    assert (
        main(["run", str(bench), "--preset", str(preset), "--runs", "5", "--json", str(out)]) == 0
    )
    err = capsys.readouterr().err
    assert "preset managed-quick: applied" in err
    machine = json.loads(out.read_text())["context"]["machine"]
    assert machine["preset"] == "managed-quick" and machine["fingerprint"]["cpu_count"] >= 1
    names = {a["name"] for a in machine["applied"]} | {s["name"] for s in machine["skipped"]}
    assert {"tune", "pin", "cooldown", "gc"} <= {n.split(":")[0] for n in names}
    for skip in machine["skipped"]:
        assert skip["reason"]


def test_unknown_preset_is_one_line(bench, capsys):
    assert main(["run", str(bench), "--preset", "no-such-preset"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:")


def case_with(freq, temp=None):
    case = CaseResult("b", "i")
    for i, f in enumerate(freq):
        values = {"wall_time": 1.0, "cpu_freq": f}
        if temp:
            values["temperature"] = temp[i]
        case.add_run("ok", values)
    return case


def test_machine_state_flagger_marks_slow_frequency_and_hot_runs():
    case = case_with([2400, 2400, 1800, 2390, 1200], temp=[50, 50, 50, 91, 50])
    MachineStateFlagger(frequency_tolerance=0.05, temperature_limit=90).process([case])
    flags = case.analyses["machine_flags"]
    assert flags == {"frequency_changed": [2, 4], "hot": [3]}
    assert any("2 run(s)" in w for w in case.warnings) and case.n == 5
    removing = case_with([2400, 1000, 2400])
    MachineStateFlagger(remove=True).process([removing])
    assert removing.n == 2 and removing.status[1] == "removed"
    steady = case_with([2400, 2400])
    MachineStateFlagger().process([steady])
    assert "machine_flags" not in steady.analyses and not steady.warnings


def test_headline_is_the_estimate_or_nothing():
    case = CaseResult("b", "i", stats={"mean": 2.0}, ci={"low": 1.9, "high": 2.1})
    assert headline(case) == (None, None)  # no estimate: no other statistic in its place
    case.estimate = Estimate(1.5, 1.2, 1.8, 0.95, level="executions", n_executions=3)
    assert headline(case) == (1.5, {"low": 1.2, "high": 1.8, "confidence": 0.95})
    case.estimate = Estimate.failed("no fit", method="linefit")
    assert headline(case) == (None, None)


def test_exec_with_a_preset_records_it(tmp_path):
    preset = tmp_path / "quick.toml"
    preset.write_text(QUICK_MANAGED)
    out = tmp_path / "e.json"
    assert (
        main(
            ["exec", "--preset", str(preset), "--runs", "3", "--json", str(out), "-q", "--", "true"]
        )
        == 0
    )
    assert json.loads(out.read_text())["context"]["machine"]["preset"] == "managed-quick"


def test_compare_warns_when_presets_or_machines_differ(bench, tmp_path, capsys):
    preset = tmp_path / "quick.toml"
    preset.write_text(QUICK_MANAGED)
    base, new = tmp_path / "base.json", tmp_path / "new.json"
    assert main(["run", str(bench), "--runs", "30", "--json", str(base), "-q",
                 "--preset", "baseline"]) == 0
    assert main(["run", str(bench), "--runs", "30", "--json", str(new), "-q",
                 "--preset", str(preset)]) == 0
    capsys.readouterr()
    out = tmp_path / "cmp.json"
    main(["compare", str(base), str(new), "--json", str(out)])
    warnings = json.loads(out.read_text())["warnings"]
    assert any("preset" in w and "baseline" in w and "managed-quick" in w for w in warnings)
    data = json.loads(new.read_text())
    data["environment"]["fingerprint"]["cpu_model"] = "Other CPU"
    data["context"]["machine"]["fingerprint"]["cpu_model"] = "Other CPU"
    new.write_text(json.dumps(data))
    main(["compare", str(base), str(new), "--json", str(out)])
    warnings = json.loads(out.read_text())["warnings"]
    assert any("CPU model" in w and "Other CPU" in w for w in warnings)
