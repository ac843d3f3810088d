"""Differentially private data publishing through component analysis (Jiang et al., TDP 2013).

Two mechanisms from the paper, as audited in ``notebooks/component_analysis.md``:

* :class:`DPPCAPublisher` -- Section 3.1, "PCA-based PPDP": Laplace noise on the sums of
  ``x`` and of the upper triangle of ``x x^T`` (budget ``epsilon/2``, Lemma 1), top-``k``
  eigenvectors of the noisy covariance, Laplace noise on every record's ``k`` projected
  coordinates (budget ``epsilon/2``, Lemmas 2-3), and reconstruction in the original space.
  The output keeps one row per input row, in order (the paper's "one-to-one mapping").
* :class:`DPLDAPublisher` -- Section 3.2, "LDA-based PPDP": Laplace noise on the per-class
  sums and the pooled second moment, then the paper's greedy sampler (Section 3.2,
  "Sampling") that draws records whose statistics approximately match the noisy ones in L1.

Neighbouring datasets
---------------------
Both mechanisms release exactly ``n`` records and divide by ``n``, so they can only be DP for
*replace-one* neighbours (same ``n``; one record replaced by any record of the domain). The
paper's Definition 1 (symmetric difference of one record) is add/remove, under which the
row count alone distinguishes neighbours. For DP-LDA a replaced record may change class;
the class sizes then change, and this module privatises them (the paper does not; see
:class:`DPLDAPublisher`).

Data layout
-----------
Rows are ``[numeric columns | dummy groups]``: ``p1`` numeric attributes first, each in
``[0, 1]``, then one one-hot group per categorical attribute, of the sizes in
``group_sizes``. Data outside ``[0, 1]`` or with a malformed one-hot group is *rejected*
with ValueError (the bounds are public arguments, never read from the data; rescale with
``dpnb.datasets.scale_to_box`` first).
"""

from __future__ import annotations

import numbers

import numpy as np

from .audit import NeighborRelation
from .linalg import top_eigenvectors
from .mechanisms import laplace_mechanism, symmetric_laplace_mechanism
from .validation import (check_array, check_epsilon, check_in_box, check_integer,
                         check_n_components, check_random_state)

FORMULAS = ("exact", "paper")


# --------------------------------------------------------------------------------------
# Layout and input checks
# --------------------------------------------------------------------------------------
def _check_group_sizes(group_sizes, d: int | None = None) -> tuple[int, ...]:
    sizes = tuple(group_sizes)
    for s in sizes:
        if isinstance(s, bool) or not isinstance(s, numbers.Integral) or s < 2:
            raise ValueError(f"group_sizes must be integers >= 2 (levels per categorical attribute), got {sizes}")
    if d is not None and sum(sizes) > d:
        raise ValueError(f"group_sizes add up to {sum(sizes)} dummy columns but the data has only {d} columns")
    return tuple(int(s) for s in sizes)


def _group_slices(n_numeric: int, group_sizes) -> list[slice]:
    starts = n_numeric + np.concatenate([[0], np.cumsum(group_sizes)[:-1]]).astype(int)
    return [slice(int(a), int(a) + s) for a, s in zip(starts, group_sizes)]


