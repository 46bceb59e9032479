"""``run --clock``: the samples' clock by name. A benchmark that sleeps takes its sleeping time
by the default clock (perf_counter) and almost none by the CPU-time clock (thread_time), in the
fresh worker processes where it is measured; the result records which clock was used."""

from __future__ import annotations

import json
from pathlib import Path

from steadybench.cli import main

SLEEPER = '''import time

import steadybench


@steadybench.benchmark
def nap():
    return lambda: time.sleep(0.004)
'''


def _run(tmp_path: Path, *extra: str) -> dict:
    bench = tmp_path / "nap.py"
    bench.write_text(SLEEPER)
    out = tmp_path / f"out{len(extra)}.json"
    assert main(["run", str(bench), "-p", "2", "--max-time", "0.05", "--json", str(out), "-q",
                 *extra]) == 0
    return json.loads(out.read_text())


def test_thread_time_leaves_out_sleeping(tmp_path: Path):
    wall = _run(tmp_path)
    cpu = _run(tmp_path, "--clock", "thread_time")
    assert wall["environment"]["clock"]["name"] == "perf_counter_ns"
    assert cpu["environment"]["clock"]["name"] == "thread_time_ns"
    assert wall["benchmarks"][0]["estimate"]["value"] >= 0.004
    assert cpu["benchmarks"][0]["estimate"]["value"] < 0.001


def test_an_unknown_clock_is_one_line(tmp_path: Path, capsys):
    bench = tmp_path / "nap.py"
    bench.write_text(SLEEPER)
    assert main(["run", str(bench), "--clock", "sundial"]) == 2
    err = capsys.readouterr().err
    assert "sundial" in err and "Traceback" not in err
