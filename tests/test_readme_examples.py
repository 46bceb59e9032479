"""The README's examples run as written."""

import json
import re
from pathlib import Path

from steadybench.cli import main

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_short_form_example_runs_through_the_cli(tmp_path):
    short = python_blocks()[0]
    path = tmp_path / "bench_sort.py"
    path.write_text(short)
    out = tmp_path / "r.json"
    assert main(["run", str(path), "--runs", "5", "--json", str(out), "-q"]) == 0
    names = [(b["name"], b["implementation"]) for b in json.loads(out.read_text())["benchmarks"]]
    assert ("shuffle", "sort_by_random_key") in names and len(names) == 4


def test_object_api_example_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(python_blocks()[1], "README-object-api", "exec"), namespace)  # noqa: S102
    results = namespace["results"]
    assert len(results) == 2 and all(c.n >= 30 for c in results)
    assert "cpu_time" in results.cases[0].metrics
    assert json.loads((tmp_path / "blur.json").read_text())["suite"] == "blur suite"
