import itertools
import re

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline

from dpnb.ground.validation import check_bounds
from dpnb.numerics.linalg import gaussian_draws
from dpnb.numerics.stats import clopper_pearson, mean_ci
from dpnb.papers.dppro import gaussian_projection
from dpnb.papers.pca_gauss import (
    PCAGauss,
    analyze_gauss_pca,
    coordinate_bounds,
    eigenvalue_sensitivity,
    feature_scale,
    gmm_sensitivities,
    lap_pca,
    pca_spectrum,
    public_pca,
    reduce_features,
    second_moment_l1_sensitivity,
)
from dpnb.privacy import audit
from dpnb.privacy.estimator import budget_total


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(300, 6))
    return X, (X[:, 0] > 0).astype(int), np.clip(0.5 * X[:, 1], -1, 1)


# --- bounds and sensitivities ---------------------------------------------------------------
def test_check_bounds_and_coordinate_bounds():
    low, _high = check_bounds((-1.0, 2.0), 3)
    np.testing.assert_array_equal(low, [-1.0] * 3)
    np.testing.assert_array_equal(coordinate_bounds(([-1.0, -3.0], [2.0, 1.0])), [2.0, 3.0])
    with pytest.raises(TypeError, match="pair"):
        coordinate_bounds(1.0)
    with pytest.raises(ValueError, match="low < high"):
        coordinate_bounds((1.0, 1.0))
    with pytest.raises(ValueError, match="one entry per feature"):
        coordinate_bounds(([0.0, 0.0], 1.0), 3)
    with pytest.raises(ValueError, match="bounds must be finite"):
        coordinate_bounds((-np.inf, np.inf))


def test_second_moment_l1_sensitivity_formula_and_brute_force():
    c = np.array([1.0, 0.5, 2.0])
    assert second_moment_l1_sensitivity((-c, c), 4, part="full") == pytest.approx(3.5**2 / 4)
    assert second_moment_l1_sensitivity((-c, c), 4) == pytest.approx((3.5**2 + 5.25) / 8)
    # only |x_j| <= max(|low_j|, |high_j|) matters; scalar bounds need n_features
    assert second_moment_l1_sensitivity((-c, 0.0), 4) == second_moment_l1_sensitivity((-c, c), 4)
    assert second_moment_l1_sensitivity((-1.0, 1.0), 4, n_features=3) == second_moment_l1_sensitivity(
        (-np.ones(3), np.ones(3)), 4
    )
    # exhaustive over a grid of the box (vertices, zero, midpoints): the maximum equals the formula
    grid = [np.array(p) * c for p in itertools.product([-1.0, -0.5, 0.0, 0.5, 1.0], repeat=3)]
    iu = np.triu_indices(3)
    best_full = best_triu = 0.0
    for x, xp in itertools.product(grid, repeat=2):
        D = np.outer(x, x) - np.outer(xp, xp)
        best_full = max(best_full, np.abs(D).sum())
        best_triu = max(best_triu, np.abs(D[iu]).sum())
    assert best_full == pytest.approx(second_moment_l1_sensitivity((-c, c), 1, part="full"))
    assert best_triu == pytest.approx(second_moment_l1_sensitivity((-c, c), 1))


@pytest.mark.parametrize(
    "bounds,n,kwargs,match",
    [
        (([1.0, 0.0], [1.0, 0.0]), 3, {}, "low < high"),
        ((-1.0, 1.0), 0, {}, "n_samples"),
        ((-1.0, [[1.0]]), 3, {}, "scalars or vectors"),
        ((-1.0, np.nan), 3, {}, "finite"),
        ((-1.0, 1.0), 3, {"part": "lower"}, "part"),
        ((-1.0, [1.0, 1.0]), 3, {"n_features": 3}, "one entry per feature"),
    ],
)
def test_second_moment_l1_sensitivity_bad_input(bounds, n, kwargs, match):
    with pytest.raises(ValueError, match=match):
        second_moment_l1_sensitivity(bounds, n, **kwargs)
    with pytest.raises(TypeError, match=r"bounds must be a pair"):
        second_moment_l1_sensitivity(np.ones(3), 3)  # coordinate bounds alone are not a box


