"""Tests for dpnb.papers.ron_gauss (RON-Gauss, Chanyaswad, Liu & Mittal, PoPETs 2019)."""

import numpy as np
import pytest
from scipy import stats
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from dpnb.numerics.linalg import triangle
from dpnb.numerics.stats import clopper_pearson, mean_ci, variance_ci
from dpnb.papers.ron_gauss import (
    RONGauss,
    algorithm2_projection,
    bernoulli_identity,
    covariance_extremal_pair,
    covariance_sensitivity,
    mean_sensitivity,
    mle_covariance_sensitivity,
    pca_identity,
    projected_identity_sensitivity,
    unit_rows,
)
from dpnb.privacy.audit import LabelledBall, ReplaceRowL2Ball, search_sensitivity
from dpnb.privacy.estimator import budget_total


def ball_rows(rng, n, p):
    """Rows uniform in direction with norms in [0, 1]."""
    return unit_rows(rng.standard_normal((n, p))) * rng.random((n, 1))


def second_moment(Z):
    return Z.T @ Z / Z.shape[0]


# ------------------------------------------------------------------ projection (Algorithm 2)
@pytest.mark.parametrize("take", ["columns", "rows"])
def test_algorithm2_projection_is_orthonormal(take):
    W = algorithm2_projection(12, 5, take=take, random_state=0)
    assert W.shape == (5, 12)
    np.testing.assert_allclose(W @ W.T, np.eye(5), atol=1e-12)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"n_features": 5, "n_components": 6}, ValueError, "n_components must satisfy"),
        ({"n_features": 0, "n_components": 1}, ValueError, "n_features must be an integer >= 1"),
        ({"n_features": 5, "n_components": 2, "take": "diag"}, ValueError, "take must be one of"),
        ({"n_features": 5.0, "n_components": 2}, TypeError, "n_features must be an integer"),
    ],
)
def test_algorithm2_projection_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        algorithm2_projection(random_state=0, **kwargs)


def test_paper_projection_is_not_haar():
    """Algorithm 2 (QR of a U[0,1] matrix): first column in one orthant, aligned with the ones vector."""
    m = 15
    rng = np.random.default_rng(3)
    cols = np.array([algorithm2_projection(m, 2, random_state=rng)[0] for _ in range(1500)])
    assert stats.kstest((cols[:, 0] + 1) / 2, stats.beta((m - 1) / 2, (m - 1) / 2).cdf).pvalue < 0.001
    _, lo, _hi = mean_ci(np.abs(cols.sum(axis=1)) / np.sqrt(m), 0.999)
    assert lo > 0.8  # ~ sqrt(3)/2 = 0.866, vs mean 0 under Haar


# ------------------------------------------------------------------ preprocessing helpers
def test_unit_rows_keeps_zero_rows_and_rejects_nan():
    X = np.array([[3.0, 4.0], [0.0, 0.0]])
    np.testing.assert_allclose(unit_rows(X), [[0.6, 0.8], [0.0, 0.0]])
    with pytest.raises(ValueError, match="NaN"):
        unit_rows([[np.nan, 1.0]])


@pytest.mark.parametrize("scale", [1e200, 1.7e308, 1e-170, 1e-300])
def test_unit_rows_of_rows_whose_squared_norm_over_or_underflows(scale):
    np.testing.assert_allclose(unit_rows([[0.3 * scale, 0.4 * scale], [0.0, 0.0]]), [[0.6, 0.8], [0.0, 0.0]])


@pytest.mark.parametrize("mode", ["unsupervised", "supervised", "gmm"])
@pytest.mark.parametrize("scale", [1e200, 1.7e308, 1e-170, 1e-300])
def test_a_row_whose_squared_norm_over_or_underflows_counts_as_its_unit_row(mode, scale):
    """Pre-normalisation sends every finite nonzero row to the sphere: a row scaled by 1e200 or 1e-300 gives the
    same release (same seed) as the row itself, in fit and in transform (it was a zero row when its square
    overflowed; refusing it instead would let neighbours fail differently)."""
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, (9, 4))
    X_extreme = X.copy()
    X_extreme[[0, 5]] *= scale
    y = {"unsupervised": None, "supervised": rng.uniform(-1, 1, 9), "gmm": rng.integers(0, 2, 9)}[mode]
    kwargs = {"mode": mode, "label_bound": 1.0} if mode == "supervised" else {"mode": mode}
    a = RONGauss(2, 1.0, random_state=0, **kwargs).fit(X, y)
    b = RONGauss(2, 1.0, random_state=0, **kwargs).fit(X_extreme, y)
    for attr in ("mean_", "covariance_") if mode != "gmm" else ("class_means_", "class_covariances_"):
        np.testing.assert_allclose(getattr(b, attr), getattr(a, attr), rtol=0, atol=1e-12)
    np.testing.assert_allclose(b.transform(X_extreme), a.transform(X), rtol=0, atol=1e-12)


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
        assert np.abs(triangle(D)).sum() <= up + 1e-12
        assert np.abs(D).sum() <= full + 1e-12


