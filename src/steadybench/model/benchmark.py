"""Benchmarks and configurations (Rancid's Benchmark and BenchmarkConfiguration, §V-A)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from .implementation import Implementation
from .parameters import Parameters

if TYPE_CHECKING:
    from ..runner.runner import Runner


@dataclass
class Configuration:
    """A runner paired with an implementation: how this code is to be run."""

    runner: Runner
    implementation: Implementation


@dataclass
class Benchmark:
    """A title, a list of configurations and a list of parameter sets.

    Every configuration is run with every parameter set. A benchmark without parameter sets runs
    each configuration once with an empty set.
    """

    title: str
    configurations: list[Configuration] = field(default_factory=list)
    parameters: list[Parameters] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)

    def add_configuration(self, runner: Runner, implementation: Implementation) -> Benchmark:
        self.configurations.append(Configuration(runner, implementation))
        return self

    def add_parameters(self, *params: Parameters | dict[str, Any]) -> Benchmark:
        for p in params:
            self.parameters.append(p if isinstance(p, Parameters) else Parameters(**p))
        return self

    def cases(self) -> Iterator[tuple[Configuration, Parameters]]:
        """Every (configuration, parameter set) pair; parameter sets outermost, so the
        implementations of one parameter set run next to each other."""
        if not self.configurations:
            raise ConfigurationError(f"benchmark {self.title!r} has no implementations")
        param_sets: Iterable[Parameters] = self.parameters or [Parameters()]
        for params in param_sets:
            for config in self.configurations:
                yield config, params
