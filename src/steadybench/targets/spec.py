"""What ``--target`` names: the local machine, a host over SSH or an Android device over adb.

Rancid (Afonso & Almeida) benchmarks on phones and development boards (§II-B, Table 1): the
program runs on the device, and the countermeasures read and write the *device's* sysfs. A
target is written as

- ``local`` (the default): this machine;
- ``ssh://[USER@]HOST[:PORT]``: a Linux machine reached with the system ``ssh`` client (its
  configuration, keys and agent are the user's own);
- ``adb`` or ``adb://SERIAL``: an Android device reached with the ``adb`` tool (``-s SERIAL``
  when a serial is given).

A query string adds options: ``root=/DIR`` makes the target read and tune the fake ``sys`` and
``proc`` tree under ``/DIR`` *on the device* instead of ``/`` (a testing aid, like ``--root`` for
the local machine); ``timer=python|shell|auto`` chooses how a run is timed on the device
(:mod:`.remote_run`). Everything is validated here, so no name or value reaches a remote shell
or the ``ssh``/``adb`` command line unquoted or as an option.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from ..errors import ConfigurationError

KINDS = ("local", "ssh", "adb")
TIMERS = ("auto", "python", "shell")
_USER = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$")
_HOST = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.-]{0,252}$|^\[[0-9A-Fa-f:.]+\]$")
_SERIAL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")
_ROOT = re.compile(r"^/[A-Za-z0-9._/+@-]*$")


@dataclass(frozen=True)
class TargetSpec:
    """A parsed ``--target``. ``key`` is its canonical text (the journals are kept by it)."""

    kind: str
    host: str | None = None
    user: str | None = None
    port: int | None = None
    serial: str | None = None
    root: str = "/"
    timer: str = "auto"

    @property
    def is_local(self) -> bool:
        return self.kind == "local"

    @property
    def address(self) -> str:
        """The target without options: ``ssh://user@host:port``, ``adb://SERIAL``, ``adb``."""
        if self.kind == "ssh":
            user = f"{self.user}@" if self.user else ""
            port = f":{self.port}" if self.port else ""
            return f"ssh://{user}{self.host}{port}"
        if self.kind == "adb":
            return f"adb://{self.serial}" if self.serial else "adb"
        return "local"

    @property
    def key(self) -> str:
        """The canonical text: the address, plus ``?root=`` when the root is not ``/``."""
        return self.address + (f"?root={self.root}" if self.root != "/" else "")

    @property
    def digest(self) -> str:
        """A short name for the target's own state folder on the host."""
        return hashlib.sha256(self.key.encode()).hexdigest()[:16]

    @property
    def folder_name(self) -> str:
        """``KIND-HOST-DIGEST``: readable, and unique per target (``key``)."""
        label = (self.host or self.serial or self.kind).strip("[]").replace(":", "_")
        return f"{self.kind}-{label[:40]}-{self.digest}"


def _bad(text: str, why: str) -> ConfigurationError:
    return ConfigurationError(f"--target {text!r}: {why} (expected local, ssh://[USER@]HOST"
                              "[:PORT] or adb[://SERIAL], optionally ?root=/DIR&timer=...)")


def parse_target(text: str | None) -> TargetSpec:
    """Parse a ``--target`` value; ConfigurationError with the accepted forms when it is bad."""
    if text is None or text.strip() in ("", "local"):
        return TargetSpec("local")
    text = text.strip()
    if any(c.isspace() or not c.isprintable() for c in text):
        raise _bad(text, "spaces and control characters are not allowed")
    if text == "adb" or text.startswith("adb?"):
        text = "adb://" + text[3:]
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise _bad(text, str(exc)) from None
    kind = parts.scheme
    if kind not in ("ssh", "adb"):
        raise _bad(text, f"unknown kind {kind or text!r}")
    if parts.path not in ("", "/") or parts.fragment:
        raise _bad(text, "a path is not part of a target (use ?root=/DIR)")
    options = parse_qs(parts.query, keep_blank_values=True, strict_parsing=False)
    unknown = sorted(set(options) - {"root", "timer"})
    if unknown:
        raise _bad(text, f"unknown option(s) {', '.join(unknown)}")
    root = options.get("root", ["/"])[-1] or "/"
    if not _ROOT.match(root) or "/../" in root + "/" or "/./" in root + "/":
        raise _bad(text, f"root {root!r} must be an absolute path of plain names")
    root = root.rstrip("/") or "/"
    timer = options.get("timer", ["auto"])[-1]
    if timer not in TIMERS:
        raise _bad(text, f"timer must be one of {', '.join(TIMERS)}")
    if kind == "ssh":
        host = parts.hostname
        netloc_host = parts.netloc.rpartition("@")[2]
        if netloc_host.startswith("["):
            host = netloc_host.partition("]")[0] + "]"
        if not host or not _HOST.match(host):
            raise _bad(text, f"bad host name {host!r}")
        user = parts.username
        if parts.password is not None:
            raise _bad(text, "passwords are not taken on the command line (use keys or an "
                             "agent)")
        if user is not None and not _USER.match(user):
            raise _bad(text, f"bad user name {user!r}")
        if port is not None and not 0 < port < 65536:
            raise _bad(text, f"bad port {port}")
        return TargetSpec("ssh", host=host, user=user, port=port, root=root, timer=timer)
    serial = parts.netloc or None
    if serial is not None and not _SERIAL.match(serial):
        raise _bad(text, f"bad serial {serial!r}")
    return TargetSpec("adb", serial=serial, root=root, timer=timer)


def looks_like_target(text: str) -> bool:
    """Whether ``text`` (a journal's ``root``) names a remote target rather than a directory."""
    return text.startswith(("ssh://", "adb://")) or text == "adb" or text.startswith("adb?")
