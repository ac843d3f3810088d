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


def svm_accuracy(Z, y, Z_test, y_test) -> float:
    """Test accuracy in per cent of scikit-learn's default RBF ``SVC`` trained on ``(Z, y)``."""
    Z, y = _pair(Z, y, "Z")
    Z_test, y_test = _pair(Z_test, y_test, "Z_test")
    if Z_test.shape[1] != Z.shape[1]:
        raise ValueError(f"Z_test must have the {Z.shape[1]} columns of Z, got {Z_test.shape[1]}")
    return float(100 * np.mean(SVC().fit(Z, y).predict(Z_test) == y_test))


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
