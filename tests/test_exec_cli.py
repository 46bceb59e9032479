"""``steadybench exec`` end to end: real processes, files, one-line errors, Ctrl-C."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
import time

import pytest

from child_process import default_sigint
from steadybench.cli import main
from steadybench.output.results_io import load_results


def run_cli(args, capsys):
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.err


def test_exec_true_reports_a_corrected_mean_near_zero(tmp_path, capsys):
    out = tmp_path / "r.json"
    code, err = run_cli(["exec", "--runs", "30", "--json", str(out), "--", "true"], capsys)
    assert code == 0, err
    results = load_results(out)
    (case,) = results.cases
    raw = case.estimate.figure("raw_mean")
    startup = case.estimate.figure("startup")
    assert raw > 0 and startup > 0
    # the corrected mean is the raw one minus the start-up cost: zero for `true`, within a
    # few standard errors of the difference of two means
    cal = case.extra["calibration"]
    se = math.hypot(case.stats["stdev"] / math.sqrt(case.n), cal["stdev"] / math.sqrt(cal["runs"]))
    assert abs(case.stats["mean"]) <= 5 * se + 1e-5
    assert abs(case.stats["mean"]) < raw
    assert case.stats["mean"] == pytest.approx(raw - startup, abs=1e-12)
    assert case.extra["calibration"]["command"][-1].endswith("true")
    assert any("correction dominates" in w for w in case.warnings)
    assert "start-up cost subtracted" in err
    assert results.context["command_line"].startswith("steadybench")
    assert case.units["user_time"] == "s"
    assert set(case.metrics) >= {"wall_time", "wall_time_raw", "user_time", "sys_time",
                                 "max_rss", "exit_code"}
    assert results.environment["cpu_count"]


def test_exec_several_commands_params_and_outputs(tmp_path, capsys):
    j, c, m = tmp_path / "r.json", tmp_path / "r.csv", tmp_path / "r.md"
    code, err = run_cli(["exec", "--runs", "3", "--no-correction", "--cmd", "sleep {t}",
                         "--cmd", "true", "--name", "sleeper", "--param", "t=0.01,0.02",
                         "--json", str(j), "--csv", str(c), "--markdown", str(m)], capsys)
    # `true` has no {t}: the parameter set still applies (its value is unused there)
    assert code == 0, err
    results = load_results(j)
    labels = [case.label for case in results.cases]
    assert labels == ["sleeper [t=0.01]", "sleeper [t=0.02]", "true [t=0.01]", "true [t=0.02]"]
    slow = results.find("sleeper", t=0.02)
    assert slow.stats["mean"] > 0.015
    assert c.read_text() and m.read_text()


def test_exec_shell_mode_and_input(tmp_path, capsys):
    data = tmp_path / "in.txt"
    data.write_text("x\n" * 100)
    out = tmp_path / "r.json"
    code, err = run_cli(["exec", "--runs", "3", "--shell", "--input", str(data), "--json",
                         str(out), "--", "wc -l | grep -q 100"], capsys)
    assert code == 0, err
    case = load_results(out).cases[0]
    assert case.extra["shell"] is True
    assert case.extra["calibration"]["command"] == ["/bin/sh", "-c", ""]


@pytest.mark.parametrize("args, message, status", [
    (["--", "no-such-command-xyz"], "error: command not found: no-such-command-xyz", 2),
    ([], "error: no command given", 2),
    (["--", ""], "error: empty command", 2),
    (["--", "sleep", "{t}"], "error: placeholder {t}", 2),
    (["--param", "t=1", "--", "true"], "error: parameter 't' appears in no command", 2),
    (["--timeout", "-1", "--", "true"], "error: Invalid value for '--timeout': must be positive",
     2),
    (["--output", "/proc/no/such/dir/out.txt", "--", "true"],
     "error: --output /proc/no/such/dir/out.txt: cannot write", 2),
    (["--max-time", "nan", "--", "true"], "error: Invalid value for '--max-time'", 2),
])
def test_exec_bad_input_gives_one_line(args, message, status, capsys):
    code, err = run_cli(["exec", "--runs", "2", *args], capsys)
    assert code == status
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and lines[0].startswith(message), err
    assert "Traceback" not in err


def test_exec_failure_fails_with_stderr_and_keeps_results(tmp_path, capsys):
    out = tmp_path / "r.json"
    code, err = run_cli(["exec", "--runs", "3", "--json", str(out), "--cmd", "true",
                         "--cmd", "sh -c 'echo broken pipe dream >&2; exit 4'"], capsys)
    assert code == 1
    error_lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(error_lines) == 1
    assert "exit status 4" in error_lines[0] and "broken pipe dream" in error_lines[0]
    results = load_results(out)
    assert results.cases[0].n == 3 and not results.cases[0].errors
    assert results.cases[1].errors


def test_exec_ignore_failure(tmp_path, capsys):
    out = tmp_path / "r.json"
    # every other run fails: a flag file, not the PID's parity (started through the launcher,
    # consecutive commands can all get PIDs of one parity)
    flag = tmp_path / "failed-last"
    script = f'if [ -e {flag} ]; then rm {flag}; else touch {flag}; exit 1; fi'
    code, err = run_cli(["exec", "--runs", "3", "-i", "--no-correction", "--json", str(out),
                         "--", "sh", "-c", script], capsys)
    assert code == 0, err
    case = load_results(out).cases[0]
    assert case.n == 3
    assert case.count("failed") == case.extra["exit_statuses"].get("1", 0)


def test_exec_ignore_failure_when_every_run_fails_is_a_failure(tmp_path, capsys):
    out = tmp_path / "r.json"
    code, err = run_cli(["exec", "--runs", "3", "-i", "--no-correction", "--json", str(out),
                         "--", "false"], capsys)
    assert code == 1
    error_lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(error_lines) == 1 and "gave up after 100 failed runs (0 succeeded)" in err
    case = load_results(out).cases[0]
    assert case.n == 0 and case.errors


def test_exec_warnings_are_not_repeated(tmp_path, capsys):
    out = tmp_path / "r.json"
    code, err = run_cli(["exec", "--runs", "1", "--no-correction", "--json", str(out), "--",
                         "true"], capsys)
    assert code == 0, err
    assert err.count("one run only") == 1
    assert load_results(out).cases[0].warnings.count(
        "one run only: spread and confidence interval are undefined") == 1


def test_exec_timeout_message(tmp_path, capsys):
    out = tmp_path / "r.json"
    code, err = run_cli(["exec", "--runs", "2", "--timeout", "0.2", "--no-correction",
                         "--json", str(out), "--", "sleep", "20"], capsys)
    assert code == 1
    assert "timed out after 0.2 s" in err
    assert load_results(out).cases[0].errors


def test_exec_best_of_is_labelled_everywhere(tmp_path, capsys):
    out, md = tmp_path / "r.json", tmp_path / "r.md"
    code, err = run_cli(["exec", "--runs", "3", "--best-of", "2", "--json", str(out),
                         "--markdown", str(md), "--", "true"], capsys)
    assert code == 0, err
    case = load_results(out).cases[0]
    assert case.method == "exec (best of 2)"
    assert case.estimate.figure("label") == "best of 2 executions (smallest mean)"
    assert len(case.processes) == 2
    assert "lucky" in err
    assert "best of 2" in md.read_text()


def test_exec_processes_conflict(capsys):
    code, err = run_cli(["exec", "--processes", "2", "--best-of", "3", "--", "true"], capsys)
    assert code == 2 and "disagree" in err


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_ctrl_c_writes_partial_results_and_leaves_no_child(tmp_path):
    pids = tmp_path / "pids"
    out = tmp_path / "r.json"
    script = f"echo $$ >> {pids}; sleep 0.05; sleep 30 & echo $! >> {pids}; wait"
    # run the real entry point in its own process and interrupt it
    code = ("import sys; from steadybench.cli import main; "
            "sys.exit(main(sys.argv[1:]))")
    proc = subprocess.Popen([sys.executable, "-c", code, "exec", "--runs", "1000",
                             "--no-correction", "--timeout", "0.15", "-i", "-q",
                             "--json", str(out), "--", "sh", "-c", script],
                            stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    deadline = time.monotonic() + 120
    while not (pids.exists() and len(pids.read_text().split()) >= 6):  # 3 runs have started
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline, "the runs never started"
        time.sleep(0.05)  # polling, not a fixed wait
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    data = json.loads(out.read_text())
    assert data["interrupted"] is True
    assert data["benchmarks"][0]["status"] == "interrupted"
    assert len(data["benchmarks"][0]["runs"]["status"]) >= 2
    deadline = time.monotonic() + 30  # the killed children may take a moment to die
    while survivors := [p for p in map(int, pids.read_text().split()) if _alive(p)]:
        assert time.monotonic() < deadline, f"children left running: {survivors}"
        time.sleep(0.05)


def test_help_lists_the_commands(capsys):
    code = main(["--help"])
    out = capsys.readouterr().out
    assert code == 0
    for name in ("exec", "iters", "sweep"):
        assert f"  {name} " in out


def test_exec_commands_from_a_toml_file(tmp_path, capsys):
    f = tmp_path / "cmds.toml"
    f.write_text('[[command]]\nname = "quick"\nrun = "true"\n\n'
                 '[[command]]\nargs = ["sleep", "0.001"]\n')
    out = tmp_path / "r.json"
    code, err = run_cli(["exec", "--runs", "2", "--file", str(f), "--json", str(out)], capsys)
    assert code == 0, err
    assert [c.benchmark for c in load_results(out).cases] == ["quick", "sleep 0.001"]


@pytest.mark.parametrize("text, message", [
    ("", "no [[command]] tables"),
    ("[[command]]\nname = 'x'\n", "give exactly one of 'run' and 'args'"),
    ("[[command]]\nrun = 'true'\nshell = true\n", "unknown key(s) shell"),
    ("[[command]]\nargs = 'true'\n", "args must be a list of strings"),
    ("[[command]\n", "--file"),
    (b"\x89PNG\r\n\x1a\n\x00", "cannot read"),
])
def test_exec_bad_commands_file(text, message, tmp_path, capsys):
    f = tmp_path / "cmds.toml"
    f.write_bytes(text if isinstance(text, bytes) else text.encode())
    code, err = run_cli(["exec", "--file", str(f)], capsys)
    assert code == 2
    assert message in err.strip().splitlines()[-1]
