"""Tests for dpnb.ron_gauss (RON-Gauss, Chanyaswad, Liu & Mittal, PoPETs 2019)."""

import numpy as np
import pytest
from scipy import stats

from dpnb.ron_gauss import (RONGauss, covariance_sensitivity, mean_sensitivity, mle_covariance_sensitivity,
                            random_orthonormal_projection, unit_rows)
from dpnb.stats import clopper_pearson, mean_ci, variance_ci


def ball_rows(rng, n, p):
    """Rows uniform in direction with norms in [0, 1]."""
    return unit_rows(rng.standard_normal((n, p))) * rng.random((n, 1))


def second_moment(Z):
    return Z.T @ Z / Z.shape[0]


# ------------------------------------------------------------------ projection (Algorithm 2)
@pytest.mark.parametrize("method", ["haar", "paper"])
def test_projection_is_orthonormal(method):
    W = random_orthonormal_projection(12, 5, 0, method=method)
    assert W.shape == (12, 5)
    np.testing.assert_allclose(W.T @ W, np.eye(5), atol=1e-12)


@pytest.mark.parametrize("kwargs, match", [
    (dict(m=5, p=6), "p must satisfy"), (dict(m=0, p=1), r"m \(the data dimension\) must be an integer >= 1"),
    (dict(m=5, p=2, method="qr"), "method must be one of"), (dict(m=5.0, p=2), r"m \(the data dimension\) must be an integer >= 1"),
])
def test_projection_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        random_orthonormal_projection(random_state=0, **kwargs)


def _first_entries(method, draws=1500, m=15, seed=3):
    rng = np.random.default_rng(seed)
    return np.array([random_orthonormal_projection(m, 2, rng, method=method)[:, 0] for _ in range(draws)])


def test_haar_projection_matches_haar_marginal():
    """Under Haar, (W11 + 1)/2 ~ Beta((m-1)/2, (m-1)/2), sign(W11) is a fair coin, E<w1, 1> = 0."""
    m = 15
    cols = _first_entries("haar", m=m)
    assert stats.kstest((cols[:, 0] + 1) / 2, stats.beta((m - 1) / 2, (m - 1) / 2).cdf).pvalue > 0.001
    lo, hi = clopper_pearson(int(np.sum(cols[:, 0] > 0)), len(cols), 0.999)
    assert lo <= 0.5 <= hi
    _, lo, hi = mean_ci(cols.sum(axis=1), 0.999)
    assert lo <= 0.0 <= hi


def test_paper_projection_is_not_haar():
    """Algorithm 2 (QR of a U[0,1] matrix): first column in one orthant, aligned with the ones vector."""
    m = 15
    cols = _first_entries("paper", m=m)
    assert stats.kstest((cols[:, 0] + 1) / 2, stats.beta((m - 1) / 2, (m - 1) / 2).cdf).pvalue < 0.001
    _, lo, hi = mean_ci(np.abs(cols.sum(axis=1)) / np.sqrt(m), 0.999)
    assert lo > 0.8  # ~ sqrt(3)/2 = 0.866, vs mean 0 under Haar


# ------------------------------------------------------------------ preprocessing helpers
def test_unit_rows_keeps_zero_rows_and_rejects_nan():
    X = np.array([[3.0, 4.0], [0.0, 0.0]])
    np.testing.assert_allclose(unit_rows(X), [[0.6, 0.8], [0.0, 0.0]])
    with pytest.raises(ValueError, match="NaN"):
        unit_rows([[np.nan, 1.0]])


# ------------------------------------------------------------------ sensitivities
def test_mean_sensitivity_is_attained_and_never_exceeded():
    rng = np.random.default_rng(0)
    m, n = 9, 4
    S = mean_sensitivity(m, n)
    assert S == pytest.approx(2 * 3 / 4)
    x = np.ones(m) / np.sqrt(m)
    assert np.abs(x - (-x)).sum() / n == pytest.approx(S)
    for _ in range(500):
        a, b = unit_rows(rng.standard_normal((2, m)))
        assert np.abs(a - b).sum() / n <= S + 1e-12


