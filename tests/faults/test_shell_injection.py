"""Item 19: with ``--shell``, a ``--param`` value is never shell code.

``--cmd 'echo {x}' --param 'x=$(touch pwned)'`` ran ``touch``, in the TOML ``args`` form too.
Values are now quoted for the place their placeholder stands in (outside quotes, in single or
double quotes, inside ``$(...)``); backquotes and ``${...}`` are refused; ``{x!raw}`` is the
explicit way to insert shell code. Every payload below must reach the command as its literal
text, and the file it tries to create must not exist.
"""

from __future__ import annotations

import subprocess

import pytest

from steadybench.cli import main
from steadybench.errors import ConfigurationError
from steadybench.programs.commands import PLACEHOLDER, Command
from steadybench.programs.shellquote import (
    AFTER_ANSI_ESCAPE,
    ANSI,
    BACKQUOTE,
    BRACE,
    COMMENT,
    DOUBLE,
    HEREDOC,
    PLAIN,
    SINGLE,
    placeholder_contexts,
)

#: payloads that run ``touch FILE`` when pasted into a shell line unquoted (FILE substituted);
#: no commas, which separate --param values
PAYLOADS = [
    "$(touch FILE)",
    ";touch FILE",
    "`touch FILE`",
    "a|touch FILE",
    "a&&touch FILE",
    "'; touch FILE; '",
    '"; touch FILE; "',
    "\\\"; touch FILE; \\\"",
    "$(touch FILE)'\"",
    "a\ntouch FILE",
    "x > /dev/null; touch FILE #",
]

#: shell lines with the placeholder in each quoting context
TEMPLATES = [
    "printf '%s\\n' {x}",
    "printf '%s\\n' '{x}'",
    "printf '%s\\n' \"{x}\"",
    "printf '%s\\n' \"$(printf '%s' {x})\"",
    "printf '%s\\n' \"$(printf '%s' \"{x}\")\"",
    "printf '%s\\n' pre{x}post",
]


def _payload(template: str, target) -> str:
    return template.replace("FILE", str(target))


@pytest.mark.parametrize("template", TEMPLATES)
def test_cmd_payloads_do_not_run(tmp_path, template, capsys):
    out = tmp_path / "out.txt"
    targets = [tmp_path / f"pwned{i}" for i in range(len(PAYLOADS))]
    values = [_payload(p, t) for p, t in zip(PAYLOADS, targets)]
    for value in values:  # one exec per value: a --param would split values at commas
        code = main(["exec", "-q", "--shell", "--runs", "1", "--no-correction", "--output",
                     str(out), "--cmd", template, "--param", f"x={value}"])
        assert code == 0, capsys.readouterr().err
    assert [t.name for t in targets if t.exists()] == []
    printed = out.read_text()
    assert all(value.strip() in printed for value in values)


@pytest.mark.parametrize("form", ["run", "args"])
def test_commands_file_payloads_do_not_run(tmp_path, form, capsys):
    target = tmp_path / "pwned"
    entry = 'run = "echo {x}"' if form == "run" else 'args = ["echo", "{x}"]'
    commands = tmp_path / "commands.toml"
    commands.write_text(f"[[command]]\n{entry}\n")
    for payload in PAYLOADS:
        code = main(["exec", "-q", "--shell", "--runs", "1", "--no-correction", "--file",
                     str(commands), "--param", f"x={_payload(payload, target)}"])
        assert code == 0, capsys.readouterr().err
        assert not target.exists(), payload


def test_after_double_dash_too(tmp_path, capsys):
    target = tmp_path / "pwned"
    code = main(["exec", "-q", "--shell", "--runs", "1", "--no-correction", "--param",
                 f"x=$(touch {target})", "--", "echo", "{x}"])
    assert code == 0, capsys.readouterr().err
    assert not target.exists()


def test_iters_values_are_quoted_too(tmp_path, capsys):
    target = tmp_path / "pwned"
    main(["iters", "-q", "--shell", "--runs", "3", "--min-points", "3", "--param",
          f"x=;touch {target}", "--", "echo BATCHTIME: 0.001 {x} {iters}"])
    capsys.readouterr()
    assert not target.exists()


def test_raw_placeholder_inserts_shell_code(tmp_path, capsys):
    target = tmp_path / "made"
    code = main(["exec", "-q", "--shell", "--runs", "1", "--no-correction", "--cmd",
                 "true {x!raw}", "--param", f"x=&& touch {target}"])
    assert code == 0, capsys.readouterr().err
    assert target.exists()


@pytest.mark.parametrize("template", ["echo `echo {x}`", "echo ${x:-{x}}",
                                      "echo \"`echo {x}`\"", "cat <<E\n{x}\nE"])
def test_placeholder_where_no_quoting_holds_is_refused(template, capsys):
    code = main(["exec", "--shell", "--runs", "1", "--cmd", template, "--param", "x=1"])
    err = capsys.readouterr().err
    assert code == 2
    assert "cannot be quoted for the shell" in err and "{x!raw}" in err


