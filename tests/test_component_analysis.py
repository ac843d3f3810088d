"""Tests for dpnb.component_analysis (Jiang et al. 2013: DP-PCA and DP-LDA publishing)."""

import numpy as np
import pytest

from dpnb.audit import search_sensitivity
from dpnb.component_analysis import (DPLDAPublisher, DPPCAPublisher, OneHotRows, _weighted_median,
                                     basis_projection_sensitivity, check_onehot_data, class_sums, decode_dummies, lda_sensitivity,
                                     laplace_identity, moment_sensitivity, moment_sums,
                                     projection_sensitivity, statistics_distance)
from dpnb.stats import mean_ci


def onehot_data(n, n_numeric, sizes, rng):
    parts = [rng.random((n, n_numeric))] + [np.eye(s)[rng.integers(s, size=n)] for s in sizes]
    return np.hstack(parts)


def moments_change(x, xp):
    """L1 change of (sum x, triu sum xx^T) when row x is replaced by xp."""
    iu = np.triu_indices(x.size)
    return np.abs(x - xp).sum() + np.abs((np.outer(x, x) - np.outer(xp, xp))[iu]).sum()


def worst_pair(p1, sizes, t):
    x = np.concatenate([np.ones(p1)] + [np.eye(s)[0] for s in sizes])
    xp = np.concatenate([np.full(p1, t)] + [np.eye(s)[1] for s in sizes])
    return x, xp


# ----------------------------------------------------------------------------- sensitivities
@pytest.mark.parametrize("p", [1, 3, 10])
def test_numeric_moment_sensitivity_matches_paper(p):
    assert moment_sensitivity(p) == moment_sensitivity(p, formula="paper") == p + p * (p + 1) / 2


def test_categorical_moment_sensitivity_paper_formula_and_exact_value():
    p1, p2 = 5, 6
    assert moment_sensitivity(p1, p2, formula="paper") == (p1 + 2 * p2) + ((p1 + p2) * (p1 + p2 + 1) + p2 * (p2 + 1)) / 2
    sizes = [2] * p2
    t_star = (p2 - 1) / (p1 + 1)
    attained = moments_change(*worst_pair(p1, sizes, t_star))
    assert attained == pytest.approx(moment_sensitivity(p1, p2))
    assert attained > moment_sensitivity(p1, p2, formula="paper")  # the paper's formula is too small
    # paper's formula is the t = 0 case, and exact for a single categorical attribute
    assert moments_change(*worst_pair(p1, sizes, 0.0)) == pytest.approx(moment_sensitivity(p1, p2, formula="paper"))
    assert moment_sensitivity(4, 1) == moment_sensitivity(4, 1, formula="paper")


def test_exact_moment_sensitivity_is_never_exceeded_by_random_pairs():
    rng = np.random.default_rng(0)
    p1, sizes = 3, (2, 3, 2)
    bound = moment_sensitivity(p1, len(sizes))
    changes = [moments_change(onehot_data(1, p1, sizes, rng)[0], onehot_data(1, p1, sizes, rng)[0])
               for _ in range(3000)]
    assert max(changes) <= bound + 1e-12


def test_lda_sensitivity_values():
    p = 6
    assert lda_sensitivity(p, formula="paper") == 2 * p + p * (p + 1) / 2
    assert lda_sensitivity(p) == pytest.approx(p + p * (p + 1) / 2 + p / (2 * (p + 1)))
    assert lda_sensitivity(p) < lda_sensitivity(p, formula="paper")
    assert lda_sensitivity(5, 5) == pytest.approx(100.0) and lda_sensitivity(5, 5, formula="paper") == 90.0


def test_search_finds_pairs_beyond_the_papers_categorical_bound_but_not_beyond_exact():
    p1, sizes = 2, (2, 3, 2)
    relation = OneHotRows(p1, sizes)

    def query(X):
        s, m = moment_sums(X)
        return np.concatenate([s, m[np.triu_indices(X.shape[1])]])

    res = search_sensitivity(query, relation, 3, relation.width, norm=1, n_starts=6, n_steps=150,
                             claimed=moment_sensitivity(p1, len(sizes), formula="paper"), random_state=1)
    assert res.exceeds
    assert res.max_found <= moment_sensitivity(p1, len(sizes)) + 1e-9


