"""Starting children that a test will interrupt.

A test suite started as a background job of a script (``cmd &`` in a non-interactive shell)
inherits SIGINT ignored, and so would every child it starts: Python then installs no
KeyboardInterrupt handler and a test's SIGINT is lost. A user's Ctrl-C reaches a foreground
process whose SIGINT is not ignored; :func:`default_sigint` gives the child that situation.
"""

from __future__ import annotations

import signal


def default_sigint() -> None:
    """``preexec_fn`` for ``subprocess.Popen``: SIGINT, SIGTERM and SIGHUP back to their
    defaults in the child (``nohup`` also leaves SIGHUP ignored)."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
