""""Change since the last run": each case's result kept on this machine, and the next run's
change against it (the way criterion.rs reports a change after every run).

``steadybench run`` keeps, per machine and case, the executions' values of its last result and
the run-level ln(median) of up to :data:`KEEP_LEVELS` earlier runs in
``.steadybench/baselines/NAME.json`` at the top of the project (the git work tree, else the
working directory; the folder gets its own ``.gitignore``; ``STEADYBENCH_BASELINE_DIR``
overrides the folder). After the table it prints, for each case, the change of the median
against that result with its interval and a verdict under the random-effect model of
:mod:`steadybench.compare.between`: the run-to-run spread comes from the earlier runs' levels
once there are :data:`~steadybench.compare.between.MIN_RUNS` of them, else from the stated
default floor.

When the test calls a change but the heavy-tail guard of
:class:`~steadybench.compare.between.HeavyTail` finds earlier runs of identical code here
shifted as much too often, the line says "inconclusive: …; decide with `steadybench ab`".

The assumption, stated: the earlier runs' levels show this machine's variation between runs;
a real change among them spoils one consecutive difference each, which the biweight ignores.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..cpu_pressure import is_busy
from ..errors import SteadybenchError
from ..model.results import cpu_pressure_of

if TYPE_CHECKING:
    from ..compare.between import AcrossTime
    from ..model.results import Results

#: environment variable naming the folder of the kept results
DIR_VARIABLE = "STEADYBENCH_BASELINE_DIR"
#: the name ``run`` saves under by default (criterion's "base")
DEFAULT_NAME = "last"
#: earlier run-level values kept per case
KEEP_LEVELS = 50
#: the confidence of the verdict line
CONFIDENCE = 0.95
NO_CHANGE = "no change beyond this machine's variation between runs"


def folder(cwd: str | os.PathLike[str] | None = None) -> Path:
    """``.steadybench/baselines`` at the top of the project (or :data:`DIR_VARIABLE`)."""
    named = os.environ.get(DIR_VARIABLE, "").strip()
    if named:
        return Path(named)
    from .git import git_info

    base = Path(cwd or os.getcwd())
    return Path(git_info(base).toplevel or base) / ".steadybench" / "baselines"


def _path(name: str, cwd: str | os.PathLike[str] | None = None) -> Path:
    if not name or "/" in name or name.startswith(".") or "\\" in name:
        raise SteadybenchError(f"baseline name {name!r}: use letters, digits, '-' or '_'")
    return folder(cwd) / f"{name}.json"


def load(name: str, cwd: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The kept results (machine → case label → entry); empty when none are kept."""
    path = _path(name, cwd)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise SteadybenchError(f"{path}: cannot read the kept results ({exc})") from None
    return data.get("machines", {}) if isinstance(data, dict) else {}


def _entries(results: Results) -> dict[str, dict[str, Any]]:
    """Case label → its executions (the compare reader's view), for cases with 2 or more."""
    from .baseline import samples_of_results

    out = {}
    for s in samples_of_results(results, "this run").samples:
        ex = [float(v) for v in s.executions if v > 0 and math.isfinite(v)]
        if len(ex) >= 2:
            out[s.label] = {"unit": s.unit, "executions": ex, "cpu_pressure": s.cpu_pressure}
    return out


def save(results: Results, name: str, machine: str,
         cwd: str | os.PathLike[str] | None = None) -> Path:
    """Keep this run's cases under ``name`` for ``machine`` (atomically), carrying each case's
    earlier run-level values."""
    import numpy as np

    from ..fileio import atomic_write_text

    path = _path(name, cwd)
    machines = load(name, cwd)
    cases = machines.setdefault(machine, {})
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    for label, entry in _entries(results).items():
        levels = list((cases.get(label) or {}).get("levels", []))
        if not is_busy(entry["cpu_pressure"]):  # a busy run would teach a false noise
            levels.append(math.log(float(np.median(entry["executions"]))))
        cases[label] = {**entry, "levels": levels[-KEEP_LEVELS:], "saved": stamp}
    path.parent.mkdir(parents=True, exist_ok=True)
    ignore = path.parent.parent / ".gitignore"
    if path.parent.parent.name == ".steadybench" and not ignore.exists():
        atomic_write_text(ignore, "# steadybench's local results: not for version control\n*\n")
    atomic_write_text(path, json.dumps({"kind": "steadybench-baselines", "machines": machines},
                                       indent=1) + "\n")
    return path


@dataclass(frozen=True)
class Change:
    """One case's change since the kept result: NEW/BASE − 1 of the medians, its interval."""

    label: str
    change: float
    low: float
    high: float
    verdict: str
    noise_text: str
    test: AcrossTime

    def text(self, with_noise: bool = True) -> str:
        """One line; ``with_noise`` False leaves out the variation between runs (said once
        above the lines when every case has the same)."""
        noise = f" ({self.noise_text})" if with_noise else ""
        return (f"{self.label}: {self.change:+.1%} [{self.low:+.1%}, {self.high:+.1%}] "
                f"{self.verdict}{noise}")

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "change": self.change, "low": self.low, "high": self.high,
                "verdict": self.verdict, "noise": self.noise_text, "test": self.test.to_dict()}


