"""What git says about the project a result was measured in: commit, branch, dirty flag.

Read with the ``git`` command (``rev-parse``, ``status --porcelain``), in the directory the
command runs in. Outside a repository, or without git, every field is None and
:attr:`GitInfo.note` says why, so a record is still made, without commit data.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from ..errors import SteadybenchError

#: seconds a git command may take (a huge repository's status can be slow)
GIT_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class GitInfo:
    """The state of the working tree: ``commit`` (full hash), ``branch`` (None when detached),
    ``dirty`` (tracked files modified), ``toplevel`` (the repository's root), ``note`` (why
    there is no commit data)."""

    commit: str | None = None
    branch: str | None = None
    dirty: bool | None = None
    toplevel: str | None = None
    commit_time: str | None = None
    note: str | None = None

    @property
    def short(self) -> str:
        return self.commit[:10] if self.commit else "—"


def _git(args: list[str], cwd: str | os.PathLike[str] | None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=GIT_TIMEOUT_S, stdin=subprocess.DEVNULL, check=False)


def git_info(cwd: str | os.PathLike[str] | None = None) -> GitInfo:
    """The commit, branch and dirty flag of the repository containing ``cwd``."""
    try:
        top = _git(["rev-parse", "--show-toplevel"], cwd)
    except FileNotFoundError:
        return GitInfo(note="git is not installed: recorded without commit data")
    except (OSError, subprocess.TimeoutExpired) as exc:
        return GitInfo(note=f"git could not be run ({exc}): recorded without commit data")
    if top.returncode != 0:
        return GitInfo(note="not in a git repository: recorded without commit data")
    toplevel = top.stdout.strip()
    head = _git(["rev-parse", "--verify", "-q", "HEAD"], cwd)
    if head.returncode != 0:
        return GitInfo(toplevel=toplevel,
                       note="the git repository has no commit yet: recorded without commit data")
    branch = _git(["symbolic-ref", "-q", "--short", "HEAD"], cwd)
    status = _git(["status", "--porcelain", "--untracked-files=no"], cwd)
    when = _git(["show", "-s", "--format=%cI", "HEAD"], cwd)
    return GitInfo(commit=head.stdout.strip(),
                   branch=branch.stdout.strip() or None if branch.returncode == 0 else None,
                   dirty=bool(status.stdout.strip()) if status.returncode == 0 else None,
                   toplevel=toplevel,
                   commit_time=when.stdout.strip() or None if when.returncode == 0 else None)


def resolve_commit(ref: str, cwd: str | os.PathLike[str] | None = None) -> str | None:
    """The full commit hash ``ref`` names (``HEAD~1``, a branch, a tag, a short hash), or None
    when git does not know it (or there is no repository)."""
    if not ref or ref.startswith("-"):
        return None
    try:
        out = _git(["rev-parse", "--verify", "-q", f"{ref}^{{commit}}"], cwd)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else None


class GitError(SteadybenchError):
    """A git reference could not be resolved."""
