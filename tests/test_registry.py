"""Registries and entry points: a plug-in package adds a method, a meter, a stop condition and a
countermeasure with one class each, found by name everywhere the built-ins are.

The plug-in is a fake installed distribution: a ``*.dist-info`` directory with ``METADATA`` and
``entry_points.txt`` next to its module, in a directory put on ``sys.path`` (what ``pip install``
leaves in site-packages).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

import steadybench as sb
from fake_machine import make_machine
from steadybench import registry
from steadybench.cli import main
from steadybench.errors import ConfigurationError
from steadybench.meters import make_meter
from steadybench.methods import METHOD_NAMES, METHODS, Method, make_method, method_options
from steadybench.model.implementation import CallableImplementation
from steadybench.model.parameters import Parameters
from steadybench.runner.runner import Runner
from steadybench.runner.stop import Runs, build_stop_condition, make_stop_condition
from steadybench.system.presets import apply_preset, build_preset, load_preset
from steadybench.testing import SimulatedClock

MODULE = "sbplug_demo"

PLUGIN = '''
from steadybench.meters import Meter
from steadybench.methods import Method
from steadybench.runner.actions import Action
from steadybench.runner.runner import Stage
from steadybench.runner.stop import StopCondition
from steadybench.system.presets import Countermeasure, Skip


class RepeatMethod(Method):
    """``repeat`` executions per sample between two clock reads."""

    name = "mine"

    def __init__(self, repeat: int = 2) -> None:
        self.repeat = int(repeat)

    def sample(self, implementation, clock):
        t0 = clock()
        for _ in range(self.repeat):
            implementation.run()
        return clock() - t0, self.repeat

    def options(self):
        return {"repeat": self.repeat}


class AfterRuns(StopCondition):
    def __init__(self, n: int = 5) -> None:
        self.n = int(n)

    def check(self, state):
        return f"plug-in: {state.runs} runs" if state.runs >= self.n else None

    def describe(self):
        return f"plug-in after {self.n}"


class ConstantMeter(Meter):
    name = "constant"
    unit = "u"

    def stop(self, ok):
        return 42.0


class LabelAction(Action):
    def __init__(self, label):
        self.label = label

    def __call__(self, ctx):
        ctx.case.extra.setdefault("labels", []).append(self.label)

    def describe(self):
        return f"label {self.label}"


class Label(Countermeasure):
    options = {"label": "plain"}

    def build(self, machine, options):
        action = LabelAction(str(options["label"]))
        return [(Stage.BEFORE_BENCHMARK, action)], action.describe()


class Never(Countermeasure):
    def build(self, machine, options):
        raise Skip("this machine has no flux capacitor")
'''

ENTRY_POINTS = f'''
[steadybench.methods]
mine = {MODULE}:RepeatMethod
broken = {MODULE}:DoesNotExist
crash = sbplug_no_such_module:Thing
wrongkind = {MODULE}:AfterRuns
direct = {MODULE}:RepeatMethod

[steadybench.stop_conditions]
after = {MODULE}:AfterRuns

[steadybench.meters]
constant = {MODULE}:ConstantMeter

[steadybench.countermeasures]
label = {MODULE}:Label
never = {MODULE}:Never
'''


BENCH = "import steadybench as sb\n\n@sb.benchmark()\ndef noop():\n    return lambda: None\n"


def _refresh() -> None:
    for reg in registry.REGISTRIES:
        reg.refresh()


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Install the fake ``sbplug-demo`` distribution for one test."""
    site = tmp_path / "site"
    info = site / "sbplug_demo-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sbplug-demo\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    (site / f"{MODULE}.py").write_text(textwrap.dedent(PLUGIN))
    monkeypatch.syspath_prepend(str(site))
    _refresh()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the taken name "direct"
        yield tmp_path
    sys.modules.pop(MODULE, None)
    _refresh()


# ---------------------------------------------------------------------------- (a) a method
def test_plugin_method_in_measure_and_make_method(plugin: Path) -> None:
    assert "mine" in METHOD_NAMES and "mine" in METHODS.names()
    assert METHOD_NAMES[: len(METHODS.builtin_names())] == METHODS.builtin_names()
    method = make_method("mine", repeat="3")
    assert isinstance(method, Method) and method.repeat == 3
    assert method_options("mine") == ["repeat"]
    with pytest.raises(ConfigurationError, match=r"method mine has no option 'points' "
                                                 r"\(options: repeat\)"):
        make_method("mine", points=5)

    clock = SimulatedClock(read_cost_ns=1000)
    est = sb.measure(clock.workload(100_000), method="mine", clock=clock, runs=8, warmup=0,
                     repeat=4)
    # four executions share one clock read: 100 µs + 1 µs / 4
    assert est.method == "mine"
    assert est.value == pytest.approx(100.25e-6)
    assert sb.measure(clock.workload(100_000), method=make_method("MINE"), clock=clock,
                      runs=4).value == pytest.approx(100.5e-6)


