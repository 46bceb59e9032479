"""Profiles and their difference as text, for the console (after the estimate or verdict)."""

from __future__ import annotations

from .diff import ProfileDiff
from .model import Profile


def amount(value: float, unit: str, signed: bool = False) -> str:
    from ..output.format import format_seconds

    sign = "+" if signed and value > 0 else ""
    if unit == "s":
        text = format_seconds(value)
        return sign + text if not text.startswith("-") else text
    return f"{sign}{value:,.0f}" + ("" if unit == "instructions" else f" {unit}")


def _where(frame) -> str:  # noqa: ANN001 - a Frame
    return frame.where or "?"


def profile_lines(profile: Profile, top: int = 8, label: str = "") -> list[str]:
    """The heaviest functions (self cost) of one profile, and the per-call view."""
    head = f"profile{' of ' + label if label else ''}: {profile.profiler}, "
    if profile.exact:
        head += f"{amount(profile.total_per_call, profile.unit)} instructions per run"
    else:
        head += (f"{profile.samples:,} samples over {profile.calls:,} calls, "
                 f"{amount(profile.total_per_call, 's')} per call")
    lines = [head]
    funcs = sorted(profile.functions(), key=lambda f: -f.self_weight)
    total = profile.total_weight or 1.0
    width = min(max([8, *(len(f.frame.function) for f in funcs[:top])]), 40)
    lines.append(f"  {'self':>7}  {'total':>7}  {'self/call':>11}  "
                 f"{'function':<{width}}  file:line")
    for f in funcs[:top]:
        if f.self_weight <= 0:
            continue
        lines.append(f"  {f.self_weight / total:>7.1%}  {f.total_weight / total:>7.1%}  "
                     f"{amount(f.self_per_call, profile.unit):>11}  "
                     f"{f.frame.function[:40]:<{width}}  {_where(f.frame)}")
    per_call = []
    if profile.gc is not None and profile.calls:
        per_call.append(f"{profile.gc.collections / profile.calls:.3g} garbage collections "
                        f"per call, pausing {amount(profile.gc.pause_seconds / profile.calls, 's')}"
                        " per call")
    if profile.alloc is not None and profile.alloc.calls:
        from ..output.format import format_bytes

        per_call.append(f"{format_bytes(profile.alloc.peak_bytes_per_call)} allocated at peak "
                        f"per call, {format_bytes(profile.alloc.retained_bytes_per_call)} "
                        "retained (tracemalloc)")
    lines += [f"  {text}" for text in per_call]
    if profile.hidden_frames:
        lines.append(f"  ({profile.hidden_frames} stacks passed through steadybench's own "
                     "frames, hidden)")
    lines += [f"  note: {n}" for n in profile.notes]
    return lines


def diff_lines(d: ProfileDiff, top: int = 8) -> list[str]:
    """The functions whose cost changed most, first the one responsible."""
    unit = d.unit
    per = "per run" if unit == "instructions" else "per call"
    if d.exact:
        basis = "instructions counted by callgrind: exact"
    else:
        basis = (f"sampled: A {d.samples[0]:,} samples, B {d.samples[1]:,}; changes within "
                 "1.96 standard errors are not ranked")
    lines = [f"where it changed (self cost {per}; {basis}):"]
    if not d.ranked:
        lines.append("  no function's change exceeds its sampling error")
    else:
        width = min(max([8, *(len(c.frame.function) for c in d.ranked[:top])]), 40)
        lines.append(f"  {'function':<{width}}  {'file:line':<22} {'A':>11} {'B':>11} "
                     f"{'change':>11} {'share':>7}")
        for c in d.ranked[:top]:
            share = f"{c.share:.0%}" if c.share is not None else "—"
            before = "—" if c.only_in == "B" else amount(c.before, unit)
            after = "—" if c.only_in == "A" else amount(c.after, unit)
            lines.append(f"  {c.frame.function[:40]:<{width}}  {_where(c.frame)[:22]:<22} "
                         f"{before:>11} {after:>11} {amount(c.difference, unit, True):>11} "
                         f"{share:>7}")
        if len(d.ranked) > top:
            lines.append(f"  ... {len(d.ranked) - top} more changed less")
    if d.within_error:
        lines.append(f"  {len(d.within_error)} other functions unchanged" if d.exact else
                     f"  {len(d.within_error)} other functions changed by less than their "
                     "sampling error (not ranked)")
    lines.append(f"  total {per}: A {amount(d.before_total, unit)}, "
                 f"B {amount(d.after_total, unit)} ({amount(d.total_change, unit, True)})")
    return lines
