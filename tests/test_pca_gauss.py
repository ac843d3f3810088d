import itertools

import numpy as np
import pytest

from dpnb import audit
from dpnb.pca_gauss import (PCAGauss, analyze_gauss_pca, eigenvalue_sensitivity, feature_scale,
                            gaussian_projection_basis, gmm_sensitivities, lap_pca, public_pca,
                            reduce_features, second_moment_sensitivity)
from dpnb.stats import clopper_pearson, mean_ci


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(300, 6))
    return X, (X[:, 0] > 0).astype(int), np.clip(0.5 * X[:, 1], -1, 1)


# --- sensitivities --------------------------------------------------------------------------
def test_second_moment_sensitivity_formula_and_brute_force():
    c = np.array([1.0, 0.5, 2.0])
    assert second_moment_sensitivity(c, 4, triangle=False) == pytest.approx(3.5 ** 2 / 4)
    assert second_moment_sensitivity(c, 4) == pytest.approx((3.5 ** 2 + 5.25) / 8)
    # exhaustive over a grid of the box (vertices, zero, midpoints): the maximum equals the formula
    grid = [np.array(p) * c for p in itertools.product([-1.0, -0.5, 0.0, 0.5, 1.0], repeat=3)]
    iu = np.triu_indices(3)
    best_full = best_triu = 0.0
    for x, xp in itertools.product(grid, repeat=2):
        D = np.outer(x, x) - np.outer(xp, xp)
        best_full = max(best_full, np.abs(D).sum())
        best_triu = max(best_triu, np.abs(D[iu]).sum())
    assert best_full == pytest.approx(second_moment_sensitivity(c, 1, triangle=False))
    assert best_triu == pytest.approx(second_moment_sensitivity(c, 1))


@pytest.mark.parametrize("bounds,n,match", [([1.0, 0.0], 3, "bounds"), ([1.0], 0, "n_samples"),
                                            ([[1.0]], 3, "1-dimensional"), ([np.nan], 3, "NaN")])
def test_second_moment_sensitivity_bad_input(bounds, n, match):
    with pytest.raises(ValueError, match=match):
        second_moment_sensitivity(bounds, n)


def test_eigenvalue_sensitivity_value_and_attained():
    assert eigenvalue_sensitivity(1, 10, 2.0) == pytest.approx(0.4)
    assert eigenvalue_sensitivity(5, 10) == pytest.approx(0.2)
    # one record moves from one direction to an orthogonal one: the bound 2 a^2 / N is reached
    u, w = np.ones(4), np.array([1.0, 1.0, -1.0, -1.0])
    X = np.array([u, u, u, w, w, w])
    Xp = X.copy()
    Xp[0] = w
    eig = [np.sort(np.linalg.eigvalsh(Y.T @ Y / (6 * 4)))[::-1][:3] for Y in (X, Xp)]
    assert np.abs(eig[0] - eig[1]).sum() == pytest.approx(eigenvalue_sensitivity(3, 6))
    with pytest.raises(ValueError, match="n_components"):
        eigenvalue_sensitivity(0, 10)
    with pytest.raises(ValueError, match="bound"):
        eigenvalue_sensitivity(2, 10, bound=-1.0)


def test_eigenvalue_sensitivity_survives_search():
    def query(X):
        return np.linalg.eigvalsh(X.T @ X / (5 * 3))[::-1][:2]
    res = audit.search_sensitivity(query, audit.ReplaceRowBox(-1, 1), 5, 3, norm=1,
                                   claimed=eigenvalue_sensitivity(2, 5), n_starts=5, n_steps=80,
                                   random_state=1)
    assert not res.exceeds


def test_gmm_sensitivities():
    assert gmm_sensitivities(3, 0.5) == {"counts": 2.0, "sums": 3.0, "second_moments": 3.0}
    with pytest.raises(ValueError, match="n_components"):
        gmm_sensitivities(1.5)


