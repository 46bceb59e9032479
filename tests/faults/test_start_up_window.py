"""Issue 27 item 16: a signal at any moment of the start-up ends the command quietly.

Ctrl-C in the first 8-45 ms printed a ``KeyboardInterrupt`` traceback from imports made before
the entry point's guard was in place (4 of 40, from steadybench's own imports: the package's
``__init__`` imported :mod:`typing`, the entry point :mod:`signal` and so :mod:`enum`). Now the
guard is the first thing :func:`steadybench.entry.main` does, and nothing before it loads a
module. To interrupt at that earliest point without racing the clock, the child is started with
``STEADYBENCH_TEST_HOLD_START`` naming a pipe: it writes ``ready`` there just after the guard
and before any other import, then waits for the signal.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_input_startup import console_script

from child_process import default_sigint

ROOT = Path(__file__).resolve().parents[2]
STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}


def test_importing_the_entry_point_loads_no_other_module():
    code = ("import sys\n"
            "before = set(sys.modules)\n"
            "import steadybench.entry\n"
            "print(' '.join(sorted(set(sys.modules) - before)))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    assert done.returncode == 0, done.stderr
    loaded = done.stdout.split()
    assert [m for m in loaded if m.split(".")[0] != "steadybench"] == []
    assert set(loaded) <= {"steadybench", "steadybench.entry", "steadybench.lazy"}


def held_start(argv: list[str]) -> subprocess.Popen[str]:
    """Start ``argv`` held at the start-up point; return once it said ``ready``."""
    read, write = os.pipe()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), STEADYBENCH_TEST_HOLD_START=str(write))
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, pass_fds=(write,), preexec_fn=default_sigint)
    os.close(write)
    try:
        ready, _, _ = select.select([read], [], [], 60)
        said = os.read(read, 16) if ready else b""
    finally:
        os.close(read)
    if said != b"ready\n":
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"the child never said ready within 60 s ({said!r}): {err}")
    return proc


@pytest.mark.parametrize("how", ["console script", "python -m steadybench"])
@pytest.mark.parametrize("signum", list(STATUS), ids=[s.name for s in STATUS])
def test_a_signal_at_the_first_moment_exits_quietly(tmp_path, how, signum):
    argv = [sys.executable, str(console_script(tmp_path))] if how == "console script" else \
        [sys.executable, "-m", "steadybench"]
    proc = held_start([*argv, "exec", "--runs", "1", "--", "true"])
    proc.send_signal(signum)
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == STATUS[signum], err
    assert err == "" and out == ""


def test_without_the_hook_the_command_runs(tmp_path):
    # the hold is only for tests: the variable unset, the command runs as ever
    done = subprocess.run([sys.executable, str(console_script(tmp_path)), "--version"],
                          capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    assert done.returncode == 0 and "steadybench" in done.stdout, done.stderr
