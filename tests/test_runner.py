"""The runner with a simulated clock: timing, stages, actions, limits, error policies, and
containment of whatever user code raises."""

import json
import signal
import sys
import threading

import pytest

from steadybench.cli import main
from steadybench.errors import ConfigurationError
from steadybench.meters import (
    CallableMeter,
    CpuTimeMeter,
    FileValueMeter,
    PeakMemoryMeter,
    SuccessfulRunsMeter,
)
from steadybench.methods.base import DirectMethod
from steadybench.model import CallableImplementation, Implementation, Parameters
from steadybench.processors import finalize_case
from steadybench.runner import (
    CompositeAction,
    ConditionalAction,
    CoolDownAction,
    ElapsedTime,
    FileWriteAction,
    PrintAction,
    Runner,
    Runs,
    SleepAction,
    Stage,
    WarmUpAction,
)
from steadybench.testing import SimulatedClock


def run_case(impl, runner, meters=()):
    return finalize_case(runner.execute(impl, Parameters(), meters), method=runner.method)


def test_direct_timing_includes_one_clock_read():
    clock = SimulatedClock(read_cost_ns=8_500)
    runner = Runner(Runs(20), clock=clock, sleep=clock.sleep)
    case = run_case(CallableImplementation(clock.workload(100_000), "w"), runner)
    assert case.n == 20
    assert case.stats["mean"] == pytest.approx(108_500e-9)  # work + ε
    assert case.estimate.value == pytest.approx(108_500e-9)
    assert case.stop_reason == "20 runs done"


def test_warmup_runs_are_recorded_but_not_counted():
    clock = SimulatedClock(read_cost_ns=10)
    runner = Runner(Runs(5), warmup=3, clock=clock)
    case = run_case(CallableImplementation(clock.workload(1000)), runner)
    assert case.status == ["warmup"] * 3 + ["ok"] * 5
    assert case.n == 5 and len(case.samples) == 5


def test_hard_time_limit_always_ends_the_case():
    clock = SimulatedClock(read_cost_ns=10)
    runner = Runner(Runs(10**9), clock=clock, time_limit=0.01)
    case = run_case(CallableImplementation(clock.workload(1_000_000)), runner)
    assert case.stop_reason.startswith("hard limit")
    assert 9 <= case.n <= 11
    assert any("hard time limit" in w for w in case.warnings)


def test_elapsed_time_condition_on_the_simulated_clock():
    clock = SimulatedClock()
    case = run_case(
        CallableImplementation(clock.workload(1e6)), Runner(ElapsedTime(0.05), clock=clock)
    )
    assert case.n == 50


class Flaky(Implementation):
    def __init__(self, fail_every, policy):
        self.error_policy = policy
        super().__init__("flaky")
        self.calls = 0
        self.fail_every = fail_every

    def run(self):
        self.calls += 1
        if self.calls % self.fail_every == 0:
            raise ValueError(f"boom {self.calls}")


def test_error_policy_stop_and_continue():
    stop_case = run_case(Flaky(3, "stop"), Runner(Runs(10)))
    assert stop_case.n == 2 and stop_case.status[-1] == "failed"
    assert stop_case.stop_reason.startswith("run failed: ValueError: boom 3")
    go_on = run_case(Flaky(3, "continue"), Runner(Runs(10)))
    assert go_on.n == 10 and go_on.count("failed") == 4
    assert go_on.errors[0] == "ValueError: boom 3"


def test_always_failing_run_and_setup_failure_are_recorded():
    def bad():
        raise RuntimeError("always")

    case = run_case(CallableImplementation(bad, "bad"), Runner(Runs(5)))
    assert case.n == 0 and case.errors == ["RuntimeError: always"] and case.failed
    assert case.stats["mean"] is None and case.ci is None

    class BadSetup(Implementation):
        def setup(self, params):
            raise OSError("no input file")

    case = run_case(BadSetup("s"), Runner(Runs(5)))
    assert case.errors == ["setup failed: OSError: no input file"] and case.runs_recorded == 0


class Recorder(Implementation):
    def __init__(self, log):
        super().__init__("rec")
        self.log = log

    def setup(self, params):
        self.log.append("setup")

    def init_run(self):
        self.log.append("init")

    def run(self):
        self.log.append("run")

    def release_run(self):
        self.log.append("release")

    def teardown(self):
        self.log.append("teardown")


def test_hooks_and_stages_run_in_order():
    log = []
    runner = Runner(Runs(2))
    for stage in Stage:
        runner.add_action(stage, lambda ctx, s=stage: log.append(s.value))
    run_case(Recorder(log), runner)
    per_run = ["before_run", "init", "run", "release", "after_run"]
    assert log == ["setup", "before_benchmark", *per_run, *per_run, "after_benchmark", "teardown"]