def check_onehot_data(X, group_sizes=()) -> tuple[np.ndarray, int]:
    """Validate a ``[numeric | one-hot groups]`` matrix in ``[0, 1]`` (rejects, never clips).

    Returns
    -------
    X : ndarray of float64
    n_numeric : int
        Number of leading numeric columns, ``p - sum(group_sizes)``.
    """
    X = check_array(X, ndim=2, name="X")
    sizes = _check_group_sizes(group_sizes, X.shape[1])
    X = check_in_box(X, 0.0, 1.0, name="X")
    n_numeric = X.shape[1] - sum(sizes)
    for sl in _group_slices(n_numeric, sizes):
        block = X[:, sl]
        if np.any((block != 0) & (block != 1)) or np.any(block.sum(axis=1) != 1):
            raise ValueError(f"columns {sl.start}..{sl.stop - 1} must be one-hot dummies (0/1, one 1 per row); "
                             "check group_sizes and the column order [numeric | dummy groups]")
    return X, n_numeric


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
# Sensitivities (replace-one neighbours)
# --------------------------------------------------------------------------------------
def _check_counts(n_numeric, n_categorical) -> tuple[int, int]:
    n_numeric = check_integer(n_numeric, "n_numeric", minimum=0)
    n_categorical = check_integer(n_categorical, "n_categorical", minimum=0)
    if n_numeric + n_categorical == 0:
        raise ValueError("need at least one attribute (n_numeric + n_categorical >= 1)")
    return int(n_numeric), int(n_categorical)


def _check_formula(formula: str) -> str:
    if formula not in FORMULAS:
        raise ValueError(f"formula must be one of {FORMULAS}, got {formula!r}")
    return formula


def _max_over_t(p1: int, p2: int, slope_sign: int) -> float:
    """``max_{t in [0,1]}`` of the worst-case L1 change with the second record's numerics at ``t``.

    The first record has every numeric attribute at 1 and the second at ``t`` (all
    categories differ). ``slope_sign = -1``: the sums change by ``p1 (1 - t)`` (same class);
    ``+1``: by ``p1 (1 + t)`` (the two records sit in different class sums).
    """
    def f(t):
        return (p1 * (1 + slope_sign * t) + 2 * p2 + p1 * (p1 + 1) / 2 * (1 - t * t)
                + p1 * p2 * (1 + t) + p2 * (p2 + 1))
    t_star = 0.0 if p1 == 0 else float(np.clip((p2 + slope_sign) / (p1 + 1), 0.0, 1.0))
    return float(max(f(0.0), f(1.0), f(t_star)))


def moment_sensitivity(n_numeric: int, n_categorical: int = 0, *, formula: str = "exact") -> float:
    """L1 sensitivity of ``(sum x, upper triangle of sum x x^T)`` under replace-one neighbours.

    Parameters
    ----------
    n_numeric, n_categorical : int
        ``p1`` numeric attributes in ``[0, 1]`` and ``p2`` one-hot coded categorical attributes.
    formula : {"exact", "paper"}
        ``"paper"``: Section 3.1, ``s = p + p(p+1)/2`` for numeric data and
        ``(p1 + 2 p2) + [(p1+p2)(p1+p2+1) + p2(p2+1)]/2`` with dummies. ``"exact"``: the true
        supremum, ``max_t p1(1-t) + p1(p1+1)(1-t^2)/2 + p1 p2 (1+t) + 2 p2 + p2(p2+1)`` (derived
        in the notebook); it equals the paper's value for ``p2 <= 1`` and exceeds it when
        ``p1 >= 1`` and ``p2 >= 2``.
    """
    p1, p2 = _check_counts(n_numeric, n_categorical)
    if _check_formula(formula) == "paper":
        return float(p1 + 2 * p2 + ((p1 + p2) * (p1 + p2 + 1) + p2 * (p2 + 1)) / 2)
    return _max_over_t(p1, p2, -1)


def lda_sensitivity(n_numeric: int, n_categorical: int = 0, *, formula: str = "exact") -> float:
    """L1 sensitivity of ``(class sums, upper triangle of pooled sum x x^T)`` (Section 3.2).

    Replace-one neighbours where the replaced record may change class. ``"paper"``:
    ``2p + p(p+1)/2`` (numeric) and ``2(p1+p2) + [(p1+p2+1)(p1+p2) + p2(p2+1)]/2`` (dummies).
    ``"exact"``: ``max_t p1(1+t) + 2 p2 + p1(p1+1)(1-t^2)/2 + p1 p2 (1+t) + p2(p2+1)``, the
    cross-class case, which dominates the within-class one. Class *counts* are not included;
    their sensitivity is 2 and :class:`DPLDAPublisher` releases them separately.
    """
    p1, p2 = _check_counts(n_numeric, n_categorical)
    if _check_formula(formula) == "paper":
        return float(2 * (p1 + p2) + ((p1 + p2 + 1) * (p1 + p2) + p2 * (p2 + 1)) / 2)
    return _max_over_t(p1, p2, +1)


