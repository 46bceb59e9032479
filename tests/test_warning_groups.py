"""The same warning for several cases is said once (output/warning_groups.py)."""

from __future__ import annotations

from steadybench.model.results import CaseResult, Results
from steadybench.output.warning_groups import grouped

BUSY = ("the machine was busy: the CPU was contended {}% of the time (Linux PSI); not compared "
        "with runs taken at other times")


def test_warnings_with_the_same_words_are_joined_and_their_figures_given_as_ranges():
    groups = grouped([("a", BUSY.format(77)), ("b", "no warmup reached"),
                      ("c", BUSY.format(100)), ("d", BUSY.format(98))])
    assert [g.labels for g in groups] == [("a", "c", "d"), ("b",)]
    assert groups[0].text == BUSY.format("77–100")
    assert groups[1].text == "no warmup reached"
    assert groups[0].subject(4) == "a, c and d"
    assert groups[0].subject(3) == "every case (3)"
    assert groups[1].subject(4) == "b"


def test_equal_figures_stay_single_and_many_cases_are_counted():
    labels = [f"case{i}" for i in range(5)]
    (group,) = grouped([(label, BUSY.format(50)) for label in labels])
    assert group.text == BUSY.format(50)
    assert group.subject(9) == "5 cases: case0, case1, case2, ..."
    # one case's two warnings with the same words are one line, its figures a range
    (one,) = grouped([("x", "3 of 25 executions failed"), ("x", "5 of 25 executions failed")])
    assert one.labels == ("x",) and one.text == "3–5 of 25 executions failed"


def test_the_console_logger_says_a_shared_warning_once(capsys):
    from steadybench.output.loggers import ConsoleLogger

    results = Results(suite="b")
    for label, share in (("summing", 77), ("sorting", 98)):
        case = CaseResult(label, label)
        case.add_run("ok", {"wall_time": 1e-3})
        case.warnings.append(BUSY.format(share))
        results.cases.append(case)
    logger = ConsoleLogger(live=False)
    logger.finish(results)
    err = capsys.readouterr()
    text = " ".join((err.out + err.err).split())
    assert text.count("the machine was busy") == 1
    assert "warning every case (2): the machine was busy: the CPU was contended 77–98%" in text