def test_without_shell_values_stay_one_argument(tmp_path, capsys):
    out = tmp_path / "out.txt"
    value = f"$(touch {tmp_path / 'pwned'}) a b"
    code = main(["exec", "-q", "--runs", "1", "--no-correction", "--output", str(out),
                 "--cmd", "printf %s {x}", "--param", f"x={value}"])
    assert code == 0, capsys.readouterr().err
    assert out.read_text() == value and not (tmp_path / "pwned").exists()


def test_placeholder_in_a_comment(tmp_path, capsys):
    """Found by benchmarks/fault_matrix.py: in ``echo {x} # '{x}'`` the second placeholder
    stands in a comment; quoted as plain text, a value with a line break ended the comment and
    its second line ran. In a comment a value is inert unless it has a line break: refused."""
    target = tmp_path / "pwned"
    out = tmp_path / "out.txt"
    code = main(["exec", "-q", "--shell", "--runs", "1", "--no-correction", "--output",
                 str(out), "--cmd", "echo {x} # '{x}'", "--param", f"x=a\ntouch {target}"])
    assert code == 2 and not target.exists()
    assert "stands in a shell comment" in capsys.readouterr().err
    code = main(["exec", "-q", "--shell", "--runs", "1", "--no-correction", "--output",
                 str(out), "--cmd", "echo {x} # '{x}'", "--param", f"x=$(touch {target})"])
    assert code == 0 and not target.exists()
    assert out.read_text().strip() == f"$(touch {target})"


# ---------------------------------------------------------------------------- the lexer
@pytest.mark.parametrize("line, expected", [
    ("a {x} b", [PLAIN]),
    ("a '{x}' \"{x}\"", [SINGLE, DOUBLE]),
    ("a \"it's {x}\"", [DOUBLE]),
    ("a 'say \"{x}\"'", [SINGLE]),
    ("a \\'{x}", [PLAIN]),
    ("a $(b '{x}' \"{x}\" {x}) {x}", [SINGLE, DOUBLE, PLAIN, PLAIN]),
    ("a \"$(b {x})\"", [PLAIN]),
    ("a \"$(b (c) {x})\" {x}", [PLAIN, PLAIN]),
    ("a `b {x}` {x}", [BACKQUOTE, PLAIN]),
    ("a ${y:-{x}} {x}", [BRACE, PLAIN]),
    ("a {{x}} {x}", [PLAIN]),
    ("a # '{x}\nb '{x}'", [COMMENT, SINGLE]),
    ("a#{x} # {x}", [PLAIN, COMMENT]),
    ("cat <<EOF\n{x}\nEOF\necho {x}", [HEREDOC, PLAIN]),
    ("cat <<-'E' && echo '{x}'\n\t{x}\n\tE\n{x}", [SINGLE, HEREDOC, PLAIN]),
    ("cat <<A <<B\n{x}\nA\n{x}\nB\n{x}", [HEREDOC, HEREDOC, PLAIN]),
    ("cat <<<{x}", [PLAIN]),
    ("a $'{x}' \"$'{x}'\" {x}", [ANSI, DOUBLE, PLAIN]),
    ("a $'\\n' {x}", [AFTER_ANSI_ESCAPE]),
])
def test_placeholder_contexts(line, expected):
    contexts = placeholder_contexts(line, PLACEHOLDER)
    found = [contexts[m.start()] for m in PLACEHOLDER.finditer(line) if m.group(1)]
    assert found == expected


NASTY = ["plain", "", "a b", "it's", 'say "hi"', "$HOME", "`id`", "$(id)", "\\", "\\'",
         "a\nb", "tab\there", "*", "~", "--", "-n", "'", '"', "!x", "{}", "é ü"]


@pytest.mark.parametrize("template, before, after", [
    ("{x}", "", ""), ("'{x}'", "", ""), ('"{x}"', "", ""), ('pre"{x}"post', "pre", "post"),
    ("'<'{x}'>'", "<", ">"), ('"$(printf %s {x})"', "", ""),
    ("\"$(printf %s '{x}')\"", "", ""),
])
def test_every_value_reaches_the_shell_literally(template, before, after):
    """Round trip through the real /bin/sh: what printf prints is the value, byte for byte."""
    lines = [Command.from_line(f"printf '%s\\0' {template}", shell=True).render({"x": v})[0]
             for v in NASTY]
    done = subprocess.run(["/bin/sh", "-c", "\n".join(lines)], capture_output=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    got = done.stdout.decode().split("\0")[:-1]
    # command substitution drops trailing newlines, as the shell always does
    trim = "$(" in template
    assert got == [before + (v.rstrip("\n") if trim else v) + after for v in NASTY]


def test_unquotable_context_is_a_configuration_error():
    with pytest.raises(ConfigurationError, match="backquotes"):
        Command.from_line("echo `echo {x}`", shell=True).render({"x": "1"})
    # the raw form is allowed anywhere
    assert Command.from_line("echo `echo {x!raw}`", shell=True).render({"x": "1"}) == \
        ["echo `echo 1`"]


def test_names_keep_the_shell_flag(capsys):
    # --name rebuilt the command without its shell flag once: values went unquoted again
    code = main(["exec", "-q", "--shell", "--runs", "1", "--no-correction", "--name", "n",
                 "--cmd", "test {x} = 'a b'", "--param", "x=a b"])
    assert code == 0, capsys.readouterr().err
