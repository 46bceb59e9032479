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
(``docs/extending.md``).

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
from typing import Any, ClassVar

from .. import registry
from ..errors import ConfigurationError, SystemControlError
from ..meters.base import Meter
from ..runner.actions import Action
from ..runner.runner import Runner, Stage
from .actions import (
    FrequencyWarmUpAction,
    GcAction,
    KeepMinFreqAction,
    MachineCoolDownAction,
    PinAction,
    PinFallbackAction,
    PowerSupplyAction,
    PriorityAction,
    QuietMachineAction,
    SettleAfterBootAction,
    SpinWarmUpAction,
    TuneAction,
    current_affinity,
    fastest_cpus,
    max_frequency,
    temperature_reading,
)
from .advice import Rules
from .background import StopProcessesAction, find_processes
from .devices import devfreq_names
from .fingerprint import fingerprint
from .meters import CpuFrequencyMeter, DevfreqMeter, LoadMeter, TemperatureMeter
from .readers import SENSOR_UNITS, read_cpus, read_isolated, read_load, read_power
from .sysfs import SysRoot, format_cpulist, parse_cpulist
from .tuning import CanWrite, default_can_write, make_plan, not_permitted

#: the built-in countermeasures, in the order they are added (cool-down before warm-up, §IV-C);
#: plug-in countermeasures come after them, in the order the registry lists them
COUNTERMEASURES = registry.countermeasures.builtin_names()
PRESETS = {"baseline": ("monitor",), "managed": COUNTERMEASURES}


class Skip(Exception):
    """A countermeasure this machine does not support (the message says why)."""


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


def _num(opts: dict[str, Any], key: str, measure: str) -> float:
    value = opts[key]
    if not isinstance(value, int | float) or isinstance(value, bool) or value < 0 \
            or not math.isfinite(value):
        raise ConfigurationError(f"[{measure}] {key} must be a finite non-negative number, "
                                 f"got {value!r}")
    return float(value)


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


def _units(opts: dict[str, Any], measure: str) -> dict[str, str] | None:
    """The ``units`` option: sensor name or path → millidegrees, decidegrees or degrees."""
    value = opts.get("units")
    if value is None:
        return None
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and v in SENSOR_UNITS for k, v in value.items()):
        raise ConfigurationError(f"[{measure}] units: a table of sensor name or path = "
                                 f"{' | '.join(repr(u) for u in SENSOR_UNITS)}")
    return dict(value)


def _sensors(opts: dict[str, Any], measure: str) -> list[str] | None:
    value = opts.get("sensors")
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise ConfigurationError(f"[{measure}] sensors must be a list of sensor names or paths")
    return [str(v) for v in value]


def preset_sensor_units(spec: Preset) -> dict[str, str]:
    """The sensor units a preset sets (``[cooldown]`` and ``[monitor]`` ``units``), for
    ``system check`` to read the sensors as the run will."""
    out: dict[str, str] = {}
    for measure in ("monitor", "cooldown"):
        out.update(_units(spec.options.get(measure, {}), measure) or {})
    return out


