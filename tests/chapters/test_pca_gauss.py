import numpy as np
import pytest

from dpnb.chapters import pca_gauss as wc
from dpnb.chapters.pca_gauss import SOURCES, basis_for, ridge_rmse, svm_scores, sweep
from dpnb.numerics.linalg import triangle
from dpnb.papers.pca_gauss import eigenvalue_sensitivity, gmm_sensitivities, second_moment_l1_sensitivity
from dpnb.reporting.sensitivity_grid import pair_change


@pytest.mark.parametrize("n, m, a", [(2, 2, 1.0), (5, 6, 0.5), (10, 16, 2.0)])
def test_identity_and_second_moment_pairs_attain_propositions_1_and_3(n, m, a):
    assert pair_change(lambda X: X, *wc.opposite_vertices_pair(n, m, a)) == pytest.approx(2 * m * a)
    second = lambda X: X.T @ X / n
    assert pair_change(second, *wc.vertex_to_origin_pair(n, m, a)) == pytest.approx(m**2 * a**2 / n)
    triu = lambda X: triangle(X.T @ X / n)
    bound = second_moment_l1_sensitivity((-a, a), n, n_features=m)
    assert pair_change(triu, *wc.vertex_to_origin_pair(n, m, a)) == pytest.approx(bound)


@pytest.mark.parametrize("m, k", [(2, 1), (4, 2), (16, 5), (8, 8)])
def test_reduced_query_attains_two_a_sqrt_k(m, k):
    query = wc.reduced_query(m, k)
    W = query(np.eye(m)) * np.sqrt(m)  # the basis itself
    np.testing.assert_allclose(W.T @ W, np.eye(k), atol=1e-12)
    np.testing.assert_allclose(W.T @ np.ones(m), np.sqrt(m / k) * np.ones(k), atol=1e-12)
    np.testing.assert_array_equal(W, wc.reduced_query(m, k)(np.eye(m)) * np.sqrt(m))  # a fixed public basis
    assert pair_change(query, *wc.opposite_vertices_pair(3, m, 1.0)) == pytest.approx(2 * np.sqrt(k))


@pytest.mark.parametrize("n, m, k", [(2, 2, 1), (3, 4, 2), (10, 4, 4), (100, 16, 8)])
def test_eigenvalue_pair_attains_theorem_4(n, m, k):
    release = lambda X: wc.algorithm1_release(X, k)
    assert pair_change(release, *wc.eigenvalue_pair(n, m)) == pytest.approx(eigenvalue_sensitivity(k, n, (-1.0, 1.0)))
    assert eigenvalue_sensitivity(k, n, (-1.0, 1.0)) == pytest.approx(min(k, 2) / n)


def test_algorithm1_release_is_the_top_eigenvalues_over_m():
    X = np.random.default_rng(0).uniform(-1, 1, (30, 5))
    lam = np.sort(np.linalg.eigvalsh(X.T @ X / 30))[::-1]
    np.testing.assert_allclose(wc.algorithm1_release(X, 3), lam[:3] / 5)


@pytest.mark.parametrize("n", [3, 10, 1000])
def test_basis_flip_rotates_the_released_basis(n):
    X, Xp = wc.basis_flip_pair(n, 4)
    assert abs(wc.same_data_basis(X, 1)[:, 0] @ wc.same_data_basis(Xp, 1)[:, 0]) == pytest.approx(0.0, abs=1e-9)
    # mapped back to feature space, the change does not shrink with N (7/16 from N = 4 on): not of order a^2 / N
    assert pair_change(wc.algorithm1_in_feature_space, X, Xp) >= 0.4375 - 1e-12


def test_prop4_pair_change_does_not_shrink_with_n():
    changes = [pair_change(lambda X: wc.same_basis_augmented(X, 1), *wc.prop4_pair(n, 4)) for n in (3, 100, 1000)]
    assert changes[1] == pytest.approx(changes[2])  # the same from N = 4 on, far above (K + 1) a^2 / N
    assert changes[2] > 100 * 2 / 1000