def test_eigenvalue_sensitivity_value_and_attained():
    assert eigenvalue_sensitivity(1, 10, (-2.0, 2.0)) == pytest.approx(0.4)
    assert eigenvalue_sensitivity(5, 10) == pytest.approx(0.2)
    assert eigenvalue_sensitivity(5, 10, noise_scale="paper") == pytest.approx(0.5)
    # per-feature bounds: a^2 is the mean of c_j^2
    assert eigenvalue_sensitivity(2, 1, ([-1.0, -3.0], [1.0, 1.0])) == pytest.approx(2 * 5.0)
    # one record moves from one direction to an orthogonal one: the bound 2 a^2 / N is reached
    u, w = np.ones(4), np.array([1.0, 1.0, -1.0, -1.0])
    X = np.array([u, u, u, w, w, w])
    Xp = X.copy()
    Xp[0] = w
    eig = [np.sort(np.linalg.eigvalsh(Y.T @ Y / (6 * 4)))[::-1][:3] for Y in (X, Xp)]
    assert np.abs(eig[0] - eig[1]).sum() == pytest.approx(eigenvalue_sensitivity(3, 6))
    with pytest.raises(ValueError, match="n_components"):
        eigenvalue_sensitivity(0, 10)
    with pytest.raises(ValueError, match="noise_scale"):
        eigenvalue_sensitivity(2, 10, noise_scale="published")


def test_eigenvalue_sensitivity_survives_search():
    def query(X):
        return np.linalg.eigvalsh(X.T @ X / (5 * 3))[::-1][:2]

    res = audit.search_sensitivity(
        query,
        audit.ReplaceRowBox(-1, 1),
        5,
        3,
        norm=1,
        claimed=eigenvalue_sensitivity(2, 5),
        n_starts=5,
        n_steps=80,
        random_state=1,
    )
    assert not res.exceeds


def test_gmm_sensitivities():
    assert gmm_sensitivities(3, (-0.5, 0.5)) == {"counts": 2.0, "sums": 3.0, "second_moments": 3.0}
    assert gmm_sensitivities(3, (0.0, 0.5)) == gmm_sensitivities(3, (-0.5, 0.5))  # a = max |bound|
    with pytest.raises(TypeError, match="n_components"):
        gmm_sensitivities(1.5)
    with pytest.raises(TypeError, match="bounds must be a pair"):
        gmm_sensitivities(3, 0.5)


@pytest.mark.parametrize("k", [2, 3, 6])  # 2: from Z unless cached; 3 and 6: from the Gram matrix
def test_fixed_basis_release_uses_the_reduced_moments(data, k):
    X = data[0]
    W = gaussian_projection(6, k, random_state=1)
    for X_ in (X, X[::-1].copy(), X):  # other data (same rows, another order: the same moments), then a cache hit
        model = PCAGauss(k, np.inf, basis=W, mean_fraction=0.5).fit(X_)
        Z = model.transform(X_)
        np.testing.assert_allclose(
            model.covariance_, Z.T @ Z / len(Z) - np.outer(Z.mean(axis=0), Z.mean(axis=0)), atol=1e-12
        )


def test_pca_spectrum_exact_and_the_module_keeps_no_moments(data):
    import dpnb.papers.pca_gauss as module

    X = data[0]
    lam = pca_spectrum(X)
    np.testing.assert_allclose(lam, np.linalg.eigvalsh(X.T @ X / X.size)[::-1])
    X2 = X.copy()
    X2[0] = 1.0
    np.testing.assert_allclose(pca_spectrum(X2), np.linalg.eigvalsh(X2.T @ X2 / X2.size)[::-1])
    assert not [
        name for name, value in vars(module).items() if isinstance(value, dict) and value and not name.startswith("__")
    ]
    # rows whose second moment overflows are refused, also where only the sum over the N rows overflows (each
    # square finite); at the edge N t^2 = float64's largest, the spectrum is finite or refused, never inf or a
    # LinAlgError; a millionth below it, always finite
    refused = r"X's second moment X\^T X / \(N M\) overflows float64 .*: rescale X"
    for n, m in ((2, 3), (4, 3), (100, 3), (1000, 1), (12345, 3), (50000, 2)):
        edge = np.sqrt(np.finfo(float).max / n)
        with pytest.raises(ValueError, match=refused):
            pca_spectrum(np.full((n, m), -1.000001 * edge))
        assert np.all(np.isfinite(pca_spectrum(np.full((n, m), 0.999999 * edge))))
        for factor in (1 - 1e-15, 1.0, 1 + 1e-15):
            try:
                assert np.all(np.isfinite(pca_spectrum(np.full((n, m), factor * edge))))
            except ValueError as exc:
                assert re.match(refused, str(exc)), exc
    with pytest.raises(ValueError, match=refused):
        pca_spectrum(np.full((2, 3), 1e200))
    np.testing.assert_array_equal(pca_spectrum(np.zeros((2, 3))), np.zeros(3))


