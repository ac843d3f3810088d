"""The component-analysis chapter's room (Jiang et al.'s DP-PCA / DP-LDA): its sensitivity audits and its reproduction.

The sensitivity audits of Jiang et al.'s DP-PCA / DP-LDA: queries, neighbour relations, worst-case pairs.

Each audited statistic is a :class:`Case`: the query, the neighbour relation it is searched under,
the explicit worst-case record pair of the chapter's derivations
(:func:`~dpnb.papers.component_analysis.worst_case_rows`; under add/remove the worst record is removed)
and the derived exact sensitivity. :meth:`Case.audit_fields`
gives the fields a grid audit needs (a query, a bound and a worst-case pair per point ``(n, width)``),
so a notebook builds a :class:`dpnb.reporting.sensitivity_grid.AuditedBound` as
``AuditedBound(name, **case.audit_fields(rows, seed=seed, key=key))``.

Under add/remove (:class:`~dpnb.papers.component_analysis.AddRemoveRows`) a dataset carries a last
presence column; :func:`present` makes a query read it as 0/1 row weights, so its sums run over the
present rows.

The data and the scores of the DP-PCA / DP-LDA reproduction (Jiang et al., Section 4).

:func:`prepare_adult` lays Adult out as Section 4.1 describes it: complete rows, the five numeric
attributes mapped to ``[0, 1]`` from their declared public bounds (never from the data's range),
then the dummy groups of five categorical attributes. :func:`score_lda_release` scores one DP-LDA
release as Figures 3 and 4 do (classifiers trained on it and tested on real rows, entropy and KL
against the training rows) and measures how far its statistics and the noisy ones are from the
training rows' exact statistics.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.metrics import roc_auc_score
from sklearn.tree import DecisionTreeClassifier

from dpnb.ground.datasets import load_adult, scale_to_box
from dpnb.ground.streams import sklearn_seed, stream
from dpnb.ground.validation import check_integer
from dpnb.papers.component_analysis import OneHotRows, moment_sensitivity, moments_vector, worst_case_rows
from dpnb.papers.lda_publishing import (
    attribute_entropy_kl,
    class_sums,
    lda_sensitivity,
    lda_vector,
    statistics_distance,
)
from dpnb.privacy.audit import AddRemoveRows, LabelledBox, NeighbourRelation, ReplaceRowBox


def present(query: Callable) -> Callable:
    """``query`` on the rows an add/remove dataset (or a stack of them) marks present: its last column as weights."""
    if not callable(query):
        raise TypeError("query must be callable as query(X, weights=...)")
    return lambda Z: query(Z[..., :-1], weights=Z[..., -1])


def explicit_pair(relation: NeighbourRelation, x, x_prime, n_samples, rng) -> tuple[np.ndarray, np.ndarray]:
    """``n`` random rows of the relation's domain with row 0 set to ``x``, and the neighbour with row 0 -> ``x_prime``.

    Under add/remove ``x_prime`` carries presence 1 or 0 in its last entry (0: the record is removed).
    """
    if not isinstance(relation, NeighbourRelation):
        raise TypeError("relation must be a NeighbourRelation")
    n = check_integer(n_samples, "n_samples")
    x, x_prime = np.asarray(x, dtype=float), np.asarray(x_prime, dtype=float)
    if x.ndim != 1 or x.shape != x_prime.shape:
        raise ValueError(f"x and x_prime must be rows of one length, got shapes {x.shape} and {x_prime.shape}")
    X = np.stack([relation.random_row(x.size, rng) for _ in range(n)])
    X[0] = x
    return X, relation.neighbour(X, 0, x_prime)


@dataclass(frozen=True)
class Case:
    """One audited statistic: ``query`` searched under ``relation`` from the pair ``(x, x_prime)``.

    ``exact`` is the sensitivity the audit holds it to: the derived value under that relation (a
    pair or a search above it refutes the derivation).
    """

    query: Callable
    relation: NeighbourRelation
    x: np.ndarray
    x_prime: np.ndarray
    exact: float

    def pair(self, n_samples, rng) -> tuple[np.ndarray, np.ndarray]:
        """The worst-case record pair as datasets of ``n`` rows (:func:`explicit_pair`)."""
        return explicit_pair(self.relation, self.x, self.x_prime, n_samples, rng)

    def audit_fields(self, rows, *, seed, key) -> dict:
        """Fields of a grid audit at the points ``(n, width)``, ``n`` in ``rows``.

        The worst-case pair's other rows are drawn from ``stream(seed, (key, n))``, so the grid and
        the search see the same pair at a point.
        """
        points = [(check_integer(n, "rows"), self.x.size) for n in rows]
        if not points:
            raise ValueError("rows must list at least one dataset size")
        return {
            "relation": self.relation,
            "query": lambda n, width: self.query,
            "bound": lambda n, width: self.exact,
            "worst_pair": lambda n, width: self.pair(n, stream(seed, (key, n))),
            "grid": points,
            "search_points": points,
            "stacks": True,
        }


_BOX = ReplaceRowBox(0.0, 1.0)
_LABELLED = LabelledBox(0.0, 1.0, n_classes=2)


def _cases(query, inner, x, x_prime, exact_replace, exact_add_remove) -> dict[str, Case]:
    return {
        "replace": Case(query, inner, x, x_prime, float(exact_replace)),
        "add/remove": Case(
            present(query), AddRemoveRows(inner), np.append(x, 1.0), np.append(x, 0.0), float(exact_add_remove)
        ),
    }


def numeric_cases(n_numeric, *, lda: bool) -> dict[str, Case]:
    """Replace-one and add/remove cases for rows in ``[0, 1]^p``.

    DP-PCA's moments, or (``lda``) DP-LDA's class statistics with a class label per row.
    """
    p = check_integer(n_numeric, "n_numeric")
    query, inner = (lda_vector, _LABELLED) if lda else (moments_vector, _BOX)
    exact = lda_sensitivity if lda else moment_sensitivity
    x, x_prime = worst_case_rows(p, between_classes=lda)
    return _cases(query, inner, x, x_prime, exact(p), exact(p, neighbours="add-remove-row"))


def onehot_cases(n_numeric, group_sizes, *, lda: bool) -> dict[str, Case]:
    """The same for rows ``[numerics in [0, 1] | one-hot groups (| class label)]``."""
    p1 = check_integer(n_numeric, "n_numeric", minimum=0)
    sizes = tuple(group_sizes)
    query = lda_vector if lda else moments_vector
    exact = lda_sensitivity if lda else moment_sensitivity
    relation = OneHotRows(p1, sizes, n_classes=2 if lda else None)
    x, x_prime = worst_case_rows(p1, sizes, between_classes=lda)
    return _cases(
        query, relation, x, x_prime, exact(p1, len(sizes)), exact(p1, len(sizes), neighbours="add-remove-row")
    )


def _class_counts(Z, weights=None):
    return class_sums(Z[..., :-1], Z[..., -1], 2, weights)[1]


def class_count_cases() -> dict[str, Case]:
    """The noisy class counts of the corrected DP-LDA (one numeric attribute and a label): sensitivity 2 / 1."""
    x, x_prime = np.array([1.0, 0.0]), np.array([1.0, 1.0])
    return _cases(_class_counts, _LABELLED, x, x_prime, 2.0, 1.0)


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
