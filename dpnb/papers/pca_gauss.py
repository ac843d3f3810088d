"""PCA-Gauss: PCA coupled with a Gaussian generative model (Chanyaswad, Liu, Mittal 2017).

arXiv 1709.00054 v1/v2, "Coupling Dimensionality Reduction with Generative Model for
Non-Interactive Private Data Release". Data rows ``x`` lie in a public box ``bounds = (low,
high)`` (the paper's ``[-a, a]^M``); neighbouring datasets differ by *replacing* one row (the
paper's bounded notion, Remark 1); sensitivities are L1 and noise is Laplace (pure epsilon-DP),
except for Analyze-Gauss, which is Gaussian ((epsilon, delta)-DP). The paper's symbols: ``N``
records (``n_samples``), ``M`` features (``n_features``), ``K`` components (``n_components``).

What is implemented, and where it departs from the paper (each departure is derived and
audited in ``notebooks/pca_gauss.md``); ``noise_scale="paper"`` switches to the paper's
(reconstructed) values where they differ:

* :func:`second_moment_l1_sensitivity` -- Proposition 3 for the second-moment matrix
  ``(1/N) X^T X``, for per-coordinate bounds, for the upper triangle that symmetric noise
  needs (``((sum c)^2 + sum c^2) / (2N)``) or for the full matrix (``(sum c)^2 / N``).
* :func:`eigenvalue_sensitivity` -- Theorem 4 (Algorithm 1): when the PCA basis comes from the
  same data, the released ``K x K`` covariance is ``diag(lambda_1..lambda_K) / M``; by
  Lidskii's inequality its L1 sensitivity is ``min(K, 2) a^2 / N`` (the paper: ``K a^2 / N``).
* :func:`lap_pca` (Section VII), :func:`analyze_gauss_pca` (Dwork et al. 2014, with the
  replace-one sensitivity ``sqrt(2) r^2``) and :func:`public_pca` give the independently derived
  bases that Algorithms 2 and 3 need; the "adaptation of Blocki et al." baseline uses
  :func:`dpnb.papers.dppro.gaussian_projection` (the rescaling of Lemma 1 removes its scale).
* :class:`PCAGauss` -- Algorithms 1-3. Algorithm 3 (GMM) is released *jointly* from noisy
  class counts, class sums and class second-moment sums with data-independent noise, because
  the paper's per-class mean/covariance release (Theorem 6) under-states the sensitivity of the
  mean-centred class covariance by a factor of about 4 and scales the noise by the private
  class sizes.
"""

from __future__ import annotations

import functools

import numpy as np
from sklearn.base import TransformerMixin
from sklearn.utils.validation import check_is_fitted

from dpnb.ground.validation import (
    MAX_SAMPLES,
    check_array,
    check_bounds,
    check_choice,
    check_data_in_bounds,
    check_epsilon,
    check_fraction,
    check_in_box,
    check_integer,
    check_matrix_in_box,
    check_n_components,
    check_positive,
    check_release_range,
    check_row_norms,
    check_sensitivity,
    first_few,
)
from dpnb.numerics.blocks import check_rows, float64_blocks, is_dask_array, row_sums
from dpnb.numerics.linalg import PARTS, gaussian_draws, gram_block_rows, project_psd, top_eigenvectors
from dpnb.papers.private_pca import unit_radius
from dpnb.privacy.estimator import PrivateEstimator, split_budget, with_sampling_delta
from dpnb.privacy.exact_noise import check_noise
from dpnb.privacy.mechanisms import (
    laplace_mechanism,
    symmetric_gaussian_mechanism,
    symmetric_laplace_mechanism,
)

MODES = ("unsupervised", "supervised", "gmm")
NOISE_SCALES = ("corrected", "paper")  # PCA-Gauss's noise_scale values


# --------------------------------------------------------------------------------------
# Public bounds
# --------------------------------------------------------------------------------------
def coordinate_bounds(bounds, n_features=None) -> np.ndarray:
    """``c_j = max(|low_j|, |high_j|)``: the bound on ``|x_j|`` that every sensitivity below uses.

    ``bounds`` is validated by :func:`dpnb.ground.validation.check_bounds` (finite, ``low < high``).
    """
    low, high = check_bounds(bounds, n_features)
    c = np.maximum(np.abs(low), np.abs(high))
    with np.errstate(over="ignore"):
        too_wide = not np.isfinite(c.sum() ** 2)
    if too_wide:
        raise ValueError(
            "bounds are too wide: the second-moment sensitivity (sum of the coordinate bounds)^2 "
            "overflows; rescale the data to a smaller public box"
        )
    return c


def _check_range(magnitude, sensitivity, epsilon) -> None:
    """Refuse (naming ``bounds``) a Laplace release of values up to ``magnitude`` that could overflow float64.

    ``epsilon`` may be a part of the budget that underflowed to 0 (a tiny fraction of a tiny epsilon): an
    infinite scale, refused as well.
    """
    with np.errstate(over="ignore", divide="ignore"):
        scale = np.float64(sensitivity) / epsilon
    check_release_range(magnitude, scale)


def _check_noise_scale(noise_scale) -> str:
    return check_choice(noise_scale, "noise_scale", NOISE_SCALES)


# --------------------------------------------------------------------------------------
# Sensitivities
# --------------------------------------------------------------------------------------
def second_moment_l1_sensitivity(bounds, n_samples, *, n_features=None, part: str = "upper") -> float:
    """L1 sensitivity of ``(1/N) sum_i x_i x_i^T`` for rows in the box ``bounds`` (Proposition 3, corrected form).

    Replace-one neighbours; the rows' coordinates satisfy ``|x_j| <= c_j = max(|low_j|, |high_j|)``
    (:func:`coordinate_bounds`). Not to be confused with
    :func:`dpnb.papers.private_pca.second_moment_l2_sensitivity` (L2, rows in a ball).

    Parameters
    ----------
    bounds : pair (low, high)
        Public box of the rows, scalars or arrays of shape ``(M,)`` (the cube ``[-a, a]^M`` is
        ``(-a, a)`` with ``n_features=M``).
    n_samples : int
        ``N``, public (bounded, replace-one neighbours).
    n_features : int, optional
        ``M``, needed when ``bounds`` are scalars.
    part : {"upper", "full"}
        ``"upper"``: the upper triangle incl. the diagonal, ``((sum c)^2 + sum c^2) / (2N)`` -- what
        symmetric noise needs. ``"full"``: the whole matrix, ``(sum c)^2 / N`` (for ``c_j = a`` the
        paper's ``M^2 a^2 / N``). Both are attained by ``x = c``, ``x' = 0``.
    """
    c = coordinate_bounds(bounds, n_features)
    n = check_integer(n_samples, "n_samples")
    part = check_choice(part, "part", PARTS)
    with np.errstate(over="ignore"):  # an overflow gives inf, which check_sensitivity refuses naming the bounds
        s1, s2 = c.sum(), (c**2).sum()
        value = (s1**2 + s2) / (2 * n) if part == "upper" else s1**2 / n
    return check_sensitivity(value)


