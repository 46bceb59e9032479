"""Large comparisons and reports in bounded memory (issue 27 item 13): ``compare`` keeps its
rows packed (steadybench.compare.packed) and must give exactly the comparison the rows kept as
dicts gave, with every option that changes a row; the HTML report is written piece by piece."""

import json
import random

import pytest

from steadybench import fileio
from steadybench.compare.core import _document, compare_sets, match
from steadybench.compare.output import print_table, to_csv, to_json, to_markdown
from steadybench.compare.packed import PackedRows
from steadybench.compare.protocol import CompareOptions, compare_pair
from steadybench.compare.readers import read_samples
from steadybench.compare.result import Comparison
from traced_memory import peak_traced


def _results(path, n, factor, seed, processes=True):
    """``n`` benchmarks of 5 to 35 executions; every 7th is faster by ``factor`` on NEW."""
    rng = random.Random(seed)
    benches = []
    for i in range(n):
        k = (5, 12, 35)[i % 3]
        f = factor if i % 7 == 0 else 1.0
        values = [0.001 * f * (1 + rng.gauss(0, 0.03)) for _ in range(k)]
        entry = {"name": f"b{i:03d}", "implementation": "x", "params": {"k": i % 2},
                 "samples": values}
        if processes:
            entry["processes"] = [{"value": v} for v in values]
        benches.append(entry)
    path.write_text(json.dumps({"schema_version": 1, "suite": "s", "benchmarks": benches}))
    return path


def _as_dicts(base, new, opts):
    """The comparison as it was made before the rows were packed: every row a dict, kept."""
    pairs, _ = match(base, new)
    rows = [compare_pair(b, n, opts) for b, n in pairs]
    return Comparison.from_dict(_document(
        rows, opts, "equal", 0.05, [],
        {"base": base.path, "new": new.path, "base_kind": base.kind,
         "new_kind": new.kind}), owned=True)


OPTIONS = [
    {},
    {"between_runs": "off"},
    {"between_runs": "off", "confidence": None, "show_min": True},
    {"between_runs": "off", "threshold": 0.05, "equivalence": True, "verdict_by": "mean"},
    {"between_runs": "off", "correction": "none", "small_sample": "permutation",
     "resamples": 200},
]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o) or "default")
def test_packed_rows_give_the_comparison_the_rows_as_dicts_gave(tmp_path, monkeypatch, options):
    # chunks of 8 rows here: the same three chunks (two full, one partial) with 21 rows, not
    # 133 (the auto-confidence set searched every level of 266 rows: 9.5 s of the suite)
    from steadybench.compare import packed as packed_module

    monkeypatch.setattr(packed_module, "CHUNK", 8)
    chunk = packed_module.CHUNK
    n = 2 * chunk + 5  # two full chunks and a partial one
    base = read_samples(_results(tmp_path / "b.json", n, 1.0, 1))
    new = read_samples(_results(tmp_path / "n.json", n, 0.8, 2))
    packed = compare_sets(base, new, CompareOptions(**options))
    old = _as_dicts(base, new, CompareOptions(**options))
    assert isinstance(packed.benchmarks, PackedRows)
    assert repr(packed.to_dict()) == repr(old.to_dict())  # key order and NaN included
    for render in (to_json, to_csv, to_markdown):
        assert render(packed) == render(old)
    from io import StringIO

    from rich.console import Console
    texts = []
    for c in (packed, old):
        out = StringIO()
        print_table(c, Console(file=out, width=160))
        texts.append(out.getvalue())
    assert texts[0] == texts[1]
    assert "faster" in texts[0]  # the changes are there to be shown
    # read as a sequence: by index (from the end too), by slice, in order; the columns
    rows = packed.benchmarks
    assert len(rows) == n and rows[-1] == old.benchmarks[-1] and rows[chunk] == \
        old.benchmarks[chunk]
    assert rows[chunk - 2:chunk + 2] == old.benchmarks[chunk - 2:chunk + 2]
    assert list(rows) == list(old.benchmarks)
    assert packed.verdicts == old.verdicts == [r.verdict for r in rows]
    for name in ("verdict", "test_unit", "interval_method", "noise_text"):
        assert packed.column(name) == old.column(name), name
    with pytest.raises(IndexError):
        rows[n]


def test_a_row_read_is_a_copy(tmp_path):
    base = read_samples(_results(tmp_path / "b.json", 3, 1.0, 1))
    rows = compare_sets(base, base, CompareOptions()).benchmarks
    rows[0]._source["warnings"].append("changed")  # the view's dict: the copy's own
    assert "changed" not in rows[0].warnings


