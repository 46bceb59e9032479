"""The command line: run, demo, --version/--help, and every bad input the issue lists."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import click
import pytest

from child_process import default_sigint
from steadybench import defaults
from steadybench.cli import cli, main

BENCH = textwrap.dedent("""
    import steadybench as sb

    @sb.benchmark(n=[10, 20])
    def sort_reversed(n):
        data = list(range(n, 0, -1))
        return lambda: sorted(data)

    @sb.benchmark
    def tiny():
        return lambda: None
""")


def write(tmp_path, text, name="bench.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def run_cli(*args):
    return main([str(a) for a in args])


def test_run_writes_every_format_and_n_equals_runs(tmp_path, capsys):
    """--runs N is per execution (pyperf's --values): K executions give K × N samples."""
    bench = write(tmp_path, BENCH)
    out = tmp_path / "out"
    out.mkdir()
    code = run_cli(
        "run",
        bench,
        "-p",
        3,
        "--runs",
        25,
        "--warmup",
        3,
        "--json",
        out / "r.json",
        "--xml",
        out / "r.xml",
        "--csv",
        out / "r.csv",
        "--markdown",
        out / "r.md",
    )
    assert code == 0
    data = json.loads((out / "r.json").read_text())
    assert [b["name"] for b in data["benchmarks"]] == ["sort_reversed", "sort_reversed", "tiny"]
    assert all(b["n"] == 75 and len(b["samples"]) == 75 for b in data["benchmarks"])
    assert all([p["n"] for p in b["processes"]] == [25] * 3 for b in data["benchmarks"])
    assert all(b["estimate"]["level"] == "executions" for b in data["benchmarks"])
    assert data["benchmarks"][0]["params"] == {"n": 10}
    assert all((out / f"r.{ext}").stat().st_size > 0 for ext in ("xml", "csv", "md"))
    assert "sort_reversed" in capsys.readouterr().err


@pytest.mark.slow
def test_select_stream_and_stop_options(tmp_path):
    bench = write(tmp_path, BENCH)
    out = tmp_path / "r.json"
    assert run_cli("run", bench, "-k", "tiny", "--runs", 1000, "--stream", "--json", out) == 0
    data = json.loads(out.read_text())
    assert [b["name"] for b in data["benchmarks"]] == ["tiny"]
    entry = data["benchmarks"][0]
    assert "samples" not in entry and entry["runs"] is None
    assert entry["n"] == defaults.PROCESSES * 1000
    assert entry["stats"]["median"] is None and entry["stats"]["mean"] > 0
    assert (
        run_cli(
            "run",
            bench,
            "-k",
            "sort*",
            "--target-cov",
            0.5,
            "--window",
            5,
            "--max-time",
            5,
            "--json",
            out,
            "-q",
        )
        == 0
    )
    for b in json.loads(out.read_text())["benchmarks"]:
        assert "CoV" in b["stop_reason"] or "elapsed" in b["stop_reason"]
    assert run_cli("run", bench, "-k", "tiny", "--target-ci", 0.5, "--json", out, "-q") == 0
    assert "CI" in json.loads(out.read_text())["benchmarks"][0]["stop_reason"]


@pytest.mark.parametrize(
    "make, args, message",
    [
        (None, ["run", "missing.py"], "no such file"),
        ("notes.txt", ["run", "{f}"], "not a Python file"),
        ("empty.py", ["run", "{f}"], "defines no benchmarks"),
        ("bench.py", ["run", "{f}", "-k", "zzz"], "selects no benchmark"),
        ("bench.py", ["run", "{f}", "--runs", "-3"], "must be positive"),
        ("bench.py", ["run", "{f}", "--runs", "many"], "is not a valid integer"),
        ("bench.py", ["run", "{f}", "--confidence", "1.5"],
         "'--confidence': must be between 0 and 1"),
        ("bench.py", ["run", "{f}", "--method", "bogus"], "bogus"),
        ("syntax.py", ["run", "{f}"], "syntax error"),
        ("raises.py", ["run", "{f}"], "error while loading: ZeroDivisionError"),
        ("bench.py", ["run", "{f}", "--nope"], "No such option"),
        (None, ["--root", "/definitely/not/here", "run", "x.py"], "not a directory"),
        ("bench.py", ["run", "{f}", "--max-time", "nan"], "'--max-time': 'nan' is not a finite"),
        (None, ["demo", "--max-time", "0"], "'--max-time': must be positive"),
        ("notes.txt", ["demo", "--out", "{f}/sub"], "cannot create the folder"),
        ("exits.py", ["run", "{f}"], "called sys.exit(3) while loading"),
        ("nul.py", ["run", "{f}"], "nul.py: syntax error: source code"),
        ("noparams.py", ["run", "{f}"], "benchmark 'e': parameter 'n' has no values"),
        ("multiline.py", ["run", "{f}", "--runs", "2", "-q"], "(ValueError: boom | second line)"),
    ],
)
def test_bad_input_one_line_no_traceback(tmp_path, capsys, make, args, message):
    contents = {
        "notes.txt": "hello",
        "empty.py": "x = 1\n",
        "bench.py": BENCH,
        "syntax.py": "def (:\n",
        "raises.py": "1 / 0\n",
        "exits.py": "import sys\nsys.exit(3)\n",
        "nul.py": "x = 1\0\n",
        "noparams.py": "import steadybench as sb\n@sb.benchmark(n=[])\ndef e(n):\n"
                       "    return lambda: None\n",
        "multiline.py": "import steadybench as sb\n@sb.benchmark\ndef bad():\n"
                        "    def f():\n        raise ValueError('boom\\nsecond line')\n"
                        "    return f\n",
    }
    f = write(tmp_path, contents[make], make) if make else tmp_path / "missing.py"
    code = run_cli(*[a.format(f=f) for a in args])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0
    assert len(err) == 1 and err[0].startswith("error: ") and message in err[0], err
    assert "Traceback" not in "\n".join(err)


def test_failing_benchmark_is_recorded_and_others_run(tmp_path, capsys):
    bench = write(
        tmp_path,
        BENCH
        + textwrap.dedent("""
        @sb.benchmark
        def always_fails():
            def boom():
                raise RuntimeError("disk on fire")
            return boom
    """),
    )
    out = tmp_path / "r.json"
    code = run_cli("run", bench, "--runs", 5, "--json", out)
    err = capsys.readouterr().err
    assert code == 1 and "error: 1 benchmark(s) failed: always_fails" in err
    data = json.loads(out.read_text())
    failed = [b for b in data["benchmarks"] if b["name"] == "always_fails"][0]
    assert failed["status"] == "failed" and failed["errors"] == ["RuntimeError: disk on fire"]
    assert failed["n"] == 0 and failed["stats"]["mean"] is None
    assert all(b["n"] == defaults.PROCESSES * 5
               for b in data["benchmarks"] if b["name"] != "always_fails")


#: a benchmark whose measured function sleeps 10 ms and, on its 30th call (calibration and
#: warm-up take a few, so samples exist by then), creates the file MARKER: the benchmark code
#: says it is sampling, in whichever process it runs (a worker or steadybench itself)
SAMPLING_BENCH = """
    import pathlib
    import time

    import steadybench as sb

    MARKER = {marker!r}
    calls = 0


    def sleep_and_count():
        global calls
        calls += 1
        if calls == 30:
            pathlib.Path(MARKER).touch()
        time.sleep(0.01)


    @sb.benchmark
    def slow():
        return sleep_and_count
"""

#: both ways a benchmark runs: worker processes (the default) and --in-process
RUN_MODES = pytest.mark.parametrize("mode", [[], ["--in-process"]], ids=["workers", "in-process"])


def wait_or_kill(proc: subprocess.Popen, timeout: float = 120.0) -> None:
    """Wait for the signalled child; one that does not end is killed (no stray process) and
    the test fails."""
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"steadybench did not end within {timeout} s of the signal")


