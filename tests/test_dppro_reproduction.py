import numpy as np
import pytest
from sklearn.preprocessing import FunctionTransformer

from dpnb.chapters.dppro import (
    expected_l2_error,
    fixed_sigma_svm_error,
    l2_error_fixed_sigma,
    l2_error_private,
    one_hot_groups,
    svm_test_error,
)
from dpnb.ground.streams import stream
from dpnb.papers import dppro


def _data(n=12, d=10, seed=0):
    X = np.random.default_rng(seed).integers(0, 2, size=(n, d)).astype(float)
    return X, dppro.squared_distance_estimate(X, 0.0)[np.triu_indices(n, 1)]


def test_fixed_sigma_error_small_at_tiny_noise_and_matches_theory():
    X, truth = _data()
    assert l2_error_fixed_sigma(X, truth, 10, 0.0, n_reps=3, random_state=stream(0, "a")) < expected_l2_error(
        truth, 1, 0.0
    )
    big = l2_error_fixed_sigma(X, truth, 4, 2.0, n_reps=40, random_state=stream(0, "b"))
    assert 0.5 < big / expected_l2_error(truth, 4, 2.0) < 2


def test_private_error_falls_with_epsilon():
    X, truth = _data(n=20, d=8)
    errs = [
        l2_error_private(X, truth, 4, e, 1e-5, neighbours="change-attribute", n_reps=5, random_state=stream(1, "p"))
        for e in (0.1, 10.0)
    ]
    assert errs[1] < errs[0]


def test_expected_error_formula():
    truth = np.array([1.0, 4.0])
    assert np.isclose(expected_l2_error(truth, 2, 0.0), (2 * 1 / 2 + 2 * 16 / 2) / 17)


def test_one_hot_groups():
    names = ["age", "workclass=Private", "workclass=State", "hours", "sex=F", "sex=M"]
    assert one_hot_groups(names) == [[1, 2], [4, 5]]
    assert one_hot_groups(["a", "b"]) == []


def test_svm_errors():
    rng = np.random.default_rng(0)
    X = rng.random((200, 6))
    y = (X[:, 0] > 0.5).astype(int)
    split = (X[:150], y[:150], X[150:], y[150:])
    identity = svm_test_error(lambda g: FunctionTransformer(), *split, seed=0, key=("id",), n_reps=2)
    assert identity < 0.15
    assert identity == svm_test_error(lambda g: FunctionTransformer(), *split, seed=0, key=("id",), n_reps=2)
    noisy = fixed_sigma_svm_error(*split, 3, 50.0, seed=0, key=("s",), n_reps=2)
    assert noisy > identity


@pytest.mark.parametrize(
    "call, error",
    [
        (
            lambda: (
                l2_error_fixed_sigma(*_data(), 2, 0.1, n_reps=1, random_state=stream(0, "x"))
                and l2_error_fixed_sigma(_data()[0], np.ones(3), 2, 0.1, n_reps=1, random_state=stream(0, "x"))
            ),
            ValueError,
        ),
        (
            lambda: l2_error_private(
                *_data(), 2, 1.0, 1e-5, neighbours="change-attribute", n_reps=0, random_state=stream(0, "x")
            ),
            ValueError,
        ),
        (lambda: expected_l2_error(np.zeros(3), 2, 1.0), ValueError),
        (lambda: one_hot_groups("age"), TypeError),
        (
            lambda: svm_test_error(
                "not callable",
                *(np.ones((4, 2)), np.ones(4), np.ones((4, 2)), np.ones(4)),
                seed=0,
                key=("k",),
                n_reps=1,
            ),
            TypeError,
        ),
    ],
)
def test_bad_input(call, error):
    with pytest.raises(error):
        call()
