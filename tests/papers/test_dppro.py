import itertools

import numpy as np
import pytest
from scipy import stats
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import Pipeline
from sklearn.svm import LinearSVC

from dpnb.numerics.stats import bootstrap_ci, clopper_pearson, mean_ci, variance_ci
from dpnb.papers.dppro import (
    NOISE_SCALES,
    DPPro,
    attribute_sensitivity,
    chi2_tail_bounds,
    gaussian_projection,
    lemma4_delta,
    lemma4_min_components,
    lemma4_sigma,
    optimal_n_components,
    project_and_perturb,
    record_sensitivity,
    record_sensitivity_weights,
    relative_l2_error,
    squared_distance_estimate,
    squared_distance_variance,
    theorem2_sigma,
    theta2_quantile,
    theta2_survival,
    theta2_tail_bound,
    worst_record_change,
)
from dpnb.privacy.estimator import budget_total
from dpnb.privacy.mechanisms import gaussian_delta, gaussian_sigma_analytic


def _binary(n, d, seed):
    return np.random.default_rng(seed).integers(0, 2, size=(n, d)).astype(float)


# --- projection and release --------------------------------------------------------------
def test_gaussian_projection_shape_and_entry_variance():
    R = gaussian_projection(300, 10, random_state=0)
    assert R.shape == (300, 10)
    _, lo, hi = variance_ci(R.ravel(), 0.99)  # entries are exactly normal: the chi-square CI applies
    assert lo <= 1 / 10 <= hi
    assert np.array_equal(R, gaussian_projection(300, 10, random_state=0))


def test_gaussian_projection_bad_input():
    with pytest.raises(ValueError, match="n_components"):
        gaussian_projection(5, 6)
    with pytest.raises(ValueError, match="n_features"):
        gaussian_projection(0, 1)


def test_project_and_perturb_adds_noise_of_the_given_sigma():
    R = gaussian_projection(4, 2, random_state=1)
    X = _binary(5000, 4, 2)
    P = project_and_perturb(X, R, 0.7, random_state=3)
    _, lo, hi = variance_ci((P - X @ R).ravel(), 0.99)
    assert lo <= 0.7**2 <= hi
    with pytest.raises(ValueError, match="columns"):
        project_and_perturb(X[:, :3], R, 0.7)
    with pytest.raises(ValueError, match="sigma"):
        project_and_perturb(X, R, -1.0)
    assert np.array_equal(project_and_perturb(X, R, 0.0), X @ R)  # sigma = 0: the noiseless projection
    with pytest.raises(ValueError, match="NaN"):
        project_and_perturb(np.full((2, 4), np.nan), R, 1.0)


# --- sensitivities -----------------------------------------------------------------------
def test_attribute_sensitivity_is_the_largest_single_attribute_change():
    R = gaussian_projection(12, 3, random_state=4)
    width = np.linspace(0.5, 2.0, 12)
    changes = [np.linalg.norm(width[j] * R[j]) for j in range(12)]  # change of x_j by its full range
    assert attribute_sensitivity(R, (0.0, width)) == pytest.approx(max(changes))
    assert attribute_sensitivity(R, (-width, 0.0)) == pytest.approx(max(changes))  # only high - low matters
    assert attribute_sensitivity(R) == pytest.approx(np.linalg.norm(R, axis=1).max())
    with pytest.raises(ValueError, match="one entry per feature"):
        attribute_sensitivity(R, (0.0, np.ones(5)))
    with pytest.raises(ValueError, match="low < high"):
        attribute_sensitivity(R, (0.0, -1.0))
    for bounds_of in (attribute_sensitivity, record_sensitivity, record_sensitivity_weights, worst_record_change):
        with pytest.raises(TypeError, match=r"bounds must be a pair \(low, high\)"):
            bounds_of(R, 1.0)  # a width is not a bounds pair


