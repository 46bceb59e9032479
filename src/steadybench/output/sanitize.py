"""Making text from benchmarks inert where it is shown: terminal, Markdown, XML.

Names, parameters, warnings and error messages come from the measured code, the command line
and the files read, so they may hold anything. Each output gets the text in a form that shows
what it is and cannot act on the reader:

- :func:`terminal_text`: control characters (ESC, CSI, OSC, every other C0 and C1 control, DEL),
  bidirectional overrides and lone surrogates are shown escaped (``\\x1b``), so an escape
  sequence cannot move the cursor, retitle the window or hide text;
- :func:`markdown_text`: nothing can start a heading, list, quote, code, link, image or HTML,
  nor break a table row;
- :func:`xml_text`: characters XML 1.0 forbids, and bidirectional overrides, are shown
  escaped, so the document always parses and reads in its own order;
- :func:`csv_text`: a cell of a CSV file: control characters and bidirectional overrides shown
  escaped, and a cell a spreadsheet would take as a formula (starting with ``=``, ``+``, ``-``,
  ``@``) prefixed with ``'`` (OWASP, "CSV Injection");
- :func:`html_text`: text in the HTML report (autoescaped by Jinja) with control characters and
  bidirectional overrides shown escaped, line feeds kept;
- :func:`terminal_tree`: every string of a JSON-like tree made terminal-safe, for display.

The escaped form is Python's: ``\\x1b``, ``\\u202e``, ``\\udc80``.
"""

from __future__ import annotations

import re

#: characters a terminal may act on, or that print as something other than themselves
_TERMINAL_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
    "\ud800-\udfff]"
)
#: the same but the line feed, for text that is laid out in lines (a console's rendering)
_TERMINAL_UNSAFE_BUT_NEWLINE = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
    "\ud800-\udfff]"
)
#: characters outside XML 1.0's Char production (#x9 | #xA | #xD | [#x20-#xD7FF] |
#: [#xE000-#xFFFD] | [#x10000-#x10FFFF])
_XML_INVALID = re.compile("[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
                          "|[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
                          "\u2066-\u2069]")
#: what makes a spreadsheet read a cell as a formula (OWASP "CSV Injection")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
#: what ends a line for str.splitlines (CommonMark itself breaks at CR and LF)
_LINE_BREAKS = re.compile("\r\n|[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
#: Markdown punctuation that could open code, a link or image, math, or end a cell
_MARKDOWN_SPECIAL = re.compile(r"([\\`\[\]|$])")
#: what at the start of a line makes a block: heading, list item, thematic break, fence
_MARKDOWN_BLOCK_START = re.compile(
    r"^(?:(?P<mark>#{1,6}|[-+*])(?=\s|$)|(?P<rule>[-*_=])(?:\s*(?P=rule)){2,}\s*$"
    r"|(?P<fence>~)|\d{1,9}(?P<ordered>[.)])(?=\s|$))"
)


def visible(char: str) -> str:
    """``char`` as the escape that shows it: ``"\\x1b"`` → ``\\x1b`` (four characters)."""
    return char.encode("unicode_escape").decode("ascii")


def _show(match: re.Match[str]) -> str:
    return visible(match.group(0))


def terminal_text(text: object, keep_newlines: bool = False) -> str:
    """``text`` safe to print on a terminal: control characters shown escaped (line feeds
    too, unless ``keep_newlines``)."""
    unsafe = _TERMINAL_UNSAFE_BUT_NEWLINE if keep_newlines else _TERMINAL_UNSAFE
    return unsafe.sub(_show, str(text))


def xml_text(text: object) -> str:
    """``text`` with the characters XML 1.0 cannot hold (most C0 controls, lone surrogates,
    U+FFFE, U+FFFF), C1 controls and bidirectional overrides shown escaped; ElementTree escapes
    ``<``, ``&`` and quotes itself."""
    return _XML_INVALID.sub(_show, str(text))


def csv_text(text: object) -> str:
    """A text cell of a CSV file: :func:`terminal_text` (line breaks escaped too), and a
    leading ``'`` when a spreadsheet would read the cell as a formula."""
    out = terminal_text(text)
    return "'" + out if out.startswith(_FORMULA_START) else out


def html_text(text: object) -> str:
    """Text for the HTML report: control characters and bidirectional overrides shown
    escaped, line feeds kept (Jinja escapes ``<``, ``&`` and quotes)."""
    return terminal_text(text, keep_newlines=True)


def terminal_tree(obj: object) -> object:
    """Every string of a JSON-like tree (dicts, lists) :func:`terminal_text`-ed, for display."""
    if isinstance(obj, str):
        return terminal_text(obj)
    if isinstance(obj, dict):
        return {k: terminal_tree(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [terminal_tree(v) for v in obj]
    return obj


def _escape_block_start(text: str) -> str:
    match = _MARKDOWN_BLOCK_START.match(text)
    if not match:
        return text
    at = next((match.start(g) for g in ("mark", "rule", "fence", "ordered")
               if match.start(g) >= 0), 0)
    return text[:at] + "\\" + text[at:]


def markdown_text(text: object) -> str:
    """Text safe in a Markdown table cell or list item, shown as it is.

    Line breaks become spaces (a row stays one row, no line can start a heading); other
    control characters are shown escaped; ``&``, ``<`` and ``>`` become entities (no HTML, no
    ``<autolink>``); backslash, backtick, brackets, ``|`` and ``$`` are backslash-escaped (no
    code span, link, image, math or extra cell); a leading ``#``, list marker, rule or fence is
    escaped. A bare URL stays text, though GitHub's renderer links it (the link then shows its
    own address).
    """
    out = _LINE_BREAKS.sub(" ", str(text))
    out = _TERMINAL_UNSAFE.sub(_show, out).strip()
    out = _MARKDOWN_SPECIAL.sub(r"\\\1", out)
    out = out.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _escape_block_start(out)
