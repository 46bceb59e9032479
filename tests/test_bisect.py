"""``steadybench bisect``: the search (with a simulated measure: every first-bad position, skips,
the step bound and the Bonferroni confidence), and live on generated git repositories whose
benchmark's loop count lives in a file: 5 commits with 6 % more work from commit 4, bisected
on instruction counts (exact, so the test cannot be swayed by a loaded machine), and 5 commits
with 50 % more work from commit 3, bisected on time."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from steadybench.ab.bisect import (
    BAD,
    GOOD,
    SKIP,
    Commit,
    Step,
    bisect,
    max_steps,
    step_confidence,
)
from steadybench.ab.bisect_run import judge, parse_range
from steadybench.cli import main
from steadybench.errors import ConfigurationError

COMMITS = [Commit(f"{i:040x}", f"commit {i}") for i in range(2, 41)]  # after the good commit 1
GOOD_COMMIT = Commit(f"{1:040x}", "commit 1")


def fake(first_bad: int | None, skip: frozenset[int] = frozenset()):
    """A measure that calls commit number >= first_bad slower, and skips those in ``skip``."""
    calls: list[int] = []

    def measure(commit: Commit, position: int) -> Step:
        number = int(commit.subject.split()[1])
        calls.append(number)
        if number in skip:
            return Step(commit, position, SKIP, reason="build failed: status 3")
        bad = first_bad is not None and number >= first_bad
        return Step(commit, position, BAD if bad else GOOD, 0.06 if bad else 0.0)
    return measure, calls


@pytest.mark.parametrize("first_bad", range(2, 41))
def test_every_first_bad_commit_is_found_within_the_bound(first_bad):
    measure, calls = fake(first_bad)
    result = bisect(GOOD_COMMIT, COMMITS, measure, 0.99)
    assert result.first_bad is not None
    assert result.first_bad.subject == f"commit {first_bad}"
    assert len(result.steps) <= max_steps(len(COMMITS)) == 7
    assert calls[0] == 40  # the bad end is confirmed first
    assert result.evidence is not None and result.evidence.commit == result.first_bad


def test_no_regression_stops_after_the_bad_end():
    measure, calls = fake(None)
    result = bisect(GOOD_COMMIT, COMMITS, measure, 0.99)
    assert not result.found and not result.candidates and calls == [40]


def test_skipped_commits_are_stepped_around_or_named():
    measure, calls = fake(27, skip=frozenset({20, 25}))
    result = bisect(GOOD_COMMIT, COMMITS, measure, 0.99)
    assert result.first_bad.subject == "commit 27"
    assert calls[1] == 20 and calls[2] in (19, 21)  # tried, skipped, stepped around
    # the only commit before the first bad one cannot be built: two candidates remain
    measure, _ = fake(27, skip=frozenset({26}))
    short = [c for c in COMMITS if 25 <= int(c.subject.split()[1]) <= 28]
    result = bisect(COMMITS[22], short[1:], measure, 0.99)  # good = commit 24
    assert not result.found
    assert [c.subject for c in result.candidates] == ["commit 26", "commit 27"]


def test_the_confidence_is_shared_over_the_steps():
    assert max_steps(39) == 7 and max_steps(1) == 1 and max_steps(2) == 2
    level = step_confidence(0.95, 7)
    assert level == pytest.approx(1 - 0.05 / 7)
    measure, _ = fake(27)
    result = bisect(GOOD_COMMIT, COMMITS, measure, level)
    measured = len(result.steps)
    assert result.overall_confidence == pytest.approx(1 - measured * 0.05 / 7)
    assert result.overall_confidence >= 0.95


def test_an_undecided_step_is_judged_by_the_midpoint_and_says_so():
    c = COMMITS[0]
    assert judge(c, 1, "slower", 0.06, 0.03, 0.09, 12, "decided", 0.03).verdict == BAD
    assert judge(c, 1, "equivalent", 0.0, -0.01, 0.01, 12, "decided", 0.03).verdict == GOOD
    above = judge(c, 1, "no difference", 0.04, -0.02, 0.10, 40, "budget", 0.03)
    below = judge(c, 1, "no difference", 0.01, -0.05, 0.07, 40, "budget", 0.03)
    assert above.verdict == BAD and not above.decided and "above the midpoint" in above.reason
    assert below.verdict == GOOD and not below.decided
    # without a midpoint (the bad end itself) undecided is not a regression
    assert judge(c, 1, "no difference", 0.05, -0.02, 0.1, 40, "budget", 0.0).verdict == GOOD


def test_a_range_as_history_regressions_prints_it():
    assert parse_range("82dff01d1e..5759aee567") == ("82dff01d1e", "5759aee567")
    for bad in ("82dff01d1e", "..x", "a...b", "a.."):
        with pytest.raises(ConfigurationError):
            parse_range(bad)


# ---------------------------------------------------------------- live, on a generated repository
BENCH = '''import steadybench
from pathlib import Path

LOOPS = int((Path(__file__).parent / "loops.txt").read_text())


@steadybench.benchmark
def loop():
    def run():
        total = 0
        for i in range(LOOPS):
            total += i
        return total
    return run
'''


def make_repo(path: Path, slow_at: int | None, commits: int = 40, loops: int = 20000,
              slower: float = 0.06) -> Path:
    """``commits`` commits; from commit ``slow_at`` on the loop runs ``slower`` (6 %) more
    iterations than ``loops``."""
    path.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=path,
                       check=True, capture_output=True)

    (path / "bench.py").write_text(BENCH)
    git("init", "-q")
    for i in range(1, commits + 1):
        now = round(loops * (1 + slower)) if slow_at is not None and i >= slow_at else loops
        (path / "loops.txt").write_text(f"{now}\n")
        (path / "log.txt").write_text(f"commit {i}\n")
        git("add", "-A")
        git("commit", "-qm", f"commit {i}" + (f": a loop {slower:.0%} longer" if i == slow_at
                                                else ""))
    return path


def _state(repo: Path) -> tuple[str, str, str]:
    def out(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True).stdout
    return out("worktree", "list"), out("status", "--porcelain"), out("rev-parse", "HEAD")


# CPU time (thread_time): the test shares two CPUs with other processes, whose time-slices
# would otherwise be the noise; each step's budget allows about 30 rounds on a loaded machine
LIVE = ["--execution-time", "0.01", "--max-time", "15", "--seed", "1", "--clock", "thread_time"]
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None or sys.platform != "linux",
                                    reason="counts need valgrind on Linux")
#: counts: 2, 4 and 6 calls of a 4,000-iteration loop per counted process (no probe process)
COUNTS = ["--measure", "instructions", "--calls", "2"]


@pytest.mark.slow
@needs_git
@needs_valgrind
@pytest.mark.timeout(900)  # at most 4 counts under valgrind (seconds each, minutes at load 10)
def test_bisect_on_counts_names_commit_4_in_at_most_3_steps(tmp_path, monkeypatch, capsys):
    """A 5-commit search on instruction counts: every step exact, so the answer cannot
    depend on the machine's load; the good revision is counted once, each candidate once.
    (Each count starts Python under valgrind, seconds of processor time, so the repository
    is small: the search itself over 40 commits and every first-bad position is checked
    above with a simulated measure; here 4 candidates, the bad end and the halvings between
    it and the good revision, at most 3 steps.)"""
    repo = make_repo(tmp_path / "repo", slow_at=4, commits=5, loops=4000)
    before = _state(repo)
    monkeypatch.chdir(repo)
    history = tmp_path / "h.sqlite"
    out = tmp_path / "bisect.json"
    code = main(["bisect", "--good", "HEAD~4", "--bad", "HEAD", "bench.py::loop", *COUNTS,
                 "--history-url", str(history), "--json", str(out)])
    text = capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert code == 1, text
    assert doc["first_bad_subject"] == "commit 4: a loop 6% longer", text
    assert len(doc["steps"]) <= max_steps(4) == 3
    assert doc["measure"] == "instructions" and doc["exact"] is True
    assert doc["overall_confidence"] is None and doc["step_confidence"] is None
    assert doc["threshold"]["source"] in ("the default", "steadybench.toml: default")
    for step in doc["steps"]:  # 6 % more iterations of a loop that is nearly all of a call
        assert step["rounds"] == 0 and step["exact"].endswith("instructions per call")
        if step["verdict"] == "bad":
            assert 0.05 < step["change"] < 0.07, step
        else:
            assert abs(step["change"]) < 0.005, step
    assert "first commit with more instructions:" in text and "message: commit 4" in text
    assert "counts are exact (no confidence level, no Bonferroni)" in text
    assert text.count("counts are not time") == 1
    assert _state(repo) == before  # worktrees removed, checkout untouched
    # every step is in the history at its commit, and the good revision's count once
    listed = main(["history", "list", "--history-url", str(history), "--json",
                   str(tmp_path / "list.json")])
    assert listed == 0
    records = json.loads((tmp_path / "list.json").read_text())
    assert len(records) == len(doc["steps"]) + 1
    assert {r["commit"] for r in records} == {s["commit"] for s in doc["steps"]} | {doc["good"]}


@pytest.mark.slow
@needs_git
@needs_valgrind
@pytest.mark.timeout(600)
def test_nothing_changed_on_counts_ends_with_no_regression(tmp_path, monkeypatch, capsys):
    repo = make_repo(tmp_path / "repo", slow_at=None, commits=6, loops=4000)
    monkeypatch.chdir(repo)
    (repo / "steadybench.toml").write_text('[thresholds]\n"loop" = "1%"\n')  # not committed
    code = main(["bisect", "--range", "HEAD~5..HEAD", "bench.py::loop", *COUNTS,
                 "--no-history"])
    text = capsys.readouterr().out
    assert code == 0, text
    assert "no regression between" in text and "first commit" not in text
    assert "beyond +1.00% (steadybench.toml: loop)" in text
    assert "(exact: " in text


@pytest.mark.slow
@needs_git
@pytest.mark.timeout(600)  # at most 3 steps of 15 s (the bad end 30 s), on a loaded machine
def test_bisect_on_time_names_a_50_percent_slowdown(tmp_path, monkeypatch, capsys):
    """The one live search on time. 50 % more work from commit 3 of 5 (3 steps, each some
    thirty executions in fresh workers: the repository is small), timed with the
    benchmark's own CPU time (thread_time): two CPU-bound processes beside the test take time
    slices, not the benchmark's CPU time, and a 50 % change is decided in a few rounds even at
    a step's 98.75 %; the budget (15 s a step) is far above what it needs."""
    repo = make_repo(tmp_path / "repo", slow_at=3, commits=5, slower=0.5)
    before = _state(repo)
    monkeypatch.chdir(repo)
    history = tmp_path / "h.sqlite"
    out = tmp_path / "bisect.json"
    code = main(["bisect", "--good", "HEAD~4", "bench.py::loop", *LIVE,
                 "--history-url", str(history), "--json", str(out)])
    text = capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert code == 1, text
    assert doc["first_bad_subject"] == "commit 3: a loop 50% longer", text
    assert len(doc["steps"]) <= max_steps(4) == 3
    # every step of the bound measured: 1 − 3 × 0.05/3 is 0.95 but for the floating point
    assert doc["overall_confidence"] >= 0.95 - 1e-12
    assert "first slower commit:" in text and "message: commit 3" in text
    assert _state(repo) == before
    records = json.loads(_history_list(history, tmp_path))
    assert len(records) == 2 * len(doc["steps"])  # both sides of every step


