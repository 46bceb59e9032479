"""Issue 12, item 18: escape sequences in names and exception messages reached the terminal.

ESC, CSI, OSC, every other C0 and C1 control, DEL and bidirectional overrides in a benchmark
name, a parameter, a warning or an exception message are shown escaped (``\\x1b``) on the
console: in the progress lines and the summary table, in the one-line ``error:`` of the
command, and in anything printed through a steadybench console.
"""

from __future__ import annotations

import io
import re
import textwrap

import pytest
from hostile_text import TERMINAL, hostile_results
from rich.text import Text

from steadybench.cli import main, one_line
from steadybench.output.console import make_console
from steadybench.output.loggers import ConsoleLogger
from steadybench.output.results_io import write_results
from steadybench.output.sanitize import terminal_text, visible

#: what must never reach the terminal from user text (line feed excepted)
RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _assert_inert(text: str) -> None:
    found = RAW_CONTROL.search(text)
    assert found is None, f"raw {found.group(0)!r} in {text!r}"


@pytest.mark.parametrize("payload", TERMINAL)
def test_terminal_text_shows_every_control(payload):
    shown = terminal_text(payload)
    _assert_inert(shown)
    assert "\n" not in terminal_text("a\nb") and terminal_text("a\nb", keep_newlines=True) == "a\nb"
    for char in set(RAW_CONTROL.findall(payload)):
        assert visible(char) in shown


@pytest.mark.parametrize("payload", TERMINAL)
def test_one_line_error_shows_controls(payload):
    line = one_line(f"first {payload}\nsecond {payload}")
    _assert_inert(line)
    assert " | " in line and terminal_text(payload) in line


def test_console_logger_shows_controls():
    """Progress lines, the summary table and the warnings of ConsoleLogger (no colours, so
    any ESC in the output would be an injected one)."""
    results = hostile_results(TERMINAL, suite="suite\x1b]0;pwned\x07")
    buffer = io.StringIO()
    logger = ConsoleLogger(make_console(file=buffer, force_terminal=False, width=200),
                           live=False)
    logger.start(results, len(results.cases))
    for case in results.cases:
        logger.case_start(case.benchmark, case.implementation, case.params)
        logger.case_end(case)
    logger.finish(results)
    out = buffer.getvalue()
    _assert_inert(out)
    assert "title\\x1b]0;pwned\\x07" in out and "suite\\x1b]0;pwned\\x07" in out


def test_console_shows_controls_whatever_printed_them():
    """A steadybench console shows the controls of any text it prints (for code that forgets
    to escape), while its own colours still reach the terminal as codes."""
    buffer = io.StringIO()
    console = make_console(file=buffer, force_terminal=True, color_system="standard", width=200)
    console.print(Text("raw " + " ".join(TERMINAL), style="red"))
    out = buffer.getvalue()
    assert "\x1b[31m" in out  # rich's own style
    without_styles = re.sub(r"\x1b\[[0-9;]*m", "", out)
    _assert_inert(without_styles)
    assert "clear\\x1b[2J" in without_styles and "\\x9b31m" in without_styles


def test_run_prints_no_raw_controls(tmp_path, capsys):
    """A whole run: names with escape sequences, an exception whose message has them; the
    console output and the error line show them escaped."""
    bench = tmp_path / "bench.py"
    bench.write_text(textwrap.dedent("""
        import steadybench as sb

        @sb.benchmark(name="clear\\x1b[2J\\x1b[H", s=["t\\x1b]0;pwned\\x07", "c1\\x9b31m"])
        def hostile(s):
            def run():
                raise ValueError("boom\\x1b[2J\\x1b]0;pwned\\x07\\u202e")
            return run
    """))
    code = main(["run", str(bench), "--in-process", "-n", "3"])
    captured = capsys.readouterr()
    assert code == 1, captured.err
    _assert_inert(captured.out)
    _assert_inert(captured.err)
    assert "boom\\x1b[2J\\x1b]0;pwned\\x07\\u202e" in captured.err
    assert captured.err.strip().splitlines()[-1].startswith("error: ")


def test_error_line_of_a_bad_argument_shows_controls(tmp_path, capsys):
    code = main(["run", str(tmp_path / "missing\x1b]0;pwned\x07.py")])
    err = capsys.readouterr().err
    assert code != 0
    _assert_inert(err)
    assert "missing\\x1b]0;pwned\\x07.py" in err


def test_compare_table_shows_controls(tmp_path, capsys):
    """compare prints its table through a steadybench console."""
    base, new = tmp_path / "base.json", tmp_path / "new.json"
    write_results(hostile_results(TERMINAL), base)
    write_results(hostile_results(TERMINAL), new)
    assert main(["compare", str(base), str(new)]) == 0
    captured = capsys.readouterr()
    _assert_inert(captured.out)
    _assert_inert(captured.err)
    assert "title\\x1b]0;pwned" in captured.out  # (rich itself drops the BEL)