class PresetMachine:
    """What a countermeasure sees while a preset is built.

    ``preset`` (the :class:`Preset`, with its ``rules``), ``root`` (the machine's
    :class:`~steadybench.system.sysfs.SysRoot`), ``can_write`` (whether a file may be written),
    ``cpus`` (the CPUs as :func:`~steadybench.system.readers.read_cpus` reads them),
    ``has_cpufreq``; and what the countermeasures built before decided: ``governor_set`` (tune
    fixes the CPU frequency), ``frequency_fixed_by`` (how: "the performance governor" or "the
    minimum frequency raised to the maximum"), ``planned`` (path → bytes tune will write: the
    fingerprint describes the tuned machine), ``pinned`` (the CPUs pin chose, or None),
    ``pin`` (its action) and ``pin_skipped`` (why pinning is impossible: warm-up takes over).
    """

    def __init__(self, preset: Preset, root: SysRoot, can_write: CanWrite,
                 affinity: set[int] | None = None) -> None:
        self.preset = preset
        #: the CPUs the benchmark may use: this process's (``os.sched_getaffinity``), on a
        #: remote target the device's (its root's ``getaffinity``); given in tests
        device = root.affinity_calls().get("getaffinity")
        if affinity is None:
            affinity = set(device(0)) if device is not None else set(current_affinity())
        self.affinity = set(affinity)
        self.root = root
        self.can_write = can_write
        self.cpus = [c for c in read_cpus(root)]
        self.has_cpufreq = any(c.get("cpufreq") for c in self.cpus if c["online"])
        self.governor_set = False
        self.frequency_fixed_by = ""
        self.planned: dict[str, bytes] = {}
        self.pinned: list[int] | None = None
        self.pin: PinAction | None = None
        self.pin_skipped: str | None = None

    @property
    def rules(self) -> Rules:
        return self.preset.rules


#: what :meth:`Countermeasure.build` returns: the actions by stage, and a one-line description
Built = tuple[list[tuple[Stage, Action]], str]


class Countermeasure:
    """A countermeasure a preset can name.

    Subclass it, set ``options`` (what the preset file's ``[name]`` table accepts, with the
    defaults) and implement :meth:`build`; register the class under the name presets use, with
    a ``steadybench.countermeasures`` entry point (``docs/extending.md``) or
    ``steadybench.registry.countermeasures.register(name, cls)``. The class is instantiated
    without arguments each time a preset is built.
    """

    #: the options a preset file may set for this countermeasure, with their defaults
    options: ClassVar[dict[str, Any]] = {}

    def build(self, machine: PresetMachine, options: dict[str, Any]) -> Built:
        """Check the machine and return the actions to add, by stage, and a description.

        ``options`` holds every option of :attr:`options`, the preset file's values over the
        defaults. Raise :class:`Skip` with the reason when this machine does not support the
        countermeasure (it is then listed as skipped), ConfigurationError for a bad option.
        """
        raise NotImplementedError

    def meters(self, machine: PresetMachine,
               options: dict[str, Any]) -> tuple[list[Meter], list[dict[str, str]]]:
        """Meters to record with every run, and the readings skipped (``{"name", "reason"}``)."""
        return [], []


class Settle(Countermeasure):
    """After a recent boot, wait until the machine has settled (before the benchmark)."""

    options: ClassVar[dict[str, Any]] = {"max_wait": 60.0}

    def build(self, machine: PresetMachine, o: dict[str, Any]) -> Built:
        if read_load(machine.root)["uptime_s"] is None:
            raise Skip("/proc/uptime unreadable")
        action = SettleAfterBootAction(machine.root, machine.rules.min_uptime,
                                       _num(o, "max_wait", "settle"))
        return [(Stage.BEFORE_BENCHMARK, action)], action.describe()


class Power(Countermeasure):
    """Warn when the machine runs on battery (before the benchmark)."""

    def build(self, machine: PresetMachine, o: dict[str, Any]) -> Built:
        if not read_power(machine.root)["supplies"]:
            raise Skip("no power supply information under /sys/class/power_supply "
                       "(assumed mains)")
        action = PowerSupplyAction(machine.root)
        return [(Stage.BEFORE_BENCHMARK, action)], action.describe()


class Quiet(Countermeasure):
    """Wait (bounded) for a quiet machine (before the benchmark)."""

    options: ClassVar[dict[str, Any]] = {"max_wait": 10.0, "interval": 0.5}

    def build(self, machine: PresetMachine, o: dict[str, Any]) -> Built:
        if read_load(machine.root)["loadavg"] is None:
            raise Skip("/proc/loadavg unreadable")
        action = QuietMachineAction(machine.root, machine.rules, _num(o, "max_wait", "quiet"),
                                    _num(o, "interval", "quiet") or 0.5)
        return [(Stage.BEFORE_BENCHMARK, action)], action.describe()


