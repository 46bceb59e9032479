"""Credentials never kept nor shown: one redaction used by every record and message.

A database URL is the usual way a password reaches steadybench (``--history-url
postgresql://user:PASSWORD@host/db``, a ``?password=`` query parameter, or a libpq keyword
string ``host=db password=PASSWORD``), and the command line that carries it is recorded with
the results (the JSON file, the HTML report, the history database) and printed by ``history
show``. :func:`redact` replaces every password it recognises in a text by ``***``:

* the password of a URL's user information (``scheme://user:PASSWORD@host``; RFC 3986 §3.2.1,
  which also deprecates it), up to the *last* ``@`` of the authority, since an unescaped ``@``
  in a password is common;
* the value of a query parameter named like a password (``?password=``, ``&sslpassword=``;
  libpq's connection URIs accept every keyword as a parameter), up to the next ``&``;
* the value of a keyword named like a password in a libpq keyword/value string
  (``password=VALUE`` or ``password = 'quoted value'``; libpq "Connection Strings" §34.1.1),
  up to the next blank, or the closing quote.

The assumption (named in docs/history.md): a credential travels in a URL's user information
or under one of these names (``password``, ``sslpassword``, ``pgpassword``, ``passwd``,
``pwd``, ``pass``, ``secret``, ``token``, ``api_key``, ``apikey``, ``access_key``); one under
any other name, or as the word after an option, is not recognised.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Sequence
from typing import Any

#: what stands for a removed credential
MASK = "***"

#: keywords that name a credential (case-insensitive)
_KEYS = r"(?:ssl|pg)?password|passwd|pwd|pass|secret|token|api_?key|access_?key"
#: ``scheme://authority`` (the authority ends at the first ``/``, ``?``, ``#`` or blank)
_URL = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<authority>[^/?#\s]*)")
#: a query parameter: ``?password=…`` or ``&password=…`` up to the next ``&``, ``#``, quote or blank
_QUERY = re.compile(rf"(?P<key>[?&;](?:{_KEYS})=)(?P<value>[^&#\s']*)", re.IGNORECASE)
#: a libpq keyword: ``password=value`` or ``password = 'quoted \\' value'``
_KEYWORD = re.compile(rf"(?P<key>(?<![\w?&;.])(?:{_KEYS})\s*=\s*)"
                      r"(?P<value>'(?:[^'\\]|\\.)*'?|(?:[^\s'\\]|\\.)+)", re.IGNORECASE)


def _authority(m: re.Match[str]) -> str:
    authority = m.group("authority")
    userinfo, at, host = authority.rpartition("@")
    if not at or ":" not in userinfo:
        return m.group(0)
    user = userinfo.split(":", 1)[0]
    return f"{m.group('scheme')}{user}:{MASK}@{host}"


def redact(text: str, secrets: Sequence[str] = ()) -> str:
    """``text`` with every password it holds (URL, query parameter, libpq keyword), and every
    one of ``secrets`` (:func:`secrets_in` of what a message is about), replaced by ``***``;
    text without one comes back unchanged."""
    if not isinstance(text, str) or not text:
        return text
    for secret in secrets:
        text = text.replace(secret, MASK)
    text = _URL.sub(_authority, text)
    text = _QUERY.sub(lambda m: m.group("key") + MASK, text)
    return _KEYWORD.sub(lambda m: m.group("key") + MASK, text)


def secrets_in(text: str) -> list[str]:
    """The passwords :func:`redact` would mask in ``text``, and their ``@``-separated pieces
    (a driver that splits ``user:p@ss@host`` at the first ``@`` quotes ``ss@host`` as a host
    name), longest first: for masking them in a third party's message about ``text``."""
    found: list[str] = []
    for m in _URL.finditer(text):
        userinfo, at, _host = m.group("authority").rpartition("@")
        if at and ":" in userinfo:
            found.append(userinfo.split(":", 1)[1])
    for pattern in (_QUERY, _KEYWORD):
        found += [m.group("value").strip("'") for m in pattern.finditer(text)]
    pieces = {p for secret in found for p in [secret, *secret.split("@")] if len(p) >= 3}
    return sorted(pieces, key=len, reverse=True)


def redact_argv(words: Sequence[str]) -> list[str]:
    """Each word of a command line redacted (a credential given as the word *after* an option,
    ``--password SECRET``, is not recognised: give it in the URL or the environment)."""
    return [redact(str(w)) for w in words]


def redact_tree(obj: Any) -> Any:
    """Every string of a JSON-like tree (dicts, lists, tuples) redacted; other values kept."""
    if isinstance(obj, str):
        return redact(obj)
    if isinstance(obj, dict):
        return {k: redact_tree(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [redact_tree(v) for v in obj]
    return obj


def command_line(program: str = "steadybench") -> str:
    """This process's command line, shell-quoted, credentials removed (what results record)."""
    return shlex.join([program, *redact_argv(sys.argv[1:])]) if sys.argv else program
