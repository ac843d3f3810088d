"""The data layout Jiang et al.'s two mechanisms share: ``[numeric in [0, 1] | one-hot groups]``.

DP-PCA (:mod:`dpnb.papers.component_analysis`) and DP-LDA (:mod:`dpnb.papers.lda_publishing`)
both read rows of ``p1`` numeric attributes in ``[0, 1]`` followed by one dummy group per
categorical attribute (``group_sizes`` levels each), and both perturb sums over those rows. This
module holds what they share, so that neither imports the other: the layout and its checks
(:func:`check_onehot_data`, rejecting, never clipping), the one-pass validated Gram matrix
(:func:`onehot_gram`, :func:`checked_moments`), the record-level counts their sensitivities are
built from (:func:`record_contribution`, :func:`max_over_t`) and the weighted moments
(:func:`moment_sums`).
"""

from __future__ import annotations

import functools
import numbers

import numpy as np

from dpnb.ground.validation import check_array, check_in_box, check_integer, first_few
from dpnb.numerics.blocks import check_rows
from dpnb.numerics.gram import indicator_gram

NOISE_SCALES = ("corrected", "paper")  # the noise_scale values of DP-PCA and DP-LDA
NEIGHBOURS = ("replace-row", "add-remove-row")  # the notions (dpnb.privacy.audit.NEIGHBOURS) the sensitivities cover
_ONE_BITS = np.float64(1.0).view(np.uint64)  # the float 1.0 read as an unsigned integer


def check_group_sizes(group_sizes, n_columns: int | None = None) -> tuple[int, ...]:
    if isinstance(group_sizes, (str, bytes)) or not hasattr(group_sizes, "__iter__"):
        raise TypeError(f"group_sizes must be a sequence of ints, got {type(group_sizes).__name__}")
    sizes = tuple(group_sizes)
    for s in sizes:
        if isinstance(s, bool) or not isinstance(s, numbers.Integral) or s < 2:
            raise ValueError(
                f"group_sizes must be integers >= 2 (levels per categorical attribute), got {s!r} among "
                f"{first_few(sizes, 'sizes')}"
            )
    if n_columns is not None and sum(sizes) > n_columns:
        raise ValueError(f"group_sizes add up to {sum(sizes)} dummy columns but the data has only {n_columns} columns")
    return tuple(int(s) for s in sizes)


def group_slices(n_numeric: int, group_sizes) -> list[slice]:
    starts = n_numeric + np.cumsum((0, *group_sizes))[:-1]
    return [slice(int(a), int(a) + s) for a, s in zip(starts, group_sizes, strict=True)]


def check_onehot_data(X, group_sizes=()) -> tuple[np.ndarray, int]:
    """Validate a ``[numeric | one-hot groups]`` matrix in ``[0, 1]`` (rejects, never clips).

    Returns
    -------
    X : ndarray of float64
    n_numeric : int
        Number of leading numeric columns, ``p - sum(group_sizes)``.
    """
    X, n_numeric, sizes = onehot_layout(check_array(X, ndim=2, name="X", finite=False), group_sizes)
    check_onehot_block(X, n_numeric, sizes)
    return X, n_numeric


def onehot_layout(X, group_sizes) -> tuple[np.ndarray, int, tuple[int, ...]]:
    """``X`` as a non-empty 2-D array (:func:`dpnb.numerics.blocks.check_rows`), its number of numeric columns and the
    group sizes (no value checks)."""
    X = check_rows(X, name="X")  # float32 and Dask arrays kept; finiteness: with the value checks of the moments pass
    sizes = check_group_sizes(group_sizes, X.shape[1])
    return X, X.shape[1] - sum(sizes), sizes


def check_onehot_block(block, n_numeric: int, sizes) -> None:
    """The value checks of :func:`check_onehot_data` on some rows: finite, in ``[0, 1]``, valid one-hot groups."""
    # Read as unsigned 64-bit integers, the floats in [+0, 1] are exactly [0, bits of 1.0] (the sign bit
    # makes negatives, -0.0 included, larger; NaN and inf lie above): one pass, no temporaries. Only a
    # failure pays for min/max (which accept -0.0); the shared validators word the error.
    if block.view(np.uint64).max() > _ONE_BITS and not (block.min() >= 0.0 and block.max() <= 1.0):
        check_in_box(check_array(block, ndim=2, name="X"), 0.0, 1.0, name="X")
    for sl in group_slices(n_numeric, sizes):
        dummies = block[:, sl]
        if np.any((dummies != 0) & (dummies != 1)) or np.any(dummies.sum(axis=1) != 1):
            raise ValueError(
                f"columns {sl.start}..{sl.stop - 1} must be one-hot dummies (0/1, one 1 per row); "
                "check group_sizes and the column order [numeric | dummy groups]"
            )


