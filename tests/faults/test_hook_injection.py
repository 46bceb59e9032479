"""Issue 27 item 6: a ``--param`` value is never shell code in a hook either.

``programs/hooks.py`` filled ``--prepare``, ``--conclude``, ``--setup`` and ``--cleanup`` with
``line.format(**params)`` and ran ``/bin/sh -c`` on the result, with or without ``--shell``:
``exec --param 'x=;touch F' --prepare 'echo {x}' -- echo '{x}'`` created F. A hook line is now
quoted like a ``--shell`` command line (:mod:`steadybench.programs.shellquote`), and bash's
``$'...'`` (which bash as ``/bin/sh`` reads as ANSI-C quoting) is a context of its own.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from steadybench.cli import main
from steadybench.errors import ConfigurationError
from steadybench.programs.commands import Command
from steadybench.programs.hooks import Hook

#: values that run ``touch FILE`` when pasted into some shell line unquoted; no commas
PAYLOADS = [
    ";touch FILE",
    "$(touch FILE)",
    "`touch FILE`",
    "'; touch FILE; '",
    '"; touch FILE; "',
    "a\ntouch FILE",
    "\\'; touch FILE; '",  # ends a $'...' string in bash: \' is an escaped quote there
    "\\'$(touch FILE)'",
    "x > /dev/null; touch FILE #",
]

#: hook lines with the placeholder in each quoting context, bash's $'...' included
TEMPLATES = ["echo {x}", "echo '{x}'", 'echo "{x}"', "echo pre{x}post",
             'echo "$(echo {x})"', "echo $'{x}'", "echo $'a{x}b' {x}"]

#: the six hook forms: each option once for all commands, and --prepare/--conclude per command
FORMS = {
    "prepare": lambda line: ["--prepare", line],
    "conclude": lambda line: ["--conclude", line],
    "setup": lambda line: ["--setup", line],
    "cleanup": lambda line: ["--cleanup", line],
    "prepare per command": lambda line: ["--prepare", line, "--prepare", line],
    "conclude per command": lambda line: ["--conclude", line, "--conclude", line],
}


def _params(tmp_path, tag: str) -> tuple[list[str], list]:
    """One parameter per payload (one value each, so one parameter set in all)."""
    args, targets = [], []
    for i, payload in enumerate(PAYLOADS):
        target = tmp_path / f"pwned-{tag}-{i}"
        targets.append(target)
        args += ["--param", f"x{i}={payload.replace('FILE', str(target))}"]
    return args, targets


def _line(template: str) -> str:
    """The template repeated once per payload parameter (x0, x1, ...)."""
    return "; ".join(template.replace("{x}", f"{{x{i}}}") for i in range(len(PAYLOADS)))


@pytest.mark.parametrize("shell", [False, True], ids=["argv", "shell"])
@pytest.mark.parametrize("form", list(FORMS))
def test_hook_payloads_do_not_run(tmp_path, form, shell, capsys):
    made = []
    for t, template in enumerate(TEMPLATES):
        params, targets = _params(tmp_path, f"{t}")
        used = " ".join(f"{{x{i}}}" for i in range(len(PAYLOADS)))
        commands = ["--cmd", f"true A {used}"]
        if "per command" in form:
            commands += ["--cmd", f"true B {used}"]
        code = main(["exec", "-q", "--runs", "1", "--no-correction", *(["--shell"] * shell),
                     *commands, *params, *FORMS[form](_line(template))])
        assert code == 0, (template, capsys.readouterr().err)
        made += [(template, t.name) for t in targets if t.exists()]
    assert made == []


def test_the_issues_reproduction(tmp_path, capsys):
    target = tmp_path / "F"
    code = main(["exec", "-q", "--runs", "1", "--no-correction", "--param",
                 f"x=;touch {target}", "--prepare", "echo {x}", "--", "echo", "{x}"])
    assert code == 0, capsys.readouterr().err
    assert not target.exists()


VALUES = ["plain", "a b", "it's", "\\", "\\'", "'", '"', "$(id)", "`id`", "a\nb", "é"]


@pytest.mark.parametrize("shell", ["/bin/sh", "bash"])
@pytest.mark.parametrize("template, before, after", [
    ("{x}", "", ""), ("'{x}'", "", ""), ('"{x}"', "", ""), ("$'{x}'", "", ""),
    ("$'<{x}>'", "<", ">"), ("pre{x}post", "pre", "post"),
])
def test_hook_values_reach_the_shell_literally(shell, template, before, after):
    """The rendered hook line, run by dash and by bash: printf gets each value byte for byte
    (a POSIX sh without ``$'...'`` reads a literal ``$`` before such a string, as it would in
    the line as written)."""
    if shutil.which(shell) is None:
        pytest.skip(f"no {shell} here")
    hook = Hook("--prepare", {"c": f"printf '%s\\0' {template}"})
    lines = [hook.render("c", {"x": v}) for v in VALUES]
    done = subprocess.run([shell, "-c", "\n".join(lines)], capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    got = done.stdout.decode().split("\0")[:-1]
    bash_reads_ansi = subprocess.run([shell, "-c", "printf %s $'a'"], capture_output=True,
                                     timeout=60).stdout == b"a"
    dollar = "" if bash_reads_ansi or "$'" not in template else "$"
    # without $'...' support every closed-and-reopened string adds its literal $
    expected = [dollar + before + v + after if "'" not in v and "\\" not in v or not dollar
                else dollar + before + v + dollar + after for v in VALUES]
    assert got == expected


@pytest.mark.parametrize("line", ["echo $'\\t' {x}", "echo $'\\'{x}'", "echo \\{x}",
                                  "echo ${x}", "echo `echo {x}`"])
def test_unquotable_hook_placeholders_are_refused_before_running(tmp_path, line, capsys):
    target = tmp_path / "ran"
    code = main(["exec", "--runs", "1", "--no-correction", "--param", "x=1",
                 "--setup", f"touch {target}", "--prepare", line, "--", "true", "{x}"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "cannot be quoted" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not target.exists()  # refused before the --setup hook ran
    with pytest.raises(ConfigurationError):
        Hook("--prepare", {"c": line}).render("c", {"x": "1"})


def test_shell_braces_that_name_no_parameter_stay(tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["exec", "-q", "--runs", "1", "--no-correction", "--param", "n=3",
                 "--setup", f"echo {{n}} ${{HOME:+set}} | awk '{{print $2}}' > {out}",
                 "--", "true", "{n}"])
    assert code == 0, capsys.readouterr().err
    assert out.read_text() == "set\n"


def test_raw_placeholder_is_shell_code_in_hooks(tmp_path, capsys):
    target = tmp_path / "made"
    code = main(["exec", "-q", "--runs", "1", "--no-correction", "--param",
                 f"x=&& touch {target}", "--setup", "true {x!raw}", "--", "true", "{x}"])
    assert code == 0, capsys.readouterr().err
    assert target.exists()


@pytest.mark.parametrize("template", ["echo $'{x}'", "echo $'a{x}b'", "echo \"$(echo $'{x}')\""])
def test_cmd_ansi_c_strings_under_bash(tmp_path, template):
    """``--shell --cmd`` lines render through the same lexer: run by bash (``/bin/sh`` on
    Fedora, RHEL and macOS) no payload runs inside ``$'...'``."""
    if shutil.which("bash") is None:
        pytest.skip("no bash here")
    targets = [tmp_path / f"pwned{i}" for i in range(len(PAYLOADS))]
    command = Command.from_line(template, shell=True)
    lines = [command.render({"x": p.replace("FILE", str(t))})[0]
             for p, t in zip(PAYLOADS, targets, strict=True)]
    done = subprocess.run(["bash", "-c", "\n".join(lines)], capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert [t.name for t in targets if t.exists()] == []


@pytest.mark.parametrize("line", ["echo \\{x}", "echo ${x}"])
def test_cmd_placeholder_after_backslash_is_one_line(line, capsys):
    """Was ``KeyError: 6`` (issue 27 item 14): the lexer stepped over the brace."""
    code = main(["exec", "--shell", "--runs", "1", "--param", "x=1", "--cmd", line])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "follows a backslash or a $" in err
