"""One option vocabulary: every ``--confidence`` takes 0.95 and 95% (issue 24)."""

from __future__ import annotations

import click

from steadybench.cli import cli, main
from steadybench.cli.validate import Fraction


def _commands() -> dict[str, click.Command]:
    ctx = click.Context(cli)
    return {name: cli.get_command(ctx, name) for name in cli.list_commands(ctx)}  # type: ignore


def test_every_confidence_option_takes_a_percentage():
    checked = []
    for name, command in _commands().items():
        for param in getattr(command, "params", []):
            if "--confidence" not in getattr(param, "opts", []):
                continue
            if isinstance(param.type, Fraction):
                assert param.type.convert("95%", param, None) == 0.95
            else:  # text parsed by the command (compare and history also accept 'auto')
                assert param.type is click.STRING, (name, param.type)
            checked.append(name)
    assert {"run", "exec", "evaluate", "ab", "compare", "timeit"} <= set(checked)


def test_evaluate_confidence_in_percent(tmp_path, capsys):
    missing = str(tmp_path / "nosuch.py")
    assert main(["evaluate", missing, "--confidence", "95%"]) == 2
    assert "no such file" in capsys.readouterr().err  # the percentage itself was accepted
    assert main(["evaluate", missing, "--confidence", "150%"]) == 2
    err = capsys.readouterr().err
    assert "--confidence" in err and "95%" in err and "Traceback" not in err
