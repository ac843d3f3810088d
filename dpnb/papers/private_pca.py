"""Differentially private PCA: MOD-SULQ and PPCA (Chaudhuri, Sarwate & Sinha, NIPS 2012).

Setting (paper Sec. 2): ``n_samples`` records ``x_i in R^d`` with ``||x_i||_2 <= 1`` (here: the
rows of ``X``; the paper stores them as columns), second-moment matrix ``A = X^T X / n``
(uncentred), neighbouring datasets differ by *replacing* one record, ``n_samples`` is public.
Both mechanisms release a ``d x k`` matrix with orthonormal columns (a ``k``-dimensional
subspace); the estimators store it as ``components_`` of shape ``(n_components, n_features)``.

* **MOD-SULQ** (Algorithm 1, Theorem 1): top-``k`` eigenvectors of ``A + N``, ``N``
  symmetric with i.i.d. ``N(0, sigma^2)`` entries on and above the diagonal. ``sigma`` is the
  paper's ``beta`` (``noise_scale="paper"``) or the Gaussian mechanism calibrated to the L2
  sensitivity ``sqrt(2) / n`` of the upper triangle of ``A`` (``noise_scale="corrected"``,
  derived in the notebook), with the exact (``calibration="analytic"``, Balle & Wang 2018) or the
  classic Gaussian calibration.
* **PPCA** (Algorithm 2, Theorem 2): the exponential mechanism with utility
  ``n q_F(V) = n tr(V^T A V)`` (sensitivity 1), i.e. a draw from the matrix Bingham
  distribution with parameter ``(n epsilon / 2) A`` (eq. (8)), sampled with Hoff's Gibbs
  sampler (:mod:`dpnb.numerics.bingham`), or exactly for ``k = 1``. A finite chain is only
  approximately exact, see the notebook.

``epsilon = inf`` is the noiseless limit of both: the top-``k`` eigenvectors of ``A``.
Rows whose norm exceeds the declared ``data_norm`` are **rejected** (ValueError), never
silently clipped: clip or normalise them first (``dpnb.ground.datasets.normalize_rows``).
"""

from __future__ import annotations

import functools

import numpy as np
from scipy.integrate import quad
from sklearn.base import TransformerMixin
from sklearn.utils.validation import check_is_fitted

from dpnb.ground.datasets import normalize_rows
from dpnb.ground.validation import (
    check_array,
    check_choice,
    check_delta,
    check_epsilon,
    check_integer,
    check_n_components,
    check_nonnegative,
    check_positive,
    check_random_state,
    check_row_norms,
)
from dpnb.numerics.bingham import MAX_CONCENTRATION, bingham_gibbs, vector_bingham_exact
from dpnb.numerics.blocks import check_rows, float64_blocks, row_sums
from dpnb.numerics.linalg import PARTS, gram_block_rows, one_blas_thread, symmetrize_upper
from dpnb.privacy.estimator import PrivateEstimator, with_sampling_delta
from dpnb.privacy.exact_noise import check_noise, grid_gaussian_release_sigma, zcdp_sigma
from dpnb.privacy.mechanisms import CALIBRATIONS, check_gaussian_sigma, gaussian_sigma

NOISE_SCALES = ("corrected", "paper")  # MOD-SULQ's noise_scale values
_TINY = float(np.finfo(np.float64).tiny)
SAMPLERS = ("gibbs", "exact")


