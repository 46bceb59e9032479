"""``steadybench demo``: run the built-in suite and write every output format."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import click

from .run import MAX_PROCESSES, run_definitions
from .validate import POSITIVE_SECONDS, count, writable_folder


@click.command("demo")
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    default="steadybench-demo",
    show_default=True,
    callback=writable_folder,  # before a minute of measuring, not after
    help="Folder for the result files (made if missing; it must accept new files).",
)
@click.option(
    "--max-time", type=POSITIVE_SECONDS, default=0.1, show_default=True,
    help="Seconds of sampling per execution at most."
)
@click.option(
    "-p", "--processes", type=count(min=1, max=MAX_PROCESSES), default=4, show_default=True,
    help="Independent executions (worker processes) per benchmark.",
)
def demo_cmd(out: str, max_time: float, processes: int) -> None:
    """Run a built-in suite of Python workloads and write results.json/.xml/.csv/.md."""
    from .. import demo_suite

    folder = Path(out)
    opts: dict[str, Any] = {
        "runs": 20,
        "warmup": 1,
        "target_cov": 0.03,
        "window": 20,
        "max_time": max_time,
        "processes": processes,
        "confidence": 0.95,
        "time_limit": 30.0,
        "json_path": folder / "results.json",
        "xml_path": folder / "results.xml",
        "csv_path": folder / "results.csv",
        "markdown_path": folder / "results.md",
        "command_line": f"steadybench demo --out {out}",
    }
    opts["report_path"] = folder / "report.html"
    run_definitions(demo_suite.__file__, opts, title="steadybench demo")
    written = [p for k, p in opts.items() if k.endswith("_path")]
    # one line at 80 columns would not fit: the folder once, then the files
    click.echo(textwrap.fill(f"wrote in {folder}: " + ", ".join(p.name for p in written), 80,
                             subsequent_indent="  "), err=True)


commands = [demo_cmd]
