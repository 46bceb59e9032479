"""Python statements as benchmarks, for ``steadybench timeit`` (the one-liner).

:func:`write_statements_file` writes a benchmark file in which every statement is one
implementation of the group ``timeit``; :func:`statement_callable` (called by that file, in the
worker processes too) builds the measured callable the way ``python -m timeit`` does: the
set-up runs once in a fresh namespace, the statement becomes the body of a function whose
globals are that namespace, so names the set-up defines are visible and names the statement
assigns stay local to one call. Each statement has its own namespace: one statement cannot
change what another one sees.

Code objects are named ``<setup>`` and ``<statement K>``, so a traceback of the user's code
points at the statement, not at this module.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .errors import DefinitionError

#: group of the generated benchmarks
GROUP = "timeit"


def _compile(source: str, filename: str, shift: int = 0) -> Any:
    """Compile ``source``; ``shift`` moves its line numbers (the statement's first line is
    line 1 of ``<statement K>``, not the ``def`` line put above it)."""
    try:
        if shift:
            tree = ast.parse(source, filename)
            ast.increment_lineno(tree, shift)
            return compile(tree, filename, "exec")
        return compile(source, filename, "exec")
    except SyntaxError as exc:
        where = filename.strip("<>")
        raise DefinitionError(f"{where}: {exc.msg}: {(exc.text or '').strip()!r}") from None


def check_syntax(setup: str, statements: Sequence[str]) -> None:
    """Fail with one line, before anything runs, when a piece does not compile."""
    _compile(setup, "<setup>")
    for i, stmt in enumerate(statements, 1):
        _compile(_function_source(stmt), f"<statement {i}>", -1)


def _function_source(stmt: str) -> str:
    body = textwrap.indent(textwrap.dedent(stmt).strip() or "pass", "    ")
    return f"def _statement():\n{body}\n"


def statement_callable(setup: str, stmt: str, index: int) -> Callable[[], Any]:
    """The callable measuring ``stmt`` after ``setup`` (see the module's docstring)."""
    namespace: dict[str, Any] = {"__name__": "__timeit__", "__builtins__": __builtins__}
    exec(_compile(setup, "<setup>"), namespace)  # noqa: S102 - the user's own set-up code
    exec(_compile(_function_source(stmt), f"<statement {index}>", -1), namespace)  # noqa: S102
    return namespace["_statement"]


def display_names(statements: Sequence[str], names: Sequence[str]) -> list[str]:
    """``names`` where given, else the statement itself on one line (its lines joined with
    ``"; "``, shortened to 40 characters with an ellipsis); two equal names get ``#K``."""
    out = []
    for i, stmt in enumerate(statements):
        if i < len(names):
            out.append(names[i])
            continue
        flat = "; ".join(line.strip() for line in stmt.strip().splitlines() if line.strip())
        out.append(flat if len(flat) <= 40 else flat[:39] + "…")
    seen: dict[str, int] = {}
    given = list(out)
    for i, name in enumerate(given):
        if given.count(name) > 1:
            seen[name] = seen.get(name, 0) + 1
            out[i] = f"{name} #{seen[name]}"
    return out


def write_statements_file(directory: str | Path, setup: str, statements: Sequence[str],
                          names: Sequence[str]) -> Path:
    """Write the benchmark file of the statements into ``directory``; returns its path."""
    path = Path(directory) / "timeit_statements.py"
    lines = ["import steadybench as sb", "from steadybench.oneliner import statement_callable",
             "", f"SETUP = {setup!r}", ""]
    for i, (stmt, name) in enumerate(zip(statements, names, strict=True), 1):
        lines += [f"@sb.benchmark(group={GROUP!r}, name={name!r})",
                  f"def statement_{i}():",
                  f"    return statement_callable(SETUP, {stmt!r}, {i})", ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