def test_record_sensitivity_brackets_the_exact_value():
    d = 10
    R = gaussian_projection(d, 3, random_state=5)
    exact = max(np.linalg.norm(np.array(s) @ R) for s in itertools.product((-1.0, 1.0), repeat=d))
    v, found = worst_record_change(R, n_starts=20, random_state=6)
    assert np.all(np.abs(v) == 1.0) and found == pytest.approx(np.linalg.norm(v @ R))
    assert found <= exact + 1e-12 and found >= 0.95 * exact
    assert record_sensitivity(R) >= exact - 1e-12
    assert record_sensitivity(R, (-1.0, 1.0)) == pytest.approx(2 * record_sensitivity(R), rel=1e-6)
    assert record_sensitivity(R) > attribute_sensitivity(R)
    # any weights certify a bound; unit weights give the spectral bound, optimised ones a smaller one
    spectral = np.sqrt(d) * np.linalg.norm(R, 2)
    assert record_sensitivity(R, weights=np.ones(d)) == pytest.approx(spectral)
    for seed in range(5):
        y = np.random.default_rng(seed).uniform(0.1, 3.0, d)
        assert record_sensitivity(R, weights=y) >= exact - 1e-12
    assert record_sensitivity(R) <= spectral
    with pytest.raises(ValueError, match="weights must be > 0"):
        record_sensitivity(R, weights=np.zeros(d))


def test_record_sensitivity_weights_reach_the_sdp_value_on_a_small_case():
    # d = 3, k = 2: the certificate must come close to the exact maximum over the 8 sign vectors
    R = np.array([[1.0, 0.2], [0.3, -0.9], [0.5, 0.5]])
    exact = max(np.linalg.norm(np.array(s) @ R) for s in itertools.product((-1.0, 1.0), repeat=3))
    y = record_sensitivity_weights(R)
    assert y.shape == (3,) and np.all(y > 0)
    assert exact - 1e-12 <= record_sensitivity(R) <= 1.1 * exact
    with pytest.raises(ValueError, match="n_starts"):
        worst_record_change(R, n_starts=0)


# --- calibrations ------------------------------------------------------------------------
@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 3.0, 10.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6])
def test_theorem2_sigma_is_private_by_the_exact_curve(epsilon, delta):
    sigma = theorem2_sigma(1.3, epsilon, delta)
    assert gaussian_delta(epsilon, sigma, 1.3) <= delta
    # ... and is not the tight value
    assert sigma > 1.05 * gaussian_sigma_analytic(1.3, epsilon, delta)


def test_theorem2_and_lemma4_bad_input():
    with pytest.raises(ValueError, match="delta < 1/2"):
        theorem2_sigma(1.0, 1.0, 0.6)
    with pytest.raises(ValueError, match="epsilon"):
        theorem2_sigma(1.0, 0.0, 1e-5)
    with pytest.raises(ValueError, match="ln\\(1/delta\\)"):
        lemma4_sigma(5.0, 0.01)
    assert theorem2_sigma(1.0, np.inf, 1e-5) == 0.0 and lemma4_sigma(np.inf, 1e-5) == 0.0
    assert lemma4_sigma(1.0, 1e-4, (0.0, 0.5)) == pytest.approx(2 * np.sqrt(np.log(1e4)))
    assert lemma4_sigma(1.0, 1e-4, ([0.0, 1.0], [0.5, 1.5])) == lemma4_sigma(1.0, 1e-4, (0.0, 0.5))
    with pytest.raises(ValueError, match="one common attribute range"):
        lemma4_sigma(1.0, 1e-4, (0.0, [0.5, 1.0]))


def test_chi2_tail_bounds_dominate_the_exact_tails():
    k = np.arange(1, 201)[:, None]
    lam = np.linspace(0.01, 0.99, 99)[None, :]
    upper, lower = chi2_tail_bounds(k, lam)
    assert np.all(stats.chi2.sf((1 + lam) * k, k) <= upper)
    assert np.all(stats.chi2.cdf((1 - lam) * k, k) <= lower)
    assert np.all(upper <= np.exp(-(lam**2 - lam**3) * k / 4) * (1 + 1e-12))
    assert chi2_tail_bounds(2, 0.5) == pytest.approx((1.5 * np.exp(-0.5), 0.5 * np.exp(0.5)))
    with pytest.raises(ValueError, match="distortion"):
        chi2_tail_bounds(3, 1.0)
    with pytest.raises(ValueError, match="n_components"):
        chi2_tail_bounds(0.5, 0.5)


def test_lemma4_min_components_and_tail_bound():
    d, delta = 180, 1e-5
    k = lemma4_min_components(d, delta)
    assert k - 1 <= 2 * (np.log(d) + np.log(2 / delta)) < k
    t = theta2_tail_bound(d, k, delta)
    assert t < 2  # the reason Lemma 4 asks for this k
    assert theta2_survival(t, d, k) <= delta / 2


