"""What every countermeasure builds on: :class:`Countermeasure` (subclass it to add one),
:class:`PresetMachine` (what it sees of the machine while a preset is built), :class:`Skip`, and
the option readers the built-in ones share."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, ClassVar

from ...errors import ConfigurationError
from ...meters.base import Meter
from ...runner.actions import Action
from ...runner.runner import Stage
from ..actions import current_affinity
from ..advice import Rules
from ..readers import (
    SENSOR_UNITS,
    read_cpus,
)
from ..sysfs import SysRoot
from ..tuning import CanWrite

if TYPE_CHECKING:
    from ..presets import Preset
    from .pin import PinAction


class Skip(Exception):
    """A countermeasure this machine does not support (the message says why)."""


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


def option_number(opts: dict[str, Any], key: str, measure: str) -> float:
    value = opts[key]
    if not isinstance(value, int | float) or isinstance(value, bool) or value < 0 \
            or not math.isfinite(value):
        raise ConfigurationError(f"[{measure}] {key} must be a finite non-negative number, "
                                 f"got {value!r}")
    return float(value)


def sensor_units(opts: dict[str, Any], measure: str) -> dict[str, str] | None:
    """The ``units`` option: sensor name or path → millidegrees, decidegrees or degrees."""
    value = opts.get("units")
    if value is None:
        return None
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and v in SENSOR_UNITS for k, v in value.items()):
        raise ConfigurationError(f"[{measure}] units: a table of sensor name or path = "
                                 f"{' | '.join(repr(u) for u in SENSOR_UNITS)}")
    return dict(value)


def sensor_names(opts: dict[str, Any], measure: str) -> list[str] | None:
    value = opts.get("sensors")
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise ConfigurationError(f"[{measure}] sensors must be a list of sensor names or paths")
    return [str(v) for v in value]


def frequency_fixed_by(plan: Any) -> str:
    """How a tune plan fixes the CPU frequency, in words."""
    settings = {c.setting for c in plan.changes}
    if "governor" in settings and "min_freq" in settings:
        return "the performance governor, or the minimum frequency raised to the maximum"
    if "min_freq" in settings:
        return "the minimum frequency raised to the maximum"
    return "the performance governor"


class FixedCpus:
    """``cpus()`` for a fixed list (the pinned cores): a class, not a lambda, so a worker process
    can receive the meter that uses it."""

    def __init__(self, cpus: list[int]) -> None:
        self.cpus = list(cpus)

    def __call__(self) -> list[int]:
        return list(self.cpus)
