"""The history store: add records, find them by id, saved name or git reference, and read one
benchmark's series.

``HistoryStore.open(url)`` opens (and creates or migrates) the store a URL names
(:func:`steadybench.history.backends.open_backend`); ``add`` writes a record and its
measurements in one transaction, so concurrent writers never lose or mix records.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from ..model.results import now_iso
from ..redact import redact, redact_tree
from .backends import Backend, HistoryError, open_backend
from .git import GitInfo, git_info, resolve_commit
from .record import MeasurementRow, Record, current_machine, measurements_of, preset_of
from .schema import insert_measurements, migrate

#: records whose measurements :meth:`HistoryStore.every_series` reads at a time
EVERY_SERIES_RECORDS = 100
_RECORD_COLUMNS = ("id, created, name, command, git_commit, git_branch, git_dirty, git_note, "
                   "machine, fingerprint, preset, source")


@dataclass(frozen=True, slots=True)
class Point:
    """One benchmark in one record: a point of its series."""

    record_id: int
    created: str
    commit: str | None
    branch: str | None
    dirty: bool | None
    name: str | None
    machine: str
    label: str
    unit: str
    value: float
    ci_low: float | None
    ci_high: float | None
    level: str | None
    executions: tuple[float, ...]
    #: what produced a count (canonical JSON of its ``CountIdentity``); None for a time. Counts
    #: of different identities are not comparable: a series is split where it changes
    #: (:mod:`steadybench.history.finders`)
    identity: str | None = None
    #: the share of the case's time the CPU was contended (:mod:`steadybench.cpu_pressure`);
    #: None when not measured. A busy record is left out of the noise and the change finder
    cpu_pressure: float | None = None

    @property
    def busy(self) -> bool:
        """Measured on a busy machine (:func:`steadybench.cpu_pressure.is_busy`)."""
        from ..cpu_pressure import is_busy

        return is_busy(self.cpu_pressure)


class HistoryStore:
    """An open history. Use as a context manager, or call :meth:`close`."""

    def __init__(self, backend: Backend) -> None:
        self.db = backend
        self.where = backend.where

    @classmethod
    def open(cls, url: str | None = None, *, timeout: float | None = None,
             cwd: str | os.PathLike[str] | None = None, create: bool = True) -> HistoryStore:
        """Open the store ``url`` names (None: the project's ``.steadybench/history.sqlite``)
        and bring its schema up to date; ``create=False`` (commands that only read) refuses a
        SQLite store that does not exist instead of creating it."""
        backend = open_backend(url, timeout, cwd, create)
        try:
            migrate(backend)
        except BaseException:
            backend.close()
            raise
        return cls(backend)

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    # ------------------------------------------------------------------ writing
    def add(self, results: dict[str, Any], *, name: str | None = None,
            command: str | None = None, git: GitInfo | None = None,
            source: str = "steadybench", created: str | None = None,
            cwd: str | os.PathLike[str] | None = None) -> Record:
        """Record a results document (the JSON form of :class:`~steadybench.model.results.
        Results`); the git state is read from ``cwd`` unless given."""
        measurements = measurements_of(results)  # read once (issue 27 item 13)
        if not measurements:
            raise HistoryError("nothing to record: the results hold no benchmark with a value")
        if isinstance(results.get("context"), dict):
            results = {**results, "context": redact_tree(results["context"])}
        return self.add_encoded(results, json.dumps(results, allow_nan=False), measurements,
                                name=name, command=command, git=git, source=source,
                                created=created, cwd=cwd)

    def add_encoded(self, results: dict[str, Any], text: str,
                    measurements: list[MeasurementRow], *, name: str | None = None,
                    command: str | None = None, git: GitInfo | None = None,
                    source: str = "steadybench", created: str | None = None,
                    cwd: str | os.PathLike[str] | None = None) -> Record:
        """:meth:`add` of a document already encoded: ``text`` is its JSON (finite, context
        redacted), ``measurements`` its rows, ``results`` the document or its top level
        without the benchmarks (the record keeps it; :mod:`.importing` gives that one).

        ``measurements`` is emptied once its rows are written, before the text is: SQLite
        copies a text it is given twice (the bound value, the row), and for 10^6 benchmarks
        those copies beside the rows were the peak of ``history import`` (issue 27 item 13).
        The record is inserted with an empty text first and the text written last, in the
        same transaction (no reader sees the empty one)."""
        if not measurements:
            raise HistoryError("nothing to record: the results hold no benchmark with a value")
        info = git if git is not None else git_info(cwd)
        command = redact(command) if command else command  # no credential is ever stored
        env = results.get("environment") or {}
        record = Record(results=results, created=created or now_iso(), name=name,
                        command=command, git=info, machine=current_machine(env),
                        fingerprint=env.get("fingerprint"), preset=preset_of(results),
                        source=source)
        with self.db.transaction():
            rows = self.db.execute(
                "INSERT INTO records (created, name, command, git_commit, git_branch, git_dirty, "
                "git_note, machine, fingerprint, preset, source, results) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (record.created, name, command, info.commit, info.branch,
                 None if info.dirty is None else int(info.dirty), info.note, record.machine,
                 json.dumps(record.fingerprint), record.preset, source, ""))
            record.id = int(rows[0][0])
            insert_measurements(self.db, record.id, measurements)
            measurements.clear()
            self.db.execute("UPDATE records SET results = ? WHERE id = ?", (text, record.id))
        return record

    # ------------------------------------------------------------------ reading
    def _record(self, row: tuple[Any, ...], results: dict[str, Any] | None) -> Record:
        (rid, created, name, command, commit, branch, dirty, note, machine, fingerprint,
         preset, source) = row[:12]
        try:
            fp = json.loads(fingerprint) if fingerprint else None
        except ValueError:
            fp = None
        if results and isinstance(results.get("context"), dict):  # a record of an older version
            results = {**results, "context": redact_tree(results["context"])}
        return Record(results=results or {}, id=int(rid), created=created, name=name,
                      command=redact(command) if command else command,
                      git=GitInfo(commit=commit, branch=branch,
                                  dirty=None if dirty is None else bool(dirty), note=note),
                      machine=machine, fingerprint=fp, preset=preset, source=source)

    def records(self, limit: int | None = None, benchmark: str | None = None,
                machine: str | None = None) -> list[Record]:
        """Records, newest first, without their results (``get`` reads one whole)."""
        sql = (f"SELECT {_RECORD_COLUMNS}, (SELECT COUNT(*) FROM measurements m WHERE "
               "m.record_id = records.id) FROM records")
        where, params = [], []
        if machine:
            where.append("machine = ?")
            params.append(machine)
        if benchmark:
            where.append("id IN (SELECT record_id FROM measurements WHERE label = ?)")
            params.append(benchmark)
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY id DESC"
        if limit:
            sql += f" LIMIT {int(limit)}"
        out = []
        for row in self.db.execute(sql, params):
            rec = self._record(row, None)
            rec.count = int(row[12])
            out.append(rec)
        return out

    def get(self, record_id: int) -> Record:
        rows = self.db.execute(f"SELECT {_RECORD_COLUMNS}, results FROM records WHERE id = ?",
                               (int(record_id),))
        if not rows:
            raise HistoryError(f"history {self.where}: no record {record_id}")
        try:
            results = json.loads(rows[0][12])
        except (TypeError, ValueError):
            raise HistoryError(f"history {self.where}: record {record_id} holds unreadable "
                               "results") from None
        return self._record(rows[0], results)

    def resolve(self, ref: str, cwd: str | os.PathLike[str] | None = None,
                machine: str | None = None) -> Record:
        """The record ``ref`` names: ``#ID`` or ``id:ID``; else the latest record saved under
        that name; ``latest``: the latest record of all; else the latest record of the commit
        git resolves ``ref`` to (``HEAD~1``, a branch, a tag, a hash). ``machine`` limits the
        search to one machine when that machine has a match."""
        text = ref.strip()
        if not text:
            raise HistoryError("empty history reference")
        for prefix in ("#", "id:"):
            if text.startswith(prefix) and text[len(prefix):].isdigit():
                return self.get(int(text[len(prefix):]))
        by_name = self._latest("name = ?", text, machine)
        if by_name is not None:
            return self.get(by_name)
        if text == "latest":  # pytest-benchmark's bare --benchmark-compare
            latest = self._latest("'1' = ?", "1", machine)
            if latest is not None:
                return self.get(latest)
        commit = resolve_commit(text, cwd)
        candidates = [commit] if commit else []
        if not commit and len(text) >= 4 and all(c in "0123456789abcdef" for c in text.lower()):
            candidates = [r[0] for r in self.db.execute(
                "SELECT DISTINCT git_commit FROM records WHERE git_commit LIKE ?",
                (text.lower() + "%",))]
            if len(candidates) > 1:
                raise HistoryError(f"history reference {ref!r} is ambiguous: "
                                   + ", ".join(c[:12] for c in candidates[:5]))
        for found in candidates:
            by_commit = self._latest("git_commit = ?", found, machine)
            if by_commit is not None:
                return self.get(by_commit)
        if commit:
            raise HistoryError(f"history {self.where}: no record for {ref} (commit "
                               f"{commit[:10]}); record one with --history at that commit")
        raise HistoryError(f"history {self.where}: {ref!r} is neither a saved name, a record "
                           "id (#N) nor a git reference with a record")

    def _latest(self, condition: str, value: str, machine: str | None) -> int | None:
        if machine:
            rows = self.db.execute(f"SELECT MAX(id) FROM records WHERE {condition} AND "
                                   "machine = ?", (value, machine))
            if rows and rows[0][0] is not None:
                return int(rows[0][0])
        rows = self.db.execute(f"SELECT MAX(id) FROM records WHERE {condition}", (value,))
        return int(rows[0][0]) if rows and rows[0][0] is not None else None

    def labels(self) -> list[str]:
        return [r[0] for r in self.db.execute(
            "SELECT DISTINCT label FROM measurements ORDER BY label")]

    def machines(self) -> list[str]:
        return [r[0] for r in self.db.execute(
            "SELECT DISTINCT machine FROM records ORDER BY machine")]

    def series(self, label: str, machine: str | None = None,
               branch: str | None = None) -> list[Point]:
        """Every recorded point of one benchmark, oldest first (by record order)."""
        sql = ("SELECT r.id, r.created, r.git_commit, r.git_branch, r.git_dirty, r.name, "
               "r.machine, m.label, m.unit, m.value, m.ci_low, m.ci_high, m.level, "
               "m.executions, m.identity, m.cpu_pressure FROM measurements m JOIN records r "
               "ON r.id = m.record_id WHERE m.label = ?")
        params: list[Any] = [label]
        if machine:
            sql += " AND r.machine = ?"
            params.append(machine)
        if branch:
            sql += " AND r.git_branch = ?"
            params.append(branch)
        sql += " ORDER BY r.id"
        points = []
        for row in self.db.execute(sql, params):
            if row[9] is None:
                continue
            try:
                execs = tuple(float(v) for v in json.loads(row[13] or "[]"))
            except (TypeError, ValueError):
                execs = ()
            points.append(Point(int(row[0]), row[1], row[2], row[3],
                                None if row[4] is None else bool(row[4]), row[5], row[6],
                                row[7], row[8], float(row[9]), row[10], row[11], row[12],
                                execs or (float(row[9]),), row[14], row[15]))
        return points

    def every_series(self) -> dict[tuple[str, str], list[Point]]:
        """Every benchmark's series on every machine, read in one pass (for the dashboard):
        (label, machine) → points, oldest first (by record order). The points of one record
        share its strings, and the executions are parsed as one JSON document (a project's
        history holds a million points: this is most of what reading it costs)."""
        ids = [int(r[0]) for r in self.db.execute("SELECT id FROM records ORDER BY id")]
        out: dict[tuple[str, str], list[Point]] = {}
        #: the record's columns of the current rows (id, created, commit, branch, dirty, name,
        #: machine)
        record: tuple[int, Any, Any, Any, Any, Any, str] | None = None
        strings: dict[str, str] = {}
        for start in range(0, len(ids), EVERY_SERIES_RECORDS):  # the rows of a few records
            last = ids[min(start + EVERY_SERIES_RECORDS, len(ids)) - 1]  # at a time in memory
            rows = self.db.execute(
                "SELECT r.id, r.created, r.git_commit, r.git_branch, r.git_dirty, r.name, "
                "r.machine, m.label, m.unit, m.value, m.ci_low, m.ci_high, m.level, "
                "m.executions, m.identity, m.cpu_pressure FROM measurements m JOIN records r "
                "ON r.id = m.record_id WHERE m.value IS NOT NULL AND r.id >= ? AND r.id <= ? "
                "ORDER BY r.id",
                (ids[start], last))
            executions = _executions([row[13] for row in rows])
            for row, execs in zip(rows, executions, strict=True):
                if record is None or record[0] != row[0]:
                    record = (int(row[0]), row[1], row[2], row[3],
                              None if row[4] is None else bool(row[4]), row[5], row[6])
                label = strings.setdefault(row[7], row[7])
                rid, created, commit, branch, dirty, name, machine = record
                point = Point(rid, created, commit, branch, dirty, name, machine, label,
                              strings.setdefault(row[8], row[8]),
                              float(row[9]), row[10], row[11],
                              row[12] and strings.setdefault(row[12], row[12]),
                              execs or (float(row[9]),),
                              row[14] and strings.setdefault(row[14], row[14]), row[15])
                out.setdefault((label, record[6]), []).append(point)
        return out

    def catalogue(self) -> dict[str, tuple[str, str, str]]:
        """label → (benchmark, implementation, params): how each label is made (from its
        newest measurement; on SQLite, found through the label index without a scan)."""
        if self.db.dialect == "sqlite":
            sql = ("SELECT label, benchmark, implementation, params FROM measurements WHERE "
                   "rowid IN (SELECT MAX(rowid) FROM measurements GROUP BY label)")
        else:
            sql = "SELECT DISTINCT label, benchmark, implementation, params FROM measurements"
        return {r[0]: (r[1], r[2], r[3]) for r in self.db.execute(sql)}


def _executions(raw: list[str | None]) -> list[tuple[float, ...]]:
    """Each measurement's executions from their JSON texts: parsed as one array when every
    text is a well-formed list of numbers, else one by one (a damaged one gives ())."""
    def one(text: str | None) -> tuple[float, ...]:
        try:
            return tuple(float(v) for v in json.loads(text or "[]"))
        except (TypeError, ValueError):
            return ()

    texts = [(t or "[]").strip() for t in raw]
    if not all(t.startswith("[") and t.endswith("]") for t in texts):
        return [one(t) for t in texts]
    try:  # one list per text, each of numbers (a nested list fails float()), else one by one
        every = json.loads("[" + ",".join(texts) + "]")
        if len(every) == len(texts) and all(type(e) is list for e in every):
            return [tuple(map(float, e)) for e in every]
    except (TypeError, ValueError):
        pass
    return [one(t) for t in texts]