def test_lemma4_delta_matches_monte_carlo_over_r():
    d, k, eps, sigma = 20, 3, 1.0, 1.2
    rng = np.random.default_rng(26)
    theta = np.array([attribute_sensitivity(gaussian_projection(d, k, random_state=rng)) for _ in range(4000)])
    _, lo, hi = mean_ci(np.array([gaussian_delta(eps, sigma, t) for t in theta]), 0.99)
    bound = lemma4_delta(eps, sigma, d, k)
    assert bound >= lo and bound <= 1.02 * hi  # an upper sum, tight to the grid resolution
    assert lemma4_delta(1.0, lemma4_sigma(1.0, 1e-5), 180, lemma4_min_components(180, 1e-5)) <= 1e-5


def test_theta2_functions_broadcast_over_n_components():
    ks = np.array([1, 4, 20])
    assert np.allclose(theta2_survival(1.5, 45, ks), [theta2_survival(1.5, 45, int(k)) for k in ks])
    assert np.allclose(theta2_tail_bound(45, ks, 1e-5), [theta2_tail_bound(45, int(k), 1e-5) for k in ks])
    with pytest.raises(TypeError, match="integer array"):
        theta2_survival(1.5, 45, np.array([1.5]))


def test_theta2_survival_matches_monte_carlo():
    d, k, t, m = 40, 5, 1.8, 4000
    rng = np.random.default_rng(7)
    theta = np.array([attribute_sensitivity(gaussian_projection(d, k, random_state=rng)) for _ in range(m)])
    lo, hi = clopper_pearson(int(np.sum(theta > t)), m, 0.99)
    assert lo <= theta2_survival(t, d, k) <= hi
    assert theta2_survival(np.array([0.0, 1e3]), d, k) == pytest.approx([1.0, 0.0])
    median = theta2_quantile(0.5, d, k)
    assert theta2_survival(median, d, k) == pytest.approx(0.5)
    lo, hi = clopper_pearson(int(np.sum(theta > median)), m, 0.99)
    assert lo <= 0.5 <= hi
    with pytest.raises(ValueError, match=r"q must be a number in \(0, 1\)"):
        theta2_quantile(1.0, d, k)
    with pytest.raises(TypeError, match="q must be"):
        theta2_quantile("half", d, k)


# --- Algorithm 2, Theorem 3, Lemma 5 ------------------------------------------------------
def test_squared_distance_estimate_pairs_and_matrix_agree():
    P = np.random.default_rng(8).normal(size=(6, 3))
    full = squared_distance_estimate(P, 0.5)
    pairs = np.array([[0, 1], [2, 5], [3, 3]])
    assert np.allclose(squared_distance_estimate(P, 0.5, pairs), full[pairs[:, 0], pairs[:, 1]])
    assert full[1, 2] == pytest.approx(np.sum((P[1] - P[2]) ** 2) - 2 * 3 * 0.25)
    assert np.all(np.diag(full) == 0) and np.allclose(full, full.T)
    with pytest.raises(ValueError, match="shape \\(m, 2\\)"):
        squared_distance_estimate(P, 0.5, np.array([0, 1]))
    with pytest.raises(ValueError, match="index rows"):
        squared_distance_estimate(P, 0.5, np.array([[0, 6]]))


def _estimates(x, y, k, sigma, m, seed):
    rng = np.random.default_rng(seed)
    X = np.stack([x, y])
    out = np.empty(m)
    for i in range(m):
        P = project_and_perturb(X, gaussian_projection(x.size, k, random_state=rng), sigma, random_state=rng)
        out[i] = squared_distance_estimate(P, sigma, np.array([[0, 1]]))[0]
    return out


def test_theorem3_unbiased_and_variance():
    x, y = _binary(2, 30, 9)
    rho2 = float(np.sum((x - y) ** 2))
    k, sigma = 6, 0.8
    est = _estimates(x, y, k, sigma, 6000, 10)
    _, lo, hi = mean_ci(est, 0.99)
    assert lo <= rho2 <= hi
    _, vlo, vhi = bootstrap_ci(est, np.var, 0.99, n_resamples=1000, random_state=11)
    assert vlo <= squared_distance_variance(rho2, k, sigma) <= vhi


def test_squared_distance_variance_formula_and_bad_input():
    assert squared_distance_variance(4.0, 2, 0.5) == pytest.approx(2 * 16 / 2 + 8 * 0.25 * 4 + 8 * 2 * 0.0625)
    assert np.allclose(squared_distance_variance(np.array([1.0, 2.0]), 1, 0.0), [2.0, 8.0])
    with pytest.raises(ValueError, match="n_components >= 1"):
        squared_distance_variance(1.0, 0, 1.0)


