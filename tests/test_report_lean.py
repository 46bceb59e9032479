"""The report's case views are made when the page reads them, not held (issue 27 item 13):
the page is the same, and building the views of thousands of cases holds almost nothing."""

import random

import pytest

from steadybench.output import reportviews
from steadybench.output.figurepool import FigureSet
from steadybench.output.report import write_report
from steadybench.output.results_io import results_from_data
from traced_memory import held_traced


def _results(n, suite="lean", seed=1):
    """``n`` cases: variants (benchmark × implementation) over a numeric parameter, some with
    an estimate and a run table, so the groups, scans and details all have something."""
    rng = random.Random(seed)
    cases = []
    for i in range(n):
        entry = {"name": f"b{i % 5}", "implementation": f"im{i % 2}",
                 "params": {"n": 2 ** (i // 10)},
                 "samples": [0.001 * (1 + i // 10) + rng.random() * 1e-4 for _ in range(4)]}
        if i % 3 == 0:
            entry["estimate"] = {"value": 0.002, "ci_low": 0.0019, "ci_high": 0.0021,
                                 "confidence": 0.95, "method": "median", "unit": "s"}
        cases.append(entry)
    return results_from_data({"schema_version": 1, "suite": suite, "benchmarks": cases})


def _eager(monkeypatch):
    """Every view made at once, as before (the old path)."""
    lazy = reportviews._case_views
    monkeypatch.setattr(reportviews, "_case_views", lambda *a, **k: list(lazy(*a, **k)))


@pytest.mark.parametrize(("n", "figures"), [(30, 0), (30, 3), (4, 6)])
def test_the_page_is_the_same_as_with_every_view_made_at_once(tmp_path, monkeypatch, n,
                                                               figures):
    """Byte for byte, with two inputs (the figure budget shared between them: the second gets
    none, or what the first left) and their comparison."""
    monkeypatch.setattr(reportviews, "MAX_CASE_FIGURES", figures)
    monkeypatch.setattr(reportviews, "MAX_BOX_PLOTS", 0)
    inputs = [_results(n), _results(n, seed=2)]
    write_report(inputs, tmp_path / "lazy.html")
    _eager(monkeypatch)
    write_report(inputs, tmp_path / "eager.html")
    lazy, eager = (tmp_path / "lazy.html").read_bytes(), (tmp_path / "eager.html").read_bytes()
    assert lazy == eager
    assert lazy.count(b'<article id="case-') == 2 * n


def test_views_are_a_sequence_that_makes_each_view_when_read():
    made = []
    views = reportviews.LazyViews(["a", "b", "c"], lambda x, i: made.append(i) or x * 2,
                                  kept=["kept"])
    assert len(views) == 3 and bool(views) and made == []
    assert views[0] == "kept" and views[1] == "bb" and views[-1] == "cc"
    assert views[1:] == ["bb", "cc"] and list(views) == ["kept", "bb", "cc"]
    assert made == [1, 2, 1, 2, 1, 2]
    with pytest.raises(IndexError):
        views[3]
    assert not reportviews.LazyViews([], lambda x, i: x)


def test_the_views_of_thousands_of_cases_are_not_held(monkeypatch):
    """Traced memory one input's view holds, per case: with its case views made at once over
    1 KB a case (measured 1,362 B here, 1,040 B for 20,000 cases without an estimate); made
    when read, a few bytes (measured 33 B; the peak while the groups are worked out is the
    same on both paths)."""
    monkeypatch.setattr(reportviews, "MAX_CASE_FIGURES", 0)
    n = 3_000
    results = _results(n)

    def views():
        view = reportviews.input_view(results, "x", 1, False, FigureSet(None, "png"),
                                      compact=True, window=10, confidence=0.95)
        return view.cases, view.summary

    views()  # the modules and caches the first call fills
    lean = held_traced(views)
    _eager(monkeypatch)
    held = held_traced(views)
    assert lean < 300 * n < held, (lean / n, held / n)


def test_the_page_blocks_are_those_of_a_loop_over_every_piece():
    """The blocks the page is written in, runs of pieces joined at once, are the blocks of
    the loop over every piece they replace: the same ends, for pieces of every size (empty,
    small, longer than a block) in any order."""
    from steadybench.output.report import _blocks

    def each_piece(pieces, size=1 << 16):
        block, length = [], 0
        for piece in pieces:
            block.append(piece)
            length += len(piece)
            if length >= size:
                yield "".join(block)
                block, length = [], 0
        if block:
            yield "".join(block)

    rng = random.Random(7)
    for _ in range(100):
        pieces = [rng.choice(["", "a" * rng.randint(0, 50), "x" * rng.randint(0, 90_000)])
                  if rng.random() < 0.02 else "y" * rng.randint(0, 30)
                  for _ in range(rng.randint(0, 8_000))]
        assert list(_blocks(iter(pieces))) == list(each_piece(pieces))
    assert list(_blocks(iter([""] * 200 + ["end"]))) == ["end"]


def test_a_file_s_entries_are_dropped_as_its_cases_are_made():
    """``report`` reads each file with ``results_from_data(consume=True)``: the same results,
    the parsed entries let go one by one, so the parsed file and its cases are not both held
    (peak traced memory a benchmark, measured 1,595 B consumed and 2,116 B the old way)."""
    import json

    from traced_memory import peak_traced

    n = 3_000
    text = json.dumps({"schema_version": 1, "suite": "s", "benchmarks": [
        {"name": f"bench{i:07d}", "implementation": "x", "samples": [0.001, 0.0011, 0.0012],
         **({"params": {"n": i}, "estimate": {"value": 0.001, "method": "median"}}
            if i % 2 else {})} for i in range(n)]})
    data = json.loads(text)
    consumed = results_from_data(data, consume=True)
    assert data["benchmarks"] == [None] * n
    assert consumed.to_dict() == results_from_data(json.loads(text)).to_dict()
    results_from_data(json.loads(text), consume=True)  # what a first call fills
    lean = peak_traced(lambda: results_from_data(json.loads(text), consume=True))
    old = peak_traced(lambda: results_from_data(json.loads(text)))
    assert lean < 1850 * n < old, (lean / n, old / n)
