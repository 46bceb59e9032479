"""Command templates, ``{name}`` placeholders and parameter scans.

A command is a template: a list of arguments (or, with ``--shell``, one command line) in which
``{name}`` stands for the value of a parameter. ``--param name=1,2,4`` lists the values of a
parameter, ``--param-range name=START:STOP:STEP`` spans them (STOP included when the steps land
on it, as in hyperfine's ``--parameter-scan``), and every combination of the values of all
parameters is one parameter set. ``{{`` and ``}}`` stand for literal braces.

With ``--shell`` the command is one line for ``/bin/sh -c``, and every value is quoted for the
place its placeholder stands in (:mod:`.shellquote`), so a value is never shell code:
``{name!raw}`` inserts it unquoted, for the rare value that is meant to be.
"""

from __future__ import annotations

import itertools
import math
import os
import re
import shlex
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigurationError
from ..fileio import read_user_text
from ..redact import redact
from .shellquote import placeholder_contexts, quote_value

#: an argument a shell line may hold unquoted (placeholders, the raw form included, left bare)
_SAFE = re.compile(r"(?:[\w@%+=:,./{}-]|!raw(?=\}))+")


def join_args(args: Sequence[str]) -> str:
    """A readable command line: arguments quoted like a shell needs, placeholders left bare."""
    return " ".join(a if _SAFE.fullmatch(a) else shlex.quote(a) for a in args)


#: ``{{``, ``}}``, ``{name}`` or ``{name!raw}`` (group 1: the name; group 2: ``!raw``)
PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)(!raw)?\}")


def placeholders(text: str) -> list[str]:
    """Names of the ``{name}`` placeholders in ``text``, in order, without repeats."""
    names = [m.group(1) for m in PLACEHOLDER.finditer(text) if m.group(1)]
    return list(dict.fromkeys(names))


def substitute(text: str, values: dict[str, Any], command: str = "",
               shell: bool = False, keep_unknown: bool = False) -> str:
    """Replace every ``{name}`` in ``text``; a placeholder without a value is an error, or with
    ``keep_unknown`` is left as written (a hook's own braces, as hyperfine leaves them).

    With ``shell`` (``text`` is a line for ``/bin/sh -c``) each value is quoted for the place
    it stands in (:func:`~.shellquote.quote_value`), except in the raw form ``{name!raw}``; a
    placeholder where the shell takes the brace itself (``\\{x}``, ``${x}``) is refused.
    """
    contexts = placeholder_contexts(text, PLACEHOLDER) if shell else {}

    def repl(m: re.Match[str]) -> str:
        token = m.group(0)
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        name = m.group(1)
        where = f" in command {command!r}" if command else ""
        if name not in values:
            if keep_unknown:
                return token
            raise ConfigurationError(f"placeholder {{{name}}}{where} has no value "
                                     f"(give it with --param {name}=...)")
        value = str(values[name])
        if not shell or m.group(2):
            return value
        context = contexts.get(m.start())
        if context is None:  # the lexer stepped over its brace: \{x} or ${x}
            raise ConfigurationError(
                f"placeholder {{{name}}}{where} follows a backslash or a $, where the shell "
                f"reads its brace itself and its value cannot be quoted; write a space or "
                f"quotes between them, or {{{name}!raw}} to insert the value unquoted")
        return quote_value(value, context, name, command)

    return PLACEHOLDER.sub(repl, text)


