"""``steadybench exec``, ``steadybench iters`` and ``steadybench sweep``: external programs.

See ``docs/programs.md``. The measuring code lives in :mod:`steadybench.programs`; this package
only turns options into settings, prints the summary and writes the files: one module per
command (:mod:`.exec`, :mod:`.iters`, :mod:`.sweep`) and what they share (:mod:`.shared`).
"""

from __future__ import annotations

from ..validate import harden
from .exec import exec_cmd
from .iters import iters_cmd
from .shared import hyperfine_positionals, machine_control
from .sweep import sweep_cmd

__all__ = ["commands", "exec_cmd", "hyperfine_positionals", "iters_cmd", "machine_control",
           "sweep_cmd"]

#: every numeric option validated, the shared ones (stop options) too: see cli/validate.py
commands = [harden(c) for c in (exec_cmd, iters_cmd, sweep_cmd)]