@pytest.mark.parametrize("rho2,sigma", [(40.0, 0.1), (40.0, 1.0), (3.0, 1.0), (7.3, 0.37)])
def test_optimal_n_components_is_the_integer_argmin(rho2, sigma):
    ks = np.arange(1, 5001)
    best = int(ks[np.argmin(squared_distance_variance(rho2, ks, sigma))])
    assert optimal_n_components(rho2, sigma) == best
    assert optimal_n_components(rho2, sigma, max_components=5) == min(best, 5)


def test_optimal_n_components_bad_input():
    with pytest.raises(ValueError, match="rho2"):
        optimal_n_components(0.0, 1.0)
    with pytest.raises(ValueError, match="max_components"):
        optimal_n_components(1.0, 1.0, max_components=0)


def test_relative_l2_error():
    assert relative_l2_error([1.0, 2.0], [1.0, 4.0]) == pytest.approx(4 / 5)
    with pytest.raises(ValueError, match="same size"):
        relative_l2_error([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="all zero"):
        relative_l2_error([0.0], [1.0])


# --- the estimator -----------------------------------------------------------------------
@pytest.mark.parametrize("noise_scale", ["corrected", "paper"])
@pytest.mark.parametrize("neighbours", ["change-attribute", "replace-row"])
def test_dppro_calibrates_to_the_neighbour_sensitivity(noise_scale, neighbours):
    X = _binary(20, 30, 12)
    model = DPPro(5, 0.8, 1e-5, neighbours=neighbours, noise_scale=noise_scale, random_state=13)
    P = model.fit_transform(X)
    R = model.components_.T
    assert P.shape == (20, 5) and R.shape == (30, 5) and model.n_features_in_ == 30
    assert model.components_.shape == (5, 30) and np.array_equal(model.components_, R.T)
    expected = attribute_sensitivity(R) if neighbours == "change-attribute" else record_sensitivity(R)
    assert model.sensitivity_ == {"projection": pytest.approx(expected)}
    assert model.budget_ == {"projection": (0.8, 1e-5)} and budget_total(model.budget_) == (0.8, 1e-5)
    sensitivity = model.sensitivity_["projection"]
    assert gaussian_delta(0.8, model.sigma_, sensitivity) <= 1e-5 * (1 + 1e-6)
    if noise_scale == "corrected":
        assert gaussian_delta(0.8, model.sigma_, sensitivity) == pytest.approx(1e-5, rel=1e-4)
    else:
        assert model.sigma_ == pytest.approx(theorem2_sigma(sensitivity, 0.8, 1e-5))
    assert np.allclose(model.estimate_squared_distances(), squared_distance_estimate(P, model.sigma_))


def test_dppro_record_noise_is_much_larger_than_attribute_noise():
    X = _binary(10, 100, 14)
    a = DPPro(10, 1.0, 1e-5, neighbours="change-attribute", random_state=15).fit(X)
    r = DPPro(10, 1.0, 1e-5, neighbours="replace-row", random_state=15).fit(X)
    assert np.array_equal(a.components_, r.components_)
    assert r.sigma_ / a.sigma_ == pytest.approx(r.sensitivity_["projection"] / a.sensitivity_["projection"])
    assert r.sigma_ > 10 * a.sigma_


def test_dppro_per_column_bounds_and_lemma4():
    X = np.column_stack([np.zeros(5), np.full(5, 3.0)])
    model = DPPro(1, 1.0, 1e-5, bounds=([0.0, 0.0], [1.0, 4.0]), random_state=16).fit(X)
    assert model.sensitivity_["projection"] == pytest.approx(
        attribute_sensitivity(model.components_.T, (0.0, [1.0, 4.0]))
    )
    d, delta = 60, 1e-3
    k = lemma4_min_components(d, delta)
    m = DPPro(k, 1.0, delta, noise_scale="lemma4", random_state=17).fit(_binary(4, d, 18))
    assert m.sigma_ == pytest.approx(lemma4_sigma(1.0, delta))


def test_dppro_sklearn_contract():
    X = _binary(30, 12, 19)
    model = DPPro(3, 0.5, 1e-6, neighbours="replace-row", bounds=(0.0, 1.0), random_state=20)
    twin = clone(model)
    assert twin.get_params() == model.get_params()
    assert twin.set_params(n_components=4).n_components == 4 and model.n_components == 3
    assert "DPPro(" in repr(model)
    first = model.fit_transform(X)
    assert np.array_equal(first, model.fit(X, y=np.arange(30)).embedding_)  # same int seed, y ignored
    assert np.array_equal(model.components_, clone(model).fit(X).components_)
    new = _binary(4, 12, 21)
    assert np.allclose(model.transform(new), new @ model.components_.T)  # public R, no noise


def test_dppro_pipeline_trains_on_the_release_and_projects_new_rows():
    rng = np.random.default_rng(22)
    X = rng.integers(0, 2, size=(200, 20)).astype(float)
    y = (X[:, 0] > 0.5).astype(int)
    pipe = Pipeline([("dppro", DPPro(8, np.inf, 1e-5, random_state=23)), ("svm", LinearSVC(dual=False))])
    pipe.fit(X, y)
    assert pipe.predict(X).shape == (200,)
    assert np.mean(pipe.predict(X) == y) > 0.8  # noiseless projection keeps the signal


def test_dppro_infinite_epsilon_is_noiseless():
    X = _binary(6, 10, 24)
    for noise_scale in NOISE_SCALES:
        k = lemma4_min_components(10, 0.4) if noise_scale == "lemma4" else 3
        if k > 10:
            continue
        model = DPPro(k, np.inf, 0.4, noise_scale=noise_scale, random_state=25).fit(X)
        assert model.sigma_ == 0.0 and np.array_equal(model.embedding_, X @ model.components_.T)
        assert model.budget_ == {"projection": (np.inf, 0.4)}


def test_dppro_not_fitted():
    for method in ("transform", "estimate_squared_distances"):
        with pytest.raises(NotFittedError):
            getattr(DPPro(2, 1.0, 1e-5), method)(*(([np.zeros(4)],) if method == "transform" else ()))
    assert set(NOISE_SCALES) == {"corrected", "paper", "lemma4"}


@pytest.mark.parametrize(
    "kwargs,X,match",
    [
        ({"n_components": 3}, np.full((2, 4), 2.0), "outside the declared bounds"),
        ({"n_components": 5}, np.zeros((2, 4)), "n_components"),
        ({"n_components": 2, "epsilon": 0.0}, np.zeros((2, 4)), "epsilon"),
        ({"n_components": 2, "epsilon": -1.0}, np.zeros((2, 4)), "epsilon"),
        ({"n_components": 2, "delta": 1.0}, np.zeros((2, 4)), "delta"),
        ({"n_components": 2, "noise_scale": "paper", "delta": 0.7}, np.zeros((2, 4)), "delta < 1/2"),
        (
            {"n_components": 2, "neighbours": "record"},
            np.zeros((2, 4)),
            r"neighbours must be one of \('change-attribute', 'replace-row'\)",
        ),
        ({"n_components": 2, "neighbours": "add-remove-row"}, np.zeros((2, 4)), "neighbours"),
        ({"n_components": 2, "noise_scale": "exact"}, np.zeros((2, 4)), "noise_scale"),
        ({"n_components": 2, "calibration": "paper"}, np.zeros((2, 4)), "calibration must be one of"),
        ({"n_components": 2, "calibration": "classic", "epsilon": 1.5}, np.zeros((2, 4)), "only valid for epsilon < 1"),
        ({"n_components": 2, "noise_scale": "lemma4"}, np.zeros((2, 4)), "n_components >="),
        (
            {"n_components": 2, "noise_scale": "lemma4", "neighbours": "replace-row"},
            np.zeros((2, 4)),
            "only neighbours='change-attribute'",
        ),
        ({"n_components": 2, "bounds": (1.0, 0.0)}, np.zeros((2, 4)), "low < high"),
        ({"n_components": 2, "bounds": (np.zeros(3), 1.0)}, np.zeros((2, 4)), "one entry per feature"),
        ({"n_components": 2}, np.array([[0.0, np.inf, 0.0, 0.0]]), "NaN or infinite"),
        ({"n_components": 2}, np.zeros(4), "2-dimensional"),
    ],
)
def test_dppro_bad_input(kwargs, X, match):
    params = {"epsilon": 1.0, "delta": 1e-5} | kwargs
    with pytest.raises(ValueError, match=match):
        DPPro(**params).fit(X)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"epsilon": "1"},
        {"delta": None},
        {"n_components": 2.0},
        {"random_state": "seed"},
        {"bounds": 1.0},
        {"neighbours": 1},
    ],
)
def test_dppro_bad_types(kwargs):
    params = {"n_components": 2, "epsilon": 1.0, "delta": 1e-5} | kwargs
    with pytest.raises(TypeError):
        DPPro(**params).fit(np.zeros((2, 4)))


