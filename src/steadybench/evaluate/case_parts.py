"""What every evaluate backend (timed in :mod:`.session`, counted in :mod:`.counts`) puts around
an execution of a case: the preset's summary it records, and the guard that makes a failed
estimate an error of the case rather than of the session."""

from __future__ import annotations

from typing import Any

from ..model.results import CaseResult


def preset_summary(record: dict[str, Any]) -> dict[str, Any]:
    """What a preset did around an execution, as the case records it (``extra["preset"]``)."""
    return {"preset": record.get("preset"), "source": record.get("source"),
            "applied": record.get("applied", []), "skipped": record.get("skipped", []),
            "meters": record.get("meters", [])}


class contained:
    """Around the estimate of an execution: a failure is an error of the case, not of the
    session (the raw runs still count)."""

    def __init__(self, case: CaseResult) -> None:
        self.case = case

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> bool:
        if exc is not None and isinstance(exc, Exception):
            self.case.errors.append(f"estimate: {type(exc).__name__}: {exc}")
            return True
        return False
