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

* ``"change-attribute"`` (the paper's Definition 1 and Theorem 2): one attribute ``j`` of one record
  changes inside its range ``[low_j, high_j]``. The released matrix changes in one row by
  ``(x'_aj - x_aj) R_j``, so the sensitivity is ``max_j w_j ||R_j||_2`` with ``w = high - low``
  (``theta_2(R)`` of Definition 3 for binary data).
* ``"replace-row"`` (the usual replace-one-row notion): a whole record changes inside the box. The
  change is ``v R`` with ``|v_j| <= w_j``; its maximum ``||diag(w) R||_{inf->2}`` is attained at a
  sign vector and is hard to compute exactly, so the mechanism calibrates to the certified upper
  bound of :func:`record_sensitivity` (a weighted Cauchy-Schwarz certificate whose optimum is the
  semidefinite-relaxation bound); :func:`worst_record_change` finds a change close to it.

Estimator
---------
:class:`DPPro` is a scikit-learn transformer: ``fit`` releases ``(R, P)`` for the training rows,
``fit_transform`` returns ``P``, and ``transform`` applies the public ``R`` to other rows without
noise (the caller's own data, not a private release).

Data outside the declared bounds is rejected (never clipped): bounds are public arguments.
"""

from __future__ import annotations

import functools
import numbers

import numpy as np
from scipy import optimize, special, stats
from sklearn.base import TransformerMixin
from sklearn.utils.validation import check_is_fitted

from dpnb.ground.validation import (
    check_array,
    check_bounds,
    check_choice,
    check_data_in_bounds,
    check_delta,
    check_epsilon,
    check_fraction,
    check_in_box,
    check_integer,
    check_n_components,
    check_nonnegative,
    check_per_feature,
    check_positive,
    check_random_state,
    check_release_range,
    check_sensitivity,
    first_few,
)
from dpnb.numerics.blocks import check_rows, is_dask_array, map_rows
from dpnb.privacy import exact_noise
from dpnb.privacy.audit import check_neighbours
from dpnb.privacy.estimator import PrivateEstimator, with_sampling_delta
from dpnb.privacy.mechanisms import CALIBRATIONS, gaussian_sigma

NEIGHBOURS = ("change-attribute", "replace-row")  # the notions of dpnb.privacy.audit.NEIGHBOURS DPPro calibrates to
NOISE_SCALES = ("corrected", "paper", "lemma4")  # DPPro's noise_scale values


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
        Noise standard deviation, >= 0 (0: the noiseless projection, no privacy).
    random_state : None, int, SeedSequence or Generator
    """
    X = check_array(X)
    R = _check_projection(projection)
    if X.shape[1] != R.shape[0]:
        raise ValueError(f"X has {X.shape[1]} columns but the projection has {R.shape[0]} rows; they must match")
    return _release(X, R, check_nonnegative(sigma, "sigma"), check_random_state(random_state))


# --------------------------------------------------------------------------------------
# Sensitivities of X -> X R
# --------------------------------------------------------------------------------------
def attribute_sensitivity(projection, bounds=(0.0, 1.0), groups=()) -> float:
    """L2 sensitivity of ``X -> X R`` when one attribute of one record changes (Definition 3, Theorem 2).

    For attributes stored in one column this is ``max_j w_j ||R_j||_2``, where ``R_j`` is row
    ``j`` of ``R`` and ``w_j = high_j - low_j`` the range of attribute ``j``; for binary data (``w = 1``) it is
    the paper's ``theta_2(R)``. A categorical attribute one-hot encoded in the columns ``G``
    changes from level ``a`` to level ``b`` by moving the row by ``e_b - e_a``, so it contributes
    ``max_{a != b in G} ||R_a - R_b||_2`` (and ``||R_a||_2``, for an all-zero missing level);
    this can be up to twice the single-column value, which is why one-hot data must declare
    its groups.

    Parameters
    ----------
    projection : array_like, shape (d, k)
    bounds : pair (low, high)
        Public bounds of every attribute, scalars or arrays of shape ``(d,)``
        (:func:`dpnb.ground.validation.check_bounds`); columns inside ``groups`` must have range 1.
    groups : sequence of sequences of int
        Disjoint column index sets, each the one-hot block of one categorical attribute.
    """
    R = _check_projection(projection)
    w = _widths(bounds, R.shape[0])
    groups = _check_groups(groups, R.shape[0])
    norms = w * np.linalg.norm(R, axis=1)
    grouped = np.zeros(R.shape[0], dtype=bool)
    best = 0.0
    for g in groups:
        if np.any(w[g] != 1):
            raise ValueError("one-hot columns in groups must have bounds with high - low = 1 (e.g. [0, 1])")
        grouped[g] = True
        Rg = R[g]
        sq = np.sum(Rg**2, axis=1)
        pair = np.sqrt(np.maximum(sq[:, None] + sq[None, :] - 2 * Rg @ Rg.T, 0.0))
        best = max(best, float(pair.max()), float(np.sqrt(sq.max())))
    if not grouped.all():
        best = max(best, float(np.max(norms[~grouped])))
    return best


def record_sensitivity(projection, bounds=(0.0, 1.0), weights=None) -> float:
    """Certified upper bound on the L2 sensitivity of ``X -> X R`` when one whole record changes.

    The change of the released row is ``v R`` with ``|v_j| <= w_j = high_j - low_j``. For any positive weights
    ``y`` (one per attribute), Cauchy-Schwarz with ``Y = diag(y)`` gives, for every such ``v``,

        ``||v R||^2 = ||(v Y^{1/2}) (Y^{-1/2} R)||^2 <= (sum_j y_j w_j^2) * lambda_max(R^T Y^{-1} R)``,

    so the square root of the right side bounds the sensitivity. ``y = 1`` is the spectral
    bound ``||w||_2 ||R||_2``. Minimised over ``y``, the right side equals the value of the
    semidefinite relaxation of ``max_s ||(s w) R||^2`` over sign vectors ``s`` (with
    ``z_j = lambda_max y_j w_j^2``, a Schur complement turns it into that relaxation's dual,
    ``min sum_j z_j`` s.t. ``diag(z) - diag(w) R R^T diag(w)`` PSD). Any ``y`` gives a valid
    bound, so the result is a certificate however well the weights were optimised. Widths beyond
    ``[2^-200, 2^200]`` are scaled by a power of two first (exact), so squaring them neither over- nor
    underflows; a bound beyond float64's range comes out as inf or 0.

    Parameters
    ----------
    projection : array_like, shape (d, k)
    bounds : pair (low, high)
        Public bounds of every attribute, scalars or arrays of shape ``(d,)``.
    weights : array_like of shape (d,), optional
        The weights ``y`` (> 0); default: :func:`record_sensitivity_weights`, and the result is
        then also capped by the spectral bound.

    Returns
    -------
    float
        An upper bound on ``max_{|v_j| <= w_j} ||v R||_2``; :func:`worst_record_change` gives a
        lower bound.
    """
    R = _check_projection(projection)
    w = _widths(bounds, R.shape[0])
    e = 0 if 2.0**-200 <= w.max() <= 2.0**200 else -int(np.frexp(w.max())[1])  # squares of w stay in range
    w = np.ldexp(w, e)  # exact; the bound scales with w, so it is scaled back by 2^-e below
    if weights is None:
        spectral = float(np.ldexp(np.linalg.norm(w) * np.linalg.norm(R, 2), -e))
        return min(spectral, record_sensitivity(R, bounds, record_sensitivity_weights(R, bounds)))
    y = check_per_feature(weights, R.shape[0], "weights")
    if np.any(y <= 0):
        raise ValueError("weights must be > 0 for every attribute")
    with np.errstate(over="ignore", under="ignore"):  # a bound beyond float64 is inf or 0: refused by the callers
        return float(np.ldexp(np.sqrt(np.sum(y * w**2) * np.linalg.eigvalsh((R.T / y) @ R)[-1]), -e))


def record_sensitivity_weights(projection, bounds=(0.0, 1.0), *, smoothing=(1e-2, 1e-3, 1e-4), max_iter=200):
    """Weights ``y`` that make the bound of :func:`record_sensitivity` small.

    Minimises ``log(sum_j y_j w_j^2) + log lambda_max(R^T diag(1/y) R)`` over ``y = exp(u)`` with
    L-BFGS, replacing ``lambda_max`` by a log-sum-exp of the ``k`` eigenvalues whose temperature
    (relative to ``lambda_max``) decreases through ``smoothing``. Each evaluation costs one
    ``k x k`` eigendecomposition. The start ``y_j = ||R_j|| / w_j`` already gives a bound below
    the triangle inequality ``sum_j w_j ||R_j||``. Widths near float64's limits: the minimiser does not change
    when ``w`` or ``y`` is scaled, so widths above ``2^200`` or below ``2^-200`` are first scaled by a power of two
    to a largest width near 1, a start with some ``|ln y_j| > 300`` is scaled to a geometric mean of 1, and a
    step to weights whose ``R^T diag(1/y) R`` leaves float64's range counts as an infinite objective (the
    search backtracks).

    Parameters
    ----------
    projection : array_like, shape (d, k)
    bounds : pair (low, high)
        Public bounds of every attribute, scalars or arrays of shape ``(d,)``.
    smoothing : sequence of float
        Successive relative temperatures, each > 0.
    max_iter : int
        L-BFGS iterations per temperature.

    Returns
    -------
    ndarray of shape (d,)
    """
    R = _check_projection(projection)
    w = _widths(bounds, R.shape[0])
    max_iter = check_integer(max_iter, "max_iter")
    norms = np.linalg.norm(R, axis=1)
    if np.any(norms == 0):
        raise ValueError("projection has an all-zero row; its attribute cannot move the release, drop it")

    def objective(u, temperature):
        with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
            y = np.exp(u)
            M = (R.T / y) @ R
        if not (np.all(np.isfinite(M)) and np.all(np.isfinite(y))):  # a step past float64's range (extreme widths)
            return np.inf, np.zeros_like(u)  # L-BFGS backtracks
        lam, V = np.linalg.eigh(M)
        top = lam[-1]
        z = np.exp((lam - top) / (temperature * top))
        p = z / z.sum()
        smooth_max = top + temperature * top * np.log(z.sum())
        total = float(np.sum(y * w**2))
        grad = y * w**2 / total - ((R @ V) ** 2 @ p) / y / smooth_max
        return np.log(total) + np.log(smooth_max), grad

    if not 2.0**-200 <= w.max() <= 2.0**200:  # the weights do not change when w is scaled: bring w near 1
        w = np.ldexp(w, -np.frexp(w.max())[1])
    u = np.log(norms / w)
    if np.abs(u).max() > 300:  # the objective is invariant to u + c: start from y near 1
        u -= u.mean()
    for temperature in smoothing:
        temperature = check_positive(temperature, "smoothing")
        u = optimize.minimize(
            objective, u, args=(temperature,), jac=True, method="L-BFGS-B", options={"maxiter": max_iter}
        ).x
    return np.exp(u)


def worst_record_change(projection, bounds=(0.0, 1.0), *, n_starts=10, random_state=None):
    """A record change ``v`` (``|v_j| <= w_j``) with large ``||v R||_2``: a lower bound on the sensitivity.

    ``max_v ||v R||`` is a convex maximisation, attained at a vertex ``v = s * w`` with
    ``s in {-1, 1}^d``; it equals ``max_{||u|| = 1} ||diag(w) R u||_1``. Alternating
    ``s = sign(diag(w) R u)`` and ``u = (s w) R / ||(s w) R||`` never decreases the objective;
    the first start is the top right singular vector of ``diag(w) R``, the others are random.

    Parameters
    ----------
    projection : array_like, shape (d, k)
    bounds : pair (low, high)
        Public bounds of every attribute, scalars or arrays of shape ``(d,)``; ``w = high - low``.
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
    w = _widths(bounds, R.shape[0])
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
    1.2-4 times the smallest valid sigma (:func:`dpnb.privacy.mechanisms.gaussian_sigma_analytic`) for
    ``epsilon <= 10`` and ``delta <= 1e-3``. ``epsilon = inf`` gives 0 (no noise).
    """
    sensitivity = check_positive(sensitivity, "sensitivity")
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if delta >= 0.5:
        raise ValueError(f"Theorem 2 needs delta < 1/2, got {delta}; pass a smaller delta")
    if np.isinf(epsilon):
        return 0.0
    return sensitivity * np.sqrt(2 * (_log_ratio(0.5, delta) + epsilon)) / epsilon


def lemma4_sigma(epsilon, delta, bounds=(0.0, 1.0)) -> float:
    """Lemma 4: the projection-independent noise level ``sigma = 4 w sqrt(ln(1/delta)) / epsilon``.

    Valid (for the attribute neighbour) when ``epsilon < ln(1/delta)`` and ``k`` is at least
    :func:`lemma4_min_components`: then ``theta_2(R) <= 2`` except with probability ``delta / 2``
    over ``R`` and Theorem 2 at ``delta / 2`` applies. ``bounds = (low, high)`` are the public
    bounds of the attributes, which must share one range ``w = high - low``; ``w`` scales the
    sensitivity (the paper assumes binary data, ``w = 1``). ``epsilon = inf`` gives 0.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    widths = _widths(bounds, None)
    if np.ptp(widths) > 0:
        raise ValueError(f"Lemma 4 needs one common attribute range high - low, got {widths}; use another noise_scale")
    width = float(widths[0])
    if np.isinf(epsilon):
        return 0.0
    if epsilon >= _log_ratio(1.0, delta):
        raise ValueError(
            f"Lemma 4 needs epsilon < ln(1/delta) = {_log_ratio(1.0, delta):.4g}, got {epsilon}; "
            "use a smaller epsilon or delta, or another noise_scale"
        )
    return 4 * width * np.sqrt(_log_ratio(1.0, delta)) / epsilon


def lemma4_min_components(n_features, delta) -> int:
    """Smallest integer ``k > 2 (ln d + ln(2 / delta))`` (Lemma 4's condition on the projected dimension)."""
    d = check_integer(n_features, "n_features")
    delta = check_delta(delta)
    return int(np.floor(2 * (np.log(d) + _log_ratio(2.0, delta)))) + 1


def chi2_tail_bounds(n_components, distortion):
    """Lemma 2, eqs. (5)-(6), corrected: Chernoff bounds on the tails of ``||x R||^2 / ||x||^2 ~ chi2_k / k``.

    With the chi-square moment generating function ``(1 - 2t)^(-k/2)`` optimised over ``t``,

        ``P[chi2_k > (1 + lam) k] <= ((1 + lam) e^(-lam))^(k/2)``  and
        ``P[chi2_k < (1 - lam) k] <= ((1 - lam) e^(lam))^(k/2)``.

    The paper prints the exponent ``k`` for both and ``e^(-lam)`` in the lower tail.

    Parameters
    ----------
    n_components : int or array_like of int
        ``k >= 1``.
    distortion : float or array_like
        ``lam`` in (0, 1). Arguments broadcast.

    Returns
    -------
    upper, lower : float or ndarray
    """
    k = check_array(n_components, ndim=None, name="n_components")
    lam = check_array(distortion, ndim=None, name="distortion")
    if np.any(k < 1) or np.any(k != np.round(k)):
        raise ValueError("n_components must be integers >= 1")
    if np.any(lam <= 0) or np.any(lam >= 1):
        raise ValueError("distortion must lie in (0, 1)")
    upper = np.exp(k / 2 * (np.log1p(lam) - lam))
    lower = np.exp(k / 2 * (np.log1p(-lam) + lam))
    if upper.ndim == 0:
        return float(upper), float(lower)
    return upper, lower


def theta2_tail_bound(n_features, n_components, delta) -> float:
    """Appendix B: ``P[theta_2(R) > 1 + sqrt(2 (ln d + ln(2/delta)) / k)] < delta / 2``.

    Follows from the Laurent-Massart chi-square tail ``P[chi2_k >= k + 2 sqrt(k x) + 2 x] <= e^-x``
    and a union bound over the ``d`` rows of ``R``. ``n_components`` may be an array of ints.
    """
    d = check_integer(n_features, "n_features")
    k = _check_components(n_components)
    delta = check_delta(delta)
    out = 1 + np.sqrt(2 * (np.log(d) + _log_ratio(2.0, delta)) / k)
    return float(out) if out.ndim == 0 else out


def theta2_survival(t, n_features, n_components):
    """Exact ``P[theta_2(R) > t]`` for ``R`` with i.i.d. ``N(0, 1/k)`` entries.

    The squared row norms are independent ``chi2_k / k`` variables, so
    ``P[theta_2 > t] = 1 - F_{chi2_k}(k t^2)^d``. ``t`` and ``n_components`` may be arrays (they
    broadcast).
    """
    d = check_integer(n_features, "n_features")
    k = _check_components(n_components)
    t = check_array(t, ndim=None, name="t")
    # 1 - F^d computed as -expm1(d log F) to keep tiny tails accurate
    out = -np.expm1(d * stats.chi2.logcdf(k * t**2, k))
    return float(out) if out.ndim == 0 else out


def lemma4_delta(epsilon, sigma, n_features, n_components, *, n_grid=3000) -> float:
    """Upper bound on the delta that a projection-independent sigma gives the pair ``(R, P)`` (attribute neighbour).

    ``R`` is public and drawn independently of the data, so at budget ``epsilon`` the release
    has ``delta <= E_R[delta_exact(epsilon; sigma, theta_2(R))]``, with ``delta_exact`` the exact
    Gaussian privacy curve (Balle & Wang 2018, Thm 8) at sensitivity ``theta_2(R)``. The curve
    increases with ``theta_2``, so a right-endpoint sum over the exact law of ``theta_2``
    (:func:`theta2_survival`) on ``n_grid`` cells up to ``t_max`` (where the tail is below
    ``e^-40``), plus ``P[theta_2 > t_max]``, is an upper bound. This is how Lemma 4's ``sigma`` is checked.

    Parameters
    ----------
    epsilon, sigma : float
        > 0.
    n_features, n_components : int
        ``d`` and ``k``.
    n_grid : int
        Number of cells of the ``theta_2`` grid.
    """
    epsilon = check_epsilon(epsilon, allow_infinite=False)
    sigma = check_positive(sigma, "sigma")
    d = check_integer(n_features, "n_features")
    k = check_integer(n_components, "n_components")
    n_grid = check_integer(n_grid, "n_grid")
    t_max = theta2_tail_bound(d, k, 2 * np.exp(-40.0))  # P[theta_2 > t_max] < e^-40 (Appendix B's bound)
    t = np.linspace(0.0, t_max, n_grid + 1)
    cdf = 1 - theta2_survival(t, d, k)
    r = t[1:] / sigma  # sensitivity / sigma at the right end of each cell
    curve = np.exp(special.log_ndtr(r / 2 - epsilon / r)) - np.exp(epsilon + special.log_ndtr(-r / 2 - epsilon / r))
    return float(np.sum(np.diff(cdf) * np.maximum(curve, 0.0)) + theta2_survival(t_max, d, k))


def theta2_quantile(q, n_features, n_components) -> float:
    """Exact ``q``-quantile of ``theta_2(R)``: ``sqrt(F^{-1}_{chi2_k}(q^{1/d}) / k)``.

    The inverse of :func:`theta2_survival` in ``t``.
    """
    q = check_fraction(q, "q", low_open=True)
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
        The noise standard deviation it was released with (>= 0).
    pairs : array_like of int, shape (m, 2), optional
        Row pairs to estimate; default: all pairs, as an ``n x n`` matrix.

    Returns
    -------
    ndarray of shape (n, n), or (m,) when ``pairs`` is given.
    """
    P = check_array(P, name="P")
    sigma = check_nonnegative(sigma, "sigma")
    bias = 2 * P.shape[1] * sigma**2
    if pairs is None:
        sq = np.sum(P**2, axis=1)
        est = np.maximum(sq[:, None] + sq[None, :] - 2 * P @ P.T, 0.0) - bias
        np.fill_diagonal(est, 0.0)
        return est
    pairs = np.asarray(pairs)
    if pairs.ndim != 2 or pairs.shape[1] != 2 or not np.issubdtype(pairs.dtype, np.integer):
        raise ValueError(f"pairs must be an integer array of shape (m, 2), got {pairs.dtype} {pairs.shape}")
    if pairs.size and (pairs.min() < 0 or pairs.max() >= P.shape[0]):
        raise ValueError(f"pairs must index rows of P, i.e. lie in [0, {P.shape[0]})")
    diff = P[pairs[:, 0]] - P[pairs[:, 1]]
    return np.where(pairs[:, 0] == pairs[:, 1], 0.0, np.sum(diff**2, axis=1) - bias)


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
    out = 2 * rho2**2 / k + 8 * sigma**2 * rho2 + 8 * k * sigma**4
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
    k_star = rho2 / (2 * sigma**2)
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
class DPPro(TransformerMixin, PrivateEstimator):
    """DPPro release (Algorithm 1) with an explicit neighbour notion and noise calibration.

    ``fit(X)`` draws the public projection ``R`` (``d x k``, entries ``N(0, 1/k)``), calibrates
    sigma to the sensitivity of ``X -> X R`` and releases ``P = X R + phi``: that pair ``(R, P)``
    is the differentially private output, and ``fit_transform(X)`` returns ``P``.
    ``transform(X_new)`` returns ``X_new R`` **without noise**: it is the public projection
    applied to data the caller already holds (e.g. its own test rows, as in the paper's SVM
    experiment), not a private release of ``X_new``. In a scikit-learn ``Pipeline`` the model is
    therefore trained on the private release and applied to the analyst's projected rows.

    Parameters
    ----------
    n_components : int
        Projected dimension ``k``, ``1 <= k <= d`` (the paper's ``k``).
    epsilon : float
        Privacy budget, > 0; ``numpy.inf`` releases ``X R`` without noise (the non-private limit).
    delta : float
        In (0, 1); ``noise_scale="paper"`` needs ``delta < 1/2``.
    neighbours : {"change-attribute", "replace-row"}
        ``"change-attribute"``: neighbours differ in one attribute of one record (the paper's
        Definition 1 and Theorem 2); ``"replace-row"``: in one whole record (certified upper bound
        of :func:`record_sensitivity`). Names of ``dpnb.privacy.audit.NEIGHBOURS``; see the
        module docstring.
    noise_scale : {"corrected", "paper", "lemma4"}
        ``"corrected"``: the smallest sigma by the exact Gaussian privacy curve (or the classic
        formula, see ``calibration``); ``"paper"``: Theorem 2's
        ``sigma = Delta sqrt(2 (ln(1/(2 delta)) + epsilon)) / epsilon`` (valid, 1.2-4x larger);
        ``"lemma4"``: the paper's projection-independent ``sigma = 4 w sqrt(ln(1/delta)) / epsilon``
        (attribute neighbour on single columns of one common range only, needs
        ``epsilon < ln(1/delta)`` and ``n_components >= lemma4_min_components(d, delta)``; its
        guarantee holds over the draw of ``R``).
    calibration : {"analytic", "classic"}
        The Gaussian calibration used by ``noise_scale="corrected"``: ``"analytic"`` (Balle &
        Wang 2018) or ``"classic"`` (Dwork & Roth, refused for ``epsilon >= 1``).
    bounds : tuple (low, high)
        Public bounds of every attribute, scalars or arrays of shape ``(d,)``. Rows outside them
        are rejected with ValueError (never clipped).
    attribute_groups : sequence of sequences of int
        One-hot column blocks, one per categorical attribute, for ``neighbours="change-attribute"``:
        changing such an attribute moves two columns at once (see :func:`attribute_sensitivity`).
        Rows that are not one-hot inside a declared block are rejected.
    noise : {"float", "exact"}
        ``"float"`` (default): numpy's floating-point Gaussian noise at sigma (its set of possible
        outputs depends on the data, Mironov 2012). ``"exact"``: exact discrete Gaussian noise on a
        grid ``2^-j`` (:func:`dpnb.privacy.exact_noise.grid_gaussian_release_sigma`), the grid rounding
        accounted for; with ``noise_scale="corrected"`` sigma then comes from the zCDP bound
        (:func:`dpnb.privacy.exact_noise.zcdp_sigma`, ``calibration`` no longer applies), so the release is
        (epsilon, delta)-DP as stated; with ``"paper"`` or ``"lemma4"`` it keeps the zCDP
        ``rho = Delta^2 / (2 sigma^2)`` of the continuous Gaussian at the paper's sigma.
    random_state : None, int, SeedSequence or Generator
        The same int gives the same ``R`` and noise on every fit.

    Bounds so wide that the release could overflow float64, or so narrow that the sensitivity
    underflows, are refused with a ValueError naming ``bounds``.

    Attributes
    ----------
    components_ : ndarray, shape (n_components, n_features)
        ``R^T``: the released projection matrix in scikit-learn's layout (rows are components, as
        in :class:`sklearn.decomposition.PCA`); ``R`` itself is ``components_.T``.
    sensitivity_ : dict
        ``{"projection": Delta}``: the L2 sensitivity of ``X -> X R`` under ``neighbours``. With
        ``"lemma4"`` it is reported but not used: that sigma does not depend on ``R``.
    budget_ : dict
        ``{"projection": (epsilon, delta)}``: the release is one Gaussian mechanism. With ``noise="exact"``
        delta plus the sampler's ``sampling_delta(epsilon, n k)`` for its ``n k`` draws
        (:func:`dpnb.privacy.estimator.with_sampling_delta`).
    sigma_ : float
        Noise standard deviation used (0 for ``epsilon = inf``); with ``noise="exact"`` the discrete
        Gaussian's sigma parameter in the units of ``X``.
    embedding_ : ndarray, shape (n_samples, n_components)
        The released matrix ``P`` of the training data.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from dpnb.papers.dppro import DPPro
    >>> X = np.random.default_rng(0).uniform(0, 1, (100, 20))  # rows in the public box [0, 1]^20
    >>> model = DPPro(n_components=5, epsilon=1.0, delta=1e-5, random_state=0)
    >>> P = model.fit_transform(X)  # the private release X R + noise
    >>> P.shape, model.budget_
    ((100, 5), {'projection': (1.0, 1e-05)})
    >>> bool(model.sigma_ > 0)
    True

    No ``inverse_transform``: ``R`` is a ``d x k`` random Gaussian matrix with ``k < d``, which keeps
    distances (Johnson-Lindenstrauss), not coordinates; the release has no map back to the input's units.
    """

    def __init__(
        self,
        n_components=2,
        epsilon=1.0,
        delta=1e-5,
        *,
        neighbours="change-attribute",
        noise_scale="corrected",
        calibration="analytic",
        bounds=(0.0, 1.0),
        attribute_groups=(),
        noise="float",
        random_state=None,
    ):
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.neighbours = neighbours
        self.noise_scale = noise_scale
        self.calibration = calibration
        self.bounds = bounds
        self.attribute_groups = attribute_groups
        self.noise = noise
        self.random_state = random_state

    def fit(self, X, y=None):
        """Draw ``R``, calibrate sigma and release ``P = X R + phi`` (stored as ``embedding_``); ``y`` is ignored."""
        epsilon, delta = self._check_privacy()
        check_neighbours(self.neighbours, NEIGHBOURS)
        check_choice(self.noise_scale, "noise_scale", NOISE_SCALES)
        check_choice(self.calibration, "calibration", CALIBRATIONS)
        noise = exact_noise.check_noise(self.noise)
        X, low, high = check_data_in_bounds(X, self.bounds)
        d = X.shape[1]
        k = check_n_components(self.n_components, d)
        width = high - low
        groups = _check_groups(self.attribute_groups, d)
        for g in groups:
            block = X[:, g]
            if np.any((block != 0) & (block != 1)) or np.any(block.sum(axis=1) > 1):
                raise ValueError(
                    f"the {first_few(g, 'columns')} are declared one-hot but some rows are not 0/1 "
                    "with at most one 1; fix the encoding or the attribute_groups"
                )
        if self.noise_scale == "lemma4":
            _check_lemma4(self.neighbours, width, groups, k, d, delta)
        rng = self._make_rng()
        R = gaussian_projection(d, k, random_state=rng)
        if self.neighbours == "change-attribute":
            sensitivity = attribute_sensitivity(R, (low, high), groups)
        else:
            sensitivity = record_sensitivity(R, (low, high))
        # public worst case of |X R| over the box: the release must stay finite (never read from X)
        with np.errstate(over="ignore"):  # an overflow gives inf, refused next
            magnitude = float((np.maximum(np.abs(low), np.abs(high)) @ np.abs(R)).max())
        check_release_range(magnitude, check_sensitivity(sensitivity))
        if self.noise_scale == "paper":
            sigma = theorem2_sigma(sensitivity, epsilon, delta)
        elif self.noise_scale == "lemma4":
            sigma = lemma4_sigma(epsilon, delta, (low, high))
        elif noise == "exact":
            sigma = exact_noise.zcdp_sigma(sensitivity, epsilon, delta)
        else:
            sigma = gaussian_sigma(sensitivity, epsilon, delta, self.calibration)
        check_release_range(magnitude, sigma)
        if noise == "exact":
            embedding, sigma = exact_noise.grid_gaussian_release_sigma(X @ R, sensitivity, sigma, rng)
        else:
            embedding = _release(X, R, float(sigma), rng)
        self.components_ = R.T
        self.sensitivity_ = {"projection": float(sensitivity)}
        self.budget_ = {"projection": (epsilon, delta)}
        if noise == "exact":  # the sampler's delta: n k draws
            self.budget_ = with_sampling_delta(self.budget_, {"projection": embedding.size})
        self.sigma_ = float(sigma)
        self.n_features_in_ = d
        self.embedding_ = embedding
        return self

    def fit_transform(self, X, y=None):
        """:meth:`fit`, then return the released (noisy) matrix ``P`` of ``X``, shape ``(n_samples, n_components)``."""
        return self.fit(X, y).embedding_

    def transform(self, X):
        """Project rows the caller already holds with the public ``R``: ``X R``, **no noise added**.

        This is not a private release of ``X``; the private output of DPPro is ``embedding_``
        (the training data's ``P``). Rows must lie inside ``bounds``. A ``dask.array`` gives a lazy Dask
        array, mapped block by block (each block checked inside ``bounds`` when it is computed).
        """
        check_is_fitted(self, "components_")
        X = check_rows(X) if is_dask_array(X) else check_array(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} columns but DPPro was fitted on {self.n_features_in_}")
        low, high = check_bounds(self.bounds, self.n_features_in_)
        project = functools.partial(_project_in_box, low=low, high=high, M=self.components_.T)
        return map_rows(project, X, self.components_.shape[0])

    def estimate_squared_distances(self, pairs=None):
        """Algorithm 2 on the released matrix (see :func:`squared_distance_estimate`)."""
        check_is_fitted(self, "embedding_")
        return squared_distance_estimate(self.embedding_, self.sigma_, pairs)


# --------------------------------------------------------------------------------------
# Private helpers
# --------------------------------------------------------------------------------------
_NOISE_ROWS = 1 << 15  # rows of noise drawn per block in _release (a few MB at k <= 16)


def _project_in_box(X, *, low, high, M) -> np.ndarray:
    """``X M`` after checking every row of ``X`` lies in the box ``[low, high]`` (:meth:`DPPro.transform` per block)."""
    return check_in_box(check_array(X), low, high) @ M


def _release(X, R, sigma, rng) -> np.ndarray:
    """Algorithm 1, steps 3-6, on validated input: ``P = X R`` then ``N(0, sigma^2)`` noise added in place.

    The noise is drawn in row blocks of :data:`_NOISE_ROWS` and added to ``P`` block by block, so no
    ``n x k`` noise matrix or sum is allocated beside ``P``. The generator fills its output in C order,
    so the draws equal those of one ``rng.normal(0, sigma, size=(n, k))`` call.
    """
    P = X @ R
    if sigma > 0:
        for start in range(0, P.shape[0], _NOISE_ROWS):
            block = P[start : start + _NOISE_ROWS]
            block += rng.normal(0.0, sigma, size=block.shape)
    return P


def _check_projection(projection) -> np.ndarray:
    R = check_array(projection, name="projection")
    if R.shape[1] < 1:
        raise ValueError("projection must have at least one column")
    return R


def _log_ratio(c: float, delta: float) -> float:
    """``ln(c / delta)``, also for a subnormal ``delta`` whose ``c / delta`` overflows (then ``ln c - ln delta``)."""
    with np.errstate(over="ignore"):
        ratio = c / np.float64(delta)
    return np.log(ratio) if np.isfinite(ratio) else np.log(c) - np.log(delta)


def _widths(bounds, d) -> np.ndarray:
    """``high - low`` of the public ``bounds`` (:func:`dpnb.ground.validation.check_bounds`), one per attribute."""
    low, high = check_bounds(bounds, d)
    return high - low


def _check_groups(groups, d) -> list[np.ndarray]:
    """Disjoint one-hot column blocks, each of at least two valid column indices."""
    out, seen = [], set()
    for g in groups:
        idx = np.asarray(g)
        if idx.ndim != 1 or idx.size < 2 or not np.issubdtype(idx.dtype, np.integer):
            raise ValueError("each entry of groups must be a sequence of >= 2 integer column indices")
        if idx.min() < 0 or idx.max() >= d:
            outside = idx[(idx < 0) | (idx >= d)]
            raise ValueError(f"group column indices must lie in [0, {d}), got {first_few(outside, 'outside')}")
        if seen & set(idx.tolist()) or len(set(idx.tolist())) != idx.size:
            raise ValueError("groups must be disjoint and list each column once")
        seen |= set(idx.tolist())
        out.append(idx)
    return out


def _check_components(n_components):
    """An int ``k >= 1`` as is, or an integer array with every entry >= 1 (for the vectorised analysis functions)."""
    if isinstance(n_components, numbers.Integral) and not isinstance(n_components, bool):
        return check_integer(n_components, "n_components")
    k = np.asarray(n_components)
    if not np.issubdtype(k.dtype, np.integer) or k.size == 0 or np.any(k < 1):
        raise TypeError(f"n_components must be an int or an integer array with entries >= 1, got {n_components!r}")
    return k


def _check_lemma4(neighbours, width, groups, k, d, delta):
    """Refuse ``noise_scale="lemma4"`` outside the setting Lemma 4 covers."""
    if neighbours != "change-attribute" or np.ptp(width) > 0 or groups:
        raise ValueError(
            "noise_scale='lemma4' covers only neighbours='change-attribute' on single columns with one common "
            "attribute range; use 'corrected' or 'paper'"
        )
    k_min = lemma4_min_components(d, delta)
    if k < k_min:
        raise ValueError(
            f"noise_scale='lemma4' needs n_components >= {k_min} for d={d}, "
            f"delta={delta}; increase n_components or use 'corrected'"
        )
