"""RON-Gauss: random orthonormal projection + Gaussian generative model (Chanyaswad, Liu, Mittal,
PoPETs 2019), with the sensitivities corrected where the paper's do not hold.

Pipeline (paper Section 4.2):

1. Algorithm 1 (DATA_PREPROCESSING): every row is scaled to unit L2 norm (pre-normalisation),
   a DP mean ``mu_dp`` is released with the Laplace mechanism (Lemma 2, L1 sensitivity
   ``2 sqrt(m) / n``), the rows are centred with ``mu_dp`` and scaled to unit norm again.
2. Algorithm 2 (RON_PROJECTION): ``x_tilde = W^T x_bar`` with ``W`` an ``m x p`` matrix with
   orthonormal columns, drawn independently of the data (Lemma 3: ``||x_tilde|| <= 1``).
3. Algorithms 3 / 4 / 5: a DP second-moment matrix (Eq. 2, or the label-augmented Eq. 3, or one
   per class) and Gaussian sampling.

Neighbour relation and bounds
-----------------------------
Bounded DP: two datasets of the same size ``n`` differ in one row (features, and the label in
the supervised modes). **No bound on the raw features is assumed**: pre-normalisation maps
every row to the unit sphere (an all-zero row stays zero), a per-row map that keeps neighbours
neighbours, so every privacy argument only uses ``||x_i||_2 <= 1``. Labels (``mode=
"supervised"``) are clipped to the public range ``[-label_bound, label_bound]``. In ``mode="gmm"``
the class sizes ``n_c`` are treated as public (paper Section 4.2.3.3): the guarantee covers
neighbours that keep each record's label; a change of label is not protected at all, since
``n_c`` are used exactly (see ``RONGauss.class_counts_``).

Corrections to the paper (derived and audited in ``notebooks/ron_gauss.md``)
----------------------------------------------------------------------------
* Lemma 4 (``2 sqrt(p) / n``) uses ``||A||_1 <= sqrt(p) ||A||_F`` for a ``p x p`` matrix, which
  only holds with ``p`` in place of ``sqrt(p)``. The module adds noise on the upper triangle
  (mirrored) with the upper-triangle L1 bound ``sqrt(p (p + 3) / 2) / n``
  (:func:`covariance_sensitivity`). Lemma 5 inherits the same correction.
* Algorithm 2 as written (QR of a matrix of i.i.d. ``U[0, 1]`` entries, no sign correction) does
  not give Haar-distributed frames; ``projection="haar"`` (default) uses
  :func:`dpnb.numerics.linalg.haar_stiefel`; ``"paper"`` keeps the original (:func:`algorithm2_projection`).
"""

from __future__ import annotations

import contextlib
import functools

import numba
import numpy as np
import scipy.linalg
from sklearn.base import TransformerMixin
from sklearn.utils.validation import check_is_fitted

from dpnb.ground.compiled import value_range
from dpnb.ground.validation import (
    MAX_SAMPLES,
    check_array,
    check_bool,
    check_choice,
    check_epsilon,
    check_fraction,
    check_integer,
    check_n_components,
    check_positive,
    check_random_state,
    check_row_norms,
)
from dpnb.numerics.blocks import check_rows, float64_blocks, is_dask_array, row_sums
from dpnb.numerics.linalg import (
    PARTS,
    block_rows,
    gaussian_draws,
    haar_stiefel,
    project_psd,
    row_blocks,
    top_eigenvectors,
)
from dpnb.numerics.subnormals import flushed_subnormals
from dpnb.privacy.estimator import PrivateEstimator, split_budget, with_sampling_delta
from dpnb.privacy.exact_noise import check_noise
from dpnb.privacy.mechanisms import laplace_mechanism, symmetric_laplace_mechanism

MODES = ("unsupervised", "supervised", "gmm")
PROJECTIONS = ("haar", "paper")
NOISE_SCALES = ("corrected", "paper")  # RON-Gauss's noise_scale values
_LANES = 4  # interleaved counters of _label_counts
_PIPELINE_FEATURES = 128  # from this many columns on, pass 1 forms the next row's norm with the current row's sum
_TINY = float(np.finfo(np.float64).tiny)  # squared norms in [_TINY, inf) are formed without under- or overflow
_RESCALED = -2.0  # pass 1's 1 / ||x_i|| for a row normalised with a rescaling (squared norm outside that range)


def algorithm2_projection(n_features, n_components, *, take="columns", random_state=None) -> np.ndarray:
    """The paper's non-Haar random orthonormal frame (Algorithm 2), kept for the audit.

    ``Q`` is the orthogonal factor of the QR factorisation of an ``m x m`` matrix of i.i.d.
    ``U[0, 1]`` entries (no sign correction). Its first column is ``a_1 / ||a_1||`` up to sign,
    with ``a_1 > 0`` entrywise, so it lies close to ``1 / sqrt(m)``: the frame is orthonormal
    but not Haar-distributed (paper Theorem 2 is stated for Haar frames).

    Parameters
    ----------
    n_features, n_components : int
        ``m`` and ``p``, ``1 <= p <= m``.
    take : {"columns", "rows"}
        ``"columns"``: the first ``p`` columns of ``Q`` (the paper's text, Sec. 4.2.2);
        ``"rows"``: the first ``p`` rows of ``Q`` (the authors' reference code).
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    ndarray of shape (n_components, n_features)
        Orthonormal rows (the layout of :attr:`RONGauss.components_`).
    """
    m = check_integer(n_features, "n_features")
    p = check_n_components(n_components, m)
    check_choice(take, "take", ("columns", "rows"))
    Q, _ = np.linalg.qr(check_random_state(random_state).random((m, m)))
    return Q[:, :p].T if take == "columns" else Q[:p].copy()


def unit_rows(X) -> np.ndarray:
    """Scale every row to unit L2 norm (Algorithm 1, steps 1 and 4); all-zero rows stay zero.

    Every finite nonzero row gets norm 1, also one whose squared norm over- or underflows float64
    (it is scaled by its largest entry first, ``_unit_rows_and_norms``).
    """
    X, _, inv_norms = _unit_rows_and_norms(check_array(X, ndim=2))
    return X * inv_norms[:, None]


def mean_sensitivity(n_features, n_samples) -> float:
    """L1 sensitivity ``2 sqrt(m) / n`` of the mean of ``n`` rows of norm <= 1 in R^m (Lemma 2; tight)."""
    return 2.0 * np.sqrt(check_positive(n_features, "n_features")) / check_positive(n_samples, "n_samples")


def covariance_sensitivity(
    n_components, n_samples, label_bound=None, *, part="upper", noise_scale="corrected"
) -> float:
    """L1 sensitivity of the second-moment matrix ``(1/n) sum z_i z_i^T`` (Eq. 2, or Eq. 3 with a label).

    Rows are ``z_i = x_i`` (``label_bound`` None) or ``z_i = (x_i, y_i)`` with ``||x_i||_2 <= 1``
    in R^p and ``|y_i| <= label_bound``; neighbours differ in one row.

    Parameters
    ----------
    n_components : int
        Projected dimension ``p``.
    n_samples : int
        Number of rows ``n`` (public).
    label_bound : float, optional
        The label bound ``a`` of Lemma 5.
    part : {"upper", "full"}
        ``"upper"``: the upper triangle with the diagonal, as a vector (what mirrored noise
        needs): the bound ``sqrt(p (p + 3) / 2) + 2 a sqrt(p) + a^2``, over ``n``. It is an upper
        bound, not the exact value (at ``p = 16`` the extremal pair found reaches 12.04 vs 12.33).
        ``"full"``: every entry (i.i.d. noise on all entries, as the paper adds it):
        ``sqrt(2) p + 4 a sqrt(p) + a^2``, over ``n``; the block term is attained for even ``p``
        (:func:`covariance_extremal_pair`).
    noise_scale : {"corrected", "paper"}
        ``"paper"`` returns the published value ``(2 sqrt(p) + 4 a sqrt(p) + a^2) / n`` (Lemmas
        4-5, full matrix; ``part`` is ignored); it is too small for ``p >= 3``.
    """
    p = check_positive(n_components, "n_components")
    n = check_positive(n_samples, "n_samples")
    a = 0.0 if label_bound is None else check_positive(label_bound, "label_bound")
    check_choice(part, "part", PARTS)
    with np.errstate(over="ignore"):
        if check_choice(noise_scale, "noise_scale", NOISE_SCALES) == "paper":
            value = (2 * np.sqrt(p) + 4 * a * np.sqrt(p) + a * a) / n
        elif part == "upper":
            value = (np.sqrt(p * (p + 3) / 2) + 2 * a * np.sqrt(p) + a * a) / n
        else:
            value = (np.sqrt(2) * p + 4 * a * np.sqrt(p) + a * a) / n
    if not np.isfinite(value):
        raise ValueError(
            f"n_components={p!r} and label_bound={label_bound!r} give a sensitivity that overflows float64; "
            "rescale the labels to a smaller public bound"
        )
    return float(value)


