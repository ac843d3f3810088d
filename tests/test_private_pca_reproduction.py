import numpy as np
import pytest

from dpnb.chapters.private_pca import (
    REAL_DATA,
    figure1_consistent,
    figure1_contradicted,
    k_by_rules,
    ppca_beats,
    subspace_svm_accuracy,
    unit_sphere_rows,
)
from dpnb.ground.streams import stream
from dpnb.numerics.evaluation import Interval
from dpnb.numerics.linalg import haar_stiefel


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
def test_bad_input(call, error):
    with pytest.raises(error):
        call()