@pytest.mark.parametrize("p", [2, 4, 8, 16, 64])
def test_extremal_pair_attains_the_full_bound(p):
    """Every entry of u u^T - v v^T is +-sqrt(2)/p: ||D||_1 = sqrt(2) p, the corrected Lemma 4 bound."""
    u, v = covariance_extremal_pair(p)
    assert np.linalg.norm(u) == pytest.approx(1) and np.linalg.norm(v) == pytest.approx(1)
    D = np.outer(u, u) - np.outer(v, v)
    np.testing.assert_allclose(np.abs(D), np.sqrt(2) / p)
    assert np.abs(D).sum() == pytest.approx(covariance_sensitivity(p, 1, part="full"))
    assert np.abs(triangle(D)).sum() == pytest.approx((p + 1) / np.sqrt(2))
    assert np.abs(triangle(D)).sum() <= covariance_sensitivity(p, 1)
    if p > 2:
        assert np.abs(D).sum() > covariance_sensitivity(p, 1, noise_scale="paper")


def test_extremal_pair_needs_even_p():
    with pytest.raises(ValueError, match="even"):
        covariance_extremal_pair(3)


def test_published_bound_equals_corrected_at_p2():
    assert covariance_sensitivity(2, 1, noise_scale="paper") == pytest.approx(covariance_sensitivity(2, 1, part="full"))


def test_mle_covariance_sensitivity_holds_on_random_neighbours():
    rng = np.random.default_rng(2)
    p, n = 5, 4
    bound = mle_covariance_sensitivity(p, n)
    assert mle_covariance_sensitivity(p, n, noise_scale="paper") == pytest.approx((2 + 2 * n) * np.sqrt(p) / n)
    for _ in range(500):
        X = ball_rows(rng, n, p)
        Xp = X.copy()
        Xp[0] = ball_rows(rng, 1, p)[0]
        D = np.cov(X.T, bias=True) - np.cov(Xp.T, bias=True)
        assert np.abs(D).sum() <= bound + 1e-12


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: covariance_sensitivity(0, 5), ValueError, "n_components must be finite and > 0"),
        (lambda: covariance_sensitivity(3, 5, part="lower"), ValueError, "part must be"),
        (lambda: covariance_sensitivity(3, 5, noise_scale="published"), ValueError, "noise_scale must be"),
        (lambda: covariance_sensitivity(3, 5, label_bound=-1), ValueError, "label_bound"),
        (lambda: covariance_sensitivity("3", 5), TypeError, "n_components"),
        (lambda: mean_sensitivity(4, 0), ValueError, "n_samples must be finite and > 0"),
        (lambda: mle_covariance_sensitivity(3, -1), ValueError, "n_samples must be finite and > 0"),
    ],
)
def test_sensitivity_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_covariance_sensitivity_audit_labelled():
    """Search over (x, y) rows with ||x|| <= 1, |y| <= a: the corrected bounds hold, the paper's does not."""
    p, n, a = 8, 2, 1.0
    u, v = covariance_extremal_pair(p)
    X = np.zeros((n, p + 1))
    X[0] = np.append(u, a)
    Xp = X.copy()
    Xp[0] = np.append(v, -a)
    for part, norm in (("full", 1), ("upper", lambda A, B: np.abs(np.triu(A - B)).sum())):
        res = search_sensitivity(
            second_moment,
            LabelledBall(a),
            n,
            p + 1,
            norm=norm,
            n_starts=2,
            n_steps=60,
            claimed=covariance_sensitivity(p, n, a, part=part),
            starts=[(X, Xp)],
            random_state=0,
        )
        assert not res.exceeds
    assert res.max_found > covariance_sensitivity(p, n, a, noise_scale="paper") / 2  # upper triangle ~ half


# ------------------------------------------------------------------ comparison methods
@pytest.fixture
def data():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((400, 12)) + 0.3
    return X, np.clip(X[:, 0], -1, 1), (X[:, 1] > 0.3).astype(int)


