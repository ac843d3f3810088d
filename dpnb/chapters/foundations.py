"""Replace-one neighbours at the worst case of the foundations chapter's sensitivity bounds.

Each function returns datasets ``(X, X')`` of ``n`` rows and ``d`` columns that differ in row 0
only, as the derivation of the neighbour relations explains:

- :func:`box_pair`: rows in the box ``[low, 1]^d``, all ones, row 0 replaced by ``low``: the sum
  moves by ``(1 - low) d`` in L1, the mean by ``(1 - low) d / n`` (the replace-one bounds of both on
  ``[-1, 1]^d``, and of the sum on ``[0, 1]^d``);
- :func:`ball_pair`: rows in the unit ball, all ``e_1``, row 0 replaced by the orthogonal ``e_2``
  (by 0 when ``d = 1``, where the ball is ``[-1, 1]``): ``X^T X / n`` moves by ``sqrt(2)/n`` in
  Frobenius norm (``1/n`` when ``d = 1``).
"""

from __future__ import annotations

import numpy as np

from dpnb.ground.validation import check_integer
from dpnb.privacy.audit import replace_row


def box_pair(n_samples, n_features, low: float = -1.0) -> tuple[np.ndarray, np.ndarray]:
    """All-ones rows in ``[low, 1]^d``; row 0 of ``X'`` is ``low`` in every coordinate.

    Parameters
    ----------
    n_samples, n_features : int >= 1
    low : float < 1
        The box's lower corner (``-1`` for ``[-1, 1]^d``, ``0`` for ``[0, 1]^d``).
    """
    n = check_integer(n_samples, "n_samples")
    d = check_integer(n_features, "n_features")
    if isinstance(low, bool) or not isinstance(low, (int, float)) or not np.isfinite(low) or low >= 1:
        raise ValueError(f"low must be a finite number below the box's upper corner 1, got {low!r}")
    return replace_row(np.ones((n, d)), np.full(d, float(low)))


def ball_pair(n_samples, n_features) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``e_1`` of the unit ball; row 0 of ``X'`` is ``e_2`` (0 when ``d = 1``)."""
    n = check_integer(n_samples, "n_samples")
    d = check_integer(n_features, "n_features")
    X = np.zeros((n, d))
    X[:, 0] = 1.0
    return replace_row(X, np.eye(d)[1] if d > 1 else np.zeros(1))