@pytest.mark.parametrize("noise", ["float", "exact"])
def test_a_given_spectrum_gives_the_same_release_bit_for_bit(data, noise):
    X = data[0]
    spectrum = pca_spectrum(X)
    for k, eps in ((1, 0.5), (3, 2.0), (6, np.inf)):
        plain = PCAGauss(k, eps, noise=noise, random_state=7).fit(X)
        given = PCAGauss(k, eps, noise=noise, random_state=7).fit(X, spectrum=spectrum)
        shuffled = PCAGauss(k, eps, noise=noise, random_state=7).fit(X, spectrum=spectrum[[3, 0, 5, 1, 4, 2]])
        drawn = plain.sample(5)
        for model in (given, shuffled):  # its K largest, in any order given
            np.testing.assert_array_equal(model.covariance_, plain.covariance_)
            assert model.budget_ == plain.budget_ and model.sensitivity_ == plain.sensitivity_
            np.testing.assert_array_equal(model.sample(5), drawn)
    # the given values are the ones released (here, halved ones), also for float32 input, whose pass checks the box
    for rows in (X, X.astype(np.float32)):
        noiseless = PCAGauss(2, np.inf).fit(rows, spectrum=spectrum / 2)
        np.testing.assert_array_equal(np.diag(noiseless.covariance_), spectrum[:2] / 2)


def test_a_spectrum_is_refused_where_it_is_not_used_and_the_box_is_still_checked(data):
    X, c, y = data
    spectrum = pca_spectrum(X)
    W = public_pca(X, 2)
    for model, args in (
        (PCAGauss(2, 1.0, basis=W), (X,)),
        (PCAGauss(2, 1.0, mode="supervised", basis=W), (X, y)),
        (PCAGauss(2, 1.0, mode="gmm", basis=W, n_classes=2), (X, c)),
    ):
        with pytest.raises(ValueError, match="spectrum is only used by Algorithm 1"):
            model.fit(*args, spectrum=spectrum)
        assert not hasattr(model, "covariance_") and not hasattr(model, "class_means_")
    model = PCAGauss(2, 1.0)
    with pytest.raises(ValueError, match=r"one eigenvalue per feature \(6\): pass pca_spectrum\(X\)"):
        model.fit(X, spectrum=spectrum[:5])
    with pytest.raises(ValueError, match="spectrum must be 1-dimensional"):
        model.fit(X, spectrum=np.diag(spectrum))
    for bad in (np.nan, np.inf):
        with pytest.raises(ValueError, match=r"spectrum must be finite: pass pca_spectrum\(X\)"):
            model.fit(X, spectrum=np.append(spectrum[:5], bad))
    with pytest.raises(TypeError, match="spectrum"):
        model.fit(X, spectrum=["a"] * 6)
    outside = X.copy()
    outside[3, 2] = 1.5
    for rows in (outside, outside.astype(np.float32)):
        with pytest.raises(ValueError, match="bounds|box"):
            model.fit(rows, spectrum=spectrum)
    assert not hasattr(model, "covariance_")


