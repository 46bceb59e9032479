"""How a case is labelled wherever cases are matched by name (the history, the formats,
``compare``)."""

from __future__ import annotations

from typing import Any


def case_label(benchmark: str, implementation: str, params: dict[str, Any]) -> str:
    """The label a benchmark is known by in the history (as ``compare`` labels it)."""
    parts = [benchmark]
    if implementation and implementation != benchmark:
        parts.append(implementation)
    if params:
        parts.append("[" + ",".join(f"{k}={v}" for k, v in params.items()) + "]")
    return " ".join(parts)
