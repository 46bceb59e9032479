"""One option vocabulary (issue 24): every ``--confidence`` takes 0.95 and 95%, and
``--threshold``, ``--equivalence``, ``--seed``, ``--json`` and ``-q`` are the shared options of
steadybench.cli.options with one help text each."""

from __future__ import annotations

import dataclasses

import click
import pytest

from steadybench.cli import cli, main
from steadybench.cli.options import (
    EQUIVALENCE_HELP,
    ConfidenceLevel,
    RelativeThreshold,
    VerdictOptions,
)


def _all_commands() -> dict[str, click.Command]:
    """Every command by its full name ("history compare"), sub-commands included."""
    found: dict[str, click.Command] = {}

    def walk(group: click.Group, prefix: str, ctx: click.Context) -> None:
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            assert command is not None
            full = f"{prefix} {name}".strip()
            if isinstance(command, click.Group):
                walk(command, full, click.Context(command, parent=ctx))
            else:
                found[full] = command

    walk(cli, "", click.Context(cli))
    return found


def _option(command: click.Command, flag: str) -> click.Option | None:
    for param in command.params:
        if isinstance(param, click.Option) and flag in param.opts:
            return param
    return None


def test_every_confidence_option_is_the_shared_one():
    """One type (0.95 and 95%, 'auto' only where the command searches the level) and one help
    text for every --confidence of every command."""
    checked = []
    for name, command in _all_commands().items():
        param = _option(command, "--confidence")
        if param is None:
            continue
        assert isinstance(param.type, ConfidenceLevel), (name, param.type)
        assert param.type.convert("95%", param, None) == 0.95
        assert param.type.convert("0.9", param, None) == 0.9
        # 1e-300: accepted as above 0 while its alpha, 1 - 1e-300, rounds to 1 (fault matrix)
        for bad in ("150%", "1", "0", "nan", "x", "1e-300", "1e-17"):
            with pytest.raises(click.BadParameter):
                param.type.convert(bad, param, None)
        if param.type.allow_auto:
            assert param.type.convert("auto", param, None) is None
        else:
            with pytest.raises(click.BadParameter):
                param.type.convert("auto", param, None)
        assert param.help is not None and param.help.startswith("Confidence level of "), name
        assert "(0.95 or 95%)" in param.help, name
        checked.append(name)
    assert {"run", "exec", "evaluate", "ab", "compare", "timeit", "bisect", "plan",
            "history compare", "history regressions"} <= set(checked)
    assert [n for n in checked if _option(_all_commands()[n], "--confidence").type.allow_auto
            ] == ["compare"]


def test_threshold_seed_json_and_quiet_are_the_shared_ones():
    commands = _all_commands()
    for name in ("compare", "ab", "bisect", "history compare"):
        param = _option(commands[name], "--threshold")
        assert isinstance(param.type, RelativeThreshold), name
        assert param.type.convert("2%", param, None) == pytest.approx(0.02)
        assert param.type.convert("0", param, None) == 0.0
        with pytest.raises(click.BadParameter):
            param.type.convert("100%", param, None)
        counts = param.type.counts
        assert counts == (name == "bisect")
        if counts:  # bisect on instructions: counts per call, as in steadybench.toml
            rule = param.type.convert("5000 counts", param, None)
            assert (rule.kind, rule.value) == ("counts", 5000.0)
        else:
            with pytest.raises(click.BadParameter):
                param.type.convert("5000 counts", param, None)
    for name in ("compare", "ab"):
        assert _option(commands[name], "--equivalence").help.startswith(EQUIVALENCE_HELP)
    seeds = {name: _option(c, "--seed") for name, c in commands.items()}
    for name, param in seeds.items():
        if param is not None:
            assert param.help.startswith("Seed of the random generator of "), name
            with pytest.raises(click.BadParameter):
                param.type.convert("-1", param, None)
    for name in ("compare", "ab", "bisect", "plan", "history compare", "history list"):
        help_text = _option(commands[name], "--json").help
        assert help_text.startswith("Write ") and help_text.endswith(
            "as JSON to this file ('-': standard output)."), name
    for name in ("compare", "ab", "run", "exec", "evaluate", "timeit", "edges"):
        param = _option(commands[name], "--quiet")
        assert "-q" in param.opts and param.help.startswith("Quiet: "), name


def test_verdict_options_are_typed():
    made = VerdictOptions.from_params({"confidence": 0.9, "threshold": 0.02,
                                       "equivalence": True, "seed": 7})
    assert made == VerdictOptions(0.9, 0.02, True, 7, None, True)
    assert made.level == 0.9
    assert VerdictOptions.from_params({}) == VerdictOptions()
    assert not VerdictOptions().threshold_given and VerdictOptions().threshold == 0.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.threshold = 0.5  # type: ignore[misc]
    with pytest.raises(ValueError):
        _ = VerdictOptions(confidence=None).level


def test_threshold_out_of_range_is_one_line(tmp_path, capsys):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("1\n2\n3\n")
    b.write_text("1\n2\n3\n")
    assert main(["compare", str(a), str(b), "--threshold", "150%"]) == 2
    err = capsys.readouterr().err
    assert "--threshold" in err and "Traceback" not in err
    assert main(["bisect", "x.py::f", "--good", "HEAD", "--threshold", "12 counts"]) == 2
    err = capsys.readouterr().err
    assert "--threshold in counts needs --measure" in err and "Traceback" not in err


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
