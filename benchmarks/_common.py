"""What the comparison scripts (``reproducibility.py``, ``verdicts.py``) share.

:func:`compile_steadybench` gives steadybench's package its compiled bytecode before a
comparison with other tools.

pip compiles every package it installs (pyperf, pytest-benchmark...), but an editable install
of steadybench under ``PYTHONDONTWRITEBYTECODE`` (set by many containers and CI images) has
none: each of its worker processes would compile steadybench's modules from source, about
30 ms per execution that an installed copy does not pay. This compiles the package as an
install would, with checked-hash pycs (PEP 552), which an import validates against the source's
hash, so an edited module is never run from stale bytecode.
"""

from __future__ import annotations

import argparse
import compileall
import json
import py_compile
import sys
from collections.abc import Callable
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "steadybench"


def compile_steadybench() -> None:
    if PACKAGE.is_dir():
        compileall.compile_dir(str(PACKAGE), quiet=1,
                               invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)


def parse_list(value: str, known: dict) -> list[str]:
    """A comma-separated ``--tools``/``--workloads`` value: names of ``known``, each once."""
    names = [v.strip() for v in value.split(",") if v.strip()]
    unknown = [v for v in names if v not in known]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"choose from {', '.join(known)} (got {value!r})")
    return list(dict.fromkeys(names))


def available(tools: list[str], missing: Callable[[str], str | None]) -> list[str]:
    """The tools that can run here; each one that cannot is named on stderr with the reason."""
    found = []
    for tool in tools:
        reason = missing(tool)
        if reason:
            print(f"skipping {reason}", file=sys.stderr)
        else:
            found.append(tool)
    return found


def save_json(path: Path | None, results: dict, what: str = "raw figures") -> None:
    """Write ``results`` to ``path`` (when one was asked for) and say so."""
    if path:
        path.write_text(json.dumps(results, indent=2) + "\n")
        print(f"\n{what} written to {path}")