@pytest.mark.parametrize("method", [bernoulli_identity, pca_identity])
def test_identity_baselines_shapes_and_noise_off(data, method):
    X_unit = unit_rows(data[0])
    Z, B = method(X_unit, 4, np.inf, random_state=0)
    assert Z.shape == (400, 4) and B.shape == (4, 12)
    np.testing.assert_allclose(Z, X_unit @ B.T)
    Z1, _ = method(X_unit, 4, 1.0, random_state=0)
    Z2, _ = method(X_unit, 4, 1.0, random_state=0)
    np.testing.assert_array_equal(Z1, Z2)


def test_pca_identity_with_precomputed_second_moment(data):
    """A second moment formed once gives the same release as the one formed inside; wrong shapes are refused."""
    X_unit = unit_rows(data[0])
    Z, B = pca_identity(X_unit, 4, 1.0, random_state=3)
    Z_pre, B_pre = pca_identity(X_unit, 4, 1.0, second_moment=X_unit.T @ X_unit / len(X_unit), random_state=3)
    np.testing.assert_allclose(Z_pre, Z, rtol=0, atol=1e-12)
    np.testing.assert_allclose(B_pre, B, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="shape"):
        pca_identity(X_unit, 4, 1.0, second_moment=np.eye(5))
    with pytest.raises(ValueError, match="finite"):
        pca_identity(X_unit, 4, 1.0, second_moment=np.full((12, 12), np.nan))


@pytest.mark.parametrize("seed", [0, 1])
def test_identity_sensitivity_audit(seed):
    """Search over one replaced unit-norm row: ||X B^T - X' B^T||_1 never exceeds 2 sqrt(k) ||B||_2."""
    rng = np.random.default_rng(seed)
    m, k = 10, 3
    B_bern = rng.choice([-1.0, 1.0], size=(k, m)) / np.sqrt(k)
    B_pca = np.linalg.qr(rng.standard_normal((m, k)))[0].T
    for B in (B_bern, B_pca):
        res = search_sensitivity(
            lambda X, B=B: X @ B.T,
            ReplaceRowL2Ball(1.0, on_sphere=True),
            3,
            m,
            norm=1,
            claimed=projected_identity_sensitivity(B),
            n_starts=3,
            n_steps=150,
            random_state=rng,
        )
        assert not res.exceeds
        assert res.max_found > 0.5 * res.claimed


def test_identity_sensitivity_attained_for_orthonormal_basis():
    """With orthonormal rows the bound 2 sqrt(k) is attained by x = B^T s / sqrt(k), x' = -x, s a sign vector."""
    B = np.linalg.qr(np.random.default_rng(5).standard_normal((10, 4)))[0].T
    x = B.T @ np.ones(4) / 2
    assert np.abs(B @ (x - (-x))).sum() == pytest.approx(projected_identity_sensitivity(B))


# ------------------------------------------------------------------ RONGauss
@pytest.mark.parametrize("mode", ["unsupervised", "supervised", "gmm"])
@pytest.mark.parametrize("reconstruct", [False, True])
def test_shapes_and_valid_covariance(data, mode, reconstruct):
    X, y_reg, y_cls = data
    y = {"unsupervised": None, "supervised": y_reg, "gmm": y_cls}[mode]
    model = RONGauss(
        4, 1.0, mode=mode, label_bound=1.0 if mode == "supervised" else None, reconstruct=reconstruct, random_state=0
    ).fit(X, y)
    drawn = model.sample(50)
    X_syn, y_syn = (drawn, None) if mode == "unsupervised" else drawn
    assert isinstance(drawn, tuple) == (mode != "unsupervised")
    assert X_syn.shape == (50, 12 if reconstruct else 4)
    assert model.components_.shape == (4, 12)
    np.testing.assert_allclose(model.components_ @ model.components_.T, np.eye(4), atol=1e-12)
    assert model.transform(X[:3]).shape == (3, 12 if reconstruct else 4)
    covs = model.class_covariances_ if mode == "gmm" else [model.covariance_]
    for C in covs:
        np.testing.assert_allclose(C, C.T)
        assert np.linalg.eigvalsh(C).min() > -1e-12
    assert (y_syn is None) == (mode == "unsupervised")
    if mode != "unsupervised":
        assert y_syn.shape == (50,)


def test_budget_split_and_sensitivity(data):
    X = data[0]
    model = RONGauss(5, 2.0, mean_fraction=0.25, random_state=0).fit(X)
    assert model.budget_ == {"mean": (0.5, 0.0), "covariance": (1.5, 0.0)}
    assert budget_total(model.budget_) == (2.0, 0.0)
    assert model.sensitivity_ == pytest.approx(
        {"covariance": covariance_sensitivity(5, 400), "mean": mean_sensitivity(12, 400)}
    )
    assert model.n_features_in_ == 12


