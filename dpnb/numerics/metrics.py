"""Utility metrics shared by the chapters, computed exactly and without an ``n x n`` matrix in memory.

* :func:`silhouette_scores` -- the mean silhouette coefficient (Rousseeuw 1987), the clustering
  metric of PCA-Gauss's Table II and RON-Gauss's Table 3, for several labellings of the same rows
  at the cost of one pass over the pairwise distances (half of them: the matrix is symmetric).
* :func:`best_silhouette` -- the best of those scores over K-means labellings for several numbers of
  clusters, or None for a release with no cluster structure (every row the same point).
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.cluster import KMeans

from dpnb.ground.streams import sklearn_seed
from dpnb.ground.validation import check_array, check_integer, check_random_state

BLOCK_ROWS = 256  # rows per block of pairwise distances (a 256 x n block stays small for n of a few thousand)


def _label_codes(labelings, n: int) -> tuple[list[np.ndarray], list[int]]:
    """Each labelling as codes ``0..k-1`` shifted by the clusters of the labellings before it."""
    codes, offsets = [], [0]
    for labels in labelings:
        c = np.unique(np.asarray(labels), return_inverse=True)[1].reshape(-1)
        k = int(c.max()) + 1 if c.size else 0
        if c.size != n or not 2 <= k <= n - 1:
            raise ValueError(f"every labelling needs one entry per row of Z and 2..{n - 1} distinct values")
        codes.append(c + offsets[-1])
        offsets.append(offsets[-1] + k)
    return codes, offsets


def _distance_block(left, right, rows, cols) -> np.ndarray:
    """Euclidean distances between rows ``rows`` and ``cols`` from one product of the augmented rows.

    ``left = [Z, ||z||^2, 1]`` and ``right = [-2 Z, 1, ||z||^2]`` (:func:`_augmented`), so ``left[rows] @
    right[cols].T`` is ``||a||^2 + ||b||^2 - 2 <a, b> = ||a - b||^2`` in one matrix product; it is clipped at 0
    (round-off can make it slightly negative) before the square root.
    """
    d2 = left[rows] @ right[cols].T
    np.maximum(d2, 0.0, out=d2)
    return np.sqrt(d2, out=d2)


def _augmented(Z) -> tuple[np.ndarray, np.ndarray]:
    """``([Z, ||z||^2, 1], [-2 Z, 1, ||z||^2])`` for :func:`_distance_block`."""
    sq = np.einsum("ij,ij->i", Z, Z)[:, None]
    ones = np.ones_like(sq)
    return np.hstack([Z, sq, ones]), np.hstack([-2.0 * Z, ones, sq])


def _cluster_distance_sums(Z, onehot) -> np.ndarray:
    """``D @ onehot`` for the ``n x n`` distance matrix ``D`` of the rows of ``Z``, from its upper triangle.

    ``D`` is symmetric, so each block of rows ``I`` forms its distances to the rows ``j >= min(I)`` only, and
    adds them both to its own rows' sums and, transposed, to the sums of the rows after ``I``: half the
    distances of a full pass. The diagonal is set to exactly 0.
    """
    n = Z.shape[0]
    left, right = _augmented(Z)
    sums = np.zeros_like(onehot)
    for start in range(0, n, BLOCK_ROWS):
        stop = min(start + BLOCK_ROWS, n)
        block = _distance_block(left, right, slice(start, stop), slice(start, n))
        block[np.arange(stop - start), np.arange(stop - start)] = 0.0
        sums[start:stop] += block @ onehot[start:]
        sums[stop:] += block[:, stop - start :].T @ onehot[start:stop]
    return sums


def _cluster_distance_sums_of(Z, onehot, rows) -> np.ndarray:
    """``D[rows] @ onehot``: the per-cluster distance sums of the chosen rows only, block by block."""
    left, right = _augmented(Z)
    sums = np.empty((rows.size, onehot.shape[1]))
    for start in range(0, rows.size, BLOCK_ROWS):
        idx = rows[start : start + BLOCK_ROWS]
        block = _distance_block(left, right, idx, slice(None))
        block[np.arange(idx.size), idx] = 0.0
        sums[start : start + idx.size] = block @ onehot
    return sums


def silhouette_scores(Z, labelings, *, n_points=None, random_state=None) -> list[float]:
    """Mean silhouette coefficient of several clusterings of the same rows (Rousseeuw 1987).

    For point ``i`` with mean distance ``a_i`` to the other points of its cluster and smallest mean
    distance ``b_i`` to another cluster, ``s_i = (b_i - a_i) / max(a_i, b_i)`` (0 in a singleton
    cluster); the score is the mean of ``s_i``. The Euclidean distances of the centred rows are formed
    from the Gram matrix in blocks of ``BLOCK_ROWS`` rows (upper triangle only when every point is
    scored) and summed per cluster of **every** labelling with one product per block, so K-means over
    a grid of ``k`` costs one distance pass. Equal to ``sklearn.metrics.silhouette_score(Z, labels)``
    for each labelling up to rounding.

    Parameters
    ----------
    Z : array_like of shape (n_samples, n_features)
    labelings : sequence of array_like of shape (n_samples,)
        Each with 2 to ``n_samples - 1`` distinct labels.
    n_points : int, optional
        Average ``s_i`` over this many points drawn uniformly without replacement (each ``s_i``
        still exact, against all rows): an unbiased estimate at ``n_points / n_samples`` of the
        cost. None, or at least ``n_samples``: every point, and nothing is drawn.
    random_state : None, int, SeedSequence or Generator
        Used only to draw the subset.

    Returns
    -------
    list of float, one per labelling.
    """
    Z = check_array(Z, ndim=2, name="Z")
    n = Z.shape[0]
    codes, offsets = _label_codes(labelings, n)
    rows = np.arange(n)
    if n_points is not None and check_integer(n_points, "n_points", minimum=1) < n:
        rows = np.sort(check_random_state(random_state).choice(n, n_points, replace=False))
    onehot = np.zeros((n, offsets[-1]))
    for c in codes:
        onehot[np.arange(n), c] = 1.0
    sizes = onehot.sum(axis=0)
    Z = Z - Z.mean(axis=0)  # distances are translation-invariant; centred rows make the Gram formula more accurate
    if rows.size == n:
        sums = _cluster_distance_sums(Z, onehot)
    else:
        sums = _cluster_distance_sums_of(Z, onehot, rows)
    picked = np.arange(rows.size)
    scores = []
    for c, lo, hi in zip(codes, offsets[:-1], offsets[1:]):
        mine = c[rows]
        own = sizes[mine]
        a = np.divide(sums[picked, mine], own - 1, out=np.zeros(rows.size), where=own > 1)
        means = sums[:, lo:hi] / sizes[lo:hi]
        means[picked, mine - lo] = np.inf
        b = means.min(axis=1)
        top = np.maximum(a, b)
        scores.append(float(np.divide(b - a, top, out=np.zeros(rows.size), where=(top > 0) & (own > 1)).mean()))
    return scores


def best_silhouette(Z, n_clusters, *, n_init=1, n_points=None, random_state) -> float | None:
    """Best mean silhouette over K-means clusterings of ``Z``, one per number of clusters; None if ``Z`` has none.

    For each ``k`` of ``n_clusters`` in order, one seed is drawn from ``random_state``
    (:func:`~dpnb.ground.streams.sklearn_seed`) and ``KMeans(k, n_init=n_init, random_state=seed)`` labels the rows;
    then :func:`silhouette_scores` scores every labelling in one distance pass (drawing its subset of
    ``n_points`` rows from ``random_state``) and the largest score is returned. A release with no column,
    or whose rows are all the same point, has one cluster and no silhouette: the result is None and
    nothing is drawn from ``random_state``, so the caller decides how to score and report it.

    Parameters
    ----------
    Z : array_like of shape (n_samples, n_features)
        The rows to cluster; ``n_features`` may be 0.
    n_clusters : sequence of int
        Numbers of clusters tried, each in ``2 .. n_samples - 1`` (e.g. ``(2, 3, 4, 5)``, or ``(10,)``
        for a single K-means).
    n_init : int, default 1
        K-means restarts (k-means++ starts) per number of clusters.
    n_points : int, optional
        Average the silhouettes of this many rows drawn without replacement (see
        :func:`silhouette_scores`); None, or at least ``n_samples``: every row.
    random_state : None, int, SeedSequence or Generator
        The experiment's stream; a Generator is used (and advanced) as is.

    Returns
    -------
    float or None
        The best mean silhouette coefficient, in ``[-1, 1]``; None when ``Z`` has no column or all
        its rows are equal.

    Raises
    ------
    TypeError
        If ``n_clusters`` is not a sequence of integers, or ``n_init``, ``n_points`` or
        ``random_state`` has the wrong type.
    ValueError
        If ``Z`` is not a finite 2-d array, ``n_clusters`` is empty or has a value outside
        ``2 .. n_samples - 1``, or ``n_init`` or ``n_points`` is below 1.
    """
    Z = check_array(Z, ndim=2, name="Z")
    n = Z.shape[0]
    if not isinstance(n_clusters, (list, tuple, range, np.ndarray)) or getattr(n_clusters, "ndim", 1) == 0:
        raise TypeError(
            f"n_clusters must be a sequence of integers such as (2, 3, 4, 5), got {type(n_clusters).__name__}"
        )
    if len(n_clusters) == 0:
        raise ValueError("n_clusters is empty; pass at least one number of clusters, e.g. (2, 3, 4, 5)")
    ks = []
    for k in n_clusters:
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral):
            raise TypeError(f"n_clusters must hold integers, got {type(k).__name__} {k!r}")
        if not 2 <= k <= n - 1:
            raise ValueError(
                f"every number of clusters must lie in 2..{n - 1} (2 to one less than the {n} rows of Z), got {k}"
            )
        ks.append(int(k))
    n_init = check_integer(n_init, "n_init", minimum=1)
    if n_points is not None:
        n_points = check_integer(n_points, "n_points", minimum=1)
    rng = check_random_state(random_state)
    if Z.shape[1] == 0 or np.all(Z == Z[0]):  # one point: one cluster, no silhouette; nothing drawn
        return None
    labelings = [KMeans(k, n_init=n_init, random_state=sklearn_seed(rng)).fit_predict(Z) for k in ks]
    return max(silhouette_scores(Z, labelings, n_points=n_points, random_state=rng))
