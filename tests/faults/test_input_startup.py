"""Item 14: Ctrl-C during start-up exits 130 quietly, without a KeyboardInterrupt traceback.

A Ctrl-C while Python was still importing the command line (click, the command modules) printed
a traceback, since the command's handlers were not in place yet. The entry point
(``steadybench.entry``, named in pyproject.toml and used by ``python -m steadybench``) now makes
SIGINT exit 130 quietly until they are.

To interrupt exactly "during start-up" without racing the clock, the child gets a stand-in for a
module the start-up imports, first on its path: it says ``ready`` and then blocks, so the test
sends SIGINT while the import is under way.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from child_process import default_sigint

ROOT = Path(__file__).resolve().parents[2]

#: a stand-in module: says it is being imported, then blocks until signalled
BLOCKING_MODULE = (
    "import os, sys\n"
    "sys.stdout.write('ready\\n'); sys.stdout.flush()\n"
    "os.read(os.pipe()[0], 1)\n"
)


def console_script(tmp_path: Path) -> Path:
    """The script pip generates from the ``steadybench`` entry point of pyproject.toml."""
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, func = scripts["steadybench"].partition(":")
    script = tmp_path / "steadybench"
    script.write_text(f"import sys\nfrom {module} import {func}\n"
                      f"if __name__ == '__main__':\n    sys.exit({func}())\n")
    return script


def interrupt_while_importing(tmp_path: Path, module: str, argv: list[str]
                              ) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` with ``module`` replaced by a blocking stand-in; SIGINT once it is being
    imported."""
    fake = tmp_path / "fake"
    package = fake / module
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(BLOCKING_MODULE)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(fake), str(ROOT / "src")]))
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, preexec_fn=default_sigint)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "ready\n", proc.stderr.read() if proc.stderr else ""
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def test_entry_point_is_the_guarded_one():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["steadybench"] == "steadybench.entry:main"


@pytest.mark.parametrize("how", ["console script", "python -m steadybench"])
def test_ctrl_c_while_importing_the_command_line(tmp_path, how):
    argv = [sys.executable, str(console_script(tmp_path))] if how == "console script" else \
        [sys.executable, "-m", "steadybench"]
    done = interrupt_while_importing(tmp_path, "click", [*argv, "--version"])
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr
    assert done.stderr == ""


def test_ctrl_c_while_a_command_imports_its_modules(tmp_path):
    # numpy is imported once the command line runs, as the command's modules load
    argv = [sys.executable, str(console_script(tmp_path)), "exec", "--runs", "1", "--", "true"]
    done = interrupt_while_importing(tmp_path, "numpy", argv)
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr


def test_sigint_ignored_at_start_stays_ignored():
    code = ("import signal, sys\n"
            "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
            "from steadybench.entry import main\n"
            "main(['--version'])\n"
            "assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr


def test_after_start_up_ctrl_c_raises_keyboard_interrupt_again():
    # the command's own handlers (partial results, restore the machine) need it
    code = ("import signal\n"
            "from steadybench.entry import main\n"
            "main(['--version'])\n"
            "assert signal.getsignal(signal.SIGINT) is signal.default_int_handler\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, preexec_fn=default_sigint)
    assert done.returncode == 0, done.stderr
