import numpy as np
import pytest

from dpnb.chapters.private_pca import (
    REAL_DATA,
    figure1_consistent,
    figure1_contradicted,
    first_crossing,
    first_order_n_star,
    flat_failure_probability,
    k_by_rules,
    ppca_beats,
    ppca_exact_n_star,
    ppca_exact_utility,
    sample_complexity_slope,
    spike_gap,
    subspace_svm_accuracy,
    theorem3_n,
    theorem4_rho_min,
    unit_sphere_rows,
)
from dpnb.ground.streams import stream
from dpnb.numerics.evaluation import Interval
from dpnb.numerics.linalg import haar_stiefel
from dpnb.papers.private_pca import ppca, ppca_flat_alignment_mean


def test_spike_gap():
    assert spike_gap(3) == 0.25
    assert np.isclose(spike_gap(101), 0.495)


def test_first_crossing_interpolates_in_log_n():
    ns = np.array([10.0, 100.0, 1000.0])
    assert np.isclose(first_crossing(ns, np.array([0.1, 0.5, 0.9]), 0.7), np.sqrt(100 * 1000))
    assert np.isnan(first_crossing(ns, np.array([0.95, 0.96, 0.97]), 0.9))  # not bracketed below
    assert np.isnan(first_crossing(ns, np.array([0.1, 0.2, 0.3]), 0.9))  # never reached


def test_exact_utility_and_n_star_agree():
    n = ppca_exact_n_star(10, 0.5, 0.9)
    assert np.isclose(ppca_exact_utility(10, n, 0.5), 0.9, atol=1e-8)
    assert np.isclose(ppca_exact_utility(10, 200.0, 0.5), ppca_flat_alignment_mean(10, 200 * 0.5 * spike_gap(10) / 2))


def test_first_order_predictions():
    assert np.isclose(first_order_n_star("PPCA", 11, 0.5, 0.9), 10 / (2 * 0.1 * 0.5 * spike_gap(11)))
    beta, exact = (first_order_n_star(m, 11, 0.5, 0.9) for m in ("MOD-SULQ (beta)", "MOD-SULQ (corrected)"))
    assert beta > exact > 0  # the paper's beta is larger than the exact calibration


def test_sample_complexity_slope_of_ppca_is_near_one():
    def release(X, m, rng):
        return ppca(X, 1, 0.5, n_draws=m, sampler="exact", random_state=rng)

    dims = [6, 12, 24]
    grids = [
        np.unique(np.round(first_order_n_star("PPCA", d, 0.5, 0.9) * np.geomspace(0.2, 5, 7)).astype(int)) for d in dims
    ]
    n_star, slope, low, high = sample_complexity_slope(
        release, dims, grids, 20, 0.9, random_state=stream(0, "s"), n_boot=50
    )
    assert n_star.shape == (3,) and np.all(np.diff(n_star) > 0)
    assert low <= slope <= high and 0.6 < slope < 1.4


def test_theorem_bounds():
    n = theorem3_n(10, 0.5, 0.5 / 9, 0.9, 0.05, 0.1)
    assert n > 0
    assert flat_failure_probability(10, 2 * n, 0.5, 0.5 / 9, 0.9, 0.1) <= 0.05  # the bound is sufficient
    assert flat_failure_probability(10, n / 100, 0.5, 0.5 / 9, 0.9, 0.1) > 0.05
    assert theorem4_rho_min(1000) < theorem4_rho_min(10) < 1
    assert np.isclose(theorem4_rho_min(10**6), 1 - np.exp(-2) / 16, atol=1e-4)  # the limit as d grows


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: spike_gap(2), ValueError),
        (lambda: first_crossing([1, 1], [0, 1], 0.5), ValueError),
        (lambda: first_crossing([1, 2], [0, 1, 2], 0.5), ValueError),
        (lambda: ppca_exact_n_star(10, 0.5, 1.0), ValueError),
        (lambda: first_order_n_star("PCA", 10, 0.5, 0.9), ValueError),
        (lambda: theorem3_n(10, 0.1, 0.2, 0.9, 0.05, 0.1), ValueError),
        (lambda: theorem3_n(10, 0.5, 0.1, 1.5, 0.05, 0.1), ValueError),
        (lambda: ppca_exact_utility(10, 100, np.inf), ValueError),
        (lambda: sample_complexity_slope("ppca", [6], [[10, 20]], 5, 0.9, random_state=stream(0, "x")), TypeError),
        (lambda: theorem4_rho_min(2.5), TypeError),
    ],
)
def test_bad_input(call, error):
    with pytest.raises(error):
        call()


def test_unit_sphere_rows_and_k_rules():
    X, y, k = unit_sphere_rows("coil2000", 500, random_state=stream(0, "coil"))
    assert k == REAL_DATA["coil2000"][3] and X.shape[0] == y.shape[0] <= 500
    assert np.allclose(np.linalg.norm(X, axis=1), 1.0)
    row = k_by_rules("coil2000", X)
    assert 1 <= row["k by 0.8 ||A||_F"] <= row["k by 0.8 tr A"] <= X.shape[1]
    assert row["paper k"] == 11
    assert k_by_rules("kdd2004_bio", X)["paper k"] == "not comparable"


def _iv(mean, half):
    return Interval(mean, mean - half, mean + half, 10)


def test_figure1_verdict_rules():
    rows = [{"data": "a", "n": 1, "PPCA": 0.9, "MOD-SULQ": 0.2, "random": 0.1}]
    apart = {("a", 1): {"PPCA": _iv(0.9, 0.01), "MOD-SULQ": _iv(0.2, 0.01)}}
    tied = {("a", 1): {"PPCA": _iv(0.9, 0.5), "MOD-SULQ": _iv(0.2, 0.5)}}
    reversed_ = {("a", 1): {"PPCA": _iv(0.2, 0.01), "MOD-SULQ": _iv(0.9, 0.01)}}
    assert ppca_beats(apart[("a", 1)]) and not ppca_beats(tied[("a", 1)])
    assert figure1_consistent(rows, apart) and not figure1_contradicted(rows, apart)
    assert not figure1_consistent(rows, tied) and not figure1_contradicted(rows, tied)
    assert figure1_contradicted(rows, reversed_)
    far_from_random = [{"data": "a", "n": 1, "PPCA": 0.9, "MOD-SULQ": 0.8, "random": 0.1}]
    assert figure1_contradicted(far_from_random, apart)


def test_subspace_svm_accuracy():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 5))
    y = (X[:, 0] > 0).astype(int)
    bases = {"first axis": np.eye(5)[None, :, :1], "random": haar_stiefel(5, 1, 2, random_state=stream(0, "r"))}
    rows = subspace_svm_accuracy(bases, X, y, 200, random_state=stream(0, "svm"))
    scores = {r["subspace"]: r["balanced accuracy %"] for r in rows}
    assert scores["first axis"] > 95 and scores["first axis"] >= scores["random"]


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: unit_sphere_rows("kddcup99", 10, random_state=stream(0, "x")), ValueError),
        (lambda: k_by_rules("adult", np.eye(3)), ValueError),
        (lambda: subspace_svm_accuracy({}, np.eye(3), np.zeros(3), 3, random_state=stream(0, "x")), ValueError),
    ],
)
def test_reproduction_bad_input(call, error):
    with pytest.raises(error):
        call()