@pytest.mark.parametrize("a", [None, 0.5, 2.0])
def test_covariance_sensitivity_holds_on_random_neighbours(a):
    rng = np.random.default_rng(1)
    p, n = 6, 5
    up, full = covariance_sensitivity(p, n, a), covariance_sensitivity(p, n, a, part="full")
    for _ in range(500):
        X = ball_rows(rng, n, p)
        if a is not None:
            X = np.column_stack([X, rng.uniform(-a, a, n)])
        Xp = X.copy()
        Xp[0, :p] = ball_rows(rng, 1, p)[0]
        if a is not None:
            Xp[0, p] = rng.uniform(-a, a)
        D = second_moment(X) - second_moment(Xp)
        assert np.abs(np.triu(D)).sum() <= up + 1e-12
        assert np.abs(D).sum() <= full + 1e-12


def test_published_covariance_sensitivity_is_exceeded():
    """The sign-vector pair of the notebook beats Lemma 4's 2 sqrt(p)/n for p >= 5."""
    p, n = 8, 1
    u = np.ones(p) / np.sqrt(p)
    s = np.ones(p)
    s[: p // 2] = -1
    v = s / np.sqrt(p)
    found = np.abs(np.outer(u, u) - np.outer(v, v)).sum()
    assert found == pytest.approx(4 * (p // 2) * (p - p // 2) / p)
    assert found > covariance_sensitivity(p, n, published=True)
    assert found <= covariance_sensitivity(p, n, part="full")
    assert covariance_sensitivity(2, 1, published=True) == pytest.approx(covariance_sensitivity(2, 1, part="full"))


def test_mle_covariance_sensitivity_holds_on_random_neighbours():
    rng = np.random.default_rng(2)
    p, n = 5, 4
    bound = mle_covariance_sensitivity(p, n)
    assert mle_covariance_sensitivity(p, n, published=True) == pytest.approx((2 + 2 * n) * np.sqrt(p) / n)
    for _ in range(500):
        X = ball_rows(rng, n, p)
        Xp = X.copy()
        Xp[0] = ball_rows(rng, 1, p)[0]
        D = np.cov(X.T, bias=True) - np.cov(Xp.T, bias=True)
        assert np.abs(D).sum() <= bound + 1e-12


@pytest.mark.parametrize("call, match", [
    (lambda: covariance_sensitivity(0, 5), "p must be finite and > 0"),
    (lambda: covariance_sensitivity(3, 5, part="lower"), "part must be"),
    (lambda: covariance_sensitivity(3, 5, label_range=-1), "label_range"),
    (lambda: mean_sensitivity(4, 0), "n must be finite and > 0"),
    (lambda: mle_covariance_sensitivity(3, -1), "n must be finite and > 0"),
])
def test_sensitivity_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ------------------------------------------------------------------ RONGauss
@pytest.fixture
def data():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((400, 12)) + 0.3
    return X, np.clip(X[:, 0], -1, 1), (X[:, 1] > 0.3).astype(int)


@pytest.mark.parametrize("mode", ["unsupervised", "supervised", "gmm"])
@pytest.mark.parametrize("reconstruct", [False, True])
def test_shapes_and_valid_covariance(data, mode, reconstruct):
    X, y_reg, y_cls = data
    y = {"unsupervised": None, "supervised": y_reg, "gmm": y_cls}[mode]
    model = RONGauss(4, 1.0, mode=mode, label_range=1.0 if mode == "supervised" else None,
                     reconstruct=reconstruct, random_state=0).fit(X, y)
    out = model.sample(50)
    X_syn = out if mode == "unsupervised" else out[0]
    assert X_syn.shape == (50, 12 if reconstruct else 4)
    assert model.transform(X[:3]).shape == (3, 12 if reconstruct else 4)
    covs = model.class_covariances_ if mode == "gmm" else [model.covariance_]
    for C in covs:
        np.testing.assert_allclose(C, C.T)
        assert np.linalg.eigvalsh(C).min() > -1e-12
    if mode != "unsupervised":
        assert out[1].shape == (50,)


def test_budget_split_and_sensitivity(data):
    X = data[0]
    model = RONGauss(5, 2.0, mean_fraction=0.25, random_state=0).fit(X)
    assert (model.epsilon_mean_, model.epsilon_covariance_) == pytest.approx((0.5, 1.5))
    assert model.covariance_sensitivity_ == pytest.approx(covariance_sensitivity(5, 400))


def test_same_seed_same_output(data):
    X = data[0]
    a = RONGauss(3, 1.0, random_state=7).fit(X).sample(5)
    b = RONGauss(3, 1.0, random_state=7).fit(X).sample(5)
    np.testing.assert_array_equal(a, b)


def test_noise_off_matches_algorithm_1_and_2(data):
    X = data[0]
    model = RONGauss(4, np.inf, random_state=0).fit(X)
    X_unit = unit_rows(X)
    np.testing.assert_allclose(model.mean_, X_unit.mean(axis=0))
    Z = unit_rows(X_unit - model.mean_) @ model.components_
    np.testing.assert_allclose(model.transform(X), Z)
    np.testing.assert_allclose(model.covariance_, second_moment(Z), atol=1e-12)


def test_dp_mean_noise_has_laplace_scale(data):
    """E[(mu_dp - mu)^2] = 2 b^2 with b = 2 sqrt(m) / (n eps_mu): the interval must contain it."""
    X = data[0]
    n, m = X.shape
    mu = unit_rows(X).mean(axis=0)
    sq = np.concatenate([(RONGauss(2, 1.0, random_state=s).fit(X).mean_ - mu) ** 2 for s in range(300)])
    b = mean_sensitivity(m, n) / 0.3
    _, lo, hi = mean_ci(sq, 0.999)
    assert lo <= 2 * b**2 <= hi


def test_samples_follow_the_fitted_covariance(data):
    X = data[0]
    model = RONGauss(3, np.inf, random_state=1).fit(X)
    Z = model.sample(4000)
    _, lo, hi = variance_ci(Z[:, 0], 0.999)
    assert lo <= model.covariance_[0, 0] <= hi


def test_supervised_labels_are_clipped(data):
    X, y_reg, _ = data
    y = 5 * y_reg  # far outside [-1, 1]
    model = RONGauss(3, np.inf, mode="supervised", label_range=1.0, random_state=0).fit(X, y)
    assert model.covariance_[-1, -1] == pytest.approx(np.mean(np.clip(y, -1, 1) ** 2))


def test_gmm_class_sizes_are_public_and_respected(data):
    X, _, y = data
    model = RONGauss(3, 1.0, mode="gmm", random_state=0).fit(X, y)
    np.testing.assert_array_equal(model.class_counts_, np.bincount(y))
    _, labels = model.sample(2000)
    assert set(np.unique(labels)) <= set(model.classes_)
    lo, hi = clopper_pearson(int(np.sum(labels == 1)), 2000, 0.999)
    assert lo <= np.mean(y == 1) <= hi


def test_add_mean_shifts_by_projected_mean(data):
    X = data[0]
    plain = RONGauss(3, 1.0, random_state=5).fit(X)
    shifted = RONGauss(3, 1.0, add_mean=True, random_state=5).fit(X)
    np.testing.assert_allclose(shifted.sample(4), plain.sample(4) + plain.mean_ @ plain.components_)


@pytest.mark.parametrize("kwargs, fit_y, match", [
    (dict(epsilon=0.0), None, "epsilon must be finite and > 0"),
    (dict(epsilon=-1.0), None, "epsilon must be finite and > 0"),
    (dict(n_components=13), None, "n_components must satisfy"),
    (dict(mode="pca"), None, "mode must be one of"),
    (dict(projection="qr"), None, "projection must be one of"),
    (dict(mean_fraction=1.0), None, "mean_fraction must lie in"),
    (dict(mode="supervised"), "reg", "needs label_range"),
    (dict(label_range=1.0), None, "only used with mode='supervised'"),
    (dict(), "reg", "takes no y"),
    (dict(mode="gmm"), None, "needs labels y"),
    (dict(mode="gmm", add_mean=True), "cls", "add_mean does not apply"),
    (dict(mode="gmm"), "short", "y must be 1-dimensional with 400 entries"),
])
def test_bad_parameters(data, kwargs, fit_y, match):
    X, y_reg, y_cls = data
    y = {None: None, "reg": y_reg, "cls": y_cls, "short": y_cls[:10]}[fit_y]
    params = dict(n_components=3, epsilon=1.0) | kwargs
    with pytest.raises(ValueError, match=match):
        RONGauss(**params).fit(X, y)


def test_bad_data_and_usage(data):
    X = data[0]
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        RONGauss(3, 1.0).fit(bad)
    with pytest.raises(ValueError, match="not fitted"):
        RONGauss(3, 1.0).sample(5)
    model = RONGauss(3, 1.0, random_state=0).fit(X)
    with pytest.raises(ValueError, match="n_samples must be an integer >= 1"):
        model.sample(0)
    with pytest.raises(ValueError, match="fitted on 12"):
        model.transform(X[:, :5])
