"""Tests for dpnb.private_pca: MOD-SULQ, PPCA, the utility, the estimators and bad input."""

import numpy as np
import pytest
from scipy import stats

from dpnb.bingham import vector_bingham_exact
from dpnb.mechanisms import gaussian_delta
from dpnb.private_pca import (PPCA, ModSULQ, mod_sulq, mod_sulq_beta, mod_sulq_sigma, ppca, second_moment,
                              upper_triangle_sensitivity, utility_qf)
from dpnb.stats import mean_ci


def _data(n=400, d=5, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, d)) * np.sqrt(np.array([0.5, 0.2, 0.05, 0.02, 0.01])[:d])
    return Z / np.maximum(np.linalg.norm(Z, axis=1), 1.0)[:, None]


def test_beta_formula():
    d, n, eps, delta = 10, 1000, 0.5, 1e-3
    t = np.sqrt(2 * np.log(110 / (2 * np.sqrt(2 * np.pi) * delta)))
    assert mod_sulq_beta(d, n, eps, delta) == pytest.approx(11 / (n * eps) * t + 1 / (n * np.sqrt(eps)), rel=1e-12)


def test_upper_triangle_sensitivity_attained_by_e1_e2():
    n, d = 7, 4
    X = np.zeros((n, d)); X[:, 0] = 1
    Xp = X.copy(); Xp[0] = np.eye(d)[1]
    iu = np.triu_indices(d)
    diff = (second_moment(X) - second_moment(Xp))[iu]
    assert np.linalg.norm(diff) == pytest.approx(upper_triangle_sensitivity(n))
    assert upper_triangle_sensitivity(n, data_norm=2.0) == pytest.approx(4 * np.sqrt(2) / n)


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
def test_beta_valid_and_analytic_exact(eps):
    n, d, delta = 500, 8, 1e-5
    Delta = upper_triangle_sensitivity(n)
    assert gaussian_delta(eps, mod_sulq_beta(d, n, eps, delta), Delta) <= delta
    sigma = mod_sulq_sigma(d, n, eps, delta, "analytic")
    assert gaussian_delta(eps, sigma, Delta) == pytest.approx(delta, rel=1e-6)
    assert sigma < mod_sulq_beta(d, n, eps, delta)


def test_mod_sulq_output_and_limits():
    X = _data()
    A = second_moment(X)
    V = mod_sulq(X, 2, 0.5, 1e-3, n_draws=6, random_state=1)
    assert V.shape == (6, 5, 2)
    np.testing.assert_allclose(np.einsum("mdi,mdj->mij", V, V), np.broadcast_to(np.eye(2), (6, 2, 2)), atol=1e-10)
    best = np.sort(np.linalg.eigvalsh(A))[-2:].sum()
    huge = utility_qf(A, mod_sulq(X, 2, 1e6, 1e-3, n_draws=3, random_state=2))
    np.testing.assert_allclose(huge, best, rtol=1e-6)
    low = utility_qf(A, mod_sulq(X, 2, 0.01, 1e-3, n_draws=200, random_state=3))
    assert low.mean() < 0.9 * best  # heavy noise really degrades the subspace


def test_mod_sulq_noise_is_symmetric_gaussian_with_sigma():
    # with A = 0 (all-zero rows), A + N = N: its quadratic form e_1^T N e_1 = N_11 ~ N(0, sigma^2) is not
    # observable from eigenvectors, but the GOE is rotation invariant: the top eigenvector is uniform, E v_i^2 = 1/d
    X = np.zeros((50, 4))
    V = mod_sulq(X, 1, 1.0, 1e-3, n_draws=6000, random_state=4)[:, :, 0]
    for i in range(4):
        _, lo, hi = mean_ci(V[:, i] ** 2, 0.999)
        assert lo <= 0.25 <= hi


def test_calibrations_and_seeding():
    X = _data()
    a = mod_sulq(X, 2, 0.5, 1e-3, calibration="analytic", random_state=5)
    b = mod_sulq(X, 2, 0.5, 1e-3, calibration="analytic", random_state=5)
    np.testing.assert_array_equal(a, b)
    assert mod_sulq_sigma(5, 400, 0.5, 1e-3, "classic") > mod_sulq_sigma(5, 400, 0.5, 1e-3, "analytic")


