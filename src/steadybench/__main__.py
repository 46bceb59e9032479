"""``python -m steadybench``: the command line, as the ``steadybench`` script runs it."""

from .cli import main

main()
