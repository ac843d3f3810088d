import numpy as np
import pytest

from dpnb import comparison
from dpnb.linalg import top_eigenvectors


@pytest.fixture(scope="module")
def adult():
    return comparison.load_adult_task(150, 200, random_state=0)


def test_adult_task_uses_declared_bounds_and_codes(adult):
    assert adult.X_train.shape[0] == 150 and adult.X_test.shape[0] == 200
    assert adult.X_train.min() >= 0.0 and adult.X_train.max() <= 1.0
    assert adult.X_train.shape[1] == adult.n_numeric + sum(adult.group_sizes)
    assert np.all(adult.codes_train < adult.domain_sizes) and np.all(adult.codes_train >= 0)
    np.testing.assert_array_equal(adult.codes_train[:, -1], adult.y_train)
    with pytest.raises(ValueError):
        comparison.load_adult_task(5, 200)


def test_adult_classification_scores_and_method_independence(adult):
    names = ["real data (non-private)", "data-free control", "MST (tree sampling)"]
    scores = comparison.adult_classification(adult, 1.0, 1e-6, np.random.default_rng(0), methods=names)
    assert list(scores) == names and all(0.0 <= s <= 1.0 for s in scores.values())
    alone = comparison.adult_classification(adult, 1.0, 1e-6, np.random.default_rng(0), methods=names[2:])
    assert alone[names[2]] == scores[names[2]]  # each method has its own child stream


def test_captured_variance_is_one_for_pca_and_small_for_an_orthogonal_direction():
    X = np.diag([3.0, 2.0, 1.0])
    top = top_eigenvectors(X.T @ X, 1)[1].T
    assert comparison.captured_variance(X, top) == pytest.approx(1.0)
    assert comparison.captured_variance(X, np.array([[0.0, 0.0, 1.0]])) == pytest.approx(1 / 9)


def test_distance_metrics():
    Z = np.array([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]])
    np.testing.assert_allclose(comparison._pairwise_squared(Z), [25.0, 1.0, 18.0])
    true = np.array([1.0, 2.0])
    assert comparison.relative_distance_error(true, np.zeros(2)) == pytest.approx(1.0)
    assert comparison.relative_distance_error(true, true) == 0.0


def test_subspace_and_distance_tasks_report_every_method():
    X = np.random.default_rng(1).integers(0, 2, (40, 6)).astype(float)
    sub = comparison.subspace_quality(X / np.sqrt(6), 1, 1.0, 1e-6, np.random.default_rng(2))
    assert sub["non-private PCA"] == pytest.approx(1.0) and all(0 <= v <= 1 + 1e-12 for v in sub.values())
    dist = comparison.distance_preservation(X, 3, np.inf, 1e-6, np.random.default_rng(3))
    assert dist["data-free control (answer 0)"] == 1.0 and dist["Laplace identity query"] == pytest.approx(0.0)
