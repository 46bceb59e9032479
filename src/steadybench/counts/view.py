"""The paths a counted process sees: the same whatever directory the code lives in.

A count per call depends on where the process's heap objects lie, and that depends on the
lengths of the strings made before the calls. Among them are the paths the process is given:
the benchmark file, the working directory, the checkout on ``sys.path``. The interpreter also
caches a listing of every directory on ``sys.path``. The same file counted from
``/tmp/c26/d1`` and from ``/tmp/c26/dd2long_name_here/x`` differed by 0.01 % per call; run
from a checkout and from ``ab``'s worktree it differed by 0.1 % (a JSON round trip of 2,000
keys, 61 million instructions per call). The old design started one process per point. There,
two ``ab`` runs of one revision differed by 0.06 %.

So each counted process gets a view: a private directory with a fixed-length name
(:func:`tempfile.mkdtemp`), holding one symbolic link per directory the case needs. These are
``v0`` for the working directory, ``v1`` for the benchmark file's directory, then ``v2``, ``v3``,
… for the extra ``sys.path`` entries (``ab``'s worktree). Every path handed to the process is
rewritten through the links (:meth:`PathView.map`). The process starts inside the view (its
``sys.path[0]``). Identical code then sees paths of identical lengths, wherever it lives. The
benchmark file's bytecode cache is written anew with the view's path in it
(:func:`compile_as`): a cache written from the real path would make the process read, then
replace, strings of the real path's length. The shell's ``PWD`` and ``OLDPWD`` are left out of
the process's environment (:mod:`.layout`). Two things still count: the file's own name, and
what the code itself does with paths (reading ``os.getcwd()``, which resolves links; importing
its own modules, whose caches keep the path they were first compiled from).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class PathView:
    """A directory of links: ``links`` pairs each real directory with its link's path."""

    root: str
    links: tuple[tuple[str, str], ...]

    def map(self, path: str) -> str:
        """``path`` through the link of the longest directory that holds it (unchanged when
        none does, or for ``''``)."""
        if not path:
            return path
        full = os.path.abspath(path)
        best: tuple[str, str] | None = None
        for real, link in self.links:
            for form in {real, os.path.realpath(real)}:
                if (full == form or full.startswith(form.rstrip(os.sep) + os.sep)) and (
                        best is None or len(form) > len(best[0])):
                    best = (form, link)
        if best is None:
            return path
        rest = os.path.relpath(full, best[0])
        return best[1] if rest == "." else os.path.join(best[1], rest)


def make_view(root: str, directories: Sequence[str]) -> PathView:
    """Links ``root/v0``, ``root/v1``, … to ``directories`` (in that order) in ``root``, an
    existing private directory."""
    links = []
    for k, directory in enumerate(directories):
        link = os.path.join(root, f"v{k}")
        os.symlink(os.path.abspath(directory), link)
        links.append((os.path.abspath(directory), link))
    return PathView(root, tuple(links))


def compile_as(file: str, shown: str) -> None:
    """Write ``file``'s bytecode cache as if it had been compiled from ``shown`` (the path the
    counted process imports it by). Where the cache cannot be written (a read-only checkout),
    nothing is done: the process then compiles the file itself, from the path it is given."""
    import py_compile

    with contextlib.suppress(OSError, py_compile.PyCompileError):
        py_compile.compile(file, dfile=shown, doraise=True)
