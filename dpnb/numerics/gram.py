"""One-pass, checked Gram matrices of ``[numeric | one-hot]`` rows with class indicators appended.

Jiang et al.'s two publishers (:mod:`dpnb.papers.component_analysis`) start from the same sums: ``sum x``
and ``sum x x^T`` for DP-PCA (Section 3.1, step 1), the per-class sums and the pooled
``sum x x^T`` for DP-LDA (Section 3.2, step 1). All of them are blocks of one Gram matrix,

    G = sum_i z_i z_i^T,   z_i = [x_i | w e_{y_i}],

where ``e_c`` is the ``c``-th unit vector of length ``C``: the top-left block is ``sum x x^T``,
the bottom-left block holds ``w`` times the class sums, the bottom-right diagonal ``w^2`` times
the class counts (``C = 1``, ``w = 1`` gives ``sum x`` and ``n``).

:func:`indicator_gram` forms ``G`` in one pass over ``X``: rows are read in blocks of about
``2^18`` values (:func:`dpnb.numerics.linalg.gram_block_rows`), and one compiled loop
(:func:`dpnb.ground.compiled.indicator_block_sums`) checks each value (finite, in ``[0, 1]``,
one-hot groups of 0/1 with one 1) with branch-free running flags, optionally rounds it to the grid
``2^-16`` into a block buffer, and adds it to its class sum and the row to its class count; BLAS
then adds the block's ``p x p`` Gram matrix while the block is still in cache (the buffer's in
grid mode, the rows of ``X`` themselves otherwise), and ``G`` is assembled from the three at the
end. Only a block that fails a check is scanned again, to find its first bad row. Checking,
rounding and the class sums thus ride on the one read of ``X`` the Gram matrix needs, and BLAS
forms a ``p x p`` rather than a ``(p + C) x (p + C)`` matrix: one pass, ``O(n p^2)`` in BLAS plus
``O(n p)`` compiled work, the floor of any method that forms ``X^T X`` (``make benchmark`` times the
fit against that floor, ``benchmarks/gram_floor.py``). The loop does only comparisons,
copies, the exact products ``v 2^16`` and ``rint`` and sums in row order, so its output is the
same on every machine.
"""

from __future__ import annotations

import functools

import numpy as np

from dpnb.ground.compiled import GRID, indicator_block_sums
from dpnb.numerics.blocks import float64_blocks, row_sums
from dpnb.numerics.linalg import gram_block_rows


def indicator_gram(X, y, n_classes: int, groups, *, grid: bool, on_bad_rows, chunk: int | None = None) -> np.ndarray:
    """``G = sum_i z_i z_i^T`` with ``z_i = [x_i | w e_{y_i}]``, checked and formed in one pass over ``X``.

    Parameters
    ----------
    X : ndarray or dask.array of shape (n_samples, n_features), float64 or float32
        Rows ``[numeric | one-hot groups]``; every value must lie in ``[0, 1]`` and every group
        (columns ``groups[g, 0]..groups[g, 1] - 1``) hold 0/1 with exactly one 1. float32 rows are
        read as float64 block by block; a Dask array is reduced chunk by chunk on its cluster
        (:func:`dpnb.numerics.blocks.row_sums`).
    y : ndarray of shape (n_samples,) of int in ``0..n_classes-1``, or of shape (0,)
        Class labels (validated by the caller); empty puts every row in class 0.
    n_classes : int
        ``C``, the number of indicator columns appended.
    groups : ndarray of shape (n_groups, 2), int
        Start and stop column of each one-hot group.
    grid : bool
        False: ``z_i = [x_i | e_{y_i}]`` (``w = 1``), summed in floating point. True: every value
        rounded to the nearest multiple of ``2^-16`` (ties to even) and held as the integer
        ``v 2^16``, with ``w = 2^16``: every product and partial sum of the ``x x^T`` block is then
        an integer below ``2^53`` for up to ``2^21`` rows, and every partial class sum for up to
        ``2^37`` rows, so ``G`` is exact, whatever the summation order or BLAS kernel (the proof is
        in DP-LDA's class moments, ``dpnb.papers.lda_publishing``); ``G`` is returned in those
        integer units, ``2^32`` times the sums of the rounded values.
    on_bad_rows : callable
        Called with the block of rows holding the first invalid value; it must raise (it words
        the error, as the module's validators do). A ``RuntimeError`` follows if it returns. It must
        pickle (a module-level function or a ``functools.partial`` of one) for a distributed cluster.
    chunk : int, optional
        Rows per block; default :func:`dpnb.numerics.linalg.gram_block_rows` (about 2 MB, in cache while BLAS
        reads it, for up to about 180 columns; at least 8 rows per column beyond).

    Returns
    -------
    G : ndarray of shape (n_features + n_classes, n_features + n_classes)

    Examples
    --------
    >>> def refuse(rows):
    ...     raise ValueError("X: values must lie in [0, 1]")
    >>> X = np.array([[0.5, 1.0, 0.0], [0.25, 0.0, 1.0]])
    >>> indicator_gram(X, np.empty(0, dtype=int), 1, np.array([[1, 3]]), grid=False, on_bad_rows=refuse)[3]
    array([0.75, 1.  , 1.  , 2.  ])
    """
    groups = np.asarray(groups, dtype=np.int64).reshape(-1, 2)
    y = np.asarray(y, dtype=np.int64)
    statistic = functools.partial(
        indicator_sums, n_classes=n_classes, groups=groups, grid=grid, on_bad_rows=on_bad_rows, chunk=chunk
    )
    second, sums, counts = row_sums(statistic, X, *((y,) if y.size else ()))
    p = second.shape[0]
    weight = GRID if grid else 1.0
    G = np.empty((p + n_classes, p + n_classes))
    G[:p, :p] = second
    G[p:, :p] = weight * sums
    G[:p, p:] = G[p:, :p].T
    G[p:, p:] = np.diag(weight * weight * counts.astype(float))
    return G


def indicator_sums(X, y=None, *, n_classes: int, groups, grid: bool, on_bad_rows, chunk: int | None = None):
    """``(sum x x^T, class sums, class counts)`` of some rows: the per-block statistic of :func:`indicator_gram`.

    The rows are checked and, with ``grid``, rounded (in ``2^16`` units) as :func:`indicator_gram` documents;
    ``y`` None puts every row in class 0. One pass in blocks of ``chunk`` rows
    (:func:`dpnb.numerics.blocks.float64_blocks`).
    """
    n, p = X.shape
    chunk = gram_block_rows(p) if chunk is None else chunk
    y = np.empty(0, dtype=np.int64) if y is None else y
    rounded = np.empty((min(chunk, n), p) if grid else (0, p))  # the grid values of one block
    second = np.zeros((p, p))
    sums, counts = np.zeros((n_classes, p)), np.zeros(n_classes, dtype=np.int64)
    for start, block in float64_blocks(X, chunk):
        rows = rounded[: block.shape[0]] if grid else block
        bad = indicator_block_sums(block, y[start : start + chunk], groups, grid, rounded, sums, counts)
        if bad >= 0:
            on_bad_rows(block)
            raise RuntimeError(f"row {start + bad} of a block failed the compiled check but not the validator")
        second += rows.T @ rows
    return second, sums, counts