def test_meters_nest_around_the_timing():
    clock = SimulatedClock(read_cost_ns=0)
    cpu = SimulatedClock(read_cost_ns=0)
    values = iter([1.0, 2.0, 3.0])

    def work():
        clock.advance(500)
        cpu.advance(400)

    meters = [
        CpuTimeMeter(clock=cpu),
        SuccessfulRunsMeter(),
        CallableMeter("reading", lambda: next(values), unit="x"),
    ]
    case = run_case(CallableImplementation(work), Runner(Runs(3), clock=clock), meters)
    assert case.values("wall_time") == [pytest.approx(500e-9)] * 3
    assert case.values("cpu_time") == [pytest.approx(400e-9)] * 3
    assert case.values("success") == [1.0] * 3
    assert case.values("reading") == [1.0, 2.0, 3.0]
    assert case.units["reading"] == "x"


def test_file_value_and_peak_memory_meters(tmp_path):
    sensor = tmp_path / "temp"
    sensor.write_text("45000\n")
    meter = FileValueMeter(sensor, "temperature", "°C", scale=0.001)
    assert meter.stop(True) == 45.0
    sensor.write_text("garbage")
    assert meter.stop(True) is None and "does not hold a number" in meter.last_error
    mem = PeakMemoryMeter()
    mem.start()
    block = bytearray(2_000_000)
    peak = mem.stop(True)
    mem.close()
    assert peak >= 2_000_000 and len(block) == 2_000_000


def test_cooldown_hysteresis_with_a_sensor_cooled_by_a_thread():
    """Above 70 it waits until the sensor reads 60 or less, polling; a thread cools it."""
    temperature = {"value": 80.0}
    lock = threading.Lock()
    stop = threading.Event()

    def cool():
        while not stop.is_set():
            with lock:
                temperature["value"] -= 1.0
            stop.wait(0.001)

    def read():
        with lock:
            return temperature["value"]

    action = CoolDownAction(read, threshold=70, base=60, timeout=10, poll=0.001, name="cpu")
    runner = Runner(Runs(2))
    runner.add_action(Stage.BEFORE_RUN, action)
    thread = threading.Thread(target=cool)
    thread.start()
    try:
        case = run_case(CallableImplementation(lambda: None), runner)
    finally:
        stop.set()
        thread.join()
    assert read() <= 60.0 and action.waited > 0
    assert not [w for w in case.warnings if "cool-down" in w]
    # below the threshold nothing waits
    temperature["value"] = 65.0
    quiet = CoolDownAction(lambda: temperature["value"], threshold=70, base=60, poll=0.001)
    quiet_runner = Runner(Runs(1))
    quiet_runner.add_action(Stage.BEFORE_RUN, quiet)
    run_case(CallableImplementation(lambda: None), quiet_runner)
    assert quiet.waited == 0


def test_cooldown_timeout_and_missing_sensor_are_reported_not_waited_on(tmp_path):
    clock = SimulatedClock()
    hot = CoolDownAction(lambda: 90.0, threshold=70, base=60, timeout=5, poll=1, name="gpu")
    missing = CoolDownAction(
        FileValueMeter(tmp_path / "nope").stop.__self__.path.read_text, threshold=70, name="zone0"
    )
    runner = Runner(Runs(1), clock=clock, sleep=clock.sleep)
    runner.add_action(Stage.BEFORE_RUN, hot)
    runner.add_action(Stage.BEFORE_RUN, missing)
    case = run_case(CallableImplementation(lambda: None), runner)
    assert any("gpu still 90 after 5 s" in w for w in case.warnings)
    assert any("cannot read zone0" in w and "FileNotFoundError" in w for w in case.warnings)
    assert clock.now_ns - 1_000_000_000 < 10e9  # bounded: about 5 s of virtual waiting


def test_cooldown_is_bounded_per_case_says_what_it_waits_for_and_warns_once():
    """Issue 27 item 1: a sensor stuck at 85 °C made every run wait its full time-out, silently
    (50 runs × 120 s). Now the waits of a case share one 120 s budget, a progress line says what
    is waited for and for how long, and the case records that it gave up."""
    clock = SimulatedClock()
    lines: list[str] = []
    hot = CoolDownAction(lambda: 85.0, threshold=75, base=60, timeout=120, poll=1, name="cpu",
                         unit="°C", say=lines.append, report_every=40)
    runner = Runner(Runs(50), clock=clock, sleep=clock.sleep)
    runner.add_action(Stage.BEFORE_RUN, hot)
    case = run_case(CallableImplementation(lambda: None), runner)
    assert 119 <= hot.waited <= 121  # one budget in all, not 50
    assert clock.now_ns / 1e9 < 130
    assert lines[:3] == ["cooling: cpu 85°C > 60°C, 0 s of 120 s",
                         "cooling: cpu 85°C > 60°C, 40 s of 120 s",
                         "cooling: cpu 85°C > 60°C, 80 s of 120 s"]
    warned = [w for w in case.warnings if "cool-down" in w]
    assert len(warned) == 1 and "the rest of the case runs without waiting" in warned[0]
    assert case.extra["cooldown"]["cpu"]["gave_up"] is True
    assert case.extra["cooldown"]["cpu"]["limit_s"] == 120


