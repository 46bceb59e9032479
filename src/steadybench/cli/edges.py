"""``steadybench edges CAPTURE``: execution times from a digitised pin signal (``002`` §6).

The code under test toggles a pin before and after the measured code; the signal, digitised by
a sound card (WAV) or exported by an oscilloscope or logic analyser (CSV of time,value rows),
is read, every edge is located at its inflection point with sub-sample resolution, and the time
from each ``--from`` edge to the next edge of the other kind becomes one sample. ``--method``
``linefit`` (the capture holds the 1..M pattern of §4) or ``differential`` (pairs of 1× and 2×,
§3.1) remove the systematic error of the toggling; ``direct`` keeps it. The estimate, interval,
JSON, CSV, XML, Markdown and HTML report are those of every steadybench result.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .common import output_options, write_outputs
from .options import confidence_option, quiet_option
from .validate import FiniteFloat, count

if TYPE_CHECKING:
    from rich.console import Console

    from ..edges.capture import Capture
    from ..edges.detect import Edges
    from ..edges.timing import Pulses
    from ..model.results import CaseResult

#: --hysteresis and --threshold: shares of the amplitude, strictly between 0 and 1
SHARE = FiniteFloat(min=0.0, max=1.0, min_open=True, max_open=True)


def _print(console: Console, capture: Capture, edges: Edges, pulses: Pulses,
           case: CaseResult) -> None:
    from ..output.console import console_text
    from ..output.format import (
        case_estimate,
        confidence_text,
        estimate_ci_text,
        estimate_value_text,
        format_seconds,
    )

    console.print(f"{console_text(capture.source)}: {console_text(capture.description)}, "
                  f"{capture.values.size} samples, {format_seconds(capture.duration)}")
    rise = edges.to_dict()["rise_samples_median"]
    rise_text = f", 10–90 % rise {rise:.2f} samples" if rise else ""
    console.print(f"edges: {int(edges.rising.sum())} rising, {int((~edges.rising).sum())} "
                  f"falling (levels {edges.levels[0]:.4g} and {edges.levels[1]:.4g}, "
                  f"noise σ {edges.noise:.2g}{rise_text})")
    w = pulses.widths
    other = "falling" if pulses.start_kind == "rising" else "rising"
    console.print(f"{pulses.start_kind} → {other}: {w.size} times, min "
                  f"{format_seconds(float(w.min()))}, median "
                  f"{format_seconds(float(sorted(w)[w.size // 2]))}, max "
                  f"{format_seconds(float(w.max()))}"
                  + (f" ({pulses.unpaired} edge(s) at the ends unpaired)"
                     if pulses.unpaired else ""))
    est = case_estimate(case)
    if est is not None and est.ok:
        ci = estimate_ci_text(est)
        console.print(f"[bold]{case.method}[/bold]: {estimate_value_text(est)} per execution "
                      f"{ci} ({confidence_text(est)} CI, {console_text(est.statistic)}; within "
                      "this capture)")
        overhead = est.figure("overhead")
        if overhead is not None:
            console.print(f"  systematic error ε (intercept): {format_seconds(overhead)}")
    for text in case.warnings:
        console.print(f"[yellow]warning[/yellow] {console_text(text)}")
    for text in case.errors:
        console.print(f"[red]error[/red] {console_text(text)}")


@click.command("edges")
@click.argument("capture", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["wav", "csv"]),
              help="Format of CAPTURE (default: from the extension; .wav is WAV, else CSV).")
@click.option("--channel", type=count(min=1), default=1, show_default=True,
              help="WAV channel to read (1 = first).")
@click.option("--time-column", default="1", show_default=True,
              help="CSV column of the times: number (1 = first) or header name; 'none' for "
                   "values only (then give --rate).")
@click.option("--value-column", default="2", show_default=True,
              help="CSV column of the signal: number (1 = first) or header name.")
@click.option("--time-unit", type=click.Choice(["s", "ms", "us", "ns"]), default="s",
              show_default=True, help="Unit of the CSV time column.")
@click.option("--rate", type=FiniteFloat(min=0.0, min_open=True),
              help="Sample rate in Hz of a CSV without a time column.")
@click.option("--from", "start", type=click.Choice(["rising", "falling"]), default="rising",
              show_default=True,
              help="The edge each measured time starts at (A → ¬A); it ends at the next edge "
                   "of the other kind.")
@click.option("--threshold", "centre", type=SHARE, default=0.5, show_default=True,
              help="Centre of the hysteresis band, as a share of the way from the low to the "
                   "high level.")
@click.option("--hysteresis", "band", type=SHARE, default=0.4, show_default=True,
              help="Width of the hysteresis band, as a share of the amplitude (noise inside "
                   "it never makes an edge).")
@click.option("--method", type=click.Choice(["direct", "linefit", "differential"]),
              default="direct", show_default=True,
              help="direct: each time is one sample; linefit: times follow the 1..M pattern "
                   "(§4); differential: pairs of 1× and 2× (§3.1).")
@click.option("--points", type=count(min=3, max=10_000), default=20, show_default=True,
              help="linefit: M, the length of the 1..M pattern.")
@click.option("--first", type=count(min=1), default=1, show_default=True,
              help="linefit: the k of the first time in the 1..M pattern.")
@click.option("--base-batch", type=count(min=1), default=1, show_default=True,
              help="Executions per step: each time holds k·b (linefit), b or 2b "
                   "(differential), b (direct) executions.")
@click.option("--skip", type=count(min=0), default=0, show_default=True,
              help="Times at the start to leave out (a preamble).")
@click.option("--trim", type=FiniteFloat(min=0.0, max=0.49), default=0.1, show_default=True,
              help="differential: share cut from each end for the trimmed mean.")
@confidence_option(of="the interval")
@click.option("--name", help="Name of the result (default: the capture's file name).")
@quiet_option()
@output_options
def edges_cmd(capture: Path, fmt: str | None, channel: int, time_column: str,
              value_column: str, time_unit: str, rate: float | None, start: str, centre: float,
              band: float, method: str, points: int, first: int, base_batch: int, skip: int,
              trim: float, confidence: float, name: str | None, quiet: bool,
              **opts: Any) -> None:
    """Execution times from a digitised pin signal: steadybench edges CAPTURE.

    CAPTURE is a WAV file (PCM 8/16/24/32-bit or float) or a CSV of time,value samples (an
    oscilloscope's or logic analyser's export; header lines are skipped). Each edge is found
    at the inflection point of its transition, with sub-sample interpolation (Moreno &
    Fischmeister §6); the time from each --from edge to the next edge of the other kind is one
    sample, estimated with --method.
    """
    from ..edges.capture import read_capture
    from ..edges.detect import EdgeOptions, find_edges
    from ..edges.timing import edge_case, pulse_widths
    from ..environment import capture_environment
    from ..model.results import Results

    options = EdgeOptions(centre=centre, band=band)
    cap = read_capture(capture, channel=channel, time_column=time_column,
                       value_column=value_column, rate=rate, time_unit=time_unit, fmt=fmt)
    found = find_edges(cap, options)
    pulses = pulse_widths(found, start)
    case = edge_case(cap, found, pulses, method, points=points, base_batch=base_batch,
                     first=first, skip=skip, trim=trim, confidence=confidence, name=name)
    results = Results(suite="edges", cases=[case], environment=capture_environment())
    results.context.update(
        command="edges", capture=cap.to_dict(),
        edges={"from": start, "threshold": centre, "hysteresis": band, "method": method,
               "isolation": "one capture: the interval is within it"})
    write_outputs(results, opts)
    if not quiet:
        from ..output.console import make_console

        _print(make_console(), cap, found, pulses, case)
    if case.errors:
        from ..errors import BenchmarkFailed

        raise BenchmarkFailed(case.errors[0])


commands = [edges_cmd]
