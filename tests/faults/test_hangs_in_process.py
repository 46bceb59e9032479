"""Issue 27 item 12: code that never returns is stopped at the hard time limit.

``--in-process --time-limit`` did not stop a benchmark that never returns (6 of 6: sleep, busy
loop, a C-level regular expression, a hang in the factory, signals blocked, a hang at import);
with ``-p 2`` a hang at import (done by the main process) was not stopped either; a child started
with ``setsid`` survived ``exec --time-limit``. Each case now ends with one clear line, a non-zero
exit and the results of the other benchmarks.

The programs run as subprocesses (the time limit uses SIGALRM in their main thread); the
subprocess timeouts are only a safety net for the old behaviour (a hang), not a measurement.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

HANGS = textwrap.dedent("""
    import re, signal, time
    import steadybench as sb

    @sb.benchmark
    def fast():
        return lambda: sum(range(100))

    @sb.benchmark
    def sleeper():
        return lambda: time.sleep(3600)

    def busy():
        while True:
            pass

    @sb.benchmark
    def busyloop():
        return busy

    @sb.benchmark
    def regex():
        return lambda: re.match(r"(a+)+$", "a" * 40 + "b")

    @sb.benchmark
    def factory():
        time.sleep(3600)
        return lambda: None

    def blocked():
        signal.pthread_sigmask(signal.SIG_BLOCK,
                               set(signal.Signals) - {signal.SIGKILL, signal.SIGSTOP})
        while True:
            pass

    @sb.benchmark
    def sigblocked():
        return blocked
""")


def steadybench(*args: str, cwd: Path, timeout: float = 240.0) -> subprocess.CompletedProcess:
    env = {**os.environ, "XDG_STATE_HOME": str(cwd / "state")}
    return subprocess.run([sys.executable, "-m", "steadybench", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_in_process_time_limit_stops_every_kind_of_hang(tmp_path):
    (tmp_path / "hangs.py").write_text(HANGS)
    done = steadybench("run", "--in-process", "--max-time", "0.5", "--time-limit", "1",
                       "--json", "r.json", "hangs.py", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    data = json.loads((tmp_path / "r.json").read_text())
    by_name = {b["name"]: b for b in data["benchmarks"]}
    assert by_name["fast"]["n"] > 0 and not by_name["fast"]["errors"]
    for name in ("sleeper", "busyloop", "regex", "factory", "sigblocked"):
        errors = by_name[name]["errors"]
        assert any(f"benchmark {name}: still running at the hard time limit of 1 s" in e
                   for e in errors), (name, errors)
    assert "still running at the hard time limit of 1 s" in done.stderr


def test_a_sleeping_hang_is_stopped_when_samples_count_cpu_time(tmp_path):
    # --clock thread_time stands still while the benchmark sleeps: the hard limit (and the
    # budget) timed by it never came, so this ran until the safety net
    (tmp_path / "nap.py").write_text(
        "import time\nimport steadybench as sb\n\n"
        "@sb.benchmark\ndef sleeper():\n    return lambda: time.sleep(3600)\n")
    done = steadybench("run", "--in-process", "--clock", "thread_time", "--max-time", "0.5",
                       "--time-limit", "1",
                       "--json", "r.json", "nap.py", cwd=tmp_path, timeout=60)
    assert done.returncode == 1, done.stderr
    (case,) = json.loads((tmp_path / "r.json").read_text())["benchmarks"]
    assert any("still running at the hard time limit of 1 s" in e for e in case["errors"])


def test_the_budget_and_the_limit_are_timed_on_the_wall_with_a_cpu_time_clock():
    import time

    from steadybench.clocks import budget_clock
    from steadybench.runner.runner import Runner
    from steadybench.testing import SimulatedClock

    assert budget_clock(time.thread_time_ns) is time.perf_counter_ns
    assert budget_clock(time.process_time_ns) is time.perf_counter_ns
    simulated = SimulatedClock()
    assert budget_clock(simulated) is simulated  # an injected clock times everything
    runner = Runner(clock=time.thread_time_ns)
    assert runner.clock is time.thread_time_ns and runner.wall_clock is time.perf_counter_ns


def test_a_hang_at_import_is_stopped_in_the_main_process(tmp_path):
    (tmp_path / "slow_import.py").write_text(
        "import time\nimport steadybench as sb\ntime.sleep(3600)\n\n"
        "@sb.benchmark\ndef fast():\n    return lambda: None\n")
    done = steadybench("run", "-p", "2", "--time-limit", "1", "--json", "r.json",
                       "slow_import.py", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines == ["error: slow_import.py: importing the file: still running at the hard "
                     "time limit of 1 s (its top level never returned)"]


def test_exec_time_limit_kills_a_child_that_left_the_group(tmp_path):
    pidfile = tmp_path / "pid"
    script = tmp_path / "escape.sh"
    script.write_text("#!/bin/sh\nsetsid sh -c 'echo $$ > \"$0\"; exec sleep 1000' \"$1\" &\n"
                      "wait\n")
    script.chmod(0o755)
    done = steadybench("exec", "-q", "--no-correction", "--time-limit", "1", "--json", "r.json",
                       "--", str(script), str(pidfile), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    pid = int(pidfile.read_text())
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        state = "gone"
    if state != "gone":
        assert os.getpgid(pid) == pid  # it had left the group: killed all the same
    assert state in ("gone", "Z", "X"), f"the setsid child {pid} is still running ({state})"


def test_deadline_interrupts_a_thread_that_blocks_every_signal(tmp_path):
    # in a child: pytest-timeout's own SIGALRM handler would keep the guard off here
    code = textwrap.dedent("""
        import signal
        import numpy  # its threads may take the process's signals
        from steadybench.runner.deadline import HardTimeLimit, deadline
        try:
            with deadline(0.2, "x"):
                signal.pthread_sigmask(signal.SIG_BLOCK,
                                       set(signal.Signals) - {signal.SIGKILL, signal.SIGSTOP})
                while True:
                    pass
        except HardTimeLimit as exc:
            print(exc)
        # the guard put the mask back: Ctrl-C is not left blocked
        print(signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, ()))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.splitlines() == ["x: still running at the hard time limit of 0.2 s",
                                        "False"], done.stderr


