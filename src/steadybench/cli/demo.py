"""``steadybench demo``: run the built-in suite and write every output format."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..errors import SteadybenchError
from .common import positive
from .run import run_definitions


@click.command("demo")
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    default="steadybench-demo",
    show_default=True,
    help="Folder for the result files.",
)
@click.option(
    "--max-time", type=float, default=0.1, show_default=True, callback=positive,
    help="Seconds of sampling per execution at most."
)
@click.option(
    "-p", "--processes", type=click.IntRange(min=1), default=4, show_default=True,
    help="Independent executions (worker processes) per benchmark.",
)
def demo_cmd(out: str, max_time: float, processes: int) -> None:
    """Run a built-in suite of Python workloads and write results.json/.xml/.csv/.md."""
    from .. import demo_suite

    folder = Path(out)
    try:  # before a minute of measuring, not after
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SteadybenchError(f"--out {out}: cannot create the folder "
                               f"({exc.strerror or exc})") from None
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
    click.echo("wrote " + ", ".join(str(p) for p in written), err=True)


commands = [demo_cmd]
