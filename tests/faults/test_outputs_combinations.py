"""Issue 12, item 11: parameter combinations were not capped.

Three ``--param-range`` options of 1,000 values each asked for 10⁹ parameter sets, built one by
one until memory ran out. The combinations are now counted first and more than
``MAX_PARAMETER_SETS`` are refused in one line that gives the count.
"""

from __future__ import annotations

import time
import tracemalloc

import pytest

from steadybench.cli import main
from steadybench.errors import ConfigurationError
from steadybench.programs.commands import (
    MAX_PARAMETER_SETS,
    parameter_sets,
    parse_param_range,
)


def test_absurd_combinations_are_refused_before_any_is_built():
    params = [parse_param_range(f"{name}=1:1000") for name in "abc"]
    tracemalloc.start()
    try:
        with pytest.raises(ConfigurationError) as info:
            parameter_sets(params)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "1,000,000,000 parameter combinations (1,000 (a) × 1,000 (b) × 1,000 (c))" in \
        str(info.value)
    assert f"at most {MAX_PARAMETER_SETS:,}" in str(info.value)
    assert peak < 1_000_000  # nothing was listed


def test_the_cap_itself_is_allowed():
    sets = parameter_sets([("a", list(range(100))), ("b", list(range(MAX_PARAMETER_SETS // 100)))])
    assert len(sets) == MAX_PARAMETER_SETS and sets[-1] == {"a": 99, "b": 999}


def test_exec_refuses_in_one_line_at_once(capsys):
    started = time.monotonic()
    code = main(["exec", "--param-range", "a=1:1000", "--param-range", "b=1:1000",
                 "--param-range", "c=1:1000", "--", "echo", "{a}", "{b}", "{c}"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith("error: 1,000,000,000 parameter combinations"), err
    assert time.monotonic() - started < 10  # refused, not attempted


@pytest.mark.parametrize(("spec", "message"), [
    ("x=nan:1", "must be finite numbers"),
    ("x=0:inf", "must be finite numbers"),
    ("x=0:1e308:1e-308", "more than 100,000 values is too many"),
    ("x=0:" + "9" * 400 + ":0.5", "more than 100,000 values is too many"),
    ("x=1:1000000", "1,000,000 values is too many"),
])
def test_a_range_is_counted_before_it_is_listed(spec, message):
    with pytest.raises(ConfigurationError, match=message):
        parse_param_range(spec)