# --------------------------------------------------------------------------------------
# Shared pieces
# --------------------------------------------------------------------------------------
def second_moment(X, data_norm: float = 1.0) -> np.ndarray:
    """``A = X^T X / (n data_norm^2)`` after checking every row has norm <= ``data_norm``.

    Dividing by ``data_norm^2`` puts the data on the paper's scale ``||x|| <= 1``. One pass over
    ``X`` in cache-sized row blocks (:func:`dpnb.numerics.linalg.row_blocks`): each block's row norms
    are checked as :func:`dpnb.ground.validation.check_row_norms` does (with ``einsum``, no temporary
    of the block's size; a row with a NaN or an infinity has a squared norm that is not finite, so
    this is also the finiteness check), then BLAS adds the block's Gram matrix while it is still in
    cache: ``O(n d^2)`` in one read of ``X``, then the ``O(d^3)`` eigendecomposition of
    :class:`ModSULQ` (``make benchmark`` times the fit against one read plus ``X^T X``,
    ``benchmarks/gram_floor.py``).

    A ``data_norm`` outside ``[2^-200, 2^200]`` (whose square, or the Gram matrix of rows that long,
    could leave float64's normal range) is first scaled with ``X`` by a power of two
    (:func:`unit_radius`), which is exact, so every ``data_norm`` float64 holds works.

    ``X`` may be float32 (each block is read as float64; no full copy) or a ``dask.array``, reduced chunk
    by chunk on the cluster (:func:`dpnb.numerics.blocks.row_sums`). The products stay float64 even for
    float32 input: a float32 product carries a relative error up to ``2^-24``, so float32 arithmetic would put
    a bias of up to about ``6e-8`` into each entry of ``A`` (rows of norm at most 1) that does not shrink with
    ``n``, while MOD-SULQ's noise ``sigma`` (about ``6 / (n epsilon)`` at ``delta = 1e-6``) does: at
    ``epsilon = 1`` they meet near ``n = 1e8``, the size of data that does not fit in memory.
    """
    X = check_rows(X, name="X")
    data_norm = check_positive(data_norm, "data_norm")
    radius = unit_radius(np.empty(0), data_norm)[1]
    exponent = int(np.frexp(radius)[1] - np.frexp(data_norm)[1])  # X is scaled by 2^exponent, block by block
    (gram,) = row_sums(functools.partial(_checked_gram, exponent=exponent, radius=radius), X)
    return gram / (X.shape[0] * radius**2)


def _checked_gram(X, *, exponent: int, radius: float) -> tuple[np.ndarray]:
    """``(sum_i z_i z_i^T,)``, ``z_i = 2^exponent x_i``, over the rows of ``X`` after checking ``||z_i|| <= radius``.

    The per-block statistic of :func:`second_moment` (:func:`dpnb.numerics.blocks.row_sums`): row blocks of
    :func:`dpnb.numerics.linalg.gram_block_rows` rows, each read as float64
    (:func:`dpnb.numerics.blocks.float64_blocks`), scaled by ``2^exponent`` (exact), its squared norms checked,
    its Gram matrix added by BLAS.
    """
    limit = (radius * (1 + 1e-9)) ** 2
    gram = np.zeros((X.shape[1], X.shape[1]))
    for _, block in float64_blocks(X, gram_block_rows(X.shape[1])):
        if exponent:
            block = np.ldexp(block, exponent)
        squared = np.einsum("ij,ij->i", block, block)
        if not (squared <= limit).all():  # a NaN fails this too
            check_array(block, name="X")  # raises for NaN or infinity
            check_row_norms(block[~(squared <= limit)], radius, name="X")  # raises with the usual message
        gram += block.T @ block
    return (gram,)


def unit_radius(X, radius: float) -> tuple[np.ndarray, float]:
    """``(X 2^e, radius 2^e)`` with ``radius 2^e`` in ``[1/2, 1)`` if ``radius`` lies outside ``[2^-200, 2^200]``,
    else ``(X, radius)``.

    For rows of norm at most ``radius``, squares and Gram matrices of the scaled rows stay in float64's
    normal range. A power of two scales exactly (entries pushed below the normal range lose bits, at
    most ``2^-1022`` against a radius near 1), so statistics divided by the matching power of
    ``radius`` are unchanged; outside the extremes ``X`` is returned as is (no copy).

    Examples
    --------
    >>> X, r = unit_radius(np.array([[3e300, 4e300]]), 5e300)
    >>> round(float(r), 3), float(np.linalg.norm(X) / r)
    (0.933, 1.0)
    """
    if 2.0**-200 <= radius <= 2.0**200:
        return X, radius
    e = -np.frexp(radius)[1]
    return np.ldexp(X, e), float(np.ldexp(radius, e))


def utility_qf(A, V) -> np.ndarray | float:
    """Utility ``q_F(V) = tr(V^T A V)`` (paper eq. (3)); ``V`` is ``(d, k)`` or ``(m, d, k)``."""
    A = check_array(A, name="A")
    V = check_array(V, ndim=None, name="V")
    if V.ndim not in (2, 3) or V.shape[-2] != A.shape[0]:
        raise ValueError(f"V must have shape (d, k) or (m, d, k) with d = {A.shape[0]}, got {V.shape}")
    q = np.einsum("...dk,de,...ek->...", V, A, V)
    return float(q) if np.ndim(q) == 0 else q


