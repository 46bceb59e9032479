"""Issue 27 item 14: inputs and machine states that gave an internal error now give one clear
line.

Covered here: a full state directory (``OSError: [Errno 28]``), a root-owned journal of
100,000 ``[`` (``RecursionError``, and the other journals were not restored), results whose
``name`` is ``null`` (``TypeError``), parameters JSON has no type for, and ``[pin] cpus =
"0-999999999"`` (``MemoryError``). ``exec --shell --cmd 'echo \\{x}'`` (``KeyError``) is in
test_hook_injection.py.
"""

from __future__ import annotations

import errno
import json
import textwrap

from fake_machine import CPU, make_machine
from steadybench.cli import main


def _one_clear_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ") and "internal error" not in lines[0], err
    return lines[0]


def test_a_full_state_directory_is_one_line(tmp_path, monkeypatch, capsys):
    from steadybench.system import journal

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = make_machine(tmp_path / "m")

    def full(path, data):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(journal, "write_private", full)
    code = main(["--root", str(root), "system", "tune"])
    line = _one_clear_line(capsys.readouterr().err)
    assert code == 1 and "No space left on device" in line
    assert (root / f"{CPU}/cpu0/cpufreq/scaling_governor").read_text() == "powersave\n"


def test_a_deeply_nested_journal_is_corrupt_and_the_others_are_restored(tmp_path, monkeypatch,
                                                                        capsys):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = make_machine(tmp_path / "m")
    assert main(["--root", str(root), "system", "tune"]) == 0
    folder = tmp_path / "state" / "steadybench"
    bad = folder / "run-1-deep.json"
    bad.write_text("[" * 100_000)
    bad.chmod(0o600)
    capsys.readouterr()
    code = main(["--root", str(root), "system", "reset"])
    out, err = capsys.readouterr()
    assert code != 0
    line = _one_clear_line(err)
    assert "nested too deeply" in line and "RecursionError" not in line
    assert "restored:" in out  # the tune journal was restored all the same
    assert (root / f"{CPU}/cpu0/cpufreq/scaling_governor").read_text() == "powersave\n"


def test_results_with_a_null_name_are_refused(tmp_path, capsys):
    results = tmp_path / "r.json"
    assert main(["exec", "-q", "--runs", "2", "--no-correction", "--json", str(results), "--",
                 "true"]) == 0
    data = json.loads(results.read_text())
    data["benchmarks"][0]["name"] = None
    results.write_text(json.dumps(data))
    capsys.readouterr()
    for args in (["compare", str(results), str(results)],
                 ["report", str(results), "-o", str(tmp_path / "r.html")]):
        code = main(args)
        assert code == 2 and "name is NoneType" in _one_clear_line(capsys.readouterr().err)


def test_parameters_json_cannot_hold_are_written_as_text(tmp_path, capsys):
    bench = tmp_path / "b.py"
    bench.write_text(textwrap.dedent("""
        import steadybench as sb

        class Shape:
            def __str__(self):
                return "shape-3"

        @sb.benchmark(params={"s": [Shape()]})
        def f(s):
            return lambda: None
    """))
    out = tmp_path / "r.json"
    code = main(["run", str(bench), "--in-process", "--runs", "3", "--json", str(out), "-q"])
    assert code == 0, capsys.readouterr().err
    assert json.loads(out.read_text())["benchmarks"][0]["params"] == {"s": "shape-3"}


def test_a_huge_cpu_list_is_refused(tmp_path):
    """In a child limited to 2 GiB: the list of 10⁹ CPUs once took all memory."""
    import os
    import resource
    import subprocess
    import sys

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))

    preset = tmp_path / "pin.toml"
    preset.write_text('countermeasures = ["pin"]\n[pin]\ncpus = "0-999999999"\n')
    bench = tmp_path / "b.py"
    bench.write_text("import steadybench as sb\n\n@sb.benchmark\ndef f():\n"
                     "    return lambda: None\n")
    done = subprocess.run([sys.executable, "-m", "steadybench", "run", str(bench), "--preset",
                           str(preset), "--runs", "3", "-q"], capture_output=True, text=True,
                          timeout=120, preexec_fn=limited,
                          env={**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")})
    assert done.returncode == 2, done.stderr
    assert "goes beyond CPU" in _one_clear_line(done.stderr)
