"""The two databases a history lives in: SQLite (a file in the project) and PostgreSQL (a
server, for teams), behind one small connection interface.

The SQL of :mod:`steadybench.history.schema` is written once, with ``?`` placeholders and the
words ``{id}``, ``{real}`` and ``{json}`` where the dialects differ; each backend fills them in.
Every failure of the database itself (locked, corrupt, unreachable, refused) becomes one
:class:`HistoryError` line naming the store, never a traceback.

* SQLite: the standard library's ``sqlite3``; each write is one ``BEGIN IMMEDIATE``
  transaction, so two writers (two CI jobs on one machine) take turns, waiting up to
  ``timeout`` seconds for the other (SQLite's busy timeout), and a record and its measurements
  are written together or not at all.
* PostgreSQL: psycopg 3 (``psycopg[binary]``, the ``postgres`` extra), selected by a
  ``postgresql://`` URL; schema changes hold a transaction-level advisory lock.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from ..errors import SteadybenchError
from ..redact import redact, secrets_in

#: seconds a writer waits for another writer's transaction (SQLite busy timeout, PostgreSQL
#: lock timeout); STEADYBENCH_HISTORY_TIMEOUT overrides it
DEFAULT_TIMEOUT_S = 30.0

#: the history file in a project, relative to the repository's top level (or the working
#: directory outside git)
DEFAULT_RELATIVE_PATH = Path(".steadybench") / "history.sqlite"


class HistoryError(SteadybenchError):
    """The history store cannot be used: locked, corrupt, from a newer steadybench, unreachable,
    or a record or reference that does not exist."""


#: a libpq keyword/value connection string (``host=db dbname=x password=...``, libpq
#: "Connection Strings" §34.1.1 and "Parameter Key Words" §34.1.2): it starts with one of
#: libpq's keywords and ``=``
_KEYWORD_DSN = re.compile(
    r"\s*(?:host|hostaddr|port|dbname|user|password|passfile|require_auth|channel_binding|"
    r"connect_timeout|client_encoding|options|application_name|fallback_application_name|"
    r"keepalives\w*|tcp_user_timeout|replication|gssencmode|sslmode|requiressl|"
    r"sslcompression|sslcert|sslkey|sslpassword|sslcertmode|sslrootcert|sslcrl|sslcrldir|"
    r"sslsni|requirepeer|ssl_min_protocol_version|ssl_max_protocol_version|krbsrvname|"
    r"gsslib|gssdelegation|service|target_session_attrs|load_balance_hosts)\s*=")


def default_timeout() -> float:
    text = os.environ.get("STEADYBENCH_HISTORY_TIMEOUT")
    if not text:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        raise HistoryError(f"STEADYBENCH_HISTORY_TIMEOUT={text!r}: not a number of seconds") \
            from None
    if not 0 <= value < 1e6:
        raise HistoryError(f"STEADYBENCH_HISTORY_TIMEOUT={text!r}: out of range")
    return value


class Backend:
    """One open connection; subclasses fill in the dialect."""

    dialect = ""
    words: dict[str, str] = {}
    #: what the user named, for messages
    where: str = ""

    def sql(self, text: str) -> str:
        return text.format(**self.words)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run one statement for each of ``rows`` (an insert of many rows: one call to the
        driver, not one per row; issue 27 item 13)."""
        raise NotImplementedError

    @contextmanager
    def transaction(self, schema_lock: bool = False) -> Iterator[None]:
        raise NotImplementedError
        yield

    def close(self) -> None:
        raise NotImplementedError

    def table_exists(self, name: str) -> bool:
        raise NotImplementedError


class SQLiteBackend(Backend):
    """A history in one SQLite file."""

    dialect = "sqlite"
    words = {"id": "INTEGER PRIMARY KEY AUTOINCREMENT", "real": "REAL", "json": "TEXT"}

    def __init__(self, path: Path, timeout: float, create: bool = True) -> None:
        import sqlite3

        self.path = path
        self.where = str(path)
        self.timeout = timeout
        self._sqlite3 = sqlite3
        if path.exists() and not path.is_file():
            raise HistoryError(f"history {path}: not a regular file")
        if not create and not path.exists():  # a command that only reads creates nothing
            raise HistoryError(f"no history at {path!s} (nothing was recorded there; record "
                               "with --history, or give --history-url)")
        try:
            if create:
                path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(str(path), timeout=timeout, isolation_level=None,
                                        check_same_thread=False)
            self.conn.execute("PRAGMA foreign_keys = ON")
        except sqlite3.Error as exc:
            raise self.error(exc) from None
        except OSError as exc:
            raise HistoryError(f"history {path}: cannot be opened ({exc.strerror or exc})") \
                from None

    def error(self, exc: BaseException) -> HistoryError:
        text = str(exc)
        if "locked" in text or "busy" in text:
            return HistoryError(f"history {self.where} is locked by another process (waited "
                                f"{self.timeout:g} s; STEADYBENCH_HISTORY_TIMEOUT sets how "
                                "long)")
        if "not a database" in text or "malformed" in text or "corrupt" in text:
            return HistoryError(f"history {self.where} is not a SQLite database or is corrupt "
                                f"({text}); move it aside to start a new history")
        if "readonly" in text or "unable to open" in text:
            return HistoryError(f"history {self.where} cannot be written ({text})")
        return HistoryError(f"history {self.where}: database error ({text})")

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            return self.conn.execute(self.sql(sql), tuple(params)).fetchall()
        except self._sqlite3.Error as exc:
            raise self.error(exc) from None

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        try:
            self.conn.executemany(self.sql(sql), (tuple(r) for r in rows))
        except self._sqlite3.Error as exc:
            raise self.error(exc) from None

    @contextmanager
    def transaction(self, schema_lock: bool = False) -> Iterator[None]:
        # IMMEDIATE: the write lock is taken at the start, so two writers take turns instead
        # of one failing at its first write (SQLite "Transaction" docs)
        self.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            with suppress(self._sqlite3.Error):
                self.conn.execute("ROLLBACK")
            raise
        self.execute("COMMIT")

    def table_exists(self, name: str) -> bool:
        rows = self.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?",
                            (name,))
        return bool(rows)

    def close(self) -> None:
        with suppress(self._sqlite3.Error):
            self.conn.close()