def _top_k(M, n_components: int) -> np.ndarray:
    """Top-``n_components`` eigenvectors of a (stack of) symmetric matrices, shape ``(..., d, k)``."""
    with one_blas_thread():  # batched small eigh: threads only contend
        _, vecs = np.linalg.eigh(M)
    return vecs[..., ::-1][..., :n_components]


def _check_common(X, n_components, epsilon, data_norm, n_draws):
    A = second_moment(X, data_norm)
    n_samples, n_features = np.shape(X)
    n_components = check_n_components(n_components, n_features)
    return A, n_samples, n_features, n_components, check_epsilon(epsilon), check_integer(n_draws, "n_draws")


# --------------------------------------------------------------------------------------
# MOD-SULQ (Algorithm 1)
# --------------------------------------------------------------------------------------
def mod_sulq_beta(n_features: int, n_samples: int, epsilon, delta) -> float:
    """The paper's noise level ``beta`` (Algorithm 1, step 2; Theorem 1), on the scale ``||x|| <= 1``.

    ``beta = (d+1)/(n eps) sqrt(2 log((d^2+d)/(2 sqrt(2 pi) delta))) + 1/(n sqrt(eps))`` with
    ``d = n_features``, ``n = n_samples``; 0 for ``epsilon = inf``. A ``beta`` above ``1e300`` (the noise
    would overflow float64) is refused with a ValueError naming epsilon and delta.
    """
    d = check_integer(n_features, "n_features")
    n = check_integer(n_samples, "n_samples")
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if np.isinf(epsilon):
        return 0.0
    t = np.sqrt(2 * np.log((d * d + d) / (2 * np.sqrt(2 * np.pi) * delta)))
    with np.errstate(over="ignore"):
        beta = float((d + 1) / (n * epsilon) * t + 1 / (n * np.sqrt(epsilon)))
    return check_gaussian_sigma(beta, second_moment_l2_sensitivity(n), epsilon, delta)


def second_moment_l2_sensitivity(n_samples: int, data_norm: float = 1.0, *, part: str = "upper") -> float:
    """L2 sensitivity of ``A = X^T X / n`` under replacement of one row of norm <= ``data_norm``.

    Not to be confused with :func:`dpnb.papers.pca_gauss.second_moment_l1_sensitivity` (L1, rows
    in a box).

    ``part="upper"``: the vector of the ``d (d+1) / 2`` entries on and above the diagonal (what
    MOD-SULQ perturbs); ``part="full"``: all ``d^2`` entries (the original SULQ). Both equal
    ``sqrt(2) data_norm^2 / n``, attained by replacing ``e_1`` with ``e_2`` (derivation in the
    notebook: ``n^2 ||u(Delta)||^2 = (F + G) / 2`` with ``F, G <= 2``, and the full norm is ``sqrt F``).
    """
    n = check_integer(n_samples, "n_samples")
    check_choice(part, "part", PARTS)
    radius = check_positive(data_norm, "data_norm")
    with np.errstate(over="ignore", under="ignore"):
        value = float(np.sqrt(2.0) * np.float64(radius) ** 2 / n)
    if not _TINY <= value < np.inf:
        raise ValueError(
            f"data_norm={radius!r} gives the sensitivity sqrt(2) data_norm^2 / n = {value!r}, outside float64's "
            "normal range; rescale the data to a data_norm nearer 1"
        )
    return value


def mod_sulq_sigma(
    n_features: int, n_samples: int, epsilon, delta, noise_scale: str = "corrected", calibration: str = "analytic"
) -> float:
    """Noise standard deviation of MOD-SULQ on the scale ``||x|| <= 1``.

    ``noise_scale="paper"``: :func:`mod_sulq_beta`; ``"corrected"``: the Gaussian mechanism for
    the L2 sensitivity ``sqrt(2)/n`` of the upper triangle, with the Gaussian ``calibration``
    (``"analytic"``, exact for every epsilon; ``"classic"``, epsilon < 1 only).
    """
    check_choice(noise_scale, "noise_scale", NOISE_SCALES)
    check_choice(calibration, "calibration", CALIBRATIONS)
    if noise_scale == "paper":
        return mod_sulq_beta(n_features, n_samples, epsilon, delta)
    check_integer(n_features, "n_features")
    if np.isinf(check_epsilon(epsilon)):
        check_delta(delta)
        return 0.0
    return gaussian_sigma(second_moment_l2_sensitivity(n_samples), epsilon, delta, calibration)


