"""Instructions per function, exactly: valgrind's callgrind, and a reader of its output.

``valgrind --tool=callgrind`` counts the instructions (``Ir``) each function executes itself
and, per call site, the instructions of the calls it makes (inclusive). The reader follows the
callgrind format specification (valgrind manual, "Callgrind Format Specification"): name
compression ``(id) name``, relative positions (``+n``, ``-n``, ``*``), ``calls=`` lines whose
next cost line is the call's inclusive cost, ``fi=``/``fe=`` (inlined files: the function does
not change).

Callgrind keeps one level of callers, not whole stacks, so the flame graph's stacks are built
by expanding from the roots, dividing a function's cost among its callers in proportion to what
each call site spent (gprof's assumption, named in docs/profiles.md). Self costs per function
are exact whatever the expansion does.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .model import INSTRUCTIONS, Frame, Profile, ProfileFailure, merge_stacks


class CallgrindError(Exception):
    def __init__(self, failure: ProfileFailure) -> None:
        super().__init__(failure.message)
        self.failure = failure


@dataclass
class CallGraph:
    """Self instructions per function and inclusive instructions per call edge."""

    self_cost: dict[Frame, int] = field(default_factory=dict)
    edges: dict[tuple[Frame, Frame], int] = field(default_factory=dict)
    calls: dict[tuple[Frame, Frame], int] = field(default_factory=dict)
    total: int = 0

    def inclusive(self, frame: Frame) -> int:
        return self.self_cost.get(frame, 0) + sum(
            cost for (caller, _), cost in self.edges.items() if caller == frame)


def _named(value: str, table: dict[str, str]) -> str:
    value = value.strip()
    if value.startswith("("):
        ident, _, name = value.partition(")")
        ident = ident[1:]
        name = name.strip()
        if name:
            table[ident] = name
            return name
        return table.get(ident, f"({ident})")
    return value


_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
#: the name of code without a symbol (callgrind names it by its address, which differs between
#: two builds of one program): one function per file, so that two versions compare
NO_SYMBOL = "(no symbol)"


def parse(text: str) -> CallGraph:
    """The call graph of a ``callgrind.out`` file (first event, ``Ir``)."""
    graph = CallGraph()
    files: dict[str, str] = {}
    fns: dict[str, str] = {}
    fl = ""
    fn: Frame | None = None
    cfl: str | None = None
    cfn: Frame | None = None
    pending_call: int | None = None
    line_no = 0
    summary = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        head = line[0]
        if head.isdigit() or head in "+-*":
            parts = line.split()
            pos = parts[0]
            if pos == "*":
                pass
            elif pos[0] in "+-":
                line_no += int(pos)
            else:
                line_no = int(pos, 0)
            cost = int(parts[1]) if len(parts) > 1 else 0
            if fn is None:
                continue
            if pending_call is not None and cfn is not None:
                edge = (fn, cfn)
                graph.edges[edge] = graph.edges.get(edge, 0) + cost
                graph.calls[edge] = graph.calls.get(edge, 0) + pending_call
                pending_call = None
                cfn = None
            else:
                graph.self_cost[fn] = graph.self_cost.get(fn, 0) + cost
            continue
        key, sep, value = line.partition("=")
        if not sep:
            if line.startswith(("summary:", "totals:")):
                summary = int(line.split(":", 1)[1].split()[0])
            continue
        if key == "fl":
            fl = _named(value, files)
        elif key in ("fi", "fe"):
            _named(value, files)  # inlined code: names a file; the function stays
        elif key == "fn":
            name = _named(value, fns)
            fn = Frame(NO_SYMBOL if _ADDRESS.fullmatch(name) else name, fl, 0)
            cfl = None
            graph.self_cost.setdefault(fn, 0)
        elif key == "cfl" or key == "cfi":
            cfl = _named(value, files)
        elif key == "cfn":
            name = _named(value, fns)
            cfn = Frame(NO_SYMBOL if _ADDRESS.fullmatch(name) else name,
                        cfl if cfl is not None else fl, 0)
        elif key == "calls":
            pending_call = int(value.split()[0])
    graph.total = summary if summary is not None else sum(graph.self_cost.values())
    return graph


def stacks_of(graph: CallGraph, max_depth: int = 64
              ) -> tuple[tuple[tuple[Frame, ...], float], ...]:
    """Stacks for a flame graph: from each root (a function nobody in the profile calls),
    each function's cost divided among its call sites' share (module docstring)."""
    out: list[tuple[tuple[Frame, ...], float]] = []
    callees: dict[Frame, list[tuple[Frame, int]]] = {}
    called = set()
    for (caller, callee), cost in graph.edges.items():
        callees.setdefault(caller, []).append((callee, cost))
        if caller != callee:
            called.add(callee)
    inclusive = {frame: graph.inclusive(frame) for frame in graph.self_cost}

    def expand(frame: Frame, weight: float, path: tuple[Frame, ...]) -> None:
        stack = (*path, frame)
        whole = inclusive.get(frame, 0)
        if whole <= 0 or weight <= 0:
            return
        scale = weight / whole
        own = graph.self_cost.get(frame, 0) * scale
        for callee, cost in callees.get(frame, ()):
            if callee in stack or len(stack) >= max_depth:
                own += cost * scale  # recursion or depth: kept here, not lost
            else:
                expand(callee, cost * scale, stack)
        if own > 0:
            out.append((stack, own))

    for root in sorted(f for f in graph.self_cost if f not in called):
        expand(root, float(inclusive[root]), ())
    # what the expansion did not reach (a cycle with no caller outside it) stands on its own,
    # so that every function's self cost is in the stacks exactly
    placed: dict[Frame, float] = {}
    for stack, weight in out:
        placed[stack[-1]] = placed.get(stack[-1], 0.0) + weight
    for frame, cost in graph.self_cost.items():
        missing = cost - placed.get(frame, 0.0)
        if missing > 0.5:
            out.append(((frame,), missing))
    return merge_stacks(out)


def run(valgrind: str, argv: Sequence[str], *, timeout: float, cwd: str | None = None,
        env: dict[str, str] | None = None) -> tuple[CallGraph, int]:
    """``argv`` once under callgrind: its call graph and exit status. Raises
    :class:`CallgrindError` (one line) when there is no profile."""
    with tempfile.TemporaryDirectory(prefix="steadybench-callgrind-") as work:
        out = os.path.join(work, "callgrind.out")
        log = os.path.join(work, "valgrind.log")
        cmd = [valgrind, "--tool=callgrind", f"--callgrind-out-file={out}",
               f"--log-file={log}", *argv]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, text=True, cwd=cwd,
                                env={**os.environ, **(env or {})}, start_new_session=True)
        try:
            _, stderr = proc.communicate(timeout=timeout)
        except BaseException as exc:
            from ..programs.process import kill_group

            kill_group(proc.pid)
            proc.communicate()
            if isinstance(exc, subprocess.TimeoutExpired):
                raise CallgrindError(ProfileFailure(
                    f"profile not taken: callgrind did not end within {timeout:g} s (killed); "
                    "the measurement is not affected", "timeout")) from None
            raise
        if not os.path.exists(out):
            tail = (Path(log).read_text(errors="replace") if os.path.exists(log) else stderr)
            last = next((ln for ln in reversed(tail.splitlines()) if ln.strip()), "no output")
            raise CallgrindError(ProfileFailure(
                f"profile not taken: callgrind failed ({last.strip()[:160]}); the measurement "
                "is not affected", "failed"))
        return parse(Path(out).read_text(errors="replace")), proc.returncode


def profile_of(graph: CallGraph, notes: Sequence[str] = ()) -> Profile:
    """The profile of one run: cost per call = the run's instructions."""
    stacks = stacks_of(graph)
    return Profile(kind=INSTRUCTIONS, unit="instructions", profiler="callgrind",
                   stacks=stacks, calls=1, total_per_call=float(graph.total),
                   notes=tuple(notes))
