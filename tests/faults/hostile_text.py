"""Hostile names and messages, and Results that carry them everywhere a name can go."""

from __future__ import annotations

from steadybench.model import Parameters, Results
from steadybench.model.implementation import CallableImplementation
from steadybench.processors import finalize_case
from steadybench.runner import Runner, Runs
from steadybench.testing import SimulatedClock

#: Markdown that would add a heading, image, link, HTML, code or a table cell
MARKDOWN = [
    "cr\r# Heading by carriage return",
    "lf\n## Heading by line feed",
    "crlf\r\n### Heading by CRLF",
    "![image](http://x.test/i.png)",
    "[link](http://x.test/)",
    "[ref]: http://x.test/",
    "<http://x.test/autolink>",
    "<img src=x onerror=alert(1)>",
    "<b>html</b>",
    "pipe | in a cell",
    "backslash\\| pipe",
    "`code span`",
    "```fence",
    "# heading",
    "- list item",
    "1. ordered item",
    "---",
    "> quote",
    "~~~ fence",
    "$math$",
    "\\[escaped](http://x.test/)",
]

#: terminal escape sequences and other controls
TERMINAL = [
    "clear\x1b[2J\x1b[H",
    "title\x1b]0;pwned\x07",
    "hyperlink\x1b]8;;http://x.test\x1b\\text\x1b]8;;\x1b\\",
    "c1 csi\x9b31m",
    "bell\x07 backspace\x08 del\x7f",
    "bidi\u202eevil",
    "nul\x00byte",
]

#: characters XML 1.0 cannot hold
XML = [
    "c0 " + "".join(chr(c) for c in range(32) if chr(c) not in "\t\n\r"),
    "nonchars \ufffe\uffff",
    "lone surrogate \ud800",
]

ALL = MARKDOWN + TERMINAL + XML


def hostile_results(names: list[str] = ALL, suite: str | None = None) -> Results:
    """One simulated case per name: the name is the benchmark, the implementation, a parameter
    value, a warning and (every other case) the error."""
    clock = SimulatedClock(read_cost_ns=50, jitter_ns=20, seed=1)
    runner = Runner(Runs(5), warmup=0, clock=clock)
    cases = []
    for index, name in enumerate(names):
        case = runner.execute(CallableImplementation(clock.workload(1000), name),
                              Parameters(p=name), benchmark=name)
        finalize_case(case, [], runner.method)
        case.warnings.append(f"warning {name}")
        if index % 2:
            case.errors.append(f"error {name}")
        cases.append(case)
    return Results(suite=names[0] if suite is None else suite, cases=cases,
                   environment={"cpu_model": names[0], "hostname": names[-1]},
                   context={"note": names[1], names[2]: "value"})