def _history_list(history: Path, tmp_path: Path) -> str:
    assert main(["history", "list", "--history-url", str(history), "--json",
                 str(tmp_path / "list.json")]) == 0
    return (tmp_path / "list.json").read_text()


@needs_git
def test_counts_refuse_time_options_and_a_missing_valgrind(tmp_path, monkeypatch, capsys):
    repo = make_repo(tmp_path / "repo", slow_at=None, commits=2)
    monkeypatch.chdir(repo)
    before = _state(repo)
    assert main(["bisect", "--good", "HEAD~1", "bench.py::loop", *COUNTS, "--max-time", "5",
                 "--no-history"]) == 2
    err = capsys.readouterr().err
    assert "--measure instructions does not take --max-time" in err and len(
        err.strip().splitlines()) == 1
    assert main(["bisect", "--good", "HEAD~1", "bench.py::loop", "--calls", "2",
                 "--no-history"]) == 2
    assert "--calls applies with --measure" in capsys.readouterr().err
    monkeypatch.setenv("STEADYBENCH_VALGRIND", str(tmp_path / "no-valgrind-here"))
    for extra in ([], ["--step"]):
        assert main(["bisect", "--good", "HEAD~1", "bench.py::loop", *COUNTS, *extra,
                     "--no-history"]) == 2
        err = capsys.readouterr().err
        assert "needs valgrind, which was not found" in err and len(err.strip().splitlines()) == 1
    assert _state(repo) == before  # nothing checked out before valgrind was found


