import math

import numpy as np
import pytest
from sklearn.base import clone

from dpnb.papers.mst import MST, bun_steinke_rho, discretize
from dpnb.privacy import exact_noise
from dpnb.privacy.estimator import budget_total


def _chain(n=4000, seed=0):
    """Columns a -> b -> c strongly dependent, d independent; 3, 3, 3, 2 values."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = np.where(rng.random(n) < 0.9, a, rng.integers(0, 3, n))
    c = np.where(rng.random(n) < 0.9, b, rng.integers(0, 3, n))
    d = rng.integers(0, 2, n)
    return np.column_stack([a, b, c, d]), [3, 3, 3, 2]


def test_zcdp_conversion_round_trips():
    rho = bun_steinke_rho(1.0, 1e-6)
    assert rho + 2 * math.sqrt(rho * math.log(1e6)) == pytest.approx(1.0)
    assert bun_steinke_rho(math.inf, 1e-6) == math.inf
    assert bun_steinke_rho(1.0, 1e-6) < exact_noise.zcdp_rho(1.0, 1e-6)  # sufficient, so below the tight rho
    with pytest.raises(ValueError, match="delta"):
        bun_steinke_rho(1.0, 0.0)
    with pytest.raises(ValueError, match="epsilon"):
        bun_steinke_rho(-1.0, 1e-6)
    with pytest.raises(TypeError, match="epsilon"):
        bun_steinke_rho("1", 1e-6)


def test_noiseless_mst_recovers_the_dependence_tree_and_its_marginals():
    X, sizes = _chain()
    model = MST(np.inf, 1e-9, domain_sizes=sizes, random_state=0).fit(X)
    undirected = {tuple(sorted(e)) for e in model.edges_}
    assert {(0, 1), (1, 2)} <= undirected and len(undirected) == 3
    synth = model.sample(20000)
    for i, j in [(0, 1), (1, 2)]:
        real = np.histogram2d(X[:, i], X[:, j], bins=[3, 3])[0] / len(X)
        fake = np.histogram2d(synth[:, i], synth[:, j], bins=[3, 3])[0] / len(synth)
        # each cell a proportion of 20000 draws: sd <= 0.0036; 5 sd plus the real data's own 4000-row noise
        assert np.max(np.abs(real - fake)) < 0.03


def test_private_mst_budget_noise_and_determinism():
    X, sizes = _chain()
    model = MST(1.0, 1e-6, domain_sizes=sizes, random_state=3).fit(X)
    assert budget_total(model.budget_) == pytest.approx((1.0, 1e-6))
    rho = bun_steinke_rho(1.0, 1e-6) / 3
    assert model.noise_["one-way sigma"] == pytest.approx(math.sqrt(2) * math.sqrt(4 / (2 * rho)))
    again = clone(model).fit(X)
    assert np.array_equal(model.sample(50), MST(1.0, 1e-6, domain_sizes=sizes, random_state=3).fit(X).sample(50))
    assert again.edges_ == model.edges_
    assert model.sample(10).shape == (10, 4)


def test_discretize_uses_declared_bounds_and_keeps_codes():
    X = np.array([[0.0, 2.0], [5.0, 1.0], [10.0, 0.0], [20.0, 2.0]])
    codes = discretize(X, (np.array([0.0, 0.0]), np.array([10.0, 2.0])), n_bins=4, categorical=[1])
    np.testing.assert_array_equal(codes, [[0, 2], [2, 1], [3, 0], [3, 2]])
    with pytest.raises(ValueError):
        discretize(X, (np.array([1.0, 0.0]), np.array([1.0, 2.0])))


@pytest.mark.parametrize(
    "kwargs, X, error",
    [
        ({"domain_sizes": [3, 3]}, np.zeros((5, 2)), TypeError),
        ({}, np.zeros((5, 2), dtype=int), ValueError),
        ({"domain_sizes": [3]}, np.zeros((5, 2), dtype=int), ValueError),
        ({"domain_sizes": [3, 3]}, np.full((5, 2), 3), ValueError),
        ({"domain_sizes": [3]}, np.zeros((5, 1), dtype=int), ValueError),
        ({"domain_sizes": [3, 3], "epsilon": 0.0}, np.zeros((5, 2), dtype=int), ValueError),
    ],
)
def test_bad_input(kwargs, X, error):
    with pytest.raises(error):
        MST(**kwargs).fit(X)


def test_sample_before_fit():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        MST(domain_sizes=[2, 2]).sample(3)


def test_bun_steinke_rho_at_the_edges_of_float64():
    """A subnormal delta (1 / delta overflowed: rho was NaN) and a tiny epsilon (the difference of square roots
    cancelled to 0) give the closed form's value; a sigma beyond 1e300 is refused naming epsilon and delta."""
    log_term = -math.log(5e-324)
    assert bun_steinke_rho(1.0, 5e-324) == pytest.approx((math.sqrt(log_term + 1) - math.sqrt(log_term)) ** 2)
    assert bun_steinke_rho(1e-20, 1e-9) == pytest.approx(1e-40 / (4 * math.log(1e9)), rel=1e-12)
    assert bun_steinke_rho(0.5, 1e-6) == (math.sqrt(math.log(1e6) + 0.5) - math.sqrt(math.log(1e6))) ** 2
    X = np.zeros((4, 3), dtype=np.int64)
    with pytest.raises(ValueError, match="epsilon"):
        MST(1e-160, 1e-9, domain_sizes=[2, 2, 2]).fit(X)
