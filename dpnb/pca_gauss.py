"""PCA-Gauss: PCA coupled with a Gaussian generative model (Chanyaswad, Liu, Mittal 2017).

arXiv 1709.00054 v1/v2, "Coupling Dimensionality Reduction with Generative Model for
Non-Interactive Private Data Release". Data rows ``x`` lie in the box ``[-a, a]^M`` (``a`` is
the public ``bound``); neighbouring datasets differ by *replacing* one row (the paper's
bounded notion, Remark 1); sensitivities are L1 and noise is Laplace (pure epsilon-DP),
except for Analyze-Gauss, which is Gaussian ((epsilon, delta)-DP).

What is implemented, and where it departs from the paper (each departure is derived and
audited in ``notebooks/pca_gauss.md``):

* :func:`second_moment_sensitivity` -- Proposition 3 for the second-moment matrix
  ``(1/N) X^T X``, for per-coordinate bounds and for the upper triangle that symmetric noise
  needs (``((sum c)^2 + sum c^2) / (2N)``, about half the full-matrix value ``(sum c)^2 / N``).
* :func:`eigenvalue_sensitivity` -- Theorem 4 (Algorithm 1): when the PCA basis comes from the
  same data, the released ``K x K`` covariance is ``diag(lambda_1..lambda_K) / M``; by
  Lidskii's inequality its L1 sensitivity is ``min(K, 2) a^2 / N`` (the paper: ``K a^2 / N``).
* :func:`lap_pca` (Section VII), :func:`analyze_gauss_pca` (Dwork et al. 2014, with the
  replace-one sensitivity ``sqrt(2) r^2``), :func:`public_pca`, and
  :func:`gaussian_projection_basis` (the "adaptation of Blocki et al." baseline) give the
  independently derived bases that Algorithms 2 and 3 need.
* :class:`PCAGauss` -- Algorithms 1-3. Algorithm 3 (GMM) is released *jointly* from noisy
  class counts, class sums and class second-moment sums with data-independent noise, because
  the paper's per-class mean/covariance release (Theorem 6) under-states the sensitivity of the
  mean-centred class covariance by a factor of about 4 and lets the noise scale depend on the
  private class sizes.
"""

from __future__ import annotations

import numbers

import numpy as np

from .linalg import project_psd, top_eigenvectors
from .mechanisms import laplace_mechanism, symmetric_gaussian_mechanism, symmetric_laplace_mechanism
from .validation import (check_array, check_epsilon, check_in_box, check_integer, check_n_components,
                         check_positive, check_random_state, check_row_norms)

MODES = ("unsupervised", "supervised", "gmm")


# --------------------------------------------------------------------------------------
# Sensitivities
# --------------------------------------------------------------------------------------
def second_moment_sensitivity(bounds, n_samples, *, triangle: bool = True) -> float:
    """L1 sensitivity of ``(1/N) sum_i x_i x_i^T`` when ``|x_j| <= c_j`` (Proposition 3, corrected form).

    Parameters
    ----------
    bounds : array_like of shape (d,)
        Public bound ``c_j > 0`` on each coordinate of a row.
    n_samples : int
        ``N``, public (bounded, replace-one neighbours).
    triangle : bool
        True: sensitivity of the upper triangle incl. the diagonal, ``((sum c)^2 + sum c^2) / (2N)``
        -- what symmetric noise needs. False: the full matrix, ``(sum c)^2 / N`` (for ``c_j = a``
        this is the paper's ``M^2 a^2 / N``). Both are attained by ``x = c``, ``x' = 0``.
    """
    c = check_array(bounds, ndim=1, name="bounds")
    if np.any(c <= 0):
        raise ValueError("bounds must be > 0 in every coordinate")
    n = check_integer(n_samples, "n_samples")
    s1, s2 = c.sum(), (c ** 2).sum()
    return float((s1 ** 2 + s2) / (2 * n) if triangle else s1 ** 2 / n)


