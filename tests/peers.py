"""pytest-benchmark for the tests that run steadybench beside it, without it in the venv.

``make demo``'s venv, which the README sends users to, must not have pytest-benchmark: with it
installed, a ``benchmark`` fixture test silently runs pytest-benchmark (issue 28 item 4). So
``make test`` installs it apart, in ``.venv/peers`` (``pip install --target``), and names that
folder in ``$STEADYBENCH_TEST_PEERS``. It is never on this test process's path - pytest would
load it as a plugin for the whole suite - only on the ``PYTHONPATH`` of the pytest subprocesses
of the tests that need it (:func:`env`).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

#: why a test that needs pytest-benchmark is skipped
REASON = ("pytest-benchmark is not available: `make test` installs it apart in .venv/peers "
          "(or set STEADYBENCH_TEST_PEERS to a folder that holds it)")


def folder() -> Path | None:
    """The folder that holds pytest-benchmark apart, or None."""
    named = os.environ.get("STEADYBENCH_TEST_PEERS")
    path = Path(named) if named else Path(__file__).resolve().parent.parent / ".venv" / "peers"
    return path if (path / "pytest_benchmark").is_dir() else None


def available() -> bool:
    """pytest-benchmark can be loaded by a pytest subprocess given :func:`env`."""
    return folder() is not None or importlib.util.find_spec("pytest_benchmark") is not None


def env(base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) with the peers' folder first on
    ``PYTHONPATH``."""
    out = dict(os.environ if base is None else base)
    where = folder()
    if where is not None:
        out["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(where), out.get("PYTHONPATH", "")) if p)
    return out
