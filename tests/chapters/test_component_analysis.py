import numpy as np
import pytest

from dpnb.chapters.component_analysis import (
    CATEGORICAL,
    NUMERIC,
    Case,
    class_count_cases,
    entropy_tree,
    explicit_pair,
    numeric_cases,
    onehot_cases,
    prepare_adult,
    present,
    score_lda_release,
)
from dpnb.papers.component_analysis import moment_sensitivity, moments_vector
from dpnb.papers.lda_publishing import DPLDAPublisher, lda_sensitivity, sample_releases
from dpnb.privacy.audit import ReplaceRowBox


def _change(case, n, seed=0):
    X, X_prime = case.pair(n, np.random.default_rng(seed))
    return float(np.abs(case.query(X) - case.query(X_prime)).sum())


@pytest.mark.parametrize("lda", [False, True])
@pytest.mark.parametrize("p", [1, 2, 6])
def test_numeric_pairs_attain_the_exact_sensitivity(p, lda):
    cases = numeric_cases(p, lda=lda)
    assert set(cases) == {"replace", "add/remove"}
    exact = (lda_sensitivity if lda else moment_sensitivity)(p)
    assert cases["replace"].exact == exact
    for n in (1, 3):
        for case in cases.values():
            assert _change(case, n) == pytest.approx(case.exact, rel=1e-12)


@pytest.mark.parametrize("lda", [False, True])
def test_onehot_pairs_attain_the_exact_sensitivity(lda):
    cases = onehot_cases(2, (3, 4, 2), lda=lda)
    exact = (lda_sensitivity if lda else moment_sensitivity)(2, 3)
    assert cases["replace"].exact == exact
    assert _change(cases["replace"], 3) == pytest.approx(exact, rel=1e-12)
    # the paper's value is too small on this layout (p1 >= 1, p2 >= 2) for DP-PCA
    if not lda:
        assert exact > moment_sensitivity(2, 3, noise_scale="paper")


def test_class_counts():
    cases = class_count_cases()
    assert (cases["replace"].exact, cases["add/remove"].exact) == (2.0, 1.0)
    assert _change(cases["replace"], 3) == pytest.approx(2.0)
    assert _change(cases["add/remove"], 3) == pytest.approx(1.0)


def test_add_remove_pair_removes_row0():
    case = numeric_cases(3, lda=False)["add/remove"]
    X, X_prime = case.pair(4, np.random.default_rng(1))
    assert X[:, -1].tolist() == [1, 1, 1, 1] and X_prime[:, -1].tolist() == [0, 1, 1, 1]
    np.testing.assert_array_equal(X[:, :-1], X_prime[:, :-1])


def test_present_reads_the_presence_column():
    Z = np.array([[1.0, 2.0, 1.0], [3.0, 4.0, 0.0]])
    np.testing.assert_allclose(present(moments_vector)(Z), moments_vector(Z[:1, :-1]))
    stack = np.stack([Z, Z])
    assert present(moments_vector)(stack).shape[0] == 2
    with pytest.raises(TypeError):
        present(3)


def test_audit_fields_are_deterministic_per_point():
    case = numeric_cases(2, lda=False)["replace"]
    fields = case.audit_fields([1, 3], seed=5, key="k")
    assert fields["grid"] == [(1, 2), (3, 2)] == fields["search_points"]
    assert fields["bound"](3, 2) == case.exact and fields["query"](3, 2) is case.query and fields["stacks"]
    a, b = fields["worst_pair"](3, 2), fields["worst_pair"](3, 2)
    np.testing.assert_array_equal(a[0], b[0])
    assert a[0].shape == (3, 2)
    with pytest.raises(ValueError):
        case.audit_fields([], seed=5, key="k")


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: explicit_pair("box", np.ones(2), np.zeros(2), 2, np.random.default_rng(0)), TypeError),
        (lambda: explicit_pair(ReplaceRowBox(0, 1), np.ones(2), np.zeros(3), 2, np.random.default_rng(0)), ValueError),
        (lambda: explicit_pair(ReplaceRowBox(0, 1), np.ones(2), np.zeros(2), 0, np.random.default_rng(0)), ValueError),
        (lambda: numeric_cases(0, lda=False), ValueError),
        (lambda: onehot_cases(-1, (2,), lda=False), ValueError),
    ],
)
def test_bad_input(call, error):
    with pytest.raises(error):
        call()


def test_case_is_frozen():
    case = Case(moments_vector, ReplaceRowBox(0, 1), np.ones(2), np.zeros(2), 5.0)
    with pytest.raises(AttributeError):
        case.exact = 1.0


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
