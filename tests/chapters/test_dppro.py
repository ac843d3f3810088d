import itertools

import numpy as np
import pytest
from sklearn.preprocessing import FunctionTransformer

from dpnb.chapters.dppro import (
    GridPoint,
    attribute_flip_pair,
    audit_release,
    exact_record_sensitivity,
    expected_l2_error,
    fixed_sigma_svm_error,
    joint_shift_ratios,
    l2_error_fixed_sigma,
    l2_error_private,
    one_hot_groups,
    record_pair,
    release_scores,
    sensitivity_grid,
    sigma_of_r_trials,
    squared_distance_trials,
    svm_test_error,
)
from dpnb.ground.streams import stream
from dpnb.papers import dppro


def _R(d=6, k=3, seed=0):
    return dppro.gaussian_projection(d, k, random_state=np.random.default_rng(seed))


def test_attribute_flip_pair_attains_theta2():
    R = _R()
    X, X_prime = attribute_flip_pair(R, n_rows=3)
    assert X.shape == X_prime.shape == (3, 6)
    assert np.count_nonzero(X_prime - X) == 1 and np.all(X == 0)
    assert np.isclose(np.linalg.norm((X_prime - X) @ R), dppro.attribute_sensitivity(R))


def test_record_pair_realises_the_sign_change():
    R = _R()
    v, value = dppro.worst_record_change(R, random_state=np.random.default_rng(1))
    X, X_prime = record_pair(v, n_rows=2)
    assert set(np.unique(X)) <= {0.0, 1.0} and np.all(X[1] == 0) and np.all(X_prime[1] == 0)
    assert np.isclose(np.linalg.norm((X - X_prime) @ R), value)


def test_exact_record_sensitivity_brackets():
    R = _R(d=8, k=2)
    exact = exact_record_sensitivity(R)
    brute = max(np.linalg.norm(np.array(s) @ R) for s in itertools.product((-1, 1), repeat=8))
    assert np.isclose(exact, brute)
    assert dppro.worst_record_change(R)[1] <= exact * (1 + 1e-12) <= dppro.record_sensitivity(R) * (1 + 1e-9)
    assert exact > dppro.attribute_sensitivity(R)


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: exact_record_sensitivity(_R(d=20, k=2)), ValueError),
        (lambda: record_pair(np.array([1.0, 0.0, -1.0])), ValueError),
        (lambda: attribute_flip_pair(_R(), n_rows=0), ValueError),
        (lambda: attribute_flip_pair(_R(), n_rows=1.5), TypeError),
        (lambda: sensitivity_grid((2,), (1,), seed=0, n_steps=-1), ValueError),
        (
            lambda: release_scores(np.zeros((2, 6)), np.ones(3), _R(), 1.0, 10, random_state=np.random.default_rng()),
            ValueError,
        ),
        (
            lambda: squared_distance_trials(np.zeros((3, 6)), 2, 1.0, 5, random_state=np.random.default_rng()),
            ValueError,
        ),
        (
            lambda: sigma_of_r_trials(np.ones(4), 2, 1.0, n_batches=0, batch=5, random_state=np.random.default_rng()),
            ValueError,
        ),
    ],
)
def test_bad_input(call, error):
    with pytest.raises(error):
        call()


def test_sensitivity_grid_small():
    points = sensitivity_grid((2, 4), (1, 2), seed=3, n_steps=10)
    assert [(p.d, p.k, p.n) for p in points] == [
        (2, 1, 1),
        (2, 1, 2),
        (2, 2, 1),
        (2, 2, 2),
        (4, 1, 1),
        (4, 1, 2),
        (4, 4, 1),
        (4, 4, 2),
    ]
    assert all(p.attribute_ok and p.record_ok for p in points)
    assert all(p.record_exact is not None and p.record_pair <= p.record_exact * (1 + 1e-9) for p in points)
    assert points == sensitivity_grid((2, 4), (1, 2), seed=3, n_steps=10)  # one stream per point: reproducible
    assert set(points[0].row()) >= {"d", "k", "n", "record: certificate B(y)"}


def test_grid_point_flags_a_violation():
    base = dict(d=2, k=1, n=1, theta=1.0, record_pair=1.0, record_exact=1.5, record_certificate=2.0)
    assert GridPoint(attribute_found=1.0, record_found=1.2, **base).attribute_ok
    assert not GridPoint(attribute_found=1.1, record_found=1.2, **base).attribute_ok
    assert not GridPoint(attribute_found=1.0, record_found=1.6, **base).record_ok  # above the exact value
    assert not GridPoint(attribute_found=1.0, record_found=0.9, **base).record_ok  # below the explicit pair


