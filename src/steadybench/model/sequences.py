"""A read-only sequence whose items are made when they are read.

Files of 10^6 benchmarks cannot hold every sample or every report view at once (issue 27 item
13): :class:`steadybench.compare.columns.SampleColumns` makes each ``Sample`` from its columns
and :class:`steadybench.output.reportviews.LazyViews` each case's view from its case, on
reading. Both are :class:`MadeOnRead`: a subclass says how many items there are and how to
make the ``i``-th; indexing (negative indices and slices too) and iteration come from here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar, overload

T = TypeVar("T")


class MadeOnRead(Sequence[T]):
    """A sequence of ``len(self)`` items, the ``i``-th made by :meth:`_at` when read."""

    def __len__(self) -> int:
        raise NotImplementedError

    def _at(self, i: int) -> T:
        """The ``i``-th item (0 ≤ i < len), made now."""
        raise NotImplementedError

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> list[T]: ...

    def __getitem__(self, i: int | slice) -> T | list[T]:
        if isinstance(i, slice):
            return [self._at(j) for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self._at(i)

    def __iter__(self) -> Iterator[T]:
        for i in range(len(self)):
            yield self._at(i)