def test_a_count_decision_states_its_threshold():
    from steadybench.ab.bisect_run import CountDecision
    from steadybench.counts.python import CountSettings
    from steadybench.history.thresholds import COUNTS as IN_COUNTS
    from steadybench.history.thresholds import PERCENT, Threshold

    settings = CountSettings("instructions")
    percent = CountDecision(settings, Threshold(PERCENT, 0.02), "--threshold")
    assert percent.fraction(1e6) == 0.02
    assert percent.text() == ("more instructions than the good revision beyond +2.00% "
                              "(--threshold)")
    counts = CountDecision(settings, Threshold(IN_COUNTS, 5000), "steadybench.toml: loop")
    assert counts.fraction(1e6) == pytest.approx(0.005)
    assert "beyond 5,000 instructions per call (steadybench.toml: loop)" in counts.text()


def test_the_answer_on_counts_is_exact_and_says_counts_are_not_time():
    from steadybench.ab.bisect_run import CountDecision
    from steadybench.cli.bisect import answer_lines, step_line
    from steadybench.counts.python import CountSettings
    from steadybench.history.thresholds import PERCENT, Threshold

    def counted(commit, position):
        bad = int(commit.subject.split()[1]) >= 27
        return Step(commit, position, BAD if bad else GOOD, 0.06 if bad else 0.0,
                    reason="more instructions beyond 0.02%" if bad else "the same",
                    exact="+48,000 instructions per call" if bad else "+0 instructions per call")
    decision = CountDecision(CountSettings("instructions"), Threshold(PERCENT, 0.0), "--threshold")
    result = bisect(GOOD_COMMIT, COMMITS, counted, 1.0)
    lines = answer_lines(result, 0.95, decision)
    assert lines[0] == f"first commit with more instructions: {COMMITS[25].sha}"
    assert "(exact: +48,000 instructions per call)" in lines[2]
    assert "no confidence level, no Bonferroni" in lines[3] and "Bonferroni)" not in lines[2]
    assert lines[-1].startswith("note: counts are not time")
    assert "rounds" not in step_line(result.steps[0], 39, 1, 7)
    same = bisect(GOOD_COMMIT, COMMITS, lambda c, p: Step(c, p, GOOD, 0.0, exact="+0 "
                                                         "instructions per call"), 1.0)
    lines = answer_lines(same, 0.95, decision)
    assert lines[0].startswith("no regression between ") and "(exact: +0 " in lines[0]
    from steadybench.cli.bisect import to_document

    doc = to_document(result, 0.95, decision)
    assert doc["exact"] is True and doc["overall_confidence"] is None
    assert doc["threshold"] == {"kind": "percent", "value": 0.0, "source": "--threshold"}
    assert doc["steps"][0]["exact"] == "+48,000 instructions per call"


