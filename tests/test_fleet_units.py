"""The fleet's parts that need no cluster: the host level's statistics (against scipy), the
lost-attempt record, scheduler addresses, option checks, pairing by host, the shipped file."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

pytest.importorskip("distributed")

from steadybench.cli import main  # noqa: E402
from steadybench.compare.readers import SampleSet  # noqa: E402
from steadybench.errors import ConfigurationError  # noqa: E402
from steadybench.fleet.attempts import lost_attempts  # noqa: E402
from steadybench.fleet.connect import FleetError, scheduler_address  # noqa: E402
from steadybench.fleet.hosts import breakdown, components, host_loads  # noqa: E402
from steadybench.fleet.pairing import with_hosts  # noqa: E402
from steadybench.fleet.task import shipped_path  # noqa: E402
from steadybench.model.estimate import Estimate  # noqa: E402
from steadybench.model.results import CaseResult, Results  # noqa: E402


def test_components_match_one_way_anova_for_a_balanced_design() -> None:
    rng = np.random.default_rng(7)
    groups = [list(rng.normal(loc, 0.1, 5)) for loc in (1.0, 1.3, 0.8, 1.1)]
    within, between, component = components(groups)
    f, _p = stats.f_oneway(*groups)
    n = 5
    assert n * between / within == pytest.approx(f, rel=1e-12)
    # the definitions, independently: pooled within variance and variance of the means
    assert within == pytest.approx(np.mean([np.var(g, ddof=1) for g in groups]), rel=1e-12)
    assert between == pytest.approx(np.var([np.mean(g) for g in groups], ddof=1), rel=1e-12)
    assert component == pytest.approx(between - within / n, rel=1e-12)


def test_components_unbalanced_and_degenerate() -> None:
    groups = [[1.0, 1.2, 1.1], [2.0, 2.2]]
    within, between, component = components(groups)
    ss_within = sum((x - np.mean(g)) ** 2 for g in groups for x in g)
    assert within == pytest.approx(ss_within / (5 - 2))
    n_bar = 2 / (1 / 3 + 1 / 2)  # harmonic mean of the group sizes
    assert component == pytest.approx(between - within / n_bar)
    # hosts that agree better than their executions: the host component is 0, not negative
    assert components([[1.0, 2.0], [1.5, 1.5]])[2] == 0.0
    # one host: no between-host figure
    assert components([[1.0, 2.0]])[1:] == (None, None)


def _case(host: str, values: list[float], i: int = 0) -> CaseResult:
    case = CaseResult("bench", "bench", {"n": i})
    case.processes = [{"index": k, "value": v} for k, v in enumerate(values)]
    mean = sum(values) / len(values)
    case.estimate = Estimate(value=mean, ci_low=min(values), ci_high=max(values),
                             confidence=0.95, unit="s", method="auto", level="executions")
    case.extra["host"] = host
    case.extra["fleet"] = {"host": host, "started": 10.0, "ended": 12.5}
    return case


def test_breakdown_per_case_across_hosts_with_a_t_interval() -> None:
    cases = [_case("a", [1.0, 1.1, 0.9]), _case("b", [2.0, 2.1, 1.9]),
             _case("c", [1.5, 1.4, 1.6]), _case("a", [5.0], i=1)]
    [item] = breakdown(cases)  # the second case ran on one host only
    assert [h.host for h in item.hosts] == ["a", "b", "c"]
    means = [1.0, 2.0, 1.5]
    assert item.value == pytest.approx(np.mean(means))
    low, high = stats.t.interval(0.95, 2, loc=np.mean(means), scale=stats.sem(means))
    assert (item.ci_low, item.ci_high) == (pytest.approx(low), pytest.approx(high))
    assert item.between_cov == pytest.approx(
        math.sqrt(np.var(means, ddof=1) - 0.01 / 3) / np.mean(means))
    assert item.within_cov == pytest.approx(0.1 / 1.5)
    assert json.dumps(item.to_dict())  # plain values for the results files


def test_host_loads_count_cases_and_lost_attempts() -> None:
    a, b = _case("a", [1.0]), _case("b", [1.0])
    b.extra["fleet"]["lost_attempts"] = [{"host": "a", "runs": 3}]
    loads = {x.host: x for x in host_loads(Results(suite="s", cases=[a, b]))}
    assert loads["a"].cases == 1 and loads["a"].lost_attempts == 1
    assert loads["b"].busy_s == pytest.approx(2.5)


def test_lost_attempts_from_events() -> None:
    events = [
        (1.0, {"kind": "start", "key": "3", "attempt": "x1", "host": "dead", "worker": "w1",
               "time": 100.0}),
        (2.0, {"kind": "execution", "key": "3", "attempt": "x1", "host": "dead",
               "entry": {"index": 0, "value": 0.5, "n": 2}, "values": [0.5, 0.6]}),
        (3.0, {"kind": "start", "key": "3", "attempt": "y2", "host": "alive", "worker": "w2",
               "time": 101.0}),
        (4.0, {"kind": "start", "key": "4", "attempt": "z3", "host": "alive", "worker": "w2",
               "time": 102.0}),
        (5.0, {"kind": "start", "key": "5", "attempt": "p4", "host": "alive", "worker": "w2",
               "time": 103.0}),
        (6.0, {"kind": "partial", "key": "5", "attempt": "p4", "host": "alive"}),
        (7.0, "not a steadybench event"),
    ]
    lost = lost_attempts(events, {"3": "y2", "4": "z3"})
    assert list(lost) == ["3"]  # key 5 was stopped and sent back: not lost
    [attempt] = lost["3"]
    assert attempt.host == "dead" and attempt.runs == 2 and attempt.started == 100.0
    record = attempt.to_dict()
    assert record["lost"] is True and record["executions"][0]["values"] == [0.5, 0.6]


def test_scheduler_address_forms(tmp_path: Path) -> None:
    assert scheduler_address("tcp://10.0.0.1:8786") == "tcp://10.0.0.1:8786"
    assert scheduler_address("10.0.0.1:8786") == "tcp://10.0.0.1:8786"
    good = tmp_path / "scheduler.json"
    good.write_text(json.dumps({"address": "tcp://127.0.0.1:9999"}))
    assert scheduler_address(str(good)) == "tcp://127.0.0.1:9999"
    for text, message in (("{", "not a readable Dask scheduler file"),
                          ('{"address": 5}', "names no address")):
        good.write_text(text)
        with pytest.raises(FleetError, match=message):
            scheduler_address(str(good))
    with pytest.raises(FleetError, match="neither a scheduler address"):
        scheduler_address(str(tmp_path / "missing"))


@pytest.mark.parametrize("args, message", [
    (["--every-host"], "error: --every-host needs --cluster"),
    (["--cluster", "tcp://127.0.0.1:1", "--preset", "managed"],
     "error: --preset with --cluster: a fleet host applies its own preset"),
    (["--cluster", "tcp://127.0.0.1:1", "--in-process"],
     "error: --in-process with --cluster"),
])
def test_cluster_option_checks(tmp_path: Path, capsys, args, message) -> None:
    bench = tmp_path / "b.py"
    bench.write_text("from steadybench import benchmark\n\n@benchmark\ndef f():\n"
                     "    return lambda: None\n")
    assert main(["run", str(bench), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1


def test_unreachable_scheduler_is_one_line(tmp_path: Path, capsys) -> None:
    bench = tmp_path / "b.py"
    bench.write_text("from steadybench import benchmark\n\n@benchmark\ndef f():\n"
                     "    return lambda: None\n")
    assert main(["run", str(bench), "--cluster", "tcp://127.0.0.1:9", "--cluster-wait",
                 "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: cannot reach the Dask scheduler at tcp://127.0.0.1:9 "
                          "within 1 s") and err.count("\n") == 1
    assert main(["worker", "tcp://127.0.0.1:9", "--connect-timeout", "1"]) == 2
    err = capsys.readouterr().err
    assert err == ("error: cannot reach the Dask scheduler at tcp://127.0.0.1:9 within 1 s "
                   "(no answer)\n")


def test_pairing_by_host_adds_the_host_to_the_key(tmp_path: Path) -> None:
    results = Results(suite="s", cases=[_case("a", [1.0, 1.1]), _case("b", [2.0, 2.1])])
    paired = with_hosts(SampleSet(str(tmp_path / "r.json"), "steadybench", [],
                                  results=results))
    assert sorted(s.key for s in paired.samples) == [("bench", "bench", "n=0,host=a"),
                                                     ("bench", "bench", "n=0,host=b")]
    assert list(paired.samples[0].executions) == [1.0, 1.1]
    bare = Results(suite="s", cases=[CaseResult("bench", "bench")])
    with pytest.raises(ConfigurationError, match="--by-host: .* has no host records"):
        with_hosts(SampleSet("x.json", "steadybench", [], results=bare))


def test_shipped_benchmark_file(tmp_path: Path, monkeypatch) -> None:
    original = tmp_path / "bench.py"
    original.write_bytes(b"x = 1\n")
    assert shipped_path(str(original), b"x = 1\n", str(tmp_path / "cache")) == str(original)
    # another text (a host with an older copy) or no file: the shipped text is used
    copy = shipped_path(str(original), b"x = 2\n", str(tmp_path / "cache"))
    assert copy != str(original) and Path(copy).read_bytes() == b"x = 2\n"
    assert Path(copy).name == "bench.py"
    gone = shipped_path(str(tmp_path / "elsewhere" / "bench.py"), b"x = 2\n",
                        str(tmp_path / "cache"))
    assert gone == copy


def test_host_section_of_the_report(tmp_path: Path) -> None:
    from steadybench.fleet.report import host_section_html, hosts_figure, write_hosts_page

    cases = [_case("<b>a</b>", [1.0e-6, 1.1e-6]), _case("b", [2.0e-6, 2.2e-6])]
    results = Results(suite="s", cases=cases)
    html = host_section_html(results)
    assert "&lt;b&gt;a&lt;/b&gt;" in html and "<b>a</b>" not in html
    assert html.count("data:image/png;base64,") == 1 and "spread between hosts" in html
    [item] = breakdown(cases)
    ax = hosts_figure(item).axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["<b>a</b>", "b"]
    assert ax.get_xlabel() == "time per call (µs)"
    assert host_section_html(Results(suite="s", cases=[CaseResult("x", "x")])) == ""
    page = write_hosts_page(results, tmp_path / "hosts.html").read_text()
    assert page.startswith("<!doctype html>") and html in page


def test_the_main_report_groups_by_host(tmp_path: Path) -> None:
    """Issue 17: the report groups by host — the per-host section is part of the main report
    of a results file run on a fleet (the report's context-section hook)."""
    from steadybench.output.report import write_report

    cases = [_case("host-a", [1.0e-6, 1.1e-6]), _case("host-b", [2.0e-6, 2.2e-6])]
    results = Results(suite="s", cases=cases,
                      context={"fleet": {"scheduler": "tcp://127.0.0.1:1", "run_id": "r1"}})
    html = write_report([results], tmp_path / "r.html").read_text()
    assert "Hosts (2)" in html and "spread between hosts" in html
    assert "host-a" in html and "tcp://127.0.0.1:1" in html
