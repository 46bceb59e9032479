"""Issue 12, item 10: special files named as outputs were replaced by regular files.

- a character device (``/dev/null``) or a FIFO is written through, never replaced; a FIFO
  nobody reads is refused at once (no hang);
- a symbolic link of the user (or root) is followed: the file it points to is written and the
  link stays; a link owned by another user is refused;
- an existing file keeps its mode; a file of another user keeps its owner, group and mode when
  root writes it, and is refused for anyone else (replacing it would make it theirs);
- block devices and sockets are refused.

A device node of their own is made for the tests that run as root (never the real /dev/null,
which a broken writer would replace); without root, /dev/null itself is safe to use.
"""

from __future__ import annotations

import os
import socket
import stat
import textwrap
from pathlib import Path

import pytest

from steadybench import fileio
from steadybench.cli import main
from steadybench.errors import SteadybenchError
from steadybench.fileio import atomic_write_text, check_writable

ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT, reason="needs root (chown, device nodes)")
NOBODY = 65534

BENCH = textwrap.dedent("""
    import steadybench as sb

    @sb.benchmark
    def tiny():
        return lambda: None
""")


def _null_device(tmp_path: Path) -> Path:
    """A character device that discards writes, like /dev/null."""
    if not ROOT:
        return Path("/dev/null")
    node = tmp_path / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except OSError as exc:  # a container without CAP_MKNOD
        pytest.skip(f"cannot make a device node: {exc}")
    return node


def _run(tmp_path: Path, *options: str) -> int:
    bench = tmp_path / "bench.py"
    bench.write_text(BENCH)
    return main(["run", str(bench), "--in-process", "-n", "3", "-q", *options])


def test_json_to_a_character_device_writes_through(tmp_path, capsys):
    node = _null_device(tmp_path)
    assert _run(tmp_path, "--json", str(node), "--csv", str(node)) == 0, capsys.readouterr().err
    assert stat.S_ISCHR(os.stat(node).st_mode)
    assert [p.name for p in node.parent.iterdir() if p.name.startswith(f".{node.name}")] == []


def test_fifo_with_a_reader_is_written_through(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader before the writer
    try:
        atomic_write_text(fifo, "through the pipe\n")
        assert os.read(reader, 100) == b"through the pipe\n"
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_fifo_without_a_reader_is_refused_at_once(tmp_path, capsys):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(SteadybenchError, match="a FIFO that no process is reading"):
        atomic_write_text(fifo, "nobody listens\n")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert _run(tmp_path, "--json", str(fifo), "--csv", str(tmp_path / "r.csv")) == 2
    err = capsys.readouterr().err.splitlines()
    assert f"error: cannot write {fifo}: it is a FIFO that no process is reading" in err
    assert (tmp_path / "r.csv").exists() and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_own_symlink_is_followed_and_kept(tmp_path):
    target = tmp_path / "data" / "results.json"
    target.parent.mkdir()
    target.write_text("old")
    os.chmod(target, 0o640)
    link = tmp_path / "latest.json"
    link.symlink_to(target)
    atomic_write_text(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == 0o640
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "data" / "created.json")
    atomic_write_text(dangling, "created")
    assert dangling.is_symlink() and (tmp_path / "data" / "created.json").read_text() == "created"


@needs_root
def test_symlink_of_another_user_is_refused(tmp_path, capsys):
    target = tmp_path / "precious"
    target.write_text("keep me")
    link = tmp_path / "r.json"
    link.symlink_to(target)
    os.lchown(link, NOBODY, NOBODY)
    with pytest.raises(SteadybenchError, match="symbolic link owned by another user"):
        atomic_write_text(link, "overwritten")
    assert target.read_text() == "keep me" and link.is_symlink()
    # refused before anything is measured
    assert _run(tmp_path, "--json", str(link)) == 2
    assert "symbolic link owned by another user (uid 65534)" in capsys.readouterr().err


def test_existing_file_keeps_its_mode(tmp_path):
    path = tmp_path / "r.json"
    path.write_text("old")
    os.chmod(path, 0o600)
    atomic_write_text(path, "new")
    assert path.read_text() == "new" and stat.S_IMODE(path.stat().st_mode) == 0o600


@needs_root
def test_root_keeps_owner_group_and_mode_of_another_users_file(tmp_path, capsys):
    path = tmp_path / "r.json"
    path.write_text("theirs")
    os.chown(path, NOBODY, NOBODY)
    os.chmod(path, 0o600)
    assert _run(tmp_path, "--json", str(path)) == 0, capsys.readouterr().err
    st = path.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (NOBODY, NOBODY, 0o600)
    assert path.read_text().startswith("{")


def test_another_users_file_is_refused_without_root(tmp_path, monkeypatch, capsys):
    """As a user who is not root, a file of someone else is refused before measuring (the
    other user is simulated: this process pretends to have another uid)."""
    path = tmp_path / "r.json"
    path.write_text("theirs")
    os.chmod(path, 0o666)
    other = path.stat().st_uid + 1
    monkeypatch.setattr(fileio.os, "geteuid", lambda: other)
    with pytest.raises(SteadybenchError, match="belongs to another user"):
        atomic_write_text(path, "mine")
    with pytest.raises(SteadybenchError, match="belongs to another user"):
        check_writable(path)
    assert path.read_text() == "theirs"


def test_socket_is_refused(tmp_path):
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        with pytest.raises(SteadybenchError, match="it is a socket"):
            check_writable(path)
        with pytest.raises(SteadybenchError, match="it is a socket"):
            atomic_write_text(path, "x")
    assert stat.S_ISSOCK(os.lstat(path).st_mode)


@needs_root
def test_block_device_is_refused(tmp_path):
    node = tmp_path / "disk"
    try:  # a device number nothing uses: even a broken writer could not reach a disk
        os.mknod(node, stat.S_IFBLK | 0o600, os.makedev(240, 254))
    except OSError as exc:
        pytest.skip(f"cannot make a device node: {exc}")
    with pytest.raises(SteadybenchError, match="it is a block device"):
        atomic_write_text(node, "x")
    assert stat.S_ISBLK(os.lstat(node).st_mode)
