"""Helpers of the machine-settings fault tests (``test_machine_*.py``, issue 12 items 1-7).

Everything runs against fake sys/proc trees (``fake_machine.make_machine``) with the state
directory in the test's temporary folder; never the real /sys. Children that a test signals are
started with SIGINT at its default (``child_process.default_sigint``) and the test waits for a
marker file they create, never for a fixed time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from child_process import default_sigint
from fake_machine import CPU, make_machine

GOV = f"{CPU}/cpu{{n}}/cpufreq/scaling_governor"
STEADYBENCH = str(Path(sys.executable).with_name("steadybench"))
#: generous bounds that only end a test gone wrong; no test waits for them to pass
DEADLINE_S = 120.0

#: a benchmark that writes ``{marker}`` once it is measuring and runs until stopped. The bench
#: file starts a thread, as a tuned run has several (issue 12, item 1: signals then reach a
#: thread other than the one restoring)
SAMPLING = textwrap.dedent("""
    import os, threading, time
    import steadybench as sb

    threading.Thread(target=threading.Event().wait, daemon=True).start()
    MARK = {marker!r}
    RELEASE = {release!r}

    def work():
        if not os.path.exists(MARK):
            open(MARK, "w").close()
        if RELEASE:
            while not os.path.exists(RELEASE):
                time.sleep(0.002)
        time.sleep(0.001)

    @sb.benchmark
    def tuned():
        return work
""")


def machine(tmp_path: Path, name: str = "m", **kwargs) -> Path:
    """A fake machine (4 CPUs, governor powersave, boost on) under ``tmp_path/name``."""
    return make_machine(tmp_path / name, **kwargs)


def state(tmp_path: Path) -> Path:
    """The steadybench state directory the children use (``$XDG_STATE_HOME/steadybench``)."""
    return tmp_path / "state" / "steadybench"


def child_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ, XDG_STATE_HOME=str(tmp_path / "state"))
    env.pop("STEADYBENCH_ROOT", None)
    env.update(extra)
    return env


def preset(tmp_path: Path, governor: str | None = None, name: str = "tune") -> Path:
    """A preset file with only the tune countermeasure (optionally naming the governor)."""
    path = tmp_path / f"{name}.toml"
    text = 'countermeasures = ["tune"]\n'
    if governor:
        text += f'[tune]\ngovernor = "{governor}"\n'
    path.write_text(text)
    return path


def bench(tmp_path: Path, text: str, name: str = "bench.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def sampling_bench(tmp_path: Path, name: str = "bench.py",
                   release: Path | None = None) -> tuple[Path, Path]:
    """The :data:`SAMPLING` benchmark and its marker file."""
    marker = tmp_path / f"{name}.sampling"
    text = SAMPLING.format(marker=str(marker), release=str(release) if release else "")
    return bench(tmp_path, text, name), marker


def start(args: list[str], env: dict[str, str], stderr: Path) -> subprocess.Popen:
    """Start ``steadybench ARGS`` with SIGINT at its default, stderr to a file (a full pipe
    cannot block the child)."""
    with open(stderr, "w") as err:
        return subprocess.Popen([STEADYBENCH, *args], stdout=subprocess.DEVNULL, stderr=err,
                                env=env, preexec_fn=default_sigint)


def wait_for(condition, proc: subprocess.Popen, what: str, stderr: Path) -> None:
    """Poll until ``condition()`` holds (a marker the child writes): fail if the child exits
    first or the generous deadline passes."""
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        if proc.poll() is not None:
            pytest.fail(f"steadybench exited ({proc.returncode}) before {what}: "
                        f"{stderr.read_text()}")
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            pytest.fail(f"no {what} within {DEADLINE_S} s: {stderr.read_text()}")
        time.sleep(0.01)


def wait_or_kill(proc: subprocess.Popen, stderr: Path) -> int:
    """The child's exit status; one that does not end is killed and the test fails."""
    try:
        return proc.wait(timeout=DEADLINE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"steadybench did not end: {stderr.read_text()}")


def run_journals(tmp_path: Path) -> list[str]:
    folder = state(tmp_path)
    return sorted(p.name for p in folder.glob("*.json")) if folder.exists() else []


def governors(root: Path, cpus: int = 4) -> list[str]:
    return [(root / GOV.format(n=n)).read_text().strip() for n in range(cpus)]


def read_json(path: Path) -> dict:
    return json.loads(path.read_text())