def test_basis_projection_sensitivity_is_exact_and_below_lemma_2():
    rng = np.random.default_rng(23)
    U = np.linalg.qr(rng.standard_normal((7, 3)))[0]
    value, x, xp = basis_projection_sensitivity(U, return_pair=True)
    assert np.abs(U.T @ (x - xp)).sum() == pytest.approx(value)
    assert value <= projection_sensitivity(3, 7)
    # brute force over all 3^7 differences d = x - x' with vertices of the box
    grid = np.array(np.meshgrid(*[[-1.0, 0.0, 1.0]] * 7)).reshape(7, -1).T
    assert np.abs(grid @ U).sum(axis=1).max() == pytest.approx(value)
    with pytest.raises(ValueError, match="k <= 20"):
        basis_projection_sensitivity(np.zeros((30, 21)))


def test_projection_sensitivity():
    assert projection_sensitivity(4, 9) == 6.0
    with pytest.raises(ValueError, match="n_components"):
        projection_sensitivity(10, 9)


@pytest.mark.parametrize("call, match", [
    (lambda: moment_sensitivity(-1), "n_numeric must be an integer >= 0"),
    (lambda: moment_sensitivity(0, 0), "at least one attribute"),
    (lambda: lda_sensitivity(2.5), "n_numeric must be an integer >= 0"),
    (lambda: moment_sensitivity(3, formula="wrong"), "formula"),
])
def test_sensitivity_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ----------------------------------------------------------------------------- layout helpers
def test_check_onehot_data_and_decode():
    rng = np.random.default_rng(2)
    X = onehot_data(5, 2, (3,), rng)
    out, n_numeric = check_onehot_data(X, (3,))
    assert n_numeric == 2 and np.array_equal(out, X)
    noisy = np.array([[1.4, -0.2, 0.1, 0.7, 0.2]])
    assert np.array_equal(decode_dummies(noisy, (3,)), [[1.0, 0.0, 0.0, 1.0, 0.0]])


@pytest.mark.parametrize("X, sizes, match", [
    (np.array([[0.5, 1.2]]), (), "outside the declared bounds"),
    (np.array([[0.5, 1.0, 1.0]]), (2,), "one-hot"),
    (np.array([[0.5, 0.5, 0.5]]), (2,), "one-hot"),
    (np.array([[0.5, 1.0, 0.0]]), (1,), "integers >= 2"),
    (np.array([[0.5, 1.0, 0.0]]), (4,), "dummy columns"),
    (np.array([[np.nan, 1.0, 0.0]]), (2,), "NaN"),
])
def test_check_onehot_data_rejects(X, sizes, match):
    with pytest.raises(ValueError, match=match):
        check_onehot_data(X, sizes)


