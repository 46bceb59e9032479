"""Presets: which countermeasures a run uses (Rancid §VI-A: "baseline" vs "managed").

- ``baseline``: no countermeasure, as the paper's naive baseline; only the monitor meters
  watch the machine (watching changes nothing).
- ``managed``: every countermeasure this machine supports, each checked first; those it does not
  support are listed as skipped with the reason.
- a custom preset: a TOML or JSON file (see ``docs/machine-control.md``) naming a base preset,
  the countermeasures to use and their options.

Each countermeasure is a :class:`Countermeasure` subclass found by name in the
:data:`steadybench.registry.countermeasures` registry, so a preset file can name one another
package registers under the ``steadybench.countermeasures`` entry points
(``docs/extending.md``). The built-in ones live in :mod:`steadybench.system.countermeasures`,
one module each with the action it adds; this module loads presets, checks their options, builds
them and applies them (:func:`apply_preset`, :class:`MachineSession`).

:func:`apply_preset` adds the actions to a :class:`~steadybench.runner.runner.Runner`, hands the
meters to ``add_meter`` and returns a JSON record for ``Results.context``:
``{"preset", "source", "applied": [{"name", "detail"}], "skipped": [{"name", "reason"}],
"meters": [...], "rules": {...}, "fingerprint": {...}}``.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from .. import registry
from ..errors import ConfigurationError, SystemControlError
from ..meters.base import Meter
from ..runner.actions import Action
from ..runner.runner import Runner, Stage
from .advice import Rules
from .countermeasures.base import (  # the base a plug-in subclasses, importable from here
    Built,
    Countermeasure,
    FixedCpus,
    PresetMachine,
    Skip,
    sensor_units,
)
from .fingerprint import fingerprint
from .sysfs import SysRoot
from .tuning import CanWrite, default_can_write

__all__ = ["COUNTERMEASURES", "PRESETS", "Built", "Countermeasure", "FixedCpus", "MachineSession",
           "Preset", "PresetMachine", "PresetPlan", "Skip", "apply_preset", "build_preset",
           "changes_machine", "check_option_values", "countermeasure_names",
           "countermeasure_options", "load_preset", "machine_session", "preset_sensor_units"]

#: the built-in countermeasures, in the order they are added (cool-down before warm-up, §IV-C);
#: plug-in countermeasures come after them, in the order the registry lists them
COUNTERMEASURES = registry.countermeasures.builtin_names()
PRESETS = {"baseline": ("monitor",), "managed": COUNTERMEASURES}


def countermeasure_names() -> tuple[str, ...]:
    """Every countermeasure a preset can name, built-in and plug-in, in the order applied."""
    return registry.countermeasures.names()


def countermeasure_options(name: str) -> dict[str, Any]:
    """The options countermeasure ``name`` accepts in a preset file, with their defaults."""
    return dict(registry.countermeasures.get(name).options)


@dataclass
class Preset:
    """A resolved preset: its name, countermeasures, their options and the rules."""

    name: str
    countermeasures: list[str]
    options: dict[str, dict[str, Any]] = field(default_factory=dict)
    rules: Rules = field(default_factory=Rules)
    source: str | None = None

    def opt(self, measure: str) -> dict[str, Any]:
        return {**countermeasure_options(measure), **self.options.get(measure, {})}


@dataclass
class PresetPlan:
    """What a preset adds: actions by stage, meters, and the record for ``Results.context``."""

    actions: list[tuple[Stage, Action]]
    meters: list[Meter]
    record: dict[str, Any]


def _check_names(names: list[str], where: str) -> list[str]:
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ConfigurationError(f"{where} must be a list of names")
    known = countermeasure_names()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ConfigurationError(f"{where}: unknown countermeasure(s) {', '.join(unknown)} "
                                 f"(known: {', '.join(known)})")
    return names


def load_preset(preset: str) -> Preset:
    """``baseline``, ``managed`` or the path of a TOML/JSON preset file."""
    if preset in PRESETS:
        return Preset(preset, list(PRESETS[preset]), rules=Rules(
            require_performance_governor=False))
    path = Path(preset)
    if not path.is_file():
        raise ConfigurationError(f"preset {preset!r}: not baseline, managed or a preset file")
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except OSError as exc:
        raise ConfigurationError(f"cannot read preset {path}: {exc.strerror}") from exc
    except (ValueError, tomllib.TOMLDecodeError, RecursionError) as exc:
        raise ConfigurationError(f"preset {path} is not valid "
                                 f"{'JSON' if path.suffix == '.json' else 'TOML'}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigurationError(f"preset {path}: expected a table of settings")
    known = countermeasure_names()
    allowed = {"name", "base", "countermeasures", "disable", "rules", *known}
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ConfigurationError(f"preset {path}: unknown key(s) {', '.join(unknown)}")
    base = data.get("base", "baseline")
    if not isinstance(base, str) or base not in PRESETS:
        raise ConfigurationError(f"preset {path}: base must be baseline or managed, not {base!r}")
    measures = _check_names(data.get("countermeasures", list(PRESETS[base])),
                            f"preset {path}: countermeasures")
    disabled = _check_names(data.get("disable", []), f"preset {path}: disable")
    measures = [m for m in known if m in measures and m not in disabled]
    options: dict[str, dict[str, Any]] = {}
    for name in known:
        given = data.get(name)
        if given is None:
            continue
        if not isinstance(given, dict):
            raise ConfigurationError(f"preset {path}: [{name}] must be a table of options")
        accepted = countermeasure_options(name)
        bad = sorted(set(given) - set(accepted))
        if bad:
            raise ConfigurationError(f"preset {path}: [{name}] has unknown option(s) "
                                     f"{', '.join(bad)} (known: {', '.join(accepted) or 'none'})")
        options[name] = given
    rules_data = data.get("rules", {})
    known_rules = {f.name for f in fields(Rules)}
    if not isinstance(rules_data, dict) or set(rules_data) - known_rules:
        raise ConfigurationError(f"preset {path}: [rules] accepts {', '.join(sorted(known_rules))}")
    for rule in fields(Rules):
        if rule.name not in rules_data:
            continue
        value = rules_data[rule.name]
        is_bool = isinstance(value, bool)
        if rule.type == "bool" and not is_bool or rule.type == "float" and (
                is_bool or not isinstance(value, int | float) or not value >= 0):
            kind = "true or false" if rule.type == "bool" else "a non-negative number"
            raise ConfigurationError(f"preset {path}: [rules] {rule.name} must be {kind}, "
                                     f"got {value!r}")
    try:
        rules = Rules(**rules_data)
    except TypeError as exc:
        raise ConfigurationError(f"preset {path}: [rules]: {exc}") from exc
    return Preset(str(data.get("name", path.stem)), measures, options, rules, str(path))


#: options that must be above zero (a zero poll would spin, a zero fraction warm nothing)
_POSITIVE = {"poll", "interval", "fraction", "mhz"}
#: options that are fractions of a whole
_AT_MOST_ONE = {"fraction"}
#: numeric options whose default is None (chosen from the machine)
_NUMERIC = {"upper", "lower"} | _POSITIVE
#: options checked by their countermeasure alone (niceness: an integer in -20..19)
_OWN_CHECK = {"niceness"}


def check_option_values(measure: str, opts: dict[str, Any],
                        defaults: dict[str, Any]) -> None:
    """Refuse, before anything is built, a value the option's default says is wrong (issue 27
    item 15: ``nan``, ``inf``, ``poll = 0``, ``fraction = 2``, ``mhz = -1``, ``governor = ""``
    were accepted silently): a numeric option takes a finite number, non-negative, above zero
    for :data:`_POSITIVE`, at most 1 for :data:`_AT_MOST_ONE`; a text option a non-empty
    text."""
    for key, default in defaults.items():
        value = opts.get(key, default)
        if value is None or value is default or key in _OWN_CHECK:
            continue
        numeric = isinstance(default, int | float) and not isinstance(default, bool) or \
            key in _NUMERIC
        if numeric:
            if not isinstance(value, int | float) or isinstance(value, bool) or \
                    not math.isfinite(value) or value < 0:
                raise ConfigurationError(f"[{measure}] {key} must be a finite non-negative "
                                         f"number, got {value!r}")
            if key in _POSITIVE and value <= 0:
                raise ConfigurationError(f"[{measure}] {key} must be above 0, got {value!r}")
            if key in _AT_MOST_ONE and value > 1:
                raise ConfigurationError(f"[{measure}] {key} is a fraction (at most 1), got "
                                         f"{value!r}")
        elif isinstance(default, str) and (not isinstance(value, str) or not value.strip()):
            raise ConfigurationError(f"[{measure}] {key} must be a non-empty text, got "
                                     f"{value!r}")


def preset_sensor_units(spec: Preset) -> dict[str, str]:
    """The sensor units a preset sets (``[cooldown]`` and ``[monitor]`` ``units``), for
    ``system check`` to read the sensors as the run will."""
    out: dict[str, str] = {}
    for measure in ("monitor", "cooldown"):
        out.update(sensor_units(spec.options.get(measure, {}), measure) or {})
    return out


#: countermeasures that change the machine and so hold its tuning lock for the whole run
LOCKING_COUNTERMEASURES = ("tune", "background", "apps")


def changes_machine(record: dict[str, Any]) -> bool:
    """Whether a preset's record applies a countermeasure that holds the tuning lock."""
    return any(a["name"] in LOCKING_COUNTERMEASURES for a in record.get("applied", []))


