"""Git revisions as A/B variants: each revision checked out in its own worktree and prepared by
a build command the user gives (``steadybench ab --rev-a REV --rev-b REV --build CMD``).

Worktrees are created detached under a temporary directory (``git worktree add --detach``), so
the user's checkout and branches are never touched, and removed on every exit path
(``git worktree remove --force``, then ``git worktree prune``).
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigurationError


class BuildFailed(ConfigurationError):
    """The build command failed in a revision's worktree; ``reason`` says how (``bisect``
    skips such a commit, as ``git bisect`` does with exit status 125)."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Worktree:
    """One revision checked out: where, and which commit."""

    revision: str
    commit: str
    path: str


def _git(args: list[str], cwd: str) -> str:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    except FileNotFoundError:
        raise ConfigurationError("git is not installed (needed for --rev-a/--rev-b)") from None
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["failed"])[-1]
        raise ConfigurationError(f"git {' '.join(args)}: {last}")
    return proc.stdout.strip()


def repository_relative(path: str, root: str) -> str:
    """``path`` relative to the repository's top level, where it is in every worktree."""
    try:
        return str(Path(path).resolve().relative_to(root))
    except ValueError:
        raise ConfigurationError(f"{path}: not inside the git repository {root}") from None


def repository_root(start: str = ".") -> str:
    """The top level of the git repository that holds ``start``; one clear line if none."""
    return _git(["rev-parse", "--show-toplevel"], start)


@contextlib.contextmanager
def worktrees(revisions: list[str], build: str | None, root: str) -> Iterator[list[Worktree]]:
    """Check out each revision in a fresh worktree, run ``build`` in it (a shell command), and
    remove them all afterwards."""
    base = tempfile.mkdtemp(prefix="steadybench-ab-")
    made: list[Worktree] = []
    try:
        for i, rev in enumerate(revisions):
            commit = _git(["rev-parse", "--verify", f"{rev}^{{commit}}"], root)
            path = str(Path(base) / f"{'ab'[i] if i < 2 else i}-{commit[:12]}")
            _git(["worktree", "add", "--detach", path, commit], root)
            made.append(Worktree(rev, commit, path))
            if build:
                proc = subprocess.run(build, shell=True, cwd=path, capture_output=True,
                                      text=True)
                if proc.returncode != 0:
                    tail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-1:]
                    reason = f"status {proc.returncode}" + (f": {tail[0]}" if tail else "")
                    raise BuildFailed(f"--build failed for revision {rev} ({commit[:12]}) "
                                      f"with {reason}", reason)
        yield made
    finally:
        for tree in made:
            with contextlib.suppress(ConfigurationError):
                _git(["worktree", "remove", "--force", tree.path], root)
        with contextlib.suppress(ConfigurationError):
            _git(["worktree", "prune"], root)
        shutil.rmtree(base, ignore_errors=True)
