"""Quoting parameter values for a ``/bin/sh -c`` command line, by where they stand in it.

With ``--shell`` a command is one line that the shell parses, so a ``--param`` value pasted into
it verbatim is shell code: ``--cmd 'echo {x}' --param 'x=$(touch pwned)'`` would run ``touch``.
Every ``{name}`` placeholder of a shell line is therefore replaced by its value *quoted for the
place it stands*, found by a small POSIX lexer (:func:`placeholder_contexts`):

* outside quotes (also inside ``$(...)``, which the shell parses afresh): ``shlex.quote``;
* inside single quotes: each ``'`` of the value becomes ``'\\''`` (close, escaped quote, reopen);
* inside double quotes: ``\\``, ``"``, ``$`` and a backquote are escaped with a backslash;
* inside bash's ``$'...'`` (ANSI-C quoting; a POSIX ``sh`` such as dash reads ``$`` and a
  single-quoted string instead): a value with neither ``'`` nor ``\\`` as it is, the same text
  under both readings; any other value closes the string, stands as one ``shlex.quote``-d word
  and reopens it with ``$'``, so neither reading makes it code. Once a ``$'...'`` string holds a
  backslash escape the two readings disagree on where the string ends (``\\'`` ends it only
  for a POSIX ``sh``), so every placeholder after it is refused;
* right after a backslash (``\\{x}``) or a ``$`` (``${x}``), where the shell takes the brace
  itself: refused (:func:`~.commands.substitute` finds no context for it);
* inside a ``#`` comment: the value as it is, since nothing in a comment runs, but a value with
  a line break is refused (the line break would end the comment and the rest would run);
* inside backquotes or ``${...}``, where another level of unquoting happens, or in the body of a
  here-document, where quotes are not removed but ``$(...)`` still runs: refused, with the
  advice to move the placeholder or use the raw form.

The value then reaches the command as one literal word, whatever it contains. ``{name!raw}``
inserts the value unquoted, for users who mean a value to be shell code (a pipeline, a
redirection); it is never the default.
"""

from __future__ import annotations

import re
import shlex

from ..errors import ConfigurationError

#: where a placeholder stands in a shell line
PLAIN, SINGLE, DOUBLE, BACKQUOTE, BRACE, HEREDOC, COMMENT = (
    "plain", "single", "double", "backquote", "brace", "here-document", "comment")
#: inside bash's ``$'...'``; after a backslash escape in one (where bash and a POSIX sh part)
ANSI, AFTER_ANSI_ESCAPE = "ansi-c", "after-ansi-c-escape"
#: contexts where no quoting makes a value literal (another level of unquoting, or none)
UNQUOTABLE = (BACKQUOTE, BRACE, HEREDOC)
#: a frame of ``$( ... )``: parsed like the top level, ended by its matching ``)``
_SUBST = "subst"
#: a frame of a ``#`` comment, ended by the end of the line
_COMMENT = COMMENT
#: characters that end a word (before which ``#`` starts a comment)
_WORD_BREAK = " \t\n;&|()<>"


def placeholder_contexts(line: str, placeholder: re.Pattern[str]) -> dict[int, str]:
    """For every match of ``placeholder`` in ``line`` (by start offset): the quoting context it
    stands in, :data:`PLAIN`, :data:`SINGLE`, :data:`DOUBLE` or — when any enclosing level is
    backquotes, ``${...}`` or a here-document — that one (see :data:`UNQUOTABLE`).

    Placeholders are found in every context (single quotes too: they are steadybench's, not the
    shell's) and skipped over as ordinary word characters.
    """
    return _Lexer(line, placeholder).contexts()