def test_cooldown_timeout_must_be_finite():
    with pytest.raises(ConfigurationError, match="finite"):
        CoolDownAction(lambda: 1.0, threshold=70, timeout=float("inf"))


def test_warmup_action_reaches_target_or_times_out():
    clock = SimulatedClock()
    freq = {"mhz": 800.0}

    def work():
        clock.advance(1e6)
        freq["mhz"] = min(freq["mhz"] + 200, 2400)

    action = WarmUpAction(lambda: freq["mhz"], target=2400, timeout=5, name="cpu_freq")
    runner = Runner(Runs(1), clock=clock, sleep=clock.sleep)
    runner.add_action(Stage.BEFORE_BENCHMARK, action)
    case = run_case(CallableImplementation(work), runner)
    assert freq["mhz"] == 2400 and not [w for w in case.warnings if "warm-up" in w]

    never = WarmUpAction(lambda: 800.0, target=2400, timeout=0.01, workload=work)
    runner = Runner(Runs(1), clock=clock, sleep=clock.sleep)
    runner.add_action(Stage.BEFORE_BENCHMARK, never)
    case = run_case(CallableImplementation(lambda: None), runner)
    assert any("reached 800, not 2400" in w for w in case.warnings)


def test_file_write_restores_bytes_even_when_the_run_fails(tmp_path):
    target = tmp_path / "scaling_governor"
    target.write_bytes(b"powersave\n")
    runner = Runner(Runs(3))
    runner.add_action(Stage.BEFORE_BENCHMARK, FileWriteAction(target, "performance\n"))
    seen = []

    def check():
        seen.append(target.read_text())
        raise RuntimeError("fail")

    run_case(CallableImplementation(check), runner)
    assert seen == ["performance\n"]
    assert target.read_bytes() == b"powersave\n"
    with pytest.raises(ConfigurationError, match="cannot read"):
        FileWriteAction(tmp_path / "missing", "x")(None)


def test_composite_conditional_print_sleep(capsys):
    clock = SimulatedClock()
    log = []
    runner = Runner(Runs(4), clock=clock, sleep=clock.sleep)
    runner.add_action(
        Stage.BEFORE_RUN,
        ConditionalAction(
            lambda ctx: ctx.run_index % 2 == 0,
            CompositeAction(lambda ctx: log.append(("even", ctx.run_index)), SleepAction(1.0)),
            lambda ctx: log.append(("odd", ctx.run_index)),
        ),
    )
    runner.add_action(Stage.BEFORE_BENCHMARK, PrintAction(lambda ctx: f"start {ctx.params.name}"))
    start = clock.now_ns
    run_case(CallableImplementation(lambda: None), runner)
    assert log == [("even", 0), ("odd", 1), ("even", 2), ("odd", 3)]
    assert clock.now_ns - start >= 2e9  # two simulated sleeps of 1 s
    assert "start" in capsys.readouterr().err


def test_interrupt_keeps_the_runs_done():
    calls = {"n": 0}

    def work():
        calls["n"] += 1
        if calls["n"] == 6:
            signal.raise_signal(signal.SIGINT)  # Ctrl-C (a raise of its own is a failure)

    runner = Runner(Runs(100))
    with pytest.raises(KeyboardInterrupt):
        runner.execute(CallableImplementation(work), Parameters())
    case = runner.last_case
    assert case.interrupted and case.stop_reason == "interrupted"
    assert case.count("ok") == 5


def test_streaming_mode_keeps_no_samples():
    clock = SimulatedClock(read_cost_ns=5, jitter_ns=1, seed=3)
    runner = Runner(Runs(1000), clock=clock, keep_samples=False)
    case = run_case(CallableImplementation(clock.workload(100)), runner)
    assert case.samples is None and case.runs_recorded == 0 and case.n == 1000
    assert case.stats["mean"] == pytest.approx(105e-9, rel=0.01)
    assert case.stats["median"] is None and case.ci is not None


def test_runner_rejects_bad_settings():
    with pytest.raises(ConfigurationError):
        Runner(warmup=-1)
    with pytest.raises(ConfigurationError):
        Runner(time_limit=0)


# ---------------------------------------------------------------------------- containment
class Abort(BaseException):
    """A user's own BaseException subclass (not an Exception)."""


def _exit_zero():
    sys.exit(0)