def onehot_gram(X, y, n_classes: int, n_numeric: int, sizes, *, grid: bool, chunk: int | None) -> np.ndarray:
    """:func:`dpnb.numerics.gram.indicator_gram` of ``[numeric | one-hot]`` rows.

    Errors are worded as :func:`check_onehot_data`'s.
    """
    groups = np.array([(sl.start, sl.stop) for sl in group_slices(n_numeric, sizes)], dtype=np.int64)
    return indicator_gram(
        X,
        y,
        n_classes,
        groups.reshape(-1, 2),
        grid=grid,
        on_bad_rows=functools.partial(check_onehot_block, n_numeric=n_numeric, sizes=sizes),
        chunk=chunk,
    )


def checked_moments(X, n_numeric: int, sizes, chunk: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(sum x, sum x x^T)`` of a ``[numeric | one-hot]`` matrix, validated on the way, in one pass.

    The Gram matrix of the rows ``[x | 1]`` (:func:`dpnb.numerics.gram.indicator_gram`): its last row is
    ``sum x``. Every block of ``chunk`` rows is checked as :func:`check_onehot_data` would. Equal
    to ``(X.sum(axis=0), X.T @ X)`` up to rounding (the summation order differs).
    """
    p = X.shape[1]
    gram = onehot_gram(X, np.empty(0, dtype=np.int64), 1, n_numeric, sizes, grid=False, chunk=chunk)
    return gram[p, :p].copy(), gram[:p, :p].copy()


def check_counts(n_numeric, n_categorical) -> tuple[int, int]:
    n_numeric = check_integer(n_numeric, "n_numeric", minimum=0)
    n_categorical = check_integer(n_categorical, "n_categorical", minimum=0)
    if n_numeric + n_categorical == 0:
        raise ValueError("need at least one attribute (n_numeric + n_categorical >= 1)")
    return n_numeric, n_categorical


def max_over_t(p1: int, p2: int, slope_sign: int) -> float:
    """``max_{t in [0,1]}`` of the worst-case L1 change with the second record's numerics at ``t``.

    The first record has every numeric attribute at 1 and the second at ``t`` (all
    categories differ). ``slope_sign = -1``: the sums change by ``p1 (1 - t)`` (same class);
    ``+1``: by ``p1 (1 + t)`` (the two records sit in different class sums).
    """

    def f(t):
        return p1 * (1 + slope_sign * t) + 2 * p2 + p1 * (p1 + 1) / 2 * (1 - t * t) + p1 * p2 * (1 + t) + p2 * (p2 + 1)

    t_star = 0.0 if p1 == 0 else float(np.clip((p2 + slope_sign) / (p1 + 1), 0.0, 1.0))
    return float(max(f(0.0), f(1.0), f(t_star)))


def record_contribution(n_numeric: int, n_categorical: int = 0) -> float:
    """Largest ``||x||_1 + ||triu(x x^T)||_1`` of one record: the add/remove sensitivity of the sums.

    Attained by all numerics at 1 and any level of each group: ``q + q (q + 1) / 2`` with
    ``q = p1 + p2`` ones in the row.
    """
    p1, p2 = check_counts(n_numeric, n_categorical)
    q = p1 + p2
    return float(q + q * (q + 1) / 2)


def check_datasets(X, name: str = "X") -> np.ndarray:
    """``X`` as a finite float64 dataset ``(n, p)`` or stack of datasets ``(m, n, p)``."""
    X = check_array(X, ndim=None, name=name, min_rows=0)
    if X.ndim not in (2, 3):
        raise ValueError(f"{name} must be a dataset (n, p) or a stack of datasets (m, n, p), got shape {X.shape}")
    return X


def row_weights(weights, shape: tuple[int, ...]) -> np.ndarray | None:
    """Validated row weights of shape ``shape`` (the datasets' leading axes), or None for weight 1."""
    if weights is None:
        return None
    w = check_array(weights, ndim=None, name="weights", min_rows=0)
    if w.shape != shape:
        raise ValueError(f"weights must hold one weight per row, shape {shape}, got {w.shape}")
    return w


def moment_sums(X, weights=None) -> tuple[np.ndarray, np.ndarray]:
    """``(sum_x w_x x, sum_x w_x x x^T)``: the statistics DP-PCA perturbs (Section 3.1, step 1).

    Parameters
    ----------
    X : array_like of shape (n, p) or (m, n, p)
        A dataset, or a stack of ``m`` datasets (then every output gains a leading axis ``m``).
    weights : array_like of shape (n,) or (m, n), optional
        Row weights; default 1. With 0/1 weights (the presence column of :class:`dpnb.privacy.audit.AddRemoveRows`)
        the sums run over the rows of weight 1 only.

    Returns
    -------
    sums : ndarray of shape (..., p)
    second : ndarray of shape (..., p, p)
    """
    X = check_datasets(X)
    w = row_weights(weights, X.shape[:-1])
    Xw = X if w is None else X * w[..., None]
    return Xw.sum(axis=-2), np.swapaxes(Xw, -1, -2) @ X
