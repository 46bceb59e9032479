"""The rich consoles every command prints with.

On a terminal rich uses the terminal's width. When the output goes to a file or a CI log, rich
would assume 80 columns and wrap the tables into unreadable strips, so these consoles use at
least 120 columns there.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console

MIN_WIDTH_OFF_TERMINAL = 120


def make_console(stderr: bool = False, **kwargs: Any) -> Console:
    """A rich Console on stdout (or stderr) that is wide enough when not on a terminal."""
    console = Console(stderr=stderr, **kwargs)
    if not console.is_terminal and "width" not in kwargs:
        console.width = max(console.width, MIN_WIDTH_OFF_TERMINAL)
    return console
