import numpy as np
import pytest

from dpnb.chapters.component_analysis import (
    CATEGORICAL,
    NUMERIC,
    entropy_tree,
    prepare_adult,
    score_lda_release,
)
from dpnb.papers.lda_publishing import DPLDAPublisher, sample_releases


@pytest.fixture(scope="module")
def adult():
    return prepare_adult()


def test_prepare_adult_layout(adult):
    X, y, sizes = adult.features, adult.labels, adult.group_sizes
    assert len(sizes) == len(CATEGORICAL) and X.shape == (len(y), len(NUMERIC) + sum(sizes))
    assert X.shape == (45222, 33)  # Section 4.1: complete rows; 5 numerics + 28 dummies
    numerics = X[:, : len(NUMERIC)]
    assert numerics.min() >= 0 and numerics.max() <= 1
    start = len(NUMERIC)
    for s in sizes:  # every row on exactly one level of each group
        np.testing.assert_array_equal(X[:, start : start + s].sum(axis=1), 1)
        start += s
    assert set(np.unique(y)) == {0, 1}
    assert [c for c, _, _ in adult.numeric_bounds] == list(NUMERIC)


def test_entropy_tree_is_seeded():
    a, b = entropy_tree(np.random.default_rng(3)), entropy_tree(np.random.default_rng(3))
    assert a.random_state == b.random_state and a.criterion == "entropy" and a.min_samples_leaf == 20


def test_score_lda_release(adult):
    rng = np.random.default_rng(0)
    idx = rng.permutation(len(adult.labels))
    tr, te = idx[:600], idx[600:900]
    train = (adult.features[tr], adult.labels[tr])
    test = (adult.features[te], adult.labels[te])
    pubs = [DPLDAPublisher(eps, group_sizes=adult.group_sizes, random_state=1).fit(*train) for eps in (np.inf, 0.5)]
    scores = [
        score_lda_release(
            pub, Xs, ys, train, test, adult.group_sizes, n_numeric=5, random_state=np.random.default_rng(2)
        )
        for pub, (Xs, ys) in zip(pubs, sample_releases(pubs), strict=True)
    ]
    keys = {
        "LDA",
        "tree",
        "AUC LDA",
        "AUC tree",
        "entropy",
        "KL",
        "sample distance",
        "noisy distance",
        "numeric variance",
    }
    assert all(set(s) == keys for s in scores)
    # no noise: the statistics equal the true ones up to the publisher's summation order
    assert scores[0]["noisy distance"] < 1e-3 < 100 * 1e-3 < scores[1]["noisy distance"]
    assert all(0 <= s["LDA"] <= 1 and 0 <= s["AUC tree"] <= 1 for s in scores)
    with pytest.raises(ValueError):
        score_lda_release(
            pubs[0],
            *sample_releases(pubs[:1])[0],
            train,
            test,
            adult.group_sizes,
            n_numeric=-1,
            random_state=np.random.default_rng(2),
        )