@pytest.mark.parametrize("mode", [[], ["--in-process"]], ids=["workers", "in-process"])
def test_a_benchmark_that_closes_standard_output_loses_nothing(tmp_path, mode):
    """Item 14: ``os.close(1)`` in an in-process benchmark took steadybench's own standard
    output: "error: Bad file descriptor" and no results file. Now fd 1 is put back."""
    (tmp_path / "close.py").write_text("import os\nimport steadybench as sb\n\n"
                                       "@sb.benchmark\ndef closer():\n"
                                       "    return lambda: os.close(1)\n\n"
                                       "@sb.benchmark\ndef fine():\n"
                                       "    return lambda: None\n")
    done = steadybench("run", *mode, "--runs", "3", "--json", "r.json", "close.py",
                       cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "error: Bad file descriptor" not in done.stderr
    assert "closed or replaced standard output (fd 1); steadybench put it back" in done.stderr
    data = json.loads((tmp_path / "r.json").read_text())
    assert {b["name"]: b["n"] > 0 for b in data["benchmarks"]} == {"closer": False,
                                                                    "fine": True}
    assert "fine" in done.stdout  # the table still reaches standard output


def test_the_deadline_ends_its_helper_before_sigalrm_is_default_again(monkeypatch):
    """A run under load was killed by SIGALRM (exit -14) between two cases: the default
    disposition came back while the helper thread could still signal. The default may come
    back only once the helper has ended."""
    import signal
    import threading

    from steadybench.runner import deadline as dl

    seen: list[tuple[object, bool]] = []
    real = signal.signal

    def spy(signum, handler):
        if signum == signal.SIGALRM:
            helpers = [t for t in threading.enumerate() if t.name == "steadybench-deadline"]
            seen.append((handler, any(t.is_alive() for t in helpers)))
        return real(signum, handler)

    # pytest-timeout may hold SIGALRM for this test: lend it to the deadline, then give it back
    held, timer = signal.getsignal(signal.SIGALRM), signal.setitimer(signal.ITIMER_REAL, 0.0)
    real(signal.SIGALRM, signal.SIG_DFL)
    try:
        monkeypatch.setattr(signal, "signal", spy)
        with dl.deadline(60.0, "a block"):
            assert signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, signal.SIG_IGN)
        assert seen[-1] == (signal.SIG_DFL, False)
        assert signal.getsignal(signal.SIGALRM) == signal.SIG_DFL
    finally:
        real(signal.SIGALRM, held if held is not None else signal.SIG_DFL)
        if timer[0] > 0:
            signal.setitimer(signal.ITIMER_REAL, *timer)