def start_sampling_run(tmp_path, mode, timeout=120.0):
    """Start ``steadybench run`` on :data:`SAMPLING_BENCH` in a subprocess and return once the
    benchmark has taken samples (its marker file exists): no fixed sleep, so start-up time
    (imports, spawning workers on a loaded machine) cannot make the test race. Returns the
    process, the JSON path and the stderr path."""
    marker = tmp_path / "sampling"
    bench = write(tmp_path, SAMPLING_BENCH.format(marker=str(marker)))
    out, err = tmp_path / "r.json", tmp_path / "stderr.txt"
    exe = Path(sys.executable).with_name("steadybench")
    with open(err, "w") as err_file:  # a file, not a pipe: a full pipe cannot block the child
        proc = subprocess.Popen(
            [str(exe), "run", str(bench), *mode, "--runs", "100000", "--time-limit", "3600",
             "--json", str(out)],
            stdout=subprocess.DEVNULL, stderr=err_file, preexec_fn=default_sigint)
    deadline = time.monotonic() + timeout
    while not marker.exists():
        if proc.poll() is not None:
            pytest.fail(f"steadybench exited ({proc.returncode}) before sampling: "
                        f"{err.read_text()}")
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            pytest.fail(f"the benchmark took no samples within {timeout} s: {err.read_text()}")
        time.sleep(0.02)  # polling for the marker, not waiting a fixed time
    return proc, out, err


