"""The rich consoles every command prints with.

On a terminal rich uses the terminal's width. When the output goes to a file or a CI log, rich
would assume 80 columns and wrap the tables into unreadable strips, so these consoles use at
least 120 columns there, unless ``COLUMNS`` is set: an explicit width is always obeyed.

Their text cannot drive the terminal: control characters inside printed text (an escape
sequence in a benchmark name or an exception message) are shown escaped (``\\x1b``) when the
console renders, whatever printed them; only rich's own styles and cursor controls reach the
terminal as codes. Writers escape user text themselves too (:func:`console_text`), so tables
are laid out with the width of what is shown.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.segment import Segment

from .sanitize import terminal_text

MIN_WIDTH_OFF_TERMINAL = 120


def console_text(text: object) -> str:
    """User text for rich markup: control characters shown escaped, markup escaped."""
    return escape(terminal_text(text))


def print_indented(console: Console, line: str) -> None:
    """Print plain ``line`` so that, when it wraps, its continuation keeps the line's indent
    (a comparison's interval otherwise wraps to column 0 at 80 columns)."""
    import textwrap

    from rich.text import Text

    body = line.lstrip(" ")
    indent = line[:len(line) - len(body)]
    parts = textwrap.wrap(terminal_text(body), width=max(console.width - len(indent), 20),
                          break_long_words=False, break_on_hyphens=False) or [""]
    for part in parts:
        console.print(Text(indent + part), soft_wrap=True)


def _visible_segments(buffer: Iterable[Segment]) -> Iterator[Segment]:
    for segment in buffer:
        if segment.control:  # rich's own cursor movements and the like
            yield segment
        else:
            yield Segment(terminal_text(segment.text, keep_newlines=True), segment.style)


class SafeConsole(Console):
    """A rich Console whose printed text shows control characters instead of sending them."""

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(_visible_segments(buffer))


def _columns_set() -> bool:
    try:
        return int(os.environ.get("COLUMNS", "")) > 0
    except ValueError:
        return False


def make_console(stderr: bool = False, **kwargs: Any) -> Console:
    """A rich Console on stdout (or stderr) that is wide enough when not on a terminal and
    shows control characters in the text escaped."""
    console = SafeConsole(stderr=stderr, **kwargs)
    if not console.is_terminal and "width" not in kwargs and not _columns_set():
        console.width = max(console.width, MIN_WIDTH_OFF_TERMINAL)
    return console