def test_gmm_budget_and_per_class_sensitivity(data):
    X, _, y = data
    model = RONGauss(3, 1.0, mode="gmm", random_state=0).fit(X, y)
    assert budget_total(model.budget_) == pytest.approx((1.0, 0.0))
    np.testing.assert_allclose(model.sensitivity_["covariance"], [covariance_sensitivity(3, c) for c in np.bincount(y)])


@pytest.mark.parametrize("mode", ["unsupervised", "supervised", "gmm"])
def test_same_int_seed_same_output_on_refit(data, mode):
    X, y_reg, y_cls = data
    y = {"unsupervised": None, "supervised": y_reg, "gmm": y_cls}[mode]
    model = RONGauss(3, 1.0, mode=mode, label_bound=1.0 if mode == "supervised" else None, random_state=7)
    a = model.fit(X, y).sample(5)
    b = model.fit(X, y).sample(5)
    np.testing.assert_array_equal(a if mode == "unsupervised" else a[0], b if mode == "unsupervised" else b[0])


def test_clone_and_params():
    model = RONGauss(3, 0.5, mode="supervised", label_bound=2.0, random_state=1)
    params = model.get_params()
    assert params["label_bound"] == 2.0 and params["n_components"] == 3
    twin = clone(model)
    assert twin.get_params() == params and twin is not model
    twin.set_params(epsilon=2.0, mode="gmm", label_bound=None)
    assert twin.epsilon == 2.0 and twin.mode == "gmm"
    assert "RONGauss(" in repr(model)


def test_pipeline_and_fit_transform(data):
    X, y_reg, _ = data
    pipe = make_pipeline(StandardScaler(), RONGauss(3, 1.0, random_state=0))
    Z = pipe.fit_transform(X, y_reg)  # unsupervised mode ignores y
    assert Z.shape == (400, 3)
    np.testing.assert_allclose(pipe.transform(X), Z)


def test_unsupervised_ignores_y(data):
    X, y_reg, _ = data
    a = RONGauss(3, 1.0, random_state=2).fit(X, y_reg)
    b = RONGauss(3, 1.0, random_state=2).fit(X)
    np.testing.assert_array_equal(a.covariance_, b.covariance_)


def test_not_fitted():
    for call in (lambda m: m.sample(5), lambda m: m.transform(np.ones((2, 3)))):
        with pytest.raises(NotFittedError):
            call(RONGauss(2, 1.0))


def test_noise_off_matches_algorithm_1_and_2(data):
    X = data[0]
    model = RONGauss(4, np.inf, random_state=0).fit(X)
    X_unit = unit_rows(X)
    np.testing.assert_allclose(model.mean_, X_unit.mean(axis=0))
    Z = unit_rows(X_unit - model.mean_) @ model.components_.T
    np.testing.assert_allclose(model.transform(X), Z)
    np.testing.assert_allclose(model.covariance_, second_moment(Z), atol=1e-12)
    assert model.budget_ == {"mean": (np.inf, 0.0), "covariance": (np.inf, 0.0)}


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
    model = RONGauss(3, np.inf, mode="supervised", label_bound=1.0, random_state=0).fit(X, y)
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
    np.testing.assert_allclose(shifted.sample(4), plain.sample(4) + plain.components_ @ plain.mean_)


def test_paper_projection_option(data):
    model = RONGauss(3, 1.0, projection="paper", random_state=0).fit(data[0])
    np.testing.assert_allclose(model.components_, algorithm2_projection(12, 3, random_state=0))


