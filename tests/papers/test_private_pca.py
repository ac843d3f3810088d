"""Tests for dpnb.papers.private_pca: MOD-SULQ, PPCA, the utility, the estimators and bad input."""

import numpy as np
import pytest
from scipy import stats
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline

from dpnb.chapters.foundations import ball_pair
from dpnb.numerics.bingham import vector_bingham_exact
from dpnb.numerics.linalg import triangle
from dpnb.numerics.stats import clopper_pearson, mean_ci
from dpnb.papers.private_pca import (
    FIGURE2_EIGENVALUES,
    PPCA,
    ModSULQ,
    mod_sulq,
    mod_sulq_beta,
    mod_sulq_sigma,
    ppca,
    ppca_flat_alignment_mean,
    ppca_flat_alignment_sf,
    second_moment,
    second_moment_l2_sensitivity,
    spike_data,
    synthetic_figure2,
    utility_qf,
)
from dpnb.privacy.estimator import budget_total
from dpnb.privacy.mechanisms import gaussian_delta


def _data(n=400, d=5, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, d)) * np.sqrt(np.array([0.5, 0.2, 0.05, 0.02, 0.01])[:d])
    return Z / np.maximum(np.linalg.norm(Z, axis=1), 1.0)[:, None]


def test_beta_formula():
    d, n, eps, delta = 10, 1000, 0.5, 1e-3
    t = np.sqrt(2 * np.log(110 / (2 * np.sqrt(2 * np.pi) * delta)))
    assert mod_sulq_beta(d, n, eps, delta) == pytest.approx(11 / (n * eps) * t + 1 / (n * np.sqrt(eps)), rel=1e-12)


@pytest.mark.parametrize("part", ["upper", "full"])
def test_second_moment_sensitivity_attained_by_e1_e2(part):
    n, d = 7, 4
    X, Xp = ball_pair(n, d)  # rows e_1, row 0 replaced by e_2
    diff = triangle(second_moment(X) - second_moment(Xp), part=part)
    assert np.linalg.norm(diff) == pytest.approx(second_moment_l2_sensitivity(n, part=part))
    assert second_moment_l2_sensitivity(n, data_norm=2.0, part=part) == pytest.approx(4 * np.sqrt(2) / n)


def test_second_moment_sensitivity_bounds_random_pairs():
    rng = np.random.default_rng(12)
    n, d = 5, 6
    for _ in range(200):
        X = rng.standard_normal((n, d))
        X /= np.maximum(np.linalg.norm(X, axis=1), 1)[:, None]
        Xp = X.copy()
        Xp[0] = rng.standard_normal(d)
        Xp[0] /= max(np.linalg.norm(Xp[0]), 1)
        for part in ("upper", "full"):
            gap = np.linalg.norm(triangle(second_moment(X) - second_moment(Xp), part=part))
            assert gap <= second_moment_l2_sensitivity(n, part=part) * (1 + 1e-12)


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
def test_beta_valid_and_analytic_exact(eps):
    n, d, delta = 500, 8, 1e-5
    Delta = second_moment_l2_sensitivity(n)
    assert gaussian_delta(eps, mod_sulq_beta(d, n, eps, delta), Delta) <= delta
    sigma = mod_sulq_sigma(d, n, eps, delta)
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
    a = mod_sulq(X, 2, 0.5, 1e-3, random_state=5)
    b = mod_sulq(X, 2, 0.5, 1e-3, random_state=5)
    np.testing.assert_array_equal(a, b)
    assert mod_sulq_sigma(5, 400, 0.5, 1e-3, calibration="classic") > mod_sulq_sigma(5, 400, 0.5, 1e-3)
    assert mod_sulq_sigma(5, 400, 0.5, 1e-3, "paper") == mod_sulq_beta(5, 400, 0.5, 1e-3)


def test_ppca_shapes_trace_and_limit():
    X = _data()
    A = second_moment(X)
    V, tr = ppca(X, 2, 50.0, n_draws=5, n_iter=30, return_trace=True, random_state=6)
    assert V.shape == (5, 5, 2) and tr.shape == (30, 5)
    np.testing.assert_allclose(tr[-1], utility_qf(A, V), rtol=1e-10)
    best = np.sort(np.linalg.eigvalsh(A))[-2:].sum()
    assert np.all(utility_qf(A, V) > 0.97 * best)