def test_gaussian_draws_law_and_sign_invariance():
    cov = np.array([[2.0, 0.6], [0.6, 1.0]])
    Z = gaussian_draws([1.0, -1.0], cov, 20000, random_state=0)
    np.testing.assert_allclose(Z.mean(axis=0), [1.0, -1.0], atol=0.05)  # > 4 standard errors
    np.testing.assert_allclose(np.cov(Z.T), cov, atol=0.08)
    # the draws depend on the covariance only, not on which eigenvector signs a solver returns
    np.testing.assert_array_equal(
        gaussian_draws(np.zeros(2), cov, 5, random_state=1), gaussian_draws(np.zeros(2), cov.copy(), 5, random_state=1)
    )
    assert gaussian_draws(np.zeros(3), np.zeros((3, 3)), 4, random_state=0).shape == (4, 3)


# --- features and bases ---------------------------------------------------------------------
def test_feature_scale_and_reduce_features_stay_in_box():
    assert feature_scale(np.eye(4)) == 1.0
    W = np.linalg.qr(np.random.default_rng(1).standard_normal((9, 3)))[0]
    assert feature_scale(W) <= 3.0 + 1e-12  # Lemma 1: sqrt(M) for unit columns
    vertices = np.array(list(itertools.product([-2.0, 2.0], repeat=9)))
    Z = reduce_features(vertices, W, bounds=(-2.0, 2.0))
    assert Z.shape == (512, 3)
    assert np.abs(Z).max() == pytest.approx(2.0)  # the exact range is reached at a vertex
    # the scale of a Gaussian projection does not matter after the rescaling
    R = gaussian_projection(9, 3, random_state=4)
    np.testing.assert_allclose(
        reduce_features(vertices, R, bounds=(-2.0, 2.0)), reduce_features(vertices, 5 * R, bounds=(-2.0, 2.0))
    )
    with pytest.raises(ValueError, match="zero columns"):
        feature_scale(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="outside the declared bounds"):
        reduce_features(vertices, W)
    with pytest.raises(ValueError, match="one row per feature"):
        reduce_features(vertices, W[:5], bounds=(-2.0, 2.0))


def test_lap_pca_recovers_top_direction_and_is_exact_at_infinite_epsilon(data):
    X = data[0] * np.array([1.0, 0.2, 0.2, 0.2, 0.2, 0.2])
    V = lap_pca(X, 2, 1e6, random_state=3)
    assert V.shape == (6, 2)
    np.testing.assert_allclose(V.T @ V, np.eye(2), atol=1e-10)
    assert abs(V[0, 0]) > 0.999
    np.testing.assert_array_equal(V, lap_pca(X, 2, 1e6, random_state=3))
    np.testing.assert_array_equal(lap_pca(X, 2, np.inf, random_state=3), public_pca(X, 2))
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
    np.testing.assert_allclose(
        np.abs(analyze_gauss_pca(X, 3, np.inf, 1e-5).T @ public_pca(X, 3)), np.eye(3), atol=1e-10
    )
    with pytest.raises(ValueError, match="norm"):
        analyze_gauss_pca(data[0], 3, 1.0, 1e-5, data_norm=1.0)
    with pytest.raises(ValueError, match="classic"):
        analyze_gauss_pca(X, 3, 2.0, 1e-5, calibration="classic")
    with pytest.raises(ValueError, match="calibration"):
        analyze_gauss_pca(X, 3, 1.0, 1e-5, calibration="exact")
    with pytest.raises(ValueError, match="noise_scale"):
        analyze_gauss_pca(X, 3, 1.0, 1e-5, noise_scale="classic")
    with pytest.raises(ValueError, match="delta"):
        analyze_gauss_pca(X, 3, 1.0, 1.5)


def test_public_pca(data):
    X = data[0]
    V = public_pca(X, 2)
    _w, E = np.linalg.eigh(X.T @ X / len(X))
    assert abs(V[:, 0] @ E[:, -1]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="at least 2"):
        public_pca(X[:1], 1)


# --- PCAGauss: the estimator contract ---------------------------------------------------------
def _models(X):
    W = public_pca(X, 2)
    return [
        PCAGauss(2, 0.7, random_state=0),
        PCAGauss(2, 0.7, basis=W, random_state=0),
        PCAGauss(2, 0.7, mode="supervised", basis=W, mean_fraction=0.2, random_state=0),
        PCAGauss(2, 0.7, mode="gmm", basis=W, n_classes=2, random_state=0),
        PCAGauss(2, 0.7, mode="gmm", basis=W, n_classes=2, noise_scale="paper", random_state=0),
    ]