@pytest.mark.parametrize(
    "kwargs, fit_y, error, match",
    [
        ({"epsilon": 0.0}, None, ValueError, "epsilon must be > 0"),
        ({"epsilon": -1.0}, None, ValueError, "epsilon must be > 0"),
        ({"epsilon": "1"}, None, TypeError, "epsilon must be a positive real number"),
        ({"n_components": 13}, None, ValueError, "n_components must satisfy"),
        ({"n_components": 2.0}, None, TypeError, "n_components must be an integer"),
        ({"mode": "pca"}, None, ValueError, "mode must be one of"),
        ({"projection": "qr"}, None, ValueError, "projection must be one of"),
        ({"mean_fraction": 1.0}, None, ValueError, r"mean_fraction must be a number in \(0, 1\)"),
        ({"mean_fraction": "0.3"}, None, TypeError, "mean_fraction must be a number"),
        ({"reconstruct": 1}, None, TypeError, "reconstruct must be True or False"),
        ({"mode": "supervised"}, "reg", ValueError, "needs label_bound"),
        ({"label_bound": 1.0}, None, ValueError, "only used with mode='supervised'"),
        ({"mode": "gmm"}, None, ValueError, "needs labels y"),
        ({"mode": "gmm", "add_mean": True}, "cls", ValueError, "add_mean does not apply"),
        ({"mode": "gmm"}, "short", ValueError, "y must be 1-dimensional with 400 entries"),
        ({"random_state": "x"}, None, TypeError, "random_state"),
    ],
)
def test_bad_parameters(data, kwargs, fit_y, error, match):
    X, y_reg, y_cls = data
    y = {None: None, "reg": y_reg, "cls": y_cls, "short": y_cls[:10]}[fit_y]
    params = {"n_components": 3, "epsilon": 1.0} | kwargs
    with pytest.raises(error, match=match):
        RONGauss(**params).fit(X, y)


def test_bad_data_and_usage(data):
    X = data[0]
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        RONGauss(3, 1.0).fit(bad)
    model = RONGauss(3, 1.0, random_state=0).fit(X)
    with pytest.raises(ValueError, match="n_samples must be an integer >= 1"):
        model.sample(0)
    with pytest.raises(ValueError, match="fitted on 12"):
        model.transform(X[:, :5])


def test_gmm_noise_off_matches_algorithm_5(data):
    """The fused per-class pass equals Algorithm 1 + 2 applied to each class's rows."""
    X, _, y = data
    model = RONGauss(3, np.inf, mode="gmm", random_state=0).fit(X, y)
    W = model.components_
    for j, c in enumerate(model.classes_):
        Xc = unit_rows(X[y == c])
        np.testing.assert_allclose(model.class_means_[j], Xc.mean(axis=0))
        Z = unit_rows(Xc - model.class_means_[j]) @ W.T
        np.testing.assert_allclose(model.class_covariances_[j], second_moment(Z), atol=1e-12)
    np.testing.assert_allclose(model.transform(X), unit_rows(X) @ W.T)


def test_zero_rows_follow_algorithm_1(data):
    """An all-zero record stays zero after pre-normalisation, so it maps to W^T unit(-mu)."""
    X = data[0].copy()
    X[0] = 0.0
    model = RONGauss(4, np.inf, random_state=0).fit(X)
    mu = unit_rows(X).mean(axis=0)
    np.testing.assert_allclose(model.transform(X[:1])[0], model.components_ @ (-mu / np.linalg.norm(mu)))


# ------------------------------------------------------------------ fused chunked passes of fit
def _straightforward_moments(X, W, y=None, label_bound=None):
    """Noise-free Algorithm 1-4 statistics computed row by row as the paper writes them."""
    U = unit_rows(X)
    mu = U.mean(axis=0)
    Z = unit_rows(U - mu) @ W.T
    if label_bound is not None:
        Z = np.column_stack([Z, np.clip(y, -label_bound, label_bound)])
    return mu, second_moment(Z)


@pytest.mark.parametrize("mode", ["unsupervised", "supervised", "gmm"])
def test_fit_equals_straightforward_computation(mode):
    """The chunked passes (class sums, then class second moments) give the per-row computation's values."""
    from dpnb.numerics.linalg import block_rows

    rng = np.random.default_rng(5)
    n = 2 * block_rows(11) + 123  # blocks of unequal size
    X = 3 * rng.standard_normal((n, 11)) + 1
    X[7] = 0.0  # an all-zero row stays zero
    y = {"unsupervised": None, "supervised": rng.uniform(-2, 2, n), "gmm": rng.integers(0, 3, n)}[mode]
    kwargs = {"mode": mode, "label_bound": 1.0} if mode == "supervised" else {"mode": mode}
    model = RONGauss(4, np.inf, random_state=1, **kwargs).fit(X, y)
    W = model.components_
    if mode != "gmm":
        mu, S = _straightforward_moments(X, W, y, kwargs.get("label_bound"))
        np.testing.assert_allclose(model.mean_, mu, rtol=0, atol=1e-14)
        np.testing.assert_allclose(model.covariance_, S, rtol=0, atol=1e-13)
        return
    for j, c in enumerate(model.classes_):
        mu, S = _straightforward_moments(X[y == c], W)
        np.testing.assert_allclose(model.class_means_[j], mu, rtol=0, atol=1e-14)
        np.testing.assert_allclose(model.class_covariances_[j], S, rtol=0, atol=1e-13)