def test_ppca_exact_column_draws_agree_with_hoff_scans():
    X = _data(n=300)
    A = second_moment(X)
    scan = utility_qf(A, ppca(X, 2, 0.5, n_draws=3000, n_iter=10, random_state=21))
    exact, tr = ppca(X, 2, 0.5, n_draws=3000, n_iter=10, column="exact", return_trace=True, random_state=22)
    np.testing.assert_allclose(tr[-1], utility_qf(A, exact), rtol=1e-10)
    assert stats.ks_2samp(scan, utility_qf(A, exact)).pvalue > 0.001
    with pytest.raises(ValueError, match="column"):
        ppca(X, 2, 0.5, column="hoff")


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


def test_ppca_exact_sampler_matches_gibbs():
    X = _data(n=200)
    e1 = np.linalg.eigh(second_moment(X))[1][:, -1]
    g = np.abs(ppca(X, 1, 0.2, n_draws=3000, n_iter=10, random_state=13)[:, :, 0] @ e1)
    e = np.abs(ppca(X, 1, 0.2, n_draws=3000, sampler="exact", random_state=14)[:, :, 0] @ e1)
    assert e.shape == (3000,) and stats.ks_2samp(g, e).pvalue > 0.001


def _estimators():
    return (
        ModSULQ(2, 1.0, 1e-3, random_state=9),
        ModSULQ(2, 1.0, 1e-3, noise_scale="paper", random_state=9),
        ModSULQ(2, 0.5, 1e-3, calibration="classic", random_state=9),
        PPCA(2, 1.0, n_iter=10, random_state=9),
        PPCA(1, 1.0, sampler="exact", random_state=9),
    )


@pytest.mark.parametrize("est", _estimators())
def test_estimator_contract(est):
    X = _data()
    with pytest.raises(NotFittedError):
        est.transform(X)
    Z = est.fit(X, np.zeros(len(X))).transform(X)  # y is accepted and ignored
    k = est.n_components
    assert Z.shape == (400, k) and est.components_.shape == (k, 5) and est.n_features_in_ == 5
    np.testing.assert_allclose(est.components_ @ est.components_.T, np.eye(k), atol=1e-8)
    np.testing.assert_array_equal(clone(est).fit(X).components_, est.components_)  # same int seed, same output
    np.testing.assert_array_equal(est.fit(X).components_, clone(est).fit(X).components_)
    assert budget_total(est.budget_) == pytest.approx((est.epsilon, getattr(est, "delta", 0.0)))
    assert set(est.sensitivity_) == set(est.budget_)
    with pytest.raises(ValueError, match="columns"):
        est.transform(X[:, :3])
    assert clone(est).set_params(epsilon=2.0).get_params()["epsilon"] == 2.0
    assert type(est).__name__ in repr(est)


def test_estimator_attributes_and_pipeline():
    X = _data()
    est = ModSULQ(2, 1.0, 1e-3, noise_scale="paper").fit(X)
    assert est.sigma_ == pytest.approx(mod_sulq_beta(5, 400, 1.0, 1e-3))
    assert est.sensitivity_ == {"second_moment": pytest.approx(np.sqrt(2) / 400)}
    pipe = make_pipeline(PPCA(2, 1.0, n_iter=5, random_state=1), LinearRegression()).fit(X, X[:, 0])
    assert pipe.predict(X).shape == (400,)


@pytest.mark.parametrize("est", _estimators())
def test_infinite_epsilon_is_noiseless(est):
    X = _data()
    top = np.linalg.eigh(second_moment(X))[1][:, ::-1][:, : est.n_components]
    V = est.set_params(epsilon=np.inf).fit(X).components_.T
    np.testing.assert_allclose(np.abs(V.T @ top), np.eye(est.n_components), atol=1e-10)


@pytest.mark.parametrize(
    "params,error",
    [
        ({"epsilon": 0.0}, ValueError),
        ({"epsilon": "1"}, TypeError),
        ({"delta": 1.5}, ValueError),
        ({"delta": None}, TypeError),
        ({"noise_scale": "exact"}, ValueError),
        ({"calibration": "x"}, ValueError),
        ({"calibration": "corrected"}, ValueError),
        ({"n_components": 2.0}, TypeError),
        ({"random_state": "x"}, TypeError),
    ],
)
def test_estimator_bad_parameters_fail_in_fit(params, error):
    est = ModSULQ(2, 1.0, 1e-3).set_params(**params)  # __init__ stores, fit validates
    with pytest.raises(error):
        est.fit(_data())


