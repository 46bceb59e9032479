"""Result tables that fit the terminal, in three styles: ``table``, ``plain`` and ``markdown``.

Every command that prints a results table builds a :class:`TableSpec` (columns and rows of
plain text) and renders it here, so all of them obey the same rules:

* the first column holds the names; it is never narrower than :data:`MIN_NAME_WIDTH` (or the
  longest word of a name, up to :data:`MAX_WORD_WIDTH`), and names wrap at spaces, so
  "build string concat [n=1000]" becomes two readable lines, never "nsmalle / st";
* the other columns keep their full width (numbers are never wrapped or cut);
* when the table still does not fit, the optional columns are left out, least important first,
  and a note under the table names them (they remain in the JSON/CSV files); no column is ever
  shrunk to nothing.

``plain`` is whitespace-aligned text without borders (for ``grep``/``awk``), ``markdown`` a
GitHub table; neither is folded, since scripts and documents have no terminal width.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: styles of ``--style``
STYLES = ("table", "plain", "markdown")
#: the name column is at least this wide in the ``table`` style
MIN_NAME_WIDTH = 20
#: a single word of a name longer than this is folded
MAX_WORD_WIDTH = 32


@dataclass(frozen=True)
class Column:
    """One column: its header, alignment, and how soon it is left out when space is short
    (``drop`` 0: never; higher numbers go first)."""

    header: str
    justify: str = "right"
    drop: int = 0
    #: the column may wrap (the status column: error messages); otherwise never wrapped
    wrap: bool = False


@dataclass
class TableSpec:
    """A table as text: columns, rows (one string per column; rich markup allowed in the
    ``table`` style only for cells listed in ``markup``), and an optional title."""

    columns: list[Column]
    rows: list[list[str]] = field(default_factory=list)
    title: str | None = None

    def add_row(self, *cells: str) -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"{len(cells)} cells for {len(self.columns)} columns")
        self.rows.append([str(c) for c in cells])


def _plain_cell(cell: str) -> str:
    """A cell without rich markup (for the plain and Markdown styles)."""
    from rich.text import Text

    return Text.from_markup(cell).plain


def _cell_width(cell: str) -> int:
    from rich.text import Text

    return max((Text.from_markup(line).cell_len for line in cell.splitlines() or [""]),
               default=0)


def _words(cells: list[str]) -> int:
    return max((len(w) for c in cells for w in _plain_cell(c).split()), default=1)


def column_widths(spec: TableSpec, width: int) -> dict[int, int]:
    """The columns kept so the ``table`` style fits ``width`` cells, with the width of each.

    A rich table with heavy borders takes 3 cells per column plus 1. Each column needs: the
    name column its minimum (:data:`MIN_NAME_WIDTH`, or less when every name is shorter, or
    its longest word up to :data:`MAX_WORD_WIDTH`), a wrapping column its longest word (at
    least 6), the others their widest cell or header. Optional columns are left out, highest
    ``drop`` first, until the needs fit; the space left then goes to the wrapping columns, then
    to the name column, up to their natural widths. When even the columns that are never left
    out do not fit (a very narrow terminal), the name column gives up space down to 8 cells
    and the figures may wrap (:func:`_render_rich`), but nothing is cut.
    """
    cells = [[col.header] + [row[i] for row in spec.rows] for i, col in enumerate(spec.columns)]
    natural = [max(_cell_width(c) for c in column) for column in cells]

    def need(i: int) -> int:
        if i == 0:
            return min(natural[0], max(MIN_NAME_WIDTH, min(_words(cells[0]), MAX_WORD_WIDTH)))
        if spec.columns[i].wrap:
            return min(natural[i], max(6, min(_words(cells[i]), 16)))
        return natural[i]

    kept = list(range(len(spec.columns)))
    while True:
        total = sum(need(i) + 3 for i in kept) + 1
        droppable = [i for i in kept if spec.columns[i].drop > 0]
        if total <= width or not droppable:
            break
        kept.remove(max(droppable, key=lambda i: (spec.columns[i].drop, i)))
    widths = {i: need(i) for i in kept}
    over = sum(widths.values()) + 3 * len(kept) + 1 - width
    if over > 0 and 0 in widths:
        widths[0] = max(8, widths[0] - over)
    spare = width - (sum(widths.values()) + 3 * len(kept) + 1)
    for i in [i for i in kept if spec.columns[i].wrap] + [0]:
        if i in widths and spare > 0:
            extra = min(spare, natural[i] - widths[i])
            widths[i] += extra
            spare -= extra
    return widths


def fitted_columns(spec: TableSpec, width: int) -> list[int]:
    """Indices of the columns :func:`column_widths` keeps."""
    return sorted(column_widths(spec, width))


def render(spec: TableSpec, console, style: str = "table") -> None:  # noqa: ANN001 - rich Console
    """Print ``spec`` on ``console`` in ``style``."""
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r}; known: {', '.join(STYLES)}")
    if style == "table":
        _render_rich(spec, console)
        return
    text = to_markdown(spec) if style == "markdown" else to_plain(spec)
    console.print(text, markup=False, highlight=False, soft_wrap=True, end="")


def _render_rich(spec: TableSpec, console) -> None:  # noqa: ANN001
    from rich.table import Table

    widths = column_widths(spec, console.width)
    kept = sorted(widths)
    fits = sum(widths.values()) + 3 * len(kept) + 1 <= console.width
    table = Table(title=spec.title, header_style="bold", title_justify="left")
    for i in kept:
        col = spec.columns[i]
        fold = i == 0 or col.wrap or not fits
        table.add_column(col.header, justify="left" if i == 0 else col.justify,  # type: ignore[arg-type]
                         overflow="fold", no_wrap=not fold,
                         width=widths[i] if fits else None)
    for row in spec.rows:
        table.add_row(*(row[i] for i in kept))
    console.print(table)
    left_out = [spec.columns[i].header for i in range(len(spec.columns)) if i not in kept]
    if left_out:
        console.print(f"[dim](left out at {console.width} columns: {', '.join(left_out)}; "
                      "--style plain shows all)[/dim]")


#: a unit that :func:`plain_field` attaches to the number before it (a word after a number,
#: "from 40 earlier runs", keeps its space)
_UNIT = r"(?:[nµu]s|ms|s|min|h|%|[KMGTP]i?B|[kMGT]?B|[kMGT])(?![A-Za-z])"


def plain_field(cell: str) -> str:
    """A cell as one whitespace-free field (``--style plain``): a unit is attached to its
    number (``511ns``, ``±2.22%``, ``1.5GiB/s``), every other space becomes ``_``, so that
    ``awk '{print $3}'`` and ``str.split()`` find the columns."""
    import re

    text = " ".join(_plain_cell(cell).split())
    text = re.sub(r"(?<=[\d.])\s+(?=" + _UNIT + r")", "", text)  # 511 ns, 2.5 GiB/s, 3 M items
    text = text.replace("± ", "±")
    return text.replace(" ", "_") or "—"


def fit_plain(spec: TableSpec, width: int) -> TableSpec:
    """``spec`` without the optional columns (highest ``drop`` first) that would make its
    :func:`to_plain` lines longer than ``width``."""
    keep = list(range(len(spec.columns)))
    fields = [[spec.columns[i].header] + [plain_field(row[i]) for row in spec.rows]
              for i in range(len(spec.columns))]

    def length() -> int:  # to_plain pads every column to its widest field, 2 spaces apart
        return sum(max(map(len, fields[i])) for i in keep) + 2 * (len(keep) - 1)

    while length() > width:
        droppable = [i for i in keep if spec.columns[i].drop > 0]
        if not droppable:
            break
        keep.remove(max(droppable, key=lambda i: (spec.columns[i].drop, i)))
    fitted = TableSpec([spec.columns[i] for i in keep], title=spec.title)
    for row in spec.rows:
        fitted.add_row(*(row[i] for i in keep))
    return fitted


def to_plain(spec: TableSpec) -> str:
    """Whitespace-aligned columns, one line per row, no borders (for scripts): every field is
    free of whitespace (:func:`plain_field`)."""
    headers = [c.header.replace(" ", "_") for c in spec.columns]
    rows = [[plain_field(c) for c in row] for row in spec.rows]
    widths = [max(len(x) for x in [h, *(r[i] for r in rows)]) for i, h in enumerate(headers)]
    lines = []
    for cells in [headers, *rows]:
        out = []
        for i, (cell, w) in enumerate(zip(cells, widths, strict=True)):
            last = i == len(cells) - 1
            if spec.columns[i].justify == "right" and not last:
                out.append(cell.rjust(w))
            else:
                out.append(cell if last else cell.ljust(w))
        lines.append("  ".join(out).rstrip())
    title = [spec.title] if spec.title else []
    return "\n".join(title + lines) + "\n"


def to_markdown(spec: TableSpec) -> str:
    """A GitHub Markdown table (cells escaped)."""
    from .format import markdown_text
    from .markdown import markdown_table

    table = markdown_table(
        [markdown_text(c.header) for c in spec.columns],
        ([markdown_text(_plain_cell(c).replace("\n", " ")) for c in row] for row in spec.rows),
        ["right" if c.justify == "right" else "" for c in spec.columns])
    title = f"**{markdown_text(spec.title)}**\n\n" if spec.title else ""
    return title + table


def style_option(fn):  # noqa: ANN001, ANN201 - a click decorator
    """``--style table|plain|markdown`` for commands that print a results table."""
    import click

    return click.option("--style", type=click.Choice(STYLES), default="table",
                        show_default=True,
                        help="How the results table is printed: a boxed table that fits the "
                             "terminal, plain (one record per line, fields without spaces: "
                             "511ns, ±2.22%, names with _), or Markdown.")(fn)

