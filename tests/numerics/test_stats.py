import numpy as np
import pytest
from scipy import stats as st

from dpnb.numerics.stats import bootstrap_ci, clopper_pearson, mean_ci, variance_ci


def _assert_covers(make_interval, truth, rng, reps=2000, level=0.95):
    """``make_interval(rng)`` covers ``truth`` in ``reps`` draws as often as a ``level`` interval should.

    The coverage count is Binomial(reps, level): accept its central 99.9 % range.
    """
    hits = 0
    for _ in range(reps):
        lo, hi = make_interval(rng)
        hits += lo <= truth <= hi
    lo, hi = st.binom.ppf([0.0005, 0.9995], reps, level)
    assert lo <= hits <= hi


def test_mean_ci_coverage():
    _assert_covers(lambda r: mean_ci(r.normal(3.0, 2.0, size=20))[1:], 3.0, np.random.default_rng(1))


def test_variance_ci_coverage():
    _assert_covers(lambda r: variance_ci(r.normal(0.0, 1.5, size=15))[1:], 2.25, np.random.default_rng(2))


def test_clopper_pearson_known_values_and_edges():
    lo, hi = clopper_pearson(0, 10, 0.95)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 10))
    lo, hi = clopper_pearson(10, 10, 0.95)
    assert hi == 1.0 and lo == pytest.approx(0.025 ** (1 / 10))
    lo, hi = clopper_pearson(5, 10)
    assert lo < 0.5 < hi
    for bad in ((11, 10), (-1, 10), (1, 0), (1.5, 10)):
        with pytest.raises(ValueError):
            clopper_pearson(*bad)
    with pytest.raises(ValueError, match="confidence"):
        clopper_pearson(1, 10, 1.5)


def test_bootstrap_ci_contains_estimate_and_is_seeded():
    x = np.random.default_rng(3).exponential(size=200)
    est, lo, hi = bootstrap_ci(x, np.median, random_state=0)
    assert lo <= est <= hi
    assert bootstrap_ci(x, np.median, random_state=0) == (est, lo, hi)


def test_bad_samples():
    with pytest.raises(ValueError, match="at least 2"):
        mean_ci([1.0])
    with pytest.raises(ValueError, match="NaN"):
        variance_ci([1.0, np.nan])
