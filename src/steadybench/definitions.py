"""The short form: ``@steadybench.benchmark`` and loading benchmark files.

A benchmark file is a Python file. Functions decorated with :func:`benchmark` are set-up
factories: called once per parameter set with the parameters as keyword arguments, they return
the zero-argument callable that is measured. Module-level :class:`~steadybench.Benchmark`
objects (the object API) in the same file are found too.
"""

from __future__ import annotations

import fnmatch
import importlib.util
import itertools
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ConfigurationError, DefinitionError
from .model.benchmark import Benchmark
from .model.implementation import FunctionImplementation, Implementation
from .model.parameters import Parameters, parameter_grid

#: keyword arguments of :func:`benchmark` that are options, not parameters
RESERVED = ("name", "group", "params", "method", "method_options", "error_policy",
            "items_per_call", "bytes_per_call")


@dataclass
class BenchmarkSpec:
    """One decorated function: what to measure, its parameter grid and its options."""

    factory: Callable[..., Callable[[], Any]]
    name: str
    group: str | None = None
    grid: dict[str, Any] = field(default_factory=dict)
    method: str | None = None
    method_options: dict[str, Any] = field(default_factory=dict)
    error_policy: str = "stop"
    #: what one call processes, for rates: {"items": ..., "bytes": ...} (output/rates.py)
    throughput: dict[str, Any] = field(default_factory=dict)

    @property
    def title(self) -> str:
        """The benchmark's name: its group, or its own name."""
        return self.group or self.name


_registry: list[BenchmarkSpec] = []


def benchmark(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    group: str | None = None,
    params: dict[str, Any] | None = None,
    method: str | None = None,
    method_options: dict[str, Any] | None = None,
    error_policy: str = "stop",
    items_per_call: Any = None,
    bytes_per_call: Any = None,
    **grid: Any,
) -> Any:
    """Declare a benchmark (the short form).

    ``@benchmark(n=[1_000, 10_000])`` runs the function once per value of ``n``; lists give every
    combination of several parameters. ``params={...}`` does the same for parameter names that
    clash with the options (``name``, ``group``, ``params``, ``method``, ``method_options``,
    ``error_policy``). Functions with the same ``group`` become implementations of one benchmark,
    compared side by side. ``method`` picks the measurement method (see docs/methods.md).
    ``items_per_call`` and ``bytes_per_call`` (a number, a parameter's name or a function of the
    parameters) say what one call processes: every output then shows the rate, items/s or
    bytes/s, as Google Benchmark's ``SetItemsProcessed``/``SetBytesProcessed``.
    """
    if error_policy not in ("stop", "continue"):
        raise ConfigurationError(f"error_policy must be 'stop' or 'continue', not {error_policy!r}")
    from .output.rates import check_declaration

    throughput = {"items": items_per_call, "bytes": bytes_per_call}
    for kind, how in throughput.items():
        check_declaration(kind, how)
    throughput = {k: v for k, v in throughput.items() if v is not None}

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        if not callable(func):
            raise ConfigurationError("@benchmark must decorate a function")
        spec = BenchmarkSpec(
            factory=func,
            name=name or func.__name__,
            group=group,
            grid={**(params or {}), **grid},
            method=method,
            method_options=dict(method_options or {}),
            error_policy=error_policy,
            throughput=throughput,
        )
        _registry.append(spec)
        func.__steadybench__ = spec  # type: ignore[attr-defined]
        return func

    return decorate(fn) if fn is not None else decorate


@dataclass
class Definitions:
    """What a benchmark file defines."""

    path: Path
    specs: list[BenchmarkSpec]
    benchmarks: list[Benchmark]

    def names(self) -> list[str]:
        return list(
            dict.fromkeys([s.title for s in self.specs] + [b.title for b in self.benchmarks])
        )


_counter = itertools.count()


class _ExitAtImport(BaseException):
    """``os._exit`` called by a benchmark file's top level (issue 27 item 15): it would end
    steadybench at once, silently, with the file's status; the import raises this instead."""


def _refuse_exit(status: int) -> None:
    raise _ExitAtImport(status)


