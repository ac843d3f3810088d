import numpy as np
import pytest

from dpnb.chapters.ron_gauss import krr_rmse, release_accuracy, release_rmse, svm_accuracy
from dpnb.papers.ron_gauss import RONGauss, rbf_ridge_predict


def _classes(rng, n=60):
    y = np.repeat([0, 1], n // 2)
    return rng.normal(0, 0.3, (n, 3)) + 3 * y[:, None], y


def test_svm_accuracy_separable_and_chance():
    rng = np.random.default_rng(0)
    Z, y = _classes(rng)
    Z_test, y_test = _classes(rng)
    assert svm_accuracy(Z, y, Z_test, y_test) == 100.0
    assert svm_accuracy(Z, y, Z_test, 1 - y_test) == 0.0


def test_krr_rmse_matches_the_predictor_and_subsamples():
    rng = np.random.default_rng(1)
    Z, Z_test = rng.normal(size=(40, 2)), rng.normal(size=(10, 2))
    y, y_test = Z[:, 0], Z_test[:, 0]
    pred = rbf_ridge_predict(Z, y, Z_test, alpha=0.1)
    assert krr_rmse(Z, y, Z_test, y_test) == pytest.approx(np.sqrt(np.mean((pred - y_test) ** 2)))
    keep = np.random.default_rng(7).choice(40, 15, replace=False)
    sub = rbf_ridge_predict(Z[keep], y[keep], Z_test, alpha=0.1)
    got = krr_rmse(Z, y, Z_test, y_test, fit_rows=15, random_state=np.random.default_rng(7))
    assert got == pytest.approx(np.sqrt(np.mean((sub - y_test) ** 2)))
    # fit_rows >= len(Z) fits all rows
    assert krr_rmse(Z, y, Z_test, y_test, fit_rows=40, random_state=3) == krr_rmse(Z, y, Z_test, y_test)


def test_release_scores_equal_the_manual_pipeline():
    rng = np.random.default_rng(2)
    X, y = _classes(rng, 80)
    model = RONGauss(2, 1.0, mode="gmm", random_state=4).fit(X, y)
    twin = RONGauss(2, 1.0, mode="gmm", random_state=4).fit(X, y)
    Z, yz = twin.sample(50)
    assert release_accuracy(model, 50, X, y) == svm_accuracy(Z, yz, twin.transform(X), y)
    target = np.clip(X[:, 0] / 4, -1, 1)
    reg = RONGauss(2, 1.0, mode="supervised", label_bound=1.0, random_state=5).fit(X, target)
    reg_twin = RONGauss(2, 1.0, mode="supervised", label_bound=1.0, random_state=5).fit(X, target)
    Zr, yr = reg_twin.sample(30)
    assert release_rmse(reg, 30, X, target) == krr_rmse(Zr, yr, reg_twin.transform(X), target)


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: svm_accuracy(np.ones((4, 2)), [0, 1, 0], np.ones((2, 2)), [0, 1]), ValueError),
        (lambda: svm_accuracy(np.ones((4, 2)), [0, 1, 0, 1], np.ones((2, 3)), [0, 1]), ValueError),
        (lambda: krr_rmse(np.ones((4, 2)), np.ones(4), np.ones((2, 2)), np.ones(3)), ValueError),
        (lambda: krr_rmse(np.ones((4, 2)), np.ones(4), np.ones((2, 2)), np.ones(2), fit_rows=-1), ValueError),
        (lambda: krr_rmse(np.ones((4, 2)), np.ones(4), np.ones((2, 2)), np.ones(2), fit_rows=1.5), TypeError),
    ],
)
def test_bad_input(call, error):
    with pytest.raises(error):
        call()
