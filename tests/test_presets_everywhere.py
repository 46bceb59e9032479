"""Same behaviour everywhere (issue 24): ``--preset`` on ``ab`` and ``timeit``, the machine
session's after-run stage, and ``--time-limit``'s one meaning in ``ab`` and ``evaluate``.

The managed preset tunes a fake board (governor, boost, devfreq...) around the comparison; every
file must be back byte for byte afterwards, and the result must record what was applied.
The machine session behind ``exec``, ``iters``, ``evaluate``, ``ab`` and ``timeit`` now runs
the preset's after-run and after-benchmark actions too (a plug-in countermeasure that uses them
was silently dropped there).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluate_machine import make_board
from fake_machine import CPU, snapshot
from steadybench.cli import main
from steadybench.runner.actions import Action
from steadybench.runner.runner import Stage
from steadybench.system import presets

GOV0 = f"{CPU}/cpu0/cpufreq/scaling_governor"


@pytest.fixture
def board(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return make_board(tmp_path / "board")


class GovernorSeen(Action):
    """Reads the fake board's governor at each call: proves the preset was in force."""

    def __init__(self, board: Path, seen: list[str]) -> None:
        self.path, self.seen = board / GOV0, seen

    def __call__(self, ctx: object) -> None:
        self.seen.append(self.path.read_text().strip())


@pytest.fixture
def governor_seen(board: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every preset built in the test also gets an after-run action that reads the governor."""
    seen: list[str] = []
    build = presets.build_preset

    def with_probe(*args: object, **kwargs: object) -> presets.PresetPlan:
        plan = build(*args, **kwargs)  # type: ignore[arg-type]
        plan.actions.append((Stage.AFTER_RUN, GovernorSeen(board, seen)))
        return plan

    monkeypatch.setattr(presets, "build_preset", with_probe)
    return seen


def test_ab_preset_managed_restores_the_machine_exactly(tmp_path, board, governor_seen, capsys):
    before = snapshot(board)
    out = tmp_path / "ab.json"
    code = main(["--root", str(board), "ab", "-c", "true", "true", "--max-rounds", "6",
                 "--min-rounds", "6", "--preset", "managed", "--json", str(out), "-q"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert snapshot(board) == before
    data = json.loads(out.read_text())
    applied = {a["name"] for a in data["machine"]["applied"]}
    assert "tune" in applied, data["machine"]
    # the after-run stage ran after every execution (2 per round), with the board tuned
    executions = 2 * len(data["rounds"])
    assert len(governor_seen) == executions and set(governor_seen) == {"performance"}


def test_timeit_preset_managed_restores_the_machine_exactly(board, governor_seen, capsys):
    before = snapshot(board)
    code = main(["--root", str(board), "timeit", "sum(range(10))", "--vs", "sum(range(20))",
                 "--max-rounds", "6", "--execution-time", "0.005", "--preset", "managed",
                 "-q"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert snapshot(board) == before
    # two executions per round, each followed by the after-run action, the board tuned
    assert len(governor_seen) % 2 == 0 and len(governor_seen) >= 4
    assert set(governor_seen) == {"performance"}


def test_ab_preset_with_a_cluster_is_one_clear_line(board, capsys):
    code = main(["--root", str(board), "ab", "-c", "true", "true", "--preset", "managed",
                 "--cluster", "tcp://127.0.0.1:1"])
    captured = capsys.readouterr()
    assert code == 2
    assert "--preset" in captured.err and "Traceback" not in captured.err


def test_machine_session_runs_after_run_and_after_benchmark_actions(board):
    calls: list[str] = []

    class Recorder(Action):
        def __init__(self, label: str) -> None:
            self.label = label

        def __call__(self, ctx: object) -> None:
            calls.append(self.label)

    plan = presets.build_preset("baseline", str(board))
    for stage in Stage:
        plan.actions.append((stage, Recorder(stage.value)))
    session = presets.MachineSession(plan, clock=lambda: 0, sleep=lambda s: None)
    session.start()
    for _ in range(2):
        session.before_run()
        session.after_run()
    session.finish()
    session.close()
    assert calls == ["before_benchmark", "before_run", "after_run", "before_run", "after_run",
                     "after_benchmark"]


def test_a_variants_time_limit_covers_all_its_executions():
    """ab's --time-limit, as everywhere: the variant's executions together. On an injected
    clock each execution takes 40 s of a 100 s limit: the third gets the 20 s left as its
    timeout, the fourth does not start."""
    from steadybench.ab.variants import CommandVariant

    variant = CommandVariant("A", "true", time_limit=100.0)
    now = [0.0]
    variant._deadline.clock = lambda: now[0]
    timeouts = []
    real_run = variant.runner.run

    def run(argv, timeout=None):
        timeouts.append(timeout)
        return real_run(argv, timeout=timeout)

    variant.runner.run = run  # type: ignore[method-assign]
    outcomes = []
    for _ in range(4):
        outcomes.append(variant.execute())
        now[0] += 40.0
    assert [o.value is not None for o in outcomes] == [True, True, True, False]
    assert timeouts == [100.0, 60.0, 20.0]
    assert "hard time limit (100 s for all executions of A)" in outcomes[3].error


def test_evaluate_launches_of_a_case_share_its_time_limit(tmp_path):
    """evaluate's --time-limit: the launches of one case under one preset together (each long
    run has its own). A target whose executions take 4 s of a 10 s limit: the third launch
    of a preset gets 2 s, the fourth is not started and says why."""
    from steadybench.evaluate.session import (
        EvaluateOptions,
        EvaluationSession,
        ScheduleItem,
        Unit,
    )
    from steadybench.model.results import CaseResult

    now = [0.0]
    limits: list[tuple[str, float]] = []

    class Target:
        def units(self) -> list[Unit]:
            return [Unit(0, "b", "", {})]

        def execute(self, unit, preset, runs, options) -> CaseResult:
            limits.append((preset, options.time_limit))
            now[0] += 4.0
            case = CaseResult("b", "b", {})
            case.add_run("ok", {"wall_time": 1.0})
            return case

    options = EvaluateOptions(time_limit=10.0, launches=4, runs=1, root=str(tmp_path))
    session = EvaluationSession(Target(), options, clock=lambda: now[0])
    unit = Target().units()[0]
    for launch in range(4):
        session._one(unit, ScheduleItem(0, "baseline", "launches", launch), launch)
    session._one(unit, ScheduleItem(0, "managed", "launches", 0), 4)
    session._one(unit, ScheduleItem(0, "baseline", "long", 0), 5)
    assert limits == [("baseline", 10.0), ("baseline", 6.0), ("baseline", 2.0),
                      ("managed", 10.0), ("baseline", 10.0)]
    skipped = session.records[3].case
    assert skipped.n == 0 and "hard time limit (10 s" in skipped.errors[0]
