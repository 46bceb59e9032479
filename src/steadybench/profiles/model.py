"""The profile record: stacks of frames with their cost, and the per-call view (JMH's
``-prof gc``/``-prof stack`` normalised per operation).

A :class:`Profile` holds *stacks*: each a tuple of :class:`Frame` (outermost first) with a
weight (samples for a sampling profile, instructions for callgrind). Self cost of a function
is the weight of stacks whose innermost frame it is; total (inclusive) cost the weight of
stacks that contain it at least once (recursion counted once). ``per_call`` converts a weight
into a cost per call of the benchmark: ``total_per_call / total weight``.

Files store a profile compactly (:meth:`Profile.to_dict`): a table of frames and each stack as
a list of indices into it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

SAMPLES = "samples"
INSTRUCTIONS = "instructions"


@dataclass(frozen=True, order=True)
class Frame:
    """One function as a profiler names it: its name, file and line (0 when unknown)."""

    function: str
    file: str = ""
    line: int = 0

    @property
    def where(self) -> str:
        """``file:line`` (the file's base name), or ``""`` when unknown."""
        if not self.file:
            return ""
        base = self.file.rsplit("/", 1)[-1]
        return f"{base}:{self.line}" if self.line else base

    @property
    def key(self) -> tuple[str, str]:
        """What identifies a function across two versions: its name and file's base name
        (line numbers move when code above is edited)."""
        return self.function, self.file.rsplit("/", 1)[-1]

    def label(self) -> str:
        return f"{self.function} ({self.where})" if self.where else self.function


@dataclass(frozen=True)
class GcStats:
    """Garbage collection during the profiled calls (``gc.callbacks``): collections and the
    time they paused the calls, per generation summed."""

    collections: int = 0
    pause_seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"collections": self.collections, "pause_seconds": self.pause_seconds}


@dataclass(frozen=True)
class AllocStats:
    """Memory the calls allocated, measured by ``tracemalloc`` in a separate stretch of calls
    (its overhead never reaches the sampled time): the mean peak of traced memory above the
    level before a call, and the mean memory a call left allocated (retained)."""

    calls: int = 0
    peak_bytes_per_call: float = 0.0
    retained_bytes_per_call: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "peak_bytes_per_call": self.peak_bytes_per_call,
                "retained_bytes_per_call": self.retained_bytes_per_call}


@dataclass(frozen=True)
class FunctionCost:
    """One function's cost in a profile: weights and their cost per call."""

    frame: Frame
    self_weight: float
    total_weight: float
    self_per_call: float
    total_per_call: float
    #: share of the profile's total weight (0..1), inclusive
    share: float


