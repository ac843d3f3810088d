import numpy as np
import pytest

from dpnb.chapters.pca_gauss import SOURCES, basis_for, ridge_rmse, svm_scores, sweep


def data(n=200, m=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, m))
    return X, (X[:, 0] > 0).astype(int)


@pytest.mark.parametrize(
    "source, left", [("PubPCA", 1.0), ("LapPCA", 0.5), ("AGPCA", 0.5), ("random projection", 1.0), ("Liu", 1.0)]
)
def test_basis_for_spends_the_basis_share(source, left):
    X, _ = data()
    W, eps_left = basis_for(source, X, X[:20], 2, 1.0, delta=1e-5, pca_fraction=0.5, random_state=1)
    assert eps_left == pytest.approx(left)
    assert W.shape == ((6, 6) if source == "Liu" else (6, 2))
    if source in ("PubPCA", "LapPCA", "AGPCA"):
        np.testing.assert_allclose(W.T @ W, np.eye(2), atol=1e-10)


def test_basis_for_is_reproducible():
    X, _ = data()
    a = basis_for("LapPCA", X, None, 2, 1.0, delta=1e-5, pca_fraction=0.3, random_state=5)
    b = basis_for("LapPCA", X, None, 2, 1.0, delta=1e-5, pca_fraction=0.3, random_state=5)
    np.testing.assert_array_equal(a[0], b[0])
    assert a[1] == pytest.approx(0.7)


def test_sweep_scores_every_method_k_and_trial():
    X, y = data()
    calls = []

    def evaluate(Z, y_syn, transform, rng):
        calls.append(Z.shape)
        assert transform(X[:3]).shape[0] == 3
        return float(Z.shape[1])

    out = sweep(X, y, X[:30], evaluate, mode="gmm", components=[1, 2], n_trials=2, n_synthetic=50, epsilon=1.0,
                delta=1e-5, pca_fraction=0.5, model_kwargs={"n_classes": 2}, random_state=3)  # fmt: skip
    assert list(out) == [*SOURCES.values(), "RON-Gauss"]
    assert out["PCA-Gauss, PubPCA"] == {1: [1.0, 1.0], 2: [2.0, 2.0]}
    assert out["Liu (no reduction)"] == {6: [6.0, 6.0]}
    assert out["RON-Gauss"] == {1: [1.0, 1.0], 2: [2.0, 2.0]}
    assert all(shape[0] == 50 for shape in calls)
    again = sweep(X, y, X[:30], lambda Z, *_: float(Z.sum()), mode="gmm", components=[2], n_trials=2, n_synthetic=50,
                  epsilon=1.0, delta=1e-5, pca_fraction=0.5, model_kwargs={"n_classes": 2}, random_state=3,
                  sources={"PubPCA": "PubPCA"}, with_ron=False)  # fmt: skip
    assert list(again) == ["PubPCA"]
    same = sweep(X, y, X[:30], lambda Z, *_: float(Z.sum()), mode="gmm", components=[2], n_trials=2, n_synthetic=50,
                 epsilon=1.0, delta=1e-5, pca_fraction=0.5, model_kwargs={"n_classes": 2}, random_state=3,
                 sources={"PubPCA": "PubPCA"}, with_ron=False)  # fmt: skip
    assert again == same


def test_svm_scores_and_one_class():
    X, y = data()
    acc, bal = svm_scores(X[:150], y[:150], X[150:], y[150:], random_state=0)
    assert acc > 0.9 and bal > 0.9
    acc, bal = svm_scores(X[:10], np.ones(10, dtype=int), X[150:], y[150:])
    assert acc == pytest.approx(np.mean(y[150:] == 1)) and bal == pytest.approx(0.5)


def test_ridge_rmse():
    X, _ = data()
    target = X @ np.arange(6.0)
    assert ridge_rmse(X, target, X, target) < 0.1
    assert ridge_rmse(X, target, X, target + 1.0) == pytest.approx(1.0, abs=0.1)


def test_bad_input():
    X, y = data()
    with pytest.raises(ValueError, match="source"):
        basis_for("SVD", X, X, 2, 1.0, delta=1e-5, pca_fraction=0.5)
    with pytest.raises(ValueError, match="pca_fraction"):
        basis_for("LapPCA", X, X, 2, 1.0, delta=1e-5, pca_fraction=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        basis_for("LapPCA", X, X, 2, 0.0, delta=1e-5, pca_fraction=0.5)
    with pytest.raises(ValueError, match="delta"):
        basis_for("AGPCA", X, X, 2, 1.0, delta=2.0, pca_fraction=0.5)
    with pytest.raises(ValueError, match="^a must"):
        basis_for("LapPCA", X, X, 2, 1.0, delta=1e-5, pca_fraction=0.5, a=-1.0)
    kwargs = dict(mode="gmm", n_trials=1, n_synthetic=5, epsilon=1.0, delta=1e-5, pca_fraction=0.5)
    with pytest.raises(TypeError, match="evaluate"):
        sweep(X, y, X, "accuracy", components=[1], **kwargs)
    with pytest.raises(ValueError, match="components"):
        sweep(X, y, X, lambda *a: 0.0, components=[], **kwargs)
    with pytest.raises(ValueError, match="components"):
        sweep(X, y, X, lambda *a: 0.0, components=[0], **kwargs)
    with pytest.raises(TypeError, match="sources"):
        sweep(X, y, X, lambda *a: 0.0, components=[1], sources=["PubPCA"], **kwargs)