def projection_sensitivity(n_components: int, dimension: int) -> float:
    """Lemma 2: L1 sensitivity ``sqrt(k p)`` of one record's projection ``x^T U_k``, x in [0,1]^p.

    Cauchy-Schwarz and Bessel give ``||U_k^T (x - x')||_1 <= sqrt(k) ||x - x'||_2 <= sqrt(k p)``;
    the bound is attained for some orthonormal ``U_k`` (the notebook constructs one).
    """
    k = check_n_components(n_components, int(dimension))
    return float(np.sqrt(k * dimension))


def basis_projection_sensitivity(components, return_pair: bool = False):
    """Exact L1 sensitivity of ``x -> U^T x`` over ``x in [0, 1]^p`` for a *given* basis ``U`` (p x k).

    ``||U^T d||_1 = max_s s^T U^T d`` over sign vectors ``s``, and ``max_{d in [-1,1]^p} (U s)^T d
    = ||U s||_1``, so the sensitivity is ``max_{s in {-1,1}^k} ||U s||_1`` (at most
    :func:`projection_sensitivity`). Enumerates the ``2^(k-1)`` sign patterns up to a global
    sign, so ``k <= 20``. With ``return_pair``, also returns rows ``x, x'`` of ``{0,1}^p``
    attaining it.
    """
    U = check_array(components, ndim=2, name="components")
    k = U.shape[1]
    if k > 20:
        raise ValueError(f"enumerating sign patterns needs k <= 20 components, got {k}")
    signs = 1 - 2 * ((np.arange(2 ** (k - 1))[:, None] >> np.arange(k)) & 1)
    values = np.abs(signs @ U.T).sum(axis=1)
    best = int(np.argmax(values))
    if not return_pair:
        return float(values[best])
    x = (U @ signs[best] > 0).astype(float)
    return float(values[best]), x, 1.0 - x


# --------------------------------------------------------------------------------------
# Neighbour relation for the audits
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
        label = f", class label in 0..{n_classes - 1}" if n_classes else ""
        self.description = (f"replace one row: {self.n_numeric} numeric in [0,1], "
                            f"dummy groups {list(self.group_sizes)}{label}")

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
        out = np.empty_like(row)
        out[:self.n_numeric] = np.clip(row[:self.n_numeric], 0.0, 1.0)
        for sl in _group_slices(self.n_numeric, self.group_sizes):
            out[sl] = np.eye(sl.stop - sl.start)[np.argmax(row[sl])]
        if self.n_classes:
            out[-1] = np.clip(np.round(row[-1]), 0, self.n_classes - 1)
        return out


# --------------------------------------------------------------------------------------
# Statistics
# --------------------------------------------------------------------------------------
def moment_sums(X) -> tuple[np.ndarray, np.ndarray]:
    """``(sum_x x, sum_x x x^T)``: the statistics DP-PCA perturbs (Section 3.1, step 1)."""
    X = check_array(X, ndim=2, name="X")
    return X.sum(axis=0), X.T @ X


