"""The values the comparison's options take, for the command line.

Kept apart from :mod:`.protocol` and :mod:`.suite`, which import numpy and scipy, so that
``steadybench compare --help`` does not load them.
"""

#: ``--small-sample``: a small sample whose assumption check fails is called inconclusive, or
#: gets a bootstrap test
SMALL_SAMPLE_MODES = ("inconclusive", "bootstrap")
#: ``--weights``: the weights of a suite's overall gain
WEIGHTS = ("equal", "fraction", "custom")
