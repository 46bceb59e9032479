"""CommandRunner: real processes, accounting, timeouts that kill the whole group, bad commands."""

from __future__ import annotations

import os
import sys
import time

import pytest

from steadybench.errors import ConfigurationError
from steadybench.programs.commands import (
    Command,
    check_placeholders,
    parameter_sets,
    parse_param,
    parse_param_range,
    substitute,
)
from steadybench.programs.process import CommandRunner, child_peak_rss

PY = sys.executable


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0); look at its state
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_true_succeeds_with_accounting():
    runner = CommandRunner()
    run = runner.run(runner.resolve(["true"]))
    assert run.ok and run.exit_code == 0 and not run.timed_out
    assert run.wall_ns > 0
    assert run.user_time >= 0 and run.sys_time >= 0


def test_exit_status_and_stderr_tail():
    runner = CommandRunner()
    run = runner.run(runner.resolve(["sh", "-c", "echo first >&2; echo boom >&2; exit 3"]))
    assert not run.ok
    assert run.exit_code == 3
    assert run.describe_failure() == "exit status 3"
    assert run.stderr_tail.splitlines()[-1] == "boom"


def test_killed_by_signal_is_reported():
    runner = CommandRunner()
    run = runner.run(runner.resolve(["sh", "-c", "kill -TERM $$"]))
    assert run.exit_code is None and run.signal == 15
    assert "SIGTERM" in run.describe_failure()


def test_cpu_time_comes_from_the_child():
    runner = CommandRunner()
    code = "import time\nt=time.process_time()\nwhile time.process_time()-t<0.3: pass"
    run = runner.run(runner.resolve([PY, "-c", code]))
    assert run.ok
    assert run.user_time + run.sys_time >= 0.25


def test_peak_rss_of_a_big_child_and_the_floor():
    import resource

    # the child must outgrow this process's own peak (the floor, which earlier tests of the
    # suite may have raised): only a larger figure is the child's own
    floor_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    size = max(400, floor_mib + 200)
    runner = CommandRunner()
    run = runner.run(runner.resolve([PY, "-c", f"x = bytearray({size} * 2**20); "
                                                "x[::4096] = b'1' * len(x[::4096])"]))
    assert run.ok
    assert run.max_rss is not None and run.max_rss >= (size - 10) * 2**20
    assert child_peak_rss(100, 200) is None
    assert child_peak_rss(300, 200) == 300


def test_stdin_closed_by_default_and_input_file(tmp_path):
    runner = CommandRunner(capture_stdout=True)
    run = runner.run(runner.resolve(["cat"]))
    assert run.ok and run.stdout == ""
    data = tmp_path / "in.txt"
    data.write_text("hello\n")
    run = CommandRunner(capture_stdout=True, input_path=str(data)).run(["/bin/cat"])
    assert run.stdout == "hello\n"


def test_output_discarded_or_appended(tmp_path):
    out = tmp_path / "out.txt"
    runner = CommandRunner(output_path=str(out))
    for _ in range(2):
        runner.run(runner.resolve(["echo", "line"]))
    assert out.read_text() == "line\nline\n"
    assert CommandRunner().run(["/bin/echo", "x"]).stdout is None


def test_shell_mode_runs_a_command_line():
    runner = CommandRunner(shell=True, capture_stdout=True)
    argv = runner.resolve(["echo a && echo b"])
    assert argv[:2] == ["/bin/sh", "-c"]
    assert runner.run(argv).stdout == "a\nb\n"


def test_timeout_kills_the_whole_process_group(tmp_path):
    pids = tmp_path / "pids"
    script = f"sleep 30 & echo $! > {pids}; echo $$ >> {pids}; wait"
    runner = CommandRunner(timeout=0.3)
    start = time.monotonic()
    run = runner.run(runner.resolve(["sh", "-c", script]))
    assert time.monotonic() - start < 10
    assert run.timed_out and not run.ok
    assert run.describe_failure() == "timed out"
    for pid in map(int, pids.read_text().split()):
        deadline = time.monotonic() + 5
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not _alive(pid), f"process {pid} survived the timeout"


