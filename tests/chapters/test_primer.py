import math

import numpy as np
import pytest

from dpnb.chapters import primer
from dpnb.numerics.stats import clopper_pearson


def test_randomized_response_answer_rates_match_the_lemma():
    bits = np.repeat([0, 1], 20000)
    answers = primer.randomized_response(bits, 0.5, random_state=0)
    assert answers.dtype == np.int8 and answers.shape == bits.shape
    for bit, rate in ((1, 0.75), (0, 0.25)):
        low, high = clopper_pearson(int(answers[bits == bit].sum()), 20000, 0.999)
        assert low <= rate <= high


def test_randomized_response_size_stacks_surveys_and_is_reproducible():
    a = primer.randomized_response([1, 0, 1], 0.3, random_state=1, size=4)
    b = primer.randomized_response([1, 0, 1], 0.3, random_state=1, size=4)
    assert a.shape == (4, 3)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_epsilon_is_the_largest_log_ratio(p):
    yes1, yes0 = (1 + p) / 2, (1 - p) / 2
    assert primer.randomized_response_epsilon(p) == pytest.approx(
        max(math.log(yes1 / yes0), math.log((1 - yes0) / (1 - yes1)))
    )
    assert primer.randomized_response_epsilon(0.5) == pytest.approx(math.log(3), rel=1e-15)


def test_estimate_is_unbiased_with_the_stated_variance():
    rng = np.random.default_rng(2)
    bits = (rng.random(500) < 0.3).astype(int)
    answers = primer.randomized_response(bits, 0.5, random_state=3, size=4000)
    estimates = primer.estimate_proportion(answers, 0.5)
    assert estimates.shape == (4000,)
    assert abs(estimates.mean() - bits.mean()) < 4 * math.sqrt(primer.estimate_variance(500, 0.5) / 4000)
    assert estimates.var(ddof=1) == pytest.approx(primer.estimate_variance(500, 0.5), rel=0.1)
    assert primer.estimate_variance(100, 0.5) == pytest.approx(3 / 400)
    assert primer.estimate_proportion([1, 0], 0.5) == 0.5


def test_subset_queries_and_their_sensitivity():
    Q = primer.subset_queries(10, 50, random_state=0)
    assert Q.shape == (50, 10) and set(np.unique(Q)) <= {0.0, 1.0}
    assert primer.query_sensitivity(Q) == Q.sum(axis=0).max()
    d = np.zeros(10)
    d2 = d.copy()
    d2[3] = 1
    assert np.abs(Q @ d - Q @ d2).sum() <= primer.query_sensitivity(Q)


@pytest.mark.parametrize("method", primer.METHODS)
def test_reconstruct_recovers_a_column_from_slightly_noisy_counts(method):
    rng = np.random.default_rng(4)
    secret = rng.integers(0, 2, size=40)
    Q = primer.subset_queries(40, 200, random_state=rng)
    guess = primer.reconstruct(Q, Q @ secret + rng.uniform(-0.5, 0.5, 200), method=method)
    np.testing.assert_array_equal(guess, secret)


def test_exhaustive_attack_respects_and_attains_four_e():
    secret = np.array([1, 1, 0, 0, 1, 0])
    S = primer.all_subsets(6).astype(float)
    assert S.shape == (64, 6)
    exact = primer.consistent_candidates(S @ secret, 0.0)
    np.testing.assert_array_equal(exact, secret[None, :])
    far = np.array([0, 1, 1, 0, 1, 0])  # one 1 and one 0 flipped: 2 entries = 4E at E = 0.5
    found = primer.consistent_candidates((S @ secret + S @ far) / 2, 0.5)
    wrong = np.sum(found != secret, axis=1)
    assert wrong.max() == 2 and (wrong == 0).any()


def test_low_frequency_basis_is_orthonormal_and_starts_with_the_constant_image():
    P = primer.low_frequency_basis(5, 25)
    np.testing.assert_allclose(P @ P.T, np.eye(25), atol=1e-12)
    np.testing.assert_allclose(P[0], np.full(25, 1 / 5))


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: primer.randomized_response([0, 2], 0.5), ValueError),
        (lambda: primer.randomized_response([], 0.5), ValueError),
        (lambda: primer.randomized_response([0, 1], 1.0), ValueError),
        (lambda: primer.randomized_response([0, 1], "half"), TypeError),
        (lambda: primer.randomized_response([0, 1], 0.5, size=0), ValueError),
        (lambda: primer.randomized_response_epsilon(0.0), ValueError),
        (lambda: primer.estimate_proportion([0, 1], 0.5, axis=2), ValueError),
        (lambda: primer.estimate_proportion([0.5, 1], 0.5), ValueError),
        (lambda: primer.estimate_variance(0, 0.5), ValueError),
        (lambda: primer.estimate_variance(1.5, 0.5), TypeError),
        (lambda: primer.subset_queries(0, 3), ValueError),
        (lambda: primer.subset_queries(3, 2.0), TypeError),
        (lambda: primer.query_sensitivity([[0, 2]]), ValueError),
        (lambda: primer.reconstruct([[1, 0]], [1.0, 2.0]), ValueError),
        (lambda: primer.reconstruct([[1, 0]], [np.nan]), ValueError),
        (lambda: primer.reconstruct([[1, 0]], [1.0], method="exact"), ValueError),
        (lambda: primer.reconstruct([[1, 0.5]], [1.0]), ValueError),
        (lambda: primer.all_subsets(17), ValueError),
        (lambda: primer.all_subsets(0), ValueError),
        (lambda: primer.consistent_candidates([0, 1, 1], 0.5), ValueError),
        (lambda: primer.consistent_candidates([0, 1, 1, 2], -1.0), ValueError),
        (lambda: primer.low_frequency_basis(2, 5), ValueError),
        (lambda: primer.low_frequency_basis(2.0, 1), TypeError),
    ],
)
def test_bad_input(call, error):
    with pytest.raises(error):
        call()


@pytest.mark.parametrize("shape", [(800, 200), (120, 40), (40, 40)])
def test_least_squares_from_the_normal_equations_is_the_svd_solution(shape):
    rng = np.random.default_rng(7)
    Q = primer.subset_queries(shape[1], shape[0], random_state=rng)
    a = rng.normal(size=shape[0]) * 5
    expected = np.linalg.lstsq(Q, a, rcond=None)[0]
    np.testing.assert_allclose(primer._least_squares(Q, a), expected, rtol=0, atol=1e-9 * np.abs(expected).max())


def test_least_squares_with_dependent_columns_is_the_minimum_norm_solution():
    Q = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0], [0.0, 0.0, 1.0], [1.0, 1.0, 0.0]])  # columns 0 and 1 equal
    a = np.array([1.0, 2.0, 3.0, 0.5])
    np.testing.assert_allclose(primer._least_squares(Q, a), np.linalg.lstsq(Q, a, rcond=None)[0], atol=1e-12)
