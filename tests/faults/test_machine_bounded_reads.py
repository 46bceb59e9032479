"""Issue 27 item 10: reads of the machine are bounded and stay in the root; writes never go
through a hard link; the allow-list does not accept a trailing line break.

A sysfs path linked to ``/dev/zero`` read until the OOM killer struck; a FIFO hung ``system
show``; ``system show --json`` printed an ``/etc/passwd`` copy linked as a governor; hard links
were written through; ``$`` let ``...scaling_governor\\n`` pass the allow-list.

Every command runs in a child with a 2 GiB address-space limit and a time-out, so a regression
fails the test instead of the machine.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import pytest

from fake_machine import CPU, make_machine
from steadybench.meters.base import read_number
from steadybench.system.allowlist import is_allowed
from steadybench.system.sysfs import SysRoot
from steadybench.system.writer import write_file

GOVERNOR = f"{CPU}/cpu0/cpufreq/scaling_governor"


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))


def _show(root, tmp_path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    return subprocess.run([sys.executable, "-m", "steadybench", "--root", str(root), "system",
                           "show", "--json"], capture_output=True, text=True, timeout=60,
                          env=env, preexec_fn=_limited)


def _plant(root, kind: str, tmp_path) -> None:
    target = root / GOVERNOR
    target.unlink()
    if kind == "dev-zero":
        target.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "outside":
        secret = tmp_path / "passwd-copy"
        secret.write_text("root:x:0:0:SECRETLINE:/root:/bin/bash\n" * 50)
        target.symlink_to(secret)
    elif kind == "huge":
        target.write_bytes(b"performance " * (5 * 2**20 // 12))  # over the 4 MiB cap


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "outside", "huge"])
def test_system_show_reads_no_planted_file(tmp_path, kind):
    root = make_machine(tmp_path / "m")
    _plant(root, kind, tmp_path)
    try:
        done = _show(root, tmp_path)
    except subprocess.TimeoutExpired:
        pytest.fail(f"system show hung on a {kind} governor")
    assert done.returncode in (0, 1, 2), done.stderr
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr
    assert "SECRETLINE" not in done.stdout
    assert len(done.stdout) < 1_000_000


def test_sysroot_reads_are_bounded_and_stay_inside(tmp_path):
    root = make_machine(tmp_path / "m")
    sysroot = SysRoot(root)
    assert sysroot.read(GOVERNOR) == "powersave"
    (root / "sys/link-out").symlink_to(tmp_path)
    (tmp_path / "x").write_text("outside")
    assert sysroot.read("sys/link-out/x") is None
    (root / "etc").mkdir()
    (root / "etc/ok").write_text("inside")
    (root / "sys/link-to-etc").symlink_to(root / "etc/ok")
    assert sysroot.read("etc/ok") == "inside"
    assert sysroot.read("sys/link-to-etc") is None  # a sysfs name leaving sys/
    os.mkfifo(root / "sys/fifo")
    assert sysroot.read("sys/fifo") is None


def test_a_meter_file_that_is_a_fifo_is_not_read(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OSError):
        read_number(fifo)


def test_a_hard_link_is_not_written_through(tmp_path):
    outside = tmp_path / "shadow"
    outside.write_text("precious\n")
    root = make_machine(tmp_path / "m")
    target = root / GOVERNOR
    target.unlink()
    os.link(outside, target)
    with pytest.raises(OSError, match="hard links"):
        write_file(target, b"performance\n")
    assert outside.read_text() == "precious\n"  # not truncated either


def test_a_single_link_file_is_still_written(tmp_path):
    root = make_machine(tmp_path / "m")
    write_file(root / GOVERNOR, b"performance\n")
    assert (root / GOVERNOR).read_text() == "performance\n"


def test_the_allow_list_ends_at_the_end():
    path = f"/{GOVERNOR}"
    assert is_allowed(path)
    assert not is_allowed(path + "\n")
    assert not is_allowed(path + "\nx")


def test_a_hard_link_is_not_read(tmp_path):
    outside = tmp_path / "shadow"
    outside.write_text("SECRETLINE\n")
    root = make_machine(tmp_path / "m")
    target = root / GOVERNOR
    target.unlink()
    os.link(outside, target)
    assert SysRoot(root).read(GOVERNOR) is None
