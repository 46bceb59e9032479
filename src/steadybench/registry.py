"""Registries: methods, meters, stop conditions and countermeasures found by name.

Each kind of extension point has one :class:`Registry`: a name → class table that another
package extends with **one class and an entry point**, the way pytest finds its plugins
(``pytest11`` entry points; DESIGN.md, "Registries with entry points")::

    # the other package's pyproject.toml
    [project.entry-points."steadybench.methods"]
    mine = "mypackage.timing:MyMethod"

After ``pip install`` of that package, ``measure(fn, method="mine")``, ``steadybench run --method
mine`` and ``make_method("mine")`` find it, like the built-in methods. The groups are
``steadybench.methods``, ``steadybench.meters``, ``steadybench.stop_conditions``,
``steadybench.countermeasures`` and ``steadybench.writers`` (see ``docs/extending.md``).

How a lookup works:

- the built-ins are registered as ``"module:attr"`` strings and imported on first use, so
  importing this module imports nothing heavy (no numpy or scipy);
- the entry points of the group are read once, on the first lookup, with
  :func:`importlib.metadata.entry_points`; an entry point's code is imported only when its name
  is asked for; a name already taken (a built-in, or an earlier entry point) keeps its first
  owner and a :class:`RuntimeWarning` names the one left out;
- an unknown name is one :class:`~steadybench.errors.ConfigurationError` listing the names
  there are; an entry point that cannot be imported, or does not give a subclass of the kind's
  base class, is one ConfigurationError naming the entry point and its package.

:meth:`Registry.register` adds a class from Python (``methods.register("mine", MyMethod)``,
or as a class decorator) without any packaging, for scripts and tests.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from .errors import ConfigurationError

if TYPE_CHECKING:
    import inspect
    from importlib.metadata import EntryPoint

T = TypeVar("T")

#: where a registered name came from, for error messages
BUILTIN = "built in"


def _import(spec: str) -> Any:
    """The object a ``"module:attr"`` (or ``"module:attr.inner"``) string names."""
    module_name, _, attr = spec.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split(".") if attr else ():
        obj = getattr(obj, part)
    return obj


def convert_option(value: Any) -> Any:
    """A command-line string to a Python value: a number, ``inf``, a list...; ``none``,
    ``auto`` and the empty string to None (meaning: the default); anything else as is."""
    import ast

    if not isinstance(value, str):
        return value
    text = value.strip()
    if text.lower() in ("inf", "infinity"):
        return float("inf")
    if text.lower() in ("none", "auto", ""):
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


class _Entry:
    """One registered name: a "module:attr" string until first use, then the object."""

    __slots__ = ("spec", "obj", "origin")

    def __init__(self, spec: str | None, obj: Any, origin: str) -> None:
        self.spec = spec
        self.obj = obj
        self.origin = origin


class Registry(Generic[T]):
    """Classes of one kind by name, extensible through the entry-point group ``group``.

    Args:
        kind: what one entry is, for messages (``"method"``, ``"stop condition"``...).
        group: the entry-point group other packages register under.
        builtins: name → ``"module:attr"`` of the built-in classes, in their listing order.
        base: ``"module:attr"`` of the class every entry must subclass (checked on load).

    ``get(name)`` gives the class, ``names()`` every name (built-ins first, then the ones
    registered from Python, then the entry points'), ``create(name, **options)`` an instance
    with checked options. A registry also reads like a mapping: ``name in registry``,
    ``registry[name]``, ``list(registry)``.
    """

    def __init__(self, kind: str, group: str, builtins: Mapping[str, str],
                 base: str | None = None) -> None:
        self.kind = kind
        self.group = group
        self._base_spec = base
        self._builtins = dict(builtins)
        self._entries: dict[str, _Entry] = {
            name: _Entry(spec, None, BUILTIN) for name, spec in builtins.items()}
        self._registered: dict[str, _Entry] = {}
        self._plugins: dict[str, _Entry] | None = None  # None: entry points not read yet

    # ------------------------------------------------------------------ registering
    @overload
    def register(self, name: str, obj: None = None, *,
                 replace: bool = False) -> Callable[[type[T]], type[T]]: ...

    @overload
    def register(self, name: str, obj: type[T] | str, *, replace: bool = False) -> type[T]: ...

    def register(self, name: str, obj: Any = None, *, replace: bool = False) -> Any:
        """Register ``obj`` (a class, or a ``"module:attr"`` string) under ``name``; without
        ``obj``, a class decorator. A taken name is an error unless ``replace=True``."""
        if obj is None:
            def decorator(cls: type[T]) -> type[T]:
                self.register(name, cls, replace=replace)
                return cls
            return decorator
        key = str(name).strip()
        if not key:
            raise ConfigurationError(f"a {self.kind} needs a name")
        if not replace and key in self:
            raise ConfigurationError(f"{self.kind} {key!r} is already registered "
                                     f"({self.origin(key)}); pass replace=True")
        entry = _Entry(obj, None, "registered") if isinstance(obj, str) else \
            _Entry(None, self._check(key, obj, "registered"), "registered")
        self._entries.pop(key, None)
        if self._plugins is not None:
            self._plugins.pop(key, None)
        self._registered[key] = entry
        return obj

    def unregister(self, name: str) -> None:
        """Forget a name registered with :meth:`register`; a built-in it replaced comes back."""
        if self._registered.pop(name, None) is not None and name in self._builtins:
            self._entries = {key: self._entries.get(key) or _Entry(spec, None, BUILTIN)
                             for key, spec in self._builtins.items()
                             if key in self._entries or key == name}

    def refresh(self) -> None:
        """Forget the entry points read so far; the next lookup reads them again (after a
        package was installed into the running interpreter, or in tests)."""
        self._plugins = None

    # ------------------------------------------------------------------ looking up
    def names(self) -> tuple[str, ...]:
        """Every name, built-ins first, then registered from Python, then entry points."""
        return (*self._entries, *self._registered, *self._entry_points())

    def builtin_names(self) -> tuple[str, ...]:
        """The built-in names only (reads no entry point)."""
        return tuple(self._builtins)

    def get(self, name: str) -> type[T]:
        """The class registered as ``name`` (exact, or lower-cased and stripped).

        Raises ConfigurationError listing the available names when there is none, and
        naming the entry point when its code cannot be loaded.
        """
        key, entry = self._resolve(name)
        if entry.obj is None:
            if entry.origin == BUILTIN:  # a failure here is a bug, not the user's to fix
                entry.obj = self._check(key, _import(entry.spec or ""), BUILTIN)
                return entry.obj
            try:
                obj = _import(entry.spec or "")
            except Exception as exc:
                raise ConfigurationError(
                    f"{self.kind} {key!r} cannot be loaded: {entry.origin} failed: "
                    f"{type(exc).__name__}: {exc}") from exc
            entry.obj = self._check(key, obj, entry.origin)
        return entry.obj

    def canonical(self, name: str) -> str:
        """The registered spelling of ``name`` (ConfigurationError listing the names when
        there is none)."""
        return self._resolve(name)[0]

    def origin(self, name: str) -> str:
        """Where ``name`` comes from: built in, registered, or the entry point and package."""
        return self._resolve(name)[1].origin

    def options(self, name: str) -> list[str]:
        """The option names the class ``name`` accepts (its ``__init__`` parameters)."""
        return list(_named(_parameters(self.get(name))))

    def create(self, name: str, /, **options: Any) -> T:
        """An instance of ``name`` built from ``options``.

        Values may be command-line strings (see :func:`convert_option`); a value that is or
        converts to None is left out, so the class's default applies. An option the class does
        not take, or a required one missing, is a ConfigurationError naming it.
        """
        cls = self.get(name)
        key = self.canonical(name)
        params = _parameters(cls)
        takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
        named = _named(params)
        if not takes_any:
            for option in options:
                if option not in named:
                    hint = f"options: {', '.join(named)}" if named else "it takes no options"
                    raise ConfigurationError(
                        f"{self.kind} {key} has no option {option!r} ({hint})")
        converted = {k: convert_option(v) for k, v in options.items()}
        converted = {k: v for k, v in converted.items() if v is not None}
        missing = [k for k, p in named.items()
                   if p.default is p.empty and k not in converted]
        if missing:
            raise ConfigurationError(
                f"{self.kind} {key} needs option(s) {', '.join(missing)}")
        return cls(**converted)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._find(name) is not None

    def __getitem__(self, name: str) -> type[T]:
        return self.get(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def __repr__(self) -> str:
        return f"<Registry {self.group}: {', '.join(self.names())}>"

    def live_names(self) -> NameView:
        """A read-only sequence of the names that always reflects the registry."""
        return NameView(self)

    # ------------------------------------------------------------------ internals
    def _lookup(self, key: str) -> _Entry | None:
        return self._registered.get(key) or self._entries.get(key) or \
            self._entry_points().get(key)

    def _find(self, name: str) -> tuple[str, _Entry] | None:
        if not isinstance(name, str):
            return None
        for key in (name, name.strip().lower()):
            entry = self._lookup(key)
            if entry is not None:
                return key, entry
        return None

    def _resolve(self, name: str) -> tuple[str, _Entry]:
        found = self._find(name)
        if found is None:
            raise ConfigurationError(
                f"unknown {self.kind} {name!r}; choose one of {', '.join(self.names())}")
        return found

    def _check(self, name: str, obj: Any, origin: str) -> Any:
        if self._base_spec is None:
            return obj
        base = _import(self._base_spec)
        if not (isinstance(obj, type) and issubclass(obj, base)):
            raise ConfigurationError(
                f"{self.kind} {name!r} ({origin}) is {obj!r}, not a subclass of "
                f"{base.__module__}.{base.__qualname__}")
        return obj

    def _entry_points(self) -> dict[str, _Entry]:
        if self._plugins is not None:
            return self._plugins
        from importlib import metadata

        found: dict[str, _Entry] = {}
        try:
            points = list(metadata.entry_points(group=self.group))
        except Exception as exc:  # a broken installed package must not break the built-ins
            warnings.warn(f"cannot read the {self.group} entry points: {exc}",
                          RuntimeWarning, stacklevel=3)
            points = []
        for ep in points:
            origin = _describe_entry_point(ep)
            taken = self._registered.get(ep.name) or self._entries.get(ep.name) or \
                found.get(ep.name)
            if taken is not None:
                if taken.spec != ep.value:
                    warnings.warn(f"{self.kind} {ep.name!r}: {origin} is ignored; the name "
                                  f"is taken ({taken.origin})", RuntimeWarning, stacklevel=3)
                continue
            found[ep.name] = _Entry(ep.value, None, origin)
        self._plugins = found
        return found


def _describe_entry_point(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    package = ""
    if dist is not None:
        try:
            package = f", package {dist.name} {dist.version}"
        except Exception:  # metadata without a name or version
            package = ""
    return f"entry point {ep.name} = {ep.value} (group {ep.group}{package})"


def _parameters(cls: type) -> dict[str, inspect.Parameter]:
    import inspect

    try:
        return dict(inspect.signature(cls).parameters)
    except (TypeError, ValueError):  # no signature to read: accept no options
        return {}


def _named(params: dict[str, inspect.Parameter]) -> dict[str, inspect.Parameter]:
    """The parameters passed by name (not ``*args`` or ``**kwargs``)."""
    return {k: p for k, p in params.items() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}


class NameView(Sequence[str]):
    """The names of a registry as a read-only sequence that follows the registry."""

    def __init__(self, registry: Registry[Any]) -> None:
        self._registry = registry

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...

    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        return self._registry.names()[index]

    def __len__(self) -> int:
        return len(self._registry.names())

    def __contains__(self, name: object) -> bool:
        return name in self._registry

    def __iter__(self) -> Iterator[str]:
        return iter(self._registry.names())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._registry.names())


# ---------------------------------------------------------------------------- the registries
#: measurement methods (:class:`steadybench.methods.Method`)
methods: Registry[Any] = Registry(
    "method", "steadybench.methods",
    {
        "auto": "steadybench.methods.calibrated:CalibratedMethod",
        "direct": "steadybench.methods.base:DirectMethod",
        "batch": "steadybench.methods.batch:BatchMethod",
        "differential": "steadybench.methods.differential:DifferentialMethod",
        "linefit": "steadybench.methods.linefit:LineFitMethod",
        "initsplit": "steadybench.methods.initsplit:InitSplitMethod",
        "usertimed": "steadybench.methods.usertimed:UserTimedMethod",
    },
    base="steadybench.methods.base:Method",
)

#: meters (:class:`steadybench.meters.Meter`)
meters: Registry[Any] = Registry(
    "meter", "steadybench.meters",
    {
        "wall_time": "steadybench.meters.base:WallTimeMeter",
        "cpu_time": "steadybench.meters.base:CpuTimeMeter",
        "success": "steadybench.meters.base:SuccessfulRunsMeter",
        "peak_memory": "steadybench.meters.base:PeakMemoryMeter",
        "file_value": "steadybench.meters.base:FileValueMeter",
        "callable": "steadybench.meters.base:CallableMeter",
        "cpu_freq": "steadybench.system.meters:CpuFrequencyMeter",
        "temperature": "steadybench.system.meters:TemperatureMeter",
        "loadavg": "steadybench.system.meters:LoadMeter",
        "devfreq": "steadybench.system.meters:DevfreqMeter",
        "timestamp": "steadybench.meters.base:TimestampMeter",
        "energy": "steadybench.meters.energy:EnergyMeter",
        "gpu_energy": "steadybench.meters.energy:NvmlEnergyMeter",
    },
    base="steadybench.meters.base:Meter",
)

#: stop conditions (:class:`steadybench.runner.stop.StopCondition`)
stop_conditions: Registry[Any] = Registry(
    "stop condition", "steadybench.stop_conditions",
    {
        "runs": "steadybench.runner.stop:Runs",
        "elapsed": "steadybench.runner.stop:ElapsedTime",
        "cov_window": "steadybench.runner.stop:CovWindow",
        "ci_half_width": "steadybench.runner.stop:CiHalfWidth",
        "on_error": "steadybench.runner.stop:MaxFailures",
        "max_failures": "steadybench.runner.stop:MaxFailures",
        "cov_after_warmup": "steadybench.runner.stop:CovAfterWarmup",
        "ci_width_window": "steadybench.runner.stop:CiWidthWindow",
        "median_iqr_stable": "steadybench.runner.stop:MedianIqrStable",
    },
    base="steadybench.runner.stop:StopCondition",
)

#: machine countermeasures a preset names
#: (:class:`steadybench.system.countermeasures.base.Countermeasure`),
#: built-ins in the order they are applied (cool-down before warm-up, Rancid §IV-C)
countermeasures: Registry[Any] = Registry(
    "countermeasure", "steadybench.countermeasures",
    {
        # a built-in's builder and action are in steadybench.system.countermeasures.<name>
        name: f"steadybench.system.countermeasures.{name}:{cls}" if "." not in cls else cls
        for name, cls in (("settle", "Settle"), ("power", "Power"),
                          ("apps", "steadybench.targets.apps:StopApps"),  # before quiet
                          ("quiet", "Quiet"), ("background", "Background"),
                          ("priority", "Priority"), ("tune", "Tune"), ("gpu", "Gpu"),
                          ("pin", "Pin"),
                          ("cooldown", "CoolDown"), ("warmup", "WarmUp"), ("gc", "Gc"),
                          ("monitor", "Monitor"))
    },
    base="steadybench.system.countermeasures.base:Countermeasure",
)

#: output formats of results (:class:`steadybench.output.writers.ResultsWriter`), built-ins in
#: the order their files are written
writers: Registry[Any] = Registry(
    "output format", "steadybench.writers",
    {name: f"steadybench.output.writers:{cls}"
     for name, cls in (("steadybench", "SteadybenchJson"), ("xml", "Xml"), ("csv", "Csv"),
                       ("markdown", "Markdown"), ("bmf", "Bmf"),
                       ("github-action-benchmark", "GithubActionBenchmark"),
                       ("pytest-benchmark", "PytestBenchmark"))},
    base="steadybench.output.writers:ResultsWriter",
)

REGISTRIES = (methods, meters, stop_conditions, countermeasures, writers)

__all__ = ["REGISTRIES", "NameView", "Registry", "convert_option", "countermeasures", "meters",
           "methods", "stop_conditions", "writers"]
