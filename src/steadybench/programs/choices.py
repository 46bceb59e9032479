"""The values the programs' options take, for the command line.

Kept apart from :mod:`.exec`, which imports numpy and scipy, so that ``steadybench exec --help``
does not load them.
"""

#: ``--order``: how the commands are interleaved, run by run
ORDERS = ("round-robin", "random")
