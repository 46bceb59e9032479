"""``--profile``: one extra, separate execution of each case under a profiler, the same option
on ``run``, ``timeit``, ``ab`` and ``exec`` (:mod:`steadybench.profiles`; docs/profiles.md).
The measured executions stay unprofiled; the profile is taken after them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

PROFILERS = ("auto", "sample", "callgrind")


def profile_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--profile``, ``--profiler``, ``--profile-time`` and ``--profile-out``."""
    fn = click.option("--profile-out", "profile_out", default=None, metavar="DIR",
                      type=click.Path(file_okay=False),
                      help="With --profile: also write each profile to DIR as speedscope JSON "
                           "and collapsed stacks (flamegraph.pl, speedscope, inferno).")(fn)
    fn = click.option("--profile-time", type=click.FloatRange(min=0.01, max=3600),
                      default=2.0, show_default=True,
                      help="With --profile: seconds of profiled calls of a Python case.")(fn)
    fn = click.option("--profiler", type=click.Choice(PROFILERS), default="auto",
                      show_default=True,
                      help="With --profile: 'sample' (py-spy, time), 'callgrind' (valgrind, "
                           "exact instructions per function; commands), 'auto': sample for "
                           "Python, callgrind for a command that is not a Python program.")(fn)
    return click.option("--profile", "profile", is_flag=True,
                        help="After measuring, profile each case in one extra, separate "
                             "execution (never a measured one) and show where the cost goes; "
                             "with two variants, the functions whose cost changed most "
                             "(docs/profiles.md).")(fn)


def profiling(opts: dict[str, Any]) -> bool:
    return bool(opts.get("profile"))


def _is_python_program(argv: list[str]) -> bool:
    import os

    if not argv:
        return False
    if os.path.basename(argv[0]).startswith("python"):
        return True
    try:
        with open(argv[0], "rb") as fh:
            first = fh.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and b"python" in first


def settings_for(opts: dict[str, Any], argv: list[str] | None = None):
    """The :class:`~steadybench.profiles.backend.ProfileSettings` of a command's options;
    ``argv``: the command profiled (``auto`` then picks callgrind for a compiled program)."""
    from ..profiles.backend import ProfileSettings

    mode = opts.get("profiler") or "auto"
    if mode == "auto":
        mode = "sample" if argv is None or _is_python_program(argv) else "callgrind"
    return ProfileSettings(mode=mode, seconds=float(opts.get("profile_time") or 2.0))


def write_out(opts: dict[str, Any], profiles: dict[str, Any]) -> list[str]:
    """``--profile-out DIR``: each profile as ``NAME.speedscope.json`` and ``NAME.collapsed``;
    returns the lines saying where (or why not)."""
    import os
    import re

    from ..profiles.writers import write_profile

    out_dir = opts.get("profile_out")
    if not out_dir:
        return []
    lines = []
    try:
        os.makedirs(out_dir, exist_ok=True)
        for name, profile in profiles.items():
            safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "profile"
            for suffix in (".speedscope.json", ".collapsed"):
                write_profile(profile, os.path.join(out_dir, safe + suffix), name)
        lines.append(f"profiles written to {out_dir} (speedscope JSON, collapsed stacks)")
    except OSError as exc:
        lines.append(f"error: profiles not written to {out_dir}: {exc.strerror or exc}")
    return lines