def test_attribute_sensitivity_with_one_hot_groups_matches_brute_force():
    rng = np.random.default_rng(11)
    R = gaussian_projection(7, 3, random_state=rng)
    width = np.array([2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    groups = [[1, 2, 3], [4, 5]]  # column 0 numeric, column 6 binary, two categorical attributes
    changes = [width[0] * np.eye(7)[0], np.eye(7)[6]]
    for g in groups:  # every level-to-level move, and to/from an all-zero level
        for a in g:
            changes.append(np.eye(7)[a])
            changes += [np.eye(7)[b] - np.eye(7)[a] for b in g if b != a]
    brute = max(np.linalg.norm(v @ R) for v in changes)
    assert attribute_sensitivity(R, (0.0, width), groups) == pytest.approx(brute)
    # two levels whose rows point in opposite directions: one attribute change moves the release twice as far
    u = np.array([[0.6, 0.8], [-0.6, -0.8], [0.1, 0.0]])
    assert attribute_sensitivity(u, (0.0, 1.0)) == pytest.approx(1.0)
    assert attribute_sensitivity(u, (0.0, 1.0), [[0, 1]]) == pytest.approx(2.0)


def test_dppro_attribute_groups_validation():
    X = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.2]])
    model = DPPro(2, 1.0, 1e-5, attribute_groups=[[0, 1]], random_state=0).fit(X)
    assert model.sensitivity_["projection"] == pytest.approx(
        attribute_sensitivity(model.components_.T, (0.0, 1.0), [[0, 1]])
    )
    bad = [
        ([[0, 2]], "declared one-hot"),
        ([[0]], ">= 2 integer"),
        ([[0, 1], [1, 2]], "disjoint"),
        ([[0, 5]], "lie in"),
        ([[0.0, 1.0]], "integer column"),
    ]
    for groups, match in bad:
        with pytest.raises(ValueError, match=match):
            DPPro(2, 1.0, 1e-5, attribute_groups=groups, random_state=0).fit(X)
    with pytest.raises(ValueError, match="high - low = 1"):
        attribute_sensitivity(np.ones((3, 2)), (0.0, [2.0, 1.0, 1.0]), [[0, 1]])


