"""One-pass, checked Gram matrices of ``[numeric | one-hot]`` rows with class indicators appended.

Jiang et al.'s two publishers (:mod:`dpnb.papers.component_analysis`) start from the same sums: ``sum x``
and ``sum x x^T`` for DP-PCA (Section 3.1, step 1), the per-class sums and the pooled
``sum x x^T`` for DP-LDA (Section 3.2, step 1). All of them are blocks of one Gram matrix,

    G = sum_i z_i z_i^T,   z_i = [x_i | w e_{y_i}],

where ``e_c`` is the ``c``-th unit vector of length ``C``: the top-left block is ``sum x x^T``,
the bottom-left block holds ``w`` times the class sums, the bottom-right diagonal ``w^2`` times
the class counts (``C = 1``, ``w = 1`` gives ``sum x`` and ``n``).

:func:`indicator_gram` forms ``G`` in one pass over ``X``: rows are read in cache-sized blocks,
and one compiled loop (:func:`dpnb.ground.compiled.fill_indicator_block`) checks each value (finite, in
``[0, 1]``, one-hot groups of 0/1 with one 1), optionally rounds it to the grid ``2^-16`` and writes
``z_i`` into a block buffer, whose Gram matrix BLAS then adds. Checking, rounding and the indicator
columns thus cost one read of each row instead of four NumPy passes (measured: 1.8x -> about 1.2x the time of the
plain Gram matrix ``X^T X`` at 500,000 x 77). The loop does only comparisons, copies and the
exact products ``v 2^16`` and ``rint``, so its output is the same on every machine.
"""

from __future__ import annotations

import numpy as np

from dpnb.ground.compiled import GRID, fill_indicator_block


def indicator_gram(X, y, n_classes: int, groups, *, grid: bool, on_bad_rows, chunk: int = 2048) -> np.ndarray:
    """``G = sum_i z_i z_i^T`` with ``z_i = [x_i | w e_{y_i}]``, checked and formed in one pass over ``X``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float64
        Rows ``[numeric | one-hot groups]``; every value must lie in ``[0, 1]`` and every group
        (columns ``groups[g, 0]..groups[g, 1] - 1``) hold 0/1 with exactly one 1.
    y : ndarray of shape (n_samples,) of int in ``0..n_classes-1``, or of shape (0,)
        Class labels (validated by the caller); empty puts every row in class 0.
    n_classes : int
        ``C``, the number of indicator columns appended.
    groups : ndarray of shape (n_groups, 2), int
        Start and stop column of each one-hot group.
    grid : bool
        False: ``z_i = [x_i | e_{y_i}]`` (``w = 1``), summed in floating point. True: every value
        rounded to the nearest multiple of ``2^-16`` (ties to even) and held as the integer
        ``v 2^16``, with ``w = 2^16``: every product and partial sum is then an integer below
        ``2^53`` for up to ``2^21`` rows, so ``G`` is exact, whatever the summation order or BLAS
        kernel (the proof is in DP-LDA's class moments, ``dpnb.papers.component_analysis``); ``G`` is
        returned in those integer units, ``2^32`` times the sums of the rounded values.
    on_bad_rows : callable
        Called with the block of rows holding the first invalid value; it must raise (it words
        the error, as the module's validators do). A ``RuntimeError`` follows if it returns.
    chunk : int
        Rows per block (2,048 rows of 77 columns: about 1.2 MB, cache-resident while BLAS adds them).

    Returns
    -------
    G : ndarray of shape (n_features + n_classes, n_features + n_classes)
    """
    n, p = X.shape
    groups = np.asarray(groups, dtype=np.int64).reshape(-1, 2)
    y = np.asarray(y, dtype=np.int64)
    block = np.empty((min(chunk, n), p + n_classes))
    total = np.zeros((p + n_classes, p + n_classes))
    weight = GRID if grid else 1.0
    for start in range(0, n, chunk):
        rows = block[: min(chunk, n - start)]
        bad = fill_indicator_block(X[start : start + chunk], y[start : start + chunk], groups, grid, weight, rows)
        if bad >= 0:
            on_bad_rows(X[start : start + chunk])
            raise RuntimeError(f"row {start + bad} failed the compiled check but not the validator")
        total += rows.T @ rows
    return total