def eigenvalue_sensitivity(n_components, n_samples, bound=1.0) -> float:
    """L1 sensitivity of the top-``K`` eigenvalues of ``(1/(N M)) X^T X`` (Theorem 4, corrected).

    These are the diagonal of Algorithm 1's PCA-induced covariance after the rescaling of
    Lemma 1. Weyl bounds each eigenvalue change by ``a^2 / N``; Lidskii bounds their sum by the
    nuclear norm ``(|x|^2 + |x'|^2) / (N M) <= 2 a^2 / N``. Hence ``min(K, 2) a^2 / N``.
    """
    k = check_integer(n_components, "n_components")
    n = check_integer(n_samples, "n_samples")
    a = check_positive(bound, "bound")
    return float(min(k, 2) * a ** 2 / n)


def gmm_sensitivities(n_components, bound=1.0) -> dict:
    """L1 sensitivities of the joint per-class statistics released by corrected Algorithm 3.

    For rows ``z`` in ``[-a, a]^K`` with a class label, replacing one record (features and label
    may both change) moves: the class-count vector by at most 2; the stacked class sums by at
    most ``2 K a``; the stacked upper triangles of the class second-moment sums by at most
    ``K (K + 1) a^2`` (a record that changes class removes one triangle and adds another).
    None of them depends on the private class sizes.
    """
    k = check_integer(n_components, "n_components")
    a = check_positive(bound, "bound")
    return {"counts": 2.0, "sums": 2.0 * k * a, "second_moments": float(k * (k + 1) * a ** 2)}


# --------------------------------------------------------------------------------------
# Features and independently derived bases
# --------------------------------------------------------------------------------------
def feature_scale(basis) -> float:
    """Public constant ``s`` with ``|w_k^T x| / s <= a`` for every ``x`` in ``[-a, a]^M`` (Lemma 1).

    ``s = max_k ||w_k||_1`` is the exact range of the projected features over the box; for unit
    columns it is at most ``sqrt(M)``, the bound of Lemma 1 (Cauchy-Schwarz). It depends only on
    the basis, so it is data-independent whenever the basis is.
    """
    W = check_array(basis, ndim=2, name="basis")
    scale = float(np.abs(W).sum(axis=0).max())
    if scale == 0:
        raise ValueError("basis has only zero columns; pass a basis with nonzero columns")
    return scale


def reduce_features(X, basis, *, bound=1.0) -> np.ndarray:
    """Project rows of ``X`` (in ``[-a, a]^M``, else rejected) onto ``basis`` and rescale into ``[-a, a]^K``."""
    a = check_positive(bound, "bound")
    X = check_in_box(check_array(X, name="X"), -a, a)
    W = _check_basis(basis, X.shape[1], None)
    return X @ W / feature_scale(W)


def lap_pca(X, n_components, epsilon, *, bound=1.0, random_state=None) -> np.ndarray:
    """LapPCA (Section VII): top-``K`` eigenvectors of a Laplace-noised second-moment matrix.

    Steps: ``C = X^T X / N`` (Eq. 2, data assumed centred about the public origin), symmetric
    Laplace noise with the upper-triangle sensitivity ``M (M + 1) a^2 / (2 N)``
    (:func:`second_moment_sensitivity`), then the top-``K`` *eigen*vectors (the paper says "SVD";
    singular vectors of a noisy indefinite matrix can pick a large negative eigenvalue instead).
    epsilon-DP. Rows outside ``[-a, a]^M`` are rejected.

    Returns
    -------
    ndarray of shape (M, K), orthonormal columns.
    """
    a = check_positive(bound, "bound")
    X = check_in_box(check_array(X, name="X", min_rows=1), -a, a)
    n, m = X.shape
    k = check_n_components(n_components, m)
    sens = second_moment_sensitivity(np.full(m, a), n)
    noisy = symmetric_laplace_mechanism(X.T @ X / n, sens, epsilon, random_state=random_state)
    return top_eigenvectors(noisy, k)[1]


