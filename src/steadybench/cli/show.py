"""``steadybench show FILE``: a results file in the terminal (pyperf's ``stats``, ``hist``,
``dump`` and ``metadata``, as options of one command)."""

from __future__ import annotations

from typing import Any

import click


@click.command("show")
@click.argument("path", metavar="FILE", type=click.Path(dir_okay=False))
@click.option("--stats/--no-stats", default=True, show_default=True,
              help="Each case's estimate and the distribution of its values (pyperf stats).")
@click.option("--hist", is_flag=True, help="A text histogram of each case's values (pyperf "
                                           "hist).")
@click.option("--dump", is_flag=True, help="Every value, execution by execution (pyperf dump).")
@click.option("--metadata", is_flag=True,
              help="The machine, the environment and the command line (pyperf metadata).")
@click.option("--all", "show_all", is_flag=True, help="All of the above.")
@click.option("-b", "--benchmark", "pattern", default=None, metavar="TEXT",
              help="Only the cases whose name contains TEXT.")
def show_cmd(path: str, show_all: bool, **opts: Any) -> int:
    """Show a results file (of run, exec, timeit --json...): statistics, histogram, every
    value, metadata.

    As pyperf's stats/hist/dump/metadata commands, which are options here: steadybench show
    results.json --hist --dump.
    """
    from ..errors import ConfigurationError
    from ..output.results_io import load_results
    from ..output.show import show_lines

    results = load_results(path)
    if show_all:
        opts.update(stats=True, hist=True, dump=True, metadata=True)
    if not results.cases:
        raise ConfigurationError(f"{path}: no benchmark results in the file")
    lines = show_lines(results, **opts)
    if opts["pattern"] and not any(opts["pattern"] in c.label for c in results.cases):
        raise ConfigurationError(f"{path}: no case name contains {opts['pattern']!r}")
    for line in lines:
        click.echo(line)
    return 0


commands = [show_cmd]