class Priority(Countermeasure):
    """Lower the niceness where permitted (before the benchmark)."""

    options: ClassVar[dict[str, Any]] = {"niceness": -10}

    def build(self, machine: PresetMachine, o: dict[str, Any]) -> Built:
        if not machine.root.local_process:
            raise Skip("the programs run on the target, not in this process")
        niceness = o["niceness"]
        if isinstance(niceness, bool) or not isinstance(niceness, int) or \
                not -20 <= niceness <= 19:
            raise ConfigurationError(f"[priority] niceness must be an integer in -20..19, "
                                     f"got {niceness!r}")
        if not hasattr(os, "setpriority"):
            raise Skip("os.setpriority is not available on this platform")
        if os.geteuid() != 0:
            import resource

            soft = resource.getrlimit(resource.RLIMIT_NICE)[0]
            if soft == resource.RLIM_INFINITY or 20 - soft > niceness:
                raise Skip(f"not permitted to lower niceness to {niceness} "
                           "(needs root or RLIMIT_NICE)")
        action = PriorityAction(niceness)
        return [(Stage.BEFORE_BENCHMARK, action)], action.describe()


def _fixed_by(plan: Any) -> str:
    """How a tune plan fixes the CPU frequency, in words."""
    settings = {c.setting for c in plan.changes}
    if "governor" in settings and "min_freq" in settings:
        return "the performance governor, or the minimum frequency raised to the maximum"
    if "min_freq" in settings:
        return "the minimum frequency raised to the maximum"
    return "the performance governor"


class Tune(Countermeasure):
    """Governor and boost, devfreq devices (GPU, memory bus), restored at the end (before the
    benchmark); the raised minimum frequencies are re-checked before every run (§IV-A1)."""

    options: ClassVar[dict[str, Any]] = {"governor": "performance", "boost_off": True,
                                         "devfreq": True, "keep_min_freq": True}

    def build(self, machine: PresetMachine, o: dict[str, Any]) -> Built:
        governor = str(o["governor"] or "")
        explicit = "governor" in machine.preset.options.get("tune", {})
        devfreq = bool(o["devfreq"])
        plan = make_plan(machine.root, governor, bool(o["boost_off"]),
                         explicit_governor=explicit, devfreq=devfreq)
        cpu_unavailable = any(u["name"] == "governor" for u in plan.unavailable)
        if not plan.changes:
            if plan.already and not cpu_unavailable:
                machine.governor_set = True
                machine.frequency_fixed_by = "settings already in place"
                return [], "already tuned: " + "; ".join(plan.already)
            raise Skip("; ".join(u["reason"] for u in plan.unavailable) or "nothing to change")
        denied = not_permitted(machine.root, plan, machine.can_write)
        if denied:
            raise Skip(f"needs root: not permitted to write {', '.join(denied)}")
        machine.governor_set = not cpu_unavailable and any(
            c.setting in ("governor", "min_freq") for c in plan.changes) or (
            not cpu_unavailable and any("governor already" in a or "minimum frequency already"
                                        in a for a in plan.already if a.startswith("CPU")))
        machine.frequency_fixed_by = _fixed_by(plan)
        machine.planned.update({c.path: c.new for c in plan.changes})
        action = TuneAction(machine.root, governor, bool(o["boost_off"]),
                            can_write=machine.can_write, explicit_governor=explicit,
                            devfreq=devfreq)
        stages: list[tuple[Stage, Action]] = [(Stage.BEFORE_BENCHMARK, action)]
        detail = "; ".join(c.describe() for c in plan.changes)
        if o["keep_min_freq"] and any(c.setting in ("min_freq", "devfreq_min_freq")
                                      for c in plan.changes):
            keep = KeepMinFreqAction(action)
            stages.append((Stage.BEFORE_RUN, keep))
            detail += f"; {keep.describe()}"
        return stages, f"{action.describe()}: {detail}"


