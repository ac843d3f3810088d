"""The data and the scores of the DP-PCA / DP-LDA reproduction (Jiang et al., Section 4).

:func:`prepare_adult` lays Adult out as Section 4.1 describes it: complete rows, the five numeric
attributes mapped to ``[0, 1]`` from their declared public bounds (never from the data's range),
then the dummy groups of five categorical attributes. :func:`score_lda_release` scores one DP-LDA
release as Figures 3 and 4 do (classifiers trained on it and tested on real rows, entropy and KL
against the training rows) and measures how far its statistics and the noisy ones are from the
training rows' exact statistics.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.metrics import roc_auc_score
from sklearn.tree import DecisionTreeClassifier

from dpnb.ground.datasets import load_adult, scale_to_box
from dpnb.ground.streams import sklearn_seed
from dpnb.ground.validation import check_integer
from dpnb.papers.component_analysis import attribute_entropy_kl, class_sums, statistics_distance

NUMERIC = ("age", "educational-num", "capital-gain", "capital-loss", "hours-per-week")
CATEGORICAL = ("workclass", "marital-status", "relationship", "race", "gender")
_MISSING = ("workclass", "occupation", "native-country")


@dataclass(frozen=True)
class AdultLayout:
    """Adult as Section 4.1 lays it out.

    Attributes
    ----------
    features : ndarray (n, 5 + sum(group_sizes))
        The numerics in ``[0, 1]``, then the dummy groups of ``CATEGORICAL``.
    labels : ndarray (n,)
        Income > 50K (0/1).
    group_sizes : list of int
        Levels of each categorical attribute (its ``?`` level dropped).
    numeric_bounds : list of (name, low, high)
        The declared public bounds the numerics were scaled from.
    """

    features: np.ndarray
    labels: np.ndarray
    group_sizes: list
    numeric_bounds: list


def prepare_adult() -> AdultLayout:
    """Section 4.1: complete rows (no ``?`` in workclass, occupation, native-country), numerics, dummy groups."""
    adult = load_adult(one_hot=True)
    names = adult.feature_names
    missing = adult.X[:, [names.index(f"{c}=?") for c in _MISSING]]
    rows = ~missing.any(axis=1)
    X = adult.X[rows]
    numeric = [names.index(c) for c in NUMERIC]
    low, high = (bound[numeric] for bound in adult.bounds)  # the declared public bounds, never the data's range
    blocks = [scale_to_box(X[:, numeric], (low, high), output_bounds=(0.0, 1.0))]
    sizes = []
    for c in CATEGORICAL:
        cols = [i for i, f in enumerate(names) if f.startswith(f"{c}=") and f != f"{c}=?"]
        blocks.append(X[:, cols])
        sizes.append(len(cols))
    bounds = [(c, float(a), float(b)) for c, a, b in zip(NUMERIC, low, high, strict=True)]
    return AdultLayout(np.hstack(blocks), adult.y[rows], sizes, bounds)


def entropy_tree(random_state) -> DecisionTreeClassifier:
    """The decision tree of Figure 3: entropy splits, at least 20 rows per leaf, seeded from ``random_state``."""
    return DecisionTreeClassifier(criterion="entropy", min_samples_leaf=20, random_state=sklearn_seed(random_state))


def score_lda_release(publisher, X_release, y_release, train, test, group_sizes, *, n_numeric: int, random_state):
    """Score one DP-LDA release: what Figures 3-4 report, and how close its statistics are to the true ones.

    Parameters
    ----------
    publisher : fitted DPLDAPublisher
        Its noisy statistics (``means_``, ``second_moment_``) are compared with the training rows' exact ones.
    X_release, y_release : the records and labels sampled from it.
    train, test : (X, y) pairs
        The real training rows the release was made from, and the held-out rows that score classifiers.
    group_sizes : sequence of int
        The dummy groups after the numerics (for entropy and KL).
    n_numeric : int
        Number of numeric columns (their mean variance is reported).
    random_state : Generator
        Seeds the decision tree.

    Returns
    -------
    dict
        ``LDA``, ``tree`` (test accuracies), ``AUC LDA``, ``AUC tree``, ``entropy``, ``KL``,
        ``sample distance`` (release statistics to the true ones), ``noisy distance`` (the noisy
        statistics to the true ones, L1 over means and the upper triangle), ``numeric variance``.
    """
    (Xtr, ytr), (Xte, yte) = train, test
    n_numeric = check_integer(n_numeric, "n_numeric", minimum=0)
    sums, counts, second = class_sums(Xtr, ytr, 2)
    means, second = sums / counts[:, None], second / len(ytr)
    noisy = np.abs(publisher.means_ - means).sum() + np.abs(np.triu(publisher.second_moment_ - second)).sum()
    entropy, kl = attribute_entropy_kl(X_release, y_release, Xtr, ytr, group_sizes)
    lda = LinearDiscriminantAnalysis().fit(X_release, y_release)
    tree = entropy_tree(random_state).fit(X_release, y_release)
    return {
        "LDA": lda.score(Xte, yte),
        "tree": tree.score(Xte, yte),
        "AUC LDA": roc_auc_score(yte, lda.decision_function(Xte)),
        "AUC tree": roc_auc_score(yte, tree.predict_proba(Xte)[:, 1]),
        "entropy": entropy,
        "KL": kl,
        "sample distance": statistics_distance(X_release, y_release, means, second),
        "noisy distance": noisy,
        "numeric variance": X_release[:, :n_numeric].var(axis=0).mean(),
    }
