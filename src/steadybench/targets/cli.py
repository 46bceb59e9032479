"""The ``--target`` option shared by every command that measures or controls a machine.

Commands add :func:`target_option` (``system show|check|tune|reset``) or
:func:`target_options` (``exec``, ``iters``, ``sweep``, ``evaluate``: also ``--push``), then
ask :func:`machine_root` for the :class:`~steadybench.system.sysfs.SysRoot` to read and tune
and :func:`command_runner` for the runner of their programs. Without ``--target`` (or with
``--target local``) both give exactly what the command used before. Nothing here connects until
a command runs, and click is the only import at start-up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from ..system.sysfs import SysRoot

TARGET_HELP = ("Where to run and what to control: local (default), ssh://[USER@]HOST[:PORT] or "
               "adb[://SERIAL]; ?root=/DIR reads a fake sys/proc tree there "
               "(docs/machine-control.md). Also STEADYBENCH_TARGET.")


def _check(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    from ..errors import ConfigurationError
    from .spec import parse_target

    if value is None:
        return None
    try:
        spec = parse_target(value)
    except ConfigurationError as exc:
        raise click.BadParameter(str(exc).removeprefix(f"--target {value!r}: ")) from None
    return None if spec.is_local else value


def target_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--target TARGET`` (keyword ``target``: None for the local machine, else the checked
    text)."""
    return click.option("--target", "target", metavar="TARGET", envvar="STEADYBENCH_TARGET",
                        callback=_check, help=TARGET_HELP)(fn)


def target_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--target`` and ``--push FILE`` (repeatable: copied into the work folder on the
    target before anything runs, executable bits kept; run it as ``./NAME``)."""
    fn = click.option("--push", "push", multiple=True, type=click.Path(dir_okay=False),
                      metavar="FILE",
                      help="With --target: copy FILE to the work folder on the target (the "
                           "programs' current folder) before measuring (repeatable).")(fn)
    return target_option(fn)


def machine_root(target: str | None, root: str) -> SysRoot:
    """The root to read and tune: ``--root`` locally, the device's (``?root=``) with a
    target."""
    from ..system.sysfs import SysRoot

    if not target:
        return SysRoot(root)
    from . import remote_root

    return remote_root(target)


def command_runner(opts: dict[str, Any], local: Callable[[], Any]) -> Any:
    """The runner of ``exec``/``iters``/``sweep``: ``local()`` without a target, else a
    :class:`~.remote_run.RemoteCommandRunner` with the same settings (``opts`` are the
    command's options: shell, timeout, input_path, output_path, push)."""
    target = opts.get("target")
    if not target:
        if opts.get("push"):
            from ..errors import ConfigurationError

            raise ConfigurationError("--push needs --target (files are copied to the target)")
        return local()
    from . import open_target
    from .remote_run import RemoteCommandRunner
    from .spec import parse_target

    spec = parse_target(target)
    template = local()  # the local runner carries the command's settings
    return RemoteCommandRunner(open_target(spec), shell=template.shell,
                               timeout=template.timeout, input_path=template.input_path,
                               output_path=template.output_path,
                               capture_stdout=template.capture_stdout, timer=spec.timer,
                               push=tuple(opts.get("push") or ()))


def calibration_for(runner: Any) -> dict[str, Any]:
    """``calibrate_fn`` for :class:`~steadybench.programs.exec.ExecSession`: the start-up cost is
    measured where the commands run."""
    from .remote_run import RemoteCommandRunner, calibrate_remote

    return {"calibrate_fn": calibrate_remote} if isinstance(runner, RemoteCommandRunner) else {}


def target_context(runner: Any) -> dict[str, Any]:
    """What a results file records about the target (nothing for the local machine)."""
    from .remote_run import RemoteCommandRunner
    from .transport import TargetError

    if not isinstance(runner, RemoteCommandRunner):
        return {}
    uname = None
    try:  # the results are written even when the device has gone meanwhile
        status, out = runner.target.shell().request("uname -a 2>/dev/null", timeout=10)
        uname = out.decode("utf-8", "replace").strip() if status == 0 else None
    except TargetError:
        pass
    return {"target": {"address": runner.target.spec.address, "kind": runner.target.spec.kind,
                       "root": runner.target.spec.root, "timer": runner.timer,
                       "uname": uname, "timing": "measured on the target"}}