def mod_sulq(
    X,
    n_components: int,
    epsilon,
    delta,
    *,
    noise_scale: str = "corrected",
    calibration: str = "analytic",
    data_norm: float = 1.0,
    n_draws: int = 1,
    random_state=None,
    noise: str = "float",
) -> np.ndarray:
    """MOD-SULQ (Algorithm 1): ``n_draws`` independent releases, shape ``(n_draws, d, n_components)``.

    Each draw is one (epsilon, delta)-DP release (Theorem 1 for ``noise_scale="paper"``);
    releasing several draws of the same data composes. Negative eigenvalues of ``A + N`` are
    harmless: only its eigenvectors are released (no PSD projection is needed because nothing
    is sampled from it).

    ``noise="float"`` (default): numpy's floating-point Gaussian noise. ``noise="exact"``: the upper
    triangle of ``A`` is released with exact discrete Gaussian noise on a grid
    (:func:`dpnb.privacy.exact_noise.grid_gaussian_release_sigma`, the grid rounding accounted for) and
    mirrored; with ``noise_scale="corrected"`` sigma then comes from the zCDP bound
    (:func:`mod_sulq_noise_sigma`; ``calibration`` no longer applies), so each draw is
    (epsilon, delta)-DP as stated; with ``"paper"`` it keeps the zCDP ``rho`` of Gaussian noise at ``beta``.
    Either way the ``d (d + 1) / 2`` exact draws of each release add ``sampling_delta(epsilon, d (d + 1) / 2)``
    to its delta (:func:`dpnb.privacy.exact_noise.sampling_delta`).
    """
    A, n, d, k, epsilon, n_draws = _check_common(X, n_components, epsilon, data_norm, n_draws)
    sigma = mod_sulq_noise_sigma(d, n, epsilon, delta, noise_scale, calibration, noise)
    rng = check_random_state(random_state)
    if noise == "exact":
        rows, cols = np.triu_indices(d)
        upper = np.zeros((n_draws, d, d))
        upper[:, rows, cols] = grid_gaussian_release_sigma(
            A[rows, cols], second_moment_l2_sensitivity(n), sigma, rng, size=n_draws
        )[0]
        return _top_k(upper + np.triu(upper, 1).transpose(0, 2, 1), k)
    perturbation = symmetrize_upper(rng.normal(0.0, sigma, size=(n_draws, d, d)))
    return _top_k(A + perturbation, k)


def mod_sulq_noise_sigma(
    n_features, n_samples, epsilon, delta, noise_scale="corrected", calibration="analytic", noise="float"
):
    """The sigma :func:`mod_sulq` uses: :func:`mod_sulq_sigma`, or for ``noise="exact"`` with
    ``noise_scale="corrected"`` :func:`dpnb.privacy.exact_noise.zcdp_sigma` of the sensitivity ``sqrt(2) / n``."""
    sigma = mod_sulq_sigma(n_features, n_samples, epsilon, delta, noise_scale, calibration)
    if check_noise(noise) == "exact" and noise_scale == "corrected" and sigma > 0:
        sensitivity = second_moment_l2_sensitivity(n_samples)
        return check_gaussian_sigma(zcdp_sigma(sensitivity, epsilon, delta), sensitivity, epsilon, delta)
    return sigma


