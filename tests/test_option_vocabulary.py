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


def _short_flags() -> set[tuple[str, str]]:
    """(flag, command) for every one-letter flag of every command, sub-commands included."""
    found: set[tuple[str, str]] = set()

    def walk(group: click.Group, prefix: str, ctx: click.Context) -> None:
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            full = f"{prefix} {name}".strip()
            if isinstance(command, click.Group):
                walk(command, full, click.Context(command, parent=ctx))
                continue
            for param in getattr(command, "params", []):
                for opt in [*param.opts, *getattr(param, "secondary_opts", [])]:
                    if opt.startswith("-") and not opt.startswith("--"):
                        found.add((opt, full))

    walk(cli, "", click.Context(cli))
    return found


def test_the_short_flag_table_of_the_guide_is_complete():
    import re
    from pathlib import Path

    guide = (Path(__file__).resolve().parents[1] / "docs" / "guide.md").read_text()
    table = guide[guide.index("## Short flags"):]
    documented = set()
    for flag, commands in re.findall(r"^\| `(-\w)` \| ([^|]+) \|", table, flags=re.M):
        documented |= {(flag, c.strip()) for c in commands.split(",")}
    assert documented == _short_flags()