# --- features and bases ---------------------------------------------------------------------
def test_feature_scale_and_reduce_features_stay_in_box():
    assert feature_scale(np.eye(4)) == 1.0
    W = np.linalg.qr(np.random.default_rng(1).standard_normal((9, 3)))[0]
    assert feature_scale(W) <= 3.0 + 1e-12  # Lemma 1: sqrt(M) for unit columns
    vertices = np.array(list(itertools.product([-2.0, 2.0], repeat=9)))
    Z = reduce_features(vertices, W, bound=2.0)
    assert Z.shape == (512, 3)
    assert np.abs(Z).max() == pytest.approx(2.0)  # the exact range is reached at a vertex
    with pytest.raises(ValueError, match="zero columns"):
        feature_scale(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="outside the declared bounds"):
        reduce_features(vertices, W, bound=1.0)
    with pytest.raises(ValueError, match="one row per feature"):
        reduce_features(vertices, W[:5], bound=2.0)


def test_lap_pca_recovers_top_direction_at_large_epsilon(data):
    X = data[0] * np.array([1.0, 0.2, 0.2, 0.2, 0.2, 0.2])
    V = lap_pca(X, 2, 1e6, random_state=3)
    assert V.shape == (6, 2)
    np.testing.assert_allclose(V.T @ V, np.eye(2), atol=1e-10)
    assert abs(V[0, 0]) > 0.999
    np.testing.assert_array_equal(V, lap_pca(X, 2, 1e6, random_state=3))
    with pytest.raises(ValueError, match="epsilon"):
        lap_pca(X, 2, 0.0)
    with pytest.raises(ValueError, match="n_components"):
        lap_pca(X, 7, 1.0)
    with pytest.raises(ValueError, match="outside the declared bounds"):
        lap_pca(X * 3, 2, 1.0)


def test_analyze_gauss_pca(data):
    X = data[0] / np.sqrt(6)
    V = analyze_gauss_pca(X, 3, 1.0, 1e-5, random_state=0)
    np.testing.assert_allclose(V.T @ V, np.eye(3), atol=1e-10)
    with pytest.raises(ValueError, match="norm"):
        analyze_gauss_pca(data[0], 3, 1.0, 1e-5, radius=1.0)
    with pytest.raises(ValueError, match="classic"):
        analyze_gauss_pca(X, 3, 2.0, 1e-5, calibration="classic")
    with pytest.raises(ValueError, match="delta"):
        analyze_gauss_pca(X, 3, 1.0, 1.5)


def test_public_pca_and_projection_basis(data):
    X = data[0]
    V = public_pca(X, 2)
    w, E = np.linalg.eigh(X.T @ X / len(X))
    assert abs(V[:, 0] @ E[:, -1]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="at least 2"):
        public_pca(X[:1], 1)
    R = gaussian_projection_basis(6, 4, random_state=5)
    assert R.shape == (6, 4)
    np.testing.assert_array_equal(R, gaussian_projection_basis(6, 4, random_state=5))
    with pytest.raises(ValueError, match="n_components"):
        gaussian_projection_basis(3, 4)
    with pytest.raises(ValueError, match="n_features"):
        gaussian_projection_basis(0, 1)


# --- PCAGauss -------------------------------------------------------------------------------
def test_algorithm1_release_and_budget(data):
    X = data[0]
    model = PCAGauss(3, 0.7, random_state=0).fit(X)
    assert model.budget_ == {"eigenvalues": 0.7}
    assert model.sensitivities_["eigenvalues"] == eigenvalue_sensitivity(3, 300)
    assert np.allclose(model.covariance_, np.diag(np.diag(model.covariance_)))
    assert model.sample(50).shape == (50, 3)
    with pytest.raises(ValueError, match="basis private"):
        model.transform(X)


def test_algorithm1_noise_variance_matches_laplace():
    rng = np.random.default_rng(11)
    X = rng.uniform(-1, 1, size=(2000, 5))
    top = np.linalg.eigvalsh(X.T @ X / (2000 * 5))[-1]
    draws = np.array([PCAGauss(2, 1.0, random_state=rng).fit(X).covariance_[0, 0] for _ in range(600)])
    _, lo, hi = mean_ci((draws - top) ** 2, 0.999)
    assert lo <= 2 * eigenvalue_sensitivity(2, 2000) ** 2 <= hi