def eigenvalue_sensitivity(
    n_components, n_samples, bounds=(-1.0, 1.0), *, n_features=None, noise_scale: str = "corrected"
) -> float:
    """L1 sensitivity of the top-``K`` eigenvalues of ``(1/(N M)) X^T X`` (Theorem 4).

    These are the diagonal of Algorithm 1's PCA-induced covariance after the rescaling of
    Lemma 1. With ``a^2 = mean_j c_j^2`` (``a`` itself for the cube ``[-a, a]^M``), Weyl bounds
    each eigenvalue change by ``a^2 / N`` and Lidskii bounds their sum by the nuclear norm
    ``(|x|^2 + |x'|^2) / (N M) <= 2 a^2 / N``: ``noise_scale="corrected"`` gives ``min(K, 2) a^2 / N``,
    ``"paper"`` the (valid, looser) reconstructed ``K a^2 / N``.
    """
    k = check_integer(n_components, "n_components")
    n = check_integer(n_samples, "n_samples")
    a2 = float(np.mean(coordinate_bounds(bounds, n_features) ** 2))
    factor = min(k, 2) if _check_noise_scale(noise_scale) == "corrected" else k
    return check_sensitivity(factor * a2 / n)


def gmm_sensitivities(n_components, bounds=(-1.0, 1.0)) -> dict:
    """L1 sensitivities of the joint per-class statistics released by corrected Algorithm 3.

    For rows ``z`` in the box ``bounds`` (``a = max |bound|``; the reduced features of
    :func:`reduce_features` lie in ``[-a, a]^K``) with a class label, replacing one record (features and label
    may both change) moves: the class-count vector by at most 2; the stacked class sums by at
    most ``2 K a``; the stacked upper triangles of the class second-moment sums by at most
    ``K (K + 1) a^2`` (a record that changes class removes one triangle and adds another).
    None of them depends on the private class sizes.
    """
    k = check_integer(n_components, "n_components")
    a = float(coordinate_bounds(bounds).max())
    second = check_sensitivity(k * (k + 1) * a**2)
    return {"counts": 2.0, "sums": check_sensitivity(2.0 * k * a), "second_moments": second}


# --------------------------------------------------------------------------------------
# Features and independently derived bases
# --------------------------------------------------------------------------------------
def feature_scale(basis, bounds=(-1.0, 1.0)) -> float:
    """Public constant ``s`` with ``|w_k^T x| / s <= a`` for every ``x`` in the box (Lemma 1).

    ``s = max_k sum_j |w_jk| c_j / a`` with ``a = max_j c_j``: for the cube ``[-a, a]^M`` it is
    ``max_k ||w_k||_1``, the exact range of the projected features, at most ``sqrt(M)`` for unit
    columns (Lemma 1's bound, by Cauchy-Schwarz). It depends only on the basis and the public
    bounds, so it is data-independent whenever the basis is.
    """
    W = check_array(basis, ndim=2, name="basis")
    c = coordinate_bounds(bounds, W.shape[0])
    scale = float((np.abs(W) * c[:, None]).sum(axis=0).max() / c.max())
    if scale == 0:
        raise ValueError("basis has only zero columns; pass a basis with nonzero columns")
    return scale


def reduce_features(X, basis, *, bounds=(-1.0, 1.0)) -> np.ndarray:
    """Project rows of ``X`` (in the box, else rejected) onto ``basis`` and rescale into ``[-a, a]^K``.

    ``a = max_j c_j`` (:func:`coordinate_bounds`); the scale is :func:`feature_scale`.
    """
    X = check_array(X, name="X")
    low, high = check_bounds(bounds, X.shape[1])
    X = check_in_box(X, low, high)
    W = _check_basis(basis, X.shape[1], None)
    return X @ W / feature_scale(W, (low, high))


def lap_pca(X, n_components, epsilon, *, bounds=(-1.0, 1.0), random_state=None, noise="float") -> np.ndarray:
    """LapPCA (Section VII): top-``K`` eigenvectors of a Laplace-noised second-moment matrix.

    Steps: ``C = X^T X / N`` (Eq. 2, data assumed centred about the public origin), symmetric
    Laplace noise with the upper-triangle sensitivity (``M (M + 1) a^2 / (2 N)`` for the cube,
    :func:`second_moment_l1_sensitivity`), then the top-``K`` eigenvectors, not singular vectors (the paper says "SVD";
    singular vectors of a noisy indefinite matrix can pick a large negative eigenvalue instead).
    epsilon-DP; ``epsilon=inf`` gives the exact PCA. Rows outside the box are rejected; bounds so
    wide (or epsilon so small) that the noisy matrix could overflow, or so narrow that the
    sensitivity underflows, are refused naming ``bounds``.

    ``noise="float"`` (default): numpy's floating-point Laplace noise; ``noise="exact"``: exact
    discrete Laplace noise on a grid (:func:`dpnb.privacy.mechanisms.symmetric_laplace_mechanism`), whose
    ``M (M + 1) / 2`` draws make it ``(epsilon, sampling_delta(epsilon, M (M + 1) / 2))``-DP
    (:func:`dpnb.privacy.exact_noise.sampling_delta`).

    Returns
    -------
    ndarray of shape (M, K), orthonormal columns.
    """
    X = check_array(X, name="X", min_rows=1)
    low, high = check_bounds(bounds, X.shape[1])
    X = check_in_box(X, low, high)
    n, m = X.shape
    k = check_n_components(n_components, m)
    c = coordinate_bounds((low, high))
    sens = second_moment_l1_sensitivity((low, high), n)
    _check_range(c.max() ** 2, sens, check_epsilon(epsilon))  # entries of X^T X / N are at most max c_j^2
    noisy = symmetric_laplace_mechanism(X.T @ X / n, sens, epsilon, random_state=random_state, noise=noise)
    return top_eigenvectors(noisy, k)[1]


