"""The package's compiled loops (numba): single passes over the data where NumPy would make several.

Each loop reads every value of its input once, in row order, and does only comparisons, copies
and exact arithmetic (``v 2^16``, ``rint``), so its result is the same on every machine whatever
instructions the compiler picks. They are called on cache-sized blocks or whole arrays by
:mod:`dpnb.numerics.gram` and :mod:`dpnb.ground.validation`, which word the errors; compiled code is cached on
disk after the first call (``cache=True``).
"""

from __future__ import annotations

import numba
import numpy as np

GRID = 2.0**16  # rounding grid of ``grid=True``: multiples of 2^-16, held as the integers v 2^16
_ROWS = 64  # rows checked between two tests of the running flag in first_row_outside


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
def fill_indicator_block(x, y, groups, grid, weight, out):  # pragma: no cover - compiled
    """Check the rows of ``x`` and write ``z_i = [x_i | weight e_{y_i}]`` into ``out``: the first bad row, else -1.

    A row is bad if a value is outside ``[0, 1]`` or NaN, or a one-hot group (columns
    ``groups[g, 0]..groups[g, 1] - 1``) is not 0/1 with exactly one 1. ``grid``: values are written
    as ``rint(v 2^16)`` (exact). ``y`` empty puts every row in class 0. Used by
    :func:`dpnb.numerics.gram.indicator_gram`, which documents the statistics.
    """
    m, p = x.shape
    n_classes = out.shape[1] - p
    for i in range(m):
        for j in range(p):
            v = x[i, j]
            if not (v >= 0.0 and v <= 1.0):  # NaN fails too
                return i
            out[i, j] = np.rint(v * GRID) if grid else v
        for g in range(groups.shape[0]):
            ones = 0
            for j in range(groups[g, 0], groups[g, 1]):
                v = x[i, j]
                if v == 1.0:
                    ones += 1
                elif v != 0.0:
                    return i
            if ones != 1:
                return i
        for c in range(n_classes):
            out[i, p + c] = 0.0
        out[i, p + (y[i] if y.shape[0] else 0)] = weight
    return -1
