"""Start-up cost: what ``--version``, every ``--help`` and a worker process import.

``--version`` and every ``--help`` import none of numpy, scipy, matplotlib, jinja2, rich and
psutil: the command modules load them inside the functions that use them (benchmarks/startup.py
times the result). Every execution starts a worker, so scipy (about a second) loads only inside
the functions that use it, and a stop rule travels to the worker with the t quantiles it needs.
Each check runs in a fresh interpreter, since this one has imported everything already.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap

from steadybench.runner.stop import CiHalfWidth, RunState

HEAVY = ("numpy", "scipy", "matplotlib", "jinja2", "rich", "psutil")


def imported_after(code: str) -> list[str]:
    """The heavy packages a fresh interpreter has imported after running ``code``."""
    check = f"\nimport sys\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code) + check],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_version_and_every_help_import_nothing_heavy():
    assert imported_after("""
        import contextlib
        import io

        import click

        from steadybench.cli import cli, main

        ctx = click.Context(cli)
        calls = [["--version"], ["--help"]]
        for name in cli.list_commands(ctx):
            calls.append([name, "--help"])
            for child in getattr(cli.get_command(ctx, name), "commands", {}):
                calls.append([name, child, "--help"])
        with contextlib.redirect_stdout(io.StringIO()):
            for args in calls:
                assert main(args) == 0, args
    """) == []


def test_worker_modules_import_no_scipy():
    # numpy still comes with steadybench.methods (its package imports every method)
    assert "scipy" not in imported_after("""
        import steadybench.runner.runner
        import steadybench.runner.worker
        import steadybench.runner.workers
    """)


def test_a_pickled_ci_stop_rule_checks_without_scipy():
    # the default stop rule holds a CI target, checked in every worker after each sample: the
    # rule travels to the worker with its t quantiles (scipy there costs ~1 s per execution)
    rule = CiHalfWidth(0.01, 0.95, min_runs=3)
    payload = pickle.dumps(rule)  # before any check here fills its cache
    state = RunState(runs=30)
    state.stream.extend([1.0, 1.01, 0.99] * 10)
    expected = rule.check(state)
    assert expected is not None
    assert "scipy" not in imported_after(f"""
        import pickle

        from steadybench.runner.stop import RunState

        rule = pickle.loads({payload!r})
        state = RunState(runs=30)
        state.stream.extend([1.0, 1.01, 0.99] * 10)
        assert rule.check(state) == {expected!r}
    """)
