"""The history's schema, versioned, and the migrations that bring an older store up to date.

The version lives in ``steadybench_meta`` (key ``schema_version``). Opening a store applies every
migration above its version, in order, each in its own transaction under the schema lock, so two
processes opening an old store at once migrate it once. A store whose version is above
:data:`SCHEMA_VERSION` was written by a newer steadybench: it is refused, never altered.

* **1** — ``records``: one row per recorded result (time, saved name, command, git commit,
  branch and dirty flag, machine, fingerprint, preset, source format, the full result as JSON).
* **2** — ``measurements``: one row per benchmark of a record (its headline, interval and
  per-execution values), so trends, noise and change points read a few numbers instead of
  every result; filled from the records already there.
* **3** — ``measurements.identity``: what produced a count (valgrind, interpreter or program,
  layouts and method: :class:`steadybench.counts.backend.CountIdentity`, as canonical JSON;
  NULL for times), so a series can be split where it changes (:mod:`.finders`); filled from
  the records already there.
* **4** — ``measurements.cpu_pressure``: the share of the case's time the machine's CPU was
  contended (:mod:`steadybench.cpu_pressure`; NULL when not measured), so the noise between
  records and the change finder leave out records taken on a busy machine; filled from the
  records already there.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from .backends import Backend, HistoryError

if TYPE_CHECKING:
    from .record import MeasurementRow

SCHEMA_VERSION = 4

_V1 = [
    """CREATE TABLE IF NOT EXISTS steadybench_meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS records (
        id {id},
        created TEXT NOT NULL,
        name TEXT,
        command TEXT,
        git_commit TEXT,
        git_branch TEXT,
        git_dirty INTEGER,
        git_note TEXT,
        machine TEXT NOT NULL,
        fingerprint {json},
        preset TEXT,
        source TEXT NOT NULL,
        results {json} NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS records_commit ON records (git_commit)",
    "CREATE INDEX IF NOT EXISTS records_name ON records (name)",
]

_V2 = [
    """CREATE TABLE IF NOT EXISTS measurements (
        record_id INTEGER NOT NULL REFERENCES records (id) ON DELETE CASCADE,
        label TEXT NOT NULL,
        benchmark TEXT NOT NULL,
        implementation TEXT NOT NULL,
        params TEXT NOT NULL,
        unit TEXT NOT NULL,
        value {real},
        ci_low {real},
        ci_high {real},
        level TEXT,
        n_executions INTEGER,
        executions {json})""",
    "CREATE INDEX IF NOT EXISTS measurements_label ON measurements (label)",
    "CREATE INDEX IF NOT EXISTS measurements_record ON measurements (record_id)",
]


def _stored_rows(db: Backend) -> Iterator[tuple[int, MeasurementRow]]:
    """Each stored record's measurement rows, read again from its results document (the data
    steps of the migrations); a document that is not JSON is passed over."""
    from .record import measurements_of

    for record_id, text in db.execute("SELECT id, results FROM records ORDER BY id"):
        try:
            data = json.loads(text)
        except (TypeError, ValueError):
            continue
        for row in measurements_of(data):
            yield int(record_id), row


def _fill_measurements(db: Backend) -> None:
    """Version 2's data step: a measurement row for each benchmark of each existing record."""
    for record_id, row in _stored_rows(db):
        insert_measurement(db, record_id, row, identity=False)  # no column yet


def _fill_column(column: str) -> Callable[[Backend], None]:
    """A data step: each existing measurement's ``column`` (a :class:`MeasurementRow` field of
    the same name) read again from its record, where the record has it."""
    def fill(db: Backend) -> None:
        for record_id, row in _stored_rows(db):
            value = getattr(row, column)
            if value is not None:
                db.execute(f"UPDATE measurements SET {column} = ? WHERE record_id = ? AND "
                           "label = ?", (value, record_id, row.label))

    fill.__doc__ = f"Fill ``measurements.{column}`` from the records already stored."
    return fill


_V3 = ["ALTER TABLE measurements ADD COLUMN identity {json}"]
_V4 = ["ALTER TABLE measurements ADD COLUMN cpu_pressure {real}"]


def insert_measurement(db: Backend, record_id: int, row: MeasurementRow,
                       identity: bool = True) -> None:
    """One measurement row (``identity=False``: a store below version 3, without the columns
    of versions 3 and 4)."""
    insert_measurements(db, record_id, [row], identity)


def insert_measurements(db: Backend, record_id: int, rows: Iterable[MeasurementRow],
                        identity: bool = True) -> None:
    """The measurement rows of one record, by one ``executemany`` (a record of 10^6
    benchmarks was 10^6 statements; issue 27 item 13). ``identity=False``: a store below
    version 3 (version 2's data step), without the later columns."""
    columns = ("record_id, label, benchmark, implementation, params, unit, value, ci_low, "
               "ci_high, level, n_executions, executions")
    width = 12
    if identity:
        columns += ", identity, cpu_pressure"
        width += 2

    def values(row: MeasurementRow) -> list[Any]:
        out = [record_id, row.label, row.benchmark, row.implementation, row.params,
               row.unit, row.value, row.ci_low, row.ci_high, row.level,
               row.n_executions, json.dumps(row.executions)]
        if identity:
            out += [row.identity, row.cpu_pressure]
        return out

    db.executemany(f"INSERT INTO measurements ({columns}) VALUES "
                   f"({', '.join('?' * width)})", map(values, rows))


#: version → the steps that reach it from the version before
MIGRATIONS: dict[int, list[str | Callable[[Backend], None]]] = {
    1: list(_V1),
    2: [*_V2, _fill_measurements],
    3: [*_V3, _fill_column("identity")],
    4: [*_V4, _fill_column("cpu_pressure")],
}


def current_version(db: Backend) -> int:
    """The store's schema version (0 for an empty database)."""
    if not db.table_exists("steadybench_meta"):
        if not db.table_exists("records"):
            return 0
        # both tables are made in one transaction, but each read above saw its own moment (a
        # PostgreSQL statement outside a transaction): another process's first write may have
        # committed between them, so 'records' seen after a missed 'steadybench_meta' is only
        # a foreign table if a third read misses it too (two writers racing to create a new
        # history once failed this way)
        if not db.table_exists("steadybench_meta"):
            raise HistoryError(f"history {db.where}: has a 'records' table but no steadybench "
                               "schema version: not a steadybench history")
    rows = db.execute("SELECT value FROM steadybench_meta WHERE key = 'schema_version'")
    if not rows:
        return 0
    try:
        return int(rows[0][0])
    except (TypeError, ValueError):
        raise HistoryError(f"history {db.where}: unreadable schema version {rows[0][0]!r}") \
            from None


def check_not_newer(db: Backend, version: int) -> None:
    if version > SCHEMA_VERSION:
        raise HistoryError(f"history {db.where} has schema version {version}, written by a newer "
                           f"steadybench (this one reads up to {SCHEMA_VERSION}): upgrade "
                           "steadybench to use it")


def migrate(db: Backend, target: int = SCHEMA_VERSION) -> int:
    """Bring the store to ``target``; returns the version it had."""
    found = current_version(db)
    check_not_newer(db, found)
    if found >= target:
        return found
    for version in range(found + 1, target + 1):
        with db.transaction(schema_lock=True):
            now = current_version(db)  # another process may have migrated meanwhile
            check_not_newer(db, now)
            if now >= version:
                continue
            for step in MIGRATIONS[version]:
                if callable(step):
                    step(db)
                else:
                    db.execute(step)
            db.execute("INSERT INTO steadybench_meta (key, value) VALUES ('schema_version', ?) "
                       "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (str(version),))
    return found
