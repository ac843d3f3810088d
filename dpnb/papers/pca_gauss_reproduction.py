"""The PCA-Gauss chapter's reproduction runs: bases by source, method sweeps over K, task metrics.

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
from dpnb.papers.dppro import gaussian_projection
from dpnb.papers.pca_gauss import PCAGauss, analyze_gauss_pca, lap_pca, public_pca
from dpnb.papers.ron_gauss import RONGauss

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
