"""Differentially private data publishing through component analysis (Jiang et al., TDP 2013).

Two mechanisms from the paper, as audited in ``notebooks/component_analysis.md``:

* :class:`DPPCAPublisher` -- Section 3.1, "PCA-based PPDP": Laplace noise on the sums of
  ``x`` and of the upper triangle of ``x x^T`` (budget ``epsilon/2``, Lemma 1), top-``k``
  eigenvectors of the noisy covariance, Laplace noise on every record's ``k`` projected
  coordinates (budget ``epsilon/2``, Lemmas 2-3), and reconstruction in the original space.
  The output keeps one row per input row, in order (the paper's "one-to-one mapping").
* :class:`DPLDAPublisher` -- Section 3.2, "LDA-based PPDP": Laplace noise on the per-class
  sums and the pooled second moment, then the paper's greedy sampler (Section 3.2,
  "Sampling") that draws records whose statistics approximately match the noisy ones in L1;
  :func:`sample_releases` runs the samplers of many releases in lockstep (same records, faster).

Baselines: :func:`laplace_identity` (the Laplace mechanism on the raw records, Theorem 3 and
Fig. 2) and :func:`component_laplace` (noise on one public direction, the toy example of Fig. 1).

Neighbouring datasets
---------------------
Both mechanisms release exactly ``n`` records and divide by ``n``, so they can only be DP for
*replace-one* neighbours (same ``n``; one record replaced by any record of the domain). The
paper's Definition 1 (symmetric difference of one record) is add/remove, under which the
row count alone distinguishes neighbours. For DP-LDA a replaced record may change class;
the class sizes then change, and this module privatises them (the paper does not; see
:class:`DPLDAPublisher`). :class:`AddRemoveRows` lets the audits search add/remove pairs too.

Data layout
-----------
Rows are ``[numeric columns | dummy groups]``: ``p1`` numeric attributes first, each in
``[0, 1]``, then one one-hot group per categorical attribute, of the sizes in
``group_sizes``. Data outside ``[0, 1]`` or with a malformed one-hot group is *rejected*
with ValueError (the bounds are public arguments, never read from the data; rescale with
``dpnb.ground.datasets.scale_to_box`` and declared bounds first).
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import TransformerMixin
from sklearn.utils.validation import check_is_fitted

from dpnb.ground.validation import (
    check_array,
    check_choice,
    check_data_in_bounds,
    check_epsilon,
    check_in_box,
    check_integer,
    check_n_components,
    check_random_state,
    check_release_range,
    check_sensitivity,
)
from dpnb.numerics.gram import indicator_gram
from dpnb.numerics.linalg import top_eigenvectors, triangle
from dpnb.privacy.audit import NeighborRelation
from dpnb.privacy.estimator import PrivateEstimator, split_budget
from dpnb.privacy.exact_noise import check_noise
from dpnb.privacy.mechanisms import laplace_mechanism, symmetric_laplace_mechanism

CALIBRATIONS = ("corrected", "paper")
NEIGHBOURS = ("replace", "add-remove")
_ONE_BITS = np.float64(1.0).view(np.uint64)  # the float 1.0 read as an unsigned integer


# --------------------------------------------------------------------------------------
# Layout and input checks
# --------------------------------------------------------------------------------------
def _check_group_sizes(group_sizes, n_columns: int | None = None) -> tuple[int, ...]:
    if isinstance(group_sizes, (str, bytes)) or not hasattr(group_sizes, "__iter__"):
        raise TypeError(f"group_sizes must be a sequence of ints, got {type(group_sizes).__name__}")
    sizes = tuple(group_sizes)
    for s in sizes:
        if isinstance(s, bool) or not isinstance(s, numbers.Integral) or s < 2:
            raise ValueError(f"group_sizes must be integers >= 2 (levels per categorical attribute), got {sizes}")
    if n_columns is not None and sum(sizes) > n_columns:
        raise ValueError(f"group_sizes add up to {sum(sizes)} dummy columns but the data has only {n_columns} columns")
    return tuple(int(s) for s in sizes)


def _group_slices(n_numeric: int, group_sizes) -> list[slice]:
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
    X, n_numeric, sizes = _onehot_layout(X, group_sizes)
    _check_onehot_block(X, n_numeric, sizes)
    return X, n_numeric


def _onehot_layout(X, group_sizes) -> tuple[np.ndarray, int, tuple[int, ...]]:
    """``X`` as a non-empty 2-D float64 array, its number of numeric columns and the group sizes (no value checks)."""
    X = check_array(X, ndim=2, name="X", finite=False)  # finiteness: with the value checks of the moments pass
    sizes = _check_group_sizes(group_sizes, X.shape[1])
    return X, X.shape[1] - sum(sizes), sizes


def _check_onehot_block(block, n_numeric: int, sizes) -> None:
    """The value checks of :func:`check_onehot_data` on some rows: finite, in ``[0, 1]``, valid one-hot groups."""
    # Read as unsigned 64-bit integers, the floats in [+0, 1] are exactly [0, bits of 1.0] (the sign bit
    # makes negatives, -0.0 included, larger; NaN and inf lie above): one pass, no temporaries. Only a
    # failure pays for min/max (which accept -0.0); the shared validators word the error.
    if block.view(np.uint64).max() > _ONE_BITS and not (block.min() >= 0.0 and block.max() <= 1.0):
        check_in_box(check_array(block, ndim=2, name="X"), 0.0, 1.0, name="X")
    for sl in _group_slices(n_numeric, sizes):
        dummies = block[:, sl]
        if np.any((dummies != 0) & (dummies != 1)) or np.any(dummies.sum(axis=1) != 1):
            raise ValueError(
                f"columns {sl.start}..{sl.stop - 1} must be one-hot dummies (0/1, one 1 per row); "
                "check group_sizes and the column order [numeric | dummy groups]"
            )


def _onehot_gram(X, y, n_classes: int, n_numeric: int, sizes, *, grid: bool, chunk: int) -> np.ndarray:
    """:func:`dpnb.numerics.gram.indicator_gram` of ``[numeric | one-hot]`` rows.

    Errors are worded as :func:`check_onehot_data`'s.
    """
    groups = np.array([(sl.start, sl.stop) for sl in _group_slices(n_numeric, sizes)], dtype=np.int64)
    return indicator_gram(
        X,
        y,
        n_classes,
        groups.reshape(-1, 2),
        grid=grid,
        on_bad_rows=lambda block: _check_onehot_block(block, n_numeric, sizes),
        chunk=chunk,
    )


def _checked_moments(X, n_numeric: int, sizes, chunk: int = 2048) -> tuple[np.ndarray, np.ndarray]:
    """``(sum x, sum x x^T)`` of a ``[numeric | one-hot]`` matrix, validated on the way, in one pass.

    The Gram matrix of the rows ``[x | 1]`` (:func:`dpnb.numerics.gram.indicator_gram`): its last row is
    ``sum x``. Every block of ``chunk`` rows is checked as :func:`check_onehot_data` would. Equal
    to ``(X.sum(axis=0), X.T @ X)`` up to rounding (the summation order differs).
    """
    p = X.shape[1]
    gram = _onehot_gram(X, np.empty(0, dtype=np.int64), 1, n_numeric, sizes, grid=False, chunk=chunk)
    return gram[p, :p].copy(), gram[:p, :p].copy()


def decode_dummies(X, group_sizes=()) -> np.ndarray:
    """Post-process a noisy release back into the data format (Section 3.1, "value recovery").

    Numeric columns are clipped to ``[0, 1]``; each dummy group becomes one-hot at its largest
    noisy value (the paper's argmax recovery). Post-processing: costs no privacy.
    """
    X = check_array(X, ndim=2, name="X")
    sizes = _check_group_sizes(group_sizes, X.shape[1])
    n_numeric = X.shape[1] - sum(sizes)
    out = np.clip(X, 0.0, 1.0)
    for sl in _group_slices(n_numeric, sizes):
        block = np.zeros_like(X[:, sl])
        block[np.arange(X.shape[0]), np.argmax(X[:, sl], axis=1)] = 1.0
        out[:, sl] = block
    return out


# --------------------------------------------------------------------------------------
# Sensitivities
# --------------------------------------------------------------------------------------
def _check_counts(n_numeric, n_categorical) -> tuple[int, int]:
    n_numeric = check_integer(n_numeric, "n_numeric", minimum=0)
    n_categorical = check_integer(n_categorical, "n_categorical", minimum=0)
    if n_numeric + n_categorical == 0:
        raise ValueError("need at least one attribute (n_numeric + n_categorical >= 1)")
    return n_numeric, n_categorical


def _max_over_t(p1: int, p2: int, slope_sign: int) -> float:
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
    p1, p2 = _check_counts(n_numeric, n_categorical)
    q = p1 + p2
    return float(q + q * (q + 1) / 2)


def moment_sensitivity(
    n_numeric: int, n_categorical: int = 0, *, calibration: str = "corrected", neighbours: str = "replace"
) -> float:
    """L1 sensitivity of ``(sum x, upper triangle of sum x x^T)`` (Section 3.1, Lemma 1).

    Parameters
    ----------
    n_numeric, n_categorical : int
        ``p1`` numeric attributes in ``[0, 1]`` and ``p2`` one-hot coded categorical attributes.
    calibration : {"corrected", "paper"}
        ``"paper"``: Section 3.1, ``s = p + p(p+1)/2`` for numeric data and
        ``(p1 + 2 p2) + [(p1+p2)(p1+p2+1) + p2(p2+1)]/2`` with dummies (whatever ``neighbours``).
        ``"corrected"``: the true supremum for ``neighbours``.
    neighbours : {"replace", "add-remove"}
        ``"replace"``: ``max_t p1(1-t) + p1(p1+1)(1-t^2)/2 + p1 p2 (1+t) + 2 p2 + p2(p2+1)``
        (derived in the notebook); it equals the paper's value for ``p2 <= 1`` and exceeds it
        when ``p1 >= 1`` and ``p2 >= 2``. ``"add-remove"``: :func:`record_contribution`.
    """
    p1, p2 = _check_counts(n_numeric, n_categorical)
    check_choice(neighbours, "neighbours", NEIGHBOURS)
    if check_choice(calibration, "calibration", CALIBRATIONS) == "paper":
        return float(p1 + 2 * p2 + ((p1 + p2) * (p1 + p2 + 1) + p2 * (p2 + 1)) / 2)
    if neighbours == "add-remove":
        return record_contribution(p1, p2)
    return _max_over_t(p1, p2, -1)


def lda_sensitivity(
    n_numeric: int, n_categorical: int = 0, *, calibration: str = "corrected", neighbours: str = "replace"
) -> float:
    """L1 sensitivity of ``(class sums, upper triangle of pooled sum x x^T)`` (Section 3.2, step 2).

    ``"paper"``: ``2p + p(p+1)/2`` (numeric) and ``2(p1+p2) + [(p1+p2+1)(p1+p2) + p2(p2+1)]/2``
    (dummies). ``"corrected"`` with ``neighbours="replace"`` (the replaced record may change
    class): ``max_t p1(1+t) + 2 p2 + p1(p1+1)(1-t^2)/2 + p1 p2 (1+t) + p2(p2+1)``, the
    cross-class case, which dominates the within-class one; with ``"add-remove"``:
    :func:`record_contribution`. Class *counts* are not included; their sensitivity is 2
    (replace) or 1 (add/remove) and :class:`DPLDAPublisher` releases them separately.
    """
    p1, p2 = _check_counts(n_numeric, n_categorical)
    check_choice(neighbours, "neighbours", NEIGHBOURS)
    if check_choice(calibration, "calibration", CALIBRATIONS) == "paper":
        return float(2 * (p1 + p2) + ((p1 + p2 + 1) * (p1 + p2) + p2 * (p2 + 1)) / 2)
    if neighbours == "add-remove":
        return record_contribution(p1, p2)
    return _max_over_t(p1, p2, +1)


def row_diameter(n_numeric: int, n_categorical: int = 0, *, norm: int = 1) -> float:
    """Largest ``||x - x'||`` between two rows of the ``[0,1]^p1 x one-hot`` layout.

    ``norm=1``: ``p1 + 2 p2`` (the identity query's replace-one L1 sensitivity); ``norm=2``:
    ``sqrt(p1 + 2 p2)``. For numeric data (``p2 = 0``) these are ``p`` and ``sqrt(p)``.
    """
    p1, p2 = _check_counts(n_numeric, n_categorical)
    if norm not in (1, 2):
        raise ValueError(f"norm must be 1 or 2, got {norm!r}")
    return float(p1 + 2 * p2) if norm == 1 else float(np.sqrt(p1 + 2 * p2))


def projection_sensitivity(n_components: int, n_features: int, *, diameter: float | None = None) -> float:
    """Lemma 2: L1 sensitivity ``sqrt(k p)`` of one record's projection ``U_k x``, x in [0,1]^p.

    Cauchy-Schwarz and Bessel give ``||U_k (x - x')||_1 <= sqrt(k) ||x - x'||_2 <= sqrt(k p)``;
    the bound is attained for some orthonormal ``U_k`` (the notebook constructs one). With
    ``diameter`` (the rows' L2 diameter, e.g. :func:`row_diameter` with ``norm=2``) the bound
    is ``sqrt(k) * diameter``.
    """
    p = check_integer(n_features, "n_features")
    k = check_n_components(n_components, p)
    if diameter is None:
        return float(np.sqrt(k * p))
    if isinstance(diameter, bool) or not isinstance(diameter, numbers.Real):
        raise TypeError(f"diameter must be a real number, got {type(diameter).__name__}")
    if not 0 < diameter <= np.sqrt(p) * (1 + 1e-12):
        raise ValueError(f"diameter must lie in (0, sqrt(n_features)] for rows in [0, 1]^p, got {diameter}")
    return float(np.sqrt(k) * diameter)


def basis_projection_sensitivity(components, return_pair: bool = False):
    """Exact L1 sensitivity of ``x -> U x`` over ``x in [0, 1]^p`` for a *given* basis ``U`` (k x p).

    ``||U d||_1 = max_s s^T U d`` over sign vectors ``s``, and ``max_{d in [-1,1]^p} (U^T s)^T d
    = ||U^T s||_1``, so the sensitivity is ``max_{s in {-1,1}^k} ||U^T s||_1`` (at most
    :func:`projection_sensitivity`). Enumerates the ``2^(k-1)`` sign patterns up to a global
    sign, so ``k <= 20``. With ``return_pair``, also returns rows ``x, x'`` of ``{0,1}^p``
    attaining it.
    """
    U = check_array(components, ndim=2, name="components")
    k = U.shape[0]
    if k > 20:
        raise ValueError(f"enumerating sign patterns needs k <= 20 components, got {k}")
    signs = 1 - 2 * ((np.arange(2 ** (k - 1))[:, None] >> np.arange(k)) & 1)
    values = np.abs(signs @ U).sum(axis=1)
    best = int(np.argmax(values))
    if not return_pair:
        return float(values[best])
    x = (signs[best] @ U > 0).astype(float)
    return float(values[best]), x, 1.0 - x


def worst_case_rows(n_numeric: int, group_sizes=(), *, between_classes: bool = False):
    """The explicit replace-one pair attaining :func:`moment_sensitivity` / :func:`lda_sensitivity`.

    ``x`` has every numeric attribute at 1 and level 0 of each group; ``x'`` has its numerics
    at the maximiser ``t*`` (clipped ``(p2 -+ 1)/(p1 + 1)``, notebook D6/D7) and level 1 of each
    group. ``between_classes=True`` appends class labels 0 (``x``) and 1 (``x'``): the DP-LDA
    worst case, a record that changes class.
    """
    sizes = _check_group_sizes(group_sizes)
    p1, p2 = _check_counts(n_numeric, len(sizes))
    slope = 1 if between_classes else -1
    t = 0.0 if p1 == 0 else float(np.clip((p2 + slope) / (p1 + 1), 0.0, 1.0))
    labels = ([[0.0]], [[1.0]]) if between_classes else ([], [])
    x = np.concatenate([np.ones(p1)] + [np.eye(s)[0] for s in sizes] + labels[0])
    x_prime = np.concatenate([np.full(p1, t)] + [np.eye(s)[1] for s in sizes] + labels[1])
    return x, x_prime


def tight_basis(n_components: int, n_features: int, *, random_state=None) -> np.ndarray:
    """An orthonormal ``U`` (k x p) with ``U 1 = sqrt(p / k) 1``: Lemma 2's bound is attained by it.

    Rows span ``1 / sqrt(p)`` with equal inner products (an orthonormal basis containing
    ``1 / sqrt(p)``, rotated by the Householder map ``e_1 -> 1 / sqrt(k)``), so
    ``||U (1 - 0)||_1 = k sqrt(p / k) = sqrt(k p)``.
    """
    p = check_integer(n_features, "n_features")
    k = check_n_components(n_components, p)
    rng = check_random_state(random_state)
    B, _ = np.linalg.qr(np.column_stack([np.ones(p), rng.standard_normal((p, k - 1))]))
    B[:, 0] = 1.0 / np.sqrt(p)
    if k == 1:
        return B.T
    v = np.full(k, 1.0 / np.sqrt(k)) - np.eye(k)[0]
    return (B @ (np.eye(k) - 2.0 * np.outer(v, v) / (v @ v))).T


# --------------------------------------------------------------------------------------
# Neighbour relations for the audits
# --------------------------------------------------------------------------------------
class OneHotRows(NeighborRelation):
    """Replace one row of ``[numeric in [0,1] | one-hot groups | optional class label]``.

    With ``n_classes`` set, the last column is an integer class label in ``0..n_classes-1``
    and a replacement may change it (Section 3.2's "replacement between classes").
    """

    def __init__(self, n_numeric: int, group_sizes=(), n_classes: int | None = None):
        self.n_numeric, _ = _check_counts(n_numeric, len(tuple(group_sizes)))
        self.group_sizes = _check_group_sizes(group_sizes)
        self.n_classes = None if n_classes is None else check_integer(n_classes, "n_classes", minimum=2)
        self.width = self.n_numeric + sum(self.group_sizes) + (n_classes is not None)
        self._bounds = [(sl.start, sl.stop) for sl in _group_slices(self.n_numeric, self.group_sizes)]
        label = f", class label in 0..{n_classes - 1}" if n_classes else ""
        self.description = (
            f"replace one row: {self.n_numeric} numeric in [0,1], dummy groups {list(self.group_sizes)}{label}"
        )

    def _check_width(self, d):
        if d != self.width:
            raise ValueError(f"this relation has rows of width {self.width}, got d={d}")

    def random_row(self, d, rng):
        self._check_width(d)
        u = rng.random(self.n_numeric)
        parts = [np.round(u) if rng.random() < 0.5 else u]
        parts += [np.eye(s)[rng.integers(s)] for s in self.group_sizes]
        if self.n_classes:
            parts.append([rng.integers(self.n_classes)])
        return np.concatenate(parts).astype(float)

    def project_row(self, row):
        row = np.asarray(row, dtype=float)
        self._check_width(row.size)
        out = np.zeros_like(row)
        out[: self.n_numeric] = np.minimum(np.maximum(row[: self.n_numeric], 0.0), 1.0)
        for start, stop in self._bounds:
            out[start + int(row[start:stop].argmax())] = 1.0
        if self.n_classes:
            out[-1] = min(max(round(float(row[-1])), 0), self.n_classes - 1)
        return out

    def random_rows(self, m, d, rng):
        self._check_width(d)
        u = rng.random((m, self.n_numeric))
        vertex = rng.random(m) < 0.5  # as random_row: half the rows with numerics at vertices
        u[vertex] = np.round(u[vertex])
        parts = [u] + [np.eye(s)[rng.integers(s, size=m)] for s in self.group_sizes]
        if self.n_classes:
            parts.append(rng.integers(self.n_classes, size=(m, 1)))
        return np.hstack(parts).astype(float)

    def project_rows(self, rows):
        rows = np.asarray(rows, dtype=float)
        self._check_width(rows.shape[1])
        out = np.zeros_like(rows)
        out[:, : self.n_numeric] = np.clip(rows[:, : self.n_numeric], 0.0, 1.0)
        every = np.arange(rows.shape[0])
        for start, stop in self._bounds:
            out[every, start + np.argmax(rows[:, start:stop], axis=1)] = 1.0
        if self.n_classes:
            out[:, -1] = np.clip(np.round(rows[:, -1]), 0, self.n_classes - 1)
        return out

    def perturb_rows(self, rows, rng, steps):
        # the one-row move (NeighborRelation.perturb_row): Gaussian steps, then the projection
        return self.project_rows(rows + np.asarray(steps, dtype=float)[:, None] * rng.standard_normal(rows.shape))


class AddRemoveRows(NeighborRelation):
    """Add/remove neighbours (the paper's Definition 1) for a search over fixed-shape arrays.

    Rows carry a trailing *presence* column: every row of ``X`` is present (1); the neighbour
    ``X'`` is ``X`` with row ``i`` marked absent (0), i.e. that record removed (adding is the
    same pair read the other way). Queries must count only the present rows: pass the presence
    column as row weights (``moments_vector(Z[..., :-1], weights=Z[..., -1])``; a sum with 0/1
    weights is the sum over the present rows). The other columns follow ``inner``, any
    replace-one relation.
    """

    def __init__(self, inner: NeighborRelation):
        if not isinstance(inner, NeighborRelation):
            raise TypeError(f"inner must be a NeighborRelation, got {type(inner).__name__}")
        self.inner = inner
        self.description = f"add/remove one row; rows: {inner.description}"

    def random_row(self, d, rng):
        return np.append(self.inner.random_row(d - 1, rng), 1.0)

    def project_row(self, row):
        return np.append(self.inner.project_row(np.asarray(row, dtype=float)[:-1]), 1.0)

    def neighbor(self, X, i, candidate):
        X2 = X.copy()
        X2[i, -1] = 0.0
        return X2

    def random_rows(self, m, d, rng):
        return np.column_stack([self.inner.random_rows(m, d - 1, rng), np.ones(m)])

    def project_rows(self, rows):
        return np.column_stack([self.inner.project_rows(np.asarray(rows, dtype=float)[:, :-1]), np.ones(len(rows))])

    def perturb_rows(self, rows, rng, steps):
        # the one-row move (NeighborRelation.perturb_row): Gaussian steps, then the projection
        return self.project_rows(rows + np.asarray(steps, dtype=float)[:, None] * rng.standard_normal(rows.shape))

    def neighbors(self, X, i, candidates):
        """Row ``i`` marked absent in every dataset of the stack ``X`` (the candidates play no part)."""
        X2 = X.copy()
        X2[:, i, -1] = 0.0
        return X2


# --------------------------------------------------------------------------------------
# Statistics
# --------------------------------------------------------------------------------------
def _check_datasets(X, name: str = "X") -> np.ndarray:
    """``X`` as a finite float64 dataset ``(n, p)`` or stack of datasets ``(m, n, p)``."""
    X = check_array(X, ndim=None, name=name, min_rows=0)
    if X.ndim not in (2, 3):
        raise ValueError(f"{name} must be a dataset (n, p) or a stack of datasets (m, n, p), got shape {X.shape}")
    return X


def _row_weights(weights, shape: tuple[int, ...]) -> np.ndarray | None:
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
        Row weights; default 1. With 0/1 weights (the presence column of :class:`AddRemoveRows`)
        the sums run over the rows of weight 1 only.

    Returns
    -------
    sums : ndarray of shape (..., p)
    second : ndarray of shape (..., p, p)
    """
    X = _check_datasets(X)
    w = _row_weights(weights, X.shape[:-1])
    Xw = X if w is None else X * w[..., None]
    return Xw.sum(axis=-2), np.swapaxes(Xw, -1, -2) @ X


def moments_vector(X, weights=None) -> np.ndarray:
    """``(sum x, triangle(sum x x^T))`` as one vector (one per dataset of a stack): the query of Lemma 1.

    ``X`` and ``weights`` as in :func:`moment_sums`.
    """
    sums, second = moment_sums(X, weights)
    return np.concatenate([sums, triangle(second)], axis=-1)


def _check_labels(y, shape: tuple[int, ...], n_classes: int) -> np.ndarray:
    """Integer labels in ``0..n_classes-1`` of the given shape (one per row of the data)."""
    y = check_array(y, ndim=len(shape), name="y", min_rows=0)
    if y.shape != shape:
        raise ValueError(f"y has {y.size} labels but X has {int(np.prod(shape))} rows")
    if np.any(y != np.round(y)) or np.any(y < 0) or np.any(y >= n_classes):
        raise ValueError(f"y must hold integer class labels in 0..{n_classes - 1} (encode labels first)")
    return y.astype(int)


def class_sums(X, y, n_classes: int, weights=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(per-class sums (C, p), class counts (C,), pooled sum x x^T (p, p))`` (Section 3.2, step 1).

    ``y`` holds integer labels in ``0..n_classes-1``, one per row. ``X`` may be a stack of
    datasets ``(m, n, p)`` with labels ``(m, n)`` (every output gains a leading axis ``m``), and
    ``weights`` row weights as in :func:`moment_sums` (counts are then sums of weights).
    """
    X = _check_datasets(X)
    n_classes = check_integer(n_classes, "n_classes", minimum=2)
    y = _check_labels(y, X.shape[:-1], n_classes)
    w = _row_weights(weights, X.shape[:-1])
    onehot = np.eye(n_classes)[y] if w is None else np.eye(n_classes)[y] * w[..., None]
    return np.swapaxes(onehot, -1, -2) @ X, onehot.sum(axis=-2), moment_sums(X, w)[1]


def _grid_class_moments(
    X, y, n_classes: int, n_numeric: int, sizes, chunk: int = 2048
) -> tuple[np.ndarray, np.ndarray]:
    """Class sums and pooled ``sum x x^T`` of the rows of ``X`` rounded to the grid ``2^-16``: exact, in any order.

    ``X`` is a ``[numeric | one-hot]`` matrix (``n_numeric`` numeric columns, groups of ``sizes``),
    validated on the way block by block as :func:`check_onehot_data` would (one pass over the data).

    Every entry of ``X`` (in ``[0, 1]``) is first rounded to the nearest multiple of ``2^-16``
    (ties to even). This is a fixed map of each record into the same domain ``[0, 1]^p``, applied
    before any statistic, so the sensitivities (suprema over that domain) and the privacy analysis
    are unchanged; it moves an attribute by at most ``2^-17``, far below the noise.

    Exactness. A rounded entry is ``a 2^-16`` with an integer ``0 <= a <= 2^16``; so is a class
    indicator (``a`` = 0 or ``2^16``). The sums are computed on the integers ``a`` (one Gram
    matrix of ``[a | 2^16 onehot(y)]``, whose blocks are ``2^32`` times the pooled second moment
    and the class sums) and scaled by ``2^-32`` at the end, a power of two, hence exact. Every
    product ``a b <= 2^32`` is an integer, exact in float64; a sum of ``N`` of them, and every
    partial sum in any order or grouping, is an integer of at most ``N 2^32``, representable in
    float64 (53-bit significand) whenever ``N <= 2^21``. Each addition (or fused multiply-add)
    then has a representable exact result, which IEEE arithmetic returns without rounding. So for
    up to ``2^21`` rows the result is the exact sum, bit-identical for any summation order,
    blocking or BLAS kernel, on any machine; here BLAS forms the Gram matrix of each block of
    ``chunk`` rows and the blocks are added in order. Beyond ``2^21`` rows the running total may
    round, but every block is exact and the blocks are added in a fixed order, so the result is
    still the same on every machine. The greedy sampler downstream, which turns a last-bit
    difference in its inputs into different records, therefore gets the same inputs everywhere.
    """
    p = X.shape[1]
    total = _onehot_gram(X, y, n_classes, n_numeric, sizes, grid=True, chunk=chunk)
    total *= 2.0**-32
    return total[p:, :p], total[:p, :p]


def lda_vector(Z, n_classes: int = 2, weights=None) -> np.ndarray:
    """``(class sums, triangle(pooled sum x x^T))`` of rows ``[x | label]``: the query of Section 3.2.

    ``Z`` is one dataset ``(n, p + 1)`` or a stack ``(m, n, p + 1)`` (one vector per dataset);
    ``weights`` are row weights as in :func:`moment_sums`.
    """
    Z = _check_datasets(Z, "Z")
    sums, _, second = class_sums(Z[..., :-1], Z[..., -1], n_classes, weights)
    return np.concatenate([sums.reshape(*sums.shape[:-2], -1), triangle(second)], axis=-1)


# --------------------------------------------------------------------------------------
# DP-PCA publishing (Section 3.1)
# --------------------------------------------------------------------------------------
class DPPCAPublisher(TransformerMixin, PrivateEstimator):
    """PCA-based private data publishing (Jiang et al. 2013, Section 3.1, Theorem 2).

    ``fit(X)`` spends the whole budget: ``epsilon/2`` on the noisy sums (steps 1-3, Lemma 1:
    Laplace noise of scale ``2 s / epsilon`` with ``s`` from :func:`moment_sensitivity`) and
    ``epsilon/2`` on every record's noisy projection (step 5, Lemmas 2-3: scale
    ``2 sqrt(k p) / epsilon``). :meth:`publish` reconstructs the noisy records (post-processing).
    Replace-one neighbours only (see the module docstring).

    Cost: two passes over ``X`` that cannot be merged, because the components depend on the whole
    noisy Gram matrix: the checked Gram matrix (:func:`dpnb.numerics.gram.indicator_gram`), then the
    projections ``X U_k^T`` with ``n k`` Laplace draws, about 2.2 times one Gram matrix ``X^T X``
    in all (``benchmarks/gram_floor.py`` times this floor beside the fit).

    Parameters
    ----------
    n_components : int
        ``k``, number of principal components (1 <= k <= p).
    epsilon : float
        Total privacy budget; ``inf`` releases the exact projections (no noise).
    group_sizes : sequence of int
        Sizes of the trailing one-hot groups (empty for purely numeric data).
    calibration : {"corrected", "paper"}
        Moment sensitivity: ``"corrected"`` is the exact replace-one value; ``"paper"`` the
        paper's formula, too small for >= 2 categorical attributes (use it only to reproduce
        the paper).
    tight_projection : bool
        False: Lemma 2's ``sqrt(k p)``. True: ``sqrt(k (p1 + 2 p2))``, the same bound with the
        L2 diameter of the one-hot layout (equal for numeric data).
    noise : {"float", "exact"}
        ``"float"`` (default): numpy's floating-point Laplace noise. ``"exact"``: exact discrete
        Laplace noise on a grid (:func:`dpnb.privacy.mechanisms.laplace_mechanism`), DP as stated; the sum
        and the upper triangle of the moments then go through one joint call, so the pair costs
        exactly ``epsilon / 2`` (two calls would each add their own rounding slack).
    random_state : None, int, SeedSequence or Generator

    Attributes
    ----------
    mean_ : ndarray of shape (p,)
        Noisy mean.
    covariance_ : ndarray of shape (p, p)
        Noisy covariance (symmetric, not PSD-projected; only its eigenvectors are used).
    components_ : ndarray of shape (k, p)
        Top-``k`` eigenvectors as rows.
    scores_ : ndarray of shape (n, k)
        The released noisy projections ``(X - mean_) U_k^T + Lap``.
    budget_ : dict
        ``{"moments": (epsilon/2, 0), "projection": (epsilon/2, 0)}``.
    sensitivity_ : dict
        ``{"moments": s, "projection": sqrt(k p)}`` (L1).
    n_features_in_ : int
    """

    def __init__(
        self,
        n_components: int = 1,
        epsilon: float = 1.0,
        *,
        group_sizes=(),
        calibration: str = "corrected",
        tight_projection: bool = False,
        noise: str = "float",
        random_state=None,
    ):
        self.n_components = n_components
        self.epsilon = epsilon
        self.group_sizes = group_sizes
        self.calibration = calibration
        self.tight_projection = tight_projection
        self.noise = noise
        self.random_state = random_state

    def fit(self, X, y=None) -> DPPCAPublisher:
        """Compute the noisy moments, the principal components and the noisy projections of ``X``.

        ``y`` is ignored.
        """
        epsilon, _ = self._check_privacy(needs_delta=False)
        X, n_numeric, sizes = _onehot_layout(X, self.group_sizes)
        check_choice(self.calibration, "calibration", CALIBRATIONS)
        noise = check_noise(self.noise)
        if not isinstance(self.tight_projection, bool):
            raise TypeError(f"tight_projection must be a bool, got {type(self.tight_projection).__name__}")
        n, p = X.shape
        k = check_n_components(self.n_components, p)
        sum_x, sum_xx = _checked_moments(X, n_numeric, sizes)  # the value checks of X ride on this pass
        rng = self._make_rng()
        self.budget_ = split_budget(epsilon, 0.0, {"moments": 0.5, "projection": 0.5})
        diameter = row_diameter(n_numeric, len(sizes), norm=2) if self.tight_projection else None
        self.sensitivity_ = {
            "moments": moment_sensitivity(n_numeric, len(sizes), calibration=self.calibration),
            "projection": projection_sensitivity(k, p, diameter=diameter),
        }
        # One joint Laplace mechanism on (sum x, triu sum xx^T): every coordinate gets scale 2s/epsilon.
        eps_moments = self.budget_["moments"][0]
        if noise == "exact":
            noisy = laplace_mechanism(
                np.concatenate([sum_x, triangle(sum_xx)]),
                self.sensitivity_["moments"],
                eps_moments,
                random_state=rng,
                noise=noise,
            )
            upper = np.zeros((p, p))
            upper[np.triu_indices(p)] = noisy[p:]
            mean, second = noisy[:p] / n, (upper + np.triu(upper, 1).T) / n
        else:
            mean = laplace_mechanism(sum_x, self.sensitivity_["moments"], eps_moments, random_state=rng) / n
            second = (
                symmetric_laplace_mechanism(sum_xx, self.sensitivity_["moments"], eps_moments, random_state=rng) / n
            )
        self.covariance_ = second - np.outer(mean, mean)
        self.components_ = top_eigenvectors(self.covariance_, k)[1].T
        self.mean_ = mean
        self.scores_ = self._noisy_projections(X, rng, noise)
        self.n_features_in_ = p
        return self

    def _noisy_projections(self, X, rng, noise: str = "float", chunk: int = 8192) -> np.ndarray:
        """Step 5: ``(X - mean_) U_k^T + Lap(2 sqrt(kp) / epsilon)`` per entry, in row chunks.

        ``X U_k^T - mean_ U_k^T``, so no centred copy of ``X``; the noise of each chunk is drawn
        right after the previous one's, so the draws are those of one ``n x k`` Laplace call.
        With ``noise="exact"`` each chunk goes through :func:`dpnb.privacy.mechanisms.laplace_mechanism` on
        its own grid: neighbours differ in one row, so only one chunk's input differs (the others
        are the same values given the released mean and components).
        """
        scale = self.sensitivity_["projection"] / self.budget_["projection"][0]
        shift = self.mean_ @ self.components_.T
        scores = np.empty((X.shape[0], self.components_.shape[0]))
        for start in range(0, X.shape[0], chunk):
            block = scores[start : start + chunk]
            np.matmul(X[start : start + chunk], self.components_.T, out=block)
            block -= shift
            if noise == "exact":
                epsilon = self.budget_["projection"][0]
                block[...] = laplace_mechanism(
                    block, self.sensitivity_["projection"], epsilon, random_state=rng, noise=noise
                )
            else:
                block += rng.laplace(0.0, scale, size=block.shape)
        return scores

    def fit_transform(self, X, y=None, **fit_params) -> np.ndarray:
        """Fit on ``X`` and return its *noisy* projections ``scores_`` (the private release).

        This is what a Pipeline trains on; :meth:`transform` of the training rows would
        instead project them without noise and is not private.
        """
        return self.fit(X, y).scores_

    def transform(self, X) -> np.ndarray:
        """Project rows that are *not* the private input (e.g. test rows): ``(X - mean_) U_k^T``.

        Uses only the released ``mean_`` and ``components_``; adds no noise, so the rows passed
        here are not protected. The private release of the training rows is ``scores_``.
        """
        check_is_fitted(self, "scores_")
        X = check_array(X, ndim=2, name="X")
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X must have {self.n_features_in_} columns, got {X.shape[1]}")
        return X @ self.components_.T - self.mean_ @ self.components_.T

    def inverse_transform(self, Z) -> np.ndarray:
        """Map projections back to the original space: ``Z U_k + mean_`` (Section 3.1, step 5)."""
        check_is_fitted(self, "scores_")
        Z = check_array(Z, ndim=2, name="Z")
        if Z.shape[1] != self.components_.shape[0]:
            raise ValueError(f"Z must have {self.components_.shape[0]} columns, got {Z.shape[1]}")
        return Z @ self.components_ + self.mean_

    def publish(self, decode: bool = False) -> np.ndarray:
        """The released records ``scores_ U_k + mean_``, row ``i`` standing for input row ``i``.

        ``decode=True`` applies :func:`decode_dummies` (clip numerics, argmax per dummy group).
        """
        check_is_fitted(self, "scores_")
        out = self.inverse_transform(self.scores_)
        return decode_dummies(out, self.group_sizes) if decode else out


def laplace_identity(X, epsilon: float, *, group_sizes=None, random_state=None, noise="float") -> np.ndarray:
    """The Laplace mechanism on the raw records of ``X in [0,1]^{n x p}`` (Theorem 3, Fig. 2's LAP).

    Every entry gets ``Lap(r / epsilon)`` with ``r`` the replace-one L1 change of one row:
    ``r = p`` without ``group_sizes`` (the paper's ``Lap(p / epsilon)``, any row of
    ``[0,1]^p``) and ``r = p1 + 2 p2`` (:func:`row_diameter`) when ``group_sizes`` declares
    one-hot groups, whose rows then must be valid dummies. epsilon-DP either way.
    ``noise``: numpy's floating-point Laplace noise (``"float"``, default) or exact discrete
    Laplace noise on a grid (``"exact"``, :func:`dpnb.privacy.mechanisms.laplace_mechanism`).
    """
    epsilon = check_epsilon(epsilon)
    if group_sizes is None:
        X = check_in_box(check_array(X, ndim=2, name="X"), 0.0, 1.0, name="X")
        sensitivity = float(X.shape[1])
    else:
        X, n_numeric = check_onehot_data(X, group_sizes)
        sensitivity = row_diameter(n_numeric, len(_check_group_sizes(group_sizes)))
    return laplace_mechanism(X, sensitivity, epsilon, random_state=random_state, noise=noise)


def split_laplace(X, epsilon: float, bounds, *, random_state=None, noise="float") -> np.ndarray:
    """Fig. 1's attribute-wise release: ``epsilon`` split evenly over the ``p`` attributes.

    Attribute ``j`` of every record gets ``Lap(p (high_j - low_j) / epsilon)`` (sequential
    composition over attributes, replace-one neighbours). ``bounds = (low, high)``: scalars or
    per-attribute arrays, public; rows outside are rejected. Bounds so wide (or ``epsilon`` so
    small) that the release could overflow float64 are refused with a ValueError naming them.

    ``noise="float"`` (default): numpy's floating-point Laplace noise. ``noise="exact"``: column ``j``
    goes through :func:`dpnb.privacy.mechanisms.laplace_mechanism` with exact discrete Laplace noise on a
    grid (sensitivity ``high_j - low_j`` at ``epsilon / p``), DP as stated.
    """
    epsilon = check_epsilon(epsilon)
    noise = check_noise(noise)
    X, low, high = check_data_in_bounds(X, bounds)
    p = X.shape[1]
    with np.errstate(over="ignore"):
        scale = p * (high - low) / epsilon
    check_release_range(np.maximum(np.abs(low), np.abs(high)), scale)
    rng = check_random_state(random_state)
    if noise == "exact":
        columns = [
            laplace_mechanism(X[:, j], check_sensitivity(high[j] - low[j]), epsilon / p, random_state=rng, noise=noise)
            for j in range(p)
        ]
        return np.column_stack(columns)
    return X + rng.laplace(0.0, scale, size=X.shape)


def component_laplace(X, epsilon: float, direction, center, bounds, *, random_state=None, noise="float") -> np.ndarray:
    """Fig. 1's component-aware release: noise on one public direction ``u`` only.

    Each record is released as ``center + (u^T (x - center) + Lap(s / epsilon)) u`` with
    ``s = sum_j |u_j| (high_j - low_j)``, the L1 (here: absolute) change of ``u^T x`` over the
    box. ``direction`` and ``center`` must be public (common knowledge, not the data); the
    part of ``x - center`` orthogonal to ``u`` is dropped. Bounds so wide (or ``epsilon`` so small)
    that the release could overflow float64 are refused with a ValueError naming them.

    ``noise="float"`` (default): numpy's floating-point Laplace noise. ``noise="exact"``: the
    projections ``t`` go through :func:`dpnb.privacy.mechanisms.laplace_mechanism` with exact discrete
    Laplace noise on a grid (sensitivity ``s``), DP as stated.
    """
    epsilon = check_epsilon(epsilon)
    noise = check_noise(noise)
    X, low, high = check_data_in_bounds(X, bounds)
    u = check_array(direction, ndim=1, name="direction")
    center = check_array(center, ndim=1, name="center")
    if u.size != X.shape[1] or center.size != X.shape[1]:
        raise ValueError(f"direction and center need {X.shape[1]} entries, got {u.size} and {center.size}")
    if not np.isclose(u @ u, 1.0):
        raise ValueError("direction must have unit L2 norm")
    with np.errstate(over="ignore"):
        sensitivity = np.abs(u) @ (high - low)
        scale = sensitivity / epsilon
        reach = np.abs(u) @ np.maximum(np.abs(low - center), np.abs(high - center))  # public bound on |u^T (x - c)|
    check_release_range(np.abs(center).max() + reach, scale)
    rng = check_random_state(random_state)
    if noise == "exact":
        t = laplace_mechanism((X - center) @ u, check_sensitivity(sensitivity), epsilon, random_state=rng, noise=noise)
    else:
        t = (X - center) @ u + rng.laplace(0.0, scale, size=X.shape[0])
    return center + np.outer(t, u)


def mse_per_record(released, X) -> float:
    """``||released - X||_F^2 / n``: the per-record squared error of Figs. 1-2 (F-norm / n)."""
    released = check_array(released, ndim=2, name="released")
    X = check_array(X, ndim=2, name="X")
    if released.shape != X.shape:
        raise ValueError(f"released has shape {released.shape} but X has {X.shape}")
    diff = released - X
    return float(np.einsum("ij,ij->", diff, diff) / X.shape[0])


# --------------------------------------------------------------------------------------
# DP-LDA publishing (Section 3.2)
# --------------------------------------------------------------------------------------
class DPLDAPublisher(PrivateEstimator):
    """LDA-based private data publishing with the greedy sampler (Jiang et al. 2013, Section 3.2).

    ``fit(X, y)`` releases the per-class sums and the upper triangle of the pooled
    ``sum x x^T`` with Laplace noise of scale ``s / ((1 - count_fraction) epsilon)``, ``s`` from
    :func:`lda_sensitivity` (Section 3.2, step 2), and the class counts with scale
    ``2 / (count_fraction epsilon)`` (a record moving between classes changes two counts by
    one); sequential composition gives ``epsilon``. The paper divides by the *exact* class
    sizes and draws exactly ``n_c`` records per class, which discloses the sizes and breaks DP
    for the neighbours its own proof considers (demonstrated in the notebook); noisy counts
    fix that. :meth:`sample` runs the greedy sampler on the noisy statistics (post-processing).
    The sums are taken over the records rounded to the grid ``2^-16`` (a fixed map of the domain
    into itself, so the sensitivities are unchanged), which makes them exact in float64 and hence
    bit-identical on every machine (proof: ``_grid_class_moments``).

    Parameters
    ----------
    epsilon : float
        Total budget; ``inf`` releases the exact statistics (of the rounded records).
    n_classes : int
        Public number of classes; labels are ``0..n_classes-1``.
    group_sizes : sequence of int
        Sizes of the trailing one-hot groups.
    calibration : {"corrected", "paper"}
        Sensitivity of the sums (see :func:`lda_sensitivity`); the counts are noisy either way.
    count_fraction : float in (0, 1)
        Share of ``epsilon`` spent on the class counts (their sensitivity, 2, is small, so a
        small share gives accurate counts).
    random_state : None, int, SeedSequence or Generator
        Drives the noise and, through the generator made in ``fit``, :meth:`sample`.
    noise : {"float", "exact"}
        ``"float"`` (default): numpy's floating-point Laplace noise; ``"exact"``: exact discrete
        Laplace noise on a grid (:func:`dpnb.privacy.mechanisms.laplace_mechanism`), DP as stated.

    Attributes
    ----------
    class_counts_ : ndarray of shape (C,)
        Noisy counts rounded to integers in ``[1, n]`` (``n`` is public under replace-one
        neighbours). A class without records is released like any other (no refusal that would
        reveal it).
    means_ : ndarray of shape (C, p)
        Noisy class means.
    second_moment_ : ndarray of shape (p, p)
        Noisy pooled ``E[x x^T]``.
    budget_ : dict
        ``{"class_counts": (f epsilon, 0), "sums": ((1 - f) epsilon, 0)}``.
    sensitivity_ : dict
        ``{"class_counts": 2.0, "sums": s}`` (L1).
    n_features_in_ : int
    """

    def __init__(
        self,
        epsilon: float = 1.0,
        *,
        n_classes: int = 2,
        group_sizes=(),
        calibration: str = "corrected",
        count_fraction: float = 0.1,
        noise: str = "float",
        random_state=None,
    ):
        self.epsilon = epsilon
        self.n_classes = n_classes
        self.group_sizes = group_sizes
        self.calibration = calibration
        self.count_fraction = count_fraction
        self.noise = noise
        self.random_state = random_state

    def _check_count_fraction(self) -> float:
        f = self.count_fraction
        if isinstance(f, bool) or not isinstance(f, numbers.Real):
            raise TypeError(f"count_fraction must be a number in (0, 1), got {type(f).__name__}")
        if not 0 < f < 1:
            raise ValueError(f"count_fraction must lie in (0, 1), got {f!r}; e.g. 0.1")
        return float(f)

    def fit(self, X, y) -> DPLDAPublisher:
        """Release the noisy class sums, class counts and pooled second moment."""
        epsilon, _ = self._check_privacy(needs_delta=False)
        f = self._check_count_fraction()
        n_classes = check_integer(self.n_classes, "n_classes", minimum=2)
        check_choice(self.calibration, "calibration", CALIBRATIONS)
        noise = check_noise(self.noise)
        X, n_numeric, sizes = _onehot_layout(X, self.group_sizes)
        y = _check_labels(y, X.shape[:1], n_classes)
        counts = np.bincount(y, minlength=n_classes).astype(float)
        sums, sum_xx = _grid_class_moments(X, y, n_classes, n_numeric, sizes)  # the value checks of X ride on this pass
        rng = self._make_rng()
        p = X.shape[1]
        self.budget_ = split_budget(epsilon, 0.0, {"class_counts": f, "sums": 1 - f})
        self.sensitivity_ = {
            "class_counts": 2.0,
            "sums": lda_sensitivity(n_numeric, len(sizes), calibration=self.calibration),
        }
        iu = np.triu_indices(p)
        noisy = laplace_mechanism(
            np.concatenate([sums.ravel(), triangle(sum_xx)]),
            self.sensitivity_["sums"],
            self.budget_["sums"][0],
            random_state=rng,
            noise=noise,
        )
        noisy_counts = laplace_mechanism(
            counts, self.sensitivity_["class_counts"], self.budget_["class_counts"][0], random_state=rng, noise=noise
        )
        # post-processing with the public n (replace-one neighbours): a count lies in [1, n], so an
        # extreme epsilon never overflows the integer conversion
        self.class_counts_ = np.clip(np.round(noisy_counts), 1, X.shape[0]).astype(int)
        upper = np.zeros((p, p))
        upper[iu] = noisy[n_classes * p :]
        self.means_ = noisy[: n_classes * p].reshape(n_classes, p) / self.class_counts_[:, None]
        self.second_moment_ = (upper + np.triu(upper, 1).T) / self.class_counts_.sum()
        self.n_features_in_ = p
        self._n_numeric = n_numeric
        self._rng = rng
        return self

    def sample(self) -> tuple[np.ndarray, np.ndarray]:
        """Greedy sampler (Section 3.2, "Sampling"): ``class_counts_[c]`` records per class.

        Records are built one at a time (classes interleaved in random order). Each minimises,
        feature by feature, the L1 objective
        ``sum_c ||sum_{j in c} y_j - m_c mu_c||_1 + ||triu(sum_j y_j y_j^T - m E[xx^T])||_1``
        where ``m_c, m`` count the records drawn so far. A dummy group tries each of its levels;
        a numeric feature ``z`` sees terms ``|a z - b|`` once the other features are fixed
        (undecided ones, and ``z`` itself in ``z^2``, replaced by the noisy class mean), whose
        sum is minimised over ``[0, 1]`` by a weighted median of the break points ``b / a`` --
        the same optimum as the paper's scan of all break points, in ``O(p log p)`` per feature.
        Groups are decided before numeric features, as the paper suggests. Levels tied for the
        lowest cost (frequent: the L1 objective is flat once residuals are large) are drawn at
        random in proportion to the noisy class mean; the paper does not say how it breaks ties,
        and always taking the first level would bias every group towards its first level.

        Returns
        -------
        X : (n, p) synthetic records in the input layout.  y : (n,) labels.
        """
        return sample_releases([self])[0]


def _weighted_medians(points, weights) -> np.ndarray:
    """Row-wise minimisers of ``sum_l w_l |z - points_l|`` (weights >= 0, each row with a positive one).

    A stable sort of each row, then the first point whose cumulative weight reaches half the row's
    total. Entries of zero weight never decide the result (they may be ``inf``).
    """
    rows = np.arange(len(points))
    order = np.argsort(points, axis=1, kind="stable")
    cum = np.cumsum(weights[rows[:, None], order], axis=1)
    return points[rows, order[rows, np.argmax(cum >= cum[:, -1:] / 2, axis=1)]]


def _draw_levels(cost, proxy, rngs) -> np.ndarray:
    """Per row, the level of lowest ``cost``; ties drawn in proportion to ``proxy`` from that row's generator.

    The L1 objective is often flat (exact ties once residuals are large); the paper is silent, so
    ties are broken at random in proportion to the noisy class mean. ``rngs[r].random()`` is called
    once per row with a tie, so each generator sees the draws a one-record-at-a-time sampler makes.
    """
    low = cost.min(axis=1, keepdims=True)
    tied = cost <= low + 1e-9 * (1 + np.abs(low))
    level = np.argmax(tied, axis=1)
    multi = np.flatnonzero(tied.sum(axis=1) > 1)
    if multi.size:
        cum = np.cumsum(np.where(tied[multi], np.maximum(proxy[multi], 1e-12), 0.0), axis=1)
        u = np.array([rngs[r].random() for r in multi])
        level[multi] = np.argmax(tied[multi] & (cum >= u[:, None] * cum[:, -1:]), axis=1)
    return level


def _greedy_records(v, R, Q, n_numeric: int, groups, rngs) -> np.ndarray:
    """One greedy record per row (one row per release): ``v`` (m, p) starts at the class proxies.

    ``R`` (m, p) are the class-sum residuals and ``Q`` (m, p, p) the second-moment residuals of
    each release. Setting level ``g`` of a group costs, up to terms that do not depend on ``g``,
    the sums term ``|1 - R_g| - |R_g|``, the group's diagonal ``|1 - Q_gg| - |Q_gg|`` and the cross
    terms ``|v_j - Q_gj| - |Q_gj|`` with every feature ``j`` outside the group; the cross terms of
    all dummy rows are kept in one array whose columns are refreshed as groups are decided. A
    numeric feature ``z`` then minimises ``sum_l |a_l z - b_l|`` by a weighted median.
    """
    m, p = v.shape
    d = p - n_numeric  # dummy columns, the trailing block: slices below are views, not copies
    if d:
        Qd = Q[:, n_numeric:]
        diag = Qd[:, np.arange(d), np.arange(n_numeric, p)]
        base = np.abs(1 - R[:, n_numeric:]) - np.abs(R[:, n_numeric:]) + np.abs(1 - diag) - np.abs(diag)
        cross = np.abs(v[:, None, :] - Qd) - np.abs(Qd)
    for sl, eye in groups:
        cols = slice(n_numeric + sl.start, n_numeric + sl.stop)
        cost = base[:, sl] + cross[:, sl].sum(axis=2) - cross[:, sl, cols].sum(axis=2)
        v[:, cols] = eye[_draw_levels(cost, v[:, cols], rngs)]
        cross[:, :, cols] = np.abs(v[:, None, cols] - Qd[:, :, cols]) - np.abs(Qd[:, :, cols])
    a = np.empty((m, p + 1))
    b = np.empty((m, p + 1))
    a[:, 0] = 1.0
    for j in range(n_numeric):
        a[:, 1:] = v  # v >= 0: proxies are clipped to [0, 1]
        b[:, 0], b[:, 1:] = R[:, j], Q[:, j]
        keep = a > 0
        points = np.where(keep, b / np.where(keep, a, 1.0), np.inf)
        v[:, j] = np.clip(_weighted_medians(points, np.where(keep, a, 0.0)), 0.0, 1.0)
    return v


def sample_releases(publishers) -> list[tuple[np.ndarray, np.ndarray]]:
    """The greedy sampler of several fitted :class:`DPLDAPublisher` run in lockstep (one NumPy pass per record).

    Each release gets exactly what its own :meth:`DPLDAPublisher.sample` returns (same records, same
    draws from its generator): the releases share no state, the batch only amortises NumPy's
    per-call overhead over them. They must share the layout (``n_features_in_``, ``group_sizes``).
    """
    publishers = list(publishers)
    if not publishers:
        return []
    for pub in publishers:
        if not isinstance(pub, DPLDAPublisher):
            raise TypeError(f"publishers must be DPLDAPublisher instances, got {type(pub).__name__}")
        check_is_fitted(pub, "means_")
    layout = {(pub.means_.shape, pub._n_numeric, _check_group_sizes(pub.group_sizes)) for pub in publishers}
    if len(layout) > 1:
        raise ValueError("the publishers must share n_classes, the number of features and group_sizes")
    # Every generator draws its record order first, as a one-release sampler does.
    labels = [pub._rng.permutation(np.repeat(np.arange(pub.means_.shape[0]), pub.class_counts_)) for pub in publishers]
    order = np.argsort([-lab.size for lab in labels], kind="stable")  # active releases stay a prefix
    records = _lockstep(
        np.stack([publishers[r].means_ for r in order]),
        np.stack([publishers[r].second_moment_ for r in order]),
        [labels[r] for r in order],
        publishers[0],
        [publishers[r]._rng for r in order],
    )
    out = [None] * len(publishers)
    for r, X in zip(order, records, strict=True):
        out[r] = (X, labels[r])
    return out


def _lockstep(means, second, labels, template, rngs) -> list[np.ndarray]:
    """Records of ``B`` releases sorted by decreasing length: record ``i`` of every release still drawing."""
    B, C, p = means.shape
    n_numeric = template._n_numeric
    groups = [
        (slice(sl.start - n_numeric, sl.stop - n_numeric), np.eye(sl.stop - sl.start))
        for sl in _group_slices(n_numeric, _check_group_sizes(template.group_sizes))
    ]
    lengths = np.array([lab.size for lab in labels])
    padded = np.zeros((B, lengths[0]), dtype=int)
    for r, lab in enumerate(labels):
        padded[r, : lab.size] = lab
    proxies = np.clip(means, 0.0, 1.0)
    residual_sums = np.zeros((B, C, p))
    residual_second = np.zeros((B, p, p))
    out = np.empty((B, lengths[0], p))
    active = B
    for i in range(int(lengths[0])):
        while lengths[active - 1] <= i:
            active -= 1
        rows = np.arange(active)
        c = padded[:active, i]
        residual_sums[rows, c] += means[rows, c]
        residual_second[:active] += second[:active]
        record = _greedy_records(
            proxies[rows, c], residual_sums[rows, c], residual_second[:active], n_numeric, groups, rngs
        )
        residual_sums[rows, c] -= record
        residual_second[:active] -= record[:, :, None] * record[:, None, :]
        out[:active, i] = record
    return [out[r, :n] for r, n in enumerate(lengths)]


def _attribute_histograms(X, y, n_numeric: int, group_sizes, n_classes: int, bins: int) -> list[np.ndarray]:
    """Counts per attribute: numerics in ``bins`` equal bins of [0, 1], dummy groups by level, the label."""
    hists = [np.bincount(np.minimum((X[:, j] * bins).astype(int), bins - 1), minlength=bins) for j in range(n_numeric)]
    hists += [X[:, sl].sum(axis=0) for sl in _group_slices(n_numeric, group_sizes)]
    return hists + [np.bincount(y, minlength=n_classes)]


def attribute_entropy_kl(X, y, X_ref, y_ref, group_sizes=(), *, n_classes: int = 2, bins: int = 10):
    """Mean per-attribute entropy of ``(X, y)`` and mean KL divergence ``D(P || Q_ref)``, in bits (Fig. 4).

    The paper does not define either for mixed data; this is our reading: every attribute
    (numerics in ``bins`` equal bins of [0, 1], each dummy group by level, the label) gets a
    histogram smoothed by adding 1/2 to every cell, and the two measures are averaged over
    attributes. Both datasets must be valid ``[numeric | one-hot]`` layouts.
    """
    bins = check_integer(bins, "bins", minimum=2)
    n_classes = check_integer(n_classes, "n_classes", minimum=2)
    X, n_numeric = check_onehot_data(X, group_sizes)
    X_ref, _ = check_onehot_data(X_ref, group_sizes)
    y, y_ref = _check_labels(y, X.shape[:1], n_classes), _check_labels(y_ref, X_ref.shape[:1], n_classes)
    sizes = _check_group_sizes(group_sizes)
    entropy, kl = [], []
    for h, g in zip(
        _attribute_histograms(X, y, n_numeric, sizes, n_classes, bins),
        _attribute_histograms(X_ref, y_ref, n_numeric, sizes, n_classes, bins),
        strict=True,
    ):
        P, Q = (h + 0.5) / (h.sum() + 0.5 * h.size), (g + 0.5) / (g.sum() + 0.5 * g.size)
        entropy.append(-np.sum(P * np.log2(P)))
        kl.append(np.sum(P * np.log2(P / Q)))
    return float(np.mean(entropy)), float(np.mean(kl))


def statistics_distance(X, y, means, second_moment) -> float:
    """L1 distance between ``(class means, triu E[x x^T])`` of ``(X, y)`` and the given ones.

    The yardstick of the paper's claim that the sampler's statistics are closer to the true
    ones than the noisy statistics are.
    """
    means = check_array(means, ndim=2, name="means")
    sums, counts, sum_xx = class_sums(X, y, means.shape[0])
    if np.any(counts == 0):
        raise ValueError("every class needs at least one record to compare class means")
    own_means = sums / counts[:, None]
    return float(np.abs(own_means - means).sum() + np.abs(triangle(sum_xx / counts.sum() - second_moment)).sum())