def analyze_gauss_pca(X, n_components, epsilon, delta, *, radius=1.0, calibration="analytic",
                      random_state=None) -> np.ndarray:
    """Analyze-Gauss PCA (Dwork, Talwar, Thakurta, Zhang 2014): symmetric Gaussian noise on ``X^T X``.

    Rows must have L2 norm ``<= radius`` (rejected otherwise). Under replace-one neighbours the
    upper triangle of ``x x^T - x' x'^T`` has L2 norm at most ``sqrt(2) r^2`` (attained by two
    orthogonal rows of norm ``r``); the original paper's ``1`` is the add/remove-one value.
    (epsilon, delta)-DP; ``calibration="classic"`` is refused for epsilon >= 1.

    Returns
    -------
    ndarray of shape (M, K), orthonormal columns.
    """
    r = check_positive(radius, "radius")
    X = check_row_norms(check_array(X, name="X"), r)
    k = check_n_components(n_components, X.shape[1])
    noisy = symmetric_gaussian_mechanism(X.T @ X, np.sqrt(2.0) * r ** 2, epsilon, delta,
                                         calibration=calibration, random_state=random_state)
    return top_eigenvectors(noisy, k)[1]


def public_pca(X_public, n_components) -> np.ndarray:
    """PubPCA: top-``K`` eigenvectors of the second moment of public data (no privacy cost).

    Only valid when ``X_public`` is genuinely public, or a part of the data set aside at random
    before release (parallel composition: its rows are then not protected by the release).
    """
    X = check_array(X_public, name="X_public", min_rows=2)
    k = check_n_components(n_components, X.shape[1])
    return top_eigenvectors(X.T @ X / X.shape[0], k)[1]


def gaussian_projection_basis(n_features, n_components, *, random_state=None) -> np.ndarray:
    """i.i.d. N(0, 1) ``M x K`` matrix: the paper's "adaptation of Blocki et al." (Section VIII-B4).

    Data-independent, so it costs no privacy; :func:`feature_scale` rescales the projected
    features into the box.
    """
    m = check_integer(n_features, "n_features")
    k = check_n_components(n_components, m)
    return check_random_state(random_state).standard_normal((m, k))


