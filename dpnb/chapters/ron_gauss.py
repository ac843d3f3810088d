"""Neighbouring datasets at (or near) the worst case of RON-Gauss's sensitivity lemmas.

Each function returns a pair ``(X, X')`` of datasets with ``n`` rows that differ in row 0 only
(replace-one neighbours, the paper's Remark 2), built as the derivations of the RON-Gauss chapter
explain. Audits evaluate a query on the pair exactly and start their searches from it.

- :func:`mean_sign_pair`: Lemma 2, ``x_0 = 1/sqrt(m)``, ``x_0' = -x_0``; the mean moves by exactly
  ``2 sqrt(m) / n`` in L1.
- :func:`covariance_pair`: Lemma 4, row 0 is one of :func:`~dpnb.papers.ron_gauss.covariance_extremal_pair`
  (even ``p``; every entry of the change is ``sqrt(2)/p``), or the all-ones against the half-flipped sign
  vector (odd ``p``); the other rows are zero.
- :func:`labelled_pair`: Lemma 5, the Lemma 4 pair in the features and the labels ``+a``, ``-a``.
- :func:`mle_pair`: Lemma 6, the pair on which the MLE covariance moves by ``2 sqrt(2) p (n-1) / n^2``.
"""

from __future__ import annotations

import numpy as np

from dpnb.ground.validation import check_integer, check_positive
from dpnb.papers.ron_gauss import covariance_extremal_pair
from dpnb.privacy.audit import replace_row


def mean_sign_pair(n_samples, n_features) -> tuple[np.ndarray, np.ndarray]:
    """Unit rows, ``x_0 = 1/sqrt(m)`` in ``X`` and ``-1/sqrt(m)`` in ``X'``; the other rows ``e_1``.

    The L1 change of the mean is ``2 sqrt(m) / n``, Lemma 2's value, which the pair attains.
    """
    n = check_integer(n_samples, "n_samples")
    m = check_integer(n_features, "n_features")
    X = np.zeros((n, m))
    X[:, 0] = 1.0
    X[0] = 1 / np.sqrt(m)
    return replace_row(X, -X[0])


def _sign_or_extremal(p: int) -> tuple[np.ndarray, np.ndarray]:
    if p % 2 == 0:
        return covariance_extremal_pair(p)
    u = np.ones(p) / np.sqrt(p)
    v = u.copy()
    v[: p // 2] *= -1
    return u, v


def covariance_pair(n_samples, n_components, extra: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Datasets of ``n`` rows (``p + extra`` columns, the extra ones zero) that differ in row 0.

    Row 0 is ``u`` in ``X`` and ``v`` in ``X'``: the pair of
    :func:`~dpnb.papers.ron_gauss.covariance_extremal_pair` for even ``p`` (the change of
    ``X^T X`` then has every entry ``+-sqrt(2)/p``, the corrected Lemma 4 bound), else the
    all-ones unit vector against it with the first ``p // 2`` signs flipped. Other rows are zero.
    """
    n = check_integer(n_samples, "n_samples")
    p = check_integer(n_components, "n_components")
    extra = check_integer(extra, "extra", minimum=0)
    u, v = _sign_or_extremal(p)
    X = np.zeros((n, p + extra))
    X[0, :p] = u
    row = X[0].copy()
    row[:p] = v
    return replace_row(X, row)


def labelled_pair(n_samples, n_components, label_bound=1.0) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``(x, y)``: :func:`covariance_pair` in the features, label ``+a`` in ``X`` and ``-a`` in ``X'``."""
    a = check_positive(label_bound, "label_bound")
    p = check_integer(n_components, "n_components")
    X, X_prime = covariance_pair(n_samples, p, extra=1)
    X[0, p], X_prime[0, p] = a, -a
    return X, X_prime


def mle_pair(n_samples, n_components) -> tuple[np.ndarray, np.ndarray]:
    """Lemma 6's pair: rows at ``w = -(u_0 + v_0)/sqrt(2)``, row 0 at ``(v_0 - u_0)/sqrt(2)`` and its negation.

    With ``(u_0, v_0)`` the orthogonal pair of :func:`~dpnb.papers.ron_gauss.covariance_extremal_pair`
    (even ``p``), every row has norm 1 and the mean-centred covariance moves by
    ``2 sqrt(2) p (n - 1) / n^2`` in L1. For odd ``p`` the pair of ``p - 1`` is used, padded with
    a zero column (a start for a search, not the worst case).
    """
    n = check_integer(n_samples, "n_samples", minimum=2)
    p = check_integer(n_components, "n_components", minimum=2)
    u0, v0 = covariance_extremal_pair(p - p % 2)
    u0, v0 = np.append(u0, np.zeros(p % 2)), np.append(v0, np.zeros(p % 2))
    X = np.tile(-(u0 + v0) / np.sqrt(2), (n, 1))
    X[0] = (v0 - u0) / np.sqrt(2)
    return replace_row(X, -X[0])
