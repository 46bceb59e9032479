"""The device's ``sys`` and ``proc`` trees behind the same interface as the local machine's.

:class:`RemoteSysRoot` is a :class:`~steadybench.system.sysfs.SysRoot` whose reads, listings,
permission checks and writes happen on the target, through its long-lived shell
(:class:`~.transport.RemoteShell`). Every reader, setting, countermeasure and meter of
:mod:`steadybench.system` therefore works on a phone or a board unchanged (Rancid §II-A: the
frequencies and temperatures of Android devices are read from sysfs).

Writes keep the rules of issue 12 on the device too (:mod:`steadybench.system.writer`): the
file must be on the allow-list as named *and* as resolved on the device (``readlink -f``), the
resolved path must lie under the target's root, no component of it may be a symbolic link
(each is tested with ``[ -L ]`` right before the write), the file must exist and be a regular
file (nothing is created), and the bytes are written with ``printf`` from octal escapes, so no
value is ever shell code. The checks run in the device's shell, not as one ``O_NOFOLLOW`` open:
a process on the device that swaps a file for a link between the test and the write could still
win that race (it would need the device's root, which the write needs anyway).

The journals stay on the host (:meth:`RemoteSysRoot.journal_dir`, one folder per target), and a
journal's liveness is judged by the *host's* ``/proc``, where the tuning process runs
(:meth:`RemoteSysRoot.process_root`).
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import SystemControlError
from ..system.sysfs import SysRoot
from .spec import TargetSpec
from .transport import Target, TargetError, q

TARGETS_DIR = "targets"


class RemoteSysRoot(SysRoot):
    """The filesystem root ``spec.root`` on ``target`` (see the module docstring).

    ``root`` is the target's canonical text (``ssh://user@host:22?root=/x``): journals record
    it, locks are named by it, and comparing two of them compares targets.
    """

    remote = True
    local_process = False

    def __init__(self, target: Target) -> None:  # no SysRoot.__init__: nothing local to check
        self.target = target
        self.spec: TargetSpec = target.spec
        self.root = target.spec.key  # type: ignore[assignment]
        self._base: str | None = None

    def __repr__(self) -> str:
        return f"RemoteSysRoot({self.root!r})"

    # ------------------------------------------------------------------ paths
    @property
    def is_real(self) -> bool:
        return False

    @property
    def base(self) -> str:
        """The root directory on the device, resolved (``readlink -f``)."""
        if self._base is None:
            status, out = self._ask(f"cd -- {q(self.spec.root)} && pwd -P")
            if status != 0:
                raise SystemControlError(f"{self.spec.address}: root {self.spec.root} is not "
                                         "a directory on the target")
            self._base = out.decode("utf-8", "replace").strip() or "/"
        return self._base

    def remote_path(self, rel: str) -> str:
        base = self.base.rstrip("/")
        return f"{base}/{rel.lstrip('/')}"

    def path(self, rel: str) -> PurePosixPath:  # type: ignore[override]
        """The path on the device (a pure path: nothing on the host is ever opened by it)."""
        return PurePosixPath(self.remote_path(rel))

    def rel(self, path: Any) -> str:
        text = str(path)
        base = self.base.rstrip("/")
        if text.startswith(base + "/"):
            return text[len(base):]
        return text

    def _ask(self, code: str) -> tuple[int, bytes]:
        return self.target.shell().request(code)

    # ------------------------------------------------------------------ reads
    def exists(self, rel: str) -> bool:
        return self._ask(f"[ -e {q(self.remote_path(rel))} ]")[0] == 0

    def is_dir(self, rel: str) -> bool:
        return self._ask(f"[ -d {q(self.remote_path(rel))} ]")[0] == 0

    def read_bytes(self, rel: str) -> bytes | None:
        path = q(self.remote_path(rel))
        status, out = self._ask(f"[ -f {path} ] && od -An -tx1 -v -- {path} 2>/dev/null")
        if status != 0:
            return None
        try:
            return bytes.fromhex(out.decode("ascii"))
        except (UnicodeDecodeError, ValueError):
            return None

    def listdir(self, rel: str) -> list[str]:
        path = q(self.remote_path(rel))
        status, out = self._ask(f"[ -d {path} ] && ls -1a -- {path} 2>/dev/null")
        if status != 0:
            return []
        names = out.decode("utf-8", "replace").splitlines()
        return sorted(n for n in names if n and n not in (".", ".."))

    def identity(self, rel: str) -> str:
        """The resolved path of ``rel`` on the device (equal for two names of one file)."""
        path = q(self.remote_path(rel))
        status, out = self._ask(f"readlink -f -- {path}")
        text = out.decode("utf-8", "replace").strip()
        return text if status == 0 and text else self.remote_path(rel)

    # ------------------------------------------------------------------ writes
    def may_write(self, rel: str, can_write: Callable[[Path], bool]) -> bool:
        from ..system.tuning import default_can_write

        if can_write is not default_can_write:  # a test's or a caller's own rule
            return can_write(Path(self.remote_path(rel)))
        return self._ask(f"[ -w {q(self.remote_path(rel))} ]")[0] == 0

    def resolve_setting(self, rel: str) -> PurePosixPath:
        """``rel`` resolved on the device and checked as :func:`~..system.writer.resolve_target`
        checks a local one."""
        from ..system.allowlist import check_allowed, is_allowed

        check_allowed(rel)
        path = q(self.remote_path(rel))
        status, out = self._ask(f"readlink -f -- {path}")
        real = out.decode("utf-8", "replace").strip()
        if status != 0 or not real:
            raise SystemControlError(f"{rel}: cannot be resolved on {self.spec.address}")
        base = self.base.rstrip("/")
        if not real.startswith(base + "/"):
            raise SystemControlError(f"{rel} resolves to {real}, outside the root {self.base} "
                                     f"on {self.spec.address}: not written (symlinks are not "
                                     "followed out of the allowed files)")
        real_rel = real[len(base):]
        if not is_allowed(real_rel):
            raise SystemControlError(f"{rel} resolves to {real_rel} on {self.spec.address}, "
                                     "which steadybench may not change: not written")
        return PurePosixPath(real)

    def write_resolved(self, path: PurePosixPath, data: bytes) -> None:
        """Write ``data`` in place to the regular file ``path`` on the device, following no
        symbolic link (see the module docstring). Raises OSError as a local write does."""
        octal = "".join(f"\\{b:03o}" for b in data)
        code = (f"( p={q(str(path))}; x=$p; "
                "while [ -n \"$x\" ] && [ \"$x\" != / ]; do "
                "if [ -L \"$x\" ]; then echo 'a symbolic link in the path is not followed'; "
                "exit 40; fi; x=${x%/*}; done; "
                "[ -f \"$p\" ] || { echo 'missing, or not a regular file'; exit 41; }; "
                f"{{ printf '{octal}' > \"$p\"; }} 2>&1 || exit 42 )")
        status, out = self._ask(code)
        if status != 0:
            why = out.decode("utf-8", "replace").strip().splitlines()
            text = why[-1] if why else f"status {status}"
            code_errno = errno.ELOOP if status == 40 else errno.EINVAL if status == 41 \
                else errno.EIO
            raise OSError(code_errno, f"{text} (on {self.spec.address})", str(path))

    # ------------------------------------------------------------------ host side
    def process_root(self) -> SysRoot:
        """The journals' writers run on the host: their liveness is read from its ``/proc``."""
        return SysRoot("/")

    def journal_dir(self) -> Path:
        """``STATE/targets/KIND-HOST-DIGEST``: this target's journals, on the host (0700)."""
        from ..system.journal import state_dir
        from ..system.privatefiles import ensure_private_dir

        top = ensure_private_dir(state_dir(), strict=True)
        folder = ensure_private_dir(top / TARGETS_DIR, strict=True)
        return ensure_private_dir(folder / self.spec.folder_name, strict=True)

    def architecture(self) -> str:
        """The device's architecture (``uname -m`` there)."""
        status, out = self._ask("uname -m")
        return out.decode("utf-8", "replace").strip() if status == 0 else "unknown"

    def affinity_calls(self) -> dict[str, Callable[..., Any]]:
        """Pinning on the device: the CPU set is kept by the target and every program is started
        under ``taskset MASK`` (:mod:`.remote_run`)."""
        return {"setaffinity": self._set_affinity, "getaffinity": self._get_affinity}

    def _online(self) -> set[int]:
        from ..system.readers import read_cpus

        return {c["cpu"] for c in read_cpus(self) if c["online"]}

    def _get_affinity(self, pid: int) -> set[int]:
        pinned = getattr(self.target, "pin", None)
        return set(pinned) if pinned is not None else self._online()

    def _set_affinity(self, pid: int, cpus: Any) -> None:
        wanted = sorted(int(c) for c in cpus)
        try:
            have_taskset = self.target.has("taskset")
        except TargetError as exc:
            raise OSError(errno.EIO, str(exc)) from None
        if not have_taskset:
            raise OSError(errno.ENOENT, f"taskset is not installed on {self.spec.address}")
        online = self._online()
        if not wanted or not set(wanted) <= online:
            raise OSError(errno.EINVAL, f"CPUs {wanted} are not all online on "
                                        f"{self.spec.address}")
        self.target.pin = None if set(wanted) == online else wanted  # type: ignore[attr-defined]