def load_file(path: str | os.PathLike[str], time_limit: float | None = None) -> Definitions:
    """Import a benchmark file and collect its definitions; one clear error if that fails.

    ``time_limit`` (seconds) bounds the import: a file whose top level never returns is
    interrupted there (:func:`steadybench.runner.deadline.deadline`; issue 27 item 12)."""
    from .runner.deadline import HardTimeLimit, deadline

    p = Path(path)
    if not p.exists():
        raise DefinitionError(f"{p}: no such file")
    if not p.is_file():
        raise DefinitionError(f"{p}: not a file")
    if p.suffix != ".py":
        raise DefinitionError(f"{p}: not a Python file (expected a .py file)")
    module_name = f"_steadybench_file_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(module_name, p)
    if spec is None or spec.loader is None:
        raise DefinitionError(f"{p}: cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    global _registry
    saved, _registry = _registry, []
    sys.path.insert(0, str(p.resolve().parent))
    sys.modules[module_name] = module
    real_exit = os._exit
    os._exit = _refuse_exit  # type: ignore[assignment] # the file's os._exit ends nothing
    try:
        with deadline(time_limit, f"{p}: importing the file"):
            spec.loader.exec_module(module)
    except HardTimeLimit as exc:
        raise DefinitionError(f"{exc} (its top level never returned)") from exc
    except _ExitAtImport as exc:
        raise DefinitionError(f"{p}: called os._exit({exc.args[0]!r}) while loading: a "
                              "benchmark file must not end the process") from exc
    except SyntaxError as exc:
        where = f"{p}:{exc.lineno}" if exc.lineno else str(p)
        raise DefinitionError(f"{where}: syntax error: {exc.msg}") from exc
    except ConfigurationError as exc:
        raise DefinitionError(f"{p}: {exc}") from exc
    except Exception as exc:
        raise DefinitionError(f"{p}: error while loading: {type(exc).__name__}: {exc}") from exc
    except SystemExit as exc:
        raise DefinitionError(f"{p}: called sys.exit({exc.code!r}) while loading") from exc
    finally:
        os._exit = real_exit
        found, _registry = _registry, saved
        sys.path.remove(str(p.resolve().parent))
    objects = [v for v in vars(module).values() if isinstance(v, Benchmark)]
    if not found and not objects:
        raise DefinitionError(
            f"{p}: defines no benchmarks (decorate a function with "
            "@steadybench.benchmark or define a Benchmark object)"
        )
    return Definitions(p, found, objects)


def matches(pattern: str | None, *names: str) -> bool:
    """``-k`` selection: a substring or a shell-style pattern of any of the names, or of the
    name as the tables display it (``"group implementation"``, e.g. ``-k "concat join"``
    would not, ``-k "build string join"`` does)."""
    if not pattern:
        return True
    shown = " ".join(dict.fromkeys(n for n in names if n))
    return any(pattern in n or fnmatch.fnmatchcase(n, pattern) for n in (*names, shown))


def build_benchmarks(
    specs: Iterable[BenchmarkSpec],
    runner_for: Callable[[BenchmarkSpec], Any],
    pattern: str | None = None,
) -> list[Benchmark]:
    """Turn specs into Benchmarks (grouped by title), with a runner made for each spec."""
    grouped: dict[str, Benchmark] = {}
    grids: dict[str, dict[str, Any]] = {}
    for spec in specs:
        if not matches(pattern, spec.title, spec.name):
            continue
        bench = grouped.get(spec.title)
        if bench is None:
            bench = grouped[spec.title] = Benchmark(spec.title)
            try:
                bench.parameters = parameter_grid(spec.grid) if spec.grid else []
            except ConfigurationError as exc:
                raise DefinitionError(f"benchmark {spec.name!r}: {exc}") from exc
            grids[spec.title] = spec.grid
        elif grids[spec.title] != spec.grid:
            raise DefinitionError(
                f"benchmark group {spec.title!r}: all implementations must have the same parameters"
            )
        impl = FunctionImplementation(spec.factory, spec.name, spec.error_policy)
        impl.throughput = dict(spec.throughput)
        bench.add_configuration(runner_for(spec), impl)
    return list(grouped.values())


def find_implementation(path: str, title: str, name: str) -> Implementation:
    """The implementation ``name`` of benchmark ``title`` defined in the file ``path``.

    A worker process (:mod:`steadybench.runner.worker`) rebuilds its benchmark this way: it
    imports the file anew, in its own interpreter.
    """
    definitions = load_file(path)
    for spec in definitions.specs:
        if spec.title == title and spec.name == name:
            return FunctionImplementation(spec.factory, spec.name, spec.error_policy)
    for bench in definitions.benchmarks:
        if bench.title == title:
            for config in bench.configurations:
                if config.implementation.name == name:
                    return config.implementation
    raise DefinitionError(f"{path}: no benchmark {title!r} with implementation {name!r}")


def find_single_case(path: str | os.PathLike[str],
                     selector: str | None = None) -> tuple[Implementation, Parameters, str]:
    """The one case (implementation, parameter set, benchmark title) of the file ``path`` that
    ``selector`` picks (``-k`` rules: a substring or a glob of the benchmark or implementation
    name); a DefinitionError naming the candidates when none or several match.

    ``steadybench ab`` measures one case per side this way; its workers resolve the case in
    their own interpreter, which may be another Python or another checkout.
    """
    definitions = load_file(path)
    found = build_benchmarks(definitions.specs, lambda spec: None, selector)
    found += [b for b in definitions.benchmarks if matches(selector, b.title)]
    cases = [(config.implementation, params, bench.title)
             for bench in found for config, params in bench.cases()]
    exact = [c for c in cases if selector in (c[0].name, f"{c[2]}::{c[0].name}")]
    if len(cases) > 1 and len(exact) == 1:  # "x" names x, not also "x + 1"
        cases = exact
    if len(cases) == 1:
        return cases[0]
    names = ", ".join(dict.fromkeys(
        f"{title}" + (f"::{impl.name}" if impl.name != title else "")
        + (f" [{params.name}]" if len(params) else "") for impl, params, title in cases))
    where = f"{path}::{selector}" if selector else str(path)
    if not cases:
        raise DefinitionError(f"{where}: no benchmark matches"
                              + (f" (the file defines {', '.join(definitions.names())})"
                                 if definitions.names() else ""))
    raise DefinitionError(f"{where}: {len(cases)} cases match ({names}); name one: FILE::NAME")


def mark_origin(benchmarks: Iterable[Benchmark], path: str | os.PathLike[str]) -> None:
    """Record on each implementation the file it was defined in, so worker processes can
    rebuild it (see :func:`find_implementation`)."""
    where = str(Path(path).resolve())
    for bench in benchmarks:
        for config in bench.configurations:
            config.implementation.origin = (where, bench.title, config.implementation.name)
