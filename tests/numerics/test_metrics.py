import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.metrics import silhouette_score

from dpnb.ground.streams import sklearn_seed
from dpnb.numerics.metrics import BLOCK_ROWS, best_silhouette, silhouette_scores
from dpnb.numerics.stats import mean_ci


@pytest.mark.parametrize("n_features", [1, 3, 40])
def test_silhouette_scores_equal_scikit_learn(n_features):
    rng = np.random.default_rng(n_features)
    Z = rng.standard_normal((BLOCK_ROWS * 2 + 37, n_features))  # several distance blocks, the last one partial
    labelings = [rng.integers(0, k, len(Z)) * 7 for k in (2, 3, 5)]  # arbitrary label values
    labelings.append(np.r_[0, np.ones(len(Z) - 1, dtype=int)])  # a singleton cluster scores 0
    expected = [silhouette_score(Z, labels) for labels in labelings]
    np.testing.assert_allclose(silhouette_scores(Z, labelings), expected, rtol=0, atol=1e-10)


def test_silhouette_singletons_duplicates_and_bad_labels():
    Z = np.vstack([np.zeros((3, 2)), np.ones((3, 2))])
    labels = [0, 0, 0, 1, 1, 2]  # duplicated points (a = 0) and a singleton cluster
    assert silhouette_scores(Z, [labels])[0] == pytest.approx(silhouette_score(Z, labels))
    with pytest.raises(ValueError, match="distinct values"):
        silhouette_scores(Z, [np.zeros(6)])
    with pytest.raises(ValueError, match="one entry per row"):
        silhouette_scores(Z, [[0, 1]])
    with pytest.raises(ValueError, match="n_points"):
        silhouette_scores(Z, [labels], n_points=0)
    with pytest.raises(TypeError, match="n_points"):
        silhouette_scores(Z, [labels], n_points=2.5)
    with pytest.raises(ValueError, match="finite"):
        silhouette_scores(np.full((6, 2), np.nan), [labels])


def test_silhouette_subset_is_unbiased_and_draws_only_when_subsampling():
    rng = np.random.default_rng(0)
    Z = np.vstack([rng.normal(c, 1.0, size=(200, 2)) for c in (0.0, 3.0)])
    labels = np.repeat([0, 1], 200)
    full = silhouette_scores(Z, [labels])[0]
    subsets = [silhouette_scores(Z, [labels], n_points=40, random_state=seed)[0] for seed in range(400)]
    mean, lo, hi = mean_ci(subsets, 0.999)
    assert lo <= full <= hi
    assert np.std(subsets) > 0  # the subsets differ: the estimate is not the full score by accident
    gen = np.random.default_rng(5)
    state = gen.bit_generator.state
    assert silhouette_scores(Z, [labels], n_points=400, random_state=gen)[0] == full
    assert gen.bit_generator.state == state  # every point: nothing drawn


def _three_blobs(seed=0, n=90):
    rng = np.random.default_rng(seed)
    return np.vstack([rng.normal(c, 0.5, size=(n // 3, 2)) for c in ((0, 0), (4, 0), (0, 4))])


@pytest.mark.parametrize(("n_clusters", "n_init", "n_points"), [((2, 3, 4, 5), 1, 40), ((10,), 1, None), ((3,), 2, 30)])
def test_best_silhouette_equals_the_manual_computation(n_clusters, n_init, n_points):
    Z = _three_blobs()
    manual_rng, helper_rng = np.random.default_rng(11), np.random.default_rng(11)
    labelings = []
    for k in n_clusters:  # the documented draw order: one seed and one K-means per k, then the scores
        labelings.append(KMeans(k, n_init=n_init, random_state=sklearn_seed(manual_rng)).fit_predict(Z))
    expected = max(silhouette_scores(Z, labelings, n_points=n_points, random_state=manual_rng))
    got = best_silhouette(Z, n_clusters, n_init=n_init, n_points=n_points, random_state=helper_rng)
    assert isinstance(got, float) and got == expected
    assert helper_rng.bit_generator.state == manual_rng.bit_generator.state  # the same draws, no more
    assert best_silhouette(Z, list(n_clusters), n_init=n_init, n_points=n_points, random_state=11) == expected


def test_best_silhouette_finds_the_true_clusters():
    Z = _three_blobs(n=150)
    best = best_silhouette(Z, (2, 3, 4, 5), random_state=np.random.default_rng(0))
    truth = silhouette_score(Z, np.repeat([0, 1, 2], 50))
    assert best == pytest.approx(truth, abs=1e-12)  # K = 3 recovers the blobs and scores best


@pytest.mark.parametrize("Z", [np.full((20, 3), 0.25), np.zeros((20, 0))], ids=["all-rows-equal", "zero-columns"])
def test_best_silhouette_is_none_without_cluster_structure_and_draws_nothing(Z):
    rng = np.random.default_rng(3)
    state = rng.bit_generator.state
    assert best_silhouette(Z, (2, 3, 4, 5), n_points=5, random_state=rng) is None
    assert rng.bit_generator.state == state


def test_best_silhouette_rejects_bad_input():
    Z, rng = _three_blobs(), np.random.default_rng(0)
    with pytest.raises(TypeError, match="n_clusters must be a sequence"):
        best_silhouette(Z, 3, random_state=rng)
    with pytest.raises(TypeError, match="n_clusters must be a sequence"):
        best_silhouette(Z, np.int64(3), random_state=rng)
    with pytest.raises(TypeError, match="n_clusters must hold integers"):
        best_silhouette(Z, (2, 3.0), random_state=rng)
    with pytest.raises(TypeError, match="n_clusters must hold integers"):
        best_silhouette(Z, (True, 3), random_state=rng)
    with pytest.raises(ValueError, match="n_clusters is empty"):
        best_silhouette(Z, (), random_state=rng)
    with pytest.raises(ValueError, match=r"2\.\.89"):
        best_silhouette(Z, (1, 2), random_state=rng)
    with pytest.raises(ValueError, match=r"2\.\.89"):
        best_silhouette(Z, (2, 90), random_state=rng)
    with pytest.raises(ValueError, match="n_init"):
        best_silhouette(Z, (2,), n_init=0, random_state=rng)
    with pytest.raises(TypeError, match="n_init"):
        best_silhouette(Z, (2,), n_init=1.5, random_state=rng)
    with pytest.raises(ValueError, match="n_points"):
        best_silhouette(Z, (2,), n_points=0, random_state=rng)
    with pytest.raises(TypeError, match="n_points"):
        best_silhouette(Z, (2,), n_points=2.5, random_state=rng)
    with pytest.raises(TypeError, match="random_state"):
        best_silhouette(Z, (2,), random_state="seed")
    with pytest.raises(TypeError, match="random_state"):
        best_silhouette(Z, (2,))  # the stream is required: no hidden fresh entropy
    with pytest.raises(ValueError, match="2-dimensional"):
        best_silhouette(Z[:, 0], (2,), random_state=rng)
    with pytest.raises(ValueError, match="finite"):
        best_silhouette(np.full((6, 2), np.nan), (2,), random_state=rng)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match="n_points"):  # all-equal rows are validated before anything is returned
        best_silhouette(np.ones((6, 2)), (2,), n_points=0, random_state=rng)
    assert rng.bit_generator.state == state