# --------------------------------------------------------------------------------------
# PPCA (Algorithm 2)
# --------------------------------------------------------------------------------------
def ppca(
    X,
    n_components: int,
    epsilon,
    *,
    data_norm: float = 1.0,
    n_draws: int = 1,
    n_iter: int = 100,
    sampler: str = "gibbs",
    column: str = "scan",
    return_trace: bool = False,
    random_state=None,
):
    """PPCA (Algorithm 2): ``n_draws`` independent draws, shape ``(n_draws, d, n_components)``.

    ``sampler="gibbs"``: the last state of an ``n_iter``-scan Gibbs chain (Hoff 2009) started
    uniformly on the Stiefel manifold, targeting the matrix Bingham density
    ``exp((n epsilon / 2) tr(V^T A V))`` (eq. (8)); the exact target is epsilon-DP (Theorem 2),
    a finite chain is (epsilon, eta (1 + e^epsilon))-DP if it is within total variation ``eta``
    of the target for every dataset (see the notebook). ``sampler="exact"`` (``n_components =
    1`` only): exact rejection draws (:func:`dpnb.numerics.bingham.vector_bingham_exact`), epsilon-DP.
    ``column`` (Gibbs only) chooses how each column is redrawn from its vector-Bingham
    conditional: ``"scan"``, one scan of Hoff's coordinate sampler; ``"exact"``, an exact draw
    (:func:`dpnb.numerics.bingham.bingham_gibbs`). Needs ``n_components < d``. ``epsilon = inf`` returns the
    top eigenvectors of ``A``.

    The concentration ``n epsilon / 2`` is capped at ``2^31`` (``MAX_CONCENTRATION`` / 2, so that the
    spread of ``(n epsilon / 2) A``, whose eigenvalues lie in ``[0, 1]``, stays within what the Gibbs sampler
    takes): a larger ``epsilon`` is spent as ``2^32 / n``. The release is then ``2^32 / n``-DP, more private than
    asked, and within about ``2^-16 / sqrt(gap)`` of the top eigenvectors for an eigenvalue gap of ``A``,
    where float64 would anyway not resolve the exact density (see :func:`dpnb.numerics.bingham.bingham_gibbs`).

    Returns
    -------
    V : ndarray, shape (n_draws, d, n_components)
    trace : ndarray, shape (n_iter, n_draws), only if ``return_trace`` (Gibbs only): ``q_F``
        after each scan.
    """
    A, n, d, k, epsilon, n_draws = _check_common(X, n_components, epsilon, data_norm, n_draws)
    if k >= d:
        raise ValueError(f"PPCA needs n_components < d (d releases the whole space), got {k} with d={d}")
    check_choice(sampler, "sampler", SAMPLERS)
    if sampler == "exact" and (k != 1 or return_trace):
        raise ValueError("sampler='exact' needs n_components=1 and return_trace=False; use sampler='gibbs'")
    n_iter = check_integer(n_iter, "n_iter", minimum=0)
    if np.isinf(epsilon):
        V = np.broadcast_to(_top_k(A, k), (n_draws, d, k)).copy()
        return (V, np.broadcast_to(utility_qf(A, V), (n_iter, n_draws)).copy()) if return_trace else V
    scale = min(n * epsilon / 2, MAX_CONCENTRATION / 2)
    if sampler == "exact":
        return vector_bingham_exact(scale * A, n_draws, random_state=random_state)[:, :, None]
    out = bingham_gibbs(
        scale * A,
        k,
        n_chains=n_draws,
        n_iter=n_iter,
        return_trace=return_trace,
        column=column,
        random_state=random_state,
    )
    if return_trace:
        return out[0], out[1] / scale
    return out