def test_thousands_of_rows_are_held_in_bounded_memory(tmp_path):
    """Peak traced memory of the comparison alone (the samples read before), per benchmark:
    the rows as dicts held about 4 KB each; packed, under 1 KB (the peak includes the chunk
    being packed and the columns). 2,500 rows: the bytes per row are those of 10,000
    (measured: packed 960 at 10,000, 850 at 2,500; as dicts 3,945 and 3,916), at a quarter
    of the processor time (tracemalloc traces every allocation)."""
    n = 2_500
    path = tmp_path / "many.json"
    path.write_text(json.dumps({"schema_version": 1, "suite": "large", "benchmarks": [
        {"name": f"bench{i:07d}", "implementation": "x",
         "samples": [0.001 + i * 1e-9, 0.0011, 0.0012]} for i in range(n)]}))
    base, new = read_samples(path), read_samples(path)
    opts = CompareOptions()
    packed = peak_traced(lambda: compare_sets(base, new, opts)) / n
    as_dicts = peak_traced(lambda: _as_dicts(base, new, opts)) / n
    assert packed < 1500 < as_dicts, (packed, as_dicts)  # measured: 850 and 3,916 bytes


def test_the_report_is_written_in_pieces(tmp_path, monkeypatch):
    """The HTML goes to the file block by block (it was one text, and before that a list of
    every small piece of the template). Three of the 120 cases get their figures, so a block
    of cases with PNGs is among those the bound is on (7 blocks, the largest 176 kB; with the
    first 40 cases' figures, the default, 25 blocks and the same largest one, for 4 s more of
    processor time)."""
    from steadybench.output import reportviews
    from steadybench.output.report import write_report
    from steadybench.output.results_io import load_results

    monkeypatch.setattr(reportviews, "MAX_CASE_FIGURES", 3)
    path = _results(tmp_path / "r.json", 120, 1.0, 3)
    parts = []
    real = fileio._write_all

    def counting(fd, data):
        def each():
            for part in (data,) if isinstance(data, bytes) else data:
                parts.append(len(part))
                yield part
        real(fd, each())

    monkeypatch.setattr(fileio, "_write_all", counting)
    out = write_report([load_results(str(path))], tmp_path / "r.html")
    assert len(parts) > 1 and max(parts) < 1 << 18, parts
    assert sum(parts) == out.stat().st_size
    assert out.read_text().rstrip().endswith("</html>")


def test_pieces_are_written_atomically(tmp_path, monkeypatch):
    target = tmp_path / "out.html"
    fileio.atomic_write_pieces(target, iter(["a", "é", "b"]))
    assert target.read_text() == "aéb"

    def broken():
        yield "new text"
        raise RuntimeError("the template failed")

    with pytest.raises(RuntimeError):
        fileio.atomic_write_pieces(target, broken())
    assert target.read_text() == "aéb"  # the old file whole, no temporary file left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.html"]


def test_an_imported_record_writes_its_rows_before_its_text(tmp_path, monkeypatch):
    """history import: the measurement rows are written and let go before the text, which
    SQLite copies twice (the peak of an import of 10^6 benchmarks); the record is the same."""
    from steadybench.history.importing import encode_results
    from steadybench.history.store import HistoryStore

    doc = {"schema_version": 1, "suite": "s", "benchmarks": [
        {"name": f"b{i}", "samples": [0.001, 0.0011, 0.0012]} for i in range(5)]}
    encoded = encode_results(json.loads(json.dumps(doc)), "x")
    rows = encoded.measurements
    store = HistoryStore.open(f"sqlite:///{tmp_path}/h.sqlite")
    try:
        seen = []
        real = store.db.execute

        def execute(sql, params=()):
            if "results" in sql and any(p is encoded.text for p in params):
                seen.append((sql.split()[0], len(rows)))
            return real(sql, params)

        monkeypatch.setattr(store.db, "execute", execute)
        rec = store.add_encoded(encoded.top, encoded.text, rows, name="n")
        monkeypatch.undo()
        assert seen == [("UPDATE", 0)]  # the text written once, after the rows were let go
        assert store.get(rec.id).results == json.loads(encoded.text)
        assert len(store.db.execute("SELECT label FROM measurements WHERE record_id = ?",
                                    (rec.id,))) == 5
    finally:
        store.close()


@pytest.mark.parametrize("options", OPTIONS[:3], ids=lambda o: ",".join(o) or "default")
def test_the_json_written_a_row_at_a_time_is_the_json_of_the_whole_document(tmp_path,
                                                                              options):
    """compare --json writes its text in pieces (json_pieces): the same characters as the
    document dumped whole, with one row, several rows, a warning, a name with a newline and
    text json escapes, and with none (the whole text at once)."""
    from steadybench.compare.output import json_pieces

    base = read_samples(_results(tmp_path / "a.json", 9, 1.0, 1))
    new = read_samples(_results(tmp_path / "b.json", 9, 1.3, 2))
    comparison = compare_sets(base, new, CompareOptions(**options))
    pieces = list(json_pieces(comparison))
    assert "".join(pieces) == to_json(comparison) and len(pieces) == 9 + 2
    odd = comparison.with_warning('a "quoted"\nwarning \u00e9 \x1b[31m')
    assert "".join(json_pieces(odd)) == to_json(odd)
    doc = comparison.to_dict()
    doc["benchmarks"] = doc["benchmarks"][:1]
    doc["benchmarks"][0]["name"] = 'line\nbreak "x" \u202e'
    one = Comparison.from_dict(doc)
    assert "".join(json_pieces(one)) == to_json(one)
    doc["benchmarks"] = []
    none = Comparison.from_dict(doc)
    assert list(json_pieces(none)) == [to_json(none)]
