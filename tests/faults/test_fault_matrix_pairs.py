"""How benchmarks/fault_matrix.py judges a pair of signals (issue 27: SIGINT then SIGTERM
50 ms later exited 130 where the matrix wanted 143).

The stronger signal's status (SIGTERM's 143 over SIGINT's 130) is the only right one when the
second signal reaches the command while it still works; once the command has ended (its
outputs written, Python in its final teardown, where signals are ignored) the first signal's
status is right too. The driver tells the two apart by the outputs: not all written right
after the last signal was sent means the command was still working."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

MATRIX = Path(__file__).resolve().parents[2] / "benchmarks" / "fault_matrix.py"


@pytest.fixture(scope="module")
def matrix():
    spec = importlib.util.spec_from_file_location("fault_matrix_under_test", MATRIX)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)


@pytest.mark.parametrize("names, statuses", [
    (["INT"], (130,)), (["TERM"], (143,)), (["HUP"], (129,)), (["INT", "INT"], (130,)),
    (["TERM", "TERM"], (143,)), (["INT", "TERM"], (143, 130)),
])
def test_pair_statuses(matrix, names, statuses):
    assert matrix._pair_statuses(names) == statuses


@pytest.mark.parametrize("code, late, failures", [
    (143, [False], 0),  # SIGTERM while working: 143
    (130, [False], 1),  # SIGTERM while working, yet the status of SIGINT: wrong
    (130, [True], 0),   # SIGTERM after the command ended (outputs all written): 130 is right
    (143, [True], 0),   # ... or it landed before the final teardown: 143
    (130, [], 0),       # the driver sent nothing (the process ended first)
])
def test_late_pair_check(matrix, code, late, failures):
    judged = matrix._late_pair_check(lambda folder, outcome: 0, (143, 130), late)
    assert judged(Path("/nonexistent"), SimpleNamespace(code=code)) == failures


def test_outputs_still_count(matrix):
    judged = matrix._late_pair_check(lambda folder, outcome: 2, (143, 130), [True])
    assert judged(Path("/nonexistent"), SimpleNamespace(code=143)) == 2