class Gpu(Countermeasure):
    """Lock NVIDIA graphics clocks through NVML (before the benchmark), reset at the end."""

    options: ClassVar[dict[str, Any]] = {"mhz": None, "gpus": None}

    def build(self, machine: PresetMachine, o: dict[str, Any]) -> Built:
        from .nvidia import GpuClockLockAction, read_nvidia

        state = read_nvidia()
        if not state["available"]:
            raise Skip(str(state["reason"]))
        mhz = o["mhz"]
        if mhz is not None and (isinstance(mhz, bool) or not isinstance(mhz, int) or mhz <= 0):
            raise ConfigurationError(f"[gpu] mhz must be a positive integer, got {mhz!r}")
        gpus = o["gpus"]
        if gpus is not None and (not isinstance(gpus, list) or not all(
                isinstance(g, int) and not isinstance(g, bool) for g in gpus)):
            raise ConfigurationError("[gpu] gpus: a list of GPU indices")
        if os.geteuid() != 0:
            raise Skip("needs root: NVML locks clocks for root only")
        action = GpuClockLockAction(gpus, mhz)
        return [(Stage.BEFORE_BENCHMARK, action)], action.describe()


class Background(Countermeasure):
    """Stop named background processes while benchmarking (SIGSTOP, then SIGCONT)."""

    options: ClassVar[dict[str, Any]] = {"names": []}

    def build(self, machine: PresetMachine, o: dict[str, Any]) -> Built:
        names = o["names"]
        if isinstance(names, str):
            names = [names]
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
            raise ConfigurationError("[background] names: a list of process names")
        if not names:
            raise Skip("no process named to stop (set [background] names in a preset file)")
        if not find_processes(machine.root, names):
            raise Skip(f"none of {', '.join(names)} is running")
        action = StopProcessesAction(machine.root, names)
        return [(Stage.BEFORE_BENCHMARK, action)], action.describe()


class Pin(Countermeasure):
    """Pin to the isolated or fastest CPUs (before the benchmark, or each run with rotate).

    Only CPUs this process may use are chosen (``os.sched_getaffinity``). When none of them is
    suitable, or pinning fails at run time, pinning is skipped with the reason and a spin
    warm-up of ``fallback_spin`` seconds before each run takes over (Rancid §IV-A3).
    """

    options: ClassVar[dict[str, Any]] = {"cpus": None, "rotate": False, "fallback_spin": 0.05}

    def build(self, machine: PresetMachine, o: dict[str, Any]) -> Built:
        if not hasattr(os, "sched_setaffinity"):
            raise Skip("os.sched_setaffinity is not available on this platform")
        spin = _num(o, "fallback_spin", "pin")
        allowed = machine.affinity
        if o["cpus"] is not None:
            try:
                cpus = parse_cpulist(str(o["cpus"]))
            except ValueError as exc:
                raise ConfigurationError(f"[pin] cpus: {exc}") from exc
            how = "chosen in the preset"
        else:
            isolated = [c for c in read_isolated(machine.root)["isolated"] if c in allowed]
            if isolated:
                cpus, how = isolated, "isolated CPUs"
            else:
                try:
                    cpus, how = fastest_cpus(machine.root, allowed)
                    best, _ = fastest_cpus(machine.root)
                    if not set(best) & allowed:
                        how += (f"; the fastest CPUs {format_cpulist(best)} are not among those "
                                f"this process may use ({format_cpulist(sorted(allowed))})")
                except SystemControlError as exc:
                    return self._skip(machine, f"{exc}: the machine's CPUs "
                                               f"are not among those this process may use "
                                               f"({format_cpulist(sorted(allowed))})", spin)
        usable = [c for c in cpus if c in allowed]
        if not usable:
            return self._skip(machine, f"CPUs {format_cpulist(cpus)} are not among those this "
                                       f"process may use ({format_cpulist(sorted(allowed))})",
                              spin)
        if len(usable) < len(cpus):
            how += (f"; {format_cpulist(sorted(set(cpus) - set(usable)))} left out, not in this "
                    "process's affinity")
        machine.pinned = usable
        action = PinAction(usable, rotate=bool(o["rotate"]), **machine.root.affinity_calls())
        machine.pin = action
        stages: list[tuple[Stage, Action]] = [(Stage.BEFORE_BENCHMARK, action)]
        if o["rotate"]:
            stages.append((Stage.BEFORE_RUN, action))
        if spin > 0:
            stages.append((Stage.BEFORE_RUN, PinFallbackAction(action, SpinWarmUpAction(spin))))
        return stages, f"{action.describe()} ({how})"

    @staticmethod
    def _skip(machine: PresetMachine, reason: str, spin: float) -> Built:
        machine.pin_skipped = reason
        if spin <= 0:
            raise Skip(reason)
        raise Skip(f"{reason}; a warm-up before each run takes over (warmup)")