@pytest.mark.parametrize(
    "params,error",
    [
        ({"epsilon": -1.0}, ValueError),
        ({"epsilon": None}, TypeError),
        ({"n_iter": -1}, ValueError),
        ({"sampler": "x"}, ValueError),
        ({"data_norm": 0.0}, ValueError),
    ],
)
def test_ppca_bad_parameters_fail_in_fit(params, error):
    with pytest.raises(error):
        PPCA(2, 1.0).set_params(**params).fit(_data())


# slow: d = 2000; make check runs the five smaller (d, c), d = 100 among them
@pytest.mark.parametrize(
    "d,c", [(2, 0.5), (3, 2.0), (6, 0.0), (5, 50.0), (100, 1500.0), pytest.param(2000, 100.0, marks=pytest.mark.slow)]
)
def test_flat_alignment_matches_exact_sampler(d, c):
    s = np.abs(vector_bingham_exact(np.diag([c] + [0.0] * (d - 1)), 6000, random_state=15)[:, 0])
    _, lo, hi = mean_ci(s, 0.999)
    assert lo <= ppca_flat_alignment_mean(d, c) <= hi
    p = ppca_flat_alignment_sf(0.5, d, c)
    lo, hi = clopper_pearson(int(np.sum(s >= 0.5)), s.size, 0.999)
    assert lo <= p <= hi
    assert ppca_flat_alignment_sf(0.5, d, c) + ppca_flat_alignment_sf(0.5, d, c, lower=True) == pytest.approx(1.0)


def test_flat_alignment_limits_and_tiny_tails():
    # c = 0: s^2 ~ Beta(1/2, (d-1)/2), so E[s] = Gamma(d/2) / (sqrt(pi) Gamma((d+1)/2))
    from scipy.special import gammaln

    for d in (3, 10, 400):
        exact = np.exp(gammaln(d / 2) - gammaln((d + 1) / 2)) / np.sqrt(np.pi)
        assert ppca_flat_alignment_mean(d, 0.0) == pytest.approx(exact, rel=1e-7)
    tail = ppca_flat_alignment_sf(0.9, 20, 1e4, lower=True)
    assert 0 <= tail < 1e-30  # integrated directly, not 1 - (something close to 1)
    assert ppca_flat_alignment_mean(4000, 1e6) > ppca_flat_alignment_mean(4000, 1e4)


