import numpy as np
import pytest
from sklearn.metrics import silhouette_score

from dpnb.metrics import BLOCK_ROWS, silhouette_scores
from dpnb.stats import mean_ci


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
