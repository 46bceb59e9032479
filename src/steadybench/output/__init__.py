"""Outputs: loggers (console, JSON, XML, CSV, Markdown), and results file I/O.

The names below load on first use (PEP 562, :mod:`steadybench.lazy`): ``@benchmark`` imports
:mod:`.rates` alone, also in a counted process, where every module imported is counted.
"""

from ..lazy import lazy_exports

_LAZY = dict.fromkeys(("load_results", "results_to_json", "write_results"), ".results_io")

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)