class _Lexer:
    """Just enough of the POSIX shell's token recognition (XCU §2.3) to know, at each
    placeholder, which quotes, substitutions and here-documents enclose it."""

    def __init__(self, line: str, placeholder: re.Pattern[str]) -> None:
        self.line = line
        self.placeholder = placeholder
        self.stack: list[list] = [[PLAIN, 0]]  # [context, open parentheses or delimiter]
        self.pending: list[tuple[str, bool]] = []  # here-documents that start on the next line
        self.ansi_escape_seen = False  # a backslash in a $'...': bash and POSIX sh part ways

    def contexts(self) -> dict[int, str]:
        found: dict[int, str] = {}
        line, i = self.line, 0
        while i < len(line):
            m = self.placeholder.match(line, i)
            if m is not None:
                found[i] = self._effective()
                i = m.end()
                continue
            kind = self.stack[-1][0]
            if kind == SINGLE:
                i = self._close_at(i, "'")
            elif kind == ANSI:
                i = self._ansi(i)
            elif kind == _COMMENT:
                i = self._newline(i) if line[i] == "\n" else i + 1
            elif kind == BRACE:
                i = self._close_at(i, "}")
            elif kind == BACKQUOTE:
                i = i + 2 if line[i] == "\\" else self._close_at(i, "`")
            elif kind == HEREDOC:
                i = self._heredoc(i)
            elif kind == DOUBLE:
                i = self._double(i)
            else:  # PLAIN or _SUBST
                i = self._plain(i)
        return found

    def _effective(self) -> str:
        kinds = [frame[0] for frame in self.stack]
        for kind in UNQUOTABLE:
            if kind in kinds:
                return kind
        if self.ansi_escape_seen:
            return AFTER_ANSI_ESCAPE
        return kinds[-1] if kinds[-1] in (SINGLE, DOUBLE, COMMENT, ANSI) else PLAIN

    def _close_at(self, i: int, closer: str) -> int:
        if self.line[i] == closer:
            self.stack.pop()
        return i + 1

    def _open(self, i: int) -> int | None:
        """Open a quote or substitution starting at ``i``; the next index, or None."""
        c, two = self.line[i], self.line[i:i + 2]
        if c == "`":
            self.stack.append([BACKQUOTE, 0])
        elif two == "$(":
            self.stack.append([_SUBST, 0])
            return i + 2
        elif two == "${":
            self.stack.append([BRACE, 0])
            return i + 2
        else:
            return None
        return i + 1

    def _ansi(self, i: int) -> int:
        """Inside ``$'...'`` (bash): a backslash escapes the next character, ``'`` ends it."""
        if self.line[i] == "\\":
            self.ansi_escape_seen = True
            return i + 2
        return self._close_at(i, "'")

    def _double(self, i: int) -> int:
        if self.line[i] == "\\":
            return i + 2
        if self.line[i] == '"':
            self.stack.pop()
            return i + 1
        opened = self._open(i)
        return i + 1 if opened is None else opened

    def _plain(self, i: int) -> int:
        line, frame = self.line, self.stack[-1]
        c = line[i]
        if c == "\\":
            return i + 2
        if line.startswith("$'", i):
            self.stack.append([ANSI, 0])
            return i + 2
        if c in "'\"":
            self.stack.append([SINGLE if c == "'" else DOUBLE, 0])
            return i + 1
        opened = self._open(i)
        if opened is not None:
            return opened
        if line.startswith("<<", i):
            return self._redirect(i)
        if c == "\n":
            return self._newline(i)
        if frame[0] == _SUBST and c in "()":
            if c == "(":
                frame[1] += 1
            elif frame[1] == 0:
                self.stack.pop()
            else:
                frame[1] -= 1
        elif c == "#" and (i == 0 or line[i - 1] in _WORD_BREAK):
            self.stack.append([_COMMENT, 0])
        return i + 1

    def _redirect(self, i: int) -> int:
        """``<<[-]WORD``: a here-document whose body starts on the next line."""
        line = self.line
        j = i + 2
        if line.startswith("<", j):  # bash's here-string <<<: an ordinary word follows
            return j + 1
        strip_tabs = line.startswith("-", j)
        j += strip_tabs
        while j < len(line) and line[j] in " \t":
            j += 1
        k = j
        while k < len(line) and line[k] not in _WORD_BREAK:
            k += 1
        delimiter = re.sub(r"[\\'\"]", "", line[j:k])
        self.pending.append((delimiter, strip_tabs))
        return k

    def _newline(self, i: int) -> int:
        if self.stack[-1][0] == _COMMENT:
            self.stack.pop()
        for delimiter, strip_tabs in reversed(self.pending):  # the first one on top
            self.stack.append([HEREDOC, (delimiter, strip_tabs)])
        self.pending.clear()
        return i + 1

    def _heredoc(self, i: int) -> int:
        """A body line: the delimiter line ends the here-document."""
        line = self.line
        if i == 0 or line[i - 1] == "\n":
            end = line.find("\n", i)
            end = len(line) if end < 0 else end
            delimiter, strip_tabs = self.stack[-1][1]
            text = line[i:end].lstrip("\t") if strip_tabs else line[i:end]
            if text == delimiter:
                self.stack.pop()
                return end + 1
        return i + 1


def quote_value(value: str, context: str, name: str, command: str = "") -> str:
    """``value`` quoted so that, standing in ``context``, the shell reads it as literal text.

    Raises :class:`ConfigurationError` for a placeholder inside backquotes or ``${...}``.
    """
    if context == PLAIN:
        return shlex.quote(value)
    if context == SINGLE:
        return value.replace("'", "'\\''")
    if context == DOUBLE:
        return re.sub(r'([\\"$`])', r"\\\1", value)
    if context == ANSI:
        if "'" not in value and "\\" not in value:
            return value
        return "'" + shlex.quote(value) + "$'"
    if context == COMMENT:
        if "\n" in value or "\r" in value:
            in_command = f" in command {command!r}" if command else ""
            raise ConfigurationError(
                f"placeholder {{{name}}}{in_command} stands in a shell comment and its value "
                "has a line break, which would end the comment and run the rest; remove the "
                "line break or move the placeholder out of the comment")
        return value
    in_command = f" in command {command!r}" if command else ""
    if context == AFTER_ANSI_ESCAPE:
        raise ConfigurationError(
            f"placeholder {{{name}}}{in_command} stands after a $'...' string with a "
            "backslash escape, which bash and a POSIX sh end at different places, so its value "
            f"cannot be quoted for the shell; use printf instead of $'...', or write "
            f"{{{name}!raw}} to insert the value unquoted (as shell code)")
    where = {BACKQUOTE: "backquotes", BRACE: "${...}", HEREDOC: "a here-document"}[context]
    raise ConfigurationError(
        f"placeholder {{{name}}}{in_command} stands inside {where}, where its value cannot be "
        f"quoted for the shell; use $(...) instead, or write {{{name}!raw}} to insert the value "
        "unquoted (as shell code)")
