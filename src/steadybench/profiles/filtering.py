"""Which frames a user sees: the calls' region of each stack, steadybench's own frames hidden.

A profiled Python case runs its calls inside :func:`steadybench.profiles.child.profiled_calls`
(the *marker*). Of each sampled stack only what lies inside the marker is the benchmark; stacks
without it (start-up, imports, set-up, the allocation stretch) are dropped. Inside, frames of
steadybench's own files (the implementation wrappers between the marker and the user's
function) are hidden by default, so the first frame is the user's code; how many were hidden is
recorded.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from .model import Frame, merge_stacks

#: the function whose frame holds the benchmark's calls in a profiled process
MARKER = "profiled_calls"
PACKAGE_DIR = str(Path(__file__).resolve().parents[1])


def is_own(frame: Frame, package_dir: str = PACKAGE_DIR) -> bool:
    """A frame of steadybench's own code (by file: this package's directory, or another
    copy's: ``site-packages/steadybench/`` or ``src/steadybench/`` of another checkout)."""
    file = frame.file
    if not file:
        return False
    if file.startswith(package_dir + os.sep):
        return True
    return any(f"{os.sep}{top}{os.sep}steadybench{os.sep}" in file
               for top in ("site-packages", "src"))


def calls_region(stacks: Iterable[tuple[tuple[Frame, ...], float]], marker: str = MARKER,
                 hide_own: bool = True) -> tuple[tuple[tuple[tuple[Frame, ...], float], ...], int]:
    """Stacks cut to what lies inside the marker's frame (stacks without it dropped), own
    frames hidden when ``hide_own``; returns them and how many frames were hidden."""
    out = []
    hidden = 0
    for stack, weight in stacks:
        cut = None
        for i in range(len(stack) - 1, -1, -1):
            if stack[i].function == marker and is_own(stack[i]):
                cut = i
                break
        if cut is None:
            continue
        inner = stack[cut + 1:]
        if hide_own:
            kept = tuple(f for f in inner if not is_own(f))
            hidden += (len(inner) - len(kept)) and 1
            inner = kept
        # a sample taken in the marker's own loop (between calls) is the harness: dropped
        if inner:
            out.append((inner, weight))
    return merge_stacks(out), hidden


#: code objects of comprehensions: part of the function they are written in (Python 3.12
#: inlines them, PEP 709; on 3.11 they are frames of their own, folded here into their function)
COMPREHENSIONS = ("<genexpr>", "<listcomp>", "<dictcomp>", "<setcomp>")


def fold_comprehensions(stacks: Iterable[tuple[tuple[Frame, ...], float]]
                        ) -> tuple[tuple[tuple[Frame, ...], float], ...]:
    """A comprehension's cost on the function it is written in (a generator expression
    passed to ``sum`` counts for the function that wrote it, as on Python 3.12)."""
    out = []
    for stack, weight in stacks:
        kept = tuple(f for f in stack if not f.function.endswith(COMPREHENSIONS))
        if kept:
            out.append((kept, weight))
    return merge_stacks(out)


#: the file profilers that show C functions give them (pyinstrument does; profiles read from
#: files may have them)
BUILTIN = "<built-in>"


def fold_builtins(stacks: Iterable[tuple[tuple[Frame, ...], float]]
                  ) -> tuple[tuple[tuple[Frame, ...], float], ...]:
    """A built-in's cost on the Python function that called it (a stack's first frame stays
    whatever it is): a difference then names the user's function whose work changed, not
    ``isinstance`` or ``str.join`` called from it."""
    out = []
    for stack, weight in stacks:
        kept = stack[:1] + tuple(f for f in stack[1:] if f.file != BUILTIN)
        out.append((kept, weight))
    return merge_stacks(out)


def hide_own_frames(stacks: Iterable[tuple[tuple[Frame, ...], float]]
                    ) -> tuple[tuple[tuple[tuple[Frame, ...], float], ...], int]:
    """Every stack with steadybench's frames removed (a command's profile has no marker)."""
    out, hidden = [], 0
    for stack, weight in stacks:
        kept = tuple(f for f in stack if not is_own(f))
        hidden += (len(kept) != len(stack)) and 1
        if kept:
            out.append((kept, weight))
    return merge_stacks(out), hidden
