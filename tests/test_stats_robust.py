"""The robust spread (1.4826·MAD) against R's ``mad()``.

Reference values from R 4.2.2:
    x <- c(2.5, 1, 7, 3.25, 11, 4, 4.5, 100)
    mad(x)             # 3.33585
    mad(x, center = 0) # 6.30105
    mad(c(1, 2, 3, 4, 100))  # 1.4826
"""

import numpy as np
import pytest

from steadybench.stats.robust import mad, robust_sd

X = [2.5, 1, 7, 3.25, 11, 4, 4.5, 100]


@pytest.mark.parametrize("convert", [list, np.asarray], ids=["list", "numpy"])
def test_robust_sd_matches_r_mad(convert):
    assert robust_sd(convert(X)) == pytest.approx(3.33585, rel=1e-12)
    assert robust_sd(convert(X), centre=0.0) == pytest.approx(6.30105, rel=1e-12)
    assert robust_sd(convert([1, 2, 3, 4, 100])) == pytest.approx(1.4826, rel=1e-12)


def test_one_wild_value_barely_moves_it():
    base = [10.0, 10.2, 9.9, 10.1, 9.8, 10.05, 9.95]
    assert mad(base + [1e6]) == pytest.approx(mad(base + [10.3]), rel=0.5)
    assert np.std(base + [1e6]) > 1e5  # while the SD is ruined
