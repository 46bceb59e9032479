"""``history import`` of a steadybench results file, one benchmark at a time (issue 27 item 13).

A record keeps the results document as :meth:`Results.to_dict` writes it (the file read back
through :class:`~steadybench.model.results.Results`, so an old or hand-made file is stored in
today's form), made finite, as JSON. Building the whole :class:`Results` first held every
benchmark three times (the file's JSON, the case objects, their ``to_dict``), 5 GB for a file of
10^6 benchmarks. :func:`encode_results` makes the same text entry by entry: each entry is read
into its :class:`~steadybench.model.results.CaseResult`, written back, made finite, measured
(:func:`~steadybench.history.record.measurements_of`) and encoded, and the file's entry is
dropped before the next one; the pieces are joined the way :func:`json.dumps` joins a list
(``", "``), so the text is the one ``json.dumps(Results.from_dict(data).to_dict())`` gives.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..errors import ResultsFormatError
from ..gc_pause import gc_paused
from ..model.results import CaseResult, Results
from ..output.results_io import check_results_data, finite_in_place
from ..redact import redact_tree
from .record import MeasurementRow, measurements_of

#: entries encoded before their texts are joined into one
CHUNK = 4096
#: ``json.dumps(obj, allow_nan=False)`` without making an encoder per entry
_encode = json.JSONEncoder(allow_nan=False).encode


@dataclass(frozen=True)
class EncodedResults:
    """A results document ready to record: its top level (without the benchmarks), its JSON
    text and one measurement row per benchmark with a value."""

    top: dict[str, Any]
    text: str
    measurements: list[MeasurementRow]
    created: str


def encode_results(data: Any, source: str) -> EncodedResults:
    """The record of the steadybench results document ``data`` (parsed JSON); its benchmarks
    list is emptied as it is read. :class:`ResultsFormatError` for what
    :func:`~steadybench.output.results_io.results_from_data` rejects."""
    check_results_data(data, source)
    entries: list[Any] = data["benchmarks"]
    try:
        with gc_paused():
            results = Results.from_dict({**data, "benchmarks": []})
            top = results.to_dict()
            del top["benchmarks"]
            top = finite_in_place(top)
            if isinstance(top.get("context"), dict):  # as HistoryStore.add does
                top["context"] = redact_tree(top["context"])
            chunks: list[str] = []  # pieces joined every CHUNK entries: fewer objects held
            pieces: list[str] = []
            measurements: list[MeasurementRow] = []
            for i, entry in enumerate(entries):
                case = finite_in_place(CaseResult.from_dict(entry).to_dict())
                entries[i] = None
                measurements += measurements_of({"benchmarks": [case]})
                pieces.append(_encode(case))
                if len(pieces) == CHUNK:
                    chunks.append(", ".join(pieces))
                    pieces.clear()
            if pieces:
                chunks.append(", ".join(pieces))
            del pieces
    # AttributeError: a field of the wrong kind, e.g. an ``estimate`` that is not an object
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ResultsFormatError(
            f"{source}: malformed results file ({type(exc).__name__}: {exc})") from exc
    head = json.dumps({**top, "benchmarks": []}, allow_nan=False)
    if not head.endswith('"benchmarks": []}'):  # the key json.dumps writes last
        raise AssertionError("the results document does not end with its benchmarks")
    # one join of every piece: joining the chunks first, then that with the head, held the
    # text three times (1.3 GB of 1.8 for 10^6 benchmarks; issue 27 item 13)
    parts = [head[:-3], "["]
    for i, chunk in enumerate(chunks):
        parts += (", ", chunk) if i else (chunk,)
    del chunks
    parts.append("]}")
    text = "".join(parts)
    del parts
    return EncodedResults(top, text, measurements, results.created)