@needs_git
def test_git_bisect_run_step_mode_and_build_failures(tmp_path, monkeypatch, capsys):
    repo = make_repo(tmp_path / "repo", slow_at=None, commits=3)
    monkeypatch.chdir(repo)
    # the candidate does not build: git's 125, with the reason
    (repo / "build.sh").write_text('test "$(cat log.txt)" = "commit 1" || '
                                   '{ echo "no compiler here" >&2; exit 3; }\n')
    code = main(["bisect", "--step", "--good", "HEAD~2", "bench.py::loop", *LIVE,
                 "--build", f"sh {repo / 'build.sh'}", "--no-history"])
    text = capsys.readouterr().out
    assert code == 125
    assert "build failed: status 3: no compiler here" in text
    assert _state(repo)[0].count("\n") == 1
    # bad input: one line, status 2
    assert main(["bisect", "bench.py::loop", "--no-history"]) == 2
    assert "--good" in capsys.readouterr().err
    assert main(["bisect", "--good", "nosuchrev", "bench.py::loop", "--no-history"]) == 2
    assert main(["bisect", "--good", "HEAD", "--bad", "HEAD~1", "bench.py::loop",
                 "--no-history"]) == 2
    assert "not an ancestor" in capsys.readouterr().err
    assert main(["bisect", "--from-history", "bench.py::loop", "--history-url",
                 str(tmp_path / "empty.sqlite")]) == 2
    assert "no slowdown of 'loop'" in capsys.readouterr().err
    assert main(["bisect", "--from-history", "--good", "HEAD", "bench.py::loop"]) == 2


