"""Tests for dpnb.papers.component_analysis and dpnb.papers.lda_publishing (Jiang et al. 2013: DP-PCA and DP-LDA)."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import make_pipeline

from dpnb.numerics.stats import mean_ci
from dpnb.papers.component_analysis import (
    DPPCAPublisher,
    OneHotRows,
    basis_projection_sensitivity,
    component_laplace,
    decode_dummies,
    laplace_identity,
    moment_sensitivity,
    moments_vector,
    mse_per_record,
    projection_sensitivity,
    row_diameter,
    split_laplace,
    tight_basis,
    worst_case_rows,
)
from dpnb.papers.lda_publishing import (
    DPLDAPublisher,
    _grid_class_moments,
    _weighted_medians,
    attribute_entropy_kl,
    class_sums,
    lda_sensitivity,
    lda_vector,
    sample_releases,
    statistics_distance,
)
from dpnb.papers.onehot import check_onehot_data, checked_moments, moment_sums, record_contribution
from dpnb.privacy.audit import AddRemoveRows, search_sensitivity, search_sensitivity_batched
from dpnb.privacy.estimator import budget_total


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
    assert moment_sensitivity(p) == moment_sensitivity(p, noise_scale="paper") == p + p * (p + 1) / 2


def test_categorical_moment_sensitivity_paper_formula_and_exact_value():
    p1, p2 = 5, 6
    paper = (p1 + 2 * p2) + ((p1 + p2) * (p1 + p2 + 1) + p2 * (p2 + 1)) / 2
    assert moment_sensitivity(p1, p2, noise_scale="paper") == paper
    sizes = [2] * p2
    t_star = (p2 - 1) / (p1 + 1)
    attained = moments_change(*worst_pair(p1, sizes, t_star))
    assert attained == pytest.approx(moment_sensitivity(p1, p2))
    assert attained > moment_sensitivity(p1, p2, noise_scale="paper")  # the paper's formula is too small
    # paper's formula is the t = 0 case, and exact for a single categorical attribute
    assert moments_change(*worst_pair(p1, sizes, 0.0)) == pytest.approx(moment_sensitivity(p1, p2, noise_scale="paper"))
    assert moment_sensitivity(4, 1) == moment_sensitivity(4, 1, noise_scale="paper")


def test_exact_moment_sensitivity_is_never_exceeded_by_random_pairs():
    rng = np.random.default_rng(0)
    p1, sizes = 3, (2, 3, 2)
    bound = moment_sensitivity(p1, len(sizes))
    changes = [
        moments_change(onehot_data(1, p1, sizes, rng)[0], onehot_data(1, p1, sizes, rng)[0]) for _ in range(3000)
    ]
    assert max(changes) <= bound + 1e-12


def test_lda_sensitivity_values():
    p = 6
    assert lda_sensitivity(p, noise_scale="paper") == 2 * p + p * (p + 1) / 2
    assert lda_sensitivity(p) == pytest.approx(p + p * (p + 1) / 2 + p / (2 * (p + 1)))
    assert lda_sensitivity(p) < lda_sensitivity(p, noise_scale="paper")
    assert lda_sensitivity(5, 5) == pytest.approx(100.0) and lda_sensitivity(5, 5, noise_scale="paper") == 90.0


def test_search_finds_pairs_beyond_the_papers_categorical_bound_but_not_beyond_exact():
    p1, sizes = 2, (2, 3, 2)
    relation = OneHotRows(p1, sizes)

    def query(X):
        s, m = moment_sums(X)
        return np.concatenate([s, m[np.triu_indices(X.shape[1])]])

    res = search_sensitivity(
        query,
        relation,
        3,
        relation.width,
        norm=1,
        n_starts=6,
        n_steps=150,
        claimed=moment_sensitivity(p1, len(sizes), noise_scale="paper"),
        random_state=1,
    )
    assert res.exceeds
    assert res.max_found <= moment_sensitivity(p1, len(sizes)) + 1e-9


def test_basis_projection_sensitivity_is_exact_and_below_lemma_2():
    rng = np.random.default_rng(23)
    U = np.linalg.qr(rng.standard_normal((7, 3)))[0]
    value, x, xp = basis_projection_sensitivity(U.T, return_pair=True)
    assert np.abs(U.T @ (x - xp)).sum() == pytest.approx(value)
    assert value <= projection_sensitivity(3, 7)
    # brute force over all 3^7 differences d = x - x' with vertices of the box
    grid = np.array(np.meshgrid(*[[-1.0, 0.0, 1.0]] * 7)).reshape(7, -1).T
    assert np.abs(grid @ U).sum(axis=1).max() == pytest.approx(value)
    with pytest.raises(ValueError, match="k <= 20"):
        basis_projection_sensitivity(np.zeros((21, 30)))


def test_projection_sensitivity():
    assert projection_sensitivity(4, 9) == 6.0
    with pytest.raises(ValueError, match="n_components"):
        projection_sensitivity(10, 9)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: moment_sensitivity(-1), ValueError, "n_numeric must be an integer >= 0"),
        (lambda: moment_sensitivity(0, 0), ValueError, "at least one attribute"),
        (lambda: lda_sensitivity(2.5), TypeError, "n_numeric must be an integer >= 0"),
        (lambda: moment_sensitivity(3, noise_scale="wrong"), ValueError, "noise_scale"),
        (lambda: moment_sensitivity(3, noise_scale=1), TypeError, "noise_scale"),
    ],
)
def test_sensitivity_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


# ----------------------------------------------------------------------------- layout helpers
def test_check_onehot_data_and_decode():
    rng = np.random.default_rng(2)
    X = onehot_data(5, 2, (3,), rng)
    out, n_numeric = check_onehot_data(X, (3,))
    assert n_numeric == 2 and np.array_equal(out, X)
    noisy = np.array([[1.4, -0.2, 0.1, 0.7, 0.2]])
    assert np.array_equal(decode_dummies(noisy, (3,)), [[1.0, 0.0, 0.0, 1.0, 0.0]])


@pytest.mark.parametrize(
    "X, sizes, match",
    [
        (np.array([[0.5, 1.2]]), (), "outside the declared bounds"),
        (np.array([[0.5, 1.0, 1.0]]), (2,), "one-hot"),
        (np.array([[0.5, 0.5, 0.5]]), (2,), "one-hot"),
        (np.array([[0.5, 1.0, 0.0]]), (1,), "integers >= 2"),
        (np.array([[0.5, 1.0, 0.0]]), (4,), "dummy columns"),
        (np.array([[np.nan, 1.0, 0.0]]), (2,), "NaN"),
    ],
)
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
    for labels in (np.array([0, -1, 0]), np.array([0, 2, 0], dtype=np.uint8), [0.0, 0.5, 1.0]):  # integer arrays too
        with pytest.raises(ValueError, match="class labels in 0..1"):
            class_sums(X, labels, 2)
    assert np.array_equal(class_sums(X, np.array([0, 1, 0], dtype=np.int32), 2)[1], [2, 1])


def test_weighted_medians_minimise_the_l1_objective_row_by_row():
    rng = np.random.default_rng(4)
    pts, w = rng.normal(size=(50, 7)), rng.random((50, 7))
    w[:, 0] = 0.0  # zero weights never decide, even at infinity
    pts[:, 0] = np.inf
    z = _weighted_medians(pts, w)
    grid = np.linspace(-4, 4, 4001)
    for zi, p, wi in zip(z, pts[:, 1:], w[:, 1:], strict=True):
        objective = np.abs(grid[:, None] - p) @ wi
        assert np.sum(wi * np.abs(zi - p)) <= objective.min() + 1e-12


def test_checked_moments_match_the_plain_sums_and_check_every_chunk():
    rng = np.random.default_rng(40)
    X = onehot_data(1000, 3, (2, 3), rng)
    sum_x, sum_xx = checked_moments(X, 3, (2, 3), chunk=64)
    assert np.allclose(sum_x, X.sum(axis=0), rtol=1e-13) and np.allclose(sum_xx, X.T @ X, rtol=1e-13)
    bad = X.copy()
    bad[999, 0] = -0.1  # in the last chunk only
    with pytest.raises(ValueError, match="outside the declared bounds"):
        checked_moments(bad, 3, (2, 3), chunk=64)
    bad[999, 0], bad[998, 3:5] = 0.5, (1.0, 1.0)
    with pytest.raises(ValueError, match="one-hot"):
        checked_moments(bad, 3, (2, 3), chunk=64)
    X[5, 0] = 0.0
    minus_zero = X.copy()
    minus_zero[5, 0] = -0.0  # a float in [0, 1]: accepted
    assert np.array_equal(checked_moments(minus_zero, 3, (2, 3))[0], checked_moments(X, 3, (2, 3))[0])


# ----------------------------------------------------------------------------- DP-PCA
def test_dppca_shapes_and_publish():
    rng = np.random.default_rng(5)
    X = onehot_data(200, 3, (2, 3), rng)
    pub = DPPCAPublisher(2, 1.0, group_sizes=(2, 3), random_state=0).fit(X)
    assert pub.components_.shape == (2, 8) and pub.scores_.shape == (200, 2)
    assert np.allclose(pub.components_ @ pub.components_.T, np.eye(2))
    assert pub.sensitivity_ == {"moments": moment_sensitivity(3, 2), "projection": projection_sensitivity(2, 8)}
    decoded = pub.publish(decode=True)
    assert decoded.shape == X.shape and np.all(decoded[:, 3:5].sum(axis=1) == 1)
    assert pub.publish().shape == X.shape


def test_dppca_is_reproducible_with_a_seed():
    X = onehot_data(50, 3, (), np.random.default_rng(6))
    a = DPPCAPublisher(2, 1.0, random_state=7).fit(X).publish()
    b = DPPCAPublisher(2, 1.0, random_state=7).fit(X).publish()
    assert np.array_equal(a, b)


@pytest.mark.parametrize(
    "make, error, match",
    [
        (lambda X: DPPCAPublisher(2, 0.0).fit(X), ValueError, "epsilon"),
        (lambda X: DPPCAPublisher(2, "1").fit(X), TypeError, "epsilon"),
        (lambda X: DPPCAPublisher(9, 1.0).fit(X), ValueError, "n_components"),
        (lambda X: DPPCAPublisher(2.0, 1.0).fit(X), TypeError, "n_components"),
        (lambda X: DPPCAPublisher(2, 1.0).fit(X * 2), ValueError, "outside the declared bounds"),
        (lambda X: DPPCAPublisher(2, 1.0).publish(), NotFittedError, "fit"),
        (lambda X: DPPCAPublisher(2, 1.0).transform(X), NotFittedError, "fit"),
        (lambda X: DPPCAPublisher(2, 1.0).fit(X).transform(X[:, :3]), ValueError, "columns"),
        (lambda X: DPPCAPublisher(2, 1.0, noise_scale="tight").fit(X), ValueError, "noise_scale"),
        (lambda X: DPPCAPublisher(2, 1.0, tight_projection=1).fit(X), TypeError, "tight_projection"),
        (lambda X: DPPCAPublisher(2, 1.0, group_sizes=3).fit(X), TypeError, "group_sizes"),
        (lambda X: DPPCAPublisher(2, 1.0, random_state="x").fit(X), TypeError, "random_state"),
    ],
)
def test_dppca_bad_input(make, error, match):
    X = onehot_data(20, 4, (), np.random.default_rng(8))
    with pytest.raises(error, match=match):
        make(X)


def test_dppca_projection_noise_has_the_lemma_3_scale():
    """Per-entry variance of the projection noise is 2 b^2 with b = 2 sqrt(kp)/eps (95% CI)."""
    rng = np.random.default_rng(9)
    X = onehot_data(3000, 6, (), rng)
    k, eps = 3, 2.0
    pub = DPPCAPublisher(k, eps, random_state=10).fit(X)
    noise = pub.scores_ - pub.transform(X)
    b = 2 * np.sqrt(k * 6) / eps
    _, low, high = mean_ci(np.ravel(noise) ** 2)
    assert low <= 2 * b**2 <= high


def test_dppca_mean_noise_has_the_lemma_1_scale():
    """n (mean_ - mean) is Lap(2s/eps): E|.| = 2s/eps (95% CI over coordinates and repetitions)."""
    rng = np.random.default_rng(11)
    X = onehot_data(40, 3, (), rng)
    eps = 1.0
    devs = np.concatenate(
        [(DPPCAPublisher(1, eps, random_state=rng).fit(X).mean_ - X.mean(axis=0)) * len(X) for _ in range(400)]
    )
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
    assert pub.sensitivity_ == {"class_counts": 2.0, "sums": lda_sensitivity(3, 1)}
    sums, counts, second = class_sums(X, y, 2)
    assert np.array_equal(pub.class_counts_, counts)
    assert np.allclose(pub.means_, sums / counts[:, None], atol=1e-3)
    assert np.allclose(pub.second_moment_, second / len(y), atol=1e-3)
    Xs, ys = pub.sample()
    assert Xs.shape == (counts.sum(), 6) and np.array_equal(np.bincount(ys), counts)
    assert np.all((Xs >= 0) & (Xs <= 1)) and np.all(Xs[:, 3:].sum(axis=1) == 1)
    check_onehot_data(Xs, (3,))


def test_sample_releases_equals_one_release_at_a_time():
    """The lockstep sampler gives each release exactly its own sample(), and leaves each generator alike."""
    rng = np.random.default_rng(41)
    X = onehot_data(150, 2, (3, 2), rng)
    y = (X[:, 0] > 0.4).astype(int)
    gens = [np.random.default_rng(s) for s in range(5)]
    twins = [np.random.default_rng(s) for s in range(5)]
    eps = [0.3, 1.0, 5.0, np.inf, 0.3]
    batch = sample_releases(
        [DPLDAPublisher(e, group_sizes=(3, 2), random_state=g).fit(X, y) for e, g in zip(eps, gens)]
    )
    for e, g, twin, (Xs, ys) in zip(eps, gens, twins, batch, strict=True):
        Xo, yo = DPLDAPublisher(e, group_sizes=(3, 2), random_state=twin).fit(X, y).sample()
        assert np.array_equal(Xs, Xo) and np.array_equal(ys, yo)
        assert g.random() == twin.random()
    assert sample_releases([]) == []
    with pytest.raises(ValueError, match="share"):
        sample_releases([DPLDAPublisher(1.0, group_sizes=(3, 2)).fit(X, y), DPLDAPublisher(1.0).fit(X, y)])
    with pytest.raises(TypeError, match="DPLDAPublisher"):
        sample_releases([DPPCAPublisher(1, 1.0)])


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
        np.full_like(Xs, 0.5), ys, true_means, X.T @ X / len(X)
    )


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
    scale = pubs[0].sensitivity_["sums"] / ((1 - 0.1) * eps)
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
    errors = np.concatenate(
        [DPLDAPublisher(eps, count_fraction=f, random_state=rng).fit(X, y).class_counts_ - 100 for _ in range(2000)]
    )
    _, low, high = mean_ci(np.abs(errors))
    assert low <= 2 / (f * eps) <= high


def test_statistics_distance():
    X = np.array([[0.0, 1.0], [1.0, 0.0]])
    y = np.array([0, 1])
    assert statistics_distance(X, y, X, X.T @ X / 2) == 0.0
    with pytest.raises(ValueError, match="every class"):
        statistics_distance(X, np.array([0, 0]), X, X.T @ X / 2)


def test_dplda_releases_an_empty_class_and_bounded_counts():
    X = onehot_data(10, 2, (), np.random.default_rng(19))
    pub = DPLDAPublisher(1.0, random_state=0).fit(X, np.zeros(len(X)))  # class 1 is empty: no refusal
    assert pub.means_.shape == (2, X.shape[1]) and np.all(pub.class_counts_ >= 1)
    tiny = DPLDAPublisher(1e-6, random_state=0).fit(X, np.arange(10) % 2)
    assert np.all((tiny.class_counts_ >= 1) & (tiny.class_counts_ <= len(X)))  # noise of scale 2e7, clipped to [1, n]


@pytest.mark.parametrize(
    "make, error, match",
    [
        (lambda X, y: DPLDAPublisher(-1.0).fit(X, y), ValueError, "epsilon"),
        (lambda X, y: DPLDAPublisher(None).fit(X, y), TypeError, "epsilon"),
        (lambda X, y: DPLDAPublisher(1.0, n_classes=1).fit(X, y), ValueError, "n_classes"),
        (lambda X, y: DPLDAPublisher(1.0, n_classes=2.0).fit(X, y), TypeError, "n_classes"),
        (lambda X, y: DPLDAPublisher(1.0, count_fraction=1.0).fit(X, y), ValueError, "count_fraction"),
        (lambda X, y: DPLDAPublisher(1.0, count_fraction="a").fit(X, y), TypeError, "count_fraction"),
        (lambda X, y: DPLDAPublisher(1.0, noise_scale="exact").fit(X, y), ValueError, "noise_scale"),
        (lambda X, y: DPLDAPublisher(1.0).fit(X, y[:-1]), ValueError, "labels but X"),
        (lambda X, y: DPLDAPublisher(1.0).fit(X + 1, y), ValueError, "outside the declared bounds"),
        (lambda X, y: DPLDAPublisher(1.0).sample(), NotFittedError, "fit"),
    ],
)
def test_dplda_bad_input(make, error, match):
    X = onehot_data(10, 2, (), np.random.default_rng(19))
    y = np.arange(10) % 2
    with pytest.raises(error, match=match):
        make(X, y)


# ----------------------------------------------------------------------------- add/remove, baselines
def test_add_remove_relation_and_sensitivities():
    rel = AddRemoveRows(OneHotRows(2, (3,)))
    rng = np.random.default_rng(30)
    X = np.stack([rel.random_row(6, rng) for _ in range(3)])
    Xp = rel.neighbour(X, 0, rel.random_row(6, rng))
    assert np.all(X[:, -1] == 1) and np.array_equal(Xp[:, -1], [0, 1, 1]) and np.array_equal(Xp[:, :-1], X[:, :-1])
    # the presence column as row weights: the moments of the present rows
    assert np.allclose(moments_vector(Xp[:, :-1], weights=Xp[:, -1]), moments_vector(X[1:, :-1]))
    # one record's contribution: all numerics at 1 and one level per group
    x = np.array([1.0, 1.0, 0.0, 1.0, 0.0])
    assert np.abs(moments_vector(x[None])).sum() == record_contribution(2, 1) == 3 + 6
    assert moment_sensitivity(2, 1, neighbours="add-remove-row") == record_contribution(2, 1)
    assert lda_sensitivity(2, 1, neighbours="add-remove-row") == record_contribution(2, 1)
    assert moment_sensitivity(2, 1, neighbours="add-remove-row", noise_scale="paper") == moment_sensitivity(
        2, 1, noise_scale="paper"
    )
    with pytest.raises(ValueError, match=r"neighbours must be one of \('replace-row', 'add-remove-row'\)"):
        moment_sensitivity(2, 1, neighbours="swap")
    with pytest.raises(ValueError, match="neighbours"):  # the old name of the notion is refused
        lda_sensitivity(2, 1, neighbours="replace")
    with pytest.raises(ValueError, match="'change-attribute'"):  # a notion these sums do not cover
        moment_sensitivity(2, 1, neighbours="change-attribute")
    with pytest.raises(TypeError, match="inner"):
        AddRemoveRows("box")


def test_query_vectors():
    X = np.array([[0.0, 1.0], [1.0, 1.0]])
    assert np.array_equal(moments_vector(X), [1, 2, 1, 1, 2])
    Z = np.column_stack([X, [0, 1]])
    assert np.array_equal(lda_vector(Z), [0, 1, 1, 1, 1, 1, 2])
    assert moments_vector(np.zeros((0, 2))).tolist() == [0, 0, 0, 0, 0]


def test_row_diameter_and_tight_projection():
    assert row_diameter(5, 6) == 17.0 and row_diameter(5, 6, norm=2) == pytest.approx(np.sqrt(17))
    assert row_diameter(4) == 4.0
    assert projection_sensitivity(4, 35, diameter=np.sqrt(17)) == pytest.approx(np.sqrt(4 * 17))
    with pytest.raises(ValueError, match="diameter"):
        projection_sensitivity(2, 4, diameter=3.0)
    with pytest.raises(ValueError, match="norm"):
        row_diameter(1, 1, norm=3)
    X = onehot_data(30, 2, (3,), np.random.default_rng(31))
    pub = DPPCAPublisher(2, 1.0, group_sizes=(3,), tight_projection=True, random_state=0).fit(X)
    assert pub.sensitivity_["projection"] == pytest.approx(np.sqrt(2 * 4))


def test_laplace_identity_with_dummies_uses_p1_plus_2p2():
    X = onehot_data(3000, 2, (3, 2), np.random.default_rng(32))
    noise = laplace_identity(X, 1.0, group_sizes=(3, 2), random_state=33) - X
    _, low, high = mean_ci(np.abs(np.ravel(noise)))
    assert low <= 6.0 <= high
    with pytest.raises(ValueError, match="one-hot"):
        laplace_identity(np.full((2, 3), 0.5), 1.0, group_sizes=(2,))


def test_split_and_component_laplace():
    rng = np.random.default_rng(34)
    X = np.column_stack([rng.uniform(160, 190, 4000), rng.uniform(60, 100, 4000)])
    bounds = (np.array([160.0, 60.0]), np.array([190.0, 100.0]))
    noise = split_laplace(X, 2.0, bounds, random_state=35) - X
    _, low, high = mean_ci(np.abs(noise[:, 1]))
    assert low <= 2 * 40 / 2.0 <= high
    u = np.array([0.6, 0.8])
    center = np.array([175.0, 80.0])
    out = component_laplace(X, 1.0, u, center, bounds, random_state=36)
    assert np.allclose((out - center) @ np.array([0.8, -0.6]), 0)  # on the line through center along u
    t_noise = (out - center) @ u - (X - center) @ u
    _, low, high = mean_ci(np.abs(t_noise))
    assert low <= 0.6 * 30 + 0.8 * 40 <= high
    assert np.array_equal(component_laplace(X, np.inf, u, center, bounds), center + np.outer((X - center) @ u, u))
    assert mse_per_record(X + 1, X) == 2.0
    with pytest.raises(ValueError, match="unit"):
        component_laplace(X, 1.0, [1.0, 1.0], center, bounds)
    with pytest.raises(ValueError, match="outside"):
        split_laplace(X, 1.0, (0.0, 1.0))
    with pytest.raises(TypeError, match="bounds"):
        split_laplace(X, 1.0, (0.0, 1.0, 2.0))
    for bad in ((-np.inf, np.inf), (np.nan, 1.0)):
        for release in (split_laplace, lambda X_, e, b: component_laplace(X_, e, u, center, b)):
            with pytest.raises(ValueError, match="bounds must be finite"):
                release(X, 1.0, bad)


# ----------------------------------------------------------------------------- estimator contract
ESTIMATORS = [
    (DPPCAPublisher, {"n_components": 2, "epsilon": 1.0, "group_sizes": (3,)}, False),
    (DPLDAPublisher, {"epsilon": 1.0, "group_sizes": (3,)}, True),
]


def contract_data():
    rng = np.random.default_rng(40)
    X = onehot_data(60, 3, (3,), rng)
    return X, (X[:, 0] > 0.5).astype(int)


def fit(cls, params, supervised, **extra):
    X, y = contract_data()
    return cls(**params, **extra).fit(X, y) if supervised else cls(**params, **extra).fit(X)


def released(est):
    return est.scores_ if isinstance(est, DPPCAPublisher) else est.means_


@pytest.mark.parametrize("cls, params, supervised", ESTIMATORS)
def test_clone_get_set_params_and_repr(cls, params, supervised):
    est = cls(**params, random_state=3)
    copy = clone(est)
    assert copy.get_params() == est.get_params() and copy is not est
    copy.set_params(epsilon=2.0)
    assert copy.epsilon == 2.0 and est.epsilon == 1.0
    assert cls.__name__ in repr(est)


@pytest.mark.parametrize("cls, params, supervised", ESTIMATORS)
def test_refit_with_int_seed_is_identical(cls, params, supervised):
    est = fit(cls, params, supervised, random_state=5)
    first = released(est).copy()
    X, y = contract_data()
    est.fit(X, y) if supervised else est.fit(X)
    assert np.array_equal(first, released(est))
    if supervised:
        a = cls(**params, random_state=5).fit(X, y).sample()
        b = cls(**params, random_state=5).fit(X, y).sample()
        assert all(np.array_equal(u, v) for u, v in zip(a, b, strict=True))


@pytest.mark.parametrize("cls, params, supervised", ESTIMATORS)
@pytest.mark.parametrize(
    "epsilon, error",
    [(0.0, ValueError), (-1.0, ValueError), (float("nan"), ValueError), ("1", TypeError), (True, TypeError)],
)
def test_bad_epsilon_raises_in_fit_not_init(cls, params, supervised, epsilon, error):
    est = cls(**{**params, "epsilon": epsilon})
    with pytest.raises(error, match="epsilon"):
        fit(cls, {**params, "epsilon": epsilon}, supervised)
    assert est.epsilon is epsilon


@pytest.mark.parametrize("cls, params, supervised", ESTIMATORS)
def test_budget_sums_to_epsilon(cls, params, supervised):
    est = fit(cls, {**params, "epsilon": 0.7}, supervised, random_state=1)
    assert budget_total(est.budget_) == (pytest.approx(0.7), 0.0)
    assert set(est.budget_) == set(est.sensitivity_)
    assert est.n_features_in_ == 6


@pytest.mark.parametrize("cls, params, supervised", ESTIMATORS)
def test_not_fitted(cls, params, supervised):
    with pytest.raises(NotFittedError):
        cls(**params).publish() if not supervised else cls(**params).sample()


def test_infinite_epsilon_is_noiseless():
    X, y = contract_data()
    pca = DPPCAPublisher(2, np.inf, group_sizes=(3,), random_state=0).fit(X)
    assert np.allclose(pca.mean_, X.mean(axis=0))
    assert np.allclose(pca.scores_, pca.transform(X))
    lda = DPLDAPublisher(np.inf, group_sizes=(3,), random_state=0).fit(X, y)
    sums, counts, second = class_sums(X, y, 2)
    assert np.array_equal(lda.class_counts_, counts)
    assert np.allclose(lda.means_, sums / counts[:, None]) and np.allclose(lda.second_moment_, second / len(X))


def test_dppca_in_a_pipeline_trains_on_the_noisy_scores():
    X, y = contract_data()
    pipe = make_pipeline(DPPCAPublisher(2, 1.0, group_sizes=(3,), random_state=2), LinearDiscriminantAnalysis())
    pipe.fit(X, y)
    assert pipe.predict(X).shape == (60,)
    step = pipe[0]
    assert np.array_equal(step.fit_transform(X), step.scores_)
    assert np.allclose(step.inverse_transform(step.scores_), step.publish())


@pytest.mark.parametrize("p1, sizes", [(0, (2, 2)), (1, (2,)), (3, (2, 3, 2)), (5, (8, 7, 6, 5, 2)), (6, ())])
def test_worst_case_rows_attain_the_exact_sensitivities(p1, sizes):
    x, xp = worst_case_rows(p1, sizes)
    assert moments_change(x, xp) == pytest.approx(moment_sensitivity(p1, len(sizes)))
    z, zp = worst_case_rows(p1, sizes, between_classes=True)
    assert (z[-1], zp[-1]) == (0.0, 1.0)
    assert np.abs(lda_vector(z[None]) - lda_vector(zp[None])).sum() == pytest.approx(lda_sensitivity(p1, len(sizes)))


@pytest.mark.parametrize("k, p", [(1, 1), (1, 5), (3, 7), (5, 35)])
def test_tight_basis_attains_lemma_2(k, p):
    U = tight_basis(k, p, random_state=0)
    assert np.allclose(U @ U.T, np.eye(k))
    assert np.abs(U @ np.ones(p)).sum() == pytest.approx(projection_sensitivity(k, p))
    assert basis_projection_sensitivity(U) == pytest.approx(projection_sensitivity(k, p))


def test_attribute_entropy_kl():
    rng = np.random.default_rng(50)
    X = onehot_data(4000, 1, (4,), rng)
    y = rng.integers(2, size=4000)
    entropy, kl = attribute_entropy_kl(X, y, X, y, (4,))
    assert kl == 0.0
    # uniform numeric (10 bins), uniform 4 levels, balanced label: log2 of 10, 4 and 2, up to sampling error
    assert entropy == pytest.approx(np.mean(np.log2([10, 4, 2])), abs=0.01)
    constant = np.column_stack([np.full(4000, 0.05), np.tile(np.eye(4)[0], (4000, 1))])
    e2, kl2 = attribute_entropy_kl(constant, np.zeros(4000, int), X, y, (4,))
    assert e2 < 0.05 and kl2 > 1.0
    with pytest.raises(ValueError, match="class labels"):
        attribute_entropy_kl(X, y + 1, X, y, (4,))


def test_grid_class_moments_are_exact_in_any_row_order():
    from fractions import Fraction

    rng = np.random.default_rng(60)
    X = onehot_data(300, 4, (3,), rng)
    X[:5, :4] = [[1.0, 0.0, 2.0**-17, 1 - 2.0**-18], [0.3, 0.7, 3 * 2.0**-17, 0.5]] + [[0.1, 0.2, 0.3, 0.4]] * 3
    y = rng.integers(2, size=300)
    sums, counts, second = _grid_class_moments(X, y, 2, 4, (3,))
    # the same statistics in exact rational arithmetic on the rounded records (round half to even)
    grid = [[Fraction(round(Fraction(v) * 2**16), 2**16) for v in row] for row in X.tolist()]
    assert grid[0][2] == 0 and grid[0][3] == 1 and grid[1][2] == Fraction(2, 2**16)  # ties to even
    exact_sums = [[sum(r[j] for r, c in zip(grid, y) if c == k) for j in range(7)] for k in (0, 1)]
    exact_second = [[sum(r[i] * r[j] for r in grid) for j in range(7)] for i in range(7)]
    assert sums.tolist() == [[float(v) for v in row] for row in exact_sums]  # float(v) is v itself: exact
    assert second.tolist() == [[float(v) for v in row] for row in exact_second]
    assert np.all(np.abs(sums - class_sums(X, y, 2)[0]) <= 300 * 2.0**-17)
    assert np.array_equal(counts, np.bincount(y)) and counts.dtype == float
    for chunk, order in ((7, rng.permutation(300)), (300, np.arange(300)[::-1]), (1, rng.permutation(300))):
        other = _grid_class_moments(X[order], y[order], 2, 4, (3,), chunk=chunk)
        assert np.array_equal(other[0], sums) and np.array_equal(other[2], second)  # bit-identical
        assert np.array_equal(other[1], counts)
    fit = DPLDAPublisher(np.inf, group_sizes=(3,)).fit(X, y)
    assert np.array_equal(fit.second_moment_, second / 300)  # the fit releases these sums
    assert np.array_equal(fit.means_, sums / np.bincount(y)[:, None])


# ----------------------------------------------------------------------------- stacks of datasets, row-stack moves
def test_queries_on_stacks_match_per_dataset_queries():
    rng = np.random.default_rng(70)
    Z = np.column_stack([onehot_data(24, 2, (3,), rng), rng.integers(2, size=24)]).reshape(4, 6, 6)
    w = (rng.random((4, 6)) < 0.7).astype(float)
    X, y = Z[..., :-1], Z[..., -1]
    for k in range(4):
        present = w[k] == 1
        assert np.allclose(moments_vector(X, weights=w)[k], moments_vector(X[k][present]))
        assert np.allclose(moments_vector(X)[k], moments_vector(X[k]))
        assert np.allclose(lda_vector(Z, weights=w)[k], lda_vector(Z[k][present]))
        assert np.allclose(lda_vector(Z)[k], lda_vector(Z[k]))
        for stacked, single in zip(class_sums(X, y, 2, w), class_sums(X[k][present], y[k][present], 2), strict=True):
            assert np.allclose(stacked[k], single)
    sums, second = moment_sums(X[0], weights=np.full(6, 0.5))  # general weights: weighted sums
    assert np.allclose(sums, X[0].sum(axis=0) / 2) and np.allclose(second, X[0].T @ X[0] / 2)
    assert moments_vector(np.zeros((3, 0, 2))).shape == (3, 5) and lda_vector(np.zeros((2, 0, 3))).shape == (2, 7)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: moments_vector(np.zeros(3)), "stack of datasets"),
        (lambda: moments_vector(np.zeros((2, 2, 2, 2))), "stack of datasets"),
        (lambda: moments_vector(np.zeros((2, 3)), weights=np.ones(3)), "one weight per row"),
        (lambda: moments_vector(np.zeros((2, 3, 2)), weights=np.ones(3)), "one weight per row"),
        (lambda: moments_vector(np.zeros((2, 3)), weights=[1.0, np.nan]), "weights contains NaN"),
        (lambda: lda_vector(np.zeros((2, 3, 3)), weights=np.ones((3, 2))), "one weight per row"),
        (lambda: lda_vector(np.full((2, 3, 3), 2.0)), "class labels"),
        (lambda: class_sums(np.zeros((2, 3, 2)), np.zeros(3), 2), "y must be 2-dimensional"),
        (lambda: class_sums(np.zeros((2, 3, 2)), np.zeros((3, 2)), 2), "labels but X"),
    ],
)
def test_stacked_queries_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("relation", [OneHotRows(2, (3, 2), n_classes=3), AddRemoveRows(OneHotRows(1, (4,)))])
def test_row_stack_moves_match_the_one_row_moves(relation):
    rng = np.random.default_rng(71)
    d = 8 if isinstance(relation, OneHotRows) else 6
    noisy = rng.standard_normal((40, d)) * 2
    assert np.array_equal(relation.project_rows(noisy), [relation.project_row(r) for r in noisy])
    rows = relation.random_rows(400, d, rng)
    assert np.array_equal(relation.project_rows(rows), rows)  # random rows lie in the domain
    moved = relation.perturb_rows(rows, rng, np.full(400, 0.5))
    assert np.array_equal(relation.project_rows(moved), moved) and not np.array_equal(moved, rows)
    numeric = rows[:, :2] if isinstance(relation, OneHotRows) else rows[:, :1]
    assert 0.4 < np.mean(np.all((numeric == 0) | (numeric == 1), axis=1)) < 0.6  # as random_row: half at vertices
    with pytest.raises(ValueError, match="width"):
        relation.random_rows(3, d + 1, rng)


def test_add_remove_neighbours_mark_the_row_absent_in_every_dataset():
    rel = AddRemoveRows(OneHotRows(2, (3,)))
    rng = np.random.default_rng(72)
    X = rel.random_rows(12, 6, rng).reshape(3, 4, 6)
    Xp = rel.neighbours(X, 2, rel.random_rows(3, 6, rng))
    assert np.array_equal(Xp[:, 2, -1], np.zeros(3)) and np.all(X[..., -1] == 1)
    assert np.array_equal(np.delete(Xp, 2, axis=1), np.delete(X, 2, axis=1)) and np.array_equal(
        Xp[..., :-1], X[..., :-1]
    )


def test_batched_searches_reach_the_exact_sensitivities():
    sizes, rng = (3, 2), np.random.default_rng(73)
    present = lambda Z: lda_vector(Z[..., :-1], weights=Z[..., -1])  # noqa: E731
    for query, relation, exact in (
        (lda_vector, OneHotRows(1, sizes, n_classes=2), lda_sensitivity(1, 2)),
        (present, AddRemoveRows(OneHotRows(1, sizes, n_classes=2)), lda_sensitivity(1, 2, neighbours="add-remove-row")),
    ):
        res = search_sensitivity_batched(
            query,
            relation,
            3,
            7 + isinstance(relation, AddRemoveRows),
            norm=1,
            n_steps=150,
            random_state=rng,
        )
        assert exact * 0.9 <= res.max_found <= exact * (1 + 1e-12)
        assert np.isclose(np.abs(query(res.X) - query(res.X_prime)).sum(), res.max_found)


def test_dp_pca_and_dp_lda_share_the_layout_module_and_import_neither_each_other():
    from dpnb.papers import component_analysis, lda_publishing, onehot

    assert lda_publishing.NOISE_SCALES is component_analysis.NOISE_SCALES is onehot.NOISE_SCALES
    assert not hasattr(component_analysis, "DPLDAPublisher")  # no re-export: DP-LDA is imported from its own module
    with pytest.raises(ImportError):
        from dpnb.papers.component_analysis import AddRemoveRows  # noqa: F401  (it moved to dpnb.privacy.audit)


@pytest.mark.parametrize("epsilon", [5e-324, 1e-290, 1e-200])
def test_dppca_refuses_an_epsilon_whose_covariance_could_overflow_naming_it(epsilon):
    """The public worst case (1 + 1024 scale / n) + its square must stay below 1e300: 'A contains NaN or
    infinite values' from eigh before, or ZeroDivisionError when epsilon / 2 underflowed."""
    X = np.random.default_rng(0).uniform(size=(8, 3))
    with pytest.raises(ValueError, match="epsilon=.* is too small for DP-PCA"):
        DPPCAPublisher(2, epsilon, random_state=0).fit(X)
    assert np.all(np.isfinite(DPPCAPublisher(2, 1e-100, random_state=0).fit(X).publish()))
