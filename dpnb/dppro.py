"""DPPro: private data release by Gaussian random projection (Xu, Ren, Zhang, Qin, Ren, IEEE TIFS 2017).

The mechanism (the paper's Algorithm 1) releases a public random matrix ``R`` (``d x k``,
entries i.i.d. ``N(0, 1/k)``) together with ``P = X R + phi``, where ``phi`` has i.i.d.
``N(0, sigma^2)`` entries. Distances are then estimated from ``P`` alone (Algorithm 2):
``||p_i - p_j||^2 - 2 k sigma^2`` is unbiased for ``||x_i - x_j||^2`` (Theorem 3).

Neighbour notion
----------------
Because ``R`` does not depend on the data, the release conditioned on ``R`` is a Gaussian
mechanism on the query ``X -> X R``; only its L2 sensitivity depends on what "neighbouring"
means:

* ``"attribute"`` (the paper's Definition 1 and Theorem 2): one attribute ``j`` of one record
  changes inside its range ``[low_j, high_j]``. The released matrix changes in one row by
  ``(x'_aj - x_aj) R_j``, so the sensitivity is ``max_j w_j ||R_j||_2`` with ``w = high - low``
  (``theta_2(R)`` of Definition 3 for binary data).
* ``"record"`` (the usual replace-one-row notion): a whole record changes inside the box. The
  change is ``v R`` with ``|v_j| <= w_j``; its maximum ``||diag(w) R||_{inf->2}`` is attained at a
  sign vector and is hard to compute exactly, so the mechanism calibrates to the certified upper
  bound of :func:`record_sensitivity`; :func:`worst_record_change` finds a change close to it.

Data outside the declared bounds is rejected (never clipped): bounds are public arguments.
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy import stats

from .mechanisms import gaussian_sigma
from .validation import (check_array, check_delta, check_epsilon, check_in_box, check_integer,
                         check_n_components, check_positive, check_random_state)

NEIGHBORS = ("attribute", "record")
CALIBRATIONS = ("analytic", "classic", "theorem2", "lemma4")


# --------------------------------------------------------------------------------------
# Algorithm 1: projection matrix and release
# --------------------------------------------------------------------------------------
def gaussian_projection(n_features, n_components, *, random_state=None) -> np.ndarray:
    """Draw the ``d x k`` projection matrix of Algorithm 1, steps 1-2: entries i.i.d. ``N(0, 1/k)``.

    With this scaling ``E ||x R||^2 = ||x||^2`` (Lemma 2, eq. (4)), so no rescaling of projected
    distances is needed.

    Parameters
    ----------
    n_features : int
        Original dimension ``d``.
    n_components : int
        Projected dimension ``k``, ``1 <= k <= d``.
    random_state : None, int, SeedSequence or Generator
    """
    d = check_integer(n_features, "n_features")
    k = check_n_components(n_components, d)
    rng = check_random_state(random_state)
    return rng.normal(0.0, 1.0 / np.sqrt(k), size=(d, k))


def project_and_perturb(X, projection, sigma, *, random_state=None) -> np.ndarray:
    """Algorithm 1, steps 3-6: ``P = X R + phi`` with ``phi`` i.i.d. ``N(0, sigma^2)``.

    The privacy of the result depends on ``sigma`` being calibrated to the sensitivity of
    ``X -> X R`` under the chosen neighbour notion; :class:`DPPro` does that. This function
    releases whatever ``sigma`` it is given (used for audits and the paper's fixed-sigma runs).

    Parameters
    ----------
    X : array_like, shape (n, d)
    projection : array_like, shape (d, k)
    sigma : float
        Noise standard deviation, > 0.
    random_state : None, int, SeedSequence or Generator
    """
    X = check_array(X)
    R = _check_projection(projection)
    if X.shape[1] != R.shape[0]:
        raise ValueError(f"X has {X.shape[1]} columns but the projection has {R.shape[0]} rows; they must match")
    sigma = check_positive(sigma, "sigma")
    rng = check_random_state(random_state)
    return X @ R + rng.normal(0.0, sigma, size=(X.shape[0], R.shape[1]))


# --------------------------------------------------------------------------------------
# Sensitivities of X -> X R
# --------------------------------------------------------------------------------------
def attribute_sensitivity(projection, width=1.0, groups=()) -> float:
    """L2 sensitivity of ``X -> X R`` when one attribute of one record changes (Definition 3, Theorem 2).

    For attributes stored in one column this is ``max_j w_j ||R_j||_2``, where ``R_j`` is row
    ``j`` of ``R`` and ``w_j`` the range of attribute ``j``; for binary data (``w = 1``) it is
    the paper's ``theta_2(R)``. A categorical attribute one-hot encoded in the columns ``G``
    changes from level ``a`` to level ``b`` by moving the row by ``e_b - e_a``, so it contributes
    ``max_{a != b in G} ||R_a - R_b||_2`` (and ``||R_a||_2``, for an all-zero missing level);
    this can be up to twice the single-column value, which is why one-hot data must declare
    its groups.

    Parameters
    ----------
    projection : array_like, shape (d, k)
    width : float or array_like of shape (d,)
        ``high - low`` of each attribute, > 0 (columns inside ``groups`` must have width 1).
    groups : sequence of sequences of int
        Disjoint column index sets, each the one-hot block of one categorical attribute.
    """
    R = _check_projection(projection)
    w = _check_width(width, R.shape[0])
    groups = _check_groups(groups, R.shape[0])
    norms = w * np.linalg.norm(R, axis=1)
    grouped = np.zeros(R.shape[0], dtype=bool)
    best = 0.0
    for g in groups:
        if np.any(w[g] != 1):
            raise ValueError("one-hot columns in groups must have range [0, 1] (width 1)")
        grouped[g] = True
        Rg = R[g]
        sq = np.sum(Rg ** 2, axis=1)
        pair = np.sqrt(np.maximum(sq[:, None] + sq[None, :] - 2 * Rg @ Rg.T, 0.0))
        best = max(best, float(pair.max()), float(np.sqrt(sq.max())))
    if not grouped.all():
        best = max(best, float(np.max(norms[~grouped])))
    return best


def record_sensitivity(projection, width=1.0) -> float:
    """Certified upper bound on the L2 sensitivity of ``X -> X R`` when one whole record changes.

    The change of the released row is ``v R`` with ``|v_j| <= w_j``, so the sensitivity is
    ``max_v ||v R||_2`` over that box. Two upper bounds hold for every such ``v``:
    ``||v R|| <= ||v||_2 ||R||_2 <= ||w||_2 ||R||_2`` (spectral norm) and
    ``||v R|| <= sum_j w_j ||R_j||_2`` (triangle inequality); this returns the smaller. The true
    value lies between :func:`worst_record_change` and this bound.

    Parameters
    ----------
    projection : array_like, shape (d, k)
    width : float or array_like of shape (d,)
    """
    R = _check_projection(projection)
    w = _check_width(width, R.shape[0])
    spectral = np.linalg.norm(w) * np.linalg.norm(R, 2)
    triangle = float(np.sum(w * np.linalg.norm(R, axis=1)))
    return float(min(spectral, triangle))


def worst_record_change(projection, width=1.0, *, n_starts=10, random_state=None):
    """A record change ``v`` (``|v_j| <= w_j``) with large ``||v R||_2``: a lower bound on the sensitivity.

    ``max_v ||v R||`` is a convex maximisation, attained at a vertex ``v = s * w`` with
    ``s in {-1, 1}^d``; it equals ``max_{||u|| = 1} ||diag(w) R u||_1``. Alternating
    ``s = sign(diag(w) R u)`` and ``u = (s w) R / ||(s w) R||`` never decreases the objective;
    the first start is the top right singular vector of ``diag(w) R``, the others are random.

    Parameters
    ----------
    projection : array_like, shape (d, k)
    width : float or array_like of shape (d,)
    n_starts : int
        Number of starting directions, >= 1.
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    v : ndarray, shape (d,)
        The change (entries ``+-w_j``); rows ``x = low + w (1 + s) / 2`` and
        ``x' = low + w (1 - s) / 2`` realise it.
    value : float
        ``||v R||_2``.
    """
    R = _check_projection(projection)
    w = _check_width(width, R.shape[0])
    n_starts = check_integer(n_starts, "n_starts")
    rng = check_random_state(random_state)
    WR = w[:, None] * R
    starts = [np.linalg.svd(WR, full_matrices=False)[2][0]]
    starts += [rng.standard_normal(R.shape[1]) for _ in range(n_starts - 1)]
    best_s, best_value = None, -np.inf
    for u in starts:
        s = np.where(WR @ u >= 0, 1.0, -1.0)
        for _ in range(100):
            g = s @ WR
            if not np.any(g):
                break
            s_new = np.where(WR @ (g / np.linalg.norm(g)) >= 0, 1.0, -1.0)
            if np.array_equal(s_new, s):
                break
            s = s_new
        value = float(np.linalg.norm(s @ WR))
        if value > best_value:
            best_s, best_value = s, value
    return best_s * w, best_value


# --------------------------------------------------------------------------------------
# The paper's noise calibrations (Theorem 2, Lemma 4)
# --------------------------------------------------------------------------------------
def theorem2_sigma(sensitivity, epsilon, delta) -> float:
    """Theorem 2 / Lemma 3: ``sigma = theta_2 sqrt(2 (ln(1 / (2 delta)) + epsilon)) / epsilon``.

    Needs ``delta < 1/2``. The proof (Appendix A) holds for every ``epsilon > 0``; the result is
    1.2-4 times the smallest valid sigma (:func:`dpnb.mechanisms.gaussian_sigma_analytic`) for
    ``epsilon <= 10`` and ``delta <= 1e-3``.
    """
    sensitivity = check_positive(sensitivity, "sensitivity")
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if delta >= 0.5:
        raise ValueError(f"Theorem 2 needs delta < 1/2, got {delta}; pass a smaller delta")
    return sensitivity * np.sqrt(2 * (np.log(1 / (2 * delta)) + epsilon)) / epsilon


def lemma4_sigma(epsilon, delta, width=1.0) -> float:
    """Lemma 4: the projection-independent noise level ``sigma = 4 w sqrt(ln(1/delta)) / epsilon``.

    Valid (for the attribute neighbour) when ``epsilon < ln(1/delta)`` and ``k`` is at least
    :func:`lemma4_min_components`: then ``theta_2(R) <= 2`` except with probability ``delta / 2``
    over ``R`` and Theorem 2 at ``delta / 2`` applies. ``width`` scales the sensitivity for
    attributes of range ``w`` (the paper assumes binary data, ``w = 1``).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    width = check_positive(width, "width")
    if epsilon >= np.log(1 / delta):
        raise ValueError(f"Lemma 4 needs epsilon < ln(1/delta) = {np.log(1 / delta):.4g}, got {epsilon}; "
                         "use a smaller epsilon or delta, or another calibration")
    return 4 * width * np.sqrt(np.log(1 / delta)) / epsilon


def lemma4_min_components(n_features, delta) -> int:
    """Smallest integer ``k > 2 (ln d + ln(2 / delta))`` (Lemma 4's condition on the projected dimension)."""
    d = check_integer(n_features, "n_features")
    delta = check_delta(delta)
    return int(np.floor(2 * (np.log(d) + np.log(2 / delta)))) + 1


def theta2_tail_bound(n_features, n_components, delta) -> float:
    """Appendix B: ``P[theta_2(R) > 1 + sqrt(2 (ln d + ln(2/delta)) / k)] < delta / 2``.

    Follows from the Laurent-Massart chi-square tail ``P[chi2_k >= k + 2 sqrt(k x) + 2 x] <= e^-x``
    and a union bound over the ``d`` rows of ``R``.
    """
    d = check_integer(n_features, "n_features")
    k = check_integer(n_components, "n_components")
    delta = check_delta(delta)
    return 1 + np.sqrt(2 * (np.log(d) + np.log(2 / delta)) / k)


def theta2_survival(t, n_features, n_components):
    """Exact ``P[theta_2(R) > t]`` for ``R`` with i.i.d. ``N(0, 1/k)`` entries.

    The squared row norms are independent ``chi2_k / k`` variables, so
    ``P[theta_2 > t] = 1 - F_{chi2_k}(k t^2)^d``. ``t`` may be an array.
    """
    d = check_integer(n_features, "n_features")
    k = check_integer(n_components, "n_components")
    t = check_array(t, ndim=None, name="t")
    # 1 - F^d computed as -expm1(d log F) to keep tiny tails accurate
    out = -np.expm1(d * stats.chi2.logcdf(k * t ** 2, k))
    return float(out) if out.ndim == 0 else out


def theta2_quantile(q, n_features, n_components) -> float:
    """Exact ``q``-quantile of ``theta_2(R)``: ``sqrt(F^{-1}_{chi2_k}(q^{1/d}) / k)`` (inverse of :func:`theta2_survival`)."""
    if isinstance(q, bool) or not isinstance(q, numbers.Real) or not 0 < q < 1:
        raise ValueError(f"q must be a probability in (0, 1), got {q!r}")
    d = check_integer(n_features, "n_features")
    k = check_integer(n_components, "n_components")
    return float(np.sqrt(stats.chi2.ppf(q ** (1 / d), k) / k))


# --------------------------------------------------------------------------------------
# Algorithm 2 and the utility analysis (Theorem 3, Lemma 5)
# --------------------------------------------------------------------------------------
def squared_distance_estimate(P, sigma, pairs=None):
    """Algorithm 2: estimate ``||x_i - x_j||^2`` by ``||p_i - p_j||^2 - 2 k sigma^2``.

    Unbiased over ``R`` and the noise for ``i != j`` (Theorem 3 (i)); the estimate for
    ``i == j`` is set to 0, the known answer (the noise cancels there, so the formula would
    give ``-2 k sigma^2``). The estimate can be negative.

    Parameters
    ----------
    P : array_like, shape (n, k)
        A released matrix.
    sigma : float
        The noise standard deviation it was released with.
    pairs : array_like of int, shape (m, 2), optional
        Row pairs to estimate; default: all pairs, as an ``n x n`` matrix.

    Returns
    -------
    ndarray of shape (n, n), or (m,) when ``pairs`` is given.
    """
    P = check_array(P, name="P")
    sigma = check_positive(sigma, "sigma")
    bias = 2 * P.shape[1] * sigma ** 2
    if pairs is None:
        sq = np.sum(P ** 2, axis=1)
        est = np.maximum(sq[:, None] + sq[None, :] - 2 * P @ P.T, 0.0) - bias
        np.fill_diagonal(est, 0.0)
        return est
    pairs = np.asarray(pairs)
    if pairs.ndim != 2 or pairs.shape[1] != 2 or not np.issubdtype(pairs.dtype, np.integer):
        raise ValueError(f"pairs must be an integer array of shape (m, 2), got {pairs.dtype} {pairs.shape}")
    if pairs.size and (pairs.min() < 0 or pairs.max() >= P.shape[0]):
        raise ValueError(f"pairs must index rows of P, i.e. lie in [0, {P.shape[0]})")
    diff = P[pairs[:, 0]] - P[pairs[:, 1]]
    return np.where(pairs[:, 0] == pairs[:, 1], 0.0, np.sum(diff ** 2, axis=1) - bias)


def squared_distance_variance(rho2, n_components, sigma):
    """Theorem 3 (ii): ``Var = 2 rho^4 / k + 8 sigma^2 rho^2 + 8 k sigma^4`` with ``rho^2 = ||x - y||^2``.

    The variance is over both ``R`` and the noise, for a fixed pair of distinct rows.
    Arguments broadcast.
    """
    rho2 = check_array(rho2, ndim=None, name="rho2")
    k = check_array(n_components, ndim=None, name="n_components")
    sigma = check_array(sigma, ndim=None, name="sigma")
    if np.any(rho2 < 0) or np.any(k < 1) or np.any(sigma < 0):
        raise ValueError("need rho2 >= 0, n_components >= 1 and sigma >= 0")
    out = 2 * rho2 ** 2 / k + 8 * sigma ** 2 * rho2 + 8 * k * sigma ** 4
    return float(out) if out.ndim == 0 else out


def optimal_n_components(rho2, sigma, max_components=None) -> int:
    """Lemma 5, corrected: the integer ``k`` minimising the variance of Theorem 3 for fixed sigma.

    ``dVar/dk = -2 rho^4 / k^2 + 8 sigma^4 = 0`` gives the real minimiser ``k* = rho^2 / (2 sigma^2)``
    (the paper reaches the same expression by differentiating in ``rho^2``, which is not the
    variable being chosen). ``Var`` is convex in ``k > 0``, so the best integer is ``floor(k*)`` or
    ``ceil(k*)``, clipped to ``[1, max_components]``.

    Parameters
    ----------
    rho2 : float
        Squared distance of the pair(s) of interest, > 0.
    sigma : float
        Noise standard deviation, > 0, assumed not to depend on ``k`` (as in Lemma 4).
    max_components : int, optional
        Upper limit, typically ``d``.
    """
    rho2 = check_positive(rho2, "rho2")
    sigma = check_positive(sigma, "sigma")
    hi = np.inf if max_components is None else check_integer(max_components, "max_components")
    k_star = rho2 / (2 * sigma ** 2)
    candidates = {int(np.clip(c, 1, hi)) for c in (np.floor(k_star), np.ceil(k_star))}
    return min(sorted(candidates), key=lambda c: squared_distance_variance(rho2, c, sigma))


def relative_l2_error(true, estimate) -> float:
    """The paper's eq. (12): ``||U^2 - U~^2||_2^2 / ||U^2||_2^2`` over a set of pairs."""
    true = np.ravel(check_array(true, ndim=None, name="true"))
    estimate = np.ravel(check_array(estimate, ndim=None, name="estimate"))
    if true.shape != estimate.shape:
        raise ValueError(f"true and estimate must have the same size, got {true.size} and {estimate.size}")
    denom = float(true @ true)
    if denom == 0:
        raise ValueError("the true squared distances are all zero; the relative error is undefined")
    return float(np.sum((true - estimate) ** 2) / denom)


# --------------------------------------------------------------------------------------
# Estimator
# --------------------------------------------------------------------------------------
class DPPro:
    """DPPro release (Algorithm 1) with an explicit neighbour notion and noise calibration.

    Parameters
    ----------
    n_components : int
        Projected dimension ``k``, ``1 <= k <= d``.
    epsilon, delta : float
        Privacy parameters, ``epsilon > 0``, ``0 < delta < 1``.
    neighbor : {"attribute", "record"}
        ``"attribute"``: neighbours differ in one attribute of one record (the paper's
        Definition 1); ``"record"``: in one whole record. See the module docstring.
    calibration : {"analytic", "classic", "theorem2", "lemma4"}
        How sigma follows from the sensitivity: ``"analytic"`` (exact Gaussian privacy curve,
        Balle & Wang 2018), ``"classic"`` (Dwork & Roth, refused for ``epsilon >= 1``),
        ``"theorem2"`` (the paper's Theorem 2, needs ``delta < 1/2``), ``"lemma4"`` (the paper's
        projection-independent sigma; attribute neighbour only, needs ``epsilon < ln(1/delta)``
        and ``k >= lemma4_min_components(d, delta)``; its guarantee holds over the draw of ``R``).
    low, high : float or array_like of shape (d,)
        Public bounds of every attribute. Rows outside them are rejected with ValueError.
    attribute_groups : sequence of sequences of int
        One-hot column blocks, one per categorical attribute, for ``neighbor="attribute"``:
        changing such an attribute moves two columns at once (see :func:`attribute_sensitivity`).
        Rows that are not one-hot inside a declared block are rejected.
    random_state : None, int, SeedSequence or Generator

    Attributes
    ----------
    projection_ : ndarray, shape (d, k)
        The released projection matrix ``R``.
    sensitivity_ : float
        L2 sensitivity of ``X -> X R`` under ``neighbor`` (for ``"record"``, the certified upper
        bound of :func:`record_sensitivity`). With ``"lemma4"`` it is reported but not used:
        that sigma does not depend on ``R``.
    sigma_ : float
        Noise standard deviation used.
    embedding_ : ndarray, shape (n, k)
        The released matrix ``P``.
    n_features_in_ : int
    """

    def __init__(self, n_components, epsilon, delta, *, neighbor="attribute", calibration="analytic",
                 low=0.0, high=1.0, attribute_groups=(), random_state=None):
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.neighbor = neighbor
        self.calibration = calibration
        self.low = low
        self.high = high
        self.attribute_groups = attribute_groups
        self.random_state = random_state

    def fit(self, X, y=None):
        """Draw ``R``, calibrate sigma and release ``P = X R + phi``; ``y`` is ignored."""
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta)
        if self.neighbor not in NEIGHBORS:
            raise ValueError(f"neighbor must be one of {NEIGHBORS}, got {self.neighbor!r}")
        if self.calibration not in CALIBRATIONS:
            raise ValueError(f"calibration must be one of {CALIBRATIONS}, got {self.calibration!r}")
        X = check_array(X)
        d = X.shape[1]
        low, high = _check_bounds(self.low, self.high, d)
        X = check_in_box(X, low, high)
        k = check_n_components(self.n_components, d)
        width = high - low
        groups = _check_groups(self.attribute_groups, d)
        for g in groups:
            block = X[:, g]
            if np.any((block != 0) & (block != 1)) or np.any(block.sum(axis=1) > 1):
                raise ValueError(f"columns {g.tolist()} are declared one-hot but some rows are not 0/1 "
                                 "with at most one 1; fix the encoding or the attribute_groups")
        if self.calibration == "lemma4":
            if self.neighbor != "attribute" or np.ptp(width) > 0 or groups:
                raise ValueError("calibration='lemma4' covers only neighbor='attribute' on single columns with one common "
                                 "attribute range; use 'analytic' or 'theorem2'")
            k_min = lemma4_min_components(d, delta)
            if k < k_min:
                raise ValueError(f"calibration='lemma4' needs n_components >= {k_min} for d={d}, "
                                 f"delta={delta}; increase n_components or use 'analytic'")
        rng = check_random_state(self.random_state)
        R = gaussian_projection(d, k, random_state=rng)
        if self.neighbor == "attribute":
            sensitivity = attribute_sensitivity(R, width, groups)
        else:
            sensitivity = record_sensitivity(R, width)
        if self.calibration == "theorem2":
            sigma = theorem2_sigma(sensitivity, epsilon, delta)
        elif self.calibration == "lemma4":
            sigma = lemma4_sigma(epsilon, delta, float(width[0]))
        else:
            sigma = gaussian_sigma(sensitivity, epsilon, delta, self.calibration)
        self.projection_ = R
        self.sensitivity_ = sensitivity
        self.sigma_ = float(sigma)
        self.n_features_in_ = d
        self.embedding_ = project_and_perturb(X, R, self.sigma_, random_state=rng)
        return self

    def fit_transform(self, X, y=None):
        """:meth:`fit`, then return the released matrix ``P`` (``n x k``)."""
        return self.fit(X, y).embedding_

    def estimate_squared_distances(self, pairs=None):
        """Algorithm 2 on the released matrix (see :func:`squared_distance_estimate`)."""
        if not hasattr(self, "embedding_"):
            raise ValueError("this DPPro instance is not fitted yet; call fit(X) first")
        return squared_distance_estimate(self.embedding_, self.sigma_, pairs)


