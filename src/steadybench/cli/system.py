"""``steadybench system show | check | tune | reset``: read, check, tune and restore the machine.

The countermeasures and what they change are described in ``docs/machine-control.md``
(Rancid §III-IV).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import SystemControlError
from ..targets.cli import machine_root, target_option
from .common import pass_root

if TYPE_CHECKING:
    from rich.console import Console

_STYLE = {"missing": "yellow", "warning": "bold red", "advice": "cyan", "info": "dim"}


def _fmt(value: Any, unit: str = "") -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:g}{unit}"
    return f"{value}{unit}"


def _print_state(console: Console, state: dict[str, Any], findings: list[dict[str, str]]) -> None:
    from rich.table import Table

    from ..system.sysfs import format_cpulist

    console.print(f"[bold]Machine[/bold] (root {state['root']}): {state.get('cpu_model') or '?'}, "
                  f"kernel {state['kernel'].get('release') or '?'}")
    table = Table("CPU", "online", "capacity", "governor", "cur MHz", "min-max MHz", "hw max MHz",
                  "SMT siblings", box=None)
    for c in state["cpus"]:
        table.add_row(str(c["cpu"]), "yes" if c["online"] else "no", _fmt(c.get("capacity")),
                      c.get("governor") or ("-" if c.get("cpufreq") else "no cpufreq"),
                      _fmt(c.get("cur_mhz")),
                      f"{_fmt(c.get('min_mhz'))}-{_fmt(c.get('max_mhz'))}"
                      if c.get("cpufreq") else "-",
                      _fmt(c.get("hw_max_mhz")), format_cpulist(c["smt_siblings"]) or "-")
    console.print(table)
    boost = {None: "unknown (no control file)", True: "on", False: "off"}[
        state["boost"]["enabled"]]
    console.print(f"boost/turbo: {boost}"
                  f"; isolated CPUs: {format_cpulist(state['isolation']['isolated']) or 'none'}")
    temps = state["temperatures"]
    if temps:
        console.print("temperatures: " + ", ".join(
            f"{t['name']} {_fmt(t['celsius'], ' °C') if t['celsius'] is not None else t['error']}"
            for t in temps))
    else:
        console.print("temperatures: no sensors")
    if state["fans"]:
        console.print("fans: " + ", ".join(f"{f['name']} {_fmt(f['rpm'], ' rpm')}"
                                           for f in state["fans"]))
    from ..system.devices import device_lines  # GPU/memory devfreq, RAPL, NVIDIA (issue 15)

    for line in device_lines(state):
        console.print(line, highlight=False)
    load = state.get("loadavg")
    power = {True: "mains", False: "battery", None: "unknown"}[state["power"]["on_ac"]]
    console.print(f"load average: {' '.join(f'{x:g}' for x in load) if load else '-'}; "
                  f"uptime: {_fmt(state.get('uptime_s'), ' s')}; power: {power}")
    if state["top_processes"]:
        console.print("busiest processes: " + ", ".join(
            f"{p['name']} ({p['pid']}) {p['cpu_pct']:g} %" for p in state["top_processes"]))
    k, py = state["kernel"], state["python"]
    console.print(f"ASLR: {_fmt(k.get('aslr'))}; perf_event_paranoid: "
                  f"{_fmt(k.get('perf_event_paranoid'))}; Python {py['version']} "
                  f"({py['implementation']}{', debug build' if py['debug_build'] else ''}"
                  f"{', -X dev' if py['dev_mode'] else ''}, assertions "
                  f"{'on' if py['assertions'] else 'off'}, hash seed "
                  f"{py['hash_seed'] or ('random' if py['hash_randomization'] else '0')}, GC "
                  f"{'on' if py['gc_enabled'] else 'off'})")
    if findings:
        console.print()
    for f in findings:
        style = _STYLE.get(f["level"], "")
        console.print(f"[{style}]{f['level']}[/{style}] ({f['topic']}): {f['message']}",
                      highlight=False)


@click.command("show")
@click.option("--json", "as_json", is_flag=False, flag_value="-", default=None,
              metavar="[FILE]",
              help="Write the state and findings as JSON to FILE ('-' or no FILE: standard "
                   "output), like --json FILE of every other command.")
@click.option("--interval", type=click.FloatRange(min=0), default=0.5, show_default=True,
              help="Seconds over which the busiest processes are measured (0: skip).")
@target_option
@pass_root
def show_cmd(root: str, as_json: str | None, interval: float, target: str | None) -> None:
    """Show frequency, temperature, load, power and Python state, with advice."""

    from ..system.advice import assess
    from ..system.readers import machine_state

    sysroot = machine_root(target, root)
    state = machine_state(sysroot, top_interval=interval)
    findings = assess(state)
    if as_json:
        text = json.dumps({"state": state, "findings": findings}, indent=2)
        if as_json == "-":
            click.echo(text)
        else:
            from ..fileio import atomic_write_text

            atomic_write_text(as_json, text + "\n")
        return
    from ..output.console import make_console

    _print_state(make_console(highlight=False), _shown(state), _shown(findings))


def _shown(tree: Any) -> Any:
    """Values read from the machine made inert for the console: control characters shown
    escaped (an OSC or CSI sequence in a sysfs value is not sent to the terminal) and Rich
    markup escaped."""
    from rich.markup import escape

    from ..output.sanitize import terminal_text

    if isinstance(tree, str):
        return escape(terminal_text(tree))
    if isinstance(tree, dict):
        return {k: _shown(v) for k, v in tree.items()}
    if isinstance(tree, list | tuple):
        return [_shown(v) for v in tree]
    return tree


@click.command("check")
@click.option("--preset", default="managed", show_default=True,
              help="baseline, managed or a preset file whose [rules] decide.")
@click.option("--interval", type=click.FloatRange(min=0), default=0.5, show_default=True,
              help="Seconds over which other processes' CPU use is measured (0: skip).")
@target_option
@pass_root
def check_cmd(root: str, preset: str, interval: float, target: str | None) -> None:
    """Exit non-zero, with the reasons, when the machine is not fit to benchmark."""
    from ..output.console import echo
    from ..system.advice import check
    from ..system.presets import build_preset, load_preset, preset_sensor_units
    from ..system.readers import machine_state

    spec = load_preset(preset)
    sysroot = machine_root(target, root)
    # the countermeasures' options are checked as `run --preset` checks them (nothing is
    # applied: building a plan only reads the machine)
    build_preset(spec, sysroot)
    state = machine_state(sysroot, top_interval=interval, units=preset_sensor_units(spec))
    reasons = check(state, spec.rules)
    if reasons:
        for reason in reasons:
            echo(f"not fit: {reason}")
        raise click.exceptions.Exit(1)
    echo(f"fit to benchmark by the {spec.name} preset's rules")


_WAIT_LOCK = click.option(
    "--wait-lock", is_flag=True,
    help="When a tuned run holds the machine's tuning lock, wait for it instead of refusing.")


def _tell(line: str) -> None:
    click.echo(line, err=True)


@click.command("tune")
@click.option("--journal", type=click.Path(dir_okay=False), default=None,
              help="Restore journal (default: $XDG_STATE_HOME/steadybench/tune.json or "
                   "~/.local/state/steadybench/tune.json).")
@click.option("--governor", default=None,
              help="Governor to set (default performance; with no performance governor the "
                   "minimum frequency is raised to the maximum).")
@click.option("--keep-boost", is_flag=True, help="Leave boost/turbo as it is.")
@click.option("--dry-run", is_flag=True, help="Only say what would change.")
@_WAIT_LOCK
@target_option
@pass_root
def tune_cmd(root: str, journal: str | None, governor: str | None, keep_boost: bool,
             dry_run: bool, wait_lock: bool, target: str | None) -> None:
    """Set the performance governor and switch boost off, journaling every original value."""
    from ..system.journal import TUNE_JOURNAL, default_journal_path
    from ..system.tuning import tune as tune_machine

    sysroot = machine_root(target, root)
    folder = None if dry_run else sysroot.journal_dir()  # a target's own folder on the host
    path = Path(journal) if journal else folder / TUNE_JOURNAL if folder \
        else default_journal_path()
    report = tune_machine(sysroot, path, governor=governor or "performance",
                          boost_off=not keep_boost, explicit_governor=governor is not None,
                          dry_run=dry_run, wait_lock=wait_lock, on_wait=_tell)
    from ..output.sanitize import terminal_tree

    report = terminal_tree(report)  # sysfs values may hold escape sequences: shown escaped
    for item in report["unavailable"]:
        click.echo(f"unavailable ({item['name']}): {item['reason']}")
    for item in report["already"]:
        click.echo(f"already: {item}")
    if report["not_permitted"]:
        for item in report["would_change"]:
            click.echo(f"would change: {item}")
        click.echo(f"cannot: not permitted to write {', '.join(report['not_permitted'])} "
                   f"(run as root); nothing was changed", err=True)
        raise click.exceptions.Exit(1)
    if dry_run:
        if report.get("held_by"):
            click.echo(f"note: another tuned run holds the tuning lock ({report['held_by']}): "
                       "what is read now may be its settings, which it will put back")
        for item in report["would_change"]:
            click.echo(f"would change: {item}")
        return
    for item in report["changed"]:
        click.echo(f"changed: {item}")
    if report["changed"]:
        again = f" --target {target}" if target else ""
        click.echo(f"originals saved in {path}; `steadybench system reset{again}` restores them")
    else:
        click.echo("nothing to change")


@click.command("reset")
@click.option("--journal", type=click.Path(dir_okay=False), default=None,
              help="Restore this journal only (default: every journal in the state directory).")
@_WAIT_LOCK
@target_option
@pass_root
def reset_cmd(root: str, journal: str | None, wait_lock: bool, target: str | None) -> None:
    """Restore every value saved by tune (or by a tuned run that crashed), byte for byte.

    Only journals owned by root or by you, and writable by nobody else, are used; files named
    like a journal that are not regular files are skipped (docs/machine-control.md).
    """
    from ..system.journal import state_dir
    from ..system.tuning import reset as reset_journals

    paths = [Path(journal)] if journal else None
    sysroot = machine_root(target, root)
    folder = sysroot.journal_dir()  # a target's journals: its own folder on the host
    report = reset_journals(paths, root=sysroot, wait_lock=wait_lock, on_wait=_tell,
                            directory=folder)
    from ..output.sanitize import terminal_tree

    report = terminal_tree(report)
    for item in report["skipped"]:
        click.echo(f"skipped: {item}")
    for item in report["orphans"]:
        click.echo(f"orphaned: {item}")
    for item in report["restored"]:
        click.echo(f"restored: {item}")
    if not report["journals"]:
        click.echo(f"nothing to restore (no journal in {folder or state_dir()})")
    elif not report["restored"] and not report["skipped"] and not report["failed"]:
        click.echo("journal was empty; removed")
    if report["failed"]:
        raise SystemControlError(f"{len(report['failed'])} journal(s) not restored (the others "
                                 f"were): {'; '.join(report['failed'])}")


@click.group("system")
def system_group() -> None:
    """Read, check, tune and restore the machine (Linux sysfs/procfs)."""


for _cmd in (show_cmd, check_cmd, tune_cmd, reset_cmd):
    system_group.add_command(_cmd)

commands = [system_group]

__all__ = ["commands", "system_group"]
