"""Item 12: every numeric option is validated (finite, in range) before anything runs.

``exec --timeout inf`` ended in an internal ``OverflowError``, ``iters --seed -1`` in numpy's
``ValueError``, ``run --time-limit inf`` in every benchmark failing, ``--param-range x=nan:1`` in
``ValueError``, ``system show --interval inf`` in ``OverflowError``. Now each is one line
``error: ...`` and exit status 2, from the option types of ``steadybench.cli.validate``.
"""

from __future__ import annotations

import click
import pytest

from steadybench.cli import cli, main
from steadybench.cli.validate import (
    MAX_COUNT,
    FiniteFloat,
    harden,
    unvalidated_options,
)

#: the commands whose options declare validated types themselves (the others get them from
#: ``harden`` where the command line loads them)
OWNED = {"exec", "iters", "sweep", "run", "demo", "report", "blocks"}


def one_error(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run the command line; it must fail with status 2 and exactly one ``error:`` line."""
    code = main(args)
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert code == 2, err
    assert len(lines) == 1, err
    assert "Traceback" not in err and "internal error" not in err, err
    return lines[0]


@pytest.mark.parametrize("args, fragment", [
    (["exec", "--timeout", "inf", "--", "true"], "'inf' is not a finite number"),
    (["exec", "--timeout", "1e400", "--", "true"], "is not a finite number"),
    (["exec", "--timeout", "1e300", "--", "true"], "at most 31536000"),
    (["exec", "--time-limit", "inf", "--", "true"], "'--time-limit'"),
    (["exec", "--max-time", "nan", "--", "true"], "'--max-time'"),
    (["exec", "--target-cov", "-inf", "--", "true"], "'--target-cov'"),
    (["exec", "--confidence", "nan", "--", "true"], "'--confidence'"),
    (["exec", "--seed", "-1", "--", "true"], "'--seed'"),
    (["exec", "--window", str(10**30), "--", "true"], "'--window'"),
    (["exec", "--runs", str(10**30), "--", "true"], "'--runs'"),
    (["exec", "--processes", "1000000", "--", "true"], "'--processes'"),
    (["iters", "--seed", "-1", "--", "true"], "'--seed'"),
    (["iters", "--bootstrap", str(10**12), "--", "true"], "'--bootstrap'"),
    (["iters", "--outlier-threshold", "nan", "--", "true"], "'--outlier-threshold'"),
    (["iters", "--threshold", "inf", "--", "true"], "'--threshold'"),
    (["iters", "--timeout", "inf", "--", "true"], "'--timeout'"),
    (["iters", "--confidence", "1", "--", "true"], "'--confidence'"),
    (["sweep", "--sizes", "1..8", "--per-octave", str(10**9), "--", "true", "{size}"],
     "'--per-octave'"),
    (["sweep", "--sizes", "1..8", "--time-limit", "inf", "--", "true", "{size}"],
     "'--time-limit'"),
    (["run", "bench.py", "--time-limit", "inf"], "'--time-limit'"),
    (["run", "bench.py", "--max-time", "-inf"], "'--max-time'"),
    (["run", "bench.py", "-p", "0"], "'-p'"),
    (["demo", "--max-time", "inf"], "'--max-time'"),
    (["iters", "--outlier-threshold", "1e400", "--", "true"], "too large for a number"),
    (["sweep", "--sizes", "1..1e300", "--", "true", "{size}"], "too large (at most 2^53)"),
    (["sweep", "--sizes", "1,2,,3", "--", "true", "{size}"], "empty size"),
    (["report", "r.json", "--window", str(10**30)], "'--window'"),
    (["report", "r.json", "--confidence", "nan"], "'--confidence'"),
    (["blocks", "counts.csv", "--confidence", "inf"], "'--confidence'"),
    (["exec", "--param-range", "x=nan:1", "--cmd", "echo {x}"], "finite"),
    (["exec", "--param-range", "x=0:inf", "--cmd", "echo {x}"], "finite"),
])
def test_bad_number_is_one_line(args, fragment, capsys):
    assert fragment in one_error(args, capsys)


def test_infinity_still_means_keep_all_for_outlier_threshold():
    # the one option where "inf" is documented ("inf: keep all")
    iters = cli.get_command(click.Context(cli), "iters")
    option = next(p for p in iters.params if p.name == "outlier_threshold")
    assert option.type.convert("inf", option, None) == float("inf")
    with pytest.raises(click.BadParameter):
        option.type.convert("nan", option, None)


def test_finite_float_messages_say_the_range():
    assert FiniteFloat(0, 1, min_open=True, max_open=True).describe() == \
        "positive and less than 1"
    with pytest.raises(click.BadParameter, match="must be positive"):
        FiniteFloat(0, min_open=True).convert("-1", None, None)
    with pytest.raises(click.BadParameter, match="not a finite number"):
        FiniteFloat().convert("nan", None, None)


def test_harden_gives_plain_options_finite_bounded_types():
    @click.command()
    @click.option("--x", type=float)
    @click.option("--n", type=int)
    @click.option("--seed", type=int)
    @click.option("--r", type=click.FloatRange(min=0))
    def cmd(x, n, seed, r):  # pragma: no cover - never invoked
        pass

    assert unvalidated_options(cmd) == ["cmd --x", "cmd --n", "cmd --seed", "cmd --r"]
    harden(cmd)
    assert unvalidated_options(cmd) == []
    types = {p.name: p.type for p in cmd.params}
    assert isinstance(types["x"], FiniteFloat) and isinstance(types["r"], FiniteFloat)
    assert types["n"].max == MAX_COUNT and types["seed"].min == 0
    assert harden(cmd) is cmd  # idempotent


def _all_unvalidated() -> list[str]:
    ctx = click.Context(cli)
    found = []
    for name in cli.list_commands(ctx):
        found += unvalidated_options(cli.get_command(ctx, name))
    return found


def test_every_numeric_option_of_the_owned_commands_is_validated():
    assert [o for o in _all_unvalidated() if o.split()[0] in OWNED] == []


def test_every_numeric_option_of_every_command_is_validated():
    """Every command's numeric options are validated: ``steadybench.cli.validate.harden`` is
    applied where the lazy group loads the commands."""
    assert _all_unvalidated() == []


def test_system_show_interval_inf(tmp_path, capsys):
    from fake_machine import make_machine

    root = make_machine(tmp_path / "root")
    show = cli.get_command(click.Context(cli), "system").commands["show"]
    interval = next(p for p in show.params if p.name == "interval")
    assert isinstance(interval.type, FiniteFloat)
    assert "'--interval'" in one_error(["--root", str(root), "system", "show", "--interval",
                                        "inf"], capsys)