def covariance_extremal_pair(n_components) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors ``u, v`` in R^p whose change ``D = u u^T - v v^T`` has every entry ``+-sqrt(2)/p``.

    For even ``p``, take orthogonal sign vectors ``s, t`` (``t`` flips the second half of ``s =
    1``), ``a = s / sqrt(p)``, ``b = t / sqrt(p)`` and ``u = cos(pi/8) a + sin(pi/8) b``, ``v =
    -sin(pi/8) a + cos(pi/8) b``. Then ``D = (a a^T - b b^T + a b^T + b a^T) / sqrt(2)``, whose
    entries all have magnitude ``sqrt(2) / p``: ``||D||_1 = sqrt(2) p`` attains the corrected
    Lemma 4 bound ``p ||D||_F`` (one record replaced, so the sensitivity is this over ``n``), and
    ``||triu D||_1 = (p + 1) / sqrt(2)``.

    Parameters
    ----------
    n_components : int
        Even ``p >= 2``.
    """
    p = check_integer(n_components, "n_components", minimum=2)
    if p % 2:
        raise ValueError(f"n_components must be even (orthogonal sign vectors need it), got {p}")
    a = np.ones(p) / np.sqrt(p)
    b = a.copy()
    b[p // 2 :] *= -1
    c, s = np.cos(np.pi / 8), np.sin(np.pi / 8)
    return c * a + s * b, -s * a + c * b


def mle_covariance_sensitivity(n_components, n_samples, *, noise_scale="corrected") -> float:
    """Full-matrix L1 sensitivity of the mean-centred (MLE) covariance of rows with norm <= 1 (Appendix B).

    Corrected: ``4 sqrt(2) p (n - 1) / n^2`` (same order ``1/n`` as Eq. 2, not ``n`` times
    larger). ``noise_scale="paper"`` gives Lemma 6's ``(2 sqrt(p) + 2 n sqrt(p)) / n``.
    """
    p = check_positive(n_components, "n_components")
    n = check_positive(n_samples, "n_samples")
    if check_choice(noise_scale, "noise_scale", NOISE_SCALES) == "paper":
        return (2 * np.sqrt(p) + 2 * n * np.sqrt(p)) / n
    return 4 * np.sqrt(2) * p * (n - 1) / n**2


# ---------------------------------------------------------------------------------------
# Comparison methods of the paper's Section 5 (identity queries after a projection)
# ---------------------------------------------------------------------------------------
def projected_identity_sensitivity(basis) -> float:
    """L1 sensitivity ``2 sqrt(k) ||B||_2`` of releasing ``X B^T`` for rows ``||x|| <= 1`` (one row replaced).

    ``||B (x - x')||_1 <= sqrt(k) ||B (x - x')||_2 <= sqrt(k) ||B||_2 ||x - x'||_2 <= 2 sqrt(k) ||B||_2``
    for a ``k x m`` basis ``B``; data-independent, so it may calibrate noise.
    """
    B = check_array(basis, ndim=2, name="basis")
    return 2.0 * np.sqrt(B.shape[0]) * float(np.linalg.norm(B, 2))


def bernoulli_identity(X_unit, n_components, epsilon, *, random_state=None, noise="float"):
    """Li et al.'s release: a Bernoulli random projection plus the Laplace identity query (epsilon-DP).

    ``R`` has i.i.d. entries ``+-1/sqrt(k)`` (data-independent), the release is
    ``X R^T + Lap(b)`` with ``b = 2 sqrt(k) ||R||_2 / epsilon`` (:func:`projected_identity_sensitivity`).

    Parameters
    ----------
    X_unit : ndarray (n_samples, n_features)
        Rows of L2 norm <= 1 (e.g. :func:`unit_rows`).
    n_components : int
    epsilon : float (``inf``: no noise)
    random_state : None, int, SeedSequence or Generator
    noise : {"float", "exact"}
        numpy's floating-point Laplace noise (default), or exact discrete Laplace noise on a grid
        (:func:`dpnb.privacy.mechanisms.laplace_mechanism`), whose ``n k`` draws make the release
        ``(epsilon, sampling_delta(epsilon, n k))``-DP (:func:`dpnb.privacy.exact_noise.sampling_delta`).

    Returns
    -------
    Z : ndarray (n_samples, n_components)
        The released rows.
    basis : ndarray (n_components, n_features)
        ``R``; map test rows with ``unit_rows(X) @ basis.T``.
    """
    X = check_row_norms(check_array(X_unit, ndim=2, name="X_unit"), 1.0, name="X_unit")
    k = check_n_components(n_components, X.shape[1])
    eps = check_epsilon(epsilon)
    rng = check_random_state(random_state)
    R = rng.choice([-1.0, 1.0], size=(k, X.shape[1])) / np.sqrt(k)
    return laplace_mechanism(X @ R.T, projected_identity_sensitivity(R), eps, random_state=rng, noise=noise), R


def pca_identity(X_unit, n_components, epsilon, *, second_moment=None, random_state=None, noise="float"):
    """Jiang et al.'s release: DP-PCA (``epsilon/2``) then the Laplace identity query (``epsilon/2``).

    The PCA basis is the top-``k`` eigenvectors of the second moment of the rows with mirrored
    Laplace noise of the corrected Lemma 4 sensitivity at ``p = m``
    (``covariance_sensitivity(m, n)``); the release is ``X V + Lap(2 sqrt(k) / (epsilon / 2))``.

    Parameters
    ----------
    X_unit, n_components, epsilon, random_state, noise
        As in :func:`bernoulli_identity` (``noise`` applies to both releases; with ``"exact"`` the pair is
        ``(epsilon, sampling_delta(epsilon / 2, m (m + 1) / 2) + sampling_delta(epsilon / 2, n k))``-DP, for the
        triangle's and the rows' draws).
    second_moment : ndarray (n_features, n_features), optional
        ``X_unit.T @ X_unit / n_samples`` if already formed: it depends on the data only, not on any draw, so
        a loop over releases of the same rows forms it once. None: formed here.

    Returns
    -------
    Z : ndarray (n_samples, n_components)
    basis : ndarray (n_components, n_features)
        ``V^T``; map test rows with ``unit_rows(X) @ basis.T``.
    """
    X = check_row_norms(check_array(X_unit, ndim=2, name="X_unit"), 1.0, name="X_unit")
    n, m = X.shape
    k = check_n_components(n_components, m)
    eps = check_epsilon(epsilon)
    rng = check_random_state(random_state)
    if second_moment is None:
        second_moment = X.T @ X / n
    elif check_array(second_moment, ndim=2, name="second_moment").shape != (m, m):
        raise ValueError(f"second_moment must have shape ({m}, {m}), got {np.shape(second_moment)}")
    S = symmetric_laplace_mechanism(second_moment, covariance_sensitivity(m, n), eps / 2, random_state=rng, noise=noise)
    V = top_eigenvectors(S, k)[1].T
    return laplace_mechanism(X @ V.T, projected_identity_sensitivity(V), eps / 2, random_state=rng, noise=noise), V


# ---------------------------------------------------------------------------------------
# Utility measures of the reproductions (Tables 3 and 5), exact and with shared work
# ---------------------------------------------------------------------------------------
_BLOCK_ROWS = 128  # rows per test-kernel block: 128 x 1,500 float64 = 1.5 MB, which stays in a core's cache
_EXP32_ULPS = 4  # bound on float32 exp's error in units in the last place (NumPy documents <= 2.52 for its SIMD loops)


def rbf_ridge_predict(Z, y, Z_test, *, alpha=1.0, gamma=None) -> np.ndarray:
    """Kernel ridge regression with the RBF kernel: predictions ``K(Z_test, Z) (K(Z, Z) + alpha I)^{-1} y``.

    ``K(a, b) = exp(-gamma ||a - b||^2)``, ``gamma = 1 / d`` by default: the estimator
    ``sklearn.kernel_ridge.KernelRidge(alpha=alpha, kernel="rbf", gamma=gamma)`` fitted on ``(Z, y)``. Exponents
    ``-gamma ||a - b||^2`` come from one float64 product (``_rbf_exponent_factors``). The training kernel is
    formed in place in float64 (one ``n x n`` array; entries below ``2^-1022``, float64's subnormal range, are
    rounded to 0) and the coefficients ``c = (K + alpha I)^{-1} y`` are solved to float64 accuracy
    (``_refined_spd_solve``). The test kernel, the largest part of the work, is formed block by block: exponents
    rounded to float32, ``exp`` in float32, products with ``c`` accumulated in float64.

    Error of the float32 test kernel: rounding an exponent ``x <= 0`` changes ``exp(x)`` by a relative
    ``|x| 2^-24`` and float32 ``exp`` is within ``_EXP32_ULPS`` units in the last place (``2^-23`` relative), so
    each entry is within ``K_ij (|x_ij| 2^-24 + _EXP32_ULPS 2^-23) <= delta = 2^-24 (1/e + 2 _EXP32_ULPS)``
    (``x e^x >= -1/e``) of its exact value, and every prediction within ``delta ||c||_1`` of the float64
    path's (up to float64 rounding). The test kernel is formed with subnormal numbers flushed to zero
    (:func:`~dpnb.numerics.subnormals.flushed_subnormals`: far-apart records would otherwise make float32 ``exp``
    and the conversions take the processor's slow path), which moves an entry by less than ``2^-126``, inside
    ``delta``. An RMSE over the test rows moves by at most the largest prediction error,
    ``delta ||c||_1`` (:func:`rbf_ridge_test_kernel_bound`); ``delta`` is about ``5e-7``. A float32 training
    kernel would also perturb ``c``, amplified by ``(K + alpha I)^{-1}`` up to ``sqrt(n / alpha) / 2`` times
    (``||(K + alpha I)^{-1} k||_2 <= 1 / (2 sqrt(alpha))`` for a kernel column ``k``), so it stays in float64.
    """
    Z = check_array(Z, ndim=2, name="Z")
    Z_test = check_array(Z_test, ndim=2, name="Z_test")
    y = check_array(y, ndim=1, name="y")
    n, d = Z.shape
    g = 1.0 / d if gamma is None else check_positive(gamma, "gamma")
    left, right = _rbf_exponent_factors(Z_test, g), _rbf_exponent_factors(Z, g, side="right")
    K = _rbf_exponent_factors(Z, g) @ right.T
    with flushed_subnormals():  # entries below 2^-1022 (exponents below -708) become 0
        np.exp(K, out=K)
    K.flat[:: n + 1] += check_positive(alpha, "alpha")
    coef = _refined_spd_solve(K, y)
    pred = np.empty(Z_test.shape[0])
    exponents32 = np.empty((min(_BLOCK_ROWS, Z_test.shape[0]), n), dtype=np.float32)
    with flushed_subnormals():  # entries below float32's smallest normal number become 0, within delta
        for rows in _chunks(Z_test.shape[0], _BLOCK_ROWS):
            block = left[rows] @ right.T
            small = exponents32[: block.shape[0]]
            small[...] = block
            pred[rows] = np.exp(small, out=block) @ coef
    return pred


def _rbf_exponent_factors(A, gamma, side="left") -> np.ndarray:
    """Factors of the RBF exponents ``-gamma ||a_i - b_j||^2 = L(A) R(B)^T``, one product for all three terms.

    ``L(A) = [2 gamma A, -gamma ||a_i||^2, -1]`` and ``R(B) = [B, 1, gamma ||b_j||^2]`` (``p + 2`` columns).
    """
    scaled_sq = gamma * np.einsum("ij,ij->i", A, A)[:, None]
    if side == "right":
        return np.hstack([A, np.ones_like(scaled_sq), scaled_sq])
    return np.hstack([2 * gamma * A, -scaled_sq, -np.ones_like(scaled_sq)])


def rbf_ridge_test_kernel_bound(coef) -> float:
    """Bound ``delta ||c||_1`` on the change of :func:`rbf_ridge_predict`'s predictions by its float32 test kernel.

    ``coef`` are the dual coefficients ``c = (K + alpha I)^{-1} y`` (``KernelRidge.dual_coef_``); ``delta =
    2^-24 (1/e + 2 _EXP32_ULPS)`` bounds each float32 kernel entry's error (see :func:`rbf_ridge_predict`).
    """
    coef = check_array(coef, ndim=1, name="coef")
    return float(2.0**-24 * (np.exp(-1.0) + 2 * _EXP32_ULPS) * np.abs(coef).sum())


def _refined_spd_solve(A, b, *, max_steps=20) -> np.ndarray:
    """Solve ``A x = b`` (``A`` symmetric positive definite, float64) by mixed-precision iterative refinement.

    The Cholesky factor is computed in float32 (about half the time of float64); each step adds the float32
    solution of the float64 residual ``b - A x``. While ``cond(A) * 2^-24 < 1`` the error contracts by about
    that factor per step. The iteration stops with LAPACK's ``dsposv`` criterion, ``||b - A x||_inf <=
    ||x||_inf ||A||_inf sqrt(n) eps_64``: a backward error at float64 rounding, as a float64 Cholesky solve
    has. If the float32 factorisation fails or that is not reached in ``max_steps``, ``A`` is factorised in
    float64 instead.

    The float32 factorisation and solves run with subnormal numbers flushed to zero
    (:func:`~dpnb.numerics.subnormals.flushed_subnormals`): the factor of a nearly diagonal matrix fills in with
    products of small entries down to float32's subnormal range, where each operation is slow on x86-64. The
    factor only preconditions the refinement (its float32 rounding, ``2^-24`` relative, is already far larger
    than the flushed values), and the residuals and the solution stay float64, so the stopping criterion and the
    solution's accuracy are unchanged.
    """
    try:
        with flushed_subnormals():
            factor = scipy.linalg.cho_factor(A.astype(np.float32), lower=True, check_finite=False)
    except np.linalg.LinAlgError:  # not positive definite at float32 precision
        return _spd_solve(A, b)
    tol = np.abs(A).sum(axis=1).max() * np.sqrt(A.shape[0]) * np.finfo(np.float64).eps
    x = np.zeros_like(b)
    residual = b
    for _ in range(max_steps):
        with flushed_subnormals():  # the float32 factor's work only: its tiny values do not matter (see above)
            step = scipy.linalg.cho_solve(factor, residual.astype(np.float32), check_finite=False)
        x += step
        residual = b - A @ x
        if np.abs(residual).max() <= tol * np.abs(x).max():
            return x
    return _spd_solve(A, b)


def _spd_solve(A, b) -> np.ndarray:
    """``A^{-1} b`` by a float64 Cholesky factorisation."""
    return scipy.linalg.cho_solve(scipy.linalg.cho_factor(A, lower=True, check_finite=False), b, check_finite=False)


def _row_norms(X) -> tuple[np.ndarray, np.ndarray]:
    """``(||x_i||^2, 1 / ||x_i||)`` per row (0 for an all-zero row): Algorithm 1, step 1, without copying ``X``."""
    sq = np.einsum("ij,ij->i", X, X)
    norms = np.sqrt(sq)
    return sq, np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)


def _unit_rows_and_norms(X) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X', ||x'_i||^2, 1 / ||x'_i||)`` with ``X' = X`` except that a finite nonzero row whose squared norm is
    outside ``[tiny, inf)`` (it over- or underflows) is replaced by its unit row (:func:`_add_rescaled_unit_row`),
    in a copy; ``X`` must be finite. ``X' * (1 / ||x'_i||)`` are then the unit rows of ``X`` (zero rows stay zero).
    """
    sq, inv_norms = _row_norms(X)
    unusual = np.flatnonzero(~((sq >= _TINY) & (sq < np.inf)))
    if unusual.size:
        units = np.zeros((unusual.size, X.shape[1]))
        rescaled = [_add_rescaled_unit_row(X[i], unit) == _RESCALED for i, unit in zip(unusual, units, strict=True)]
        if any(rescaled):
            X, rows = X.copy(), unusual[rescaled]
            X[rows], sq[rows], inv_norms[rows] = units[rescaled], 1.0, 1.0
    return X, sq, inv_norms


@numba.njit(cache=True, nogil=True)
def _add_rescaled_unit_row(x, acc):  # pragma: no cover - compiled
    """Add the unit row ``x / ||x||`` to ``acc`` for a row whose squared norm is not in ``[tiny, inf)``; returns its
    status as pass 1 stores it: 0 (all-zero row, nothing added), -1 (a NaN or an infinity, nothing added) or
    ``_RESCALED`` (added).

    ``x`` is first divided by its largest magnitude ``a``, so that ``y = x / a`` has entries in ``[-1, 1]``, one of
    them ``+-1``, and ``1 <= ||y||^2 <= m`` neither over- nor underflows; ``x / ||x|| = y / ||y||``.
    """
    a = 0.0
    for j in range(x.shape[0]):
        v = abs(x[j])
        if not v < np.inf:  # NaN or infinity
            return -1.0
        a = max(a, v)
    if a == 0.0:
        return 0.0
    t = 0.0
    for j in range(x.shape[0]):
        y = x[j] / a
        t += y * y
    inv = 1.0 / np.sqrt(t)
    for j in range(x.shape[0]):
        acc[j] += x[j] / a * inv
    return _RESCALED


def _preprocess_project(XW, x_mu, sq, inv_norms, mu_projected, mu_sq) -> np.ndarray:
    """``W^T unit(unit(x_i) - mu)`` per row (Algorithm 1 steps 1-4, then Algorithm 2) from row statistics.

    ``XW = X W`` (rows x p) and ``x_mu = <x_i, mu>`` come from one product of ``X`` with ``[W, mu]``;
    ``mu_projected = W^T mu`` and ``mu_sq = ||mu||^2`` are one value for all rows or one per row (each row's
    own class mean in gmm mode). The norm of ``unit(x_i) - mu`` follows from ``||s x - mu||^2 = s^2 ||x||^2
    - 2 s <x, mu> + ||mu||^2`` with ``s = 1 / ||x||`` (0 for a zero row). No ``n x m`` temporary is made.
    """
    r = np.sqrt(np.maximum(inv_norms * inv_norms * sq - 2 * inv_norms * x_mu + mu_sq, 0.0))
    inv_r = np.divide(1.0, r, out=np.zeros_like(r), where=r > 0)
    Z = XW * (inv_norms * inv_r)[:, None]
    Z -= mu_projected * inv_r[:, None]
    return Z


def _encode_labels(y) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(classes, index, lookup, counts)``: row ``i`` is in class ``lookup[index[i]]`` of ``classes``.

    ``classes``, ``lookup[index]`` and ``counts`` are what ``np.unique(y, return_inverse=True,
    return_counts=True)`` gives. Small non-negative integer labels are their own index (no copy for ``intp``
    labels) and are counted by :func:`_label_counts` (no sort, no array of codes); other labels go through
    ``np.unique`` (``index`` its inverse, ``lookup`` the identity).
    """
    y = np.asarray(y)
    if y.dtype.kind in "iu" and y.size:
        index = y.astype(np.intp, copy=False)  # unsigned labels >= 2^63 wrap to negative ones: np.unique below
        low, high = value_range(index)
        if low >= 0 and high <= 2 * y.size:
            counts = _label_counts(index, high + 1)
            classes = np.flatnonzero(counts)
            lookup = np.zeros(len(counts), dtype=np.intp)
            lookup[classes] = np.arange(len(classes))
            return classes.astype(y.dtype), index, lookup, counts[classes]
    classes, codes, counts = np.unique(y, return_inverse=True, return_counts=True)
    return classes, codes.reshape(-1), np.arange(len(classes)), counts


@numba.njit(cache=True, nogil=True)
def _label_counts(y, size):  # pragma: no cover - compiled
    """``np.bincount(y, minlength=size)`` for ``0 <= y < size``, counted in ``_LANES`` interleaved arrays.

    One array would make a chain of increments of the same memory word when labels repeat (most rows of a
    few classes); interleaved arrays break it.
    """
    lanes = _LANES if size <= 4096 else 1
    counts = np.zeros((lanes, size), dtype=np.intp)
    for i in range(y.shape[0]):
        counts[i % lanes, y[i]] += 1
    total = counts[0].copy()
    # not counts.sum(axis=0): numba's axis reduction is slow to compile (benchmarks.first_fit measures it)
    for lane in range(1, lanes):
        total += counts[lane]
    return total


def _chunks(n, chunk):
    return (slice(start, min(start + chunk, n)) for start in range(0, n, chunk))


def _class_sums(X, index, lookup, n_classes, labels=None, label_bound=None):
    """Pass 1 over ``X``: ``(1 / ||x_i||, per-class sums of the unit rows, per-block class counts, the labels
    clipped to [-label_bound, label_bound] (None without labels), all rows finite, all labels finite, some row
    rescaled)``.

    The sums are the numerators of the class means of Algorithm 1 (Algorithm 5: one per class); row ``i`` is
    in class ``lookup[index[i]]`` (``index`` empty: one class). Every value of ``X`` is read once
    (:func:`_unit_row_sums`); ``1 / ||x_i||`` is 0 for an all-zero row, -1 for a row with a NaN or an infinity
    and ``_RESCALED`` for a finite row whose squared norm over- or underflows, normalised after a rescaling
    (:func:`_add_rescaled_unit_row`; pass 2 takes its unit row). ``labels`` (supervised mode) are checked and
    clipped in the same pass: when ``y`` is a column of
    ``X``, its values are then read with their rows, not one cache line per row in a pass of their own. The
    block counts (blocks of :func:`dpnb.numerics.linalg.block_rows` rows) let pass 2 group a block's rows by
    class without counting them again.
    """
    n, m = X.shape
    block = block_rows(m)
    inv_norms, sums = np.empty(n), np.zeros((n_classes, m))
    block_counts = np.zeros((-(-n // block), n_classes), dtype=np.intp)
    clipped = None if labels is None else np.empty(n)
    labels, bound = (np.empty(0), np.inf) if labels is None else (labels, float(label_bound))
    flags = _unit_row_sums(
        X,
        index,
        lookup,
        labels,
        bound,
        block,
        inv_norms,
        sums,
        block_counts,
        np.empty(0) if clipped is None else clipped,
    )
    return inv_norms, sums, block_counts, clipped, *flags


@numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _unit_row_sums(
    x, index, lookup, labels, label_bound, block, inv_norms, sums, block_counts, clipped
):  # pragma: no cover
    """Fill ``inv_norms[i] = 1 / ||x_i||`` (0 for a zero row, -1 for a row with a NaN or an infinity,
    ``_RESCALED`` for a finite row whose squared norm over- or underflows), add the unit row ``x_i / ||x_i||``
    (0 for the first two) to ``sums[c]`` and count it in ``block_counts[b, c]`` (``c = lookup[index[i]]``, 0 if
    ``index`` is empty; ``b`` its block of ``block`` rows); return whether every row is finite, whether every
    value of ``labels`` (empty or one per row) is and whether some row was rescaled; ``clipped`` gets the labels
    clipped to ``[-label_bound, label_bound]``.

    Each row is read from memory once (:func:`_block_unit_sums` or :func:`_block_unit_sums_pipelined`). The
    partial sums cover a block and are then added to ``sums``, so the rounding error grows with the block size,
    not with ``n``. The flags are taken per block, outside the row loop (inside, they stop the vectorisation).
    """
    n, m = x.shape
    part = np.empty_like(sums)
    finite = labels_finite = True
    rescaled = False
    for start in range(0, n, block):
        stop = min(start + block, n)
        part[:] = 0.0
        if m >= _PIPELINE_FEATURES:
            _block_unit_sums_pipelined(x, index, lookup, start, stop, inv_norms, part, block_counts[start // block])
        else:
            _block_unit_sums(x, index, lookup, start, stop, inv_norms, part, block_counts[start // block])
        for i in range(start, stop):
            finite &= inv_norms[i] != -1.0
            rescaled |= inv_norms[i] == _RESCALED
        for i in range(start, min(stop, labels.shape[0])):
            v = labels[i]
            labels_finite &= np.abs(v) < np.inf
            clipped[i] = min(max(v, -label_bound), label_bound)
        sums += part
    return finite, labels_finite, rescaled


@numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _block_unit_sums(x, index, lookup, start, stop, inv_norms, part, counts):  # pragma: no cover - compiled
    """Rows ``start:stop`` of :func:`_unit_row_sums`: each row's squared norm (a reduction the compiler
    vectorises, ``reassoc``), then the scaled row (from the L1 cache) into its class's partial sum; a row whose
    squared norm is outside ``[tiny, inf)`` goes through :func:`_add_rescaled_unit_row` instead."""
    m = x.shape[1]
    for i in range(start, stop):
        s = 0.0
        for j in range(m):
            s += x[i, j] * x[i, j]
        c = lookup[index[i]] if index.shape[0] else 0
        counts[c] += 1
        acc = part[c]
        v = 1.0 / np.sqrt(s) if s >= _TINY and s < np.inf else 0.0  # 0: the row is added below, or not at all
        inv_norms[i] = v if v > 0.0 else _add_rescaled_unit_row(x[i], acc)
        for j in range(m):
            acc[j] += v * x[i, j]


@numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _block_unit_sums_pipelined(x, index, lookup, start, stop, inv_norms, part, counts):  # pragma: no cover
    """:func:`_block_unit_sums` with the next row's squared norm formed in the loop that adds the current row.

    One loop over the columns per row instead of two, and no wait for the square root; the extra
    bookkeeping pays only on long rows, so it is used from ``_PIPELINE_FEATURES`` columns on
    (``benchmarks/gram_floor.py`` times both).
    """
    m = x.shape[1]
    s = 0.0
    for j in range(m):
        s += x[start, j] * x[start, j]
    for i in range(start, stop):
        c = lookup[index[i]] if index.shape[0] else 0
        counts[c] += 1
        acc = part[c]
        v = 1.0 / np.sqrt(s) if s >= _TINY and s < np.inf else 0.0  # 0: the row is added below, or not at all
        inv_norms[i] = v if v > 0.0 else _add_rescaled_unit_row(x[i], acc)
        if i + 1 < stop:
            s = 0.0
            for j in range(m):
                s += x[i + 1, j] * x[i + 1, j]
                acc[j] += v * x[i, j]
        else:
            for j in range(m):
                acc[j] += v * x[i, j]


@numba.njit(cache=True, nogil=True, inline="always")
def _row_factors(inv_norm, x_mu, mu_sq):  # pragma: no cover - compiled
    """``(1 / (||x|| r), 1 / r)`` with ``r = ||unit(x) - mu||`` from ``1 / ||x||``, ``<x, mu>`` and ``||mu||^2``.

    The arithmetic of :func:`_preprocess_project` with ``||x||^2 / ||x||^2 = 1``: 0 for a zero row
    (``inv_norm = 0``). A rescaled row comes as its unit row with ``inv_norm = 1`` (:func:`_class_second_moments`).
    """
    unit_sq = 1.0 if inv_norm > 0.0 else 0.0
    r2 = unit_sq - 2.0 * inv_norm * x_mu + mu_sq
    r = np.sqrt(r2 if not r2 < 0.0 else 0.0)
    inv_r = 1.0 / r if r > 0.0 else 0.0
    return inv_norm * inv_r, inv_r


@numba.njit(cache=True, nogil=True)
def _project_rows_one_class(xa, inv_norms, mu_projected, mu_sq, zt, scale, inv_r):  # pragma: no cover - compiled
    """:func:`_project_rows` for one class, written to the columns of ``zt`` (``Z^T``, C-contiguous).

    First each row's two factors, then ``Z^T`` one coordinate at a time: both loops run over contiguous rows
    and vectorise (a row-by-row loop would stride ``p`` apart and not); ``scale`` and ``inv_r`` are work
    space. Each row's factors are :func:`_row_factors`, as in :func:`_project_rows`.
    """
    p, rows = zt.shape[0], xa.shape[1]
    for i in range(rows):
        scale[i], inv_r[i] = _row_factors(inv_norms[i], xa[p, i], mu_sq[0])
    for j in range(p):
        mu = mu_projected[0, j]
        for i in range(rows):
            zt[j, i] = xa[j, i] * scale[i] - mu * inv_r[i]


@numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _own_class_products(x, index, lookup, means, out):  # pragma: no cover - compiled
    """``out[i] = <x_i, mu_c>`` with ``mu_c = means[lookup[index[i]]]``, each row's own class mean only.

    One inner product per row (``O(m)``) instead of ``K`` from one product with every class mean
    (``O(K m)`` per row in the BLAS product ``[W, mu_1, ..., mu_K]^T X^T``); this loop reads the block in
    cache and vectorises (``reassoc``: the sum's order is the compiler's).
    """
    for i in range(x.shape[0]):
        mu = means[lookup[index[i]]]
        total = 0.0
        for j in range(x.shape[1]):
            total += x[i, j] * mu[j]
        out[i] = total


@numba.njit(cache=True, nogil=True)
def _project_rows(xa, index, lookup, inv_norms, mu_projected, mu_sq, z, starts):  # pragma: no cover - compiled
    """Write ``z_i = W^T unit(unit(x_i) - mu_c)`` for the rows of a block, grouped by class.

    ``xa``: ``W^T X_block^T`` (a column per row) over one more row holding each row's ``<x_i, mu_c>``
    (:func:`_own_class_products`); ``index`` (row ``i`` in class ``c = lookup[index[i]]``) and ``inv_norms``
    (:func:`_unit_row_sums`) are the block's. The rows of class ``c`` go to ``z[starts[c]:starts[c + 1]]`` in
    their order, so each class's Gram matrix is one product; each row's factors are :func:`_row_factors`.
    """
    rows, p = xa.shape[1], mu_projected.shape[1]
    position = starts[:-1].copy()
    for i in range(rows):
        c = lookup[index[i]]
        scale, inv_r = _row_factors(inv_norms[i], xa[p, i], mu_sq[c])
        k = position[c]
        position[c] = k + 1
        for j in range(p):
            z[k, j] = xa[j, i] * scale - mu_projected[c, j] * inv_r


def _class_second_moments(
    X, index, lookup, block_counts, inv_norms, components, means, labels=None, rescaled=None
) -> np.ndarray:
    """Pass 2 over ``X``, per class ``c``: ``sum_i z_i z_i^T`` over its rows (Eq. 2, or Eq. 3 with ``labels``).

    ``z_i = W^T unit(unit(x_i) - mu_c)`` with ``mu_c = means[c]`` (:func:`_preprocess_project`), then the
    clipped label if given (one class only); classes, block counts, ``1 / ||x_i||`` and the clipped labels as
    pass 1 (:func:`_class_sums`) gives them. Per block of rows: the product ``[W, mu]^T X_block^T`` (one
    class) or ``W^T X_block^T`` and each row's ``<x_i, mu_c>`` (several classes, :func:`_own_class_products`)
    (BLAS, in the orientation that writes ``Z^T`` with contiguous rows), the rows ``z_i`` from it
    (:func:`_project_rows`), then per class ``Z_c^T Z_c`` and, with labels, ``Z^T y`` and ``y^T y`` (BLAS;
    ``O(n p^2)`` for the Gram matrix, ``O(n p)`` for the label's column, rather than one ``p + 1``-column
    product). ``rescaled``: the rows pass 1
    marked ``_RESCALED``, in order; their columns of the product are replaced by those of their unit rows
    (:func:`_add_rescaled_unit_row`), with ``1 / ||x_i|| = 1`` (only blocks that hold one pay for it).
    """
    n, m = X.shape
    n_classes, p = means.shape[0], components.shape[0]
    A = np.vstack([components, means]) if n_classes == 1 else components
    if rescaled is not None and rescaled.size:
        units = np.zeros((rescaled.size, m))
        for i, unit in zip(rescaled, units, strict=True):
            _add_rescaled_unit_row(X[i], unit)
        inv_norms = inv_norms.copy()
        inv_norms[rescaled] = 1.0
        own = means[lookup[index[rescaled]]] if n_classes > 1 else None
        bounds = np.searchsorted(rescaled, [r.start for r in row_blocks(n, m)] + [n])
    mu_projected, mu_sq = means @ components.T, np.einsum("ij,ij->i", means, means)
    with_labels = labels is not None
    block = block_rows(m)
    size = min(block, n)
    xa, z, scale, inv_r = np.empty((p + 1, size)), np.empty((size, p)), np.empty(size), np.empty(size)
    zt = z.reshape(p, size)  # one class: Z^T
    starts = np.zeros((len(block_counts), n_classes + 1), dtype=np.intp)
    np.cumsum(block_counts, axis=1, out=starts[:, 1:])
    grams = np.zeros((n_classes, p + with_labels, p + with_labels))
    for b, rows in enumerate(row_blocks(n, m)):
        rows_xa = xa[:, : rows.stop - rows.start]
        with np.errstate(over="ignore", invalid="ignore") if rescaled is not None else contextlib.nullcontext():
            np.matmul(A, X[rows].T, out=rows_xa[: A.shape[0]])  # a rescaled row's columns may overflow: replaced
        if n_classes > 1:
            _own_class_products(X[rows], index[rows], lookup, means, rows_xa[p])
        if rescaled is not None and rescaled.size and bounds[b] < bounds[b + 1]:
            these = slice(bounds[b], bounds[b + 1])
            columns = rescaled[these] - rows.start
            rows_xa[: A.shape[0], columns] = A @ units[these].T
            if n_classes > 1:
                rows_xa[p, columns] = np.einsum("ij,ij->i", units[these], own[these])
        if n_classes == 1:
            Zt = zt[:, : rows.stop - rows.start]
            _project_rows_one_class(rows_xa, inv_norms[rows], mu_projected, mu_sq, Zt, scale, inv_r)
            grams[0, :p, :p] += Zt @ Zt.T
            if with_labels:
                y = labels[rows]
                grams[0, :p, p] += Zt @ y
                grams[0, p, p] += y @ y
            continue
        _project_rows(rows_xa, index[rows], lookup, inv_norms[rows], mu_projected, mu_sq, z, starts[b])
        for j in range(n_classes):
            Zj = z[starts[b, j] : starts[b, j + 1]]
            grams[j] += Zj.T @ Zj
    if with_labels:
        grams[0, p, :p] = grams[0, :p, p]
    return grams


def _blocked_moments(
    X, column=None, *, column_is, lookup, n_classes, label_bound, components=None, means=None
) -> tuple[np.ndarray]:
    """One pass of :class:`RONGauss`'s blocked fit over some rows (a Dask chunk, or a whole float32 array).

    The per-chunk statistic of :func:`dpnb.numerics.blocks.row_sums`. Pass 1 (``components`` None): ``(the
    per-class sums of the unit rows,)``, shape ``(n_classes, m)``. Pass 2: ``(the per-class Gram matrices,)``
    of :func:`_class_second_moments`, shape ``(n_classes, q, q)``, for the given ``W^T`` and released means.

    The rows are read as float64 (:func:`dpnb.numerics.blocks.float64_blocks`): a float64 chunk as one view,
    a float32 one a cache-sized block at a time into one reused buffer. Each block goes through pass 1's
    compiled loop (:func:`_class_sums`: norms, unit-row sums, class counts, clipped labels, finiteness), and in
    pass 2 then through :func:`_class_second_moments`. ``O(r m)`` for pass 1 over ``r`` rows, ``O(r m p + r
    p^2)`` for pass 2 (its ``O(r m)`` norms again, read from cache).

    Parameters
    ----------
    X : ndarray of shape (r, m), float32 or float64
    column : ndarray of shape (r,), optional
        The rows' class index into ``lookup`` (``column_is="index"``, gmm) or labels
        (``column_is="labels"``, supervised: clipped to ``[-label_bound, label_bound]``).
    column_is : {None, "index", "labels"}
    lookup, n_classes, label_bound
        As :func:`_class_sums` takes them.
    components, means : ndarray, optional
        ``W^T`` (p, m) and the released class means (n_classes, m), for pass 2.

    Raises
    ------
    ValueError
        For a row with a NaN or an infinity, or a non-finite label: nothing is returned for the chunk.

    Examples
    --------
    >>> X = np.array([[3.0, 4.0], [0.0, 2.0]], dtype=np.float32)
    >>> one = dict(column_is=None, lookup=np.zeros(1, dtype=np.intp), n_classes=1, label_bound=None)
    >>> _blocked_moments(X, **one)[0]  # the sums of the unit rows
    array([[0.6, 1.8]])
    >>> _blocked_moments(X, **one, components=np.eye(2), means=np.zeros((1, 2)))[0][0]  # their Gram matrix
    array([[0.36, 0.48],
           [0.48, 1.64]])
    """
    chunk = X.shape[0] if X.dtype == np.float64 else None  # float64: the whole chunk, as the in-memory fit reads it
    no_index = np.empty(0, dtype=np.intp)
    total = None
    for start, block in float64_blocks(X, chunk):
        rows = slice(start, start + block.shape[0])
        index = column[rows] if column_is == "index" else no_index
        labels = column[rows] if column_is == "labels" else None
        inv_norms, sums, block_counts, clipped, finite, labels_finite, rescaled = _class_sums(
            block, index, lookup, n_classes, labels, label_bound
        )
        if not labels_finite:
            check_array(labels, ndim=1, name="y")  # raises the usual message
        if not finite:
            check_array(block, ndim=2)  # raises the usual message
        if components is not None:
            rescaled = np.flatnonzero(inv_norms == _RESCALED) if rescaled else None
            sums = _class_second_moments(
                block, index, lookup, block_counts, inv_norms, components, means, clipped, rescaled
            )
        if total is None:
            total = sums
        else:
            total += sums
    return (total,)


class RONGauss(TransformerMixin, PrivateEstimator):
    """RON-Gauss synthetic-data generator (paper Algorithms 1-5), epsilon-DP.

    Cost: two passes over ``X``, which cannot be merged because the DP mean of the unit rows must be
    released before the second pass, whose per-row map depends on it. Pass 1 (``_class_sums``, one
    compiled loop) reads each row once for its norm, its unit row's share of the class sums, the
    finiteness checks of ``X`` and of the labels, and the clipped labels. Pass 2
    (``_class_second_moments``) forms, per block, the product ``[W, mu]^T X_block^T`` (BLAS; in gmm mode
    ``W^T X_block^T`` and each row's inner product with its own class mean, compiled), the rows ``z_i``
    from it (compiled) and each class's ``Z_c^T Z_c`` (BLAS). In all ``O(n m p + n p^2)``, the floor of
    any method that projects ``X`` and forms the projected Gram matrix; ``make benchmark`` times the fit
    against that floor (``benchmarks/gram_floor.py``, results in ``benchmarks/results/``).

    Data larger than memory: ``X`` may be a ``dask.array`` (float32 or float64); both passes then run chunk
    by chunk on the Dask cluster, the client drawing ``W`` and the noise between them and after
    (:meth:`fit`). The two passes cannot become one pass of sufficient statistics: pass 2's row ``z_i = W^T
    (u_i - mu) / ||u_i - mu||`` (``u_i`` the unit row, ``mu`` the *released* mean) divides by a norm that
    depends on ``mu`` row by row, so ``sum_i z_i z_i^T`` is no function of fixed-size sums formed before
    ``mu`` is known. float32 input is kept in float32 (read as float64 block by block): computing in float32
    would put a relative error of about ``2^-24`` into every unit row, a bias of up to ``6e-8`` per
    coordinate of the mean that does not shrink with ``n``, while the mean's noise scale ``2 sqrt(m) / (n
    epsilon_mu)`` does (at ``m = 77``, ``epsilon_mu = 0.3``, they meet near ``n = 1e9``), so the arithmetic
    stays float64.

    Parameters
    ----------
    n_components : int
        Projected dimension ``p`` (``1 <= p <= m``; ``p = m`` is a random rotation, i.e. the
        Gaussian model without dimensionality reduction).
    epsilon : float
        Total budget ``epsilon = epsilon_mu + epsilon_Sigma`` (Theorems 3-5). ``numpy.inf`` turns
        all noise off: the non-private limit, e.g. for the generative-model demo of Section 6.3.
    mode : {"unsupervised", "supervised", "gmm"}
        Algorithm 3, 4 or 5.
    mean_fraction : float in (0, 1)
        ``epsilon_mu / epsilon``; the paper uses 0.3 (Section 5.2).
    label_bound : float
        Public label bound ``a`` (supervised mode only); labels are clipped to ``[-a, a]``. One with
        ``n a^2 > 1e300`` (the labels' second moment could overflow float64) is refused, naming it.
    reconstruct : bool
        Return samples in R^m as ``W x_tilde`` instead of R^p.
    add_mean : bool
        Add the DP mean back (``W^T mu_dp`` in R^p, ``mu_dp`` in R^m); not for ``"gmm"``, where
        Algorithm 5 always samples around the class means.
    projection : {"haar", "paper"}
        ``"haar"``: :func:`dpnb.numerics.linalg.haar_stiefel`; ``"paper"``: :func:`algorithm2_projection`.
    noise : {"float", "exact"}
        ``"float"`` (default): numpy's floating-point Laplace noise (its set of possible outputs
        depends on the data, Mironov 2012); ``"exact"``: exact discrete Laplace noise on a grid
        (:func:`dpnb.privacy.mechanisms.laplace_mechanism` and its symmetric variant), DP as stated.
    random_state : None, int, SeedSequence or Generator

    Attributes
    ----------
    components_ : ndarray (n_components, n_features)
        The projection ``W^T`` (orthonormal rows); projected rows are ``x_bar @ components_.T``.
    mean_ : ndarray (n_features,)
        DP mean (unsupervised/supervised).
    covariance_ : ndarray
        DP second-moment matrix after projection onto the PSD cone (what is sampled from);
        ``(p + 1) x (p + 1)`` in supervised mode, the label last.
    class_means_, class_covariances_, classes_, class_counts_ : gmm mode only
        ``class_counts_`` are exact: they are public by assumption.
    budget_ : dict
        ``{"mean": (epsilon_mu, 0.0), "covariance": (epsilon_Sigma, 0.0)}``; in gmm mode each
        class spends the same amounts on its own rows (parallel composition, ``n_c`` public). With
        ``noise="exact"`` each delta is the sampler's ``sampling_delta(epsilon_i, m)``
        (:func:`dpnb.privacy.estimator.with_sampling_delta`) for ``m = C n_features`` mean draws and
        ``m = C q (q + 1) / 2`` covariance draws (``C`` classes, 1 outside gmm; ``q = p``, ``p + 1`` supervised).
    sensitivity_ : dict
        ``{"mean": ..., "covariance": ...}``: L1 sensitivities the noise was calibrated to
        (covariance: upper triangle). In gmm mode each value is an array over ``classes_``.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from dpnb.papers.ron_gauss import RONGauss
    >>> X = np.random.default_rng(0).normal(size=(200, 6))  # any finite rows: each is normalised inside
    >>> model = RONGauss(n_components=3, epsilon=1.0, random_state=0).fit(X)
    >>> model.budget_
    {'mean': (0.3, 0.0), 'covariance': (0.7, 0.0)}
    >>> model.sample(5).shape  # fitted without labels: sample returns the rows alone
    (5, 3)
    >>> y = (X[:, 0] > 0).astype(int)
    >>> X_syn, y_syn = RONGauss(3, 1.0, mode="gmm", random_state=0).fit(X, y).sample(5)  # with labels: (X, y)
    >>> X_syn.shape, y_syn.shape
    ((5, 3), (5,))
    >>> X32 = X.astype(np.float32)  # kept in float32 (as a dask.array's chunks are): read in blocks, summed in float64
    >>> blocked = RONGauss(3, 1.0, random_state=0).fit(X32)
    >>> bool(np.allclose(blocked.covariance_, RONGauss(3, 1.0, random_state=0).fit(X32.astype(float)).covariance_))
    True

    No ``inverse_transform``: every row is scaled to the unit sphere and its norm is not released, so
    the synthetic rows have no way back to the input's units; ``reconstruct=True`` returns them in
    ``R^m``, in the normalised data's coordinates.
    """

    def __init__(
        self,
        n_components=2,
        epsilon=1.0,
        *,
        mode="unsupervised",
        mean_fraction=0.3,
        label_bound=None,
        reconstruct=False,
        add_mean=False,
        projection="haar",
        noise="float",
        random_state=None,
    ):
        self.n_components = n_components
        self.epsilon = epsilon
        self.mode = mode
        self.mean_fraction = mean_fraction
        self.label_bound = label_bound
        self.reconstruct = reconstruct
        self.add_mean = add_mean
        self.projection = projection
        self.noise = noise
        self.random_state = random_state

    # -- validation ---------------------------------------------------------------------
    def _check_params(self) -> dict:
        """Validate the parameters; returns the budget split (set on the estimator only by a successful fit)."""
        epsilon, _ = self._check_privacy(needs_delta=False)
        check_choice(self.mode, "mode", MODES)
        check_choice(self.projection, "projection", PROJECTIONS)
        check_noise(self.noise)
        frac = check_fraction(self.mean_fraction, "mean_fraction", low_open=True)
        check_bool(self.reconstruct, "reconstruct")
        check_bool(self.add_mean, "add_mean")
        if self.mode == "supervised":
            if self.label_bound is None:
                raise ValueError("mode='supervised' needs label_bound (the public bound a with y in [-a, a])")
            check_positive(self.label_bound, "label_bound")
        elif self.label_bound is not None:
            raise ValueError("label_bound is only used with mode='supervised'; leave it None")
        if self.add_mean and self.mode == "gmm":
            raise ValueError("add_mean does not apply to mode='gmm' (Algorithm 5 always uses the class means)")
        return split_budget(epsilon, 0.0, {"mean": (frac, 0.0), "covariance": (1 - frac, 0.0)})

    def _check_y(self, y, n):
        if self.mode == "unsupervised":
            return None
        if y is None:
            raise ValueError(f"mode={self.mode!r} needs labels y")
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != n:
            raise ValueError(f"y must be 1-dimensional with {n} entries (one per row of X), got shape {y.shape}")
        if self.mode == "supervised":
            return check_array(y, ndim=1, name="y", finite=False)  # finiteness: in the pass over X
        if y.dtype.kind in "fc" and not np.all(np.isfinite(y)):
            raise ValueError("y contains NaN or infinite class labels; drop those records or give them a class")
        return y

    # -- Algorithm 1 and the covariance step --------------------------------------------
    def _dp_mean(self, mean, sensitivity, budget, rng):
        """Laplace DP release of the mean of the pre-normalised rows (Lemma 2: ``2 sqrt(m) / n``)."""
        return laplace_mechanism(mean, sensitivity, budget["mean"][0], random_state=rng, noise=self.noise)

    def _dp_second_moment(self, gram, n, label_bound, budget, rng):
        """``gram / n`` (``gram = Z^T Z`` over ``n`` rows) with mirrored Laplace noise (corrected Lemma 4/5), then
        PSD projection."""
        q = gram.shape[0]
        sens = covariance_sensitivity(q if label_bound is None else q - 1, n, label_bound)
        S = symmetric_laplace_mechanism(gram / n, sens, budget["covariance"][0], random_state=rng, noise=self.noise)
        return project_psd(S), sens

    def _draw_projection(self, m, p, rng):
        if self.projection == "paper":
            return algorithm2_projection(m, p, random_state=rng)
        return haar_stiefel(m, p, random_state=rng).T

    # -- public API -----------------------------------------------------------------------
    def fit(self, X, y=None):
        """Fit the DP model to ``X`` (n x m; any finite values, rows are normalised inside).

        Every finite nonzero row reaches the unit sphere, also one whose squared norm over- or underflows
        float64 (normalised after dividing it by its largest entry, in the same pass; a refusal would let
        neighbouring inputs fail differently, and a zero row would move the mean).

        ``y``: required for ``"supervised"`` (real labels, clipped to ``[-label_bound,
        label_bound]``) and ``"gmm"`` (class labels; each class needs >= 1 row); ignored for
        ``"unsupervised"``. ``y`` is held in memory (one value per row) also when ``X`` is a Dask array.

        ``X`` may be a float64 array (a ``np.memmap`` included, never copied), a float32 array or a
        ``dask.array`` of either. float32 and Dask input take the blocked route (``_blocked_moments``):
        the same two passes, each a sum over rows (:func:`dpnb.numerics.blocks.row_sums`; on the Dask cluster,
        one task per chunk of rows, only the ``C x m`` sums and the ``C x q x q`` Gram matrices travel back),
        with the client between them drawing ``W`` and releasing the means; float32 rows are read as float64 a
        cache-sized block at a time (exact), so no float64 copy of ``X`` is made. Pass 2 recomputes each
        block's row norms instead of keeping ``n`` of them from pass 1 (one more ``O(m)`` per row, in cache).
        A row with a NaN or an infinity (or a non-finite label) fails its block in pass 1, hence the fit, before
        anything is drawn; a chunk that fails only in pass 2 (unreadable, or changed, between the passes) fails
        the fit after ``W`` and the mean's noise were drawn on the client, but nothing is released or set on the
        estimator. The release is the in-memory one to round-off:
        the sums are the same terms added in another order, and pass 2's rows depend on the released mean
        with condition ``1 / ||unit(x_i) - mu||`` (``tests/papers/test_dask_fits.py`` derives the tolerance).
        """
        budget = self._check_params()
        blocked = is_dask_array(X) or (isinstance(X, np.ndarray) and X.dtype == np.float32)
        X = check_rows(X) if blocked else check_array(X, ndim=2, finite=False)  # finiteness: from the row norms
        n, m = X.shape
        p = check_n_components(self.n_components, m)
        y = self._check_y(y, n)
        rng = self._make_rng()
        if self.mode == "gmm":
            classes, index, lookup, counts = _encode_labels(y)
        else:
            index, lookup, counts = np.empty(0, dtype=np.intp), np.zeros(1, dtype=np.intp), np.array([n])
        a = None if self.mode != "supervised" else float(self.label_bound)
        if a is not None and not n * a * a <= 1e300:  # the sum of the clipped labels' squares, public worst case
            raise ValueError(
                f"label_bound={a!r} is too large for {n} rows: the labels' second moment could overflow float64; "
                "rescale the labels to a smaller public bound"
            )
        if blocked:
            column, column_is = {"gmm": (index, "index"), "supervised": (y, "labels")}.get(self.mode, (None, None))
            columns = () if column is None else (column,)
            statistic = functools.partial(
                _blocked_moments, column_is=column_is, lookup=lookup, n_classes=len(counts), label_bound=a
            )
            (sums,) = row_sums(statistic, X, *columns)

            def second_pass(components, means):
                return row_sums(functools.partial(statistic, components=components, means=means), X, *columns)[0]

        else:
            inv_norms, sums, block_counts, labels, finite, labels_finite, rescaled = _class_sums(
                X, index, lookup, len(counts), None if a is None else y, a
            )
            if not labels_finite:
                check_array(y, ndim=1, name="y")  # raises the usual message
            if not finite:  # a row with a NaN or an infinity
                check_array(X, ndim=2)  # raises the usual message
            rescaled = np.flatnonzero(inv_norms == _RESCALED) if rescaled else None  # rows with extreme norms (rare)

            def second_pass(components, means):
                return _class_second_moments(
                    X, index, lookup, block_counts, inv_norms, components, means, labels, rescaled
                )

        components = self._draw_projection(m, p, rng)  # the first draw; none is made for rejected input
        mean_sens = np.array([mean_sensitivity(m, n_c) for n_c in counts])
        means = np.array([self._dp_mean(sums[j] / counts[j], mean_sens[j], budget, rng) for j in range(len(counts))])
        grams = second_pass(components, means)
        covs, cov_sens = zip(*(self._dp_second_moment(g, n_c, a, budget, rng) for g, n_c in zip(grams, counts)))
        if self.noise == "exact":  # the sampler's delta, per class: an m-vector mean and a q x q triangle
            q = grams[0].shape[0]
            draws = {"mean": len(counts) * m, "covariance": len(counts) * q * (q + 1) // 2}
            budget = with_sampling_delta(budget, draws)
        state = {"budget_": budget, "n_features_in_": m, "_rng": rng, "components_": components}  # _rng: for sample()
        if self.mode == "gmm":
            state.update(classes_=classes, class_counts_=counts, class_means_=means, class_covariances_=np.array(covs))
            state["sensitivity_"] = {"mean": mean_sens, "covariance": np.array(cov_sens)}
        else:
            state.update(mean_=means[0], covariance_=covs[0])
            state["sensitivity_"] = {"mean": mean_sens[0], "covariance": cov_sens[0]}
        vars(self).update(state)  # all at once, at the end: a failed fit sets nothing
        return self

    def _output_space(self, Z):
        """Map projected rows to the released space: + W^T mu (add_mean), W . (reconstruct)."""
        W = self.components_
        if self.reconstruct:
            Z = Z @ W
            return Z + self.mean_ if self.add_mean else Z
        return Z + W @ self.mean_ if self.add_mean else Z

    def sample(self, n_samples):
        """Draw synthetic rows from the fitted DP Gaussian model (post-processing, no extra budget).

        One draw of ``n_samples`` Gaussian vectors from the released model (``O(n_samples p^2)`` after a
        ``p x p`` factorisation), continuing the generator made in :meth:`fit`.

        Returns
        -------
        X_syn : ndarray (n_samples, n_components), or (n_samples, n_features) with ``reconstruct=True``
            ``"unsupervised"`` returns this array alone.
        y_syn : ndarray (n_samples,)
            Only in the labelled modes, which return the pair ``(X_syn, y_syn)``: real labels (not
            clipped) for ``"supervised"``; class labels for ``"gmm"`` (class sizes multinomial with the
            public proportions ``n_c / n``; rows shuffled).
        """
        check_is_fitted(self, "components_")
        n_samples = check_integer(n_samples, "n_samples", maximum=MAX_SAMPLES)
        rng = self._rng
        p = self.components_.shape[0]
        if self.mode == "unsupervised":
            return self._output_space(gaussian_draws(np.zeros(p), self.covariance_, n_samples, random_state=rng))
        if self.mode == "supervised":
            Z = gaussian_draws(np.zeros(p + 1), self.covariance_, n_samples, random_state=rng)
            return self._output_space(Z[:, :p]), Z[:, p]
        sizes = rng.multinomial(n_samples, self.class_counts_ / self.class_counts_.sum())
        parts = [
            gaussian_draws(self.components_ @ mu, cov, k, random_state=rng)
            for mu, cov, k in zip(self.class_means_, self.class_covariances_, sizes)
        ]
        order = rng.permutation(n_samples)
        X_syn = np.concatenate(parts)[order]
        y_syn = np.repeat(self.classes_, sizes)[order]
        return (X_syn @ self.components_ if self.reconstruct else X_syn), y_syn

    def transform(self, X):
        """Map real rows (e.g. a test set) to the space the synthetic rows live in.

        Uses only released quantities (``mu_dp``, ``W``), so it costs no budget. Unsupervised
        and supervised: pre-normalise, centre with ``mu_dp``, re-normalise, project, then the
        ``add_mean`` / ``reconstruct`` options. gmm: pre-normalise and project (Algorithm 5
        samples around ``W^T mu_c``, i.e. uncentred coordinates).
        """
        check_is_fitted(self, "components_")
        X = check_array(X, ndim=2)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} columns but the model was fitted on {self.n_features_in_}")
        X, sq, inv_norms = _unit_rows_and_norms(X)
        if self.mode == "gmm":
            Z = (X @ self.components_.T) * inv_norms[:, None]
            return Z @ self.components_ if self.reconstruct else Z
        XA = X @ np.column_stack([self.components_.T, self.mean_])
        p = self.components_.shape[0]
        mu = self.mean_
        Z = _preprocess_project(XA[:, :p], XA[:, p], sq, inv_norms, self.components_ @ mu, mu @ mu)
        return self._output_space(Z)
