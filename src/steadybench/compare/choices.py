"""The values the comparison's options take, for the command line.

Kept apart from :mod:`.protocol` and :mod:`.suite`, which import numpy and scipy, so that
``steadybench compare --help`` does not load them.
"""

#: ``--small-sample``: a small sample whose normality check fails is called inconclusive, or
#: gets a permutation test (exact under "same distribution", whatever the shape)
SMALL_SAMPLE_MODES = ("inconclusive", "permutation")
#: ``--weights``: the weights of a suite's overall gain
WEIGHTS = ("equal", "fraction", "custom")