@pytest.mark.parametrize("n, m, k", [(3, 4, 1), (10, 6, 3)])
def test_independent_basis_augmented_attains_the_triangle_bound(n, m, k):
    pair = wc.vertex_to_origin_pair(n, m + 1)
    full = pair_change(lambda X: wc.independent_basis_augmented(X, k), *pair)
    assert full == pytest.approx((k + 1) ** 2 / n)
    upper = pair_change(lambda X: triangle(wc.independent_basis_augmented(X, k)), *pair)
    assert upper == pytest.approx(second_moment_l1_sensitivity((-1.0, 1.0), n, n_features=k + 1))


@pytest.mark.parametrize("n, k, a", [(3, 2, 1.0), (6, 2, 1.0), (20, 4, 0.5)])
def test_class_mean_pair_attains_the_mean_and_the_corrected_covariance(n, k, a):
    X, Xp = wc.class_mean_pair(n, k, a)
    assert pair_change(lambda Z: Z.mean(axis=0), X, Xp) == pytest.approx(2 * k * a / n)
    corrected = 4 * k**2 * a**2 * (n - 1) / n**2
    assert pair_change(wc.centred_covariance, X, Xp) == pytest.approx(corrected)
    assert corrected > k**2 * a**2 / n  # the reference code's value is too small


def test_centred_covariance_matches_numpy():
    Z = np.random.default_rng(1).normal(size=(12, 3))
    np.testing.assert_allclose(wc.centred_covariance(Z), np.cov(Z.T, bias=True))


def test_class_move_exceeds_the_per_class_mean_bound():
    n, k = 10, 2
    change = pair_change(wc.class_means, *wc.class_move_pair(n, k))
    assert change > 2 * k / min((n + 1) // 2, n - (n + 1) // 2) * (1 + 1e-6)


@pytest.mark.parametrize("n, k", [(3, 1), (6, 2), (11, 4)])
def test_joint_pair_attains_the_corrected_algorithm_3(n, k):
    X, Xp = wc.joint_pair(n, k, 0.5)
    for part, bound in gmm_sensitivities(k, (-0.5, 0.5)).items():
        assert pair_change(lambda D, part=part: wc.joint_statistics(D, part), X, Xp) == pytest.approx(bound)


def test_class_means_of_an_empty_class_are_zero():
    X = np.array([[1.0, 2.0, 0.0], [3.0, 4.0, 0.0]])
    np.testing.assert_allclose(wc.class_means(X), [2.0, 3.0, 0.0, 0.0])


def test_orthogonal_unit_pair_attains_sqrt_2():
    assert pair_change(lambda X: triangle(X.T @ X), *wc.orthogonal_unit_pair(4, 3), norm=2) == pytest.approx(np.sqrt(2))


def test_sign_rows_and_feature_range():
    u, w = wc.sign_rows(6, 0.5)
    assert u @ w == 0 and u @ u == pytest.approx(6 * 0.25)
    assert wc.pca_feature_range(np.tile(w, (5, 1)), 1) == pytest.approx(0.5)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: wc.sign_rows(3), ValueError, "even"),
        (lambda: wc.sign_rows(4, -1.0), ValueError, "^a must"),
        (lambda: wc.reduced_query(3, 4), ValueError, "n_components"),
        (lambda: wc.reduced_query(3.0, 1), TypeError, "n_features"),
        (lambda: wc.opposite_vertices_pair(0, 3), ValueError, "^n must"),
        (lambda: wc.eigenvalue_pair(4, 3), ValueError, "even"),
        (lambda: wc.class_mean_pair(3, 2, 0.0), ValueError, "^a must"),
        (lambda: wc.orthogonal_unit_pair(3, 1), ValueError, "n_features"),
        (lambda: wc.joint_statistics(np.zeros((2, 3)), "means"), ValueError, "part"),
    ],
)
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


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


def test_reproduction_bad_input():
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
