"""Issue 12, item 9: one failing output (the JSON on a full disk) stopped the others.

Each output succeeds or fails on its own: a full disk is injected under the JSON only (the one
place bytes reach the disk, ``fileio._write_all``, raises ENOSPC for it), and every other
output is still written, the JSON's failure is reported in one line, the previous JSON is left
whole, and the command exits non-zero.
"""

from __future__ import annotations

import errno
import os
import signal
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from steadybench import fileio
from steadybench.cli import main
from steadybench.output.writing import Output, write_each

BENCH = textwrap.dedent("""
    import steadybench as sb

    @sb.benchmark
    def tiny():
        return lambda: None
""")


@pytest.fixture
def full_disk_under(monkeypatch):
    """``full_disk_under(".json.")``: writes to temporary files whose name holds the text fail
    with ENOSPC, as on a full disk."""
    real = fileio._write_all

    def install(marker: str) -> None:
        def write_all(fd: int, data: bytes) -> None:
            if marker in os.readlink(f"/proc/self/fd/{fd}"):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            real(fd, data)

        monkeypatch.setattr(fileio, "_write_all", write_all)

    return install


def test_full_disk_under_the_json_spares_the_other_outputs(tmp_path, capsys, full_disk_under):
    bench = tmp_path / "bench.py"
    bench.write_text(BENCH)
    old_json = '{"previous": "run"}\n'
    (tmp_path / "r.json").write_text(old_json)
    full_disk_under(".r.json.")
    code = main(["run", str(bench), "--in-process", "-n", "3", "-q",
                 "--json", str(tmp_path / "r.json"), "--csv", str(tmp_path / "r.csv"),
                 "--xml", str(tmp_path / "r.xml"), "--markdown", str(tmp_path / "r.md"),
                 "--report", str(tmp_path / "r.html")])
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert code == 2
    assert err == [f"error: cannot write {tmp_path / 'r.json'}: No space left on device",
                   "error: 1 of 5 output(s) not written (see above)"], err
    assert (tmp_path / "r.json").read_text() == old_json  # the previous version, whole
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp left
    assert (tmp_path / "r.csv").read_text().startswith("benchmark,")
    ET.parse(tmp_path / "r.xml")
    assert (tmp_path / "r.md").read_text().startswith("# bench")
    assert "<html" in (tmp_path / "r.html").read_text()


def test_every_output_is_tried_whatever_the_others_do(tmp_path):
    """A failing output in the middle, of any kind (an error of ours, an OSError, a bug), is
    reported, and the outputs after it are written."""
    done: list[str] = []

    def ok(name: str) -> Output:
        return Output(name, tmp_path / name, lambda: done.append(name) or tmp_path / name)

    def failing(exc: Exception) -> Output:
        def write() -> Path:
            raise exc

        return Output("--bad", tmp_path / "bad", write)

    reported: list[str] = []
    written, failures = write_each(
        [ok("a"), failing(OSError(errno.ENOSPC, "No space left on device")), ok("b"),
         failing(TypeError("a bug")), ok("c")], reported.append)
    assert done == ["a", "b", "c"] and written == [tmp_path / n for n in "abc"]
    assert failures == reported == [
        f"cannot write {tmp_path / 'bad'}: No space left on device",
        f"cannot write {tmp_path / 'bad'} (--bad): internal error: TypeError: a bug"]


def test_an_interrupted_run_still_ends_130_when_an_output_fails(tmp_path, capsys,
                                                                  full_disk_under):
    """A failed output of interrupted results is reported, and the status stays 130."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # even if inherited
    try:                                                                 # ignored
        _interrupted_run(tmp_path, capsys, full_disk_under)
    finally:
        signal.signal(signal.SIGINT, previous)


def _interrupted_run(tmp_path, capsys, full_disk_under):
    bench = tmp_path / "bench.py"
    bench.write_text(textwrap.dedent("""
        import os, signal
        import steadybench as sb

        def run():
            os.kill(os.getpid(), signal.SIGINT)

        @sb.benchmark
        def interrupted():
            return run
    """))
    full_disk_under(".r.json.")
    code = main(["run", str(bench), "--in-process", "-n", "3", "-q",
                 "--json", str(tmp_path / "r.json"), "--csv", str(tmp_path / "r.csv")])
    err = capsys.readouterr().err
    assert code == 130, err
    assert f"error: cannot write {tmp_path / 'r.json'}: No space left on device" in err
    assert (tmp_path / "r.csv").read_text().startswith("benchmark,")
