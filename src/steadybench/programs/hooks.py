"""Commands run around the measured ones (hyperfine's ``--prepare``, ``--conclude``,
``--setup`` and ``--cleanup``): never timed, always through ``/bin/sh -c``, with the same
``{NAME}`` placeholders as the measured commands. A hook line is always a shell line, so every
parameter value is quoted for the place it stands in, as ``--cmd`` values are under ``--shell``
(:mod:`.shellquote`): ``--param 'x=;touch F' --prepare 'echo {x}'`` echoes ``;touch F``.
``{x!raw}`` inserts a value as shell code; braces that name no parameter stay as written. A
hook that fails raises :class:`~steadybench.errors.BenchmarkFailed` naming it, with the end of
its error output."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import BenchmarkFailed, ConfigurationError
from .commands import substitute


@dataclass(frozen=True)
class Hook:
    """One kind of hook (``--prepare``...) with its command line per measured command name;
    ``None`` for a command that has none."""

    option: str
    lines: dict[str, str]
    show_output: bool = False

    @classmethod
    def build(cls, option: str, given: Sequence[str], commands: Sequence[str],
              show_output: bool = False) -> Hook | None:
        """One line for every command, or one line per command in order (hyperfine's rule)."""
        given = [g for g in given if g]
        if not given:
            return None
        if len(given) == 1:
            lines = dict.fromkeys(commands, given[0])
        elif len(given) == len(commands):
            lines = dict(zip(commands, given, strict=True))
        else:
            raise ConfigurationError(f"{option} given {len(given)} times for {len(commands)} "
                                     "commands: give it once, or once per command")
        return cls(option, lines, show_output)

    def render(self, command: str, params: dict[str, Any]) -> str | None:
        """The shell line of ``command``'s hook with its parameters quoted in, or None.

        Raises :class:`~steadybench.errors.ConfigurationError` for a placeholder that cannot be
        quoted where it stands."""
        line = self.lines.get(command)
        if line is None:
            return None
        return substitute(line, {str(k): v for k, v in params.items()}, line, shell=True,
                          keep_unknown=True)

    def check(self, param_sets: Sequence[dict[str, Any]]) -> None:
        """Render every line with every parameter set: a line that cannot be quoted is refused
        before anything runs."""
        for command in self.lines:
            for params in param_sets:
                self.render(command, params)

    def run(self, command: str, params: dict[str, Any]) -> None:
        """Run the hook of ``command`` with its parameters filled in."""
        text = self.render(command, params)
        if text is None:
            return
        proc = subprocess.run(["/bin/sh", "-c", text], stdin=subprocess.DEVNULL,
                              stdout=None if self.show_output else subprocess.DEVNULL,
                              stderr=subprocess.PIPE, check=False)
        if proc.returncode != 0:
            tail = proc.stderr.decode(errors="replace").strip().splitlines()[-1:]
            raise BenchmarkFailed(f"{self.option} {text!r} failed with exit status "
                                  f"{proc.returncode}" + (f": {tail[0]}" if tail else ""))

    def action(self):  # noqa: ANN201 - a FunctionAction
        """The per-run action running this hook for the case being measured."""
        from ..runner.actions import FunctionAction

        def hook(ctx: Any) -> None:
            self.run(ctx.case.benchmark, dict(ctx.case.params))

        hook.__name__ = self.option.lstrip("-")
        return FunctionAction(hook)
