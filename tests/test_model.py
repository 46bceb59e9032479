"""Parameters, grids, implementations and benchmarks."""

import pytest

from steadybench.errors import ConfigurationError
from steadybench.model import (
    Benchmark,
    CallableImplementation,
    FunctionImplementation,
    Parameters,
    parameter_grid,
)
from steadybench.runner import Runner


def test_parameters_are_named_immutable_and_hashable():
    p = Parameters(n=1000, kind="random")
    assert p["n"] == 1000 and p.name == "n=1000,kind=random"
    assert Parameters("big", n=1)["n"] == 1 and Parameters("big", n=1).name == "big"
    with pytest.raises(TypeError):
        p["n"] = 3  # type: ignore[index]
    assert hash(p) == hash(Parameters(n=1000, kind="random"))
    assert {p: 1}[Parameters(n=1000, kind="random")] == 1
    with pytest.raises(ConfigurationError, match="no parameter 'm'"):
        p["m"]


def test_parameter_grid_is_the_cartesian_product_in_order():
    grid = parameter_grid({"n": [1, 2], "kind": ("a", "b", "c"), "fixed": 7})
    assert [g.to_dict() for g in grid][:4] == [
        {"n": 1, "kind": "a", "fixed": 7},
        {"n": 1, "kind": "b", "fixed": 7},
        {"n": 1, "kind": "c", "fixed": 7},
        {"n": 2, "kind": "a", "fixed": 7},
    ]
    assert len(grid) == 6
    assert parameter_grid({}) == [Parameters()]
    with pytest.raises(ConfigurationError, match="no values"):
        parameter_grid({"n": []})


def test_benchmark_runs_every_combination():
    runner = Runner()
    bench = Benchmark("b").add_parameters({"n": 1}, Parameters(n=2))
    bench.add_configuration(runner, CallableImplementation(lambda: None, "a"))
    bench.add_configuration(runner, CallableImplementation(lambda: None, "b"))
    pairs = [(c.implementation.name, p["n"]) for c, p in bench.cases()]
    assert pairs == [("a", 1), ("b", 1), ("a", 2), ("b", 2)]
    with pytest.raises(ConfigurationError, match="no implementations"):
        list(Benchmark("empty").cases())


def test_function_implementation_requires_a_callable():
    impl = FunctionImplementation(lambda n: n * 2, name="bad")
    with pytest.raises(ConfigurationError, match="must return the callable"):
        impl.setup(Parameters(n=3))
    good = FunctionImplementation(lambda n: lambda: n * 2, name="good")
    good.setup(Parameters(n=3))
    assert good.run() == 6
