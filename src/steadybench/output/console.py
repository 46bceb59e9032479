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
import re
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
    (a comparison's interval otherwise wraps to column 0 at 80 columns) and the interval and
    its ratio stay whole (:func:`wrap_text`)."""

    from rich.text import Text

    text = Text(terminal_text(line))
    # a file has no width: a SafeConsole off a terminal (and without COLUMNS) does not wrap;
    # a console given its width (embedding, tests) does
    if console.is_terminal or _columns_set() or not isinstance(console, SafeConsole):
        text = wrap_text(text, console.width, hang=0)
    console.print(text, soft_wrap=True)


def _visible_segments(buffer: Iterable[Segment]) -> Iterator[Segment]:
    for segment in buffer:
        if segment.control:  # rich's own cursor movements and the like
            yield segment
        else:
            yield Segment(terminal_text(segment.text, keep_newlines=True), segment.style)


#: a number and its unit (``1.23 ms``, ``± 2.5%``, ``4 MiB``...): never broken apart
_UNIT = re.compile(r"(?<=[\d.])\s+(?=(?:ns|µs|us|ms|s|min|h|%|B|KiB|MiB|GiB|TiB|kB|MB|GB|"
                   r"Hz|MHz|GHz|°C|W|J|rpm|[kMGT]?\s?items/s|[KMGT]i?B/s|×|x)(?![\w]))"
                   r"|(?<=±)\s+|(?<=[kMGT])\s(?=items/s)")
_GLUE = "\ue000"  # a private-use character, never in printed text


def _break_points(plain: str, width: int, hang: int = 2) -> list[tuple[int, int]]:
    """Spans of ``plain`` (one line) that fit ``width`` cells each, broken between words only;
    a continuation is indented by the line's indent plus ``hang`` spaces."""
    body_start = len(plain) - len(plain.lstrip(" "))
    glued = _UNIT.sub(lambda m: _GLUE * len(m.group(0)), plain)
    # an interval stays whole, and with the ratio before it: "1.07× [0.70, 1.68]"
    glued = re.sub(r"(?:×\s)?\[[-+\d.e, ]+\]", lambda m: m.group(0).replace(" ", _GLUE),
                   glued)
    words = [m.span() for m in re.finditer(r"[^\s]+", glued)]
    if not words:
        return [(0, len(plain))]
    spans: list[tuple[int, int]] = []
    start, end = 0, words[0][1]
    room = width
    for w_start, w_end in words[1:]:
        if w_end - start <= room:
            end = w_end
            continue
        spans.append((start, end))
        start, end = w_start, w_end
        room = width - body_start - hang
    spans.append((start, end))
    return spans


def wrap_text(text: Any, width: int, hang: int = 2) -> Any:
    """A rich ``Text`` wrapped at ``width`` between words only: a word, a number with its
    unit and an interval stay whole, styles are kept, a continuation keeps the line's indent
    plus ``hang`` spaces; a word longer than the line stays long (never cut)."""
    from rich.text import Text

    lines = []
    for line in text.split("\n", allow_blank=True):
        if line.cell_len <= width:
            lines.append(line)
            continue
        indent = " " * (len(line.plain) - len(line.plain.lstrip(" ")) + hang)
        for k, (start, end) in enumerate(_break_points(line.plain, width, hang)):
            part = line[start:end]
            lines.append(part if k == 0 else Text(indent) + part)
    return Text("\n").join(lines)


def wrap_words(text: str, width: int) -> str:
    """Plain ``text`` wrapped as :func:`wrap_text` wraps (for ``click.echo``)."""
    from rich.text import Text

    return wrap_text(Text(text), width).plain


def echo(text: str, err: bool = False) -> None:
    """``click.echo`` of plain text, wrapped as a :class:`SafeConsole` wraps printed text
    (between words, at the terminal's width or ``COLUMNS``; unwrapped in a file)."""
    import shutil
    import sys

    import click

    stream = sys.stderr if err else sys.stdout
    if _columns_set() or stream.isatty():
        text = wrap_words(text, shutil.get_terminal_size((80, 24)).columns)
    click.echo(text, err=err)


class SafeConsole(Console):
    """A rich Console whose printed text shows control characters instead of sending them.

    Text printed as one string is wrapped by :func:`wrap_words` (between words, a number never
    apart from its unit) at the terminal's width, or at ``COLUMNS`` when set; off a terminal
    without ``COLUMNS`` such lines are not wrapped at all (a file has no width). Tables and
    other renderables are laid out by rich as usual."""

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(_visible_segments(buffer))

    def print(self, *objects: Any, **kwargs: Any) -> None:  # noqa: A003 - rich's name
        if len(objects) == 1 and isinstance(objects[0], str) and "soft_wrap" not in kwargs \
                and "width" not in kwargs:
            text = self.render_str(objects[0], markup=kwargs.pop("markup", None),
                                   highlight=kwargs.pop("highlight", None),
                                   emoji=kwargs.pop("emoji", None))
            if self.is_terminal or _columns_set():
                text = wrap_text(text, self.width)
            super().print(text, soft_wrap=True, **kwargs)
            return
        super().print(*objects, **kwargs)


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
