"""The ``steadybench`` command.

Sub-commands live in modules of this package; each module exposes ``commands``, a list of
click commands, and is listed in :data:`COMMAND_MODULES`. A module is imported only when one
of its commands is asked for (or ``--help`` lists them all), and the modules import numpy,
scipy, rich and the like only inside the functions that use them, so ``steadybench --version``
and every ``--help`` start about as fast as Python itself. Errors the user can fix are printed
as one line, ``error: <message>``, with a non-zero exit status; ``--debug`` shows tracebacks.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import sys
import threading
import traceback
from collections.abc import Iterator
from typing import Any

import click

from .. import __version__
from ..errors import Interrupted, SteadybenchError

#: modules of this package that define sub-commands, in the order ``--help`` lists them
COMMAND_MODULES = ("run", "demo", "programs", "blocks", "compare", "ab", "report", "show",
                   "system", "edges", "timeit", "evaluate", "history", "bisect", "worker")

#: what bare ``steadybench`` prints: the commands a new user starts with
SHORT_USAGE = """usage: steadybench COMMAND [OPTIONS] [ARGS]...

  steadybench timeit STMT [--vs STMT]  time Python code (-s SETUP, as timeit)
  steadybench run FILE.py              run the benchmarks a Python file defines
  steadybench exec "CMD" ["CMD"...]    benchmark commands (hyperfine's options)
  steadybench compare BASE NEW         faster, slower or unchanged, and how much
  steadybench ab A B                   live A/B comparison in fresh processes
  steadybench show FILE                a results file: statistics, histogram

'steadybench --help' lists every command, 'steadybench COMMAND --help' its
options; docs/tutorial.md walks through the first hour.
"""

#: exit status after Ctrl-C (128 + SIGINT), SIGTERM (128 + SIGTERM) and SIGHUP (128 + SIGHUP),
#: as shells use
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143
EXIT_HUNG_UP = 129


class LazyGroup(click.Group):
    """A click group whose sub-commands are imported on first use from :data:`COMMAND_MODULES`.

    A command is looked for first in the module of the same name (``run``, ``compare``...),
    then in every module; listing the commands (``--help``) imports every module.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._loaded: set[str] = set()

    def _load(self, module_name: str) -> None:
        if module_name in self._loaded:
            return
        from .validate import harden

        module = importlib.import_module(f"{__name__}.{module_name}")
        for command in module.commands:
            # every numeric option finite and in range, whatever the command declared
            self.add_command(harden(command))
        self._loaded.add(module_name)

    def _load_all(self) -> None:
        for module_name in COMMAND_MODULES:
            self._load(module_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._load_all()
        return super().list_commands(ctx)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            self._load(cmd_name)
        if cmd_name not in self.commands:
            self._load_all()
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        # click turns Ctrl-C into Abort after printing an empty line; carry it past click
        # instead, so main() says "interrupted" once, or not at all when the command has
        # already said that its partial results were written
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as exc:
            raise _Stopped(exc) from None


def _interrupt_in_chain(exc: BaseException) -> bool:
    """Whether a KeyboardInterrupt (a signal turned into one) caused ``exc``."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, KeyboardInterrupt | _Stopped):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


class _Stopped(Exception):  # noqa: N818 - not an error: the KeyboardInterrupt, carried
    """A KeyboardInterrupt (or :class:`Interrupted`) on its way from a command to
    :func:`main`."""

    def __init__(self, original: KeyboardInterrupt) -> None:
        super().__init__("interrupted")
        self.original = original


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100,
                      "show_default": True},
)
@click.version_option(__version__, "--version", prog_name="steadybench")
@click.option("--debug", is_flag=True, help="Show tracebacks of errors.")
@click.option(
    "--root",
    type=click.Path(file_okay=False),
    envvar="STEADYBENCH_ROOT",
    default="/",
    show_default=True,
    help="Filesystem root for reading and tuning the machine (sys/proc); a fake tree "
    "in tests. Also STEADYBENCH_ROOT.",
)
@click.pass_context
def cli(ctx: click.Context, debug: bool, root: str) -> None:
    """steadybench: benchmarks whose numbers can be trusted."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    if not os.path.isdir(root):
        raise SteadybenchError(f"--root {root}: not a directory")
    ctx.obj["root"] = root


def one_line(message: str) -> str:
    """``message`` as one line, credentials removed (:func:`steadybench.redact.redact`): the
    lines of a multi-line message (a user's exception, a program's output) are joined with
    `` | ``, and control characters (terminal escape
    sequences) are shown escaped (``\\x1b``), never sent to the terminal."""
    from ..output.sanitize import terminal_text
    from ..redact import redact

    lines = [line.strip() for line in redact(str(message)).splitlines() if line.strip()]
    return " | ".join(terminal_text(line) for line in lines)


class _Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived: handled like Ctrl-C, so partial results are written and
    every setting the run changed is put back (every ``finally`` runs)."""


#: the signals that end a command like Ctrl-C does, with their exit status (128 + the signal,
#: as shells report a process killed by it)
_TERMINATING = {getattr(signal, name): 128 + getattr(signal, name)
                for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)}


def _late_exit(signum: int, frame: object) -> None:
    """A signal after the command has ended (while it prints its last line, or Python shuts
    down its worker pools): end now with the shell's status for it (130, 143, 129), output
    flushed, instead of being killed by it (-2, -15, -1: issue 27 item 16)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(EXIT_INTERRUPTED if signum == signal.SIGINT else _TERMINATING.get(signum, 1))


@contextlib.contextmanager
def _termination_as_interrupt(late_exit: bool = False) -> Iterator[list[int]]:
    """While the command runs, SIGTERM and SIGHUP raise like Ctrl-C (main thread only). A
    signal already ignored (a command started under ``nohup`` ignores SIGHUP) stays ignored.
    The yielded list collects the signals that arrived. With ``late_exit`` (the process's own
    command line), a signal after the command has ended exits at once with its status
    (:func:`_late_exit`) instead of restoring the default action, which would kill the
    process with it."""
    seen: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield seen
        return

    def handler(signum: int, frame: object) -> None:
        first = not seen
        seen.append(signum)
        if first:
            raise _Terminated()

    previous = {}
    for signum in _TERMINATING:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            previous[signum] = signal.signal(signum, handler)
    try:
        yield seen
    finally:
        for signum, old in previous.items():
            signal.signal(signum, _late_exit if late_exit else old)
        if late_exit and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, _late_exit)


def _not_written() -> str:
    """After an interrupt: the output files asked for that this process did not write (an
    interrupt before the first measurement writes none), or nothing."""
    from ..fileio import REQUESTED, WRITTEN

    missing = list(dict.fromkeys(p for p in REQUESTED if p not in WRITTEN))
    if not missing:
        return ""
    return (" before any result was written: not written: " + ", ".join(missing) +
            " (a file there is from an earlier run)")


def _ending(seen: list[int]) -> tuple[str, int]:
    """The word and exit status after an interruption: SIGTERM wins over SIGHUP, either over
    Ctrl-C."""
    for signum in _TERMINATING:
        if signum in seen:
            word = "terminated" if signum == signal.SIGTERM else "hung up"
            return word, _TERMINATING[signum]
    return "interrupted", EXIT_INTERRUPTED


def main(argv: list[str] | None = None, *, late_exit: bool = False) -> int:
    """Entry point: run the CLI and turn errors into one line and an exit status
    (``late_exit``: this is the process's command line, see :func:`_termination_as_interrupt`;
    it is when ``argv`` is None)."""
    from ..fileio import REQUESTED, WRITTEN

    REQUESTED.clear()  # this command's outputs only (tests call main many times)
    WRITTEN.clear()
    args = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in args
    seen: list[int] = []
    try:
        with _termination_as_interrupt(late_exit or argv is None) as seen:
            result = cli.main(args=args, prog_name="steadybench", standalone_mode=False)
    except (_Stopped, Interrupted, KeyboardInterrupt, click.exceptions.Abort) as exc:
        word, code = _ending(seen)
        # Interrupted: the command wrote its partial results and said so already; one
        # message, not two (issue 28, item 1)
        original = exc.original if isinstance(exc, _Stopped) else exc
        said = isinstance(original, Interrupted) and original.said
        if not said or any(s in _TERMINATING for s in seen):
            print(word + _not_written(), file=sys.stderr)
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    except click.exceptions.NoArgsIsHelpError:  # bare ``steadybench``: short usage, no error
        print(SHORT_USAGE, end="")
        code = 0
    except click.ClickException as exc:
        if debug:
            traceback.print_exc()
        print(f"error: {one_line(exc.format_message())}", file=sys.stderr)
        code = exc.exit_code
    except SteadybenchError as exc:
        if debug:
            traceback.print_exc()
            for text in getattr(exc, "user_tracebacks", ()):  # the user's code, where it failed
                print(text, file=sys.stderr)
        print(f"error: {one_line(str(exc)) or type(exc).__name__}", file=sys.stderr)
        code = exc.exit_code
    except BrokenPipeError:
        code = 1
    except OSError as exc:  # the machine refused (a full disk, a read-only folder): not a bug
        if debug:
            traceback.print_exc()
        where = f": {exc.filename}" if exc.filename else ""
        print(f"error: {one_line(exc.strerror or str(exc))}{one_line(where)}", file=sys.stderr)
        code = 1
    except Exception as exc:  # a bug of ours: still one line, the traceback behind --debug
        if _interrupt_in_chain(exc):
            # Ctrl-C or SIGTERM landed inside code that wraps what it raises (an import
            # defining a dataclass wraps it in RuntimeError): an interrupt, not a bug
            word, code = _ending(seen)
            print(word + _not_written(), file=sys.stderr)
            if argv is None:
                sys.exit(code)
            return code
        if debug:
            traceback.print_exc()
        print(f"error: internal error: {type(exc).__name__}: {one_line(str(exc))} "
              "(run with --debug for the traceback)", file=sys.stderr)
        code = 3
    else:
        code = result if isinstance(result, int) else 0
    if argv is None:
        sys.exit(code)
    return code
