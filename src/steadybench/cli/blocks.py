"""``steadybench blocks COUNTS.csv``: per-block times from execution counts (``002`` §5.1).

The CSV has a header row naming the blocks and one column of measured totals (``total`` by
default, see ``--total-column``); each further row is one round: how often each block executed
and how long the whole round took. Lines starting with ``#`` are ignored.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..errors import ConfigurationError
from ..fileio import atomic_write_text, content_lines, read_user_text
from .options import confidence_option

if TYPE_CHECKING:
    from rich.console import Console

    from ..methods.blocks import BlockSolution


def read_counts(path: Path, total_column: str = "total") -> tuple[list[str], list[list[float]],
                                                                   list[float]]:
    """Block names, count rows and totals from a counts CSV; errors name the file and line."""
    lines = content_lines(read_user_text(path, ConfigurationError))
    if not lines:
        raise ConfigurationError(f"{path}: empty file")
    try:
        rows = list(csv.reader(line for _, line in lines))
    except csv.Error as exc:  # e.g. a field longer than the csv module's limit
        raise ConfigurationError(f"{path}: not a counts CSV ({exc})") from None
    header = [h.strip() for h in rows[0]]
    if total_column not in header:
        raise ConfigurationError(
            f"{path}: no column {total_column!r} (columns: {', '.join(header)}); name the totals "
            "column with --total-column")
    t_index = header.index(total_column)
    names = [h for j, h in enumerate(header) if j != t_index]
    if not names:
        raise ConfigurationError(f"{path}: no block columns besides {total_column!r}")
    repeated = sorted({h for h in header if header.count(h) > 1})
    if repeated:
        raise ConfigurationError(f"{path}: column(s) {', '.join(map(repr, repeated))} appear "
                                 "more than once in the header")
    if len(rows) < 2:
        raise ConfigurationError(f"{path}: no rounds (only the header)")
    counts: list[list[float]] = []
    totals: list[float] = []
    for (lineno, _), row in zip(lines[1:], rows[1:]):
        if len(row) != len(header):
            raise ConfigurationError(
                f"{path}:{lineno}: {len(row)} fields, the header has {len(header)}")
        try:
            values = [float(v) for v in row]
        except ValueError:
            raise ConfigurationError(f"{path}:{lineno}: every field must be a number") from None
        if not all(math.isfinite(v) for v in values):
            raise ConfigurationError(f"{path}:{lineno}: every field must be a finite number")
        totals.append(values[t_index])
        counts.append([v for j, v in enumerate(values) if j != t_index])
    return names, counts, totals


def render(solution: BlockSolution, unit: str, console: Console) -> None:
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=f"block times ({solution.rounds} rounds, "
                        f"{solution.confidence:.0%} confidence)")
    for col in ("block(s)", f"time ({unit})", "CI low", "CI high", "± se"):
        table.add_column(col, justify="left" if col == "block(s)" else "right")
    for g in solution.groups:
        label = escape(g.name if len(g.blocks) == 1 else f"{g.name} (always together: sum)")
        table.add_row(label, f"{g.value:.6g}", f"{g.ci_low:.6g}", f"{g.ci_high:.6g}",
                      f"{g.se:.3g}")
    console.print(table)
    if solution.never_ran:
        console.print(f"never executed (no time): {escape(', '.join(solution.never_ran))}")
    console.print(f"residual std {solution.residual_std:.4g} {unit}, {solution.dof} degrees of "
                  "freedom")


#: longest --unit accepted (a unit is a word: ns, cycles, instructions)
MAX_UNIT = 32


@click.command("blocks")
@click.argument("counts_csv", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--total-column", default="total", show_default=True,
              help="Name of the column holding each round's measured total time.")
@click.option("--unit", default="ns", show_default=True,
              help="Unit of the totals (used for display; results are in the same unit).")
@confidence_option(of="the intervals")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the solution as JSON to this file ('-': standard output, "
                   "instead of the table).")
def blocks_cmd(counts_csv: Path, total_column: str, unit: str, confidence: float,
               json_path: Path | None) -> None:
    """Solve per-block execution times from per-round block counts and measured totals.

    Least squares over the rounds (Moreno & Fischmeister §5.1); blocks whose counts are equal in
    every round are merged and reported as one group; a singular system names the blocks that
    cannot be separated.
    """
    from rich.console import Console

    from ..methods.blocks import solve_blocks
    from ..stats.overflow import overflow_checked

    if len(unit) > MAX_UNIT or not unit.isprintable():
        # a 100,000-character unit kept the table renderer busy for minutes (issue 27 item 13)
        raise ConfigurationError(f"--unit must be at most {MAX_UNIT} printable characters "
                                 f"(got {len(unit)})")
    names, counts, totals = read_counts(counts_csv, total_column)
    solution = overflow_checked(lambda: solve_blocks(counts, totals, names=names,
                                                     confidence=confidence),
                                f"{counts_csv}: the counts and totals")
    figures = [solution.residual_std] + [v for g in solution.groups
                                         for v in (g.value, g.ci_low, g.ci_high, g.se)]
    if not all(math.isfinite(v) for v in figures):
        raise ConfigurationError(f"{counts_csv}: the counts and totals are too large or too "
                                 "small for floating point (the solution is not finite): "
                                 "rescale them")
    to_stdout = json_path is not None and str(json_path) == "-"
    if not to_stdout:
        render(solution, unit, Console())
    if json_path is not None:
        data = {"unit": unit, "source": str(counts_csv), **solution.to_dict()}
        text = json.dumps(data, indent=2) + "\n"
        if to_stdout:
            click.echo(text, nl=False)
        else:
            atomic_write_text(json_path, text)


commands = [blocks_cmd]
