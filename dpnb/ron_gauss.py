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
"supervised"``) are clipped to the public range ``[-label_range, label_range]``. In ``mode="gmm"``
the class sizes ``n_c`` are treated as public (paper Section 4.2.3.3): the guarantee covers
neighbours that keep each record's label; a change of label is not protected at all, since
``n_c`` are used exactly (see :attr:`RONGauss.class_counts_`).

Corrections to the paper (derived and audited in ``notebooks/ron_gauss.md``)
---------------------------------------------------------------------------
* Lemma 4 (``2 sqrt(p) / n``) uses ``||A||_1 <= sqrt(p) ||A||_F`` for a ``p x p`` matrix, which
  only holds with ``p`` in place of ``sqrt(p)``. The module adds noise on the upper triangle
  (mirrored) with the upper-triangle L1 sensitivity ``sqrt(p (p + 3) / 2) / n``
  (:func:`covariance_sensitivity`). Lemma 5 inherits the same correction.
* Algorithm 2 as written (QR of a matrix of i.i.d. ``U[0, 1]`` entries, no sign correction) does
  not give Haar-distributed frames; ``projection="haar"`` (default) uses the QR of a Gaussian
  matrix with the signs of ``diag(R)`` fixed (Mezzadri 2007). ``"paper"`` keeps the original.
