"""Errors in the user's code, said where they happened.

When a benchmark raises, the run loop keeps the user's own traceback frames (those outside the
steadybench package: :func:`steadybench.runner.loop.user_frames`) in
``case.extra["tracebacks"]``, which every results file stores. This module turns them into

* a short location for the one error line: ``at bench.py:4 in lookup ← bench.py:9 in
  <lambda>`` (innermost first, at most :data:`SHORT_FRAMES` frames, file names without their
  directory);
* the full user traceback that ``--debug`` prints (instead of steadybench's own frames, which
  say nothing about the user's mistake).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

#: frames shown in the one-line error
SHORT_FRAMES = 3

_FRAME = re.compile(r'File "(?P<file>[^"]*)", line (?P<line>\d+), in (?P<name>\S+)')


def frame_locations(frames: Iterable[str]) -> list[tuple[str, int, str]]:
    """``(file, line, function)`` of formatted traceback frames, outermost first."""
    out = []
    for frame in frames:
        m = _FRAME.search(frame)
        if m:
            out.append((m["file"], int(m["line"]), m["name"]))
    return out


def short_location(frames: Iterable[str]) -> str | None:
    """``"at bench.py:4 in lookup ← bench.py:9 in <lambda>"``; None without frames."""
    located = frame_locations(frames)
    if not located:
        return None
    inner = list(reversed(located))[:SHORT_FRAMES]
    parts = [f"{os.path.basename(f) or f}:{line} in {name}" for f, line, name in inner]
    more = " ← …" if len(located) > SHORT_FRAMES else ""
    return "at " + " ← ".join(parts) + more


def case_tracebacks(case: Any) -> list[dict[str, Any]]:
    """The kept user tracebacks of a case (``[{"error", "frames"}]``)."""
    kept = (getattr(case, "extra", None) or {}).get("tracebacks") or []
    return [t for t in kept if isinstance(t, dict) and t.get("frames")]


def error_location(case: Any, message: str) -> str | None:
    """Where the user's code raised ``message`` (:func:`short_location`), when known."""
    for entry in case_tracebacks(case):
        if entry.get("error") and str(entry["error"]) in message:
            where = short_location(entry["frames"])
            if where:
                return where
    return None


def debug_text(case: Any) -> str:
    """The user's tracebacks of ``case`` in Python's layout (for ``--debug``)."""
    blocks = []
    for entry in case_tracebacks(case):
        blocks.append(f"{getattr(case, 'label', '')}: traceback of the benchmark's code "
                      "(most recent call last):\n" + "".join(entry["frames"]).rstrip()
                      + f"\n{entry.get('error', '')}")
    return "\n".join(blocks)
