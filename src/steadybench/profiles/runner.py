"""``run --profile`` and ``timeit --profile``: after each case's measured executions, one more,
profiled, through :class:`~.backend.ProfileBackend`.

:class:`ProfilingRunner` wraps the runner a manager uses (the shape
:class:`~steadybench.runner.runner.Runner` has): ``execute`` runs the case as before, then its
profile, and puts it in ``case.extra["profile"]`` (or the failure's line in
``case.extra["profile_failure"]``). :func:`collect` moves them, after the cases' estimates are
made, into the results' ``context["profiles"]`` (by case label), each scaled to its case's
estimate: what the report's flame graphs and ``compare`` read.
"""

from __future__ import annotations

from typing import Any

from .backend import ProfileBackend, ProfileSettings, rescaled, take_profile
from .model import Profile, ProfileFailure


class ProfilingRunner:
    """A runner whose cases are also profiled, once each, after they were measured."""

    _OWN = ("inner", "settings")

    def __init__(self, inner: Any, settings: ProfileSettings) -> None:
        object.__setattr__(self, "inner", inner)
        object.__setattr__(self, "settings", settings)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        # the manager sets the runner's confidence (and others): they are the inner runner's
        if name in self._OWN:
            object.__setattr__(self, name, value)
        else:
            setattr(self.inner, name, value)

    def execute(self, implementation: Any, params: Any, meters: Any = (),
                benchmark: str | None = None, progress: Any = None) -> Any:
        case = self.inner.execute(implementation, params, meters, benchmark, progress)
        if case.errors or case.interrupted or case.n == 0:
            return case  # nothing measured, nothing to explain
        got = profile_case(implementation, params, case.benchmark, self.settings,
                           getattr(self.inner, "time_limit", None) or 600.0)
        if isinstance(got, ProfileFailure):
            case.extra["profile_failure"] = got.message
        else:
            case.extra["profile"] = got
        return case


def profile_case(implementation: Any, params: Any, benchmark: str, settings: ProfileSettings,
                 time_limit: float) -> Profile | ProfileFailure:
    """One profiled execution of a case of the Python API (a benchmark file's, or an
    importable callable)."""
    from ..counts.python import task_bytes
    from ..errors import ConfigurationError

    try:
        task = task_bytes(implementation, params, benchmark)
    except ConfigurationError as exc:
        return ProfileFailure(f"profile not taken: {exc}", "unsupported")
    return take_profile(ProfileBackend(benchmark, settings, task=task), time_limit)


def collect(results: Any) -> list[str]:
    """The cases' profiles into ``results.context["profiles"]``; the console's lines."""
    from .console import profile_lines

    found: dict[str, Any] = {}
    lines: list[str] = []
    for case in results.cases:
        profile = case.extra.pop("profile", None)
        failure = case.extra.pop("profile_failure", None)
        if failure:
            found[case.label] = {"message": failure}
            lines.append(f"{case.label}: {failure}")
        if isinstance(profile, Profile):
            estimate = case.estimate
            if estimate is not None and estimate.ok and estimate.unit == "s":
                profile = rescaled(profile, estimate.value)
            found[case.label] = profile.to_dict()
            lines += profile_lines(profile, label=case.label)
    if found:
        results.context["profiles"] = found
    return lines