def _fit(model, data):
    X, c, y = data
    labels = {"unsupervised": None, "supervised": y, "gmm": c}[model.mode]
    return model.fit(X, labels)


def test_clone_get_set_params_and_refit_determinism(data):
    for model in _models(data[0]):
        twin = clone(model)
        assert set(twin.get_params()) == set(model.get_params())
        assert "PCAGauss" in repr(twin)
        labelled = model.mode != "unsupervised"
        Z1, y1 = _fit(model, data).sample(20) if labelled else (_fit(model, data).sample(20), None)
        budget = dict(model.budget_)
        Z2, y2 = _fit(model, data).sample(20) if labelled else (_fit(model, data).sample(20), None)
        np.testing.assert_array_equal(Z1, Z2)
        assert (y1 is None and y2 is None) or np.array_equal(y1, y2)
        assert model.budget_ == budget
        assert budget_total(model.budget_) == pytest.approx((0.7, 0.0))
        assert set(model.sensitivity_) == set(model.budget_)
        assert model.n_features_in_ == 6
    model = PCAGauss(2, 1.0).set_params(epsilon=0.5, n_components=3)
    assert model.get_params()["epsilon"] == 0.5 and model.n_components == 3


def test_components_transform_and_pipeline(data):
    X, _, y = data
    W = public_pca(X, 2)
    model = PCAGauss(2, 1.0, basis=W, random_state=0).fit(X)
    assert model.components_.shape == (2, 6)
    np.testing.assert_allclose(model.transform(X), reduce_features(X, W))
    pipe = make_pipeline(PCAGauss(2, 1.0, basis=W, random_state=0), Ridge()).fit(X, y)
    assert pipe.predict(X).shape == (300,)
    assert PCAGauss(2, 1.0).fit(X).components_ is None  # Algorithm 1 keeps its data-derived basis private


def test_not_fitted_and_bad_privacy(data):
    X = data[0]
    for method, args in (("sample", (3,)), ("transform", (X,))):
        with pytest.raises(NotFittedError):
            getattr(PCAGauss(2, 1.0, basis=np.eye(6)[:, :2]), method)(*args)
    with pytest.raises(ValueError, match="epsilon"):
        PCAGauss(2, -1.0).fit(X)
    with pytest.raises(TypeError, match="epsilon"):
        PCAGauss(2, "1").fit(X)
    with pytest.raises(TypeError, match="random_state"):
        PCAGauss(2, 1.0, random_state="seed").fit(X)


def test_infinite_epsilon_is_noiseless(data):
    X, c, y = data
    model = PCAGauss(3, np.inf, random_state=0).fit(X)
    np.testing.assert_allclose(np.diag(model.covariance_), pca_spectrum(X)[:3])
    W = public_pca(X, 2)
    sup = PCAGauss(2, np.inf, mode="supervised", basis=W).fit(X, y)
    Z = np.column_stack([reduce_features(X, W), y])
    np.testing.assert_allclose(sup.covariance_, Z.T @ Z / len(Z), atol=1e-12)
    gmm = PCAGauss(2, np.inf, mode="gmm", basis=W, n_classes=2).fit(X, c)
    np.testing.assert_allclose(gmm.class_means_[1], reduce_features(X, W)[c == 1].mean(axis=0))
    np.testing.assert_allclose(gmm.class_weights_, np.bincount(c) / len(c))


