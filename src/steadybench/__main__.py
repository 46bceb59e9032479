"""``python -m steadybench``: the command line, as the ``steadybench`` script runs it (through
:mod:`steadybench.entry`, so that Ctrl-C during start-up exits 130 quietly)."""

import sys

from .entry import main

sys.exit(main())
