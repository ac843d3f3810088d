"""Sums over rows, in memory or block by block on a Dask cluster, through one code path.

A fit whose release depends on ``X`` only through sums over its rows (a Gram matrix, class sums,
counts) splits into a *statistic* of a block of rows (the exact sums over that block, with the
public bounds checked on every row of it), a *combine* (the blocks' sums added) and a *finish* on the
client (noise drawn once from the estimator's ``random_state``, then post-processing).
:func:`row_sums` is the first two: for a NumPy array (a ``np.memmap`` included) it calls the
statistic once on the whole array, which itself reads it in cache-sized blocks; for a
``dask.array`` it calls the statistic on every chunk of rows, on the cluster (the default Dask
scheduler, or the ``distributed`` client in use), and adds the chunks' sums on the client in row
order. Only the per-chunk sums travel back, so the client never holds ``X``; a chunk whose
statistic raises (a row outside the public bounds, a failed read) makes :func:`row_sums` raise that
error, before anything is released.

The two paths differ only in the order of the additions, so their results agree to the
round-off of summation (``|fl(S) - S| <= (m - 1) u sum |terms|`` for ``m`` terms, ``u = 2^-53``):
a fit on the Dask array of some data releases what the in-memory fit of the same data releases
with the same seed, up to that round-off (``tests/papers/test_dask_fits.py``).

Dask is imported only when the input is a Dask array: the runtime does not need it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator

import numpy as np

from dpnb.ground.validation import check_array
from dpnb.numerics.linalg import block_rows

FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))  # kept as given: read in blocks, summed in float64


def is_dask_array(X) -> bool:
    """True when ``X`` is a ``dask.array.Array`` (decided without importing Dask)."""
    return type(X).__module__.split(".")[0] == "dask" and hasattr(X, "chunks") and hasattr(X, "to_delayed")


def check_rows(X, *, name: str = "X", min_rows: int = 1):
    """``X`` as a 2-D array of rows for :func:`row_sums`, without a copy where possible.

    float32 and float64 arrays (memmaps included) and Dask arrays of those types are returned as
    they are: the statistics read them in blocks and accumulate in float64, so no float64 copy of
    ``X`` is made. Anything else goes through :func:`dpnb.ground.validation.check_array` (a float64
    array; finiteness is left to the statistic, which checks every value it reads).

    Examples
    --------
    >>> X = np.zeros((3, 2), dtype=np.float32)
    >>> check_rows(X) is X
    True
    """
    if is_dask_array(X):
        if X.ndim != 2:
            raise ValueError(f"{name} must be 2-dimensional, got shape {X.shape}")
        if np.dtype(X.dtype) not in FLOAT_DTYPES:
            raise TypeError(
                f"{name} must be a Dask array of float32 or float64, got {X.dtype}; use {name}.astype(float)"
            )
        if any(np.isnan(size) for size in X.chunks[0]):
            raise ValueError(f"{name} has unknown chunk sizes; call {name}.compute_chunk_sizes() first")
        if X.shape[0] < min_rows:
            raise ValueError(f"{name} needs at least {min_rows} row(s), got {X.shape[0]}")
        return X
    if isinstance(X, np.ndarray) and X.dtype in FLOAT_DTYPES:
        if X.ndim != 2:
            raise ValueError(f"{name} must be 2-dimensional, got shape {X.shape}")
        if X.shape[0] < min_rows:
            raise ValueError(f"{name} needs at least {min_rows} row(s), got {X.shape[0]}")
        return X
    return check_array(X, ndim=2, name=name, min_rows=min_rows, finite=False)


def float64_blocks(X, chunk: int | None = None) -> Iterator[tuple[int, np.ndarray]]:
    """``(start, rows)`` for the row blocks of ``X``, as float64.

    Blocks of ``chunk`` rows, by default :func:`dpnb.numerics.linalg.block_rows` (cache-sized).
    A float64 ``X`` yields views; any other dtype is converted block by block into one reused buffer
    (exact for float32), so a pass never holds a float64 copy of ``X`` nor allocates per block. The
    buffer is overwritten by the next block: use each block before asking for the next.

    Examples
    --------
    >>> [(start, rows.dtype.name, len(rows)) for start, rows in float64_blocks(np.ones((3, 2), np.float32))]
    [(0, 'float64', 3)]
    """
    n = X.shape[0]
    chunk = block_rows(X.shape[1]) if chunk is None else chunk
    if X.dtype == np.float64:
        for start in range(0, n, chunk):
            yield start, X[start : start + chunk]
        return
    buffer = np.empty((min(chunk, n), X.shape[1]))
    for start in range(0, n, chunk):
        block = buffer[: min(chunk, n - start)]
        block[...] = X[start : start + chunk]
        yield start, block


def row_sums(statistic: Callable, X, *columns) -> tuple[np.ndarray, ...]:
    """The sums over all rows of ``statistic(block, *column_blocks)``, block by block for a Dask ``X``.

    Parameters
    ----------
    statistic : callable
        ``statistic(X_rows, *columns_rows) -> tuple of ndarrays``: the exact sums over the given
        rows, raising ``ValueError`` (nothing returned) if a row breaks the public bounds. It must
        be picklable for a distributed cluster (a module-level function or a ``functools.partial``
        of one).
    X : ndarray or dask.array of shape (n_samples, n_features)
        As returned by :func:`check_rows`.
    *columns : ndarray of shape (n_samples,)
        Per-row values read with ``X`` (class labels), sliced like ``X``'s chunks.

    Returns
    -------
    sums : tuple of ndarrays
        For a NumPy ``X``: ``statistic(X, *columns)``. For a Dask ``X``: the chunks' statistics
        (computed on the cluster, one task per chunk of rows, the columns rechunked into one) added
        on the client in row order.

    Examples
    --------
    >>> def moments(rows):
    ...     return rows.sum(axis=0), np.array(len(rows))
    >>> row_sums(moments, np.ones((4, 2)))
    (array([4., 4.]), array(4))
    """
    if not is_dask_array(X):
        return tuple(statistic(X, *columns))
    import dask

    X = X.rechunk({1: -1})
    tasks, start = [], 0
    for block, size in zip(X.to_delayed().ravel(), X.chunks[0], strict=True):
        tasks.append(dask.delayed(statistic, pure=True)(block, *(c[start : start + size] for c in columns)))
        start += size
    parts = dask.compute(*tasks)
    total = tuple(np.array(part, copy=True) for part in parts[0])
    for part in parts[1:]:
        for acc, value in zip(total, part, strict=True):
            acc += value
    return total


def map_rows(function, X, n_columns: int):
    """``function`` applied to blocks of rows: ``function(X)`` for a NumPy ``X``, a lazy Dask array for a Dask ``X``.

    For a Dask ``X`` every chunk of rows (all columns) becomes ``function(chunk)``, an
    ``(m, n_columns)`` float64 block, computed on the cluster when the result is computed; an error
    raised by ``function`` on any chunk is raised by that computation.

    Examples
    --------
    >>> map_rows(lambda rows: 2 * rows, np.ones((2, 1)), 1)
    array([[2.],
           [2.]])
    """
    if not is_dask_array(X):
        return function(X)
    X = X.rechunk({1: -1})
    return X.map_blocks(function, dtype=np.float64, chunks=(X.chunks[0], (n_columns,)))


def project_rows(X, M, chunk: int = 8192) -> np.ndarray:
    """``X M`` as a float64 array in memory, formed ``chunk`` rows at a time (NumPy) or per chunk on the cluster (Dask).

    One ``(n, k)`` output and no float64 copy of ``X``: NumPy rows are multiplied in blocks of
    ``chunk`` rows into the output; a Dask array's chunks are multiplied on the cluster and stored
    into it. The two agree to BLAS round-off (one dot product of length ``d`` per entry).

    Examples
    --------
    >>> project_rows(np.ones((3, 2), np.float32), np.eye(2)[:, :1]).ravel()
    array([1., 1., 1.])
    """
    M = np.asarray(M, dtype=np.float64)
    out = np.empty((X.shape[0], M.shape[1]))
    if is_dask_array(X):
        import dask.array as da

        da.store(map_rows(functools.partial(_times, M=M), X, M.shape[1]), out, lock=False)
        return out
    for start in range(0, X.shape[0], chunk):
        np.matmul(X[start : start + chunk], M, out=out[start : start + chunk])
    return out


def _times(rows, M) -> np.ndarray:
    """``rows M`` (a picklable product for :func:`project_rows`'s Dask path)."""
    return rows @ M
