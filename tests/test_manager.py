"""The manager: processors online and global, loggers, failures, interruption."""

import signal

import pytest

from steadybench import Benchmark, Manager, Parameters, PartialResults, Runner, Runs
from steadybench.model import CallableImplementation
from steadybench.output.loggers import Logger
from steadybench.processors import Processor
from steadybench.testing import SimulatedClock


class Log(Logger):
    def __init__(self):
        self.events = []

    def start(self, results, total):
        self.events.append(("start", total))

    def case_start(self, benchmark, implementation, params):
        self.events.append(("case_start", implementation, params.get("n")))

    def case_end(self, case):
        self.events.append(("case_end", case.implementation, case.params.get("n"), case.n))

    def benchmark_end(self, benchmark, cases):
        self.events.append(("benchmark_end", benchmark, len(cases)))

    def finish(self, results):
        self.events.append(("finish", results.interrupted))


class Tag(Processor):
    def __init__(self, log, tag):
        self.log, self.tag = log, tag

    def process(self, cases):
        self.log.append((self.tag, [c.implementation for c in cases]))


def build(clock, fail=False, interrupt_at=None):
    runner = Runner(Runs(3), clock=clock)
    calls = {"n": 0}

    def work():
        calls["n"] += 1
        if interrupt_at and calls["n"] == interrupt_at:
            signal.raise_signal(signal.SIGINT)  # Ctrl-C (a raise of its own is a failure)
        clock.advance(1000)

    def broken():
        raise ValueError("broken")

    bench = Benchmark("b").add_parameters(Parameters(n=1), Parameters(n=2))
    bench.add_configuration(runner, CallableImplementation(broken if fail else work, "first"))
    bench.add_configuration(runner, CallableImplementation(work, "second"))
    return bench


def test_order_of_processors_and_logger_events():
    clock = SimulatedClock(read_cost_ns=10)
    log, plog = Log(), []
    manager = Manager(
        "m",
        benchmarks=[build(clock)],
        loggers=[log],
        processors=[Tag(plog, "online")],
        global_processors=[Tag(plog, "global")],
    )
    results = manager.run()
    assert len(results) == 4 and all(c.n == 3 for c in results)
    assert plog == [
        ("online", ["first"]),
        ("online", ["second"]),
        ("online", ["first"]),
        ("online", ["second"]),
        ("global", ["first", "second", "first", "second"]),
    ]
    assert log.events[0] == ("start", 4) and log.events[-1] == ("finish", False)
    assert ("benchmark_end", "b", 4) in log.events
    assert results.environment["clock"]["name"] == "SimulatedClock"


def test_a_failing_benchmark_does_not_stop_the_others():
    results = Manager(benchmarks=[build(SimulatedClock())]).run()
    assert not results.failed
    results = Manager(benchmarks=[build(SimulatedClock(), fail=True)]).run()
    assert [c.implementation for c in results.failed] == ["first", "first"]
    assert all(c.n == 3 for c in results if c.implementation == "second")
    assert results.failed[0].errors == ["ValueError: broken"]


def test_ctrl_c_returns_partial_results_to_loggers():
    log = Log()
    manager = Manager(benchmarks=[build(SimulatedClock(), interrupt_at=5)], loggers=[log])
    with pytest.raises(PartialResults) as info:
        manager.run()
    partial = info.value.results
    assert partial.interrupted and log.events[-1] == ("finish", True)
    assert [c.n for c in partial] == [3, 1]
    assert partial.cases[1].interrupted and partial.cases[1].stats["mean"] is not None


def test_selection():
    manager = Manager(benchmarks=[build(SimulatedClock())])
    with pytest.raises(Exception, match="no benchmark matches"):
        manager.run(select=lambda title: False)