def test_supervised_release_and_samples(data):
    X, _, y = data
    W = public_pca(X, 2)
    model = PCAGauss(2, 1.0, mode="supervised", basis=W, mean_fraction=0.2, random_state=1).fit(X, y)
    assert sum(model.budget_.values()) == pytest.approx(1.0)
    assert model.sensitivities_["second_moment"] == second_moment_sensitivity(np.ones(3), 300)
    Z, y_syn = model.sample(4000)
    assert Z.shape == (4000, 2) and y_syn.shape == (4000,)
    assert np.all(np.linalg.eigvalsh(model.covariance_) >= -1e-12)
    # the sample mean of the label estimates the model's mean: 99.9% interval
    _, lo, hi = mean_ci(y_syn, 0.999)
    assert lo <= model.mean_[-1] <= hi
    assert model.transform(X).shape == (300, 2)


def test_gmm_release_and_class_proportions(data):
    X, c, _ = data
    W = public_pca(X, 2)
    model = PCAGauss(2, 2.0, mode="gmm", basis=W, n_classes=2, random_state=2).fit(X, c)
    assert model.budget_ == pytest.approx({"counts": 0.1, "sums": 0.2, "second_moments": 1.7})
    assert model.sensitivities_ == gmm_sensitivities(2)
    Z, y_syn = model.sample(3000)
    assert Z.shape == (3000, 2)
    lo, hi = clopper_pearson(int((y_syn == 1).sum()), 3000, 0.999)
    assert lo <= model.class_weights_[1] <= hi
    assert model.class_covariances_.shape == (2, 2, 2)


@pytest.mark.parametrize("kwargs,match", [
    (dict(mode="pca"), "mode"),
    (dict(mode="supervised"), "independently derived basis"),
    (dict(mode="gmm", basis=np.eye(6)[:, :2]), "n_classes"),
    (dict(n_classes=2), "only used with mode='gmm'"),
    (dict(mean_fraction=1.0), "mean_fraction"),
    (dict(mean_fraction=0.1), "releases no mean"),
    (dict(mode="gmm", basis=np.eye(6)[:, :2], n_classes=2, mean_fraction=0.6, count_fraction=0.5), "< 1"),
    (dict(bound=0.0), "bound"),
    (dict(basis=np.eye(6)[:, :3]), "n_components=2"),
])
def test_pcagauss_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        PCAGauss(2, 1.0, **kwargs)
    with pytest.raises(ValueError, match="epsilon"):
        PCAGauss(2, -1.0)


def test_pcagauss_bad_data(data):
    X, c, y = data
    W = np.eye(6)[:, :2]
    with pytest.raises(ValueError, match="outside the declared bounds"):
        PCAGauss(2, 1.0).fit(X * 2)
    with pytest.raises(ValueError, match="NaN"):
        PCAGauss(2, 1.0).fit(np.full((3, 6), np.nan))
    with pytest.raises(ValueError, match="n_components"):
        PCAGauss(7, 1.0).fit(X)
    with pytest.raises(ValueError, match="takes no y"):
        PCAGauss(2, 1.0).fit(X, y)
    with pytest.raises(ValueError, match="rows but X has"):
        PCAGauss(2, 1.0, basis=np.eye(5)[:, :2]).fit(X)
    sup = PCAGauss(2, 1.0, mode="supervised", basis=W, label_bound=0.1)
    with pytest.raises(ValueError, match="y has entries outside"):
        sup.fit(X, y)
    with pytest.raises(ValueError, match="entries but X has"):
        sup.fit(X, y[:10])
    gmm = PCAGauss(2, 1.0, mode="gmm", basis=W, n_classes=3)
    with pytest.raises(ValueError, match=r"class\(es\) \[2\] have no records"):
        gmm.fit(X, c)
    with pytest.raises(ValueError, match="integer class labels"):
        gmm.fit(X, c + 0.5)
    with pytest.raises(ValueError, match="needs labels"):
        gmm.fit(X)
    with pytest.raises(ValueError, match="before sample"):
        PCAGauss(2, 1.0).sample(3)
    with pytest.raises(ValueError, match="n_samples"):
        PCAGauss(2, 1.0).fit(X).sample(0)