def test_release_scores_match_one_call_per_run():
    R, row, direction = _R(), np.ones((1, 6)), np.arange(3.0)
    chunked = release_scores(row, direction, R, 0.5, 25, random_state=stream(0, "x"), chunk=7)
    one = release_scores(row, direction, R, 0.5, 25, random_state=stream(0, "x"), chunk=25)
    assert chunked.shape == (25,)
    assert np.allclose(chunked, one)
    assert np.isclose(np.mean(chunked), (row @ R @ direction)[0], atol=4 * 0.5 * np.linalg.norm(direction) / 5)


@pytest.mark.parametrize("sigma", [0.0, 0.5])
def test_release_scores_are_the_stacked_release_with_the_same_draws(sigma):
    """The product row R formed once: the scores of project_and_perturb on stacked copies of the row, to round-off,
    and the generator left where those calls leave it (the same draws, none at sigma = 0)."""
    R, row, direction = _R(), np.linspace(0.0, 1.0, 6)[None, :], np.array([1.0, -2.0, 0.5])
    fast, slow = stream(0, "s"), stream(0, "s")
    got = release_scores(row, direction, R, sigma, 23, random_state=fast, chunk=10)
    expected = np.concatenate(
        [dppro.project_and_perturb(np.repeat(row, m, 0), R, sigma, random_state=slow) @ direction for m in (10, 10, 3)]
    )
    assert np.allclose(got, expected, rtol=1e-13, atol=1e-13)
    assert fast.bit_generator.state == slow.bit_generator.state
    with pytest.raises(ValueError, match="sigma"):
        release_scores(row, direction, R, -1.0, 5, random_state=fast)


def test_audit_release_flags_tiny_noise_only():
    R = _R(d=6, k=3)
    X, X_prime = attribute_flip_pair(R)
    theta = dppro.attribute_sensitivity(R)
    tiny = audit_release(X, X_prime, R, 0.01 * theta, claimed=1.0, delta=1e-5, n_runs=4000, random_state=stream(0, "a"))
    assert tiny.violates
    sigma = dppro.theorem2_sigma(theta, 1.0, 1e-5)
    fair = audit_release(X, X_prime, R, sigma, claimed=1.0, delta=1e-5, n_runs=4000, random_state=stream(0, "b"))
    assert not fair.violates


def test_squared_distance_trials_unbiased():
    pair = np.array([[0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0]])
    est = squared_distance_trials(pair, 2, 0.3, 3000, random_state=stream(1, "t3"))
    assert est.shape == (3000,)
    var = dppro.squared_distance_variance(2.0, 2, 0.3)
    assert abs(est.mean() - 2.0) < 4 * np.sqrt(var / 3000)


def test_sigma_of_r_trials_shapes_and_unbiased():
    z = np.array([1.0, -1.0, 0.0, 1.0, 0.0])
    u2, sig, q = sigma_of_r_trials(z, 3, 0.5, n_batches=4, batch=500, random_state=stream(2, "s"))
    assert u2.shape == sig.shape == q.shape == (2000,)
    assert np.all(sig >= 0.5 * np.sqrt(np.sum(z**2) / 3) * 0)  # nonnegative noise scales
    assert abs(q.mean() - 3.0) < 4 * np.sqrt(2 * 9 / 3 / 2000)  # E||zR||^2 = ||z||^2 = 3
    assert abs(u2.mean() - 3.0) < 4 * u2.std() / np.sqrt(2000)


def test_joint_shift_ratios_match_a_direct_computation():
    m = joint_shift_ratios(10, [2, 3, 5], n_draws=4, random_state=stream(3, "ivc"))
    assert m.shape == (4, 3)
    assert np.all(m[:, 0] == 1.0)  # one projection at Theorem 2's sigma: exactly its own shift
    assert np.all(np.diff(m, axis=1) >= 0) and np.all(m <= np.sqrt([1, 2, 3]) * (1 + 1e-12))
    rng = stream(3, "ivc")  # the first draw again, computed directly
    mats = [dppro.gaussian_projection(10, k, random_state=rng) for k in (2, 3, 5)]
    mu_sq = sum(np.sum(R**2, axis=1) / dppro.attribute_sensitivity(R) ** 2 for R in mats)
    assert np.isclose(m[0, 2], np.sqrt(mu_sq.max()))


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"components": []}, ValueError),
        ({"components": [2, 11]}, ValueError),
        ({"components": [2.0]}, TypeError),
        ({"n_draws": 0}, ValueError),
    ],
)
def test_joint_shift_ratios_bad_input(kwargs, error):
    args = {"components": [2, 3], "n_draws": 2} | kwargs
    with pytest.raises(error):
        joint_shift_ratios(10, args["components"], n_draws=args["n_draws"], random_state=np.random.default_rng())


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
def test_reproduction_bad_input(call, error):
    with pytest.raises(error):
        call()
