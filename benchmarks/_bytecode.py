"""Give steadybench's package its compiled bytecode before a comparison with other tools.

pip compiles every package it installs (pyperf, pytest-benchmark...), but an editable install
of steadybench under ``PYTHONDONTWRITEBYTECODE`` (set by many containers and CI images) has
none: each of its worker processes would compile steadybench's modules from source, about
30 ms per execution that an installed copy does not pay. This compiles the package as an
install would, with checked-hash pycs (PEP 552), which an import validates against the source's
hash, so an edited module is never run from stale bytecode.
"""

from __future__ import annotations

import compileall
import py_compile
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "steadybench"


def compile_steadybench() -> None:
    if PACKAGE.is_dir():
        compileall.compile_dir(str(PACKAGE), quiet=1,
                               invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
