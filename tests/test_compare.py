"""compare: readers, matching, verdicts, outputs and bad input through the CLI."""

import csv
import io
import json

import numpy as np
import pytest

from steadybench.cli import main
from steadybench.compare import CompareOptions, compare_files, read_samples
from steadybench.compare.readers import SampleFormatError
from steadybench.model.results import CaseResult, Results
from steadybench.output.results_io import write_results

T1 = [2.799, 2.046, 1.259, 1.877, 2.244]
T2 = [1.046, 0.259, 0.877, 1.244, 1.799]


def _write(path, values, header=""):
    path.write_text(header + "".join(f"{float(v)!r}\n" for v in values))
    return str(path)


def _results(path, cases):
    res = Results()
    for name, values, processes in cases:
        case = CaseResult(name, name)
        for v in values:
            case.add_run("ok", {"wall_time": float(v)})
        case.processes = [{"value": p, "n": 10} for p in processes]
        res.cases.append(case)
    write_results(res, path)
    return str(path)


def test_plain_files_worked_example(tmp_path, capsys):
    a = _write(tmp_path / "base.txt", T1, "# times of P\n\n")
    b = _write(tmp_path / "new.txt", T2)
    assert main(["compare", a, b, "--json", str(tmp_path / "c.json"), "--quiet"]) == 0
    doc = json.loads((tmp_path / "c.json").read_text())
    row = doc["benchmarks"][0]
    assert row["verdict"] == "faster" and row["test_unit"] == "values (one per execution)"
    assert row["speedup"] == pytest.approx(2.046 / 1.046)
    assert row["mean_protocol"]["one_sided_low"] == pytest.approx(0.3414632, abs=1e-7)
    # Welch always (equal n and variances here: the same bound as Student's, 003 Example 2.1)
    assert row["mean_protocol"]["test"] == "welch t"
    assert row["median_protocol"]["test"].startswith("brunner-munzel")
    assert "speedup_min" not in row


def test_reverse_is_slower_and_fail_on(tmp_path):
    a = _write(tmp_path / "base.txt", T1)
    b = _write(tmp_path / "new.txt", T2)
    assert main(["compare", b, a, "--quiet", "--fail-on", "slower"]) == 1
    assert main(["compare", a, b, "--quiet", "--fail-on", "slower"]) == 0
    assert main(["compare", a, b, "--quiet", "--fail-on", "change"]) == 1


def test_example_2_2_normality_is_checked_at_a_fixed_level(tmp_path):
    """003 Example 2.2: a t-test at 1% confidence on T2 vs T1. Shapiro–Wilk p = 0.9647 must not
    reject normality (it did when the check ran at the declared 1% level)."""
    a = _write(tmp_path / "t2.txt", T2)
    b = _write(tmp_path / "t1.txt", T1)
    doc = compare_files(a, b, CompareOptions(verdict_by="mean", confidence=0.01,
                                             correction="none"))[0].to_dict()
    row = doc["benchmarks"][0]
    checks = row["mean_protocol"]["assumptions"]["normality"]
    assert checks["base"]["pvalue"] == pytest.approx(0.9647, abs=1e-4)
    assert not checks["base"]["rejected"] and checks["level"] == 0.95
    assert row["mean_protocol"]["status"] == "ok"
    assert row["mean_protocol"]["test"] == "welch t" or row["mean_protocol"]["test"] == "student t"


def test_normality_is_checked_on_the_small_side_only(tmp_path):
    rng = np.random.default_rng(3)
    a = _write(tmp_path / "a.txt", rng.normal(1.0, 0.05, 10))
    b = _write(tmp_path / "b.txt", rng.lognormal(0, 0.8, 200))  # far from normal, but n ≥ 30
    doc = compare_files(a, b, CompareOptions(verdict_by="mean"))[0].to_dict()
    checks = doc["benchmarks"][0]["mean_protocol"]["assumptions"]["normality"]
    assert set(checks) == {"base", "level"}
    assert doc["benchmarks"][0]["mean_protocol"]["status"] == "ok"


def test_small_non_normal_is_inconclusive_or_permutation(tmp_path):
    skewed = [1.0, 1.01, 1.0, 1.02, 1.0, 1.01, 3.0, 1.0, 1.01, 1.0]
    a = _write(tmp_path / "a.txt", skewed)
    b = _write(tmp_path / "b.txt", [v * 0.5 for v in skewed])
    doc = compare_files(a, b, CompareOptions(verdict_by="mean"))[0].to_dict()
    row = doc["benchmarks"][0]
    assert row["verdict"].startswith("inconclusive") and "normality rejected" in row["warnings"][0]
    doc = compare_files(a, b, CompareOptions(verdict_by="mean",
                                             small_sample="permutation"))[0].to_dict()
    row = doc["benchmarks"][0]
    assert row["test"].startswith("permutation (mean") and row["verdict"] == "faster"


