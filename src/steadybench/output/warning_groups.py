"""The same warning for several cases, said once.

A run of many cases on a busy machine gave every case the same three-line warning, differing
only in its figures ("the CPU was contended 77% … 98% … 100% of the time"). :func:`grouped`
joins warnings whose words are the same (their numbers set aside) into one, naming the cases
it concerns and giving each figure that differs as its range ("77–100%"), in the order the
warnings first appear. A warning of one case stays as it was.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_NUMBER = re.compile(r"\d+(?:\.\d+)?")
#: cases named in a joined warning; more are counted
NAMED = 3


@dataclass(frozen=True)
class WarningGroup:
    """One warning text and the labels of the cases it concerns."""

    labels: tuple[str, ...]
    text: str

    def subject(self, total: int) -> str:
        """Who the warning is about: a case's label, ``every case (3)``, ``a, b and c``, or
        ``5 cases: a, b, c, ...``."""
        if len(self.labels) == 1:
            return self.labels[0]
        if len(self.labels) == total:
            return f"every case ({total})"
        if len(self.labels) <= NAMED:
            return ", ".join(self.labels[:-1]) + f" and {self.labels[-1]}"
        return f"{len(self.labels)} cases: " + ", ".join(self.labels[:NAMED]) + ", ..."


def _joined(texts: Sequence[str]) -> str:
    """The texts (same words, possibly other numbers) as one: each number that differs
    becomes ``low–high``."""
    columns = list(zip(*(_NUMBER.findall(t) for t in texts), strict=True))
    spans = iter(columns)

    def number(match: re.Match[str]) -> str:
        values = next(spans)
        if len(set(values)) == 1:
            return match.group(0)
        ordered = sorted(values, key=float)
        return f"{ordered[0]}–{ordered[-1]}"

    return _NUMBER.sub(number, texts[0])


def grouped(warnings: Sequence[tuple[str, str]]) -> list[WarningGroup]:
    """``(label, warning)`` pairs joined by their words (module docs), first seen first."""
    order: dict[str, list[tuple[str, str]]] = {}
    for label, text in warnings:
        order.setdefault(_NUMBER.sub("#", text), []).append((label, text))
    out = []
    for members in order.values():
        labels = tuple(dict.fromkeys(label for label, _ in members))
        out.append(WarningGroup(labels, _joined([text for _, text in members])))
    return out