def changes(results: Results, kept: dict[str, Any],
            confidence: float = CONFIDENCE) -> list[Change]:
    """Each case of ``results`` against its kept entry (same machine's ``kept`` cases)."""
    import numpy as np

    from ..compare.between import DEFAULT, across_time, from_levels

    out = []
    for label, entry in _entries(results).items():
        old = kept.get(label)
        if not old or len(old.get("executions", [])) < 2 or old.get("unit") != entry["unit"]:
            continue
        noise = from_levels(old.get("levels", [])) or DEFAULT
        at = across_time(np.asarray(old["executions"]), np.asarray(entry["executions"]), noise)
        s_low, s_high = at.interval(confidence)  # of BASE/NEW
        change = math.exp(-at.difference) - 1.0
        busy = [(side, share) for side, share in (("the last run", cpu_pressure_of(old)),
                                                  ("this run", entry["cpu_pressure"]))
                if is_busy(share)]
        if busy:  # shifted far beyond the variation between runs: no verdict
            verdict = "not comparable, a busy machine: CPU contended " + ", ".join(
                f"{share:.0%} of {side}'s time" for side, share in busy) + " (Linux PSI)"
        elif at.vetoed(confidence):  # earlier identical runs here shifted as much, often
            verdict = at.inconclusive_text()
        elif at.differs(confidence):
            verdict = f"{abs(change):.1%} {'slower' if change > 0 else 'faster'}"
        else:
            verdict = NO_CHANGE
        out.append(Change(label, change, 1.0 / s_high - 1.0, 1.0 / s_low - 1.0, verdict,
                          noise.describe(), at))
    return out


def unseen_hint(unseen: list[Change], confidence: float = CONFIDENCE) -> list[str]:
    """What "no change" could not have seen: the largest minimum detectable change of the
    cases without one (:meth:`~steadybench.compare.between.AcrossTime.detectable`, 80 %
    power), and the command that sees smaller ones; two lines within 80 columns."""
    from ..compare.between import DETECT_POWER

    worst = max(c.test.detectable(confidence) for c in unseen)
    return [f"  (runs like these find a change of {worst:.1%} or more {DETECT_POWER:.0%} of the "
            "time;", "  a smaller one needs both versions measured together: steadybench ab)"]


def report_and_keep(results: Results, opts: dict[str, Any]) -> list[str]:
    """The lines ``run`` prints after its table, and the kept result updated (module docs).
    ``--no-baseline`` turns both off; ``--baseline NAME`` compares with NAME and keeps it as it
    is; ``--save-baseline NAME`` keeps this run under NAME."""
    from .record import current_machine

    if opts.get("no_baseline"):
        return []
    machine = current_machine(results.environment)
    compare_to = opts.get("baseline") or opts.get("save_baseline") or DEFAULT_NAME
    save_as = opts.get("save_baseline") or (None if opts.get("baseline") else DEFAULT_NAME)
    lines: list[str] = []
    try:
        kept = load(compare_to).get(machine, {})
        found = changes(results, kept)
        if found:
            since = "the last run" if compare_to == DEFAULT_NAME else f"baseline {compare_to}"
            lines.append(f"change since {since} (median, {CONFIDENCE:.0%} interval):")
            shared = len({c.noise_text for c in found}) == 1
            if shared:  # said once, not on every line (80 columns)
                lines.append(f"  {found[0].noise_text}")
            lines.extend(f"  {c.text(with_noise=not shared)}" for c in found)
            unseen = [c for c in found if c.verdict == NO_CHANGE]
            if unseen:
                lines.extend(unseen_hint(unseen))
            elif any(c.verdict.startswith("not comparable") for c in found):
                lines.append("  (on a busy machine, measure both versions together: "
                             "steadybench ab)")
        elif opts.get("baseline"):
            lines.append(f"baseline {compare_to!r}: no kept result of these cases on this "
                         "machine")
        if save_as:
            save(results, save_as, machine)
    except (SteadybenchError, OSError) as exc:
        lines.append(f"note: change since the last run not available ({exc})")
    return lines


def noise_lookup(environment: dict[str, Any] | None) -> Any:
    """A function giving the spread between runs of a compared sample (by its label) on the
    machine of ``environment``, learned from the run-level values kept here (every saved
    baseline; the one with the most runs), for
    :attr:`steadybench.compare.protocol.CompareOptions.run_noise`; None when nothing is
    kept."""
    from ..compare.between import from_levels
    from .record import current_machine

    where = folder()
    if not where.is_dir():
        return None
    machine = current_machine(environment) if environment else None
    kept: list[dict[str, Any]] = []
    for path in sorted(where.glob("*.json")):
        try:
            machines = load(path.stem)
        except SteadybenchError:
            continue
        if machine is not None:
            kept.append(machines.get(machine, {}))
        elif len(machines) == 1:
            kept.extend(machines.values())

    def lookup(sample: Any) -> Any:
        levels = max((m.get(sample.label, {}).get("levels", []) for m in kept), key=len,
                     default=[])
        return from_levels(levels, "this machine (kept runs)")

    return lookup