# --- PCAGauss: the algorithms ---------------------------------------------------------------------
def test_algorithm1_release_and_budget(data):
    X = data[0]
    model = PCAGauss(3, 0.7, random_state=0).fit(X)
    assert model.budget_ == {"eigenvalues": (0.7, 0.0)}
    assert model.sensitivity_["eigenvalues"] == eigenvalue_sensitivity(3, 300)
    assert np.allclose(model.covariance_, np.diag(np.diag(model.covariance_)))
    Z = model.sample(50)
    assert isinstance(Z, np.ndarray) and Z.shape == (50, 3)
    with pytest.raises(ValueError, match="basis private"):
        model.transform(X)
    paper = PCAGauss(3, 0.7, noise_scale="paper", random_state=0).fit(X)
    assert paper.sensitivity_["eigenvalues"] == pytest.approx(1.5 * model.sensitivity_["eigenvalues"])


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
    assert {k: v[0] for k, v in model.budget_.items()} == pytest.approx({"second_moment": 0.8, "mean": 0.2})
    assert model.sensitivity_["second_moment"] == second_moment_l1_sensitivity((-1.0, 1.0), 300, n_features=3)
    Z, y_syn = model.sample(4000)
    assert Z.shape == (4000, 2) and y_syn.shape == (4000,)
    assert np.all(np.linalg.eigvalsh(model.covariance_) >= -1e-12)
    # the sample mean of the label estimates the model's mean: 99.9% interval
    _, lo, hi = mean_ci(y_syn, 0.999)
    assert lo <= model.mean_[-1] <= hi
    assert model.transform(X).shape == (300, 2)
    paper = PCAGauss(2, 1.0, mode="supervised", basis=W, noise_scale="paper").fit(X, y)
    assert paper.sensitivity_["second_moment"] == pytest.approx(13 / 300)  # (K^2 + 4K + 1) a^2 / N


def test_gmm_release_and_class_proportions(data):
    X, c, _ = data
    W = public_pca(X, 2)
    model = PCAGauss(2, 2.0, mode="gmm", basis=W, n_classes=2, random_state=2).fit(X, c)
    spent = {k: v[0] for k, v in model.budget_.items()}
    assert spent == pytest.approx({"counts": 0.1, "sums": 0.2, "second_moments": 1.7})
    assert model.sensitivity_ == gmm_sensitivities(2)
    assert model.components_.shape == (2, 6) and not hasattr(model, "mean_")
    Z, y_syn = model.sample(3000)
    assert Z.shape == (3000, 2)
    lo, hi = clopper_pearson(int((y_syn == 1).sum()), 3000, 0.999)
    assert lo <= model.class_weights_[1] <= hi
    assert model.class_covariances_.shape == (2, 2, 2)


def test_gmm_paper_calibration_scales_with_private_class_sizes(data):
    X, c, _ = data
    model = PCAGauss(2, 1.0, mode="gmm", basis=public_pca(X, 2), n_classes=2, noise_scale="paper").fit(X, c)
    sizes = np.bincount(c)
    np.testing.assert_allclose(model.sensitivity_["class_means"], 4.0 / sizes)
    np.testing.assert_allclose(model.sensitivity_["class_covariances"], 4.0 / sizes)
    assert {k: v[0] for k, v in model.budget_.items()} == pytest.approx({"class_means": 0.1, "class_covariances": 0.9})


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"mode": "pca"}, "mode"),
        ({"mode": "supervised"}, "independently derived basis"),
        ({"mode": "gmm", "basis": np.eye(6)[:, :2]}, "n_classes"),
        ({"n_classes": 2}, "only used with mode='gmm'"),
        ({"mean_fraction": 1.0}, "mean_fraction"),
        ({"mean_fraction": 0.1}, "releases no mean"),
        (
            {"mode": "gmm", "basis": np.eye(6)[:, :2], "n_classes": 2, "mean_fraction": 0.6, "count_fraction": 0.5},
            "< 1",
        ),
        ({"bounds": (0.0, 0.0)}, "low < high"),
        ({"basis": np.eye(6)[:, :3]}, "n_components=2"),
        ({"noise_scale": "published"}, "noise_scale"),
    ],
)
def test_pcagauss_bad_parameters(data, kwargs, match):
    model = PCAGauss(2, 1.0, **kwargs)  # __init__ only stores
    with pytest.raises(ValueError, match=match):
        model.fit(data[0], data[1])


