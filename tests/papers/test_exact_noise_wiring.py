"""``noise="exact"`` in every estimator and release function that adds noise (dpnb.privacy.exact_noise).

Each release with exact noise is finite, lies on the grid ``2^-k`` its sensitivity fixes (or on the
integers for counts), is the same for the same seed, differs from the floating-point release, and
reports the same ``sensitivity_`` and epsilons as the default, and each statistic's delta grows by
exactly the sampler's ``sampling_delta(epsilon_i, m_i)`` for its ``m_i`` draws (counted here by hand).
"""

from __future__ import annotations

import inspect
import math
from fractions import Fraction

import numpy as np
import pytest

from dpnb.papers import component_analysis, pca_gauss, private_pca, ron_gauss
from dpnb.papers.component_analysis import DPPCAPublisher
from dpnb.papers.dppro import DPPro
from dpnb.papers.lda_publishing import DPLDAPublisher
from dpnb.papers.mst import MST
from dpnb.papers.pca_gauss import PCAGauss
from dpnb.papers.private_pca import ModSULQ
from dpnb.papers.ron_gauss import RONGauss
from dpnb.privacy import exact_noise
from dpnb.privacy.estimator import budget_total, with_sampling_delta

RNG = np.random.default_rng(5)
BOX = RNG.random((12, 4))  # in [0, 1]
CUBE = 2 * BOX - 1  # in [-1, 1]
BALL = CUBE / 2  # rows of norm <= 1
LABELS = np.arange(12) % 2
CODES = RNG.integers(0, 3, size=(12, 3))
BASIS = np.linalg.qr(RNG.standard_normal((4, 2)))[0]


def _on_grid(values, sensitivity, n_coordinates) -> bool:
    """Every value is an integer multiple of ``2^-k``, the grid of ``exact_noise.grid_exponent``."""
    k = exact_noise.grid_exponent(sensitivity, n_coordinates)
    scaled = np.ldexp(np.asarray(values, dtype=float), k)
    return bool(np.all(scaled == np.round(scaled)))


ESTIMATORS = {
    "PCAGauss-alg1": (lambda **kw: PCAGauss(2, 1.0, **kw), CUBE, None),
    "PCAGauss-basis": (lambda **kw: PCAGauss(2, 1.0, basis=BASIS, mean_fraction=0.2, **kw), CUBE, None),
    "PCAGauss-gmm": (lambda **kw: PCAGauss(2, 1.0, mode="gmm", basis=BASIS, n_classes=2, **kw), CUBE, LABELS),
    "PCAGauss-gmm-paper": (
        lambda **kw: PCAGauss(2, 1.0, mode="gmm", basis=BASIS, n_classes=2, noise_scale="paper", **kw),
        CUBE,
        LABELS,
    ),
    "RONGauss": (lambda **kw: RONGauss(2, 1.0, **kw), CUBE, None),
    "RONGauss-gmm": (lambda **kw: RONGauss(2, 1.0, mode="gmm", **kw), CUBE, LABELS),
    "DPPro": (lambda **kw: DPPro(2, 1.0, 1e-5, **kw), BOX, None),
    "DPPro-paper": (lambda **kw: DPPro(2, 1.0, 1e-5, noise_scale="paper", **kw), BOX, None),
    "DPPCAPublisher": (lambda **kw: DPPCAPublisher(2, 1.0, **kw), BOX, None),
    "DPLDAPublisher": (lambda **kw: DPLDAPublisher(1.0, n_classes=2, **kw), BOX, LABELS),
    "ModSULQ": (lambda **kw: ModSULQ(1, 1.0, 1e-5, **kw), BALL, None),
    "MST": (lambda **kw: MST(1.0, 1e-6, domain_sizes=[3, 3, 3], **kw), CODES, None),
    "PCAGauss-supervised": (
        lambda **kw: PCAGauss(2, 1.0, mode="supervised", basis=BASIS, mean_fraction=0.2, **kw),
        CUBE,
        CUBE[:, 0],
    ),
    "RONGauss-supervised": (lambda **kw: RONGauss(2, 1.0, mode="supervised", label_bound=1.0, **kw), CUBE, CUBE[:, 0]),
}

# Statistic -> exact draws of its release, by hand, for n = 12 rows, d = 4 features, k = p = 2 components,
# C = 2 classes (a triangle of a q x q matrix is q (q + 1) / 2 draws); MST's entry is (epsilon, draws):
# 3 one-way marginals of 3 cells and 2 tree edges of 3 x 3, charged once at the whole epsilon.
EXACT_DRAWS = {
    "PCAGauss-alg1": {"eigenvalues": 2},
    "PCAGauss-basis": {"second_moment": 3, "mean": 2},
    "PCAGauss-gmm": {"counts": 2, "sums": 2 * 2, "second_moments": 2 * 3},
    "PCAGauss-gmm-paper": {"class_means": 2 * 2, "class_covariances": 2 * 3},
    "PCAGauss-supervised": {"second_moment": 6, "mean": 3},
    "RONGauss": {"mean": 4, "covariance": 3},
    "RONGauss-gmm": {"mean": 2 * 4, "covariance": 2 * 3},
    "RONGauss-supervised": {"mean": 4, "covariance": 6},
    "DPPro": {"projection": 12 * 2},
    "DPPro-paper": {"projection": 12 * 2},
    "DPPCAPublisher": {"moments": 4 + 10, "projection": 12 * 2},
    "DPLDAPublisher": {"sums": 2 * 4 + 10, "class_counts": 2},
    "ModSULQ": {"second_moment": 10},
    "MST": {"two-way marginals": (1.0, 3 * 3 + 2 * 9)},
}