class PostgresBackend(Backend):
    """A history in a PostgreSQL database (psycopg 3)."""

    dialect = "postgresql"
    words = {"id": "BIGSERIAL PRIMARY KEY", "real": "DOUBLE PRECISION", "json": "TEXT"}

    def __init__(self, url: str, timeout: float) -> None:
        try:
            import psycopg
        except ImportError:
            raise HistoryError("a PostgreSQL history needs psycopg: pip install "
                               "'steadybench[postgres]'") from None
        self._psycopg = psycopg
        self.where = redact(url)
        try:
            self.conn = psycopg.connect(url, autocommit=True,
                                        connect_timeout=max(1, int(min(timeout, 60))))
        except psycopg.Error as exc:
            first = _first_line(exc, url)
            raise HistoryError(f"history {self.where} cannot be reached ({first})") from None
        self.timeout = timeout
        self._url = url

    def error(self, exc: BaseException) -> HistoryError:
        first = _first_line(exc, self._url)
        if isinstance(exc, self._psycopg.errors.LockNotAvailable):
            return HistoryError(f"history {self.where} is locked by another session (waited "
                                f"{self.timeout:g} s)")
        if isinstance(exc, self._psycopg.OperationalError):
            return HistoryError(f"history {self.where} cannot be reached ({first})")
        return HistoryError(f"history {self.where}: database error ({first})")

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        text = re.sub(r"\?", "%s", self.sql(sql))
        try:
            cur = self.conn.execute(text, tuple(params))  # type: ignore[arg-type]
            return cur.fetchall() if cur.description is not None else []
        except self._psycopg.Error as exc:
            raise self.error(exc) from None

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        text = re.sub(r"\?", "%s", self.sql(sql))
        try:
            with self.conn.cursor() as cur:
                cur.executemany(text, [tuple(r) for r in rows])  # type: ignore[arg-type]
        except self._psycopg.Error as exc:
            raise self.error(exc) from None

    @contextmanager
    def transaction(self, schema_lock: bool = False) -> Iterator[None]:
        try:
            with self.conn.transaction():
                self.execute(f"SET LOCAL lock_timeout = '{int(self.timeout * 1000)}ms'")
                if schema_lock:
                    # one process migrates at a time; the others wait, then see the new version
                    self.execute("SELECT pg_advisory_xact_lock(7316482901)")
                yield
        except self._psycopg.Error as exc:
            raise self.error(exc) from None

    def table_exists(self, name: str) -> bool:
        # an MVCC query of the catalog, not to_regclass(): a name looked up without a lock can
        # miss a table another session has just committed
        rows = self.execute("SELECT 1 FROM pg_catalog.pg_tables WHERE tablename = ? AND "
                            "schemaname = ANY (current_schemas(false))", (name,))
        return bool(rows)

    def close(self) -> None:
        with suppress(self._psycopg.Error):
            self.conn.close()


def _first_line(exc: BaseException, url: str = "") -> str:
    """The first line of a driver's error, credentials removed: those it names and any part
    of ``url``'s (libpq may quote a piece of the DSN as a host name)."""
    text = str(exc).strip()
    return redact(text.splitlines()[0], secrets_in(url)) if text else type(exc).__name__


def default_path(cwd: str | os.PathLike[str] | None = None) -> Path:
    """``.steadybench/history.sqlite`` at the top of the git repository containing ``cwd``
    (the working directory outside git)."""
    from .git import git_info

    base = Path(cwd or os.getcwd())
    info = git_info(base)
    return Path(info.toplevel or base) / DEFAULT_RELATIVE_PATH


def open_backend(url: str | None, timeout: float | None = None,
                 cwd: str | os.PathLike[str] | None = None, create: bool = True) -> Backend:
    """The backend a history URL names: None or "" → the project's default SQLite file;
    ``postgresql://…`` (or ``postgres://``) or a libpq keyword string (``host=db dbname=x``)
    → PostgreSQL; ``sqlite:///abs/path``, ``sqlite:rel/path`` or a plain path → SQLite
    (``create=False``: an existing file only, for commands that only read)."""
    wait = default_timeout() if timeout is None else timeout
    if not url:
        return SQLiteBackend(default_path(cwd), wait, create)
    if url.startswith(("postgresql://", "postgres://")) or _KEYWORD_DSN.match(url):
        return PostgresBackend(url, wait)
    if "://" in url and not url.startswith("sqlite:"):
        scheme = url.split("://", 1)[0]
        raise HistoryError(f"history URL {redact(url)!r}: unknown scheme {scheme!r} (use a file "
                           "path, sqlite:PATH or postgresql://…)")
    if redact(url) != url:  # a password, but no PostgreSQL URL: never a file name
        raise HistoryError(f"history URL {redact(url)!r} holds a password but is neither a "
                           "postgresql:// URL nor a libpq keyword string (host=... dbname=...)")
    if url.startswith("sqlite:"):
        rest = url[len("sqlite:"):]
        path = rest[2:] if rest.startswith("//") else rest
        if not path:
            raise HistoryError(f"history URL {url!r} names no file")
        return SQLiteBackend(Path(path), wait, create)
    return SQLiteBackend(Path(url), wait, create)
