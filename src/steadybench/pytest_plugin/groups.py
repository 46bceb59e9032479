"""How the session summary groups benchmarks (``--steadybench-group-by``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..model.results import CaseResult

#: ``group``: the benchmark's group (``benchmark.group`` or the marker), ``module``: its test
#: file, ``func``: the test function without its parameters, ``param``: its parameter id
GROUP_BY = ("group", "module", "func", "param")


def group_key(case: CaseResult, by: str) -> str:
    fullname = str(case.extra.get("fullname") or case.benchmark)
    if by == "module":
        return fullname.split("::", 1)[0]
    if by == "func":
        return fullname.split("[", 1)[0]
    if by == "param":
        return str(case.extra.get("param") or "")
    return str(case.extra.get("group") or "")
