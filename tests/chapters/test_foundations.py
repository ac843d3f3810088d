import numpy as np
import pytest
from pairs import assert_differ_in_row0

from dpnb.chapters.foundations import ball_pair, box_pair


@pytest.mark.parametrize("n, d", [(1, 1), (3, 4), (10, 16)])
def test_box_pair_attains_the_sum_and_mean_bounds(n, d):
    X, X_prime = box_pair(n, d)
    assert_differ_in_row0(X, X_prime)
    assert np.abs(X.sum(axis=0) - X_prime.sum(axis=0)).sum() == pytest.approx(2 * d)
    assert np.abs(X.mean(axis=0) - X_prime.mean(axis=0)).sum() == pytest.approx(2 * d / n)
    X, X_prime = box_pair(n, d, low=0.0)
    assert X_prime.min() == 0.0 and X.max() == 1.0
    assert np.abs(X.sum(axis=0) - X_prime.sum(axis=0)).sum() == pytest.approx(d)


@pytest.mark.parametrize("n, d, bound", [(1, 1, 1.0), (2, 1, 0.5), (1, 2, np.sqrt(2)), (10, 16, np.sqrt(2) / 10)])
def test_ball_pair_attains_the_covariance_bound(n, d, bound):
    X, X_prime = ball_pair(n, d)
    assert_differ_in_row0(X, X_prime)
    assert np.all(np.linalg.norm(X_prime, axis=1) <= 1)
    change = np.linalg.norm(X.T @ X / n - X_prime.T @ X_prime / n)
    assert change == pytest.approx(bound, rel=1e-12)


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: box_pair(0, 2), ValueError),
        (lambda: box_pair(2, 2.0), TypeError),
        (lambda: box_pair(2, 2, low=1.0), ValueError),
        (lambda: box_pair(2, 2, low=np.nan), ValueError),
        (lambda: ball_pair(2, 0), ValueError),
    ],
)
def test_bad_input(call, error):
    with pytest.raises(error):
        call()