def analyze_gauss_pca(
    X,
    n_components,
    epsilon,
    delta,
    *,
    data_norm=1.0,
    noise_scale="corrected",
    calibration="analytic",
    random_state=None,
    noise="float",
) -> np.ndarray:
    """Analyze-Gauss PCA (Dwork, Talwar, Thakurta, Zhang 2014): symmetric Gaussian noise on ``X^T X``.

    Rows must have L2 norm ``<= data_norm`` (``r``; rejected otherwise; an ``r`` outside ``[2^-200, 2^200]`` is
    first scaled with ``X`` by a power of two, :func:`dpnb.papers.private_pca.unit_radius`, which changes neither
    the eigenvectors nor their distribution, as sigma scales with ``r^2``). Under replace-one
    neighbours the upper triangle of ``x x^T - x' x'^T`` has L2 norm at most ``sqrt(2) r^2``
    (attained by two orthogonal rows of norm ``r``): ``noise_scale="corrected"``. Dwork et al.'s
    ``r^2`` (their add/remove-one value) is ``noise_scale="paper"``. ``calibration`` selects the
    Gaussian calibration, ``"analytic"`` or ``"classic"`` (refused for epsilon >= 1).
    (epsilon, delta)-DP.

    ``noise="float"`` (default): numpy's floating-point Gaussian noise; ``noise="exact"``: exact
    discrete Gaussian noise on a grid (:func:`dpnb.privacy.mechanisms.symmetric_gaussian_mechanism`), whose
    sigma comes from the zCDP bound, so ``calibration`` no longer applies; its ``M (M + 1) / 2`` draws make it
    ``(epsilon, delta + sampling_delta(epsilon, M (M + 1) / 2))``-DP (:func:`dpnb.privacy.exact_noise.sampling_delta`).

    Returns
    -------
    ndarray of shape (M, K), orthonormal columns.
    """
    X, r = unit_radius(check_array(X, name="X"), check_positive(data_norm, "data_norm"))  # extreme norms: rescaled
    X = check_row_norms(X, r)
    k = check_n_components(n_components, X.shape[1])
    factor = np.sqrt(2.0) if _check_noise_scale(noise_scale) == "corrected" else 1.0
    noisy = symmetric_gaussian_mechanism(
        X.T @ X, factor * r**2, epsilon, delta, calibration=calibration, random_state=random_state, noise=noise
    )
    return top_eigenvectors(noisy, k)[1]


def public_pca(X_public, n_components) -> np.ndarray:
    """PubPCA: top-``K`` eigenvectors of the second moment of public data (no privacy cost).

    Only valid when ``X_public`` is genuinely public, or a part of the data set aside at random
    before release (parallel composition: its rows are then not protected by the release).
    """
    X = check_array(X_public, name="X_public", min_rows=2)
    k = check_n_components(n_components, X.shape[1])
    return top_eigenvectors(X.T @ X / X.shape[0], k)[1]


def pca_spectrum(X) -> np.ndarray:
    """All eigenvalues of ``(1/(N M)) X^T X``, decreasing (Algorithm 1's PCA-induced variances).

    One Gram product (``O(N M^2)``) and one symmetric eigenvalue decomposition (``O(M^3)``), in memory (a
    ``dask.array`` is computed first). Rows whose second moment overflows float64 (entries near ``1e154`` and
    above) are refused with a ValueError: the matrix is checked, ``O(M^2)``, before it is decomposed.
    """
    return _spectrum(check_array(X, name="X"), refuse_overflow=True)


def _spectrum(X, *, refuse_overflow: bool = False) -> np.ndarray:
    """:func:`pca_spectrum` of an already checked ``X``. The fit calls it after its box check, which rejects NaN,
    infinities and bounds whose squared sums overflow: the Gram matrix is then the only pass over ``X``."""
    with np.errstate(over="ignore"):  # an overflow is refused below, not warned about
        moment = X.T @ X / X.shape[0] / X.shape[1]
    if refuse_overflow and not np.all(np.isfinite(moment)):
        raise ValueError(
            f"X's second moment X^T X / (N M) overflows float64 (entries up to {np.max(np.abs(X)):.3g}): rescale X"
        )
    return np.linalg.eigvalsh(moment)[::-1]


def _reduced_moments(X, W) -> tuple[np.ndarray, np.ndarray]:
    """``(Z^T Z / N, mean of Z)`` for ``Z = X W``, computed afresh from ``X`` on every call.

    Through the Gram matrix (``W^T (X^T X / N) W``) when forming it costs no more than forming
    ``Z^T Z`` (``2 K >= M``: ``N M^2`` against ``2 N M K`` flops), otherwise from ``Z`` itself. No
    moment of the data is kept between calls (a cache of private statistics would outlive the
    release and could be served for another dataset).
    """
    if 2 * W.shape[1] >= W.shape[0]:
        gram = X.T @ X / X.shape[0]
        return W.T @ gram @ W, X.mean(axis=0) @ W
    Z = X @ W
    return Z.T @ Z / X.shape[0], np.ones(X.shape[0]) @ Z / X.shape[0]  # a product: a column mean is a slow strided pass


def _box_moments(X, column=None, *, column_is=None, low, high, basis=None, scale=1.0, n_classes=1):
    """``(counts, sums, second-moment sums)`` per class of the rows ``z_i`` of some rows of ``X``, checked in the box.

    The per-chunk statistic of :class:`PCAGauss`'s blocked fit (:func:`dpnb.numerics.blocks.row_sums`). One
    pass in blocks read as float64 (:func:`dpnb.numerics.blocks.float64_blocks`; cache-sized, or
    :func:`dpnb.numerics.linalg.gram_block_rows` without a basis): each block's
    values checked in ``[low, high]`` (:func:`dpnb.ground.validation.check_matrix_in_box`; a NaN fails too),
    then ``z_i = x_i`` (``basis`` None) or ``x_i basis / scale``, with ``column`` appended
    (``column_is="labels"``) or naming the row's class (``column_is="classes"``), and ``Z^T Z`` added by BLAS.
    ``O(r M K + r K^2)`` flops over ``r`` rows (``O(r M^2)`` without a basis).

    Returns
    -------
    counts : ndarray of shape (n_classes,)
    sums : ndarray of shape (n_classes, q)
    seconds : ndarray of shape (n_classes, q, q)
        ``q`` is the width of ``z``.

    Raises
    ------
    ValueError
        For a block with a value outside the box (the message names the features); nothing is returned.

    Examples
    --------
    >>> X = np.array([[0.5, -1.0], [1.0, 0.0]], dtype=np.float32)
    >>> counts, sums, seconds = _box_moments(X, low=np.full(2, -1.0), high=np.full(2, 1.0))
    >>> counts, sums[0], seconds[0]
    (array([2.]), array([ 1.5, -1. ]), array([[ 1.25, -0.5 ],
           [-0.5 ,  1.  ]]))
    """
    q = (X.shape[1] if basis is None else basis.shape[1]) + (column_is == "labels")
    counts, sums, seconds = np.zeros(n_classes), np.zeros((n_classes, q)), np.zeros((n_classes, q, q))
    for start, block in float64_blocks(X, gram_block_rows(X.shape[1]) if basis is None else None):
        check_matrix_in_box(block, low, high, name="X")
        Z = block if basis is None else block @ basis
        if scale != 1.0:
            Z /= scale
        values = None if column is None else column[start : start + block.shape[0]]
        if column_is == "labels":
            Z = np.column_stack([Z, values])
        for j in range(n_classes):
            Zj = Z[values == j] if column_is == "classes" else Z
            counts[j] += Zj.shape[0]
            sums[j] += np.ones(Zj.shape[0]) @ Zj  # a product: a column sum is a strided pass
            seconds[j] += Zj.T @ Zj
    return counts, sums, seconds