def _numpy_passes(X, codes, n_classes, means, W, labels=None, label_bound=None):
    """Plain NumPy reference of the two compiled passes: the unit rows' class sums, then each class's Gram."""
    from dpnb.papers.ron_gauss import _preprocess_project, _unit_rows_and_norms

    X, sq, inv_norms = _unit_rows_and_norms(X)  # rows whose squared norm over- or underflows: their unit rows
    sums = np.array([inv_norms[codes == c] @ X[codes == c] for c in range(n_classes)])
    mu = means[codes]
    Z = _preprocess_project(X @ W.T, np.einsum("ij,ij->i", X, mu), sq, inv_norms, mu @ W.T, np.sum(mu * mu, axis=1))
    if labels is not None:
        Z = np.column_stack([Z, np.clip(labels, -label_bound, label_bound)])
    return inv_norms, sums, np.array([Z[codes == c].T @ Z[codes == c] for c in range(n_classes)])


@pytest.mark.parametrize(
    "n_classes, with_labels, m", [(1, False, 13), (1, True, 13), (4, False, 13), (1, True, 130), (3, False, 130)]
)
def test_compiled_passes_match_numpy(monkeypatch, n_classes, with_labels, m):
    """Pass 1 (norms, class sums, block counts) and pass 2 (class Grams) against NumPy, zero rows included.

    ``m = 130`` takes pass 1's pipelined loop (the next row's norm with the current row's sum).
    """
    import dpnb.numerics.linalg as linalg
    import dpnb.papers.ron_gauss as module

    monkeypatch.setattr(linalg, "BLOCK_VALUES", 0)  # blocks of 256 rows: several blocks, the last one short
    rng = np.random.default_rng(9)
    n, p = 1000, 5
    X = rng.standard_normal((n, m)) * rng.uniform(0.01, 100, (n, 1))
    X[[0, 17, 600]] = 0.0
    X[300] = 1e200  # finite, squared norm overflows: normalised after a rescaling
    X[450] *= 1e-170  # finite, squared norm underflows: the same
    y = rng.uniform(-3, 3, n) if with_labels else None
    labels = rng.integers(10, 10 + n_classes, n)  # class c is label 10 + c
    index, lookup = (
        (labels, module._encode_labels(labels)[2]) if n_classes > 1 else (np.empty(0, int), np.zeros(1, int))
    )
    codes = labels - 10
    W = module.haar_stiefel(m, p, random_state=rng).T
    means = rng.standard_normal((n_classes, m)) / (2 * np.sqrt(m))
    inv_norms, sums, block_counts, clipped, finite, labels_finite, rescaled = module._class_sums(
        X, index, lookup, n_classes, y, 1.5
    )
    assert finite and labels_finite and rescaled
    rows = np.flatnonzero(inv_norms == module._RESCALED)
    np.testing.assert_array_equal(rows, [300, 450])
    grams = module._class_second_moments(X, index, lookup, block_counts, inv_norms, W, means, clipped, rows)
    ref_inv, ref_sums, ref_grams = _numpy_passes(X, codes, n_classes, means, W, y, 1.5)
    np.testing.assert_array_equal(ref_inv[rows], 1.0)  # the reference holds their unit rows
    ref_inv[rows] = module._RESCALED
    np.testing.assert_allclose(inv_norms, ref_inv, rtol=1e-12, atol=0)
    np.testing.assert_allclose(sums, ref_sums, rtol=1e-12, atol=1e-12 * np.abs(ref_sums).max())
    expected_counts = [np.bincount(codes[s : s + 256], minlength=n_classes) for s in range(0, n, 256)]
    np.testing.assert_array_equal(block_counts, expected_counts)
    np.testing.assert_allclose(grams, ref_grams, rtol=1e-12, atol=1e-12 * np.abs(ref_grams).max())


def test_compiled_pass_flags_non_finite_labels():
    import dpnb.papers.ron_gauss as module

    X, y = np.ones((600, 3)), np.zeros(600)
    y[599] = np.nan
    flags = module._class_sums(X, np.empty(0, int), np.zeros(1, int), 1, y, 1.0)[4:6]
    assert flags == (True, False)
    assert module._class_sums(X, np.empty(0, int), np.zeros(1, int), 1, np.zeros(600), 1.0)[4:6] == (True, True)


