import numpy as np
import pytest

from dpnb.papers.ron_gauss import RONGauss, rbf_ridge_predict
from dpnb.papers.ron_gauss_reproduction import krr_rmse, release_accuracy, release_rmse, svm_accuracy


def _classes(rng, n=60):
    y = np.repeat([0, 1], n // 2)
    return rng.normal(0, 0.3, (n, 3)) + 3 * y[:, None], y


def test_svm_accuracy_separable_and_chance():
    rng = np.random.default_rng(0)
    Z, y = _classes(rng)
    Z_test, y_test = _classes(rng)
    assert svm_accuracy(Z, y, Z_test, y_test) == 100.0
    assert svm_accuracy(Z, y, Z_test, 1 - y_test) == 0.0


@pytest.mark.parametrize("labels", [(0, 1), (5, 2), ("b", "a")])
def test_binary_prediction_equals_libsvm_predict(labels):
    """The BLAS decision function labels every row as ``SVC.predict`` does (noisy, overlapping classes,
    test rows in more blocks than one); three classes go through ``SVC.predict`` itself."""
    from sklearn.svm import SVC

    from dpnb.papers import ron_gauss_reproduction as rgr

    rng = np.random.default_rng(3)
    for p in (1, 3, 17):
        Z = rng.standard_normal((240, p))
        y = np.asarray(labels)[(Z[:, 0] + rng.standard_normal(240) > 0).astype(int)]
        Z_test = rng.standard_normal((rgr._PREDICT_ROWS + 37, p))
        svc = SVC().fit(Z, y)
        np.testing.assert_array_equal(rgr._binary_svc_predict(svc, Z_test), svc.predict(Z_test))
        y3 = np.where(Z[:, -1] > 1, "c", y.astype(str))
        expected = 100 * np.mean(SVC().fit(Z, y3).predict(Z_test) == y3[:1])
        assert svm_accuracy(Z, y3, Z_test, np.repeat(y3[:1], len(Z_test))) == expected


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