class CoolDown(Countermeasure):
    """Wait for the chip to cool (before each run, first)."""

    options: ClassVar[dict[str, Any]] = {"upper": None, "lower": None, "sensors": None,
                                         "max_wait": 120.0, "poll": 1.0, "units": None}

    def build(self, machine: PresetMachine, o: dict[str, Any]) -> Built:
        sensors = _sensors(o, "cooldown")
        units = _units(o, "cooldown")
        try:
            temperature_reading(machine.root, sensors, units)()
        except SystemControlError as exc:
            raise Skip(f"{exc} (/sys/class/thermal, /sys/class/hwmon)") from None
        upper = machine.rules.max_temperature if o["upper"] is None else _num(o, "upper",
                                                                              "cooldown")
        lower = upper - 10.0 if o["lower"] is None else _num(o, "lower", "cooldown")
        action = MachineCoolDownAction(machine.root, upper, lower, sensors,
                                       _num(o, "max_wait", "cooldown") or 120.0,
                                       _num(o, "poll", "cooldown") or 1.0, units)
        return [(Stage.BEFORE_RUN, action)], action.describe()


class WarmUp(Countermeasure):
    """Spin the pinned cores up to their maximum frequency (before each run, after cool-down).

    Not needed when tune fixes the frequency, unless pinning is impossible: then the warm-up
    also stands in for pinning (Rancid §IV-A3), a frequency warm-up where the frequency can be
    read, else a fixed spin.
    """

    options: ClassVar[dict[str, Any]] = {"fraction": 0.95, "max_wait": 2.0, "spin": 0.01}

    def build(self, machine: PresetMachine, o: dict[str, Any]) -> Built:
        stands_in = machine.pin_skipped is not None
        if machine.governor_set and not stands_in:
            raise Skip(f"not needed: tune fixes the frequency ({machine.frequency_fixed_by})")
        if not machine.root.local_process:
            raise Skip("the spin runs in this process, not on the target")
        pinned = machine.pinned

        def cpus() -> list[int]:
            return pinned if pinned is not None else current_affinity()

        if not machine.has_cpufreq or max_frequency(machine.root, cpus()) is None:
            why = ("no cpufreq files: the frequency cannot be read" if not machine.has_cpufreq
                   else "no readable scaling_max_freq for the CPUs used")
            if not stands_in:
                raise Skip(why)
            spin = SpinWarmUpAction(max(_num(o, "max_wait", "warmup") / 10.0, 0.01))
            return [(Stage.BEFORE_RUN, spin)], f"{spin.describe()} (pinning impossible; {why})"
        action = FrequencyWarmUpAction(machine.root, cpus, float(o["fraction"]),
                                       _num(o, "max_wait", "warmup") or 2.0,
                                       _num(o, "spin", "warmup"))
        suffix = " (pinning impossible)" if stands_in else ""
        return [(Stage.BEFORE_RUN, action)], action.describe() + suffix


class Gc(Countermeasure):
    """Keep the garbage collector out of the measured runs (before each run)."""

    def build(self, machine: PresetMachine, o: dict[str, Any]) -> Built:
        action = GcAction()
        return [(Stage.BEFORE_RUN, action)], action.describe()