def test_confidence_auto_and_show_min(tmp_path, capsys):
    a = _write(tmp_path / "a.txt", T1)
    b = _write(tmp_path / "b.txt", T2)
    assert main(["compare", a, b, "--confidence", "auto", "--show-min", "--csv", "-"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    # two-sided p: median (Brunner–Munzel, W = 8.13 as scipy's, df 4) 0.00124 → 99%;
    # mean 0.02236 → 97%
    assert rows[0]["MedianConfLevel"] == "0.99" and rows[0]["MeanConfLevel"] == "0.97"
    assert float(rows[0]["SpeedupMin"]) == pytest.approx(1.259 / 0.259)
    assert rows[0]["IsMedianSignificant"] == "True"


def test_threshold_and_equivalence(tmp_path):
    rng = np.random.default_rng(1)
    a = _write(tmp_path / "a.txt", rng.normal(1.0, 0.01, 40))
    b = _write(tmp_path / "b.txt", rng.normal(1.001, 0.01, 40))
    comparison, _, _ = compare_files(a, b, CompareOptions(threshold=0.02, equivalence=True))
    assert comparison.verdicts == ["unchanged within ±2.00%"]
    comparison, _, _ = compare_files(a, b, CompareOptions())
    assert comparison.verdicts == ["no significant difference"]
    # a real 1% change, measured precisely: significant, but inside a 5% threshold
    c = _write(tmp_path / "c.txt", rng.normal(1.01, 0.001, 40))
    d = _write(tmp_path / "d.txt", rng.normal(1.0, 0.001, 40))
    comparison, _, _ = compare_files(c, d, CompareOptions())
    assert comparison.verdicts == ["faster"]
    doc = compare_files(c, d, CompareOptions(threshold=0.05))[0].to_dict()
    row = doc["benchmarks"][0]
    assert row["verdict"] == "no significant difference" and row["band"] == "inside"
    assert any("threshold" in w for w in row["warnings"])


def test_constant_samples(tmp_path):
    a = _write(tmp_path / "a.txt", [2.0] * 5)
    b = _write(tmp_path / "b.txt", [1.0] * 5)
    doc = compare_files(a, b, CompareOptions())[0].to_dict()
    row = doc["benchmarks"][0]
    assert row["verdict"] == "faster" and row["test"] == "exact (zero variance)"
    same, _, _ = compare_files(a, a, CompareOptions())
    assert same.verdicts == ["no significant difference"]


def test_one_execution_is_never_tested_on_its_runs(tmp_path):
    """Identical code run twice in one process each: thousands of runs, one execution a side.
    The runs are not independent; the comparison says so instead of "slower at p = 6e-44"."""
    rng = np.random.default_rng(4)
    base = _results(tmp_path / "base.json", [("f", rng.normal(1.0, 0.01, 5000), [1.0])])
    new = _results(tmp_path / "new.json", [("f", rng.normal(1.03, 0.01, 5000), [1.03])])
    doc = compare_files(base, new, CompareOptions())[0].to_dict()
    row = doc["benchmarks"][0]
    assert row["verdict"] == "inconclusive: one execution"
    assert row["p_value"] is None
    assert any("steadybench ab" in w and "1 execution" in w for w in row["warnings"])
    assert main(["compare", base, new, "--quiet", "--fail-on", "slower"]) == 0


def test_results_files_match_and_use_processes(tmp_path):
    rng = np.random.default_rng(2)
    base = _results(tmp_path / "base.json", [
        ("sort", rng.normal(1.0, 0.01, 30), [1.0, 1.01, 0.99, 1.0]),
        ("hash", rng.normal(2.0, 0.02, 30), []),
        ("only_base", rng.normal(1, 0.1, 5), [])])
    new = _results(tmp_path / "new.json", [
        ("hash", rng.normal(2.0, 0.02, 30), []),
        ("sort", rng.normal(0.9, 0.01, 30), [0.9, 0.91, 0.89, 0.9])])
    doc = compare_files(base, new, CompareOptions())[0].to_dict()
    rows = {r["benchmark"]: r for r in doc["benchmarks"]}
    assert set(rows) == {"sort", "hash"}
    assert rows["sort"]["test_unit"].startswith("executions") and rows["sort"]["base"]["n"] == 4
    assert rows["sort"]["run_noise"]["source"] == "default"  # two runs: between-run model
    assert rows["hash"]["verdict"] == "inconclusive: one execution"
    assert any("only_base" in w for w in doc["warnings"])
    assert doc["suite"]["benchmarks"] == 2
    assert doc["suite"]["proportion"]["method"] == "clopper-pearson"


def test_hyperfine_and_pyperf(tmp_path):
    hf = tmp_path / "hf.json"
    hf.write_text(json.dumps({"results": [{"command": "./old", "times": T1}]}))
    hf2 = tmp_path / "hf2.json"
    hf2.write_text(json.dumps({"results": [{"command": "./new", "times": T2}]}))
    comparison, _, _ = compare_files(str(hf), str(hf2), CompareOptions())
    assert comparison.verdicts == ["faster"]
    pp = tmp_path / "pp.json"
    pp.write_text(json.dumps({"version": "1.0", "metadata": {"name": "bm"}, "benchmarks": [
        {"runs": [{"warmups": [[1, 0.5]]}, {"values": [1.0, 1.2]}, {"values": [1.1, 1.3]}]}]}))
    s = read_samples(pp)
    assert s.kind == "pyperf" and s.samples[0].executions == pytest.approx([1.1, 1.2])
    assert s.samples[0].values.size == 4


def test_csv_column(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("run,time\n1,0.5\n2,0.6\n# comment\n3,0.7\n")
    assert read_samples(path, "time").samples[0].values.tolist() == [0.5, 0.6, 0.7]
    assert read_samples(path, "2").samples[0].values.tolist() == [0.5, 0.6, 0.7]
    with pytest.raises(SampleFormatError, match="2 columns"):
        read_samples(path)


@pytest.mark.parametrize("content, message", [
    ("", "no samples"),
    ("# only a comment\n", "no samples"),
    ("1.0\nabc\n", ":2: not a number"),
    ("1.0\n-2\n", ":2: negative time"),
    ("1.0\n1.1\nnan\n", ":3: NaN"),
    ('{"benchmarks": [5]}', "benchmarks[0]: expected an object, got int"),
    ('{"benchmarks": [{"runs": [1]}]}', "benchmarks[0].runs[0]: expected an object"),
])
def test_bad_sample_files(tmp_path, capsys, content, message):
    bad = tmp_path / "bad.txt"
    bad.write_text(content)
    good = _write(tmp_path / "good.txt", T1)
    assert main(["compare", good, str(bad)]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and message in err[0]


def test_other_bad_input(tmp_path, capsys):
    good = _write(tmp_path / "good.txt", T1)
    one = _write(tmp_path / "one.txt", [1.0])
    cases = [
        (["compare", good, one], "at least 2 values"),
        (["compare", good, good, "--confidence", "1.5"], "between 0 and 1"),
        (["compare", good, good, "--confidence", "x"], "--confidence"),
        (["compare", good, str(tmp_path / "missing.txt")], "no such file"),
        (["compare", good], "needs BASE and NEW"),
        (["plan", one, "--detect", "5%"], "at least 2"),
    ]
    base = _results(tmp_path / "b.json", [("a", T1, [])])
    new = _results(tmp_path / "n.json", [("b", T2, []), ("c", T2, [])])
    cases.append((["compare", base, new], "no matching benchmarks"))
    for argv, message in cases:
        assert main(argv) != 0, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0], (argv, err)


def test_suite_csv(tmp_path, capsys):
    rng = np.random.default_rng(3)
    lines = ["Name,Sample1,Sample2,ConfLevel,Coef"]
    for i in range(4):
        _write(tmp_path / f"b{i}.txt", rng.normal(10 * (i + 1), 0.1, 30))
        _write(tmp_path / f"n{i}.txt", rng.normal(10 * (i + 1) * (0.9 if i < 3 else 1.1), 0.1,
                                                  30))
        lines.append(f"bench{i},b{i}.txt,n{i}.txt,{0.95 if i else 90},{i + 1}")
    suite = tmp_path / "suite.csv"
    suite.write_text("\n".join(lines) + "\n")
    assert main(["compare", "--suite", str(suite), "--weights", "custom", "--json", "-"]) == 0
    doc = json.loads(capsys.readouterr().out)
    s = doc["suite"]
    assert s["accelerated"] == 3 and s["slower"] == 1 and s["confidence"] == 0.9
    med = [(r["base"]["median"], r["new"]["median"]) for r in doc["benchmarks"]]
    w = [1, 2, 3, 4]
    expected = 1 - sum(wi * n for wi, (_, n) in zip(w, med)) / sum(
        wi * b for wi, (b, _) in zip(w, med))
    assert s["gain"]["median"]["all"]["gain"] == pytest.approx(expected)
    assert s["benchmarks_needed"] == 203  # ⌈1.6449²·0.75·0.25/0.05²⌉ = ⌈202.9⌉ at 90%
    (tmp_path / "bad.csv").write_text("Name,Sample1\nx,b0.txt\n")
    assert main(["compare", "--suite", str(tmp_path / "bad.csv")]) != 0
    assert "missing column(s) Sample2" in capsys.readouterr().err
    (tmp_path / "bad2.csv").write_text("Name,Sample1,Sample2\nx,b0.txt,nope.txt\n")
    assert main(["compare", "--suite", str(tmp_path / "bad2.csv")]) != 0
    assert "bad2.csv:2" in capsys.readouterr().err
    (tmp_path / "inf.csv").write_text("Name,Sample1,Sample2,ConfLevel,Coef\n"
                                      "x,b0.txt,n0.txt,0.95,inf\n")
    assert main(["compare", "--suite", str(tmp_path / "inf.csv"), "--weights", "custom"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {tmp_path / 'inf.csv'}:2: Coef must be a finite non-negative number"]
    (tmp_path / "dir.csv").write_text("Name,Sample1,Sample2\nx,.,n0.txt\n")
    assert main(["compare", "--suite", str(tmp_path / "dir.csv")]) != 0
    assert "Sample1 file '.' is a directory" in capsys.readouterr().err


def test_markdown_and_table(tmp_path, capsys):
    a = _write(tmp_path / "a.txt", T1)
    b = _write(tmp_path / "b.txt", T2)
    assert main(["compare", a, b, "--markdown", "-"]) == 0
    out = capsys.readouterr().out
    assert "| Benchmark |" in out and "**faster**" in out
    assert main(["compare", a, b]) == 0
    assert "faster" in capsys.readouterr().out


def test_report_called_lazily(tmp_path, monkeypatch):
    import sys
    import types

    calls = []
    fake = types.ModuleType("steadybench.output.report")
    fake.write_report = lambda results, path, *, comparison=None: calls.append(
        (len(results), path, comparison.to_dict()["kind"]))
    monkeypatch.setitem(sys.modules, "steadybench.output.report", fake)
    a = _write(tmp_path / "a.txt", T1)
    b = _write(tmp_path / "b.txt", T2)
    assert main(["compare", a, b, "--quiet", "--report", str(tmp_path / "r.html")]) == 0
    assert calls == [(2, str(tmp_path / "r.html"), "steadybench-comparison")]


def test_the_undecided_warning_says_what_its_interval_shows():
    """A benchmark whose interval excludes 1 on its own but whose Holm-adjusted p does not
    reach the level was said to have an interval that "holds no change" (a report showed
    "[0.473, 0.943] holds no change"). The warning now matches the numbers beside it."""
    from steadybench.compare.protocol import CompareOptions, compare_pair, finish_verdicts
    from steadybench.compare.readers import Sample

    def sample(name, shift, seed):
        values = np.exp(np.random.default_rng(seed).normal(shift, 0.005, 25))
        return Sample(name, np.array([]), per_execution=values, unit_name="executions",
                      one_invocation=True)

    opts = CompareOptions()
    seen = set()
    for shift in np.linspace(0.02, 0.08, 25):
        rows = [compare_pair(sample(f"b{i}", 0, i), sample(f"b{i}", 0, 100 + i), opts)
                for i in range(3)]
        rows.append(compare_pair(sample("moved", 0, 7), sample("moved", shift, 8), opts))
        finish_verdicts(rows, opts)
        for row in rows:
            (warning,) = [w for w in row["warnings"] if "cannot decide" in w] or [None]
            if row["verdict"] in ("faster", "slower"):
                assert warning is None
                continue
            low, high = row["speedup_ci"]["low"], row["speedup_ci"]["high"]
            if low <= 1 <= high:
                assert "holds 1 (no change)" in warning
                seen.add("holds")
            else:
                assert "excludes 1 on its own" in warning
                assert "holm correction for the benchmarks" in warning
                seen.add("excludes")
    assert seen == {"holds", "excludes"}