def class_sums(X, y, n_classes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(per-class sums (C, p), class counts (C,), pooled sum x x^T (p, p))`` (Section 3.2, step 1).

    ``y`` holds integer labels in ``0..n_classes-1``.
    """
    X = check_array(X, ndim=2, name="X")
    y = _check_labels(y, X.shape[0], n_classes)
    onehot = np.eye(n_classes)[y]
    return onehot.T @ X, onehot.sum(axis=0), X.T @ X


def _check_labels(y, n: int, n_classes: int) -> np.ndarray:
    y = check_array(y, ndim=1, name="y")
    if y.size != n:
        raise ValueError(f"y has {y.size} labels but X has {n} rows")
    if np.any(y != np.round(y)) or np.any(y < 0) or np.any(y >= n_classes):
        raise ValueError(f"y must hold integer class labels in 0..{n_classes - 1} (encode labels first)")
    return y.astype(int)


def _triu(A) -> np.ndarray:
    return A[np.triu_indices(A.shape[0])]


# --------------------------------------------------------------------------------------
# DP-PCA publishing (Section 3.1)
# --------------------------------------------------------------------------------------
class DPPCAPublisher:
    """PCA-based private data publishing (Jiang et al. 2013, Section 3.1, Theorem 2).

    ``fit(X)`` spends the whole budget: ``epsilon/2`` on the noisy sums (steps 1-3, Lemma 1:
    Laplace noise of scale ``2 s / epsilon`` with ``s`` from :func:`moment_sensitivity`) and
    ``epsilon/2`` on every record's noisy projection (step 5, Lemmas 2-3: scale
    ``2 sqrt(k p) / epsilon``). :meth:`publish` reconstructs the noisy records (post-processing).
    Replace-one neighbours only (see the module docstring).

    Parameters
    ----------
    n_components : int
        ``k``, number of principal components (1 <= k <= p).
    epsilon : float
        Total privacy budget.
    group_sizes : sequence of int
        Sizes of the trailing one-hot groups (empty for purely numeric data).
    formula : {"exact", "paper"}
        Which moment sensitivity to calibrate to (the paper's under-estimates it for >= 2
        categorical attributes; use "paper" only to reproduce the paper).
    random_state : None, int or Generator

    Attributes
    ----------
    mean_ : (p,) noisy mean.  covariance_ : (p, p) noisy covariance (symmetric, not PSD-projected;
    only its eigenvectors are used).  components_ : (p, k) top-k eigenvectors.
    scores_ : (n, k) noisy projections ``(X - mean_) U_k + Lap``.  moment_sensitivity_,
    projection_sensitivity_ : the L1 sensitivities used.
    """

    def __init__(self, n_components: int, epsilon: float, *, group_sizes=(), formula: str = "exact",
                 random_state=None):
        self.n_components = n_components
        self.epsilon = check_epsilon(epsilon)
        self.group_sizes = _check_group_sizes(group_sizes)
        self.formula = _check_formula(formula)
        self.random_state = check_random_state(random_state)

    def fit(self, X) -> "DPPCAPublisher":
        """Compute the noisy moments, the principal components and the noisy projections of ``X``."""
        X, n_numeric = check_onehot_data(X, self.group_sizes)
        n, p = X.shape
        k = check_n_components(self.n_components, p)
        rng = self.random_state
        half = self.epsilon / 2
        s = moment_sensitivity(n_numeric, len(self.group_sizes), formula=self.formula)
        sum_x, sum_xx = moment_sums(X)
        # One joint Laplace mechanism on (sum x, triu sum xx^T): every coordinate gets scale 2s/epsilon.
        mean = laplace_mechanism(sum_x, s, half, random_state=rng) / n
        second = symmetric_laplace_mechanism(sum_xx, s, half, random_state=rng) / n
        self.covariance_ = second - np.outer(mean, mean)
        _, self.components_ = top_eigenvectors(self.covariance_, k)
        self.mean_ = mean
        self.moment_sensitivity_ = s
        self.projection_sensitivity_ = projection_sensitivity(k, p)
        self.scores_ = laplace_mechanism((X - mean) @ self.components_, self.projection_sensitivity_,
                                         half, random_state=rng)
        return self

    def publish(self, decode: bool = False) -> np.ndarray:
        """The released records ``scores_ U_k^T + mean_``, row ``i`` standing for input row ``i``.

        ``decode=True`` applies :func:`decode_dummies` (clip numerics, argmax per dummy group).
        """
        if not hasattr(self, "scores_"):
            raise ValueError("call fit(X) before publish()")
        out = self.scores_ @ self.components_.T + self.mean_
        return decode_dummies(out, self.group_sizes) if decode else out


def laplace_identity(X, epsilon: float, *, random_state=None) -> np.ndarray:
    """The baseline of Theorem 3: every entry of ``X in [0,1]^{n x p}`` plus ``Lap(p / epsilon)``.

    Replace-one neighbours change one row by at most ``p`` in L1, so this is epsilon-DP.
    """
    X = check_in_box(check_array(X, ndim=2, name="X"), 0.0, 1.0, name="X")
    return laplace_mechanism(X, X.shape[1], epsilon, random_state=random_state)


# --------------------------------------------------------------------------------------
# DP-LDA publishing (Section 3.2)
# --------------------------------------------------------------------------------------
def _weighted_median(points, weights) -> float:
    """A minimiser of ``sum_i w_i |z - points_i|`` (weights >= 0, not all zero)."""
    order = np.argsort(points)
    cum = np.cumsum(weights[order])
    return float(points[order][np.searchsorted(cum, cum[-1] / 2)])


class DPLDAPublisher:
    """LDA-based private data publishing with the greedy sampler (Jiang et al. 2013, Section 3.2).

    ``fit(X, y)`` releases the per-class sums and the upper triangle of the pooled
    ``sum x x^T`` with Laplace noise of scale ``s / ((1 - count_fraction) epsilon)``, ``s`` from
    :func:`lda_sensitivity` (Section 3.2, step 2), and the class counts with scale
    ``2 / (count_fraction epsilon)`` (a record moving between classes changes two counts by
    one); sequential composition gives ``epsilon``. The paper divides by the *exact* class
    sizes and draws exactly ``n_c`` records per class, which discloses the sizes and breaks DP
    for the neighbours its own proof considers (demonstrated in the notebook); noisy counts
    fix that. :meth:`sample` runs the greedy sampler on the noisy statistics (post-processing).

    Parameters
    ----------
    epsilon : float
    n_classes : int
        Public number of classes; labels are ``0..n_classes-1``.
    group_sizes : sequence of int
        Sizes of the trailing one-hot groups.
    formula : {"exact", "paper"}
        Sensitivity of the sums (see :func:`lda_sensitivity`).
    count_fraction : float in (0, 1)
        Share of ``epsilon`` spent on the class counts (their sensitivity, 2, is small, so a
        small share gives accurate counts).
    random_state : None, int or Generator

    Attributes
    ----------
    class_counts_ : (C,) noisy counts rounded to integers >= 1.  means_ : (C, p) noisy class
    means.  second_moment_ : (p, p) noisy pooled ``E[x x^T]``.  sensitivity_ : float, the ``s``
    used for the sums.
    """

    def __init__(self, epsilon: float, *, n_classes: int = 2, group_sizes=(), formula: str = "exact",
                 count_fraction: float = 0.1, random_state=None):
        self.epsilon = check_epsilon(epsilon)
        if isinstance(count_fraction, bool) or not isinstance(count_fraction, numbers.Real) \
                or not 0 < count_fraction < 1:
            raise ValueError(f"count_fraction must lie in (0, 1), got {count_fraction!r}")
        self.count_fraction = float(count_fraction)
        self.n_classes = check_integer(n_classes, "n_classes", minimum=2)
        self.group_sizes = _check_group_sizes(group_sizes)
        self.formula = _check_formula(formula)
        self.random_state = check_random_state(random_state)

    def fit(self, X, y) -> "DPLDAPublisher":
        """Release the noisy class sums, class counts and pooled second moment."""
        X, n_numeric = check_onehot_data(X, self.group_sizes)
        sums, counts, sum_xx = class_sums(X, y, self.n_classes)
        if np.any(counts == 0):
            raise ValueError(f"every class 0..{self.n_classes - 1} needs at least one record")
        p = X.shape[1]
        self.sensitivity_ = lda_sensitivity(n_numeric, len(self.group_sizes), formula=self.formula)
        rng = self.random_state
        iu = np.triu_indices(p)
        C = self.n_classes
        noisy = laplace_mechanism(np.concatenate([sums.ravel(), sum_xx[iu]]), self.sensitivity_,
                                  (1 - self.count_fraction) * self.epsilon, random_state=rng)
        noisy_counts = laplace_mechanism(counts, 2.0, self.count_fraction * self.epsilon, random_state=rng)
        noisy_sums = noisy[:C * p].reshape(C, p)
        self.class_counts_ = np.maximum(1, np.round(noisy_counts)).astype(int)
        upper = np.zeros((p, p))
        upper[iu] = noisy[C * p:]
        self.means_ = noisy_sums / self.class_counts_[:, None]
        self.second_moment_ = (upper + np.triu(upper, 1).T) / self.class_counts_.sum()
        self._n_numeric = n_numeric
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
        if not hasattr(self, "means_"):
            raise ValueError("call fit(X, y) before sample()")
        rng = self.random_state
        C, p = self.means_.shape
        labels = rng.permutation(np.repeat(np.arange(C), self.class_counts_))
        proxies = np.clip(self.means_, 0.0, 1.0)
        residual_sums = np.zeros((C, p))
        residual_second = np.zeros((p, p))
        out = np.empty((labels.size, p))
        groups = [(sl, np.r_[0:sl.start, sl.stop:p], np.eye(sl.stop - sl.start))
                  for sl in _group_slices(self._n_numeric, self.group_sizes)]
        for i, c in enumerate(labels):
            residual_sums[c] += self.means_[c]
            residual_second += self.second_moment_
            out[i] = self._draw(proxies[c].copy(), residual_sums[c], residual_second, groups)
            residual_sums[c] -= out[i]
            residual_second -= np.outer(out[i], out[i])
        return out, labels

    def _draw(self, v, R, Q, groups) -> np.ndarray:
        """One greedy record: ``v`` starts at the class proxies and is overwritten feature by feature."""
        for sl, outside, eye in groups:
            Qg, Rg = Q[sl], R[sl]
            diag = Qg[np.arange(eye.shape[0]), np.arange(sl.start, sl.stop)]
            cross = Qg[:, outside]
            # Cost of setting level g, terms that do not depend on g dropped: the sums term
            # |1 - R_g| - |R_g|, the cross terms with the other features and the group's diagonal.
            cost = (np.abs(1 - Rg) - np.abs(Rg) + np.abs(v[outside] - cross).sum(axis=1)
                    - np.abs(cross).sum(axis=1) + np.abs(1 - diag) - np.abs(diag))
            # The L1 objective is often flat (exact ties once residuals are large); the paper is
            # silent, so ties are broken at random in proportion to the noisy class mean.
            tied = np.flatnonzero(cost <= cost.min() + 1e-9 * (1 + abs(cost.min())))
            if tied.size > 1:
                cum = np.cumsum(np.maximum(v[sl][tied], 1e-12))
                tied = tied[np.searchsorted(cum, self.random_state.random() * cum[-1]):]
            v[sl] = eye[tied[0]]
        a = np.empty(v.size + 1)
        b = np.empty(v.size + 1)
        a[0] = 1.0
        for j in range(self._n_numeric):
            a[1:] = v  # v >= 0: proxies are clipped to [0, 1]
            b[0], b[1:] = R[j], Q[j]
            keep = a > 0
            v[j] = np.clip(_weighted_median(b[keep] / a[keep], a[keep]), 0.0, 1.0)
        return v


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
    return float(np.abs(own_means - means).sum() + np.abs(_triu(sum_xx / counts.sum() - second_moment)).sum())