"""

from __future__ import annotations

import numbers

import numpy as np

from .linalg import project_psd
from .mechanisms import laplace_mechanism, symmetric_laplace_mechanism
from .validation import (check_array, check_epsilon, check_integer, check_n_components,
                         check_positive, check_random_state)

MODES = ("unsupervised", "supervised", "gmm")
PROJECTIONS = ("haar", "paper")


def random_orthonormal_projection(m, p, random_state=None, method="haar") -> np.ndarray:
    """An ``m x p`` matrix ``W`` with ``W^T W = I_p`` (paper Algorithm 2), drawn independently of data.

    Parameters
    ----------
    m, p : int
        Original and projected dimensions, ``1 <= p <= m``.
    random_state : None, int, SeedSequence or Generator
    method : {"haar", "paper"}
        ``"haar"``: reduced QR of an ``m x p`` standard Gaussian matrix, each column multiplied by
        the sign of the matching diagonal entry of ``R``; ``W`` is then uniform (Haar) on the
        Stiefel manifold, the law Meckes's theorem (paper Theorem 2) is stated for.
        ``"paper"``: Algorithm 2 verbatim, the first ``p`` columns of ``Q`` from the QR of an
        ``m x m`` matrix of i.i.d. ``U[0, 1]`` entries; orthonormal but not Haar (its first
        column is close to the all-ones direction).

    Returns
    -------
    ndarray of shape (m, p)
    """
    m = check_integer(m, "m (the data dimension)")
    p = check_n_components(p, m, name="p")
    if method not in PROJECTIONS:
        raise ValueError(f"method must be one of {PROJECTIONS}, got {method!r}")
    rng = check_random_state(random_state)
    if method == "paper":
        Q, _ = np.linalg.qr(rng.random((m, m)))
        return Q[:, :p]
    Q, R = np.linalg.qr(rng.standard_normal((m, p)))
    signs = np.sign(np.diag(R))
    signs[signs == 0] = 1.0
    return Q * signs


def unit_rows(X) -> np.ndarray:
    """Scale every row to unit L2 norm (Algorithm 1, steps 1 and 4); all-zero rows stay zero."""
    X = check_array(X, ndim=2)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return np.divide(X, norms, out=np.zeros_like(X), where=norms > 0)


def mean_sensitivity(m, n) -> float:
    """L1 sensitivity ``2 sqrt(m) / n`` of the mean of ``n`` rows of norm <= 1 in R^m (Lemma 2; tight)."""
    return 2.0 * np.sqrt(check_positive(m, "m")) / check_positive(n, "n")


def covariance_sensitivity(p, n, label_range=None, *, part="upper", published=False) -> float:
    """L1 sensitivity of the second-moment matrix ``(1/n) sum z_i z_i^T`` (Eq. 2, or Eq. 3 with a label).

    Rows are ``z_i = x_i`` (``label_range`` None) or ``z_i = (x_i, y_i)`` with ``||x_i||_2 <= 1``
    in R^p and ``|y_i| <= label_range``; neighbours differ in one row.

    Parameters
    ----------
    p : int
        Projected dimension.
    n : int
        Number of rows (public).
    label_range : float, optional
        The label bound ``a`` of Lemma 5.
    part : {"upper", "full"}
        ``"upper"``: the upper triangle with the diagonal, as a vector (what mirrored noise
        needs): ``sqrt(p (p + 3) / 2) + 2 a sqrt(p) + a^2``, over ``n``.
        ``"full"``: every entry (i.i.d. noise on all entries, as the paper adds it):
        ``sqrt(2) p + 4 a sqrt(p) + a^2``, over ``n``.
    published : bool
        Return the paper's value instead, ``(2 sqrt(p) + 4 a sqrt(p) + a^2) / n`` (Lemmas 4-5,
        full matrix); it is too small for ``p >= 3``.
    """
    p = check_positive(p, "p")
    n = check_positive(n, "n")
    a = 0.0 if label_range is None else check_positive(label_range, "label_range")
    if part not in ("upper", "full"):
        raise ValueError(f"part must be 'upper' or 'full', got {part!r}")
    if published:
        return (2 * np.sqrt(p) + 4 * a * np.sqrt(p) + a * a) / n
    if part == "upper":
        return (np.sqrt(p * (p + 3) / 2) + 2 * a * np.sqrt(p) + a * a) / n
    return (np.sqrt(2) * p + 4 * a * np.sqrt(p) + a * a) / n


def mle_covariance_sensitivity(p, n, *, published=False) -> float:
    """Full-matrix L1 sensitivity of the mean-centred (MLE) covariance of rows with norm <= 1 (Appendix B).

    Corrected: ``4 sqrt(2) p (n - 1) / n^2`` (same order ``1/n`` as Eq. 2, not ``n`` times
    larger). ``published=True`` gives Lemma 6's ``(2 sqrt(p) + 2 n sqrt(p)) / n``.
    """
    p = check_positive(p, "p")
    n = check_positive(n, "n")
    if published:
        return (2 * np.sqrt(p) + 2 * n * np.sqrt(p)) / n
    return 4 * np.sqrt(2) * p * (n - 1) / n**2


def _gaussian_sample(mean, cov, size, rng) -> np.ndarray:
    """Draws from N(mean, cov) for a PSD ``cov`` (eigendecomposition, so singular ``cov`` is fine)."""
    w, V = np.linalg.eigh(cov)
    return mean + rng.standard_normal((size, cov.shape[0])) @ (V * np.sqrt(np.clip(w, 0, None))).T


class RONGauss:
    """RON-Gauss synthetic-data generator (paper Algorithms 1-5), epsilon-DP.

    Parameters
    ----------
    n_components : int
        Projected dimension ``p`` (``1 <= p <= m``; ``p = m`` is a random rotation, i.e. the
        Gaussian model without dimensionality reduction).
    epsilon : float
        Total budget ``epsilon = epsilon_mu + epsilon_Sigma`` (Theorems 3-5). ``math.inf`` turns
        all noise off: non-private, only for the generative-model demo of Section 6.3.
    mode : {"unsupervised", "supervised", "gmm"}
        Algorithm 3, 4 or 5.
    mean_fraction : float in (0, 1)
        ``epsilon_mu / epsilon``; the paper uses 0.3 (Section 5.2).
    label_range : float
        Public label bound ``a`` (supervised mode only); labels are clipped to ``[-a, a]``.
    reconstruct : bool
        Return samples in R^m as ``W x_tilde`` instead of R^p.
    add_mean : bool
        Add the DP mean back (``W^T mu_dp`` in R^p, ``mu_dp`` in R^m); not for ``"gmm"``, where
        Algorithm 5 always samples around the class means.
    projection : {"haar", "paper"}
        See :func:`random_orthonormal_projection`.
    random_state : None, int, SeedSequence or Generator

    Attributes
    ----------
    components_ : ndarray (m, p)
        The projection ``W``.
    mean_ : ndarray (m,)
        DP mean (unsupervised/supervised).
    covariance_ : ndarray
        DP second-moment matrix after projection onto the PSD cone (what is sampled from).
    class_means_, class_covariances_, classes_, class_counts_ : gmm mode only
        ``class_counts_`` are exact: they are public by assumption.
    epsilon_mean_, epsilon_covariance_ : float
    covariance_sensitivity_ : float
        Upper-triangle L1 sensitivity used (per class in gmm mode: a dict).
    """

    def __init__(self, n_components, epsilon, *, mode="unsupervised", mean_fraction=0.3,
                 label_range=None, reconstruct=False, add_mean=False, projection="haar",
                 random_state=None):
        self.n_components = n_components
        self.epsilon = epsilon
        self.mode = mode
        self.mean_fraction = mean_fraction
        self.label_range = label_range
        self.reconstruct = reconstruct
        self.add_mean = add_mean
        self.projection = projection
        self.random_state = random_state

    # -- validation ---------------------------------------------------------------------
    def _check_params(self):
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")
        if self.projection not in PROJECTIONS:
            raise ValueError(f"projection must be one of {PROJECTIONS}, got {self.projection!r}")
        frac = self.mean_fraction
        if isinstance(frac, bool) or not isinstance(frac, numbers.Real) or not 0 < frac < 1:
            raise ValueError(f"mean_fraction must lie in (0, 1), e.g. 0.3, got {frac!r}")
        if isinstance(self.epsilon, numbers.Real) and not isinstance(self.epsilon, bool) \
                and self.epsilon == np.inf:
            self.private_ = False
            self.epsilon_mean_ = self.epsilon_covariance_ = np.inf
        else:
            eps = check_epsilon(self.epsilon)
            self.private_ = True
            self.epsilon_mean_, self.epsilon_covariance_ = frac * eps, (1 - frac) * eps
        if self.mode == "supervised":
            if self.label_range is None:
                raise ValueError("mode='supervised' needs label_range (the public bound a with y in [-a, a])")
            check_positive(self.label_range, "label_range")
        elif self.label_range is not None:
            raise ValueError("label_range is only used with mode='supervised'; leave it None")
        if self.add_mean and self.mode == "gmm":
            raise ValueError("add_mean does not apply to mode='gmm' (Algorithm 5 always uses the class means)")

    # -- Algorithm 1 ----------------------------------------------------------------------
    def _dp_mean(self, X_unit, rng):
        """Laplace DP mean of unit-norm rows, sensitivity 2 sqrt(m)/n (Lemma 2)."""
        n, m = X_unit.shape
        mu = X_unit.mean(axis=0)
        if not self.private_:
            return mu
        return laplace_mechanism(mu, mean_sensitivity(m, n), self.epsilon_mean_, random_state=rng)

    def _dp_second_moment(self, Z, label_range, rng):
        """(1/n) Z^T Z with mirrored Laplace noise (corrected Lemma 4/5), then PSD projection."""
        n, q = Z.shape
        p = q if label_range is None else q - 1
        S = Z.T @ Z / n
        sens = covariance_sensitivity(p, n, label_range)
        if self.private_:
            S = symmetric_laplace_mechanism(S, sens, self.epsilon_covariance_, random_state=rng)
        return project_psd(S), sens

    # -- public API -----------------------------------------------------------------------
    def fit(self, X, y=None):
        """Fit the DP model to ``X`` (n x m; any finite values, rows are normalised inside).

        ``y``: required for ``"supervised"`` (real labels, clipped to ``[-label_range,
        label_range]``) and ``"gmm"`` (class labels; each class needs >= 1 row); must be
        None for ``"unsupervised"``.
        """
        self._check_params()
        X = check_array(X, ndim=2)
        n, m = X.shape
        p = check_n_components(self.n_components, m)
        rng = check_random_state(self.random_state)
        if self.mode == "unsupervised" and y is not None:
            raise ValueError("mode='unsupervised' takes no y; use mode='supervised' or 'gmm'")
        if self.mode != "unsupervised":
            if y is None:
                raise ValueError(f"mode={self.mode!r} needs labels y")
            y = np.asarray(y)
            if y.ndim != 1 or y.shape[0] != n:
                raise ValueError(f"y must be 1-dimensional with {n} entries (one per row of X), got shape {y.shape}")
        self.n_features_in_ = m
        self._rng = rng  # sample() continues this stream
        self.components_ = random_orthonormal_projection(m, p, rng, method=self.projection)
        X_unit = unit_rows(X)
        if self.mode == "gmm":
            self._fit_gmm(X_unit, y, rng)
            return self
        self.mean_ = self._dp_mean(X_unit, rng)
        Xt = self._center_project(X_unit)
        if self.mode == "supervised":
            a = float(self.label_range)
            yc = np.clip(check_array(y, ndim=1, name="y"), -a, a)
            self.covariance_, self.covariance_sensitivity_ = self._dp_second_moment(
                np.column_stack([Xt, yc]), a, rng)
        else:
            self.covariance_, self.covariance_sensitivity_ = self._dp_second_moment(Xt, None, rng)
        return self

    def _fit_gmm(self, X_unit, y, rng):
        """Algorithm 5: per class c, DP mean and DP second moment of its own rows (n_c public)."""
        classes, counts = np.unique(y, return_counts=True)
        if classes.size < 1:
            raise ValueError("y has no classes")
        self.classes_, self.class_counts_ = classes, counts
        self.class_means_, self.class_covariances_, self.covariance_sensitivity_ = [], [], {}
        for c in classes:
            Xc = X_unit[y == c]
            mu = self._dp_mean(Xc, rng)
            cov, sens = self._dp_second_moment(self._center_project(Xc, mu), None, rng)
            self.class_means_.append(mu)
            self.class_covariances_.append(cov)
            self.covariance_sensitivity_[c] = sens
        self.class_means_ = np.array(self.class_means_)

    def _center_project(self, X_unit, mu=None):
        """Algorithm 1 steps 3-4 and Algorithm 2: centre with the DP mean, re-normalise, project."""
        mu = self.mean_ if mu is None else mu
        return unit_rows(X_unit - mu) @ self.components_

    def _check_fitted(self):
        if not hasattr(self, "components_"):
            raise ValueError("this RONGauss is not fitted yet; call fit(X[, y]) first")

    def _output_space(self, Z):
        """Map projected rows to the released space: + W^T mu (add_mean), W . (reconstruct)."""
        W = self.components_
        if self.reconstruct:
            Z = Z @ W.T
            return Z + self.mean_ if self.add_mean else Z
        return Z + self.mean_ @ W if self.add_mean else Z

    def sample(self, n_samples):
        """Draw synthetic rows from the fitted DP Gaussian model (post-processing, no extra budget).

        Returns
        -------
        X_syn : ndarray (n_samples, p), or (n_samples, m) with ``reconstruct=True``
            For ``"unsupervised"``.
        (X_syn, y_syn) : for ``"supervised"`` (real labels, not clipped) and ``"gmm"`` (class
            labels; class sizes multinomial with the public proportions ``n_c / n``; rows
            shuffled).
        """
        self._check_fitted()
        n_samples = check_integer(n_samples, "n_samples")
        rng = self._rng
        p = self.components_.shape[1]
        if self.mode == "unsupervised":
            return self._output_space(_gaussian_sample(np.zeros(p), self.covariance_, n_samples, rng))
        if self.mode == "supervised":
            Z = _gaussian_sample(np.zeros(p + 1), self.covariance_, n_samples, rng)
            return self._output_space(Z[:, :p]), Z[:, p]
        sizes = rng.multinomial(n_samples, self.class_counts_ / self.class_counts_.sum())
        parts = [_gaussian_sample(mu @ self.components_, cov, k, rng)
                 for mu, cov, k in zip(self.class_means_, self.class_covariances_, sizes)]
        order = rng.permutation(n_samples)
        X_syn = np.concatenate(parts)[order]
        y_syn = np.repeat(self.classes_, sizes)[order]
        return (X_syn @ self.components_.T if self.reconstruct else X_syn), y_syn

    def transform(self, X):
        """Map real rows (e.g. a test set) to the space the synthetic rows live in.

        Uses only released quantities (``mu_dp``, ``W``), so it costs no budget. Unsupervised
        and supervised: pre-normalise, centre with ``mu_dp``, re-normalise, project, then the
        ``add_mean`` / ``reconstruct`` options. gmm: pre-normalise and project (Algorithm 5
        samples around ``W^T mu_c``, i.e. uncentred coordinates).
        """
        self._check_fitted()
        X = check_array(X, ndim=2)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} columns but the model was fitted on {self.n_features_in_}")
        X_unit = unit_rows(X)
        if self.mode == "gmm":
            Z = X_unit @ self.components_
            return Z @ self.components_.T if self.reconstruct else Z
        return self._output_space(self._center_project(X_unit))
