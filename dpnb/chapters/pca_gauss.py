"""The PCA-Gauss chapter's room: its worst-case pairs and audited queries, and its reproduction runs.

Worst-case neighbouring pairs and the audited queries of the PCA-Gauss chapter.

Chanyaswad, Liu, Mittal 2017 (arXiv 1709.00054). Each sensitivity derivation of
``notebooks/pca_gauss.md`` names a pair of replace-one neighbours that attains (or refutes) its
bound; this module builds those pairs and the queries they are evaluated on, so that the
chapter's grid audit (:mod:`dpnb.reporting.sensitivity_grid`) and its tests use the same objects.

Conventions: rows lie in ``[-a, a]^M`` with the public bound ``a``; a pair ``(X, X_prime)``
differs in row 0 only; a labelled dataset carries its label (class ``0``/``1``, or a regression
label in ``[-a, a]``) in the last column.

The PCA-Gauss chapter's reproduction runs: bases by source, method sweeps over K, task metrics.

Chanyaswad, Liu, Mittal 2017 (arXiv 1709.00054), Section VIII. Every method releases a Gaussian
model of data in the public box ``[-a, a]^M`` at a total budget ``epsilon``: PCA-Gauss with an
independently derived basis from one of three sources (PubPCA, LapPCA, AGPCA), the paper's
adaptation of Blocki et al. (a Gaussian random projection with the same model), Liu's model
without reduction (the identity basis), and RON-Gauss (:mod:`dpnb.papers.ron_gauss`). A
LapPCA/AGPCA basis spends ``pca_fraction * epsilon`` and leaves the rest to the model (serial
composition; AGPCA adds ``delta``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from sklearn.linear_model import Ridge
from sklearn.metrics import accuracy_score, balanced_accuracy_score
from sklearn.svm import LinearSVC

from dpnb.ground.streams import sklearn_seed
from dpnb.ground.validation import (
    check_array,
    check_choice,
    check_delta,
    check_epsilon,
    check_fraction,
    check_integer,
    check_positive,
    check_random_state,
)
from dpnb.numerics.linalg import top_eigenvectors, triangle
from dpnb.papers.component_analysis import tight_basis
from dpnb.papers.dppro import gaussian_projection
from dpnb.papers.pca_gauss import PCAGauss, analyze_gauss_pca, lap_pca, public_pca, reduce_features
from dpnb.papers.ron_gauss import RONGauss
from dpnb.privacy.audit import replace_row

JOINT_PARTS = ("counts", "sums", "second_moments")


def sign_rows(n_features: int, a: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Two orthogonal rows with every entry ``+-a`` (``n_features`` even): ``a 1`` and ``a (1, .., 1, -1, .., -1)``.

    Both have ``||x||_2^2 = M a^2``, the largest a row of ``[-a, a]^M`` can have.
    """
    m = _even(n_features, "n_features")
    a = check_positive(a, "a")
    u = np.full(m, a)
    w = u.copy()
    w[m // 2 :] = -a
    return u, w


def reduced_query(n_features: int, n_components: int):
    """Proposition 2's query ``X -> X W* / sqrt(M)`` with an attaining basis ``W*``.

    ``W*`` has orthonormal columns with ``W*^T 1 = sqrt(M / K) 1`` (an orthonormal basis containing
    ``1 / sqrt(M)``, rotated by the Householder map ``e_1 -> 1 / sqrt(K)``:
    :func:`dpnb.papers.component_analysis.tight_basis`, the same construction for Jiang et al.'s
    Lemma 2, completed from a fixed public seed), so the pair ``a 1`` vs ``-a 1`` moves the query
    by exactly ``2 a sqrt(K)`` in L1.
    """
    W = tight_basis(n_components, n_features, random_state=0).T
    return lambda X: X @ W / np.sqrt(n_features)


def same_data_basis(X, n_components: int) -> np.ndarray:
    """Top-``K`` eigenvectors of the second moment ``X^T X / N`` (Algorithm 1's basis, sign-fixed)."""
    X = np.asarray(X, dtype=float)
    return top_eigenvectors(X.T @ X / len(X), n_components)[1]


def algorithm1_release(X, n_components: int) -> np.ndarray:
    """Algorithm 1's released covariance without noise: its diagonal ``lambda_1..lambda_K / M`` (Theorem 4)."""
    X = np.asarray(X, dtype=float)
    return np.linalg.eigvalsh(X.T @ X / X.size)[::-1][:n_components]


def algorithm1_in_feature_space(X) -> np.ndarray:
    """Algorithm 1's ``K = 1`` release mapped back to feature space: ``lambda_1 v_1 v_1^T / M``.

    What the caveat of Theorem 4 warns against: one record can rotate ``v_1`` by 90 degrees.
    """
    X = np.asarray(X, dtype=float)
    V = same_data_basis(X, 1)
    return float(np.sum((X @ V) ** 2)) / (X.shape[0] * X.shape[1]) * (V @ V.T)


def pca_feature_range(X, n_components: int) -> float:
    """Largest ``|z|`` of the rescaled PCA features ``X V_K / sqrt(M)`` (Lemma 1 bounds it by ``a``)."""
    X = np.asarray(X, dtype=float)
    return float(np.abs(X @ same_data_basis(X, n_components) / np.sqrt(X.shape[1])).max())


def augmented_moment(Z, y) -> np.ndarray:
    """Second moment ``A^T A / N`` of the label-augmented rows ``A = [Z, y]`` (Proposition 4, Theorem 5)."""
    A = np.column_stack([Z, y])
    return A.T @ A / len(A)


def same_basis_augmented(X, n_components: int) -> np.ndarray:
    """Proposition 4's release: the augmented moment of ``[X V_K / sqrt(M), y]``, ``V_K`` from the same data.

    ``X`` holds the features and, in its last column, the label.
    """
    X = np.asarray(X, dtype=float)
    features, m = X[:, :-1], X.shape[1] - 1
    return augmented_moment(features @ same_data_basis(features, n_components) / np.sqrt(m), X[:, -1])


def independent_basis_augmented(X, n_components: int, a: float = 1.0) -> np.ndarray:
    """Theorem 5's release: the augmented moment of ``[X W / s, y]`` for the fixed basis ``W = I[:, :K]``."""
    X = np.asarray(X, dtype=float)
    m = X.shape[1] - 1
    Z = reduce_features(X[:, :-1], np.eye(m)[:, :n_components], bounds=(-a, a))
    return augmented_moment(Z, X[:, -1])


def centred_covariance(Z) -> np.ndarray:
    """Covariance centred at the sample's own mean, ``(Z - mu)^T (Z - mu) / N`` (Theorem 6's class covariance)."""
    Z = np.asarray(Z, dtype=float)
    centred = Z - Z.mean(axis=0)
    return centred.T @ centred / len(Z)


def class_means(X) -> np.ndarray:
    """Stacked means of the features of class 0 and class 1 (label in the last column; an empty class: 0)."""
    X = np.asarray(X, dtype=float)
    return np.concatenate(
        [X[X[:, -1] == c, :-1].mean(axis=0) if np.any(X[:, -1] == c) else np.zeros(X.shape[1] - 1) for c in (0, 1)]
    )


def joint_statistics(X, part: str) -> np.ndarray:
    """One statistic of the corrected Algorithm 3 over two classes (label in the last column).

    ``"counts"``: class counts; ``"sums"``: stacked class sums; ``"second_moments"``: stacked upper
    triangles of the class second-moment sums ``sum_{i in c} z_i z_i^T``.
    """
    part = check_choice(part, "part", JOINT_PARTS)
    X = np.asarray(X, dtype=float)
    Z, onehot = X[:, :-1], np.eye(2)[X[:, -1].astype(int)]
    if part == "counts":
        return onehot.sum(axis=0)
    if part == "sums":
        return onehot.T @ Z
    return np.concatenate([triangle(Z[X[:, -1] == c].T @ Z[X[:, -1] == c]) for c in (0, 1)])


# --------------------------------------------------------------------------------------
# Worst-case pairs, one per derivation (row 0 differs)
# --------------------------------------------------------------------------------------
def opposite_vertices_pair(n: int, n_features: int, a: float = 1.0):
    """``n`` rows ``a 1``, row 0 replaced by ``-a 1``: attains Propositions 1 and 2 (with ``W*``)."""
    n, m, a = _sizes(n, n_features, a)
    return replace_row([np.full(m, a)] * n, np.full(m, -a))


def vertex_to_origin_pair(n: int, n_features: int, a: float = 1.0):
    """``n`` rows ``a 1``, row 0 replaced by ``0``: attains Proposition 3 and Theorem 5."""
    n, m, a = _sizes(n, n_features, a)
    return replace_row([np.full(m, a)] * n, np.zeros(m))


def eigenvalue_pair(n: int, n_features: int, a: float = 1.0):
    """Theorem 4's pair: the two orthogonal sign rows split the data, row 0 moves to the second.

    One eigenvalue of the second moment rises and one falls by ``M a^2 / N``: the release of
    Algorithm 1 moves by ``min(K, 2) a^2 / N``.
    """
    n, m, a = _sizes(n, n_features, a)
    u, w = sign_rows(m, a)
    return replace_row([u] * (n // 2) + [w] * (n - n // 2), w)


def _flip_rows(n: int, m: int, a: float):
    """Rows whose top eigendirection flips from ``u`` to ``w`` when row 0 moves from ``u`` to ``w``."""
    u, w = np.zeros(m), np.zeros(m)
    u[:2], w[:2] = a * np.array([1.0, 0.5]), a * np.array([-0.5, 1.0])  # orthogonal, unique largest entry
    q = (n - 1) // 2
    return [u] * (q + 1) + [w] * q + [np.zeros(m)] * (n - 2 * q - 1), u, w


def basis_flip_pair(n: int, n_features: int, a: float = 1.0):
    """A pair whose top eigenvector rotates by 90 degrees.

    ``q + 1`` rows ``u`` and ``q`` rows ``w`` (orthogonal, ``q = (n - 1) // 2``, zeros after them); row 0 moves to w.
    """
    n, m, a = _sizes(n, n_features, a)
    rows, _, w = _flip_rows(n, m, a)
    return replace_row(rows, w)


def prop4_pair(n: int, n_features: int, a: float = 1.0):
    """:func:`basis_flip_pair` with labels ``+a`` on ``u``, ``-a`` on ``w`` (last column).

    The basis flips with row 0, so Proposition 4's cross blocks move by an amount that does not shrink with ``N``.
    """
    n, m, a = _sizes(n, n_features, a)
    rows, u, w = _flip_rows(n, m, a)
    labels = [a if r is u else (-a if r is w else 0.0) for r in rows]
    return replace_row([np.append(r, y) for r, y in zip(rows, labels, strict=True)], np.append(w, -a))


def class_mean_pair(n: int, n_features: int, a: float = 1.0):
    """One class of ``n`` rows: row 0 at ``-a 1``, the rest at ``a 1``; row 0 moves to ``a 1``.

    Attains the class mean's ``2Ka/N_c`` and the centred class covariance's ``4K^2a^2(N_c-1)/N_c^2``.
    """
    n, k, a = _sizes(n, n_features, a)
    return replace_row([np.full(k, -a)] + [np.full(k, a)] * (n - 1), np.full(k, a))


def class_move_pair(n: int, n_features: int, a: float = 1.0):
    """A record changes class (label in the last column): class 0 holds ``(n + 1) // 2`` rows, the mover at ``a 1``
    and the rest at ``-a 1``, class 1 the others at ``a 1``; the mover goes to class 1 at ``-a 1``."""
    n, k, a = _sizes(n, n_features, a)
    one, n0 = np.full(k, a), (n + 1) // 2
    rows = [np.append(one, 0.0)] + [np.append(-one, 0.0)] * (n0 - 1) + [np.append(one, 1.0)] * (n - n0)
    return replace_row(rows, np.append(-one, 1.0))


def joint_pair(n: int, n_features: int, a: float = 1.0):
    """The corrected Algorithm 3's pair: row 0 at ``a 1`` moves from class 0 to class 1.

    The other rows lie at ``-a 1``, their classes alternating; the pair attains the three joint sensitivities.
    """
    n, k, a = _sizes(n, n_features, a)
    one = np.full(k, a)
    return replace_row(
        [np.append(one, 0.0)] + [np.append(-one, float(i % 2)) for i in range(1, n)], np.append(one, 1.0)
    )


def orthogonal_unit_pair(n: int, n_features: int):
    """``n`` rows ``e_1``, row 0 replaced by ``e_2``: attains Analyze-Gauss's replace-one ``sqrt(2)``."""
    n, m, _ = _sizes(n, n_features, 1.0)
    if m < 2:
        raise ValueError(f"n_features must be >= 2 for two orthogonal unit rows, got {m}")
    return replace_row([np.eye(m)[0]] * n, np.eye(m)[1])


def _sizes(n, n_features, a):
    return check_integer(n, "n"), check_integer(n_features, "n_features"), check_positive(a, "a")


def _even(value, name: str) -> int:
    value = check_integer(value, name, minimum=2)
    if value % 2:
        raise ValueError(f"{name} must be even (two orthogonal sign rows split it in halves), got {value}")
    return value


#: Basis source -> the method's name in the chapter's tables.
SOURCES = {
    "PubPCA": "PCA-Gauss, PubPCA",
    "LapPCA": "PCA-Gauss, LapPCA",
    "AGPCA": "PCA-Gauss, AGPCA",
    "random projection": "random projection",
    "Liu": "Liu (no reduction)",
}


def basis_for(
    source: str,
    X_private,
    X_public,
    n_components: int,
    epsilon: float,
    *,
    delta: float,
    pca_fraction: float,
    a: float = 1.0,
    random_state=None,
) -> tuple[np.ndarray, float]:
    """The basis one source gives, and the budget it leaves for the Gaussian model.

    Parameters
    ----------
    source : {"PubPCA", "LapPCA", "AGPCA", "random projection", "Liu"}
        PubPCA: PCA of the public rows (no budget); LapPCA: Section VII on the private rows;
        AGPCA: Analyze-Gauss (Dwork et al. 2014, replace-one calibration) with row norm bound
        ``a sqrt(M)``; random projection: a Gaussian basis (no budget); Liu: the identity (no reduction).
    X_private, X_public : array of shape (n, M)
        Rows in ``[-a, a]^M``.
    n_components : int
        ``K`` (ignored by Liu, which keeps all ``M`` features).
    epsilon : float
        Total budget of the release.
    delta : float
        Analyze-Gauss's delta.
    pca_fraction : float in (0, 1)
        Share of ``epsilon`` a LapPCA / AGPCA basis spends.
    a : float
        The public feature bound.
    random_state : None, int or Generator

    Returns
    -------
    basis : ndarray of shape (M, K)
    epsilon_left : float
        What the Gaussian model may spend.
    """
    source = check_choice(source, "source", tuple(SOURCES))
    X_private = check_array(X_private, name="X_private")
    epsilon = check_epsilon(epsilon, allow_infinite=False)
    pca_fraction = check_fraction(pca_fraction, "pca_fraction", low_open=True)
    a = check_positive(a, "a")
    rng = check_random_state(random_state)
    m = X_private.shape[1]
    eps_p = pca_fraction * epsilon
    if source == "PubPCA":
        return public_pca(X_public, n_components), epsilon
    if source == "LapPCA":
        return lap_pca(X_private, n_components, eps_p, bounds=(-a, a), random_state=rng), epsilon - eps_p
    if source == "AGPCA":
        basis = analyze_gauss_pca(
            X_private, n_components, eps_p, check_delta(delta), data_norm=a * np.sqrt(m), random_state=rng
        )
        return basis, epsilon - eps_p
    if source == "random projection":
        return gaussian_projection(m, n_components, random_state=rng), epsilon
    return np.eye(m), epsilon  # Liu: no reduction


def sweep(
    X_train,
    y_train,
    X_public,
    evaluate: Callable,
    *,
    mode: str,
    components,
    n_trials: int,
    n_synthetic: int,
    epsilon: float,
    delta: float,
    pca_fraction: float,
    a: float = 1.0,
    model_kwargs: dict | None = None,
    ron_kwargs: dict | None = None,
    sources: dict | None = None,
    with_ron: bool = True,
    random_state=None,
) -> dict:
    """Scores of every method at every ``K``, trial by trial: ``{method: {K: [score per trial]}}``.

    Each trial fits, for each source in ``sources`` and each ``K`` in ``components`` (Liu: ``M``
    only), :class:`~dpnb.papers.pca_gauss.PCAGauss` in ``mode`` on the source's basis, samples
    ``n_synthetic`` records and scores them with ``evaluate(Z, y, transform, rng)``, where
    ``transform`` maps real rows into the synthetic coordinates (a released, public map); then,
    with ``with_ron``, RON-Gauss at each ``K`` and the full ``epsilon``. All draws come from
    ``random_state`` in this order.

    Parameters
    ----------
    X_train, y_train : private rows in ``[-a, a]^M`` and their labels (None for unsupervised)
    X_public : public rows, for PubPCA
    evaluate : callable
    mode : {"unsupervised", "supervised", "gmm"}
    components : sequence of int
    n_trials, n_synthetic : int
    epsilon, delta, pca_fraction, a : as in :func:`basis_for`
    model_kwargs, ron_kwargs : dict, optional
        Further arguments of ``PCAGauss`` and ``RONGauss`` (e.g. ``n_classes``, ``label_bound``).
    sources : dict, optional
        Source -> method name; default :data:`SOURCES`.
    with_ron : bool
    random_state : None, int or Generator
    """
    if not callable(evaluate):
        raise TypeError("evaluate must be a callable evaluate(Z, y, transform, rng) -> score")
    X_train = check_array(X_train, name="X_train")
    components = [check_integer(k, "components") for k in components]
    if not components:
        raise ValueError("components must list at least one K")
    n_trials = check_integer(n_trials, "n_trials")
    n_synthetic = check_integer(n_synthetic, "n_synthetic")
    sources = SOURCES if sources is None else sources
    if not isinstance(sources, dict) or not sources:
        raise TypeError("sources must be a non-empty dict of source -> method name")
    model_kwargs, ron_kwargs = dict(model_kwargs or {}), dict(ron_kwargs or {})
    rng = check_random_state(random_state)
    m = X_train.shape[1]
    out = {name: {} for name in list(sources.values()) + (["RON-Gauss"] if with_ron else [])}
    for _ in range(n_trials):
        for source, name in sources.items():
            for k in components if source != "Liu" else [m]:
                W, eps_g = basis_for(
                    source, X_train, X_public, k, epsilon, delta=delta, pca_fraction=pca_fraction, a=a, random_state=rng
                )
                model = PCAGauss(k, eps_g, mode=mode, basis=W, bounds=(-a, a), random_state=rng, **model_kwargs)
                drawn = model.fit(X_train, y_train).sample(n_synthetic)
                Z, y_syn = drawn if mode != "unsupervised" else (drawn, None)
                out[name].setdefault(k, []).append(evaluate(Z, y_syn, model.transform, rng))
        for k in components if with_ron else []:
            ron = RONGauss(k, epsilon, mode=mode, random_state=sklearn_seed(rng), **ron_kwargs).fit(X_train, y_train)
            drawn = ron.sample(n_synthetic)
            Z, y_syn = drawn if mode != "unsupervised" else (drawn, None)
            out["RON-Gauss"].setdefault(k, []).append(evaluate(Z, y_syn, ron.transform, rng))
    return out


def svm_scores(Z, y, Z_test, y_test, random_state=None) -> tuple[float, float]:
    """(accuracy, balanced accuracy) on ``(Z_test, y_test)`` of a linear SVM trained on ``(Z, y)``.

    A training sample with one class predicts that class everywhere (a synthetic release can have one).
    """
    y = np.asarray(y)
    if len(np.unique(y)) < 2:
        pred = np.full(len(Z_test), y[0])
    else:
        svm = LinearSVC(dual=False, max_iter=10_000, random_state=sklearn_seed(check_random_state(random_state)))
        pred = svm.fit(Z, y).predict(Z_test)
    return accuracy_score(y_test, pred), balanced_accuracy_score(y_test, pred)


def ridge_rmse(Z, y, Z_test, y_test) -> float:
    """RMSE on ``(Z_test, y_test)`` of a ridge regression (``alpha = 1``) trained on ``(Z, y)``."""
    pred = Ridge(alpha=1.0).fit(Z, y).predict(Z_test)
    return float(np.sqrt(np.mean((pred - np.asarray(y_test, dtype=float)) ** 2)))
