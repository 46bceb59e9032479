"""The rows of a large comparison kept packed, read back one at a time (issue 27 item 13).

A comparison of 10^6 benchmarks held each row as nested dicts (the row, both sides, both
protocols, their assumptions, the warnings) plus the typed
:class:`~steadybench.compare.result.BenchmarkComparison` over them: about 4 KB a row, 6 GB in
all. :class:`PackedRows` keeps the rows as pickled chunks of :data:`CHUNK` rows instead. Within
a chunk, pickle writes each repeated object once (the keys, a reason shared by both protocols
and the warnings), so a row takes a few hundred bytes; a row is unpacked again, and its
``BenchmarkComparison`` made, only when it is read. The chunks are made and read in this
process only, never written anywhere.

What every pass over the rows needs (each row's verdict, test unit, interval method and
between-run noise) is kept beside them as columns (:meth:`PackedRows.column`), so the terminal
table's summary, the legend and the CI gate do not unpack 10^6 rows several times.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar, overload

#: the typed row made of each row's dict when it is read
Row = TypeVar("Row")

#: rows per pickled chunk: large enough that the keys are written once for many rows, small
#: enough that reading one row unpacks little
CHUNK = 64

#: the columns kept beside the packed rows, each read from a row the way
#: :class:`~steadybench.compare.result.BenchmarkComparison` reads it
COLUMNS = ("verdict", "test_unit", "interval_method", "noise_text")


def row_columns(row: dict[str, Any]) -> tuple[Any, ...]:
    """The :data:`COLUMNS` of one comparison row (a dict of the comparison document):
    ``verdict`` and ``test_unit`` as the typed row has them, the interval's method (None
    without an interval) and the between-run noise's text (None without it)."""
    ci = row.get("speedup_ci")
    method = (str(ci.get("method") or "") if ci and ci.get("low") is not None
              and ci.get("high") is not None else None)
    noise = row.get("run_noise")
    return (str(row.get("verdict", "")), str(row.get("test_unit") or ""), method,
            str(noise["text"]) if noise else None)


class PackedRows(Sequence[Row], Generic[Row]):
    """Comparison rows (dicts of the comparison document) packed by :data:`CHUNK`; as a
    sequence, ``typed(row)`` of each (the comparison's: its
    :class:`~steadybench.compare.result.BenchmarkComparison`, given the row to own)."""

    def __init__(self, typed: Callable[[dict[str, Any]], Row]) -> None:
        self._typed = typed
        self._chunks: list[bytes] = []
        self._pending: list[dict[str, Any]] = []
        self._count = 0
        self._columns: dict[str, list[Any]] | None = None
        # the last chunk unpacked (reading the rows in order unpacks each chunk once)
        self._cache: tuple[int, list[dict[str, Any]]] | None = None
        self._strings: dict[str, str] = {}

    # ------------------------------------------------------------------ building
    def append(self, row: dict[str, Any]) -> None:
        """Add a row; it belongs to the store from now on."""
        self._pending.append(row)
        self._count += 1
        if len(self._pending) == CHUNK:
            self._pack()

    def _pack(self) -> None:
        self._chunks.append(pickle.dumps(self._pending, protocol=pickle.HIGHEST_PROTOCOL))
        self._pending = []

    def seal(self) -> None:
        """Pack the last rows and record the :data:`COLUMNS`; no row is added after."""
        if self._pending:
            self._pack()
        self._cache = None
        self._columns = {name: [] for name in COLUMNS}
        for row in self.dicts():
            for name, value in zip(COLUMNS, row_columns(row), strict=True):
                if isinstance(value, str):  # a few distinct texts, kept once each
                    value = self._strings.setdefault(value, value)
                self._columns[name].append(value)

    def rewrite(self, change: Callable[[int, dict[str, Any]], None]) -> None:
        """Call ``change(index, row)`` on every row in order, keeping what it changes in place
        (e.g. the verdicts settled after the multiple-testing correction), then
        :meth:`seal`."""
        if self._pending:
            self._pack()
        index = 0
        for c, blob in enumerate(self._chunks):
            rows = pickle.loads(blob)
            for row in rows:
                change(index, row)
                index += 1
            self._chunks[c] = pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL)
        self.seal()

    # ------------------------------------------------------------------ reading
    def _chunk(self, c: int) -> list[dict[str, Any]]:
        if self._cache is None or self._cache[0] != c:
            self._cache = (c, pickle.loads(self._chunks[c]))
        return self._cache[1]

    def dicts(self) -> Iterator[dict[str, Any]]:
        """Each row's dict, in order, a fresh copy (changing it changes nothing here)."""
        for blob in self._chunks:
            yield from pickle.loads(blob)
        yield from (pickle.loads(pickle.dumps(r)) for r in self._pending)

    def column(self, name: str) -> list[Any]:
        """One of the :data:`COLUMNS`, a value per row."""
        if self._columns is None:
            raise RuntimeError("the packed rows are read after seal()")
        return self._columns[name]

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> Row: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Row]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(self._count)))
        if index < 0:
            index += self._count
        if self._columns is None:
            raise RuntimeError("the packed rows are read after seal()")
        if not 0 <= index < self._count:
            raise IndexError("comparison row out of range")
        row = self._chunk(index // CHUNK)[index % CHUNK]
        # a copy of the cached row: the typed row owns it
        return self._typed(pickle.loads(pickle.dumps(row)))

    def __iter__(self) -> Iterator[Row]:
        for row in self.dicts():
            yield self._typed(row)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PackedRows | tuple | list):
            # as two tuples of typed rows compare
            return len(self) == len(other) and all(
                a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]