@dataclass(frozen=True)
class Command:
    """One command to benchmark: a display name and an argument template (with ``shell``, one
    line for ``/bin/sh -c``, whose values are quoted when rendered). The default display name
    is the command with any credential in it masked (:func:`steadybench.redact.redact`); the
    template keeps it, to run."""

    name: str
    template: tuple[str, ...]
    shell: bool = False

    @classmethod
    def from_args(cls, args: Sequence[str], name: str | None = None) -> Command:
        if not args or not str(args[0]).strip():
            raise ConfigurationError("empty command")
        return cls(name or redact(join_args(args)), tuple(args))

    @classmethod
    def from_line(cls, line: str, name: str | None = None, shell: bool = False) -> Command:
        """A ``--cmd "..."`` string: split like a POSIX shell, or kept whole with ``--shell``."""
        if not line.strip():
            raise ConfigurationError("empty command")
        if shell:
            return cls(name or redact(line), (line,), shell=True)
        try:
            args = shlex.split(line)
        except ValueError as exc:
            raise ConfigurationError(f"cannot parse command {line!r}: {exc}") from None
        return cls(name or redact(line), tuple(args))

    @property
    def text(self) -> str:
        return join_args(self.template) if len(self.template) > 1 else self.template[0]

    def placeholders(self) -> list[str]:
        names: list[str] = []
        for arg in self.template:
            names += [n for n in placeholders(arg) if n not in names]
        return names

    def render(self, values: dict[str, Any]) -> list[str]:
        """The arguments with every placeholder replaced (quoted for the shell when
        :attr:`shell`)."""
        return [substitute(arg, values, self.text, self.shell) for arg in self.template]


def _number(text: str, what: str) -> int | float:
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            raise ConfigurationError(f"{what}: {text!r} is not a number") from None


def parse_param(spec: str) -> tuple[str, list[Any]]:
    """``name=v1,v2,...`` → (name, values). Numeric values become numbers."""
    name, sep, rest = spec.partition("=")
    name = name.strip()
    if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ConfigurationError(f"--param {spec!r}: expected NAME=V1,V2,...")
    items = [v.strip() for v in rest.split(",")]
    if not rest.strip() or any(not v for v in items):
        raise ConfigurationError(f"--param {spec!r}: empty value")
    values: list[Any] = []
    for v in items:
        try:
            values.append(_number(v, "--param"))
        except ConfigurationError:
            values.append(v)
    return name, values


#: the most values one ``--param-range`` may span
MAX_RANGE_VALUES = 100_000
#: the most parameter sets (combinations of all parameters' values) a scan may have: each is
#: a case measured in turn, so more could not be measured anyway, and listing them would only
#: fill the memory
MAX_PARAMETER_SETS = 100_000


def parse_param_range(spec: str) -> tuple[str, list[Any]]:
    """``name=START:STOP[:STEP]`` → (name, [START, START+STEP, ..., ≤ STOP]); the values are
    counted before they are listed, and more than :data:`MAX_RANGE_VALUES` are refused."""
    name, sep, rest = spec.partition("=")
    name = name.strip()
    parts = rest.split(":")
    if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or len(parts) not in (2, 3):
        raise ConfigurationError(f"--param-range {spec!r}: expected NAME=START:STOP[:STEP]")
    start, stop = (_number(p.strip(), f"--param-range {spec!r}") for p in parts[:2])
    step = _number(parts[2].strip(), f"--param-range {spec!r}") if len(parts) == 3 else 1
    if any(isinstance(v, float) and not math.isfinite(v) for v in (start, stop, step)):
        raise ConfigurationError(f"--param-range {spec!r}: START, STOP and STEP must be finite "
                                 "numbers")
    if step <= 0:
        raise ConfigurationError(f"--param-range {spec!r}: STEP must be positive")
    if stop < start:
        raise ConfigurationError(f"--param-range {spec!r}: STOP is smaller than START")
    integers = all(isinstance(v, int) for v in (start, stop, step))
    if integers:
        count = (stop - start) // step + 1
    else:
        try:  # finite numbers and step > 0, but the quotient may overflow
            span = (stop - start) / step
        except OverflowError:
            span = math.inf
        count = int(span + 1e-9) + 1 if span < MAX_RANGE_VALUES else MAX_RANGE_VALUES + 1
    if count > MAX_RANGE_VALUES:
        size = f"{count:,}" if integers and count < 10**15 else f"more than {MAX_RANGE_VALUES:,}"
        raise ConfigurationError(f"--param-range {spec!r}: {size} values is too many (at most "
                                 f"{MAX_RANGE_VALUES:,})")
    if integers:
        return name, [start + i * step for i in range(count)]
    return name, [round(start + i * step, 12) for i in range(count)]


