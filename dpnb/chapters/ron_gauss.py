"""The RON-Gauss chapter's room: worst-case neighbouring pairs and how a release is scored.

Neighbouring datasets at (or near) the worst case of RON-Gauss's sensitivity lemmas.

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

How the RON-Gauss chapter scores a release: the paper's classifier (SVM) and regressor (kernel ridge).

Table 4 trains an RBF support-vector machine on released records and tests it on real ones; Table 5
and Fig. 1 fit kernel ridge regression (RBF, ``alpha = 0.1``, :func:`~dpnb.papers.ron_gauss.rbf_ridge_predict`)
and report the test RMSE. A release of a fitted :class:`~dpnb.papers.ron_gauss.RONGauss` is scored on
the real test records mapped into its space with ``transform``.
"""

from __future__ import annotations

import numpy as np
from sklearn.svm import SVC

from dpnb.ground.validation import check_array, check_integer, check_positive, check_random_state
from dpnb.papers.ron_gauss import covariance_extremal_pair, rbf_ridge_predict
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


def _pair(Z, y, name: str) -> tuple[np.ndarray, np.ndarray]:
    Z = check_array(Z, name=name)
    y = np.asarray(y)
    if y.ndim != 1 or len(y) != len(Z):
        raise ValueError(f"the targets of {name} must be one per row ({len(Z)}), got shape {y.shape}")
    return Z, y


_PREDICT_ROWS = 1024  # test rows per kernel block of _binary_svc_predict (1,024 x 1,300 float64 = 10 MB)


def svm_accuracy(Z, y, Z_test, y_test) -> float:
    """Test accuracy in per cent of scikit-learn's default RBF ``SVC`` trained on ``(Z, y)``.

    With two classes the test labels come from ``_binary_svc_predict`` (the fitted decision function
    through BLAS products; libsvm's own prediction evaluates one kernel entry at a time, which cost more
    than the fit in Table 4); with more, from ``SVC.predict``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.standard_normal((200, 2)); y = (Z[:, 0] > 0).astype(int)
    >>> svm_accuracy(Z[:100], y[:100], Z[100:], y[100:]) > 90
    True
    """
    Z, y = _pair(Z, y, "Z")
    Z_test, y_test = _pair(Z_test, y_test, "Z_test")
    if Z_test.shape[1] != Z.shape[1]:
        raise ValueError(f"Z_test must have the {Z.shape[1]} columns of Z, got {Z_test.shape[1]}")
    svc = SVC().fit(Z, y)
    predicted = _binary_svc_predict(svc, Z_test) if len(svc.classes_) == 2 else svc.predict(Z_test)
    return float(100 * np.mean(predicted == y_test))


def _binary_svc_predict(svc, Z_test) -> np.ndarray:
    """``svc.predict(Z_test)`` of a fitted two-class RBF ``SVC``, from one BLAS product per block of test rows.

    The decision value of a row ``z`` is ``f(z) = sum_i a_i exp(-gamma ||z - s_i||^2) + b`` over the support
    vectors ``s_i`` (``dual_coef_``, ``intercept_``, ``_gamma``); the label is ``classes_[1]`` where
    ``f(z) > 0``, else ``classes_[0]``, as libsvm decides. The squared distances come from
    ``||z||^2 + ||s||^2 - 2 z.s`` (one ``(rows x p) (p x n_SV)`` product), so ``f`` differs from libsvm's
    by float64 round-off only and a label changes only where ``|f(z)|`` is at round-off level (on the
    paper-size Table 4 runs no label changed). One pass over the test rows, ``O(n_test n_SV p)``.
    """
    sv = svc.support_vectors_
    coef, intercept = svc.dual_coef_[0], svc.intercept_[0]
    sv_sq = np.einsum("ij,ij->i", sv, sv)
    positive = np.empty(len(Z_test), dtype=bool)
    for start in range(0, len(Z_test), _PREDICT_ROWS):
        block = Z_test[start : start + _PREDICT_ROWS]
        sq = block @ sv.T
        sq *= -2.0
        sq += np.einsum("ij,ij->i", block, block)[:, None]
        sq += sv_sq
        np.maximum(sq, 0.0, out=sq)
        sq *= -svc._gamma
        positive[start : start + len(block)] = np.exp(sq, out=sq) @ coef + intercept > 0
    return svc.classes_[positive.astype(int)]


def krr_rmse(Z, y, Z_test, y_test, *, alpha: float = 0.1, fit_rows: int = 0, random_state=None) -> float:
    """Test RMSE of RBF kernel ridge regression fitted on ``(Z, y)``, or on ``fit_rows`` of its rows.

    Parameters
    ----------
    Z, y : training records and targets.
    Z_test, y_test : test records and targets.
    alpha : float
        Ridge penalty (the chapter's 0.1).
    fit_rows : int >= 0
        When ``0 < fit_rows < len(Z)``, the regressor is fitted on that many rows drawn without
        replacement with ``random_state`` (a uniform subsample of a release is post-processing);
        0 fits on all rows.
    random_state : None, int or Generator
        Draws the subsample (unused when all rows are fitted).
    """
    Z, y = _pair(Z, y, "Z")
    Z_test, y_test = _pair(Z_test, y_test, "Z_test")
    fit_rows = check_integer(fit_rows, "fit_rows", minimum=0)
    if 0 < fit_rows < len(Z):
        keep = check_random_state(random_state).choice(len(Z), fit_rows, replace=False)
        Z, y = Z[keep], y[keep]
    pred = rbf_ridge_predict(Z, y, Z_test, alpha=alpha)
    return float(np.sqrt(np.mean((pred - y_test) ** 2)))


def release_accuracy(model, n_samples, X_test, y_test) -> float:
    """:func:`svm_accuracy` of ``n_samples`` records released by a fitted GMM-mode ``RONGauss``."""
    Z, y = model.sample(check_integer(n_samples, "n_samples"))
    return svm_accuracy(Z, y, model.transform(X_test), y_test)


def release_rmse(model, n_samples, X_test, y_test, *, alpha: float = 0.1, fit_rows: int = 0, random_state=None):
    """:func:`krr_rmse` of ``n_samples`` records released by a fitted supervised ``RONGauss``."""
    Z, y = model.sample(check_integer(n_samples, "n_samples"))
    return krr_rmse(Z, y, model.transform(X_test), y_test, alpha=alpha, fit_rows=fit_rows, random_state=random_state)