@pytest.mark.parametrize("mode", ["unsupervised", "supervised", "gmm"])
def test_noisy_fit_does_not_depend_on_the_block_size(monkeypatch, mode):
    """Same seed, blocks of 256 rows or one block: the same release up to rounding (same noise draws)."""
    import dpnb.numerics.linalg as linalg

    rng = np.random.default_rng(6)
    X = rng.standard_normal((9000, 9))
    y = {"unsupervised": None, "supervised": rng.uniform(-1, 1, 9000), "gmm": rng.integers(0, 2, 9000)}[mode]
    kwargs = {"mode": mode, "label_bound": 1.0} if mode == "supervised" else {"mode": mode}
    monkeypatch.setattr(linalg, "BLOCK_VALUES", 0)  # the smallest blocks, 256 rows
    chunked = RONGauss(3, 1.0, random_state=2, **kwargs).fit(X, y)
    monkeypatch.setattr(linalg, "BLOCK_VALUES", 10**12)  # one block
    whole = RONGauss(3, 1.0, random_state=2, **kwargs).fit(X, y)
    for name in ("mean_", "covariance_", "class_means_", "class_covariances_"):
        if hasattr(whole, name):
            np.testing.assert_allclose(getattr(chunked, name), getattr(whole, name), rtol=0, atol=1e-13)


