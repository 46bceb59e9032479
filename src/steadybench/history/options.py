"""The options every command shares to record its results in the history, and the recording.

``--history`` records the command's results in the project's history
(``.steadybench/history.sqlite`` at the top of the git repository); ``--history-url URL`` (or
``STEADYBENCH_HISTORY_URL``) names another store, a file or ``postgresql://…``; ``--history-name
NAME`` saves the record under a name (``compare --baseline NAME`` finds it). Recording happens
after the command's own outputs are written, so a history that cannot be used (locked, corrupt,
newer, unreachable) costs one ``error:`` line and the exit status, never the outputs.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from ..model.results import Results
    from .record import Record

#: environment variable naming the history store
URL_VARIABLE = "STEADYBENCH_HISTORY_URL"


def history_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--history``, ``--history-url``, ``--history-name`` (added to every command that writes
    results)."""
    fn = click.option("--history-name", "history_name", metavar="NAME", default=None,
                      help="Save the history record under NAME (implies --history); "
                           "compare --baseline NAME finds it.")(fn)
    fn = click.option("--history-url", "history_url", metavar="URL", default=None,
                      envvar=URL_VARIABLE, show_envvar=True,
                      help="History store: a SQLite file or postgresql://… (implies "
                           "--history when given on the command line).")(fn)
    fn = click.option("--history", "history", is_flag=True, default=False,
                      help="Record the results in the project's history "
                           "(.steadybench/history.sqlite; docs/history.md).")(fn)
    return fn


def wants_history(opts: dict[str, Any]) -> bool:
    """Recording was asked for: --history, --history-name, or --history-url on the command
    line (the environment variable alone only chooses the store)."""
    if opts.get("history") or opts.get("history_name"):
        return True
    if opts.get("history_url"):
        ctx = click.get_current_context(silent=True)
        if ctx is not None:
            source = ctx.get_parameter_source("history_url")
            return source is not None and source.name == "COMMANDLINE"
    return False


def record(results: Results | dict[str, Any], url: str | None = None, name: str | None = None,
           command: str | None = None, source: str = "steadybench",
           cwd: str | os.PathLike[str] | None = None) -> Record:
    """Add ``results`` to the history ``url`` names; raises
    :class:`~steadybench.history.backends.HistoryError` when the store cannot be used."""
    import json

    from ..output.results_io import results_to_json
    from .store import HistoryStore

    data = results if isinstance(results, dict) else json.loads(results_to_json(results))
    with HistoryStore.open(url, cwd=cwd) as store:
        return store.add(data, name=name, command=command, source=source, cwd=cwd)


def describe(rec: Record, where: str) -> str:
    """One line saying what was recorded where."""
    if rec.git.commit:
        git = f"commit {rec.git.short}" + (" (dirty)" if rec.git.dirty else "") + \
              (f" on {rec.git.branch}" if rec.git.branch else "")
    else:
        git = rec.git.note or "no commit data"
    name = f" as {rec.name!r}" if rec.name else ""
    return f"history: recorded #{rec.id}{name} in {where}: {git}"


def record_from_opts(results: Results, opts: dict[str, Any]) -> Record | None:
    """Record after the outputs, when the options ask for it; interrupted results are not
    recorded (a partial result in a history would read as a change)."""
    if not wants_history(opts):
        return None
    if results.interrupted:
        click.echo("history: not recorded (the run was interrupted)", err=True)
        return None
    from ..redact import redact
    from .backends import default_path

    url = opts.get("history_url") or None
    rec = record(results, url, opts.get("history_name"), opts.get("command_line"))
    where = redact(url) if url else str(default_path())
    if not opts.get("quiet"):
        click.echo(describe(rec, where), err=True)
    elif not rec.git.commit:
        click.echo(f"history: {rec.git.note}", err=True)
    return rec