def test_pcagauss_bad_data(data):
    X, c, y = data
    W = np.eye(6)[:, :2]
    with pytest.raises(ValueError, match="outside the declared bounds"):
        PCAGauss(2, 1.0).fit(X * 2)
    with pytest.raises(ValueError, match="NaN"):
        PCAGauss(2, 1.0).fit(np.full((3, 6), np.nan))
    with pytest.raises(ValueError, match="n_components"):
        PCAGauss(7, 1.0).fit(X)
    with pytest.raises(ValueError, match="one row per feature"):
        PCAGauss(2, 1.0, basis=np.eye(5)[:, :2]).fit(X)
    sup = PCAGauss(2, 1.0, mode="supervised", basis=W, label_bound=0.1)
    with pytest.raises(ValueError, match="y has entries outside"):
        sup.fit(X, y)
    with pytest.raises(ValueError, match="entries but X has"):
        sup.fit(X, y[:10])
    gmm = PCAGauss(2, 1.0, mode="gmm", basis=W, n_classes=3)
    assert gmm.fit(X, c).class_means_.shape == (3, 2)  # an empty class is released like any other
    with pytest.raises(ValueError, match=r"no records in 1 class \(2\)"):
        gmm.set_params(noise_scale="paper").fit(X, c)
    gmm.set_params(noise_scale="corrected")
    with pytest.raises(ValueError, match="integer class labels"):
        gmm.fit(X, c + 0.5)
    with pytest.raises(ValueError, match="needs labels"):
        gmm.fit(X)
    with pytest.raises(ValueError, match="n_samples"):
        PCAGauss(2, 1.0).fit(X).sample(0)
    with pytest.raises(ValueError, match="features"):
        PCAGauss(2, 1.0, basis=W).fit(X).transform(X[:, :5])


@pytest.mark.parametrize("noise_scale", ["corrected", "paper"])
def test_fitted_attributes_are_the_same_in_every_mode(data, noise_scale):
    X, c, y = data
    W = public_pca(X, 2)
    fits = {
        "same-data PCA": PCAGauss(2, 1.0, noise_scale=noise_scale).fit(X),
        "fixed basis": PCAGauss(2, 1.0, basis=W, noise_scale=noise_scale).fit(X),
        "supervised": PCAGauss(2, 1.0, mode="supervised", basis=W, noise_scale=noise_scale).fit(X, y),
        "gmm": PCAGauss(2, 1.0, mode="gmm", basis=W, n_classes=2, noise_scale=noise_scale).fit(X, c),
    }
    gaussian, mixture = ("mean_", "covariance_"), ("class_weights_", "class_means_", "class_covariances_")
    for name, model in fits.items():
        for attribute in ("budget_", "sensitivity_", "n_features_in_", "components_"):
            assert hasattr(model, attribute), (name, attribute)
        assert (model.components_ is None) == (name == "same-data PCA")
        released, absent = (mixture, gaussian) if name == "gmm" else (gaussian, mixture)
        assert all(hasattr(model, a) for a in released) and not any(hasattr(model, a) for a in absent), name


@pytest.mark.parametrize("radius", [5e-324, 1e-250, 1e250, 1.7e308])
def test_analyze_gauss_pca_at_an_extreme_data_norm_is_the_unit_scale_release(radius):
    """data_norm whose square under- or overflows: rows and radius scaled by a power of two first, so the basis is
    the one of the unit scale (same seed); 'sensitivity must be finite and > 0' or OverflowError before."""
    X = np.random.default_rng(0).uniform(-1, 1, (10, 4)) / 2
    V = analyze_gauss_pca(X * radius, 2, 1.0, 1e-5, data_norm=radius, random_state=0)
    assert np.all(np.isfinite(V))
    if radius > 1e-300:
        e = -np.frexp(radius)[1]
        scaled = analyze_gauss_pca(np.ldexp(X * radius, e), 2, 1.0, 1e-5, data_norm=np.ldexp(radius, e), random_state=0)
        np.testing.assert_array_equal(V, scaled)


def test_a_budget_part_that_underflows_is_refused_naming_epsilon():
    """count_fraction * epsilon underflows to 0: ZeroDivisionError before."""
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, (9, 5)), np.arange(9) % 2
    model = PCAGauss(2, 1e-283, mode="gmm", basis=np.eye(5)[:, :2], n_classes=2, count_fraction=1e-40)
    with pytest.raises(ValueError, match="epsilon"):
        model.fit(X, y)
