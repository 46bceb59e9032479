"""The samples of a results file held column-wise (compare.columns, issue 27 item 13): the same
samples as one object each, read as copies, matched without being made, in bounded memory."""

import json

import numpy as np

from steadybench.compare.columns import SampleColumns, sample_keys
from steadybench.compare.core import match
from steadybench.compare.readers import read_samples
from steadybench.compare.samples import Sample, SampleSet
from steadybench.model.estimate import Estimate
from traced_memory import held_traced


def _fields(s):
    return (s.name, s.values.tolist(), s.implementation, s.params, s.unit,
            None if s.per_execution is None else s.per_execution.tolist(), s.source,
            s.estimate, s.unit_name, s.one_invocation, s.runs, s.cpu_pressure)


def _columns():
    est = Estimate.from_dict({"value": 2.0, "ci_low": 1.5, "ci_high": 2.5, "method": "median"})
    samples = [
        Sample("a", np.array([1.0, 2.0]), "x", {}, "s", np.array([1.5]), "f", None,
               unit_name="executions", one_invocation=True),
        Sample("b", np.array([]), "b", {"n": 3, "k": "v"}, "instructions", None, "f", est,
               unit_name="runs (one process each)", one_invocation=False, cpu_pressure=0.25),
        Sample("c", np.array([3.0]), "y", {"n": 1}, "s", np.array([]), "f", est,
               unit_name="executions", one_invocation=True),
        Sample("d", np.array([4.0, 5.0, 6.0]), "", {}, "s", np.array([4.0, 5.0]), "f", None,
               unit_name="executions", one_invocation=False, cpu_pressure=None),
    ]
    columns = SampleColumns("f")
    for s in samples:
        columns.add(s.name, s.values.tolist(), s.implementation, s.params, s.unit,
                    None if s.per_execution is None else s.per_execution.tolist(), s.estimate,
                    unit_name=s.unit_name, one_invocation=s.one_invocation,
                    cpu_pressure=s.cpu_pressure)
    return samples, columns


def test_the_columns_give_the_samples_they_were_given():
    samples, columns = _columns()
    assert len(columns) == 4
    assert [_fields(s) for s in columns] == [_fields(s) for s in samples]
    assert _fields(columns[-1]) == _fields(samples[-1])
    assert [_fields(s) for s in columns[1:3]] == [_fields(s) for s in samples[1:3]]
    assert sample_keys(columns) == [s.key for s in samples] == sample_keys(samples)
    assert [s.label for s in columns] == [s.label for s in samples]


def test_a_sample_read_is_a_copy():
    _, columns = _columns()
    first = columns[0]
    first.values[0] = 99.0
    first.params["n"] = 1
    first.name = "changed"
    again = columns[0]
    assert again.values.tolist() == [1.0, 2.0] and again.params == {} and again.name == "a"
    columns.add("e", [7.0], "e", {}, "s", None, None, unit_name="executions",
                one_invocation=True, cpu_pressure=None)  # it still grows after a read
    assert columns[4].values.tolist() == [7.0]


def test_pairs_are_matched_by_key_without_the_samples(tmp_path):
    samples, columns = _columns()
    new = list(reversed(samples))[:3]  # "a" only in BASE
    pairs, notes = match(SampleSet("base", "steadybench", columns),
                         SampleSet("new", "steadybench", new))
    assert [(b.name, n.name) for b, n in pairs] == [("b", "b"), ("c", "c"), ("d", "d")]
    assert len(pairs) == 3 and pairs[-1][1] is new[0]
    assert [b.name for b, _ in pairs[:2]] == ["b", "c"]
    assert notes == ["a x: only in BASE (base), not compared"]


def test_a_large_file_s_samples_are_held_in_a_few_hundred_bytes_each(tmp_path):
    """Held traced memory per benchmark of the samples read from a results file: as one
    Sample each (the old path) about 530 B (measured 520 B here), column-wise under 200 B
    (measured 183 B), most of it the name."""
    n = 5_000
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"schema_version": 1, "suite": "s", "benchmarks": [
        {"name": f"bench{i:07d}", "implementation": "x", "samples": [0.001, 0.0011, 0.0012]}
        for i in range(n)]}))
    read_samples(path)  # the modules and caches a first call fills
    lean = held_traced(lambda: read_samples(path).samples)
    objects = held_traced(lambda: list(read_samples(path).samples))
    assert lean < 350 * n < objects, (lean / n, objects / n)
