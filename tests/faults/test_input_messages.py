"""Item 15: error messages say what is wrong, and say it before anything is measured.

* ``--input /dev/zero`` said "no such file": devices are accepted now (documented in
  docs/programs.md); a FIFO, a socket or a folder is refused, saying what it is.
* A script whose ``#!`` interpreter is missing said "command not found": it names the
  interpreter now.
* A 2,000-byte NUL-filled stderr tail was pasted into the error line: control characters and
  escape sequences are removed and the quote is capped.
* ``demo --out /proc/sys`` measured for 14 s before failing: the folder is checked first.
* ``--json /proc/version`` said "No such file or directory": it says the folder takes no new
  files (``fileio.check_writable``).
* ``system check`` accepted presets that ``run`` rejects: it checks the countermeasures'
  options the same way now.
"""

from __future__ import annotations

import os
import socket
import stat
import sys
from pathlib import Path

import pytest

from steadybench.cli import main
from steadybench.errors import ConfigurationError
from steadybench.programs.process import CommandRunner, clean_text, excerpt


def run(args: list[str], capsys) -> tuple[int, str]:
    code = main(args)
    return code, capsys.readouterr().err


def error_lines(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith("error:")]


# ---------------------------------------------------------------------------- --input
def test_input_may_be_a_character_device(tmp_path, capsys):
    out = tmp_path / "out.txt"
    code, err = run(["exec", "-q", "--runs", "1", "--no-correction", "--input", "/dev/zero",
                     "--output", str(out), "--", "head", "-c", "5"], capsys)
    assert code == 0, err
    assert out.read_bytes() == b"\0" * 5


@pytest.mark.parametrize("kind, fragment", [
    ("fifo", "is a FIFO"),
    ("socket", "is a socket"),
    ("folder", "is a directory"),
    ("missing", "no such file"),
])
def test_input_that_cannot_be_standard_input_says_what_it_is(tmp_path, kind, fragment):
    path = tmp_path / kind
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        sock.close()
    elif kind == "folder":
        path.mkdir()
    with pytest.raises(ConfigurationError, match=fragment):
        CommandRunner(input_path=str(path))


def test_input_folder_on_the_command_line(tmp_path, capsys):
    code, err = run(["exec", "--runs", "1", "--input", str(tmp_path), "--", "true"], capsys)
    assert code == 2 and len(error_lines(err)) == 1 and "no such file" not in err, err


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_input_says_so(tmp_path):
    path = tmp_path / "secret"
    path.write_text("x")
    path.chmod(0)
    with pytest.raises(ConfigurationError, match="cannot read"):
        CommandRunner(input_path=str(path))


# ---------------------------------------------------------------------------- interpreters
def _script(tmp_path: Path, first_line: str) -> Path:
    path = tmp_path / "script.sh"
    path.write_text(f"{first_line}\necho hi\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.mark.parametrize("first_line, fragment", [
    ("#!/no/such/interp", "its interpreter /no/such/interp (on its #! line) does not exist"),
    ("#!/usr/bin/env no-such-interp-xyz",
     "its interpreter no-such-interp-xyz (on its #! line, through env) is not on PATH"),
    ("#!/etc", "its interpreter /etc (on its #! line) is not executable"),
])
def test_missing_interpreter_is_named(tmp_path, capsys, first_line, fragment):
    script = _script(tmp_path, first_line)
    code, err = run(["exec", "--runs", "1", "--", str(script)], capsys)
    assert code == 2
    (line,) = error_lines(err)
    assert fragment in line and "command not found" not in line, err


def test_missing_interpreter_under_shell_is_explained(tmp_path, capsys):
    # the shell says only "not found": the exit status 127 is explained
    script = _script(tmp_path, "#!/no/such/interp")
    code, err = run(["exec", "-q", "--shell", "--runs", "1", "--no-correction", "--",
                     str(script)], capsys)
    assert code == 1
    (line,) = error_lines(err)
    assert "exit status 127 (the shell found no such command, or the interpreter on its #! " \
        "line)" in line


def test_interpreter_vanishing_after_the_check_is_still_named(tmp_path):
    # the check at start and the one when the program cannot be started agree
    script = _script(tmp_path, "#!/bin/sh")
    runner = CommandRunner()
    argv = runner.resolve([str(script)])
    script.write_text("#!/no/such/interp\necho hi\n")
    with pytest.raises(ConfigurationError, match="its interpreter /no/such/interp"):
        runner.run(argv)


def test_script_without_a_shebang(tmp_path, capsys):
    script = tmp_path / "plain.sh"
    script.write_text("echo hi\n")
    script.chmod(0o755)
    code, err = run(["exec", "--runs", "1", "--no-correction", "--", str(script)], capsys)
    assert code == 2 and "needs a #! line" in err, err


# ---------------------------------------------------------------------------- stderr tails
def test_nul_filled_stderr_is_not_pasted_into_the_error_line(capsys):
    code, err = run(["exec", "-q", "--runs", "1", "--no-correction", "--", sys.executable, "-c",
                     "import sys; sys.stderr.write('\\0' * 2000 + '\\x1b[2J\\x1b]0;t\\x07' "
                     "+ 'x' * 5000 + '\\nlast words\\n'); sys.exit(3)"], capsys)
    assert code == 1
    (line,) = error_lines(err)
    assert "\0" not in err and "\x1b" not in err and "\x07" not in err
    assert line.endswith("last words") and "exit status 3" in line
    stderr_part = line.split("; stderr: ", 1)[1]
    assert len(stderr_part) <= 300


def test_clean_text_and_excerpt():
    assert clean_text("a\0b\x1b[31mc\x1b[0m\x9bd\re\tf") == "abcd\ne f"
    assert excerpt("\0" * 2000) == ""
    assert excerpt("\n".join(f"line {i}" for i in range(10)), max_lines=2) == "line 8 | line 9"
    long = excerpt("y" * 1000, max_chars=50)
    assert len(long) == 50 and long.startswith("…")


# ---------------------------------------------------------------------------- output folders
def test_demo_checks_its_folder_before_measuring(monkeypatch, capsys):
    import steadybench.cli.demo as demo

    def measured(*args, **kwargs):  # pragma: no cover - the point is that it is not reached
        raise AssertionError("measured before the folder was checked")

    monkeypatch.setattr(demo, "run_definitions", measured)
    code, err = run(["demo", "--out", "/proc/sys"], capsys)
    assert code == 2
    (line,) = error_lines(err)
    assert "/proc/sys" in line and "cannot create files in this folder" in line


def test_demo_out_that_is_a_file(tmp_path, capsys):
    path = tmp_path / "file"
    path.write_text("")
    code, err = run(["demo", "--out", str(path / "sub")], capsys)
    assert code == 2 and len(error_lines(err)) == 1, err


def test_json_into_proc_does_not_say_no_such_file(capsys):
    code, err = run(["exec", "--runs", "1", "--json", "/proc/version", "--", "true"], capsys)
    assert code == 2
    assert "No such file or directory" not in err


def test_system_check_refuses_what_run_refuses(tmp_path, capsys):
    from fake_machine import make_machine

    root = make_machine(tmp_path / "root")
    preset = tmp_path / "p.toml"
    preset.write_text('countermeasures = ["priority"]\n[priority]\nniceness = 99\n')
    code, err = run(["--root", str(root), "system", "check", "--interval", "0", "--preset",
                     str(preset)], capsys)
    assert code == 2 and "niceness must be an integer" in err, err