def test_spike_and_figure2_data():
    X = spike_data(40, 5, 0.5)
    np.testing.assert_allclose(second_moment(X), np.diag([0.5] + [0.125] * 4))
    Z, Xc = synthetic_figure2(3000, random_state=16)
    assert Z.shape == Xc.shape == (3000, 10)
    assert np.all(np.linalg.norm(Xc, axis=1) <= 1 + 1e-12)
    np.testing.assert_allclose(np.sort(np.linalg.eigvalsh(np.cov(Z.T)))[::-1], FIGURE2_EIGENVALUES, atol=0.03)
    np.testing.assert_array_equal(synthetic_figure2(5, random_state=1)[0], synthetic_figure2(5, random_state=1)[0])


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda X: mod_sulq(X, 2, 0.0, 1e-3), "epsilon"),
        (lambda X: mod_sulq(X, 2, 1.0, 1.5), "delta"),
        (lambda X: mod_sulq(X, 6, 1.0, 1e-3), "n_components must satisfy"),
        (lambda X: mod_sulq(X, 2, 1.0, 1e-3, noise_scale="analytic"), "noise_scale"),
        (lambda X: mod_sulq(X, 2, 1.0, 1e-3, calibration="paper"), "calibration must be one of"),
        (lambda X: mod_sulq(X, 2, 2.0, 1e-3, calibration="classic"), "epsilon < 1"),
        (lambda X: mod_sulq(X, 2, 1.0, 1e-3, n_draws=0), "n_draws"),
        (lambda X: mod_sulq(X * 3, 2, 1.0, 1e-3), "norm"),
        (lambda X: mod_sulq(np.where(X > 0.3, np.nan, X), 2, 1.0, 1e-3), "NaN"),
        (lambda X: mod_sulq(X[:, 0], 1, 1.0, 1e-3), "2-dimensional"),
        (lambda X: ppca(X, 5, 1.0), "n_components < d"),
        (lambda X: ppca(X, 2, 1.0, sampler="exact"), "n_components=1"),
        (lambda X: ppca(X, 2, -1.0), "epsilon"),
        (lambda X: ppca(X, 2, 1.0, data_norm=0.0), "data_norm"),
        (lambda X: ppca(X, 2, 1.0, n_iter=-2), "n_iter"),
        (lambda X: mod_sulq_beta(0, 10, 1.0, 0.1), "n_features"),
        (lambda X: second_moment_l2_sensitivity(0), "n_samples"),
        (lambda X: second_moment_l2_sensitivity(10, part="lower"), "part"),
        (lambda X: ppca_flat_alignment_sf(1.5, 5, 1.0), "rho"),
        (lambda X: ppca_flat_alignment_mean(5, -1.0), "concentration"),
        (lambda X: spike_data(10, 3, 1.0), "share"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call(_data())


def test_second_moment_rejects_non_finite_rows_from_their_norms():
    from dpnb.papers.private_pca import second_moment

    X = np.full((50, 4), 0.25)
    assert np.allclose(second_moment(X), X.T @ X / 50)
    for value, match in ((np.nan, "NaN or infinite"), (np.inf, "NaN or infinite"), (1e200, "L2 norm")):
        bad = X.copy()
        bad[49, 2] = value
        with pytest.raises(ValueError, match=match):
            second_moment(bad)


@pytest.mark.parametrize("value, match", [(np.nan, "NaN or infinite"), (np.inf, "NaN or infinite"), (2.0, "norm")])
def test_second_moment_over_several_row_blocks(value, match):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((6000, 100))
    X /= 1.01 * np.linalg.norm(X, axis=1, keepdims=True)  # 6000 rows of 100 values: three row blocks
    np.testing.assert_allclose(second_moment(X), X.T @ X / len(X), rtol=1e-12, atol=1e-15)
    X[5500, 7] = value  # in the last block: every block is checked, not only the first
    with pytest.raises(ValueError, match=match):
        second_moment(X)


# ------------------------------------------------------------------ the edges of float64 (issue 32)
@pytest.mark.parametrize("radius", [5e-324, 1e-308, 1e-100, 1e100, 1e308, 1.7e308])
def test_an_extreme_data_norm_gives_the_second_moment_of_the_unit_scale(radius):
    """``data_norm`` whose square over- or underflows: the rows are scaled by a power of two first (exact), so the
    second moment is that of the rows on the unit scale; both estimators release a finite basis."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (8, 4)) / 2
    X_big = X * radius
    if radius > 1e-300:  # subnormal rows keep too few digits to compare
        np.testing.assert_allclose(second_moment(X_big, radius), second_moment(X), rtol=1e-12, atol=1e-15)
    for est in (ModSULQ(2, 1.0, 1e-5, random_state=0), PPCA(1, 1.0, sampler="exact", random_state=0)):
        est.set_params(data_norm=radius).fit(X_big)
        assert np.all(np.isfinite(est.components_)) and np.all(np.isfinite(est.transform(X_big)))


def test_ppca_at_a_huge_epsilon_spends_the_capped_concentration():
    """n epsilon / 2 above 2^31 is spent as 2^31 (bingham.MAX_CONCENTRATION / 2): a finite draw (the Gibbs sampler
    raised RuntimeError from 1e16 on), as close to the top eigenvectors as that concentration puts it."""
    from dpnb.numerics.bingham import MAX_CONCENTRATION

    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (20, 4)) / 2
    top = np.linalg.eigh(second_moment(X))[1][:, ::-1][:, :2]
    for epsilon in (1e16, 1e300, np.inf):
        V = PPCA(2, epsilon, n_iter=3, random_state=0).fit(X).components_.T
        assert np.linalg.norm(top.T @ V, 2) == pytest.approx(1.0, abs=1e-6)
    capped = ppca(X, 1, 1e300, sampler="exact", random_state=2)
    same = ppca(X, 1, MAX_CONCENTRATION / X.shape[0], sampler="exact", random_state=2)
    np.testing.assert_array_equal(capped, same)


def test_mod_sulq_refuses_a_sigma_that_overflows_naming_epsilon_and_delta():
    X = np.eye(3) / 2
    with pytest.raises(ValueError, match="epsilon=.* and delta=.* are too small"):
        ModSULQ(1, 1e-320, 1e-10, noise_scale="paper").fit(X)  # beta = (d + 1) / (n epsilon) ... overflows
    with pytest.raises(ValueError, match="data_norm"):
        second_moment_l2_sensitivity(10, 1e200)