# --------------------------------------------------------------------------------------
# Algorithms 1-3
# --------------------------------------------------------------------------------------
class PCAGauss(TransformerMixin, PrivateEstimator):
    """PCA-Gauss Algorithms 1-3: a differentially private Gaussian (mixture) model in a PCA space.

    Data larger than memory: ``X`` may be a ``dask.array`` (float32 or float64), reduced in one pass chunk by
    chunk on the Dask cluster, the box checked on every chunk and the noise drawn on the client (:meth:`fit`).
    float32 input stays float32 (read as float64 a cache-sized block at a time, exact); the sums are formed in
    float64, since a float32 sum of ``N`` terms would carry a relative error growing like ``N 2^-24`` (pairwise:
    ``log2(N) 2^-24``) against a noise scale that shrinks like ``1 / N``.

    Parameters
    ----------
    n_components : int
        ``K``, the reduced dimension.
    epsilon : float
        Budget of this release, pure epsilon-DP (a basis's own budget, if any, is separate:
        serial composition). ``numpy.inf``: no noise.
    mode : {"unsupervised", "supervised", "gmm"}
        Algorithm 1, 2 or 3.
    basis : array_like of shape (M, K), optional
        An independently derived basis (:func:`lap_pca`, :func:`analyze_gauss_pca`,
        :func:`public_pca`, :func:`dpnb.papers.dppro.gaussian_projection`, or the identity for "no
        reduction"). Required for "supervised" and "gmm". For "unsupervised", None means
        Algorithm 1 proper: PCA of the same data, releasing only the noisy top-``K`` eigenvalues
        (Theorem 4, :func:`eigenvalue_sensitivity`); the basis itself is *not* released, so
        samples live in the private PCA coordinates and there is no ``components_`` nor
        :meth:`transform`.
    bounds : tuple (low, high)
        Public box of the rows of ``X`` (scalars or per-feature arrays); rows outside it are
        rejected. The paper's ``[-a, a]^M`` is ``(-a, a)``.
    label_bound : float
        Public ``b`` for "supervised": ``y`` must lie in ``[-b, b]`` (rejected otherwise).
    n_classes : int
        Public number of classes for "gmm"; labels must be integers in ``[0, n_classes)``.
    mean_fraction : float, optional
        Share of ``epsilon`` spent on the mean (class sums/means for "gmm"). Default: 0 for
        "unsupervised" and "supervised" (the paper's zero-mean model, data assumed centred
        about the public origin), 0.1 for "gmm" (the paper's split). Must be 0 for Algorithm 1
        with a data-derived basis (a mean in a data-dependent basis has no O(1/N) sensitivity).
    count_fraction : float
        Share of ``epsilon`` spent on the class counts ("gmm", ``noise_scale="corrected"`` only).
    noise_scale : {"corrected", "paper"}
        ``"corrected"``: the sensitivities derived in the notebook (Algorithm 1 ``min(K, 2) a^2/N``,
        Algorithm 2 the upper-triangle Proposition 3, Algorithm 3 the joint release).
        ``"paper"``: the paper's reconstructed values (Algorithm 1 ``K a^2 / N``, Algorithm 2
        ``(K^2 + 4K + 1) a^2 / N``, Algorithm 3 per class ``2Ka/N_c`` and ``K^2 a^2 / N_c`` with
        the exact class sizes) -- **not** differentially private for "gmm"; for audits only.
    noise : {"float", "exact"}
        ``"float"`` (default): numpy's floating-point Laplace noise (its set of possible outputs
        depends on the data, Mironov 2012); ``"exact"``: exact discrete Laplace noise on a grid
        (:func:`dpnb.privacy.mechanisms.laplace_mechanism` and its symmetric variant), DP as stated.
    random_state : None, int, SeedSequence or Generator

    Attributes
    ----------
    Every mode sets ``budget_``, ``sensitivity_``, ``n_features_in_`` and ``components_``; the
    released model is ``mean_, covariance_`` (a Gaussian: "unsupervised", "supervised") or
    ``class_weights_, class_means_, class_covariances_`` (a mixture: "gmm"), never both.

    budget_ : dict
        Statistic -> ``(epsilon_i, 0.0)``; they add up to ``(epsilon, 0)``. With ``noise="exact"`` each delta
        is the sampler's ``sampling_delta(epsilon_i, m)`` (:func:`dpnb.privacy.estimator.with_sampling_delta`)
        for the ``m`` draws of that statistic: ``K`` eigenvalues (Algorithm 1 with the data's PCA);
        ``q (q + 1) / 2`` for a ``q x q`` second moment and ``q`` for the mean (``q = K``, ``K + 1`` with the
        label); in "gmm", ``C`` counts, ``C K`` sums (class means) and ``C K (K + 1) / 2`` second moments.
    sensitivity_ : dict
        Statistic -> the L1 sensitivity its Laplace noise used.
    n_features_in_ : int
    components_ : ndarray of shape (K, M), or None
        The public basis (transposed); None for Algorithm 1 with a data-derived basis, which
        stays private.
    mean_, covariance_ : ndarray of shape (K,) and (K, K); (K + 1,) and (K + 1, K + 1) for "supervised"
        The private Gaussian ("unsupervised"/"supervised"; for "supervised" the label is the last
        coordinate). Not set for "gmm".
    class_weights_, class_means_, class_covariances_ : ndarray of shape (C,), (C, K), (C, K, K)
        The private mixture ("gmm" only).

    Examples
    --------
    >>> import numpy as np
    >>> from dpnb.numerics.linalg import haar_stiefel
    >>> from dpnb.papers.pca_gauss import PCAGauss, pca_spectrum
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 5))  # rows in the public box [-1, 1]^5
    >>> model = PCAGauss(n_components=2, epsilon=1.0, bounds=(-1.0, 1.0), random_state=0).fit(X)
    >>> model.budget_, model.sample(4).shape  # Algorithm 1: the noisy top eigenvalues, basis kept private
    ({'eigenvalues': (1.0, 0.0)}, (4, 2))
    >>> W = haar_stiefel(5, 2, random_state=1)  # a public basis, drawn without the data
    >>> y = (X[:, 0] > 0).astype(int)
    >>> gmm = PCAGauss(2, 1.0, mode="gmm", basis=W, n_classes=2, random_state=0).fit(X, y)
    >>> Z, y_syn = gmm.sample(4)  # fitted with labels: (Z, y)
    >>> gmm.inverse_transform(Z).shape  # synthetic records in the input's units
    (4, 5)
    >>> spectrum = pca_spectrum(X)  # a function of the rows only: formed once for many releases of them
    >>> again = PCAGauss(2, 1.0, bounds=(-1.0, 1.0), random_state=0).fit(X, spectrum=spectrum)
    >>> bool(np.array_equal(again.covariance_, model.covariance_))
    True
    >>> X32 = X.astype(np.float32)  # kept in float32 (as a dask.array's chunks are): one pass of box-checked sums
    >>> blocked, in_memory = (PCAGauss(2, 1.0, basis=W, random_state=0).fit(data) for data in (X32, X32.astype(float)))
    >>> bool(np.allclose(blocked.covariance_, in_memory.covariance_))
    True
    """

    def __init__(
        self,
        n_components=2,
        epsilon=1.0,
        *,
        mode="unsupervised",
        basis=None,
        bounds=(-1.0, 1.0),
        label_bound=1.0,
        n_classes=None,
        mean_fraction=None,
        count_fraction=0.05,
        noise_scale="corrected",
        noise="float",
        random_state=None,
    ):
        self.n_components = n_components
        self.epsilon = epsilon
        self.mode = mode
        self.basis = basis
        self.bounds = bounds
        self.label_bound = label_bound
        self.n_classes = n_classes
        self.mean_fraction = mean_fraction
        self.count_fraction = count_fraction
        self.noise_scale = noise_scale
        self.noise = noise
        self.random_state = random_state

    # -- fitting ------------------------------------------------------------------------
    def fit(self, X, y=None, *, spectrum=None):
        """Release the private model of ``X`` (and ``y`` for "supervised"/"gmm"). Returns self.

        "unsupervised" accepts and ignores ``y``. First the statistics of ``X`` (``_statistics``; one pass over
        ``X`` in every mode), then one private method per path releases them: Algorithm 1 with the data's own
        PCA (``_fit_same_data_pca``) or a given basis, and Algorithm 2 (``_fit_gaussian``), Algorithm 3
        (``_fit_gmm``, or ``_fit_gmm_paper`` for ``noise_scale="paper"``).

        ``spectrum`` (Algorithm 1 with the data's own PCA only: ``mode="unsupervised"``, no ``basis``) is
        ``pca_spectrum(X)`` when the caller has already formed it. It depends on the rows only, not on any draw,
        so a loop over releases of the same in-memory float64 rows forms it once (the ``N M^2`` Gram matrix and
        the ``M^3`` eigenvalue decomposition), and each release is the one without it, bit for bit. Its ``K``
        largest values are released with the noise of Theorem 4, so the release is epsilon-DP for ``X`` only if
        ``spectrum`` is the spectrum of ``X``: nothing here can tell another data set's spectrum from it. ``X`` is
        still checked against ``bounds``. float32 and Dask input are checked in their usual pass, which also forms
        their own spectrum (summed by blocks, so it differs from ``pca_spectrum``'s at round-off); the given one
        replaces it, so there a spectrum saves nothing and changes the release at round-off.

        ``X`` may be a float64 array (never copied), a float32 array or a ``dask.array`` of either (``y``, one
        value per row, is held in memory). float32 and Dask input take the blocked route
        (``_blocked_statistics``): one pass of sums over rows (``_box_moments`` through
        :func:`dpnb.numerics.blocks.row_sums`; on a Dask cluster one task per chunk of rows, only the
        statistics travel back), every block checked against the box; a block outside it (or unreadable) fails
        the fit before anything is drawn or set. Every statistic is a sum over rows, so one pass suffices in
        every mode; the noise is drawn on the client, as in memory. The release is the in-memory one to
        round-off; ``noise_scale="paper"``'s centred class covariances come from the one-pass form
        ``sum z z^T / N_c - mu mu^T`` there, whose round-off ``O(N_c u a^2)`` is absolute, not relative to the
        covariance (the reduced rows lie in ``[-a, a]^K``).
        """
        epsilon = self._check_privacy(needs_delta=False)[0]
        settings = self._check_settings()
        blocked = is_dask_array(X) or (isinstance(X, np.ndarray) and X.dtype == np.float32)
        if blocked:  # the box is checked block by block, in the pass of _box_moments
            X = check_rows(X, min_rows=2)
            low, high = check_bounds(self.bounds, X.shape[1])
        else:
            X, low, high = check_data_in_bounds(X, self.bounds, min_rows=2)
        n, m = X.shape
        k = check_n_components(self.n_components, m)
        state = {"n_features_in_": m, "components_": None, "_bound": float(coordinate_bounds((low, high)).max())}
        W = None
        if self.basis is not None:
            W = _check_basis(self.basis, m, k)
            state.update(components_=W.T, _scale=feature_scale(W, (low, high)))
        if self.mode != "unsupervised":
            y = self._check_y(y, n, categorical=self.mode == "gmm")
        if spectrum is not None:
            spectrum = self._check_spectrum(spectrum, m, W)
        if blocked:  # the pass that checks the box, also with a spectrum given
            statistics = self._blocked_statistics(X, W, y, state, (low, high), k)
        if spectrum is not None:
            statistics = spectrum[:k]
        elif not blocked:
            statistics = self._statistics(X, W, y, state, k)
        state["_rng"] = self._make_rng()
        if self.mode == "unsupervised" and W is None:
            self._fit_same_data_pca(state, statistics, n, m, epsilon, (low, high))
        elif self.mode == "unsupervised":
            self._fit_gaussian(state, statistics, n, np.full(k, state["_bound"]), epsilon, settings["mean"])
        elif self.mode == "supervised":
            c = np.append(np.full(k, state["_bound"]), float(self.label_bound))
            self._fit_gaussian(state, statistics, n, c, epsilon, settings["mean"])
        elif self.noise_scale == "corrected":
            self._fit_gmm(state, statistics, n, epsilon, settings)
        else:
            self._fit_gmm_paper(state, statistics, epsilon, settings["mean"])
        if self.noise == "exact":  # the sampler's delta, per statistic: see budget_
            state["budget_"] = with_sampling_delta(state["budget_"], self._exact_draws(state))
        vars(self).update(state)  # all at once, at the end
        return self

    def _exact_draws(self, state) -> dict:
        """Statistic -> the number of exact draws its release made (the shapes of the released model)."""
        if "class_means_" in state:  # Algorithm 3: per class, a k-vector and a triangle (+ a count)
            c, k = state["class_means_"].shape
            second, first = (
                ("second_moments", "sums") if "counts" in state["budget_"] else ("class_covariances", "class_means")
            )
            draws = {first: c * k, second: c * k * (k + 1) // 2}
            return draws | ({"counts": c} if "counts" in state["budget_"] else {})
        if "eigenvalues" in state["budget_"]:  # Algorithm 1 with the data's own PCA: k eigenvalues
            return {"eigenvalues": state["mean_"].size}
        q = state["mean_"].size  # Algorithms 1 and 2: the triangle of a q x q moment (+ a q-vector mean)
        return {"second_moment": q * (q + 1) // 2} | ({"mean": q} if "mean" in state["budget_"] else {})

    def _check_spectrum(self, spectrum, m, W) -> np.ndarray:
        """``spectrum`` of :meth:`fit`, checked (only Algorithm 1 with the data's PCA takes one, of ``M`` values) and
        sorted decreasing."""
        if self.mode != "unsupervised" or W is not None:
            raise ValueError(
                "spectrum is only used by Algorithm 1 with the data's own PCA (mode='unsupervised', basis=None); "
                "leave it None"
            )
        values = check_array(spectrum, ndim=1, name="spectrum", finite=False)
        if not np.all(np.isfinite(values)):
            raise ValueError("spectrum must be finite: pass pca_spectrum(X), which refuses rows whose moments overflow")
        if values.shape != (m,):
            raise ValueError(
                f"spectrum must have one eigenvalue per feature ({m}): pass pca_spectrum(X), got shape {values.shape}"
            )
        return np.sort(values)[::-1]  # its K largest are released, in whatever order it was given

    def _check_settings(self) -> dict:
        """Validate the non-privacy parameters; returns the resolved budget fractions."""
        check_choice(self.mode, "mode", MODES)
        _check_noise_scale(self.noise_scale)
        check_noise(self.noise)
        check_integer(self.n_components, "n_components")
        check_positive(self.label_bound, "label_bound")
        if self.mode in ("supervised", "gmm") and self.basis is None:
            raise ValueError(
                f"mode={self.mode!r} needs an independently derived basis (Proposition 4): pass "
                "basis=lap_pca(...), analyze_gauss_pca(...), public_pca(...) or a projection"
            )
        if self.mode == "gmm":
            if self.n_classes is None:
                raise ValueError("mode='gmm' needs n_classes, the public number of classes")
            if check_integer(self.n_classes, "n_classes") < 2:
                raise ValueError("n_classes must be >= 2 for mode='gmm'")
        elif self.n_classes is not None:
            raise ValueError("n_classes is only used with mode='gmm'; leave it None")
        default_mean = 0.1 if self.mode == "gmm" else 0.0
        mean = check_fraction(default_mean if self.mean_fraction is None else self.mean_fraction, "mean_fraction")
        count = check_fraction(self.count_fraction, "count_fraction")
        counted = self.mode == "gmm" and self.noise_scale == "corrected"
        if mean + (count if counted else 0.0) >= 1:
            raise ValueError("mean_fraction + count_fraction must be < 1 so the covariance gets some budget")
        if self.mode == "gmm" and (mean == 0 or (counted and count == 0)):
            raise ValueError("mode='gmm' releases class sums and counts: mean_fraction and count_fraction must be > 0")
        if self.mode == "unsupervised" and self.basis is None and mean > 0:
            raise ValueError(
                "Algorithm 1 with a data-derived basis releases no mean: set mean_fraction=0 "
                "or pass an independent basis"
            )
        return {"mean": mean, "count": count}

    def _statistics(self, X, W, y, state, k):
        """What the release of each mode needs from the in-memory ``X`` (checked), each a function of sums over rows.

        Algorithm 1 with the data's PCA: its top-``k`` eigenvalues; with a basis, and Algorithm 2: the reduced
        rows' ``(Z^T Z / N, mean of Z)`` (the label last in Algorithm 2); Algorithm 3: ``(class counts, class
        sums, class second-moment sums)``, or with ``noise_scale="paper"`` ``(class sizes, class means, centred
        class covariances)``.
        """
        n = X.shape[0]
        if self.mode == "unsupervised":
            return _spectrum(X)[:k] if W is None else _reduced_moments(X, W / state["_scale"])
        Z = X @ W / state["_scale"]
        if self.mode == "supervised":
            Z = np.column_stack([Z, y])
            return Z.T @ Z / n, Z.mean(axis=0)
        c = self.n_classes
        if self.noise_scale == "corrected":
            onehot = np.eye(c)[y]
            return onehot.sum(axis=0), onehot.T @ Z, [Z[y == j].T @ Z[y == j] for j in range(c)]
        means, covariances = [], []
        for j in range(c):
            Zj = Z[y == j]
            means.append(Zj.mean(axis=0))
            covariances.append((Zj - means[j]).T @ (Zj - means[j]) / len(Zj))
        return np.bincount(y, minlength=c).astype(float), means, covariances

    def _blocked_statistics(self, X, W, y, state, bounds, k):
        """:meth:`_statistics` from one pass of ``_box_moments`` over a float32 or Dask ``X`` (per chunk, summed).

        The pass forms counts, sums and second-moment sums of the rows the mode reduces: ``x_i`` itself
        (Algorithm 1 with the data's PCA; with a basis when ``2 K >= M``, as :func:`_reduced_moments` does),
        ``x_i W / s`` otherwise, with the label appended (Algorithm 2) or per class (Algorithm 3). ``O(N M^2)``
        or ``O(N M K + N K^2)`` flops, one read of ``X``.
        """
        n, m = X.shape
        wide = self.mode == "unsupervised" and W is not None and 2 * k >= m
        if self.mode == "unsupervised" and (W is None or wide):
            basis, scale = None, 1.0
        else:
            basis, scale = (W / state["_scale"], 1.0) if self.mode == "unsupervised" else (W, state["_scale"])
        column_is = {"supervised": "labels", "gmm": "classes"}.get(self.mode)
        statistic = functools.partial(
            _box_moments,
            column_is=column_is,
            low=bounds[0],
            high=bounds[1],
            basis=basis,
            scale=scale,
            n_classes=self.n_classes if self.mode == "gmm" else 1,
        )
        counts, sums, seconds = row_sums(statistic, X, *(() if column_is is None else (y,)))
        if self.mode == "unsupervised" and W is None:
            return np.linalg.eigvalsh(seconds[0] / n / m)[::-1][:k]
        if wide:
            W = W / state["_scale"]
            return W.T @ (seconds[0] / n) @ W, sums[0] / n @ W
        if self.mode != "gmm":
            return seconds[0] / n, sums[0] / n
        if self.noise_scale == "corrected":
            return counts, sums, list(seconds)
        means = [sums[j] / counts[j] for j in range(len(counts))]
        return counts, means, [seconds[j] / counts[j] - np.outer(mu, mu) for j, mu in enumerate(means)]

    def _fit_same_data_pca(self, state, eigenvalues, n, m, epsilon, bounds):
        """Algorithm 1 proper: the noisy top-``k`` eigenvalues of the data's own PCA (Theorem 4), basis kept private."""
        k = eigenvalues.shape[0]
        sens = eigenvalue_sensitivity(k, n, bounds, n_features=m, noise_scale=self.noise_scale)
        _check_range(state["_bound"] ** 2, sens, epsilon)  # eigenvalues of X^T X / (N M) are at most max c_j^2
        noisy = np.atleast_1d(
            laplace_mechanism(eigenvalues, sens, epsilon, random_state=state["_rng"], noise=self.noise)
        )
        state["budget_"] = split_budget(epsilon, 0.0, {"eigenvalues": 1.0})
        state["sensitivity_"] = {"eigenvalues": sens}
        state["mean_"] = np.zeros(k)
        state["covariance_"] = np.diag(np.maximum(noisy, 0.0))

    def _fit_gaussian(self, state, moments, n, c, epsilon, mean_fraction):
        """Algorithms 1 with an independently derived basis (a Gaussian in the reduced coordinates ``X W / s``)
        and 2 (the label as the last coordinate): Laplace noise on the reduced data's moments ``(Z^T Z / n, mean of
        Z)``.

        ``c`` are the coordinate bounds ``|z_j| <= c_j`` of the reduced rows (label included).
        """
        second_moment, mean_z = moments
        k = second_moment.shape[0] - (self.mode == "supervised")
        fractions = {"second_moment": 1.0 - mean_fraction, **({"mean": mean_fraction} if mean_fraction else {})}
        state["budget_"] = split_budget(epsilon, 0.0, fractions)
        if self.noise_scale == "paper" and self.mode == "supervised":
            sens_cov = check_sensitivity((k**2 + 4 * k + 1) * state["_bound"] ** 2 / n)  # Theorem 5 (reconstructed)
        else:
            part = "upper" if self.noise_scale == "corrected" else "full"
            sens_cov = second_moment_l1_sensitivity((-c, c), n, part=part)
        _check_range(c.max() ** 2, sens_cov, state["budget_"]["second_moment"][0])
        if mean_fraction:
            _check_range(c.max(), 2.0 * c.sum() / n, state["budget_"]["mean"][0])
        second = symmetric_laplace_mechanism(
            second_moment, sens_cov, state["budget_"]["second_moment"][0], random_state=state["_rng"], noise=self.noise
        )
        state["sensitivity_"] = {"second_moment": sens_cov}
        mean = np.zeros(second_moment.shape[0])
        if mean_fraction:
            sens_mean = 2.0 * c.sum() / n
            mean = np.clip(
                laplace_mechanism(
                    mean_z, sens_mean, state["budget_"]["mean"][0], random_state=state["_rng"], noise=self.noise
                ),
                -c,
                c,
            )
            state["sensitivity_"]["mean"] = sens_mean
        state["mean_"] = mean
        state["covariance_"] = project_psd(second - np.outer(mean, mean))

    def _fit_gmm(self, state, statistics, n, epsilon, fractions):
        """Algorithm 3, corrected: one joint release of the class counts, class sums and class second-moment sums."""
        class_counts, class_sums, class_seconds = statistics
        k, c = class_sums.shape[1], self.n_classes
        sens = gmm_sensitivities(k, (-state["_bound"], state["_bound"]))
        state["budget_"] = split_budget(
            epsilon,
            0.0,
            {
                "counts": fractions["count"],
                "sums": fractions["mean"],
                "second_moments": 1.0 - fractions["count"] - fractions["mean"],
            },
        )
        a = state["_bound"]
        for name, magnitude in (("counts", n), ("sums", n * a), ("second_moments", n * a * a)):
            _check_range(magnitude, sens[name], state["budget_"][name][0])  # public worst cases
        counts = laplace_mechanism(
            class_counts,
            sens["counts"],
            state["budget_"]["counts"][0],
            random_state=state["_rng"],
            noise=self.noise,
        )
        sums = laplace_mechanism(
            class_sums, sens["sums"], state["budget_"]["sums"][0], random_state=state["_rng"], noise=self.noise
        )
        second = [
            symmetric_laplace_mechanism(
                class_seconds[j],
                sens["second_moments"],
                state["budget_"]["second_moments"][0],
                random_state=state["_rng"],
                noise=self.noise,
            )
            for j in range(c)
        ]
        state["sensitivity_"] = sens
        sizes = np.maximum(counts, 1.0)
        state["class_means_"] = np.clip(sums / sizes[:, None], -state["_bound"], state["_bound"])
        state["class_covariances_"] = np.stack(
            [project_psd(second[j] / sizes[j] - np.outer(mu, mu)) for j, mu in enumerate(state["class_means_"])]
        )
        weights = np.maximum(counts, 0.0)
        state["class_weights_"] = weights / weights.sum() if weights.sum() > 0 else np.full(c, 1.0 / c)

    def _fit_gmm_paper(self, state, statistics, epsilon, mean_fraction):
        """Theorem 6 as stated (reconstructed): per class, noise scaled by the private ``N_c``. Not DP."""
        sizes, class_means, class_covariances = statistics
        k, c, a = class_means[0].shape[0], self.n_classes, state["_bound"]
        state["budget_"] = split_budget(
            epsilon, 0.0, {"class_means": mean_fraction, "class_covariances": 1.0 - mean_fraction}
        )
        state["sensitivity_"] = {"class_means": 2 * k * a / sizes, "class_covariances": k**2 * a**2 / sizes}
        for values in state["sensitivity_"].values():
            check_sensitivity(values.min())  # bounds so narrow that a sensitivity underflows: refused naming them
        means, covariances = [], []
        for j in range(c):
            means.append(
                np.clip(
                    laplace_mechanism(
                        class_means[j],
                        state["sensitivity_"]["class_means"][j],
                        state["budget_"]["class_means"][0],
                        random_state=state["_rng"],
                        noise=self.noise,
                    ),
                    -a,
                    a,
                )
            )
            covariances.append(
                project_psd(
                    symmetric_laplace_mechanism(
                        class_covariances[j],
                        state["sensitivity_"]["class_covariances"][j],
                        state["budget_"]["class_covariances"][0],
                        random_state=state["_rng"],
                        noise=self.noise,
                    )
                )
            )
        state["class_means_"], state["class_covariances_"] = np.array(means), np.stack(covariances)
        state["class_weights_"] = sizes / sizes.sum()

    # -- using the release --------------------------------------------------------------
    def transform(self, X):
        """Features of ``X`` in the release's coordinates (``X W / s``, Lemma 1); needs a public basis."""
        check_is_fitted(self, "budget_")
        if self.components_ is None:
            raise ValueError(
                "Algorithm 1 with a data-derived basis keeps the basis private; transform needs an independent basis"
            )
        X = check_array(X, name="X")
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, the model was fitted on {self.n_features_in_}")
        return check_data_in_bounds(X, self.bounds)[0] @ self.components_.T / self._scale

    def inverse_transform(self, Z):
        """Map release coordinates ``Z`` (n, K) back to the input's units: ``s Z W^+`` (post-processing).

        ``W^+`` is the pseudo-inverse of the public basis (``W^T`` for an orthonormal one), so a row comes
        back as its least-squares preimage in the span of ``W``, exact for rows in that span; rows of
        :meth:`sample` map to synthetic records with the input's features. Needs a public basis: with a
        data-derived one (Algorithm 1 proper) the basis stays private and no map back exists.
        """
        check_is_fitted(self, "budget_")
        if self.components_ is None:
            raise ValueError(
                "Algorithm 1 with a data-derived basis keeps the basis private; inverse_transform needs an "
                "independent basis"
            )
        Z = check_array(Z, ndim=2, name="Z")
        k = self.components_.shape[0]
        if Z.shape[1] != k:
            raise ValueError(f"Z must have {k} columns (n_components), got {Z.shape[1]}")
        return self._scale * Z @ np.linalg.pinv(self.components_.T)

    def sample(self, n_samples):
        """Draw ``n_samples`` synthetic records from the released model (post-processing, no extra budget).

        One draw of Gaussian vectors (per class for "gmm", class sizes multinomial with
        ``class_weights_``, rows shuffled), ``O(n_samples K^2)`` after a ``K x K`` factorisation,
        continuing the generator made in :meth:`fit`.

        Returns
        -------
        Z : ndarray of shape (n_samples, K)
            Records in the release's coordinates (those of :meth:`transform`; map them to the input's
            units with :meth:`inverse_transform`). "unsupervised" returns this array alone.
        y : ndarray of shape (n_samples,)
            Only in the labelled modes, which return the pair ``(Z, y)``: real labels for "supervised",
            class labels for "gmm".
        """
        check_is_fitted(self, "budget_")
        n = check_integer(n_samples, "n_samples", maximum=MAX_SAMPLES)
        rng = self._rng
        if self.mode == "gmm":
            sizes = rng.multinomial(n, self.class_weights_)
            y = np.repeat(np.arange(self.n_classes), sizes)
            Z = np.concatenate(
                [
                    gaussian_draws(self.class_means_[j], self.class_covariances_[j], s, random_state=rng)
                    for j, s in enumerate(sizes)
                ]
            )
            order = rng.permutation(n)
            return Z[order], y[order]
        draws = gaussian_draws(self.mean_, self.covariance_, n, random_state=rng)
        if self.mode == "supervised":
            return draws[:, :-1], draws[:, -1]
        return draws

    # -- validation ---------------------------------------------------------------------
    def _check_y(self, y, n, *, categorical):
        if y is None:
            raise ValueError(f"mode={self.mode!r} needs labels y")
        y = check_array(y, ndim=1, name="y")
        if y.shape[0] != n:
            raise ValueError(f"y has {y.shape[0]} entries but X has {n} rows")
        if not categorical:
            return check_in_box(y, -self.label_bound, self.label_bound, name="y")
        if np.any(y != np.round(y)) or np.any(y < 0) or np.any(y >= self.n_classes):
            raise ValueError(f"y must hold integer class labels in [0, n_classes={self.n_classes})")
        y = y.astype(int)
        empty = np.setdiff1d(np.arange(self.n_classes), y)
        if empty.size and self.noise_scale == "paper":
            # Theorem 6 as stated divides by the private class sizes: not DP, and this refusal
            # reveals that a class is empty. The corrected release handles empty classes.
            raise ValueError(f"no records in {first_few(empty, 'classes')}; noise_scale='paper' needs every class")
        return y


def _check_basis(basis, n_features, n_components) -> np.ndarray:
    W = check_array(basis, ndim=2, name="basis")
    if n_features is not None and W.shape[0] != n_features:
        raise ValueError(f"basis must have one row per feature ({n_features}), got shape {W.shape}")
    if n_components is not None and W.shape[1] != n_components:
        raise ValueError(f"basis must have n_components={n_components} columns, got shape {W.shape}")
    if not np.any(W):
        raise ValueError("basis has only zero columns; pass a basis with nonzero columns")
    return W