FITTED = ("embedding_", "scores_", "components_", "covariance_", "class_covariances_", "means_", "marginals_", "mean_")


def _released(est) -> np.ndarray:
    parts = []
    for attr in FITTED:
        value = getattr(est, attr, None)
        if value is None:
            continue
        if isinstance(value, dict):
            value = np.concatenate([np.ravel(v) for v in value.values()])
        parts.append(np.ravel(np.asarray(value, dtype=float)))
    return np.concatenate(parts)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_an_estimator_with_exact_noise_is_seeded_finite_and_keeps_its_epsilons(name):
    make, X, y = ESTIMATORS[name]
    exact = make(noise="exact", random_state=3).fit(X, y)
    again = make(noise="exact", random_state=3).fit(X, y)
    other = make(noise="exact", random_state=4).fit(X, y)
    floating = make(random_state=3).fit(X, y)
    released = _released(exact)
    assert np.all(np.isfinite(released))
    np.testing.assert_array_equal(released, _released(again))
    assert not np.array_equal(released, _released(other)), "the exact release ignores the seed"
    assert not np.array_equal(released, _released(floating)), "noise='exact' released the float path"
    assert {key: e for key, (e, _) in exact.budget_.items()} == {key: e for key, (e, _) in floating.budget_.items()}
    for key, value in floating.sensitivity_.items():
        np.testing.assert_array_equal(exact.sensitivity_[key], value)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_a_bad_noise_option_is_refused_in_fit(name):
    make, X, y = ESTIMATORS[name]
    est = make(noise="fast", random_state=0)  # __init__ only stores
    with pytest.raises(ValueError, match="noise"):
        est.fit(X, y)


def test_exact_releases_lie_on_their_grids():
    """Where the release is the noisy statistic itself, its values are on the grid (or integers)."""
    est = DPPro(2, 1.0, 1e-5, noise="exact", random_state=0).fit(BOX)
    assert _on_grid(est.embedding_, est.sensitivity_["projection"], est.embedding_.size)
    est = DPPCAPublisher(2, 1.0, noise="exact", random_state=0).fit(BOX)
    assert _on_grid(est.scores_, est.sensitivity_["projection"], est.scores_.size)
    est = RONGauss(2, 1.0, noise="exact", random_state=0).fit(CUBE)
    assert _on_grid(est.mean_, est.sensitivity_["mean"], est.mean_.size)
    est = PCAGauss(2, 1.0, noise="exact", random_state=0).fit(CUBE)
    assert _on_grid(np.diag(est.covariance_), est.sensitivity_["eigenvalues"], 2)
    est = MST(1.0, 1e-6, domain_sizes=[3, 3, 3], noise="exact", random_state=0).fit(CODES)
    values = np.concatenate([np.ravel(v) for v in est.marginals_.values()])
    np.testing.assert_array_equal(values, np.round(values))  # counts plus integer noise
    released = component_analysis.laplace_identity(BOX, 1.0, random_state=0, noise="exact")
    assert _on_grid(released, 4.0, BOX.size)
    released = component_analysis.split_laplace(BOX, 1.0, (0.0, 1.0), random_state=0, noise="exact")
    assert all(_on_grid(released[:, j], 1.0, BOX.shape[0]) for j in range(BOX.shape[1]))
    u = np.eye(4)[0]
    released = component_analysis.component_laplace(BOX, 1.0, u, np.zeros(4), (0.0, 1.0), random_state=0, noise="exact")
    assert _on_grid(released[:, 0], 1.0, BOX.shape[0]) and np.all(released[:, 1:] == 0)
    Z, R = ron_gauss.bernoulli_identity(BALL, 2, 1.0, random_state=0, noise="exact")
    assert _on_grid(Z, ron_gauss.projected_identity_sensitivity(R), Z.size)