@needs_git
def test_ctrl_c_leaves_the_repository_and_worktrees_as_they_were(tmp_path):
    repo = make_repo(tmp_path / "repo", slow_at=3, commits=4)
    before = _state(repo)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "steadybench", "bisect", "--good", "HEAD~3",
                             "bench.py::loop", "--execution-time", "0.01", "--max-time", "60",
                             "--max-rounds", "5000", "--no-history"], cwd=repo, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for line in proc.stderr:  # ready: a candidate's worktree exists and it is measuring
            if "measuring" in line:
                break
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "the repository and its worktrees are as they were" in err
    assert _state(repo) == before
    assert list(scratch.iterdir()) == []  # the worktrees' temporary folders are gone


@needs_git
def test_a_candidate_that_cannot_run_is_skipped_and_a_broken_good_one_is_an_error(
        tmp_path, monkeypatch, capsys):
    repo = make_repo(tmp_path / "repo", slow_at=None, commits=2)
    (repo / "bench.py").write_text(BENCH.replace("total = 0", "raise RuntimeError('broken')"))
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam",
                    "break it"], cwd=repo, check=True)
    monkeypatch.chdir(repo)
    code = main(["bisect", "--step", "--good", "HEAD~1", "bench.py::loop", *LIVE,
                 "--no-history"])
    text = capsys.readouterr().out
    assert code == 125 and "could not be measured" in text and "broken" in text
    code = main(["bisect", "--step", "--good", "HEAD", "bench.py::loop", *LIVE, "--no-history"])
    assert code == 2
    assert "the good revision" in capsys.readouterr().err
    assert _state(repo)[0].count("\n") == 1


