"""Parameter sets: the named, immutable inputs of one run configuration (Rancid §V-A)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..errors import ConfigurationError


class Parameters(Mapping[str, Any]):
    """A named, immutable set of parameter values.

    Rancid requires parameters not to change once defined, so that repeated executions see the
    same input; this class has no mutating methods and is hashable. Values should be JSON
    scalars (numbers, strings, booleans, None) so results round-trip through files.

    >>> p = Parameters(n=1000)
    >>> p["n"], p.name
    (1000, 'n=1000')
    """

    __slots__ = ("_values", "_name")

    def __init__(self, _name: str | None = None, /, **values: Any) -> None:
        self._values: dict[str, Any] = dict(values)
        self._name = _name

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], name: str | None = None) -> Parameters:
        return cls(name, **dict(values))

    @property
    def name(self) -> str:
        """The given name, or ``k=v,k2=v2`` built from the values (empty for no parameters)."""
        if self._name is not None:
            return self._name
        return ",".join(f"{key}={value}" for key, value in self._values.items())

    def __getitem__(self, key: str) -> Any:
        try:
            return self._values[key]
        except KeyError:
            known = ", ".join(self._values) or "none"
            raise ConfigurationError(f"no parameter {key!r} (parameters: {known})") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __hash__(self) -> int:
        return hash((self._name, tuple(sorted((k, repr(v)) for k, v in self._values.items()))))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Parameters):
            return NotImplemented
        return self._values == other._values and self.name == other.name

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self._values.items())
        return (
            f"Parameters({inner})" if self._name is None else f"Parameters({self._name!r}, {inner})"
        )

    def to_dict(self) -> dict[str, Any]:
        return dict(self._values)


def parameter_grid(grid: Mapping[str, Iterable[Any] | Any]) -> list[Parameters]:
    """Every combination of the listed values, in order (the last name varies fastest).

    A value that is not a list, tuple or range is a single fixed value. An empty grid gives one
    empty parameter set, so a benchmark without parameters still runs once.
    """
    names = list(grid)
    choices: list[list[Any]] = []
    for name in names:
        value = grid[name]
        options = list(value) if isinstance(value, list | tuple | range) else [value]
        if not options:
            raise ConfigurationError(f"parameter {name!r} has no values")
        choices.append(options)
    return [Parameters(**dict(zip(names, combo))) for combo in itertools.product(*choices)]