def build_preset(preset: str | Preset, root: str | os.PathLike[str] | SysRoot = "/", *,
                 can_write: CanWrite = default_can_write,
                 affinity: set[int] | None = None) -> PresetPlan:
    """Check each countermeasure of ``preset`` on the machine at ``root`` and build it
    (``affinity``: the CPUs this process may use, default ``os.sched_getaffinity``)."""
    spec = preset if isinstance(preset, Preset) else load_preset(preset)
    sysroot = root if isinstance(root, SysRoot) else SysRoot(root)
    machine = PresetMachine(spec, sysroot, can_write, affinity)
    actions: list[tuple[Stage, Action]] = []
    meters: list[Meter] = []
    applied: list[dict[str, str]] = []
    skipped: list[dict[str, str]] = []
    for name in countermeasure_names():
        if name not in spec.countermeasures:
            continue
        measure = registry.countermeasures.get(name)()
        opts = spec.opt(name)
        check_option_values(name, opts, measure.options)
        try:
            added, detail = measure.build(machine, opts)
            got, skips = measure.meters(machine, opts)
        except Skip as why:
            skipped.append({"name": name, "reason": str(why)})
            continue
        actions += added
        meters += got
        skipped += skips
        if got:
            detail = "; ".join(d for d in (detail, "meters " + ", ".join(m.name for m in got))
                               if d)
        if added or got or detail:
            applied.append({"name": name, "detail": detail})
    record = {
        "preset": spec.name,
        "source": spec.source,
        "applied": applied,
        "skipped": skipped,
        "meters": [m.name for m in meters],
        "rules": spec.rules.to_dict(),
        # the machine as the runs will see it: with the changes tune will make (boost off...)
        "fingerprint": fingerprint(sysroot, machine.planned),
    }
    return PresetPlan(actions, meters, record)