def test_background_children_are_killed_after_a_normal_exit(tmp_path):
    pids = tmp_path / "pids"
    runner = CommandRunner()
    run = runner.run(runner.resolve(["sh", "-c", f"sleep 30 & echo $! > {pids}"]))
    assert run.ok
    pid = int(pids.read_text())
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _alive(pid)


@pytest.mark.parametrize("argv, message", [
    ([], "empty command"),
    ([""], "empty command"),
    (["no-such-program-xyz"], "command not found: no-such-program-xyz"),
    (["/nonexistent/prog"], "command not found: /nonexistent/prog"),
])
def test_bad_commands(argv, message):
    with pytest.raises(ConfigurationError, match=message):
        CommandRunner().resolve(argv)


def test_not_executable(tmp_path):
    f = tmp_path / "script.sh"
    f.write_text("#!/bin/sh\necho hi\n")
    with pytest.raises(ConfigurationError, match="not executable"):
        CommandRunner().resolve([str(f)])
    with pytest.raises(ConfigurationError, match="not executable"):
        CommandRunner().resolve([str(tmp_path)])


def test_bad_runner_settings(tmp_path):
    with pytest.raises(ConfigurationError, match="timeout"):
        CommandRunner(timeout=0)
    with pytest.raises(ConfigurationError, match="no such file"):
        CommandRunner(input_path=str(tmp_path / "missing"))


# ---------------------------------------------------------------------------- templates
def test_placeholders_and_substitution():
    cmd = Command.from_line("sort -k {key} {{literal}} {file}")
    assert cmd.placeholders() == ["key", "file"]
    assert cmd.render({"key": 2, "file": "a.txt"}) == ["sort", "-k", "2", "{literal}", "a.txt"]
    with pytest.raises(ConfigurationError, match=r"placeholder \{file\}.*no value"):
        cmd.render({"key": 2})
    assert substitute("{a}{a}", {"a": 1}) == "11"


def test_command_names_and_shell_lines():
    assert Command.from_args(["echo", "a b"]).name == "echo 'a b'"
    assert Command.from_line("echo 'a b' | wc", shell=True).template == ("echo 'a b' | wc",)
    with pytest.raises(ConfigurationError, match="empty command"):
        Command.from_line("   ")
    with pytest.raises(ConfigurationError, match="cannot parse"):
        Command.from_line("echo 'unbalanced")


def test_params_and_ranges():
    assert parse_param("n=1,2,4") == ("n", [1, 2, 4])
    assert parse_param("mode=fast,slow") == ("mode", ["fast", "slow"])
    assert parse_param("x=0.5") == ("x", [0.5])
    assert parse_param_range("n=1:10:3") == ("n", [1, 4, 7, 10])
    assert parse_param_range("n=2:5") == ("n", [2, 3, 4, 5])
    assert parse_param_range("t=0.1:0.3:0.1") == ("t", [0.1, 0.2, 0.3])
    for bad in ("n", "=1,2", "n=", "n=1,,2", "1n=3"):
        with pytest.raises(ConfigurationError):
            parse_param(bad)
    for bad in ("n=1", "n=5:1", "n=1:5:0", "n=a:b", "n=1:5:-1"):
        with pytest.raises(ConfigurationError):
            parse_param_range(bad)


def test_parameter_sets_are_the_cartesian_product():
    sets = parameter_sets([("a", [1, 2]), ("b", ["x", "y", "z"])])
    assert len(sets) == 6
    assert sets[0] == {"a": 1, "b": "x"} and sets[-1] == {"a": 2, "b": "z"}
    assert parameter_sets([]) == [{}]
    with pytest.raises(ConfigurationError, match="more than once"):
        parameter_sets([("a", [1]), ("a", [2])])


def test_check_placeholders():
    cmds = [Command.from_line("sleep {t}")]
    check_placeholders(cmds, ["t"])
    with pytest.raises(ConfigurationError, match=r"\{t\}.*no value"):
        check_placeholders(cmds, [])
    with pytest.raises(ConfigurationError, match="appears in no command"):
        check_placeholders(cmds, ["t", "unused"])
    check_placeholders([Command.from_line("prog {iters}")], [], reserved=["iters"])
