"""The one GitHub-flavoured Markdown table writer.

``run --markdown``, ``exec --export-markdown`` (hyperfine's table), ``compare --markdown``,
``--style markdown`` and the pytest plugin's comparison all write their tables here. Cells
arrive as text the caller has made safe for a table (:func:`steadybench.output.format.
markdown_text`, or hyperfine's code spans); this module only lays them out: a header row, the
alignment rule (``---`` default, ``---:`` right, ``:---`` left) and one row per record.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

#: the alignment rule of a column: "" (the renderer's default), "left", "right"
_RULES = {"": "---", "left": ":---", "right": "---:"}


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[object]],
                   align: Sequence[str] | None = None) -> str:
    """``header`` and ``rows`` as a Markdown table, each line ending in a newline.

    ``align`` gives each column's alignment ("", "left" or "right"; default: all ""). A row
    with fewer cells than the header is an error of the caller, not padded silently.
    """
    align = list(align) if align is not None else [""] * len(header)
    if len(align) != len(header):
        raise ValueError(f"{len(header)} columns but {len(align)} alignments")
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join(_RULES[a] for a in align) + "|"]
    for row in rows:
        cells = [str(c) for c in row]
        if len(cells) != len(header):
            raise ValueError(f"a row of {len(cells)} cells in a table of {len(header)} columns")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