@dataclass(frozen=True)
class Profile:
    """One profiled execution of one case.

    ``kind`` is :data:`SAMPLES` (time by sampling; ``unit`` seconds) or :data:`INSTRUCTIONS`
    (callgrind; ``unit`` instructions). ``total_per_call`` is the cost of one call of the
    benchmark in ``unit`` (for a command: one run); ``calls`` how many calls the profile
    covers. ``notes`` say what the profile does not cover (threads, child processes...).
    """

    kind: str
    unit: str
    profiler: str
    stacks: tuple[tuple[tuple[Frame, ...], float], ...]
    calls: int
    total_per_call: float
    rate: float | None = None
    gc: GcStats | None = None
    alloc: AllocStats | None = None
    wall_seconds: float | None = None
    notes: tuple[str, ...] = ()
    hidden_frames: int = 0
    #: samples the stacks rest on, when their weights are not sample counts (seconds)
    sample_count: int | None = None
    #: wall time per call inside the profiled stretch (the profiler's cost included), kept
    #: when ``total_per_call`` is taken from the unprofiled estimate
    profiled_per_call: float | None = None
    #: how many times the variance of a share exceeds the binomial one, p (1 - p) / n: samples
    #: that come in clusters (py-spy's, on a busy machine) are worth fewer independent draws
    design_effect: float = 1.0

    @property
    def total_weight(self) -> float:
        return float(sum(weight for _, weight in self.stacks))

    @property
    def samples(self) -> int:
        """Samples the profile rests on (0 for an exact count)."""
        if self.kind != SAMPLES:
            return 0
        return self.sample_count if self.sample_count is not None else int(self.total_weight)

    @property
    def exact(self) -> bool:
        return self.kind == INSTRUCTIONS

    def per_weight(self) -> float:
        """Cost per call of one unit of weight: a count's weight is its cost, spread over
        the calls; a sample's is its share of the cost per call."""
        if self.exact:
            return 1.0 / self.calls if self.calls else 0.0
        total = self.total_weight
        return self.total_per_call / total if total > 0 else 0.0

    def functions(self) -> list[FunctionCost]:
        """Every function with its self and total cost, the most expensive (total) first."""
        self_w: dict[Frame, float] = {}
        total_w: dict[Frame, float] = {}
        for stack, weight in self.stacks:
            if not stack:
                continue
            self_w[stack[-1]] = self_w.get(stack[-1], 0.0) + weight
            for frame in set(stack):
                total_w[frame] = total_w.get(frame, 0.0) + weight
        scale, whole = self.per_weight(), self.total_weight or 1.0
        out = [FunctionCost(frame, self_w.get(frame, 0.0), total, self_w.get(frame, 0.0) * scale,
                            total * scale, total / whole) for frame, total in total_w.items()]
        out.sort(key=lambda f: (-f.total_weight, -f.self_weight, f.frame))
        return out

    def by_key(self) -> dict[tuple[str, str], FunctionCost]:
        """Functions by :attr:`Frame.key` (several frames of one key, e.g. a function whose
        first line moved, are added)."""
        out: dict[tuple[str, str], FunctionCost] = {}
        for f in self.functions():
            old = out.get(f.frame.key)
            if old is None:
                out[f.frame.key] = f
            else:
                out[f.frame.key] = FunctionCost(
                    old.frame, old.self_weight + f.self_weight, old.total_weight + f.total_weight,
                    old.self_per_call + f.self_per_call, old.total_per_call + f.total_per_call,
                    old.share + f.share)
        return out

    def scaled(self, total_per_call: float) -> Profile:
        """The same profile with its per-call cost taken from elsewhere (the unprofiled
        estimate: the profile then only says how that cost divides)."""
        from dataclasses import replace

        return replace(self, total_per_call=total_per_call)

    # -- files -----------------------------------------------------------------------------
    def frame_table(self) -> tuple[list[Frame], list[tuple[list[int], float]]]:
        """Each distinct frame once, in order of first appearance, and every stack as the
        indices of its frames with its weight: the compact shape of the results file and of
        speedscope's shared frames."""
        frames: list[Frame] = []
        index: dict[Frame, int] = {}
        stacks: list[tuple[list[int], float]] = []
        for stack, weight in self.stacks:
            ids = []
            for frame in stack:
                if frame not in index:
                    index[frame] = len(frames)
                    frames.append(frame)
                ids.append(index[frame])
            stacks.append((ids, weight))
        return frames, stacks

    def to_dict(self) -> dict[str, Any]:
        frames, table = self.frame_table()
        stacks = [[ids, weight] for ids, weight in table]
        return {"kind": self.kind, "unit": self.unit, "profiler": self.profiler,
                "calls": self.calls, "total_per_call": self.total_per_call, "rate": self.rate,
                "wall_seconds": self.wall_seconds, "notes": list(self.notes),
                "hidden_frames": self.hidden_frames, "sample_count": self.sample_count,
                "profiled_per_call": self.profiled_per_call,
                "design_effect": self.design_effect,
                "gc": self.gc.to_dict() if self.gc else None,
                "alloc": self.alloc.to_dict() if self.alloc else None,
                "frames": [[f.function, f.file, f.line] for f in frames], "stacks": stacks}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Profile:
        """Read :meth:`to_dict`'s shape; a malformed one raises ``ValueError``."""
        try:
            frames = [Frame(str(f[0]), str(f[1]), int(f[2])) for f in data["frames"]]
            stacks = tuple((tuple(frames[int(i)] for i in ids), float(weight))
                           for ids, weight in data["stacks"])
            gc = data.get("gc")
            alloc = data.get("alloc")
            total = float(data["total_per_call"])
            if not math.isfinite(total):
                raise ValueError("total_per_call is not finite")
            return cls(kind=str(data["kind"]), unit=str(data["unit"]),
                       profiler=str(data.get("profiler", "")), stacks=stacks,
                       calls=int(data.get("calls", 0)), total_per_call=total,
                       rate=data.get("rate"), wall_seconds=data.get("wall_seconds"),
                       notes=tuple(str(n) for n in data.get("notes", ())),
                       hidden_frames=int(data.get("hidden_frames", 0)),
                       sample_count=(int(data["sample_count"])
                                     if data.get("sample_count") is not None else None),
                       profiled_per_call=data.get("profiled_per_call"),
                       design_effect=float(data.get("design_effect", 1.0)),
                       gc=GcStats(**gc) if gc else None,
                       alloc=AllocStats(**alloc) if alloc else None)
        except (KeyError, IndexError, TypeError) as exc:
            raise ValueError(f"not a steadybench profile ({type(exc).__name__}: {exc})") from None


def merge_stacks(stacks: Iterable[tuple[tuple[Frame, ...], float]]
                 ) -> tuple[tuple[tuple[Frame, ...], float], ...]:
    """Equal stacks added together, in a stable order (heaviest first)."""
    acc: dict[tuple[Frame, ...], float] = {}
    for stack, weight in stacks:
        acc[stack] = acc.get(stack, 0.0) + weight
    return tuple(sorted(acc.items(), key=lambda item: (-item[1], item[0])))


@dataclass(frozen=True)
class ProfileFailure:
    """Why a profile could not be taken: one line; the measurement is not affected."""

    message: str
    reason: str = "failed"  # "missing", "not-permitted", "failed", "timeout"
    details: tuple[str, ...] = field(default=())