FUNCTIONS = {
    "lap_pca": lambda **kw: pca_gauss.lap_pca(CUBE, 1, 1.0, **kw),
    "analyze_gauss_pca": lambda **kw: pca_gauss.analyze_gauss_pca(BALL, 1, 1.0, 1e-5, **kw),
    "bernoulli_identity": lambda **kw: ron_gauss.bernoulli_identity(BALL, 2, 1.0, **kw)[0],
    "pca_identity": lambda **kw: ron_gauss.pca_identity(BALL, 2, 1.0, **kw)[0],
    "laplace_identity": lambda **kw: component_analysis.laplace_identity(BOX, 1.0, **kw),
    "split_laplace": lambda **kw: component_analysis.split_laplace(BOX, 1.0, (0.0, 1.0), **kw),
    "component_laplace": lambda **kw: component_analysis.component_laplace(
        BOX, 1.0, np.full(4, 0.5), np.zeros(4), (0.0, 1.0), **kw
    ),
    "mod_sulq": lambda **kw: private_pca.mod_sulq(BALL, 1, 1.0, 1e-5, n_draws=2, **kw),
}


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_a_release_function_with_exact_noise_is_seeded_and_finite(name):
    call = FUNCTIONS[name]
    exact = np.asarray(call(noise="exact", random_state=1))
    assert np.all(np.isfinite(exact))
    np.testing.assert_array_equal(exact, call(noise="exact", random_state=1))
    assert not np.array_equal(exact, call(random_state=1)), "noise='exact' released the float path"
    with pytest.raises(ValueError, match="noise"):
        call(noise="fast", random_state=1)


def test_the_float_path_is_the_default_everywhere():
    """``noise`` defaults to "float" (notebook outputs unchanged) in every estimator and function."""
    for make, _, _ in ESTIMATORS.values():
        assert make().get_params()["noise"] == "float"
    for function in (
        pca_gauss.lap_pca,
        pca_gauss.analyze_gauss_pca,
        ron_gauss.bernoulli_identity,
        ron_gauss.pca_identity,
        component_analysis.laplace_identity,
        component_analysis.split_laplace,
        component_analysis.component_laplace,
        private_pca.mod_sulq,
    ):
        assert inspect.signature(function).parameters["noise"].default == "float"


def test_mod_sulq_with_exact_noise_uses_the_zcdp_sigma():
    est = ModSULQ(1, 1.0, 1e-5, noise="exact", random_state=0).fit(BALL)
    sens = private_pca.second_moment_l2_sensitivity(len(BALL))
    assert est.sigma_ == exact_noise.zcdp_sigma(sens, 1.0, 1e-5)
    assert est.sigma_ > ModSULQ(1, 1.0, 1e-5, random_state=0).fit(BALL).sigma_  # zCDP is the looser bound


@pytest.mark.parametrize("name", ["ModSULQ", "DPPro-paper"])
def test_tiny_epsilon_with_the_paper_scale_gives_a_finite_exact_release(name):
    """epsilon = 1e-100 with noise_scale="paper" (sigma about 1e100): the exact sampler used to convert its
    huge integers to floats and raise OverflowError; it now releases (noise clipped to the doubles' range)."""
    make = {
        "ModSULQ": lambda: ModSULQ(1, 1e-100, 1e-5, noise="exact", noise_scale="paper", random_state=0),
        "DPPro-paper": lambda: DPPro(2, 1e-100, 1e-5, noise="exact", noise_scale="paper", random_state=0),
    }[name]
    X = BALL if name == "ModSULQ" else BOX
    assert np.all(np.isfinite(_released(make().fit(X))))


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_exact_noise_adds_the_samplers_delta_to_the_budget(name):
    """budget_ is the true guarantee: each delta grows by sampling_delta(epsilon_i, m_i), rounded up; float: asked."""
    make, X, y = ESTIMATORS[name]
    exact = make(noise="exact", random_state=3).fit(X, y).budget_
    floating = make(random_state=3).fit(X, y).budget_
    stated = make().get_params()
    requested = (stated["epsilon"], stated.get("delta", 0.0))
    assert budget_total(floating)[1] == pytest.approx(requested[1], rel=1e-12, abs=0)  # float: what was asked
    assert set(exact) == set(floating)
    draws = EXACT_DRAWS[name]
    for key, (epsilon, delta) in floating.items():
        count = draws.get(key, 0)
        charged, m = count if isinstance(count, tuple) else (epsilon, count)
        added = exact_noise.sampling_delta(charged, m)
        assert exact[key][0] == epsilon
        if delta == 0.0:  # a pure-epsilon statistic: (epsilon, sampling_delta) exactly
            assert exact[key][1] == added
        else:  # the sum rounded up: the reported delta bounds the true one, within one ulp
            assert Fraction(exact[key][1]) >= Fraction(delta) + Fraction(added)
            assert exact[key][1] <= math.nextafter(delta + added, math.inf)
    assert sum(m if isinstance(m, int) else m[1] for m in draws.values()) > 0
    assert budget_total(exact)[1] > budget_total(floating)[1]


def test_with_sampling_delta_at_the_edges():
    """epsilon = inf adds nothing; an unknown statistic is refused naming it; the delta is capped at 1."""
    assert with_sampling_delta({"a": (math.inf, 0.0)}, {"a": 5}) == {"a": (math.inf, 0.0)}
    assert with_sampling_delta({"a": (800.0, 0.5)}, {"a": 1}) == {"a": (800.0, 1.0)}
    assert with_sampling_delta({"a": (1.0, 1e-6), "b": (1.0, 0.0)}, {"b": 2})["a"] == (1.0, 1e-6)
    with pytest.raises(ValueError, match="'c'"):
        with_sampling_delta({"a": (1.0, 0.0)}, {"c": 1})
    with pytest.raises(TypeError, match="dicts"):
        with_sampling_delta([("a", (1.0, 0.0))], {"a": 1})