def parameter_sets(params: Iterable[tuple[str, list[Any]]]) -> list[dict[str, Any]]:
    """Every combination of the parameter values (the first parameter varies slowest).

    The combinations are counted before any is built: more than :data:`MAX_PARAMETER_SETS`
    are refused with the count.
    """
    params = [(name, list(values)) for name, values in params]
    names = [n for n, _ in params]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise ConfigurationError(f"parameter {dup!r} is given more than once")
    if not params:
        return [{}]
    count = math.prod(len(values) for _, values in params)
    if count > MAX_PARAMETER_SETS:
        sizes = " × ".join(f"{len(values):,} ({name})" for name, values in params)
        raise ConfigurationError(f"{count:,} parameter combinations ({sizes}) is too many (at "
                                 f"most {MAX_PARAMETER_SETS:,}): give fewer values")
    return [dict(zip(names, combo)) for combo in itertools.product(*(v for _, v in params))]


def check_placeholders(commands: Sequence[Command], param_names: Sequence[str],
                       reserved: Sequence[str] = ()) -> None:
    """Every placeholder needs a value; every parameter should be used by some command."""
    known = set(param_names) | set(reserved)
    for command in commands:
        for name in command.placeholders():
            if name not in known:
                raise ConfigurationError(f"placeholder {{{name}}} in command {command.text!r} "
                                         f"has no value (give it with --param {name}=...)")
    used = {n for c in commands for n in c.placeholders()}
    for name in param_names:
        if name not in used:
            raise ConfigurationError(f"parameter {name!r} appears in no command "
                                     f"(write {{{name}}} where its value goes)")


def load_commands_file(path: str, shell: bool = False) -> list[Command]:
    """Commands from a TOML file: one ``[[command]]`` table per command.

    Each table has ``run`` (a command line, split like a shell would unless ``--shell``) or
    ``args`` (a list of arguments), and optionally ``name``::

        [[command]]
        name = "gzip -1"
        run = "gzip -1 -k -f big.tar"

        [[command]]
        args = ["zstd", "-1", "-f", "big.tar"]
    """
    if os.path.exists(path) and not os.path.isdir(path) and not os.path.isfile(path):
        # a device or FIFO would be read for ever (/dev/zero) or wait for a writer
        raise ConfigurationError(f"--file {path}: not a regular file")
    try:
        data = tomllib.loads(read_user_text(path, ConfigurationError))
    except ConfigurationError as exc:  # missing, a directory, not UTF-8 text
        raise ConfigurationError(f"--file {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"--file {path}: {exc}") from None
    except RecursionError:  # tomllib parses nested arrays recursively
        raise ConfigurationError(f"--file {path}: nested too deeply to read") from None
    entries = data.get("command")
    if not isinstance(entries, list) or not entries:
        raise ConfigurationError(f"--file {path}: no [[command]] tables")
    commands = []
    for i, entry in enumerate(entries, 1):
        where = f"--file {path}, command {i}"
        if not isinstance(entry, dict):
            raise ConfigurationError(f"{where}: not a table")
        unknown = set(entry) - {"name", "run", "args"}
        if unknown:
            raise ConfigurationError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        name = entry.get("name")
        if name is not None and not isinstance(name, str):
            raise ConfigurationError(f"{where}: name must be a string")
        if ("run" in entry) == ("args" in entry):
            raise ConfigurationError(f"{where}: give exactly one of 'run' and 'args'")
        if "run" in entry:
            if not isinstance(entry["run"], str):
                raise ConfigurationError(f"{where}: run must be a string")
            commands.append(Command.from_line(entry["run"], name, shell=shell))
        else:
            args = entry["args"]
            if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
                raise ConfigurationError(f"{where}: args must be a list of strings")
            if shell:
                commands.append(Command.from_line(join_args(args), name, shell=True))
            else:
                commands.append(Command.from_args(args, name))
    return commands