def test_plugin_method_on_the_command_line(plugin: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    bench = plugin / "bench_plug.py"
    bench.write_text(BENCH)
    out = plugin / "out.json"
    assert main(["run", str(bench), "--method", "mine", "--method-option", "repeat=3",
                 "--runs", "3", "--processes", "1", "-q", "--json", str(out)]) == 0
    assert '"method": "mine"' in out.read_text()
    capsys.readouterr()
    assert main(["run", str(bench), "--method", "nope", "-q"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown method 'nope'" in err and "mine" in err


# ---------------------------------------------------------------------------- (b) stop condition
def test_plugin_stop_condition(plugin: Path) -> None:
    cond = make_stop_condition("after", n="4")
    assert cond.describe() == "plug-in after 4"
    clock = SimulatedClock(read_cost_ns=10)
    runner = Runner(cond, clock=clock, sleep=clock.sleep)
    case = runner.execute(CallableImplementation(clock.workload(1000), "w"), Parameters())
    assert case.n == 4 and case.stop_reason == "plug-in: 4 runs"
    # by name in build_stop_condition: one more target next to the built-in ones
    combined = build_stop_condition(runs=3, condition="after")
    assert combined.describe() == "(runs >= 3 and plug-in after 5)"
    assert isinstance(make_stop_condition("runs", n="7"), Runs)


# ---------------------------------------------------------------------------- (c) countermeasure
def test_plugin_countermeasure_in_a_preset_file(plugin: Path) -> None:
    root = make_machine(plugin / "m")
    path = plugin / "lab.toml"
    path.write_text('countermeasures = ["gc", "label", "never", "monitor"]\n'
                    '[label]\nlabel = "hello"\n'
                    '[monitor]\nmeters = ["loadavg", "constant"]\n')
    spec = load_preset(str(path))
    assert spec.countermeasures == ["gc", "monitor", "label", "never"]  # built-ins first
    assert spec.opt("label") == {"label": "hello"}
    rec = build_preset(spec, root).record
    assert [a["name"] for a in rec["applied"]] == ["gc", "monitor", "label"]
    assert {"name": "label", "detail": "label hello"} in rec["applied"]
    assert {"name": "never", "reason": "this machine has no flux capacitor"} in rec["skipped"]
    assert rec["meters"] == ["loadavg", "constant"]

    clock = SimulatedClock(read_cost_ns=10)
    runner = Runner(Runs(3), clock=clock, sleep=clock.sleep)
    meters: list = []
    apply_preset(runner, str(path), str(root), add_meter=meters.append)
    case = runner.execute(CallableImplementation(clock.workload(1000), "w"), Parameters(),
                          meters)
    assert case.extra["labels"] == ["hello"]
    assert case.values("constant") == [42.0, 42.0, 42.0]

    path.write_text('countermeasures = ["label"]\n[label]\ncolour = "red"\n')
    with pytest.raises(ConfigurationError, match=r"\[label\] has unknown option\(s\) colour "
                                                 r"\(known: label\)"):
        load_preset(str(path))


def test_plugin_meter_by_name(plugin: Path) -> None:
    assert make_meter("constant").stop(True) == 42.0
    assert registry.meters.origin("constant").startswith("entry point constant = ")


# ---------------------------------------------------------------------------- (d) unknown names
def test_unknown_names_list_what_is_registered(plugin: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as info:
        make_method("nope")
    message = str(info.value)
    assert message.startswith("unknown method 'nope'; choose one of auto, direct, batch")
    assert "linefit" in message and "mine" in message
    with pytest.raises(ConfigurationError, match="unknown method 'nope'.*mine"):
        sb.measure(lambda: None, method="nope", clock=SimulatedClock(), runs=2)
    with pytest.raises(ConfigurationError, match="unknown stop condition 'nope'.*runs.*after"):
        make_stop_condition("nope")
    with pytest.raises(ConfigurationError, match="unknown meter 'nope'.*peak_memory.*constant"):
        make_meter("nope")
    path = tmp_path / "p.toml"
    path.write_text('countermeasures = ["turbo"]\n')
    with pytest.raises(ConfigurationError,
                       match=r"unknown countermeasure\(s\) turbo \(known: settle.*monitor, "
                             r"label, never\)"):
        load_preset(str(path))
    path.write_text('[monitor]\nmeters = ["nope"]\n')
    with pytest.raises(ConfigurationError, match=r"\[monitor\] meters: unknown meter 'nope'"):
        build_preset(load_preset(str(path)), make_machine(tmp_path / "m"))


# ---------------------------------------------------------------------------- (e) broken ones
def test_broken_entry_point_is_a_clear_error(plugin: Path) -> None:
    assert {"broken", "crash", "wrongkind"} <= set(METHOD_NAMES)  # listed, not imported
    with pytest.raises(ConfigurationError) as info:
        make_method("broken")
    assert str(info.value) == (
        "method 'broken' cannot be loaded: entry point broken = sbplug_demo:DoesNotExist "
        "(group steadybench.methods, package sbplug-demo 1.0) failed: AttributeError: "
        "module 'sbplug_demo' has no attribute 'DoesNotExist'")
    with pytest.raises(ConfigurationError, match="'crash' cannot be loaded: entry point crash = "
                                                 "sbplug_no_such_module:Thing.*"
                                                 "ModuleNotFoundError"):
        METHODS.get("crash")
    with pytest.raises(ConfigurationError, match="wrongkind.*not a subclass of "
                                                 "steadybench.methods.base.Method"):
        make_method("wrongkind")
    # the others still work
    assert make_method("mine").repeat == 2 and make_method("linefit").points > 0


def test_broken_entry_point_on_the_command_line(plugin: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    bench = plugin / "bench_plug.py"
    bench.write_text(BENCH)
    assert main(["run", str(bench), "--method", "broken", "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: method 'broken' cannot be loaded: entry point broken = ")
    assert err.count("\n") == 1 and "Traceback" not in err


def test_taken_name_keeps_the_builtin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    info = site / "sbplug_taken-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sbplug-taken\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[steadybench.methods]\ndirect = x:Y\n")
    monkeypatch.syspath_prepend(str(site))
    METHODS.refresh()
    try:
        with pytest.warns(RuntimeWarning, match="entry point direct = x:Y .*is ignored"):
            names = METHODS.names()
        assert names.count("direct") == 1
        assert METHODS.origin("direct") == "built in"
        assert type(make_method("direct")).__name__ == "DirectMethod"
    finally:
        METHODS.refresh()


# ---------------------------------------------------------------------------- from Python
def test_register_from_python_and_replace() -> None:
    @registry.stop_conditions.register("twice_runs")
    class TwiceRuns(Runs):
        pass

    try:
        assert isinstance(make_stop_condition("twice_runs", n=2), TwiceRuns)
        with pytest.raises(ConfigurationError, match="already registered"):
            registry.stop_conditions.register("twice_runs", TwiceRuns)
        with pytest.raises(ConfigurationError, match="not a subclass"):
            registry.stop_conditions.register("bad", int)
        registry.stop_conditions.register("runs", TwiceRuns, replace=True)
        assert registry.stop_conditions.get("runs") is TwiceRuns
    finally:
        registry.stop_conditions.unregister("twice_runs")
        registry.stop_conditions.unregister("runs")
    assert registry.stop_conditions.get("runs") is Runs
    assert registry.stop_conditions.names()[:2] == ("runs", "elapsed")
    assert "twice_runs" not in registry.stop_conditions


def test_importing_the_registry_stays_light() -> None:
    code = ("import sys, steadybench.registry as r; r.methods.builtin_names(); "
            "print(sorted(m for m in ('numpy', 'scipy', 'steadybench.methods') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


# ---------------------------------------------------------------------------- docs/extending.md
def test_extending_doc_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The example package of docs/extending.md, installed from its own pyproject.toml table."""
    import re
    import tomllib

    doc = (Path(__file__).resolve().parents[1] / "docs" / "extending.md").read_text()
    python = re.findall(r"```python\n(.*?)```", doc, flags=re.S)
    toml = re.findall(r"```toml\n(.*?)```", doc, flags=re.S)
    module, usage, pyproject, preset = python[0], python[1], tomllib.loads(toml[0]), toml[1]
    site = tmp_path / "site"
    info = site / "steadybench_extras-0.1.dist-info"
    info.mkdir(parents=True)
    (site / "sb_extras.py").write_text(module)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: steadybench-extras\n"
                                   "Version: 0.1\n")
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in points.items())
        for group, points in pyproject["project"]["entry-points"].items()))
    monkeypatch.syspath_prepend(str(site))
    _refresh()
    try:
        namespace: dict = {}
        exec(compile(usage, "extending.md", "exec"), namespace)  # noqa: S102
        assert namespace["est"].method == "repeat" and namespace["est"].value > 0
        case = namespace["case"]
        assert case.n >= 15 and "runs in" in case.stop_reason
        assert len(case.values("ctx_switches")) == case.n

        root = make_machine(tmp_path / "m")
        (root / "proc" / "meminfo").write_text("MemTotal: 1000 kB\nSwapTotal: 204800 kB\n"
                                              "SwapFree: 0 kB\n")
        path = tmp_path / "quiet.toml"
        path.write_text(preset)
        plan = build_preset(str(path), root)
        assert {"name": "swap", "detail": "warn when more than 64 MB of swap is in use"} in \
            plan.record["applied"]
        assert plan.record["meters"] == ["loadavg", "ctx_switches"]
        clock = SimulatedClock(read_cost_ns=10)
        runner = Runner(Runs(2), clock=clock, sleep=clock.sleep)
        apply_preset(runner, str(path), str(root))
        case = runner.execute(CallableImplementation(clock.workload(100), "w"), Parameters())
        assert case.extra["machine"]["swap_used_mb"] == 200
        assert any("200 MB of swap in use" in w for w in case.warnings)
        (root / "proc" / "meminfo").write_text("MemTotal: 1000 kB\n")
        assert {"name": "swap", "reason": "/proc/meminfo has no swap figures"} in \
            build_preset(str(path), root).record["skipped"]
    finally:
        sys.modules.pop("sb_extras", None)
        _refresh()
