"""Parsing ``--target`` values, and what reaches ``ssh``/``adb`` and the remote shell."""

from __future__ import annotations

import shlex

import pytest

from steadybench.errors import ConfigurationError
from steadybench.targets.spec import looks_like_target, parse_target
from steadybench.targets.transport import AdbTarget, SshTarget


@pytest.mark.parametrize(("text", "kind", "address", "key"), [
    (None, "local", "local", "local"),
    ("local", "local", "local", "local"),
    ("ssh://pi@board.local", "ssh", "ssh://pi@board.local", "ssh://pi@board.local"),
    ("ssh://pi@10.0.0.7:2222?root=/tmp/fake/", "ssh", "ssh://pi@10.0.0.7:2222",
     "ssh://pi@10.0.0.7:2222?root=/tmp/fake"),
    ("ssh://[::1]:22", "ssh", "ssh://[::1]:22", "ssh://[::1]:22"),
    ("adb", "adb", "adb", "adb"),
    ("adb?root=/data/local/tmp/t&timer=shell", "adb", "adb", "adb?root=/data/local/tmp/t"),
    ("adb://emulator-5554", "adb", "adb://emulator-5554", "adb://emulator-5554"),
    ("adb://192.168.1.20:5555", "adb", "adb://192.168.1.20:5555", "adb://192.168.1.20:5555"),
])
def test_forms(text, kind, address, key):
    spec = parse_target(text)
    assert (spec.kind, spec.address, spec.key) == (kind, address, key)
    if kind != "local":
        assert looks_like_target(spec.key)
        assert "/" not in spec.folder_name and spec.digest in spec.folder_name


@pytest.mark.parametrize(("text", "words"), [
    ("ftp://x", "unknown kind"),
    ("ssh://-oProxyCommand=touch@x", "bad user name"),
    ("ssh://u@-oProxyCommand=x", "bad host name"),
    ("ssh://u:secret@host", "passwords are not taken"),
    ("ssh://u@host:0", "bad port"),
    ("ssh://u@host:99999", "Port out of range"),
    ("ssh://u@host/path", "a path is not part of a target"),
    ("ssh://u@host?root=relative", "must be an absolute path"),
    ("ssh://u@host?root=/a/../etc", "must be an absolute path"),
    ("ssh://u@host?root=/a;rm", "must be an absolute path"),
    ("ssh://u@host?timer=fast", "timer must be one of"),
    ("ssh://u@host?color=red", "unknown option"),
    ("adb://-s", "bad serial"),
    ("adb://a b", "spaces"),
])
def test_bad_targets_are_refused_with_the_forms(text, words):
    with pytest.raises(ConfigurationError) as info:
        parse_target(text)
    assert words in str(info.value)
    assert "expected local, ssh://" in str(info.value)


def test_ssh_command_line_ends_options_before_the_destination():
    target = SshTarget(parse_target("ssh://pi@board:2200"))
    target.ssh = "/usr/bin/ssh"
    argv = target.argv("cat -- '/sys/x'")
    assert argv[-3:] == ["--", "pi@board", "sh -c " + shlex.quote("cat -- '/sys/x'")]
    assert argv[argv.index("-p") + 1] == "2200"
    assert "BatchMode=yes" in argv  # never a password prompt


def test_adb_command_line_names_the_serial():
    target = AdbTarget(parse_target("adb://emulator-5554"))
    target.adb = "/usr/bin/adb"
    assert target.argv("true") == ["/usr/bin/adb", "-s", "emulator-5554", "shell", "true"]


def test_cli_refuses_a_bad_target_with_one_line(capsys):
    from steadybench.cli import main

    code = main(["system", "show", "--target", "ssh://u@host?root=x"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: ") and "--target" in err and err.count("\n") == 1


def test_push_without_a_target_is_refused(capsys, tmp_path):
    from steadybench.cli import main

    prog = tmp_path / "p"
    prog.write_text("")
    code = main(["exec", "--push", str(prog), "--", "true"])
    assert code == 2
    assert "--push needs --target" in capsys.readouterr().err