# --------------------------------------------------------------------------------------
# Exact PPCA utility for a flat spectrum (k = 1), and the paper's test data
# --------------------------------------------------------------------------------------
def _flat_alignment_integrals(n_features: int, concentration: float, rho: float) -> tuple[float, float, float]:
    """``(int_0^rho p, int_rho^1 p, int_0^1 s p)``, ``p`` the unnormalised density of ``s = |<v, v_1>|``.

    ``s`` is the alignment of an exact PPCA draw (k = 1) with the top eigenvector.

    When ``lambda_2 = ... = lambda_d``, eq. (8) in the eigenbasis gives ``s^2 ~ Beta(1/2, (d-1)/2)``
    (the uniform measure on the sphere) tilted by ``e^{c s^2}``, so ``p(s) ~ (1 - s^2)^{(d-3)/2} e^{c s^2}``
    on ``(0, 1)`` with ``c = concentration = n epsilon (lambda_1 - lambda_2) / 2``. The integrand is
    scaled by its maximum (at ``s* = sqrt(1 - (d-3) / (2c))``) and integrated adaptively with
    break points at ``s*`` and a few curvature widths around it.
    """
    d = check_integer(n_features, "n_features", minimum=2)
    c = check_nonnegative(concentration, "concentration")
    a = (d - 3) / 2
    if a <= 0:  # d <= 3: the density increases towards s = 1
        peak, log_scale = 1.0, c
    elif c <= a:
        peak, log_scale = 0.0, 0.0
    else:
        peak, log_scale = np.sqrt(1 - a / c), a * np.log(a / c) + c - a
    curvature = abs(2 * c - 2 * a * (1 + peak**2) / max(1 - peak**2, 1e-300) ** 2) if a > 0 else 2 * c
    width = 1 / np.sqrt(max(curvature, 1.0))
    points = sorted({float(np.clip(peak + k * width, 0.0, 1.0)) for k in (-8, -2, 0, 2, 8)} | {rho} - {0.0, 1.0})

    def density(s):
        return np.exp(a * np.log1p(-s * s) + c * s * s - log_scale) if s < 1 else 0.0

    def integral(f, lo, hi):
        inside = [p for p in points if lo < p < hi]
        return quad(f, lo, hi, points=inside or None, epsabs=0.0, epsrel=1e-9, limit=400)[0] if hi > lo else 0.0

    below, above = integral(density, 0.0, rho), integral(density, rho, 1.0)
    return below, above, integral(lambda s: s * density(s), 0.0, 1.0)


def ppca_flat_alignment_mean(n_features: int, concentration: float) -> float:
    """Exact ``E|<v, v_1>|`` of PPCA (k = 1) when ``lambda_2 = ... = lambda_d``; see :func:`ppca_flat_alignment_sf`."""
    below, above, first = _flat_alignment_integrals(n_features, concentration, 0.0)
    return first / (below + above)


def ppca_flat_alignment_sf(rho: float, n_features: int, concentration: float, *, lower: bool = False) -> float:
    """Exact ``P(|<v, v_1>| >= rho)`` of PPCA (k = 1) when ``lambda_2 = ... = lambda_d``.

    ``concentration = n epsilon (lambda_1 - lambda_2) / 2``; this is the probability in the
    paper's (rho, eta)-closeness (Definition 2, eq. (5)). ``lower=True`` returns the complement
    ``P(|<v, v_1>| < rho)``, integrated directly (accurate when it is tiny).
    """
    rho = float(rho)
    if not 0.0 <= rho <= 1.0:
        raise ValueError(f"rho must lie in [0, 1], got {rho!r}")
    below, above, _ = _flat_alignment_integrals(n_features, concentration, rho)
    return (below if lower else above) / (below + above)


def spike_data(n_samples: int, n_features: int, share: float = 0.5) -> np.ndarray:
    """Unit rows: the first ``round(share n)`` are ``e_1``, the others cycle through ``e_2 .. e_d``.

    ``A`` is diagonal with ``lambda_1 = share`` and, when ``(1 - share) n`` is a multiple of
    ``d - 1``, every other eigenvalue ``(1 - share) / (d - 1)`` (a flat spectrum; ``v_1 = e_1``).
    """
    n = check_integer(n_samples, "n_samples")
    d = check_integer(n_features, "n_features", minimum=2)
    if not 0.0 < share < 1.0:
        raise ValueError(f"share must lie in (0, 1), got {share!r}")
    head = int(round(share * n))
    idx = np.where(np.arange(n) < head, 0, 1 + (np.arange(n) - head) % (d - 1))
    return np.eye(d)[idx]


FIGURE2_EIGENVALUES = (0.5, 0.30, 0.04, 0.03, 0.02, 0.01, 0.004, 0.003, 0.001, 0.001)


def synthetic_figure2(n_samples: int, *, random_state=None) -> tuple[np.ndarray, np.ndarray]:
    """The paper's Figure 2 data (Sec. 4): Gaussian rows with the listed covariance eigenvalues.

    The paper does not say how rows reach the unit ball; we use a random eigenbasis and clip rows
    of norm > 1 (a per-row map, so neighbours stay neighbours). Returns ``(Z, X)``: the Gaussian
    rows and the clipped ones.
    """
    n = check_integer(n_samples, "n_samples")
    rng = check_random_state(random_state)
    d = len(FIGURE2_EIGENVALUES)
    basis, _ = np.linalg.qr(rng.standard_normal((d, d)))
    Z = rng.standard_normal((n, d)) * np.sqrt(FIGURE2_EIGENVALUES) @ basis.T
    return Z, normalize_rows(Z, 1.0, mode="clip")