def test_ppca_shapes_trace_and_limit():
    X = _data()
    A = second_moment(X)
    V, tr = ppca(X, 2, 50.0, n_draws=5, n_iter=30, return_trace=True, random_state=6)
    assert V.shape == (5, 5, 2) and tr.shape == (30, 5)
    np.testing.assert_allclose(tr[-1], utility_qf(A, V), rtol=1e-10)
    best = np.sort(np.linalg.eigvalsh(A))[-2:].sum()
    assert np.all(utility_qf(A, V) > 0.97 * best)


def test_ppca_k1_distribution_is_the_exponential_mechanism():
    X = _data(n=200)
    A = second_moment(X)
    eps = 0.2
    g = np.abs(ppca(X, 1, eps, n_draws=4000, n_iter=10, random_state=7)[:, :, 0] @ np.linalg.eigh(A)[1][:, -1])
    e = np.abs(vector_bingham_exact(200 * eps / 2 * A, 4000, random_state=8) @ np.linalg.eigh(A)[1][:, -1])
    assert stats.ks_2samp(g, e).pvalue > 0.001


def test_utility_qf():
    A = np.diag([3.0, 2.0, 1.0])
    assert utility_qf(A, np.eye(3)[:, :2]) == pytest.approx(5.0)
    assert utility_qf(A, np.stack([np.eye(3)[:, :1], np.eye(3)[:, 2:]])).tolist() == [3.0, 1.0]
    with pytest.raises(ValueError, match="shape"):
        utility_qf(A, np.ones((4, 1)))


def test_second_moment_scaling_and_rejection():
    X = _data()
    np.testing.assert_allclose(second_moment(2 * X, data_norm=2.0), second_moment(X))
    with pytest.raises(ValueError, match="norm"):
        second_moment(2 * X)


def test_estimators_fit_transform():
    X = _data()
    for est in (ModSULQ(2, 1.0, 1e-3, random_state=9), ModSULQ(2, 1.0, 1e-3, calibration="analytic", random_state=9),
                PPCA(2, 1.0, n_iter=10, random_state=9)):
        with pytest.raises(ValueError, match="fit"):
            est.transform(X)
        Z = est.fit(X).transform(X)
        assert Z.shape == (400, 2)
        np.testing.assert_allclose(est.components_ @ est.components_.T, np.eye(2), atol=1e-8)
        with pytest.raises(ValueError, match="columns"):
            est.transform(X[:, :3])
    assert PPCA(2, 1.0, n_iter=7, random_state=1).fit(X).trace_.shape == (7,)
    assert ModSULQ(2, 1.0, 1e-3).fit(X).sigma_ == pytest.approx(mod_sulq_beta(5, 400, 1.0, 1e-3))


@pytest.mark.parametrize("call,match", [
    (lambda X: mod_sulq(X, 2, 0.0, 1e-3), "epsilon"),
    (lambda X: mod_sulq(X, 2, 1.0, 1.5), "delta"),
    (lambda X: mod_sulq(X, 6, 1.0, 1e-3), "k must satisfy"),
    (lambda X: mod_sulq(X, 2, 1.0, 1e-3, calibration="exact"), "calibration"),
    (lambda X: mod_sulq(X, 2, 2.0, 1e-3, calibration="classic"), "epsilon < 1"),
    (lambda X: mod_sulq(X, 2, 1.0, 1e-3, n_draws=0), "n_draws"),
    (lambda X: mod_sulq(X * 3, 2, 1.0, 1e-3), "norm"),
    (lambda X: mod_sulq(np.where(X > 0.3, np.nan, X), 2, 1.0, 1e-3), "NaN"),
    (lambda X: mod_sulq(X[:, 0], 1, 1.0, 1e-3), "2-dimensional"),
    (lambda X: ppca(X, 5, 1.0), "k < d"),
    (lambda X: ppca(X, 2, -1.0), "epsilon"),
    (lambda X: ppca(X, 2, 1.0, data_norm=0.0), "data_norm"),
    (lambda X: ppca(X, 2, 1.0, n_iter=-2), "n_iter"),
    (lambda X: mod_sulq_beta(0, 10, 1.0, 0.1), "d must"),
    (lambda X: upper_triangle_sensitivity(0), "n must"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call(_data())
