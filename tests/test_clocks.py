"""Clock selection and the simulated clock's semantics."""

from __future__ import annotations

import time

import pytest

from steadybench.clocks import CLOCK_NAMES, clock_name, clock_properties, get_clock
from steadybench.errors import ConfigurationError
from steadybench.methods.common import probe_clock
from steadybench.testing import SimulatedClock


def test_get_clock_by_name():
    assert get_clock() is time.perf_counter_ns
    assert get_clock("process_time") is time.process_time_ns
    assert get_clock("thread_time_ns") is time.thread_time_ns
    assert get_clock("time.perf_counter_ns") is time.perf_counter_ns
    fake = SimulatedClock()
    assert get_clock(fake) is fake
    assert set(CLOCK_NAMES) >= {"perf_counter", "process_time", "thread_time"}
    assert clock_name(time.process_time_ns) == "process_time"
    with pytest.raises(ConfigurationError, match="unknown clock 'sundial'"):
        get_clock("sundial")


def test_clock_properties_of_simulated_clock():
    info = clock_properties(SimulatedClock(read_cost_ns=250), reads=100)
    assert info["read_cost_ns"] == 250 and info["resolution_ns"] == 250


def test_probe_clock_reads_cost_and_resolution():
    cost, resolution = probe_clock(SimulatedClock(read_cost_ns=8_500, jitter_ns=100, seed=1))
    assert cost == pytest.approx(8_500, abs=60)
    assert resolution < 8_500
    cost, resolution = probe_clock(lambda: 5)
    assert (cost, resolution) == (0.0, 1.0)


def test_real_clocks_are_integer_and_monotonic():
    for name in ("perf_counter", "process_time", "thread_time"):
        clock = get_clock(name)
        a, b = clock(), clock()
        assert isinstance(a, int) and b >= a


def test_simulated_clock_epsilon_is_read_cost():
    clock = SimulatedClock(read_cost_ns=8_500)
    work = clock.workload(100_000)
    t0 = clock()
    work()
    t1 = clock()
    assert t1 - t0 == 108_500