# --------------------------------------------------------------------------------------
# scikit-learn estimators
# --------------------------------------------------------------------------------------
class _PrivateSubspace(TransformerMixin, PrivateEstimator):
    """Shared ``transform`` and ``inverse_transform`` for estimators that release a basis ``components_`` (k, d)."""

    def transform(self, X) -> np.ndarray:
        """Project ``X`` (n, d) onto the released subspace: ``X @ components_.T`` (post-processing)."""
        check_is_fitted(self, "components_")
        X = check_array(X, name="X")
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X must have {self.n_features_in_} columns, got {X.shape[1]}")
        return X @ self.components_.T

    def inverse_transform(self, Z) -> np.ndarray:
        """Map coordinates ``Z`` (n, k) back to the input's units: ``Z @ components_`` (post-processing).

        The released basis is orthonormal, so this is the orthogonal projection of a row onto the released
        subspace, expressed in the input's features; exact for rows in that subspace. No mean is added: the
        mechanism releases an uncentred second moment.
        """
        check_is_fitted(self, "components_")
        Z = check_array(Z, ndim=2, name="Z")
        if Z.shape[1] != self.components_.shape[0]:
            raise ValueError(f"Z must have {self.components_.shape[0]} columns, got {Z.shape[1]}")
        return Z @ self.components_


