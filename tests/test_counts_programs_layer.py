"""Counting external programs goes through the execution layer (issue 24: one driver, one
merge): each layout of ``exec --measure`` and ``iters --measure`` is an execution of
:func:`steadybench.execution.driver.run_executions`, merged by ``merge_executions``, so its
record is the typed :class:`~steadybench.model.execution.Execution` with its layout and
counts, and the driver stops after a failing layout."""

from __future__ import annotations

import shutil

import pytest

from steadybench.counts.programs import count_command, count_iters
from steadybench.counts.python import CountSettings
from steadybench.counts.valgrind import find_valgrind
from steadybench.model.results import CaseResult

pytestmark = pytest.mark.skipif(shutil.which("valgrind") is None,
                                reason="needs valgrind (apt-get install valgrind)")


def test_each_layout_of_a_command_is_an_execution_of_the_layer():
    case = CaseResult(benchmark="true", implementation="", params={}, unit="instructions")
    count_command(case, find_valgrind(), ["true"], CountSettings(layouts=2))
    assert not case.errors and case.stop_reason == "counted in 2 layout(s)"
    assert [p.index for p in case.processes] == [0, 1]
    assert all(p.layout is not None and p.layout.aslr_off and p.counts and p.counts["Ir"] > 0
               for p in case.processes)
    assert case.processes[0].layout.hash_seed != case.processes[1].layout.hash_seed
    assert case.extra["executions"] == {"planned": 2, "completed": 2,
                                        "isolation": "counted processes under valgrind"}
    values = sorted(p.value for p in case.processes)
    assert case.estimate.value == pytest.approx(sum(values) / 2)  # the median of two layouts
    assert (case.estimate.ci_low, case.estimate.ci_high) == (values[0], values[1])


def test_a_failing_layout_stops_the_case_with_one_line(tmp_path):
    case = CaseResult(benchmark="false", implementation="", params={}, unit="instructions")
    count_command(case, find_valgrind(), ["false"], CountSettings(layouts=3))
    assert len(case.processes) == 1 and case.processes[0].error  # no second layout tried
    assert case.errors == [case.processes[0].error] and "exited with status 1" in case.errors[0]
    assert case.stop_reason == "count failed" and case.estimate is None


def test_iters_layouts_are_executions_with_their_counts_per_iteration(tmp_path):
    program = tmp_path / "loop.sh"
    # ITERS iterations of a shell loop: the count grows with ITERS
    program.write_text('#!/bin/sh\ni=0\nwhile [ "$i" -lt "$1" ]; do i=$((i+1)); done\n')
    program.chmod(0o755)
    case = CaseResult(benchmark="loop", implementation="", params={}, unit="instructions")
    count_iters(case, find_valgrind(), lambda n: [str(program), str(n)],
                CountSettings(layouts=2), iters=[10, 20, 30])
    assert not case.errors, case.errors
    assert [p.index for p in case.processes] == [0, 1]
    per_iteration = [p.counts["Ir"] for p in case.processes]
    assert all(v > 0 for v in per_iteration)
    slopes = [lc["fit"]["slope"] for lc in case.extra["counts"]["layouts"]]
    assert [p.value for p in case.processes] == pytest.approx(slopes)
    assert case.stop_reason == "counted at 10, 20, 30 iterations"