#: the meters the monitor records by default (each skipped, with the reason, where unavailable)
MONITOR_METERS = ["cpu_freq", "temperature", "loadavg", "timestamp", "devfreq", "energy",
                  "gpu_energy"]


class Monitor(Countermeasure):
    """Meters that watch the machine: ``cpu_freq``, ``temperature``, ``loadavg``,
    ``timestamp``, ``devfreq`` (one ``devfreq:NAME`` per device), ``energy`` (RAPL or the power
    supply), ``gpu_energy`` (NVML), or any other registered meter that needs no options
    (:data:`steadybench.registry.meters`)."""

    options: ClassVar[dict[str, Any]] = {"meters": MONITOR_METERS, "sensors": None,
                                         "units": None}

    def build(self, machine: PresetMachine, o: dict[str, Any]) -> Built:
        return [], ""

    def meters(self, machine: PresetMachine,
               o: dict[str, Any]) -> tuple[list[Meter], list[dict[str, str]]]:
        from ..meters.base import TimestampMeter
        from ..meters.energy import EnergyMeter, NvmlEnergyMeter

        meters: list[Meter] = []
        skipped: list[dict[str, str]] = []
        wanted = o["meters"]
        if not isinstance(wanted, list) or not all(isinstance(w, str) for w in wanted):
            raise ConfigurationError("[monitor] meters: a list of meter names (" +
                                     ", ".join(MONITOR_METERS) + ", or a registered meter)")
        pinned = machine.pinned
        for name in wanted:
            meter: Meter
            if name == "cpu_freq":
                meter = CpuFrequencyMeter(
                    machine.root, FixedCpus(pinned) if pinned is not None else current_affinity)
                if meter.stop(True) is None:
                    skipped.append({"name": "monitor:cpu_freq",
                                    "reason": "no readable scaling_cur_freq (no cpufreq files)"})
                    continue
            elif name == "temperature":
                meter = TemperatureMeter(machine.root, _sensors(o, "monitor"),
                                         _units(o, "monitor"))
                if meter.stop(True) is None:
                    skipped.append({"name": "monitor:temperature",
                                    "reason": str(meter.last_error)})
                    continue
            elif name == "loadavg":
                meter = LoadMeter(machine.root)
                if meter.stop(True) is None:
                    skipped.append({"name": "monitor:loadavg",
                                    "reason": "/proc/loadavg unreadable"})
                    continue
            elif name == "timestamp":
                meter = TimestampMeter()
            elif name == "devfreq":
                devices = devfreq_names(machine.root)
                if not devices:
                    skipped.append({"name": "monitor:devfreq",
                                    "reason": "no devfreq device (/sys/class/devfreq)"})
                for dev in devices:
                    dmeter = DevfreqMeter(machine.root, dev)
                    if dmeter.stop(True) is None:
                        skipped.append({"name": f"monitor:{dmeter.name}",
                                        "reason": str(dmeter.last_error)})
                    else:
                        meters.append(dmeter)
                continue
            elif name in ("energy", "gpu_energy"):
                emeter = EnergyMeter(machine.root) if name == "energy" else NvmlEnergyMeter()
                if not emeter.available:
                    skipped.append({"name": f"monitor:{name}", "reason": str(emeter.reason)})
                    continue
                meter = emeter
            else:
                try:
                    if registry.meters.canonical(name) == "wall_time":
                        raise ConfigurationError("wall_time is read by the measurement method, "
                                                 "not by a monitor")
                    meter = registry.meters.create(name)
                except ConfigurationError as exc:
                    raise ConfigurationError(f"[monitor] meters: {exc}") from exc
            meters.append(meter)
        return meters, skipped


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


class FixedCpus:
    """``cpus()`` for a fixed list (the pinned cores): a class, not a lambda, so a worker process
    can receive the meter that uses it."""

    def __init__(self, cpus: list[int]) -> None:
        self.cpus = list(cpus)

    def __call__(self) -> list[int]:
        return list(self.cpus)