class ModSULQ(_PrivateSubspace):
    """MOD-SULQ estimator (Algorithm 1), (epsilon, delta)-DP.

    ``X`` may be float32 (read as float64 block by block, no full copy) or a ``dask.array``: its second
    moment is then summed chunk by chunk on the Dask cluster and the noise drawn once on the client
    (:func:`dpnb.numerics.blocks.row_sums`), the in-memory release to round-off.

    Parameters
    ----------
    n_components : int
        ``k``, the released dimension.
    epsilon : float
        ``inf`` releases the exact top eigenvectors (no noise).
    delta : float in (0, 1)
    noise_scale : {"corrected", "paper"}
        ``"corrected"``: Gaussian mechanism for the upper triangle's L2 sensitivity ``sqrt(2)/n``;
        ``"paper"``: Theorem 1's ``beta``.
    calibration : {"analytic", "classic"}
        Gaussian calibration used by ``noise_scale="corrected"``.
    data_norm : float
        Public bound on every row's L2 norm; rows beyond it are rejected.
    noise : {"float", "exact"}
        ``"float"`` (default): numpy's floating-point Gaussian noise; ``"exact"``: exact discrete
        Gaussian noise on a grid, with sigma from the zCDP bound for ``noise_scale="corrected"`` (see
        :func:`mod_sulq`).
    random_state : None, int, SeedSequence or Generator

    Attributes
    ----------
    components_ : ndarray, shape (n_components, n_features)
    sigma_ : float
        Noise standard deviation used, on the scale ``||x|| <= 1``.
    budget_ : dict
        ``{"second_moment": (epsilon, delta)}``; with ``noise="exact"`` delta plus the sampler's
        ``sampling_delta(epsilon, d (d + 1) / 2)`` (:func:`dpnb.privacy.estimator.with_sampling_delta`).
    sensitivity_ : dict
        ``{"second_moment": sqrt(2) / n}`` (L2, upper triangle, scale ``||x|| <= 1``).
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from dpnb.ground.datasets import normalize_rows
    >>> from dpnb.papers.private_pca import ModSULQ
    >>> X = normalize_rows(np.random.default_rng(0).normal(size=(500, 10)), 1.0, mode="clip")  # norms <= 1
    >>> model = ModSULQ(n_components=2, epsilon=1.0, delta=1e-5, random_state=0).fit(X)
    >>> model.components_.shape, model.budget_
    ((2, 10), {'second_moment': (1.0, 1e-05)})
    >>> model.inverse_transform(model.transform(X)).shape  # rows projected on the private subspace
    (500, 10)
    """

    def __init__(
        self,
        n_components: int,
        epsilon: float,
        delta: float,
        *,
        noise_scale: str = "corrected",
        calibration: str = "analytic",
        data_norm: float = 1.0,
        noise: str = "float",
        random_state=None,
    ):
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.noise_scale = noise_scale
        self.calibration = calibration
        self.data_norm = data_norm
        self.noise = noise
        self.random_state = random_state

    def fit(self, X, y=None) -> ModSULQ:
        """Release a private basis of ``X`` (``y`` is ignored)."""
        epsilon, delta = self._check_privacy()
        V = mod_sulq(
            X,
            self.n_components,
            epsilon,
            delta,
            noise_scale=self.noise_scale,
            calibration=self.calibration,
            data_norm=self.data_norm,
            random_state=self._make_rng(),
            noise=self.noise,
        )
        n, d = np.shape(X)
        self.sigma_ = mod_sulq_noise_sigma(d, n, epsilon, delta, self.noise_scale, self.calibration, self.noise)
        self.components_ = V[0].T
        self.budget_ = {"second_moment": (epsilon, delta)}
        if self.noise == "exact":  # the sampler's delta: d (d + 1) / 2 draws, the upper triangle
            self.budget_ = with_sampling_delta(self.budget_, {"second_moment": d * (d + 1) // 2})
        self.sensitivity_ = {"second_moment": second_moment_l2_sensitivity(n)}
        self.n_features_in_ = d
        return self


class PPCA(_PrivateSubspace):
    """PPCA estimator (Algorithm 2), epsilon-DP for the exact Bingham draw.

    ``X`` may be float32 or a ``dask.array``, as for :class:`ModSULQ` (the same second moment).

    Parameters
    ----------
    n_components : int
        ``k < d``.
    epsilon : float
        ``inf`` releases the exact top eigenvectors; an ``epsilon`` above ``2^32 / n`` is spent as
        ``2^32 / n`` (see :func:`ppca`).
    n_iter : int
        Gibbs scans (see :func:`ppca` for what a finite chain guarantees).
    sampler : {"gibbs", "exact"}
        ``"exact"`` needs ``n_components = 1``.
    data_norm : float
        Public bound on every row's L2 norm; rows beyond it are rejected.
    random_state : None, int, SeedSequence or Generator

    Attributes
    ----------
    components_ : ndarray, shape (n_components, n_features)
    budget_ : dict
        ``{"subspace": (epsilon, 0.0)}``.
    sensitivity_ : dict
        ``{"subspace": 1.0}``: the sensitivity of the exponential mechanism's score ``n q_F(V)``
        (scale ``||x|| <= 1``).
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from dpnb.ground.datasets import normalize_rows
    >>> from dpnb.papers.private_pca import PPCA
    >>> X = normalize_rows(np.random.default_rng(0).normal(size=(500, 10)), 1.0, mode="clip")  # norms <= 1
    >>> model = PPCA(n_components=1, epsilon=1.0, sampler="exact", random_state=0).fit(X)
    >>> model.components_.shape, model.budget_
    ((1, 10), {'subspace': (1.0, 0.0)})
    >>> bool(np.isclose(np.linalg.norm(model.components_), 1.0))
    True
    """

    def __init__(
        self,
        n_components: int,
        epsilon: float,
        *,
        n_iter: int = 100,
        sampler: str = "gibbs",
        data_norm: float = 1.0,
        random_state=None,
    ):
        self.n_components = n_components
        self.epsilon = epsilon
        self.n_iter = n_iter
        self.sampler = sampler
        self.data_norm = data_norm
        self.random_state = random_state

    def fit(self, X, y=None) -> PPCA:
        """Release a private basis of ``X`` (``y`` is ignored)."""
        epsilon, _ = self._check_privacy(needs_delta=False)
        V = ppca(
            X,
            self.n_components,
            epsilon,
            data_norm=self.data_norm,
            n_iter=self.n_iter,
            sampler=self.sampler,
            column="exact",  # each column drawn exactly from its conditional: no loop over coordinates
            random_state=self._make_rng(),
        )
        self.components_ = V[0].T
        self.budget_ = {"subspace": (epsilon, 0.0)}
        self.sensitivity_ = {"subspace": 1.0}
        self.n_features_in_ = np.shape(X)[1]
        return self