# --------------------------------------------------------------------------------------
# Algorithms 1-3
# --------------------------------------------------------------------------------------
class PCAGauss:
    """PCA-Gauss Algorithms 1-3: a differentially private Gaussian (mixture) model in a PCA space.

    Parameters
    ----------
    n_components : int
        ``K``, the reduced dimension.
    epsilon : float
        Budget of this release (the basis's own budget, if any, is separate: serial composition).
    mode : {"unsupervised", "supervised", "gmm"}
        Algorithm 1, 2 or 3.
    basis : array_like of shape (M, K), optional
        An independently derived basis (:func:`lap_pca`, :func:`analyze_gauss_pca`,
        :func:`public_pca`, :func:`gaussian_projection_basis`, or the identity for "no
        reduction"). Required for "supervised" and "gmm". For "unsupervised", None means
        Algorithm 1 proper: PCA of the same data, releasing only the noisy top-``K`` eigenvalues
        (Theorem 4, with :func:`eigenvalue_sensitivity`); the basis itself is *not* released,
        so samples live in the private PCA coordinates and :meth:`transform` is unavailable.
    bound : float
        Public ``a``: rows of ``X`` must lie in ``[-a, a]^M`` (rejected otherwise).
    label_bound : float
        Public ``b`` for "supervised": ``y`` must lie in ``[-b, b]`` (rejected otherwise).
    n_classes : int
        Public number of classes for "gmm"; labels must be integers in ``[0, n_classes)``.
    mean_fraction : float, optional
        Share of ``epsilon`` spent on the mean (class sums for "gmm"). Default: 0 for
        "unsupervised" and "supervised" (the paper's zero-mean model, data assumed centred
        about the public origin), 0.1 for "gmm" (the paper's split). Must be 0 for Algorithm 1
        with a data-derived basis (a mean in a data-dependent basis has no O(1/N) sensitivity).
    count_fraction : float
        Share of ``epsilon`` spent on the class counts ("gmm" only).
    random_state : None, int, SeedSequence or Generator

    Attributes
    ----------
    budget_ : dict
        epsilon spent per released statistic; the values sum to ``epsilon``.
    sensitivities_ : dict
        L1 sensitivity used for each released statistic.
    mean_, covariance_ : ndarray
        The private model ("unsupervised"/"supervised"; for "supervised" the label is the last
        coordinate).
    class_weights_, class_means_, class_covariances_ : ndarray
        The private mixture ("gmm").
    """

    def __init__(self, n_components, epsilon, *, mode="unsupervised", basis=None, bound=1.0,
                 label_bound=1.0, n_classes=None, mean_fraction=None, count_fraction=0.05,
                 random_state=None):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        self.n_components = check_integer(n_components, "n_components")
        self.epsilon = check_epsilon(epsilon)
        self.mode = mode
        self.bound = check_positive(bound, "bound")
        self.label_bound = check_positive(label_bound, "label_bound")
        self.basis = None if basis is None else _check_basis(basis, None, self.n_components)
        if mode in ("supervised", "gmm") and self.basis is None:
            raise ValueError(f"mode={mode!r} needs an independently derived basis (Proposition 4): pass "
                             "basis=lap_pca(...), analyze_gauss_pca(...), public_pca(...) or a projection")
        if mode == "gmm":
            self.n_classes = check_integer(n_classes, "n_classes")
            if self.n_classes < 2:
                raise ValueError("n_classes must be >= 2 for mode='gmm'")
        elif n_classes is not None:
            raise ValueError("n_classes is only used with mode='gmm'")
        default_mean = 0.1 if mode == "gmm" else 0.0
        self.mean_fraction = _check_fraction(default_mean if mean_fraction is None else mean_fraction,
                                             "mean_fraction")
        self.count_fraction = _check_fraction(count_fraction, "count_fraction")
        used = self.mean_fraction + (self.count_fraction if mode == "gmm" else 0.0)
        if used >= 1:
            raise ValueError("mean_fraction + count_fraction must be < 1 so the covariance gets some budget")
        if mode == "gmm" and (self.mean_fraction == 0 or self.count_fraction == 0):
            raise ValueError("mode='gmm' releases class sums and counts: mean_fraction and count_fraction must be > 0")
        if mode == "unsupervised" and self.basis is None and self.mean_fraction > 0:
            raise ValueError("Algorithm 1 with a data-derived basis releases no mean: set mean_fraction=0 "
                             "or pass an independent basis")
        self.random_state = random_state
        self._rng = check_random_state(random_state)

    # -- fitting ------------------------------------------------------------------------
    def fit(self, X, y=None):
        """Release the private model of ``X`` (and ``y`` for "supervised"/"gmm"). Returns self."""
        X = check_in_box(check_array(X, name="X", min_rows=2), -self.bound, self.bound)
        n, m = X.shape
        k = check_n_components(self.n_components, m)
        if self.basis is not None and self.basis.shape[0] != m:
            raise ValueError(f"basis has {self.basis.shape[0]} rows but X has {m} features")
        if self.mode == "unsupervised":
            if y is not None:
                raise ValueError("mode='unsupervised' takes no y; use mode='supervised' or 'gmm'")
            if self.basis is None:
                self._fit_same_data_pca(X, k)
            else:
                self._fit_gaussian(self.transform(X), np.full(k, self.bound))
        elif self.mode == "supervised":
            y = self._check_y(y, n, categorical=False)
            b = self.label_bound
            Z = np.column_stack([self.transform(X), y])
            self._fit_gaussian(Z, np.append(np.full(k, self.bound), b))
        else:
            self._fit_gmm(self.transform(X), self._check_y(y, n, categorical=True))
        return self

    def _fit_same_data_pca(self, X, k):
        n, m = X.shape
        eigenvalues = np.linalg.eigvalsh(X.T @ X / (n * m))[::-1][:k]
        sens = eigenvalue_sensitivity(k, n, self.bound)
        noisy = np.atleast_1d(laplace_mechanism(eigenvalues, sens, self.epsilon, random_state=self._rng))
        self.budget_ = {"eigenvalues": self.epsilon}
        self.sensitivities_ = {"eigenvalues": sens}
        self.mean_ = np.zeros(k)
        self.covariance_ = np.diag(np.maximum(noisy, 0.0))

    def _fit_gaussian(self, Z, bounds):
        n = Z.shape[0]
        eps_mean = self.mean_fraction * self.epsilon
        eps_cov = self.epsilon - eps_mean
        sens_cov = second_moment_sensitivity(bounds, n)
        second = symmetric_laplace_mechanism(Z.T @ Z / n, sens_cov, eps_cov, random_state=self._rng)
        self.budget_ = {"second_moment": eps_cov}
        self.sensitivities_ = {"second_moment": sens_cov}
        mean = np.zeros(Z.shape[1])
        if eps_mean > 0:
            sens_mean = 2.0 * bounds.sum() / n
            mean = np.clip(laplace_mechanism(Z.mean(axis=0), sens_mean, eps_mean, random_state=self._rng),
                           -bounds, bounds)
            self.budget_["mean"] = eps_mean
            self.sensitivities_["mean"] = sens_mean
        self.mean_ = mean
        self.covariance_ = project_psd(second - np.outer(mean, mean))

    def _fit_gmm(self, Z, y):
        k, c = Z.shape[1], self.n_classes
        sens = gmm_sensitivities(k, self.bound)
        eps_n = self.count_fraction * self.epsilon
        eps_s = self.mean_fraction * self.epsilon
        eps_q = self.epsilon - eps_n - eps_s
        onehot = np.eye(c)[y]
        counts = laplace_mechanism(onehot.sum(axis=0), sens["counts"], eps_n, random_state=self._rng)
        sums = laplace_mechanism(onehot.T @ Z, sens["sums"], eps_s, random_state=self._rng)
        second = [symmetric_laplace_mechanism(Z[y == j].T @ Z[y == j], sens["second_moments"], eps_q,
                                              random_state=self._rng) for j in range(c)]
        self.budget_ = {"counts": eps_n, "sums": eps_s, "second_moments": eps_q}
        self.sensitivities_ = sens
        sizes = np.maximum(counts, 1.0)
        self.class_means_ = np.clip(sums / sizes[:, None], -self.bound, self.bound)
        self.class_covariances_ = np.stack([project_psd(second[j] / sizes[j] - np.outer(mu, mu))
                                            for j, mu in enumerate(self.class_means_)])
        weights = np.maximum(counts, 0.0)
        self.class_weights_ = weights / weights.sum() if weights.sum() > 0 else np.full(c, 1.0 / c)

    # -- using the release --------------------------------------------------------------
    def transform(self, X):
        """Features of ``X`` in the release's coordinates (``X W / s``, Lemma 1); needs a public basis."""
        if self.basis is None:
            raise ValueError("Algorithm 1 with a data-derived basis keeps the basis private; "
                             "transform needs an independent basis")
        return reduce_features(X, self.basis, bound=self.bound)

    def sample(self, n_samples):
        """Draw synthetic records: ``Z`` ("unsupervised"), ``(Z, y)`` ("supervised", "gmm")."""
        n = check_integer(n_samples, "n_samples")
        if not hasattr(self, "budget_"):
            raise ValueError("call fit(X, y) before sample(n_samples)")
        if self.mode == "gmm":
            sizes = self._rng.multinomial(n, self.class_weights_)
            y = np.repeat(np.arange(self.n_classes), sizes)
            Z = np.concatenate([self._rng.multivariate_normal(self.class_means_[j], self.class_covariances_[j],
                                                              size=s, method="eigh")
                                for j, s in enumerate(sizes)])
            order = self._rng.permutation(n)
            return Z[order], y[order]
        draws = self._rng.multivariate_normal(self.mean_, self.covariance_, size=n, method="eigh")
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
        if empty.size:
            raise ValueError(f"class(es) {empty.tolist()} have no records; drop them or lower n_classes")
        return y


def _check_fraction(value, name) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= float(value) < 1:
        raise ValueError(f"{name} must be a number in [0, 1), got {value!r}")
    return float(value)


def _check_basis(basis, n_features, n_components) -> np.ndarray:
    W = check_array(basis, ndim=2, name="basis")
    if n_features is not None and W.shape[0] != n_features:
        raise ValueError(f"basis must have one row per feature ({n_features}), got shape {W.shape}")
    if n_components is not None and W.shape[1] != n_components:
        raise ValueError(f"basis must have n_components={n_components} columns, got shape {W.shape}")
    feature_scale(W)
    return W