def test_onehot_rows_relation():
    rng = np.random.default_rng(3)
    rel = OneHotRows(2, (3,), n_classes=2)
    assert rel.width == 6
    row = rel.random_row(6, rng)
    assert row[2:5].sum() == 1 and row[-1] in (0, 1)
    proj = rel.project_row(np.array([1.5, -0.3, 0.2, 0.9, 0.1, 3.0]))
    assert np.array_equal(proj, [1.0, 0.0, 0.0, 1.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="width"):
        rel.random_row(5, rng)
    with pytest.raises(ValueError, match="n_classes"):
        OneHotRows(2, (), n_classes=1)


def test_class_sums_and_label_checks():
    X = np.array([[0.0, 1.0], [1.0, 1.0], [0.5, 0.0]])
    sums, counts, second = class_sums(X, [0, 1, 0], 2)
    assert np.allclose(sums, [[0.5, 1.0], [1.0, 1.0]]) and np.array_equal(counts, [2, 1])
    assert np.allclose(second, X.T @ X)
    with pytest.raises(ValueError, match="class labels"):
        class_sums(X, [0, 2, 0], 2)
    with pytest.raises(ValueError, match="labels but X"):
        class_sums(X, [0, 1], 2)


def test_weighted_median_minimises_the_l1_objective():
    rng = np.random.default_rng(4)
    for _ in range(50):
        pts, w = rng.normal(size=7), rng.random(7)
        z = _weighted_median(pts, w)
        grid = np.linspace(-4, 4, 4001)
        objective = lambda t: np.sum(w * np.abs(t - pts))  # noqa: E731
        assert objective(z) <= min(objective(t) for t in grid) + 1e-12


# ----------------------------------------------------------------------------- DP-PCA
def test_dppca_shapes_and_publish():
    rng = np.random.default_rng(5)
    X = onehot_data(200, 3, (2, 3), rng)
    pub = DPPCAPublisher(2, 1.0, group_sizes=(2, 3), random_state=0).fit(X)
    assert pub.components_.shape == (8, 2) and pub.scores_.shape == (200, 2)
    assert np.allclose(pub.components_.T @ pub.components_, np.eye(2))
    assert pub.moment_sensitivity_ == moment_sensitivity(3, 2)
    decoded = pub.publish(decode=True)
    assert decoded.shape == X.shape and np.all(decoded[:, 3:5].sum(axis=1) == 1)
    assert pub.publish().shape == X.shape


def test_dppca_is_reproducible_with_a_seed():
    X = onehot_data(50, 3, (), np.random.default_rng(6))
    a = DPPCAPublisher(2, 1.0, random_state=7).fit(X).publish()
    b = DPPCAPublisher(2, 1.0, random_state=7).fit(X).publish()
    assert np.array_equal(a, b)


@pytest.mark.parametrize("make, match", [
    (lambda X: DPPCAPublisher(2, 0.0), "epsilon"),
    (lambda X: DPPCAPublisher(9, 1.0).fit(X), "n_components"),
    (lambda X: DPPCAPublisher(2, 1.0).fit(X * 2), "outside the declared bounds"),
    (lambda X: DPPCAPublisher(2, 1.0).publish(), "fit"),
    (lambda X: DPPCAPublisher(2, 1.0, formula="tight"), "formula"),
    (lambda X: DPPCAPublisher(2, 1.0, random_state="x"), "random_state"),
])
def test_dppca_bad_input(make, match):
    X = onehot_data(20, 4, (), np.random.default_rng(8))
    with pytest.raises(ValueError, match=match):
        make(X)


def test_dppca_projection_noise_has_the_lemma_3_scale():
    """Per-entry variance of the projection noise is 2 b^2 with b = 2 sqrt(kp)/eps (95% CI)."""
    rng = np.random.default_rng(9)
    X = onehot_data(3000, 6, (), rng)
    k, eps = 3, 2.0
    pub = DPPCAPublisher(k, eps, random_state=10).fit(X)
    noise = pub.scores_ - (X - pub.mean_) @ pub.components_
    b = 2 * np.sqrt(k * 6) / eps
    _, low, high = mean_ci(np.ravel(noise) ** 2)
    assert low <= 2 * b**2 <= high


def test_dppca_mean_noise_has_the_lemma_1_scale():
    """n (mean_ - mean) is Lap(2s/eps): E|.| = 2s/eps (95% CI over coordinates and repetitions)."""
    rng = np.random.default_rng(11)
    X = onehot_data(40, 3, (), rng)
    eps = 1.0
    devs = np.concatenate([(DPPCAPublisher(1, eps, random_state=rng).fit(X).mean_ - X.mean(axis=0)) * len(X)
                           for _ in range(400)])
    _, low, high = mean_ci(np.abs(devs))
    assert low <= 2 * moment_sensitivity(3) / eps <= high


def test_laplace_identity_noise_scale_and_bounds():
    X = onehot_data(2000, 5, (), np.random.default_rng(12))
    noise = laplace_identity(X, 0.5, random_state=13) - X
    _, low, high = mean_ci(np.abs(np.ravel(noise)))
    assert low <= 5 / 0.5 <= high
    with pytest.raises(ValueError, match="outside"):
        laplace_identity(X - 1, 1.0)


# ----------------------------------------------------------------------------- DP-LDA
def test_dplda_statistics_and_sampler_output():
    rng = np.random.default_rng(14)
    X = onehot_data(300, 3, (3,), rng)
    y = (X[:, 0] > 0.5).astype(int)
    pub = DPLDAPublisher(1e6, group_sizes=(3,), random_state=15).fit(X, y)
    assert pub.sensitivity_ == lda_sensitivity(3, 1)
    sums, counts, second = class_sums(X, y, 2)
    assert np.array_equal(pub.class_counts_, counts)
    assert np.allclose(pub.means_, sums / counts[:, None], atol=1e-3)
    assert np.allclose(pub.second_moment_, second / len(y), atol=1e-3)
    Xs, ys = pub.sample()
    assert Xs.shape == (counts.sum(), 6) and np.array_equal(np.bincount(ys), counts)
    assert np.all((Xs >= 0) & (Xs <= 1)) and np.all(Xs[:, 3:].sum(axis=1) == 1)
    check_onehot_data(Xs, (3,))


def test_dplda_sampler_tracks_the_class_means_without_noise():
    """With negligible noise the sampled class means separate like the true ones."""
    rng = np.random.default_rng(16)
    X = onehot_data(400, 2, (), rng)
    y = (X[:, 0] > 0.5).astype(int)
    pub = DPLDAPublisher(1e6, random_state=17).fit(X, y)
    Xs, ys = pub.sample()
    sample_means = np.array([Xs[ys == c].mean(axis=0) for c in (0, 1)])
    true_means = np.array([X[y == c].mean(axis=0) for c in (0, 1)])
    assert np.sign(sample_means[1, 0] - sample_means[0, 0]) == np.sign(true_means[1, 0] - true_means[0, 0])
    assert statistics_distance(Xs, ys, true_means, X.T @ X / len(X)) < statistics_distance(
        np.full_like(Xs, 0.5), ys, true_means, X.T @ X / len(X))


def test_dplda_sampler_matches_level_frequencies_without_noise():
    """Dummy-only data: the greedy sampler reproduces each class's level counts (to one record)."""
    rng = np.random.default_rng(21)
    X = np.eye(3)[rng.choice(3, size=600, p=[0.2, 0.3, 0.5])]
    y = np.arange(600) % 2
    Xs, ys = DPLDAPublisher(1e6, group_sizes=(3,), random_state=22).fit(X, y).sample()
    for c in (0, 1):
        assert np.abs(Xs[ys == c].sum(axis=0) - X[y == c].sum(axis=0)).max() <= 1


def test_dplda_sum_noise_scale():
    """The class sums carry Lap(s/((1-f) eps)), s = lda_sensitivity: check E|error| via a 95% CI."""
    rng = np.random.default_rng(18)
    X = np.zeros((6, 1))
    y = np.array([0, 0, 0, 1, 1, 1])
    eps = 2.0
    pubs = [DPLDAPublisher(eps, random_state=rng).fit(X, y) for _ in range(2000)]
    scale = pubs[0].sensitivity_ / ((1 - 0.1) * eps)
    # The class sums are 0, so means_ * counts_ is pure Laplace noise of scale s/eps.
    errors = np.concatenate([np.ravel(q.means_ * q.class_counts_[:, None]) for q in pubs])
    _, low, high = mean_ci(np.abs(errors))
    assert low <= scale <= high


def test_dplda_count_noise_scale():
    """Class counts carry Lap(2/(f eps)): check E|count error| via a 95% CI (counts far from the clamp at 1)."""
    rng = np.random.default_rng(20)
    X = np.zeros((200, 1))
    y = np.arange(200) % 2
    eps, f = 2.0, 0.1
    errors = np.concatenate([DPLDAPublisher(eps, count_fraction=f, random_state=rng).fit(X, y).class_counts_ - 100
                             for _ in range(2000)])
    _, low, high = mean_ci(np.abs(errors))
    assert low <= 2 / (f * eps) <= high


def test_statistics_distance():
    X = np.array([[0.0, 1.0], [1.0, 0.0]])
    y = np.array([0, 1])
    assert statistics_distance(X, y, X, X.T @ X / 2) == 0.0
    with pytest.raises(ValueError, match="every class"):
        statistics_distance(X, np.array([0, 0]), X, X.T @ X / 2)


@pytest.mark.parametrize("make, match", [
    (lambda X, y: DPLDAPublisher(-1.0), "epsilon"),
    (lambda X, y: DPLDAPublisher(1.0, n_classes=1), "n_classes"),
    (lambda X, y: DPLDAPublisher(1.0, count_fraction=1.0), "count_fraction"),
    (lambda X, y: DPLDAPublisher(1.0).fit(X, np.zeros(len(X))), "at least one record"),
    (lambda X, y: DPLDAPublisher(1.0).fit(X, y[:-1]), "labels but X"),
    (lambda X, y: DPLDAPublisher(1.0).fit(X + 1, y), "outside the declared bounds"),
    (lambda X, y: DPLDAPublisher(1.0).sample(), "fit"),
])
def test_dplda_bad_input(make, match):
    X = onehot_data(10, 2, (), np.random.default_rng(19))
    y = np.arange(10) % 2
    with pytest.raises(ValueError, match=match):
        make(X, y)