@RUN_MODES
def test_ctrl_c_writes_partial_results_and_exits_130(tmp_path, mode):
    proc, out, err_path = start_sampling_run(tmp_path, mode)
    proc.send_signal(signal.SIGINT)
    wait_or_kill(proc)
    err = err_path.read_text()
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    data = json.loads(out.read_text())
    assert data["interrupted"] is True
    entry = data["benchmarks"][0]
    assert entry["interrupted"] is True and entry["stop_reason"] == "interrupted"
    assert entry["n"] > 5 and entry["stats"]["mean"] >= 0.01


def test_version_and_help_on_every_command(capsys):
    assert run_cli("--version") == 0
    assert "steadybench" in capsys.readouterr().out
    ctx = click.Context(cli)
    names = cli.list_commands(ctx)  # the group imports command modules on demand
    assert {"run", "demo", "exec", "compare", "report", "system"} <= set(names)
    for name in ["", *names]:
        assert run_cli(*([name] if name else []), "--help") == 0, name
        assert "Usage:" in capsys.readouterr().out
        sub = cli.get_command(ctx, name) if name else None
        for child in getattr(sub, "commands", {}):
            assert run_cli(name, child, "--help") == 0


@pytest.mark.slow
def test_demo_writes_its_files_quickly(tmp_path, capsys):
    out = tmp_path / "demo"
    # one execution per case: what is checked here are the files; test_browser's demo
    # fixture runs two per case and checks the report drawn from them
    assert run_cli("demo", "--out", out, "--max-time", 0.1, "-p", 1) == 0
    for name in ("results.json", "results.xml", "results.csv", "results.md"):
        assert (out / name).stat().st_size > 0
    data = json.loads((out / "results.json").read_text())
    assert len(data["benchmarks"]) == 10 and not any(b["errors"] for b in data["benchmarks"])


def test_object_api_benchmarks_in_a_file_are_found(tmp_path):
    bench = write(
        tmp_path,
        """
        import steadybench as sb

        class Square(sb.Implementation):
            def setup(self, params):
                self.n = params["n"]

            def run(self):
                return self.n * self.n

        bench = sb.Benchmark("square")
        bench.add_parameters({"n": 3})
        bench.add_configuration(sb.Runner(sb.Runs(7)), Square("python"))
    """,
    )
    out = tmp_path / "r.json"
    assert run_cli("run", bench, "--json", out, "-q") == 0
    entry = json.loads(out.read_text())["benchmarks"][0]
    assert (entry["name"], entry["implementation"], entry["n"]) == ("square", "python", 7)


def test_env_root_variable(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("STEADYBENCH_ROOT", str(tmp_path / "nowhere"))
    assert run_cli("run", "x.py") != 0
    assert "not a directory" in capsys.readouterr().err
    os.environ.pop("STEADYBENCH_ROOT", None)


@RUN_MODES
def test_sigterm_writes_partial_results_and_exits_143(tmp_path, mode):
    proc, out, err_path = start_sampling_run(tmp_path, mode)
    proc.send_signal(signal.SIGTERM)
    wait_or_kill(proc)
    err = err_path.read_text()
    assert proc.returncode == 143, err
    assert "terminated" in err and "Traceback" not in err
    data = json.loads(out.read_text())
    assert data["interrupted"] is True
    entry = data["benchmarks"][0]
    assert entry["interrupted"] is True and entry["stop_reason"] == "interrupted"
    assert entry["n"] > 5 and entry["stats"]["mean"] >= 0.01


@pytest.mark.parametrize("command", [
    ["run", "{bench}", "--runs", "3"],
    ["exec", "--runs", "3", "--", "true"],
])
@pytest.mark.parametrize("option", ["--json", "--xml", "--csv", "--markdown", "--report"])
def test_unwritable_output_is_refused_before_measuring(tmp_path, capsys, command, option):
    bench = write(tmp_path, BENCH)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    started = time.monotonic()
    args = [a.format(bench=bench) for a in command]
    code = run_cli(*args[:1], option, blocker / "out", *args[1:])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "is not a directory" in err[0], err
    assert time.monotonic() - started < 5
    assert run_cli(*args[:1], option, tmp_path, *args[1:]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_output_folders_are_not_created(tmp_path):
    """Issue 27 item 18: a missing folder is refused before measuring, never created (as
    hyperfine and pytest-benchmark do)."""
    bench = write(tmp_path, BENCH)
    out = tmp_path / "new" / "deeper" / "r.json"
    assert run_cli("run", bench, "--runs", "3", "--json", out, "-q") == 2
    assert not (tmp_path / "new").exists()
