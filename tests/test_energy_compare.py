"""Issue 15, item 4: energy per run in the results, and ``compare --metric energy``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fake_machine import make_board

STEADYBENCH = str(Path(sys.executable).with_name("steadybench"))

BENCH = """
import steadybench as sb
ENERGY = {energy!r}

def work():
    # the "package" uses {joules} J per run: the RAPL counter moves by that much
    with open(ENERGY) as f:
        now = int(f.read())
    with open(ENERGY, "w") as f:
        f.write(str(now + {joules} * 1_000_000) + "\\n")

@sb.benchmark
def blur():
    return work
"""


def _run(tmp_path: Path, board: Path, name: str, joules: int) -> Path:
    energy = board / "sys/class/powercap/intel-rapl:0/energy_uj"
    script = tmp_path / f"{name}.py"
    script.write_text(BENCH.format(energy=str(energy), joules=joules))
    preset = tmp_path / "energy.toml"
    preset.write_text('countermeasures = ["monitor"]\n[monitor]\nmeters = ["energy"]\n')
    out = tmp_path / f"{name}.json"
    result = subprocess.run([STEADYBENCH, "--root", str(board), "run", str(script),
                             "--preset", str(preset), "--in-process", "--runs", "12",
                             # one execution per run: a meter measures a whole sample
                             "--method", "direct",
                             "--json", str(out)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return out


@pytest.mark.slow
def test_energy_is_recorded_per_run_and_compared(tmp_path):
    board = make_board(tmp_path / "board")
    base = _run(tmp_path, board, "base", 2)
    new = _run(tmp_path, board, "new", 3)
    case = json.loads(base.read_text())["benchmarks"][0]
    text = json.dumps(case)
    assert "energy" in text and '"J"' in text
    from steadybench.compare.readers import read_samples

    sample = read_samples(base, metric="energy").samples[0]
    assert sample.unit == "J" and set(sample.values.tolist()) == {2.0}
    result = subprocess.run([STEADYBENCH, "compare", str(base), str(new), "--metric", "energy",
                             "--json", "-"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    row = doc["benchmarks"][0]
    # median energy 2 J against 3 J per run (one execution each: no test, only the ratio)
    assert row["unit"] == "J" and abs(row["speedup"] - 2 / 3) < 1e-12, row
    bad = subprocess.run([STEADYBENCH, "compare", str(base), str(new), "--metric", "nothing"],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