def test_dppro_release_equals_one_call_of_draws():
    """fit adds the noise in row blocks in place; the draws equal one rng.normal call over the n x k matrix."""
    X = np.random.default_rng(0).random((70_001, 5))  # more rows than two noise blocks
    model = DPPro(2, 1.0, 1e-5, random_state=7).fit(X)
    rng = np.random.default_rng(7)
    R = gaussian_projection(5, 2, random_state=rng)
    expected = X @ R + rng.normal(0.0, model.sigma_, size=(len(X), 2))
    assert np.array_equal(model.components_.T, R)
    assert np.array_equal(model.embedding_, expected)
    assert np.array_equal(
        project_and_perturb(X, R, 0.5, random_state=3),
        X @ R + np.random.default_rng(3).normal(0.0, 0.5, size=(len(X), 2)),
    )


@pytest.mark.parametrize(
    "X", [np.array([[0.0, np.nan, 0.0]]), np.array([[0.0, -np.inf, 0.0]]), np.array([[0.0, 0.5, -0.1]]), [[0, 1, 2]]]
)
def test_dppro_validates_once_with_the_usual_messages(X):
    with pytest.raises(ValueError, match="NaN or infinite|outside the declared bounds"):
        DPPro(1, 1.0, 1e-5, random_state=0).fit(X)


def test_subnormal_delta_and_extreme_widths():
    """ln(c / delta) for a subnormal delta (OverflowError from int(inf) before); the record-sensitivity weights
    for widths near float64's limits (LinAlgError or NaN weights before) bound the sensitivity as on the unit scale."""
    assert lemma4_min_components(5, 5e-324) == int(np.floor(2 * (np.log(5) + np.log(2.0) - np.log(5e-324)))) + 1
    R = gaussian_projection(4, 2, random_state=0)
    unit = record_sensitivity(R, (0.0, 1.0))
    for width in (1e-300, 7.9e-248, 1e-200, 1e200):
        y = record_sensitivity_weights(R, (0.0, width))
        assert np.all(np.isfinite(y)) and np.all(y > 0)
        assert record_sensitivity(R, (0.0, width), y) / width == pytest.approx(unit, rel=1e-6)