def apply_preset(runner: Runner, preset: str, root: str = "/", *,
                 add_meter: Callable[[Meter], Any] | None = None,
                 can_write: CanWrite = default_can_write) -> dict[str, Any]:
    """Add the preset's actions to ``runner`` (and its meters through ``add_meter``, e.g.
    ``Manager.add_meter``); return the record to store in ``Results.context["machine"]``.

    The record's ``meters`` lists the meter names; without ``add_meter`` the meters are not
    attached (get them from :func:`build_preset` instead).
    """
    plan = build_preset(preset, root, can_write=can_write)
    for stage, action in plan.actions:
        runner.add_action(stage, action)
    if add_meter is not None:
        for meter in plan.meters:
            add_meter(meter)
    return plan.record


class MachineSession:
    """A preset applied around code that does not go through a Runner (e.g. external programs).

    :meth:`start` runs the before-benchmark countermeasures once (tune, pin, settle, quiet,
    priority, power), :meth:`before_run` and :meth:`after_run` the per-run ones (cool-down,
    warm-up, garbage collection, a plug-in's after-run action), :meth:`finish` the
    after-benchmark ones, :meth:`close` undoes everything (restores the tuned files, affinity,
    priority, GC). Warnings land in ``record["warnings"]``. Use :func:`machine_session`, which
    calls :meth:`finish` when its block ends normally and :meth:`close` on every exit path.
    """

    def __init__(self, plan: PresetPlan, clock: Callable[[], int],
                 sleep: Callable[[float], None]) -> None:
        from ..model.implementation import CallableImplementation
        from ..model.parameters import Parameters
        from ..model.results import CaseResult
        from ..runner.actions import RunContext
        from ..runner.stop import RunState

        self.plan = plan
        self.record = plan.record
        self.meters = plan.meters
        self._case = CaseResult("machine", "machine")
        self.ctx = RunContext(CallableImplementation(lambda: None, "spin"), Parameters(),
                              self._case, RunState(), clock, sleep)
        self._runs = 0

    def _stage(self, stage: Stage) -> None:
        for s, action in self.plan.actions:
            if s is stage:
                action(self.ctx)
        self.record["warnings"] = list(self._case.warnings)
        self.record["session"] = self._case.extra.get("machine", {})

    def start(self) -> None:
        self.ctx.run_index = -1
        self._stage(Stage.BEFORE_BENCHMARK)

    def before_run(self) -> None:
        self.ctx.run_index = self._runs
        self._runs += 1
        self._stage(Stage.BEFORE_RUN)

    def after_run(self) -> None:
        self.ctx.run_index = max(self._runs - 1, 0)
        self._stage(Stage.AFTER_RUN)

    def finish(self) -> None:
        self.ctx.run_index = -1
        self._stage(Stage.AFTER_BENCHMARK)

    def close(self) -> None:
        """Close every action (one that raises does not stop the others: the first exception
        is raised at the end). A tuned file that could not be restored raises
        SystemControlError saying to run ``steadybench system reset`` (its journal is kept)."""
        seen: set[int] = set()
        first: BaseException | None = None
        for _stage, action in reversed(self.plan.actions):
            if id(action) not in seen:
                seen.add(id(action))
                try:
                    action.close(self.ctx)
                except BaseException as exc:  # noqa: BLE001 - re-raised below
                    first = first or exc
        self.record["warnings"] = list(self._case.warnings)
        if first is not None:
            raise first
        failed = self._case.extra.get("machine", {}).get("restore_failed")
        if failed:
            from .journal import restore_heading

            raise SystemControlError(f"{restore_heading([str(failed)])}: {failed}")


@contextlib.contextmanager
def machine_session(preset: str, root: str = "/", *, clock: Callable[[], int] | None = None,
                    sleep: Callable[[float], None] | None = None,
                    can_write: CanWrite = default_can_write) -> Iterator[MachineSession]:
    """Apply ``preset`` for the duration of a ``with`` block; restored on every exit path
    (exception, SIGINT, SIGTERM: the tune action's signal handlers stay installed until the
    block ends)."""
    plan = build_preset(preset, root, can_write=can_write)
    session = MachineSession(plan, clock or time.perf_counter_ns, sleep or time.sleep)
    try:
        session.start()
        yield session
        session.finish()
    finally:
        session.close()


