"""Collapsed stacks (Brendan Gregg's ``stackcollapse`` format, which py-spy's ``--format raw``
writes and flamegraph.pl, speedscope and inferno read): one line per distinct stack,
``outer;...;inner WEIGHT``, each frame ``function (file:line)``."""

from __future__ import annotations

from collections.abc import Iterable

from .model import Frame, merge_stacks

Stacks = tuple[tuple[tuple[Frame, ...], float], ...]


def parse_frame(text: str) -> Frame:
    """``name (file:line)`` (py-spy), ``name (file)`` or a bare ``name``."""
    text = text.strip()
    if text.endswith(")") and " (" in text:
        name, _, where = text[:-1].rpartition(" (")
        file, sep, line = where.rpartition(":")
        if sep and line.isdigit():
            return Frame(name, file, int(line))
        return Frame(name, where, 0)
    return Frame(text)


def parse(text: str) -> Stacks:
    """Stacks from collapsed text; lines that are not ``stack weight`` are skipped."""
    stacks = []
    for line in text.splitlines():
        stack_text, _, weight_text = line.rstrip().rpartition(" ")
        try:
            weight = float(weight_text)
        except ValueError:
            continue
        frames = tuple(parse_frame(part) for part in stack_text.split(";") if part.strip())
        if frames and weight > 0:
            stacks.append((frames, weight))
    return merge_stacks(stacks)


def _name(frame: Frame) -> str:
    # ';' separates frames and a trailing ' N' is the weight: neither may appear in a name
    label = frame.function.replace(";", ":")
    if frame.file:
        label += f" ({frame.file.replace(';', ':')}:{frame.line})"
    return label.replace("\n", " ")


def write(stacks: Iterable[tuple[tuple[Frame, ...], float]]) -> str:
    """Collapsed text; integer weights are written without a decimal point."""
    lines = []
    for stack, weight in stacks:
        number = str(int(weight)) if float(weight).is_integer() else repr(float(weight))
        lines.append(";".join(_name(f) for f in stack) + " " + number)
    return "\n".join(lines) + ("\n" if lines else "")
