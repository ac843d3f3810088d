"""The package's compiled loops (numba): single passes over the data where NumPy would make several.

Each loop reads every value of its input once, in row order, and does only comparisons, copies,
exact arithmetic (``v 2^16``, ``rint``) and sums in row order (no reassociation allowed), so its
result is the same on every machine whatever instructions the compiler picks. They are called on
cache-sized blocks or whole arrays by :mod:`dpnb.numerics.gram` and :mod:`dpnb.ground.validation`,
which word the errors; compiled code is cached on disk after the first call (``cache=True``).
"""

from __future__ import annotations

import numba
import numpy as np

GRID = 2.0**16  # rounding grid of ``grid=True``: multiples of 2^-16, held as the integers v 2^16
_ROWS = 64  # rows checked between two tests of the running flag in first_row_outside


@numba.njit(cache=True, nogil=True)
def value_range(y):  # pragma: no cover - compiled
    """``(min(y), max(y))`` of a non-empty 1-d array in one pass (NumPy's ``min`` and ``max`` make two)."""
    low = high = y[0]
    for v in y:
        low = min(low, v)
        high = max(high, v)
    return low, high


@numba.njit(cache=True, nogil=True)
def first_row_outside(x, low, high):  # pragma: no cover - compiled
    """Index of the first row of the matrix ``x`` with a value outside ``[low[j], high[j]]`` or NaN, else -1.

    Rows are scanned in groups of ``_ROWS`` with a branch-free running flag (which the compiler
    vectorises); only a group that fails is scanned again to find its first bad row.
    """
    m, p = x.shape
    for start in range(0, m, _ROWS):
        stop = min(start + _ROWS, m)
        inside = True
        for i in range(start, stop):
            for j in range(p):
                v = x[i, j]
                inside &= (v >= low[j]) & (v <= high[j])
        if not inside:
            for i in range(start, stop):
                for j in range(p):
                    v = x[i, j]
                    if not (v >= low[j] and v <= high[j]):
                        return i
    return -1


@numba.njit(cache=True, nogil=True)
def _onehot_ok(x, i, groups):  # pragma: no cover - compiled
    """Whether every one-hot group of row ``i`` (columns ``groups[g, 0]..groups[g, 1] - 1``) is 0/1 with one 1.

    Branch-free (values already known to lie in ``[0, 1]`` or to fail that check elsewhere): the
    group's values are all 0 or 1 and add up to exactly 1.
    """
    ok = True
    for g in range(groups.shape[0]):
        ones = 0.0
        for j in range(groups[g, 0], groups[g, 1]):
            v = x[i, j]
            ok &= (v == 0.0) | (v == 1.0)
            ones += v
        ok &= ones == 1.0
    return ok


@numba.njit(cache=True, nogil=True)
def _first_bad_row(x, groups):  # pragma: no cover - compiled
    """Index of the first row of ``x`` with a value outside ``[0, 1]``, NaN or a malformed one-hot group, else -1."""
    m, p = x.shape
    for i in range(m):
        for j in range(p):
            v = x[i, j]
            if not (v >= 0.0 and v <= 1.0):  # NaN fails too
                return i
        if not _onehot_ok(x, i, groups):
            return i
    return -1


@numba.njit(cache=True, nogil=True)
def indicator_block_sums(x, y, groups, grid, out, sums, counts):  # pragma: no cover - compiled
    """Check the rows of ``x``, add their per-class sums and counts: the first bad row, else -1.

    A row is bad if a value is outside ``[0, 1]`` or NaN, or a one-hot group (columns
    ``groups[g, 0]..groups[g, 1] - 1``) is not 0/1 with exactly one 1. Row ``i`` is added to
    ``sums[y[i]]`` and counted in ``counts[y[i]]`` (``y`` empty puts every row in class 0).
    ``grid``: every value is replaced by ``rint(v 2^16)`` (exact), written to ``out`` (the rows whose
    Gram matrix the caller forms) and summed as such; else ``out`` is not touched. The checks are
    branch-free running flags (the loop vectorises); only a block that fails is scanned again
    to find its first bad row. Used by :func:`dpnb.numerics.gram.indicator_gram`, which documents the
    statistics.
    """
    m, p = x.shape
    labelled = y.shape[0] > 0
    acc = np.zeros(sums.shape)  # local: the compiler may assume it aliases neither x nor out
    n_in = np.zeros(counts.shape, dtype=counts.dtype)
    ok = True
    for i in range(m):
        c = y[i] if labelled else 0
        n_in[c] += 1
        if grid:
            for j in range(p):
                v = x[i, j]
                ok &= (v >= 0.0) & (v <= 1.0)
                a = np.rint(v * GRID)
                out[i, j] = a
                acc[c, j] += a
        else:
            for j in range(p):
                v = x[i, j]
                ok &= (v >= 0.0) & (v <= 1.0)
                acc[c, j] += v
        if groups.shape[0]:
            ok &= _onehot_ok(x, i, groups)
    if not ok:
        return _first_bad_row(x, groups)
    sums += acc
    counts += n_in
    return -1
