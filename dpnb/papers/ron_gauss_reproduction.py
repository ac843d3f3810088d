"""How the RON-Gauss chapter scores a release: the paper's classifier (SVM) and regressor (kernel ridge).

Table 4 trains an RBF support-vector machine on released records and tests it on real ones; Table 5
and Fig. 1 fit kernel ridge regression (RBF, ``alpha = 0.1``, :func:`~dpnb.papers.ron_gauss.rbf_ridge_predict`)
and report the test RMSE. A release of a fitted :class:`~dpnb.papers.ron_gauss.RONGauss` is scored on
the real test records mapped into its space with ``transform``.
"""

from __future__ import annotations

import numpy as np
from sklearn.svm import SVC

from dpnb.ground.validation import check_array, check_integer, check_random_state
from dpnb.papers.ron_gauss import rbf_ridge_predict


def _pair(Z, y, name: str) -> tuple[np.ndarray, np.ndarray]:
    Z = check_array(Z, name=name)
    y = np.asarray(y)
    if y.ndim != 1 or len(y) != len(Z):
        raise ValueError(f"the targets of {name} must be one per row ({len(Z)}), got shape {y.shape}")
    return Z, y


_PREDICT_ROWS = 1024  # test rows per kernel block of _binary_svc_predict (1,024 x 1,300 float64 = 10 MB)


def svm_accuracy(Z, y, Z_test, y_test) -> float:
    """Test accuracy in per cent of scikit-learn's default RBF ``SVC`` trained on ``(Z, y)``.

    With two classes the test labels come from :func:`_binary_svc_predict` (the fitted decision function
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