def test_sys_exit_in_the_benchmark_is_a_failed_run_with_the_user_frames():
    case = run_case(CallableImplementation(_exit_zero, "exits"), Runner(Runs(5)))
    assert case.status == ["failed"] and case.n == 0 and case.failed
    assert case.errors == ["SystemExit: 0 — the benchmark called sys.exit(0)"]
    assert case.stop_reason == "run failed: SystemExit: 0 — the benchmark called sys.exit(0)"
    (entry,) = case.extra["tracebacks"]
    assert entry["error"] == case.errors[0]
    frames = "".join(entry["frames"])
    assert "in _exit_zero" in frames and "sys.exit(0)" in frames
    assert all(f'File "{__file__}"' in f for f in entry["frames"])  # no steadybench frames


def test_a_base_exception_subclass_in_the_benchmark_is_contained():
    def abort():
        raise Abort("enough")

    case = run_case(CallableImplementation(abort, "aborts"), Runner(Runs(5)))
    assert case.n == 0 and len(case.errors) == 1 and "\n" not in case.errors[0]
    assert case.errors[0].startswith("Abort: enough — raised by the benchmark")
    assert "raise Abort" in "".join(case.extra["tracebacks"][0]["frames"])


def test_system_exit_in_setup_and_teardown():
    class ExitsInSetup(Implementation):
        def setup(self, params):
            sys.exit(3)

    case = run_case(ExitsInSetup("s"), Runner(Runs(5)))
    assert case.errors == ["setup failed: SystemExit: 3 — the set-up called sys.exit(3)"]
    assert case.stop_reason == "setup failed" and case.runs_recorded == 0
    assert "in setup" in "".join(case.extra["tracebacks"][0]["frames"])

    class ExitsInTeardown(Implementation):
        def run(self):
            pass

        def teardown(self):
            raise Abort("late")

    case = run_case(ExitsInTeardown("t"), Runner(Runs(2)))
    assert case.n == 2 and not case.errors
    assert any(w.startswith("teardown failed: Abort: late") for w in case.warnings)


def test_base_exceptions_in_calibration_and_run_hooks_are_contained():
    class ExitsInInitRun(Implementation):
        def init_run(self):
            sys.exit("no")

    case = run_case(ExitsInInitRun("i"), Runner(Runs(2)))
    assert case.errors == ["SystemExit: 'no' — the benchmark called sys.exit('no')"]

    class ExitsInPrepare(DirectMethod):
        def prepare(self, implementation, clock):
            sys.exit(1)

    case = Runner(Runs(2), method=ExitsInPrepare()).execute(
        CallableImplementation(lambda: None), Parameters())
    assert case.errors == ["SystemExit: 1 — the benchmark called sys.exit(1)"]
    assert case.stop_reason == "error"


def test_tracebacks_kept_are_few_and_distinct():
    calls = {"n": 0}

    def flaky():
        calls["n"] += 1
        raise ValueError(f"boom {calls['n'] % 5}")

    impl = CallableImplementation(flaky, "flaky")
    impl.error_policy = "continue"
    case = run_case(impl, Runner(Runs(5), max_failures=20))
    assert len(case.extra["tracebacks"]) == 3
    assert len({t["error"] for t in case.extra["tracebacks"]}) == 3


def test_keyboard_interrupt_in_setup_or_teardown_still_propagates():
    class CtrlCInSetup(Implementation):
        def setup(self, params):
            raise KeyboardInterrupt

    runner = Runner(Runs(2))
    with pytest.raises(KeyboardInterrupt):
        runner.execute(CtrlCInSetup("k"), Parameters())
    assert runner.last_case.interrupted

    class CtrlCInTeardown(Implementation):
        def teardown(self):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        runner.execute(CtrlCInTeardown("k"), Parameters())


def test_run_command_reports_sys_exit_and_writes_the_results(tmp_path, capsys):
    """``sys.exit(0)`` inside a benchmark used to end steadybench with status 0 and no files."""
    bench = tmp_path / "bench.py"
    bench.write_text("import sys\nimport steadybench as sb\n\n"
                     "@sb.benchmark\ndef bad():\n    return lambda: sys.exit(0)\n\n"
                     "@sb.benchmark\ndef good():\n    return lambda: sum(range(10))\n")
    out = tmp_path / "r.json"
    code = main(["run", str(bench), "--in-process", "-q", "--runs", "5", "--json", str(out)])
    err = capsys.readouterr().err
    assert code == 1, err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "called sys.exit(0)" in errors[0], err
    assert "Traceback" not in err
    data = json.loads(out.read_text())
    bad, good = data["benchmarks"]
    assert bad["status"] == "failed" and bad["extra"]["tracebacks"]
    assert good["status"] == "ok" and good["n"] == 5
