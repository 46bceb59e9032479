"""The house's layers: no import cycles between steadybench's modules, and the registries that
replaced the two cycles (issue 24)."""

from __future__ import annotations

import sys
import types

import pytest

from steadybench.system import journal as journal_mod
from steadybench.system import sysfs


def _cycles() -> list[list[str]]:
    """Strongly connected components (> 1 module) of the runtime import graph: every import,
    function-level ones included, but not those under ``if TYPE_CHECKING`` and not the
    package root's lazy names (PEP 562). Tarjan's algorithm."""
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("steadybench", exclude_type_checking_imports=True)
    mods = sorted(m for m in graph.modules if m != "steadybench")
    adj = {m: [n for n in graph.find_modules_directly_imported_by(m) if n != "steadybench"]
           for m in mods}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in adj[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for m in mods:
            if m not in index:
                visit(m)
    finally:
        sys.setrecursionlimit(limit)
    return found


def test_no_import_cycles():
    assert _cycles() == []


def test_remote_roots_are_opened_through_the_scheme_registry(tmp_path, monkeypatch):
    assert sysfs.root_opener("ssh://bench@host") == "steadybench.targets:remote_root"
    assert sysfs.root_opener("adb") == "steadybench.targets:remote_root"
    assert sysfs.root_opener("adb?serial=X") == "steadybench.targets:remote_root"
    assert sysfs.root_opener("adbfiles") is None and sysfs.root_opener("/") is None
    assert isinstance(sysfs.open_root("/tmp"), sysfs.SysRoot)
    # a package adding a kind of target registers its scheme
    fake = types.ModuleType("sb_fake_targets")
    fake.open_it = lambda text: sysfs.SysRoot(str(tmp_path))  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sb_fake_targets", fake)
    monkeypatch.setattr(sysfs, "ROOT_SCHEMES", dict(sysfs.ROOT_SCHEMES))
    sysfs.register_root_scheme("lab://", "sb_fake_targets:open_it")
    assert sysfs.open_root("lab://rack1").root == tmp_path.resolve()


def test_undo_entries_are_undone_through_the_handler_registry(tmp_path, monkeypatch):
    seen = []
    fake = types.ModuleType("sb_fake_undo")
    fake.undo = lambda item: seen.append(item) or "fake undone"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sb_fake_undo", fake)
    monkeypatch.setitem(journal_mod.UNDO_HANDLERS, "gpu_clocks", "sb_fake_undo:undo")
    journal = journal_mod.Journal.__new__(journal_mod.Journal)
    item = {"kind": "gpu_clocks", "index": 0, "uuid": "GPU-1", "mhz": [1, 2]}
    assert journal._undo_one(item, kill=lambda pid, sig: None) == "fake undone"
    assert seen == [item]
