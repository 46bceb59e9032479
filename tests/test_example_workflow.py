"""examples/github-actions/benchmarks.yml, the CI workflow the README quotes: it is valid YAML
with the structure GitHub Actions requires (jobs with runs-on and steps, each step one of
``uses``/``run``, the Pages deployment's permissions), every ``steadybench`` command in it is
accepted by this version's command line (options and choices parsed by click, not run), and the
README quotes it word for word."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest
import yaml

from steadybench.cli import cli

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / "examples" / "github-actions" / "benchmarks.yml"


def _workflow() -> dict:
    doc = yaml.safe_load(WORKFLOW.read_text())
    doc["on"] = doc.pop(True, doc.get("on"))  # YAML 1.1 reads the key `on` as true
    return doc


#: words after which a shell command starts
COMMAND_START = {"do", "then", "else", "&&", "||", ";", "|"}


def _commands(script: str) -> list[list[str]]:
    """The steadybench command lines of a ``run:`` script (continuation lines joined, shell
    variables and ${{ }} expressions replaced by a word)."""
    text = re.sub(r"\\\n\s*", " ", script)
    text = re.sub(r"\$\{\{[^}]*\}\}", "X", text)
    found = []
    for line in text.splitlines():
        words = shlex.split(line.replace("$", ""), comments=True)
        for i, word in enumerate(words):
            if word == "steadybench" and (i == 0 or words[i - 1] in COMMAND_START):
                found.append(words[i + 1:])
    return found


def _parse(args: list[str]) -> None:
    """Parse ``steadybench ARGS`` as the command line would, down to the leaf command, without
    running it: an unknown command or option, a bad choice or a missing argument raises
    UsageError. (The workflow's lines name their sub-commands first, with no group option.)"""
    ctx = click.Context(cli, info_name="steadybench")
    command: click.Command = cli
    rest = list(args)
    while isinstance(command, click.Group):
        name, rest = rest[0], rest[1:]
        sub = command.get_command(ctx, name)
        if sub is None:
            raise click.UsageError(f"no command {name!r}")
        if isinstance(sub, click.Group):
            ctx = click.Context(sub, parent=ctx, info_name=name)
        else:
            sub.make_context(name, rest, parent=ctx)
        command = sub


def test_the_workflow_has_the_structure_actions_requires() -> None:
    doc = _workflow()
    assert doc["on"]["push"]["branches"] == ["main"]
    assert set(doc["jobs"]) == {"bench", "pages"}
    for name, job in doc["jobs"].items():
        assert job["runs-on"] == "ubuntu-latest", name
        for step in job["steps"]:
            assert ("uses" in step) != ("run" in step), step
            if "uses" in step:
                assert re.fullmatch(r"actions/[a-z/-]+@v\d+", step["uses"]), step["uses"]
    pages = doc["jobs"]["pages"]
    assert pages["needs"] == "bench"
    assert pages["permissions"] == {"pages": "write", "id-token": "write"}
    assert pages["environment"]["name"] == "github-pages"
    uses = [s.get("uses", "") for s in doc["jobs"]["bench"]["steps"]]
    assert "actions/upload-pages-artifact@v3" in uses
    bench = doc["jobs"]["bench"]["steps"]
    upload = next(s for s in bench if s.get("uses", "").startswith("actions/upload-pages"))
    publish = next(s for s in bench if "history publish" in s.get("run", ""))
    assert upload["with"]["path"] == shlex.split(publish["run"])[3]  # the published folder


def test_every_steadybench_command_of_the_workflow_parses() -> None:
    commands = [c for job in _workflow()["jobs"].values() for s in job["steps"]
                for c in _commands(s.get("run", ""))]
    assert [c[:2] for c in commands] == [["run", "benchmarks/bench.py"],
                                         ["history", "publish"], ["history", "regressions"],
                                         ["bisect", "--from-history"]]
    for args in commands:
        _parse(args)


def test_a_wrong_option_would_be_caught() -> None:
    with pytest.raises(click.UsageError):
        _parse(["history", "publish", "site", "--no-such-option"])
    with pytest.raises(click.UsageError):
        _parse(["bisect", "--measure", "bogus", "bench.py::x"])
    with pytest.raises(click.UsageError):
        _parse(["history", "publsh", "site"])


def test_the_readme_quotes_the_workflow_word_for_word() -> None:
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", readme, re.S)
    quoted = [b for b in blocks if "history publish" in b]
    assert quoted, "the README quotes no workflow with history publish"
    assert quoted[0] in WORKFLOW.read_text()
    assert "examples/github-actions/benchmarks.yml" in readme