def test_the_answer_says_when_steps_were_undecided():
    from steadybench.cli.bisect import answer_lines

    measure, _ = fake(27)

    def loose(commit, position):
        step = measure(commit, position)
        return Step(step.commit, step.position, step.verdict, step.change,
                    decided=position != 26)  # the step on commit 27 ran out of budget
    result = bisect(GOOD_COMMIT, COMMITS, loose, step_confidence(0.95, 7))
    lines = answer_lines(result, 0.95)
    assert lines[0].startswith("first slower commit:") and "message: commit 27" in lines[1]
    assert any("1 step(s) ended undecided" in line for line in lines)
    measure, _ = fake(None)
    lines = answer_lines(bisect(GOOD_COMMIT, COMMITS, measure, 0.99), 0.95)
    assert lines[0].startswith("no regression between ") and len(lines) == 1


@needs_git
def test_step_mode_and_skips_on_counts_with_a_stand_in_count(tmp_path, monkeypatch, capsys):
    """The wiring of ``bisect --measure`` around the count (git bisect run's exit statuses, the
    JSON, the history, a build failure, the good revision counted once), with the count itself
    stood in by the loop count × a fixed cost per iteration so that no valgrind runs here; the
    real counts are the two tests above."""
    from steadybench.counts import valgrind as vg
    from steadybench.counts import variants
    from steadybench.model.estimate import Estimate
    from steadybench.model.results import CaseResult

    counted: list[str] = []

    def stand_in(variant, settings, valgrind, name=None):
        counted.append(variant.label)
        value = 417.0 * int((Path(variant.cwd) / "loops.txt").read_text())
        case = CaseResult(name, name, unit=settings.measure, method="count")
        case.estimate = Estimate(value, value, value, None, settings.measure, "count",
                                 fields={"per": "call"})
        return case

    monkeypatch.setattr(variants, "count_variant", stand_in)
    monkeypatch.setattr(vg, "find_valgrind", lambda: vg.Valgrind("/bin/true", "3.19.0"))
    repo = make_repo(tmp_path / "repo", slow_at=3, commits=4)
    monkeypatch.chdir(repo)
    history, out = tmp_path / "h.sqlite", tmp_path / "step.json"
    code = main(["bisect", "--step", "--good", "HEAD~3", "bench.py::loop", *COUNTS,
                 "--threshold", "1000 counts", "--history-url", str(history), "--json", str(out)])
    text = capsys.readouterr().out
    assert code == 1, text  # HEAD has 6 % more: git bisect's "bad"
    assert "bisect step: " in text and "(exact: +500,400 instructions per call)" in text
    assert text.count("counts are not time") == 1
    doc = json.loads(out.read_text())
    assert doc["exact"] is True and doc["threshold"]["source"] == "--threshold"
    assert doc["threshold"]["kind"] == "counts" and doc["step"]["verdict"] == "bad"
    assert len(json.loads(_history_list(history, tmp_path))) == 2  # good and candidate
    # the search: commit 2 does not build (skipped), the good revision is counted once
    counted.clear()
    (repo / "build.sh").write_text('test "$(cat log.txt)" != "commit 2" || exit 3\n')
    code = main(["bisect", "--good", "HEAD~3", "bench.py::loop", *COUNTS, "--no-history",
                 "--build", f"sh {repo / 'build.sh'}", "--threshold", "50%"])
    text = capsys.readouterr().out
    assert code == 0, text  # 6 % is within a 50 % threshold: nothing to find
    assert "no regression between" in text and "beyond +50.00% (--threshold)" in text
    assert counted == ["A", "B"]
    code = main(["bisect", "--good", "HEAD~3", "bench.py::loop", *COUNTS, "--no-history",
                 "--build", f"sh {repo / 'build.sh'}"])
    text = capsys.readouterr().out
    # commit 2 cannot be built, so either it or commit 3 is the first with more instructions
    assert code == 0 and "is one of (the others were skipped): " in text, text
    assert "'commit 2': skip — build failed: status 3" in text
    assert counted.count("A") == 2  # once per search