@pytest.mark.parametrize(
    "y",
    [
        np.array([3, 0, 3, 7, 0]),
        np.array([-2, 5, -2]),
        np.array([10**9, 1, 1]),
        np.array(["b", "a", "b"]),
        np.array([1, 0, 1], dtype=np.uint8),
        np.array([2**63 + 5, 1, 2**63 + 5], dtype=np.uint64),  # wraps to negative as intp: np.unique's path
        np.arange(5000)[::-1] % 4999,  # more classes than the interleaved counters take
    ],
)
def test_encode_labels_matches_unique(y):
    from dpnb.papers.ron_gauss import _encode_labels

    classes, index, lookup, counts = _encode_labels(y)
    expected = np.unique(y, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(classes, expected[0])
    np.testing.assert_array_equal(lookup[index], expected[1].reshape(-1))
    np.testing.assert_array_equal(counts, expected[2])


# ------------------------------------------------------------------ Table 5's kernel ridge regression
@pytest.mark.parametrize("p", [2, 9])
def test_rbf_ridge_predict_matches_kernel_ridge(p):
    from sklearn.kernel_ridge import KernelRidge

    from dpnb.papers.ron_gauss import rbf_ridge_predict, rbf_ridge_test_kernel_bound

    rng = np.random.default_rng(8)
    Z, Z_test = rng.standard_normal((400, p)), rng.standard_normal((700, p))
    y = np.sin(Z[:, 0]) + 0.1 * rng.standard_normal(400)
    for alpha, gamma in ((0.1, None), (2.0, 0.3)):
        kr = KernelRidge(alpha=alpha, kernel="rbf", gamma=gamma).fit(Z, y)
        diff = np.abs(rbf_ridge_predict(Z, y, Z_test, alpha=alpha, gamma=gamma) - kr.predict(Z_test)).max()
        assert 0 < diff <= rbf_ridge_test_kernel_bound(kr.dual_coef_)


def test_rbf_ridge_float32_test_kernel_at_table5_size():
    """Table 5's size (1,500 training rows of a RON-Gauss release, 4,957 test rows): the float32 test kernel moves
    predictions and the RMSE by less than the bound, and the bound is far below the 0.01 the table prints."""
    from sklearn.metrics.pairwise import rbf_kernel

    from dpnb.papers.ron_gauss import _refined_spd_solve, rbf_ridge_predict, rbf_ridge_test_kernel_bound

    rng = np.random.default_rng(10)
    X = rng.standard_normal((6457, 30)) @ rng.standard_normal((30, 30))
    y = np.tanh(X @ rng.standard_normal(30) / 10)
    model = RONGauss(8, 1.0, mode="supervised", label_bound=1.0, random_state=11).fit(X[:1500], y[:1500])
    Z, y_release = model.sample(1500)
    Z_test, y_test = model.transform(X[1500:]), y[1500:]
    coef = _refined_spd_solve(rbf_kernel(Z, gamma=1 / 8) + 0.1 * np.eye(1500), y_release)
    exact = rbf_kernel(Z_test, Z, gamma=1 / 8) @ coef
    pred = rbf_ridge_predict(Z, y_release, Z_test, alpha=0.1)
    bound = rbf_ridge_test_kernel_bound(coef)
    assert np.abs(pred - exact).max() <= bound
    rmse = [np.sqrt(np.mean((v - y_test) ** 2)) for v in (pred, exact)]
    assert abs(rmse[0] - rmse[1]) <= bound < 0.1 * 0.005


def test_rbf_ridge_test_kernel_bound():
    from dpnb.papers.ron_gauss import rbf_ridge_test_kernel_bound

    assert rbf_ridge_test_kernel_bound(np.array([1.0, -3.0])) == pytest.approx(4 * 2.0**-24 * (np.exp(-1) + 8))
    with pytest.raises(ValueError):
        rbf_ridge_test_kernel_bound(np.ones((2, 2)))
    with pytest.raises(ValueError):
        rbf_ridge_test_kernel_bound(np.array([np.nan]))


@pytest.mark.parametrize("ridge", [1e-1, 1e-9])
def test_refined_spd_solve_reaches_float64_accuracy(ridge):
    """Well conditioned: float32 factor plus refinement; too ill conditioned for float32: float64 fallback."""
    from dpnb.papers.ron_gauss import _refined_spd_solve

    rng = np.random.default_rng(9)
    B = rng.standard_normal((300, 40))
    A = B @ B.T + ridge * np.eye(300)  # rank 40 plus a ridge: condition number ~ 1e3 or ~ 1e12
    b = rng.standard_normal(300)
    x = _refined_spd_solve(A, b)
    expected = np.linalg.solve(A, b)
    residual = np.abs(b - A @ x).max()
    assert residual <= 300 * np.finfo(float).eps * np.abs(A).sum(axis=1).max() * np.abs(x).max()
    if ridge > 1e-3:  # forward error <= condition number x backward error
        assert np.linalg.norm(x - expected) <= 1e-10 * np.linalg.norm(expected)


@pytest.mark.parametrize("bad", ["X", "y"])
def test_rejected_input_draws_nothing_from_the_generator(bad):
    """Non-finite rows or labels are found in the pass over X, before the projection is drawn."""
    rng = np.random.default_rng(13)
    X, y = rng.standard_normal((400, 5)), rng.uniform(-1, 1, 400)
    (X[399] if bad == "X" else y[399:])[0] = np.nan
    generator = np.random.default_rng(7)
    state = generator.bit_generator.state
    with pytest.raises(ValueError, match=f"{bad} contains NaN or infinite"):
        RONGauss(2, 1.0, mode="supervised", label_bound=1.0, random_state=generator).fit(X, y)
    assert generator.bit_generator.state == state


@pytest.mark.parametrize("mode", ["unsupervised", "supervised", "gmm"])
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_fit_rejects_non_finite_rows_from_their_norms_and_keeps_no_fitted_state(mode, value):
    rng = np.random.default_rng(12)
    X = rng.standard_normal((300, 6))
    y = rng.integers(2, size=300) if mode == "gmm" else rng.uniform(-1, 1, size=300)
    X[299, 3] = value  # the last row: the check comes from the row norms of the whole pass
    model = RONGauss(2, 1.0, mode=mode, label_bound=1.0 if mode == "supervised" else None, random_state=0)
    with pytest.raises(ValueError, match="NaN or infinite"):
        model.fit(X, y)
    assert not hasattr(model, "components_") and not hasattr(model, "n_features_in_")
    X[299, 3] = 0.5
    assert np.isfinite(model.fit(X, y).components_).all()


def test_rbf_ridge_on_far_apart_records_matches_kernel_ridge():
    """A release with large noise: records far apart, kernel entries down to the subnormal range and below, which the
    solve and the test kernel flush to zero (dpnb.numerics.subnormals); predictions stay within the test kernel's
    bound of scikit-learn's, and the solve keeps float64 accuracy."""
    from sklearn.kernel_ridge import KernelRidge

    from dpnb.papers.ron_gauss import rbf_ridge_predict, rbf_ridge_test_kernel_bound

    rng = np.random.default_rng(12)
    Z, Z_test = rng.standard_normal((500, 2)) * 30, rng.standard_normal((800, 2)) * 30
    y = rng.uniform(-1, 1, 500)
    kr = KernelRidge(alpha=0.1, kernel="rbf", gamma=0.5).fit(Z, y)
    exponents = -0.5 * ((Z[:, None, :] - Z[None, :, :]) ** 2).sum(axis=2)
    assert (exponents < np.log(np.finfo(np.float32).tiny)).mean() > 0.9  # mostly below float32's normal range
    pred = rbf_ridge_predict(Z, y, Z_test, alpha=0.1, gamma=0.5)
    assert np.abs(pred - kr.predict(Z_test)).max() <= rbf_ridge_test_kernel_bound(kr.dual_coef_)