# --------------------------------------------------------------------------------------
# Private helpers
# --------------------------------------------------------------------------------------
def _check_projection(projection) -> np.ndarray:
    R = check_array(projection, name="projection")
    if R.shape[1] < 1:
        raise ValueError("projection must have at least one column")
    return R


def _per_attribute(value, d, name) -> np.ndarray:
    """A scalar or a length-``d`` vector, returned as a float vector of length ``d``."""
    v = check_array(value, ndim=None, name=name)
    if v.ndim > 1 or (v.ndim == 1 and v.size != d):
        raise ValueError(f"{name} must be a scalar or have one entry per attribute ({d}), got shape {v.shape}")
    return np.broadcast_to(v, (d,)).astype(float)


def _check_width(width, d) -> np.ndarray:
    w = _per_attribute(width, d, "width")
    if np.any(w <= 0):
        raise ValueError("width (high - low) must be > 0 for every attribute")
    return w


def _check_groups(groups, d) -> list[np.ndarray]:
    """Disjoint one-hot column blocks, each of at least two valid column indices."""
    out, seen = [], set()
    for g in groups:
        idx = np.asarray(g)
        if idx.ndim != 1 or idx.size < 2 or not np.issubdtype(idx.dtype, np.integer):
            raise ValueError("each entry of groups must be a sequence of >= 2 integer column indices")
        if idx.min() < 0 or idx.max() >= d:
            raise ValueError(f"group column indices must lie in [0, {d}), got {idx.tolist()}")
        if seen & set(idx.tolist()) or len(set(idx.tolist())) != idx.size:
            raise ValueError("groups must be disjoint and list each column once")
        seen |= set(idx.tolist())
        out.append(idx)
    return out


def _check_bounds(low, high, d):
    low, high = _per_attribute(low, d, "low"), _per_attribute(high, d, "high")
    if np.any(low >= high):
        raise ValueError("bounds must satisfy low < high for every attribute")
    return low, high
