"""Differentially private PCA: MOD-SULQ and PPCA (Chaudhuri, Sarwate & Sinha, NIPS 2012).

Setting (paper Sec. 2): ``n`` records ``x_i in R^d`` with ``||x_i||_2 <= 1`` (here: the rows of
``X``; the paper stores them as columns), second-moment matrix ``A = X^T X / n`` (uncentred),
neighbouring datasets differ by *replacing* one record, ``n`` is public. Both mechanisms
release a ``d x k`` matrix with orthonormal columns (a ``k``-dimensional subspace).

* **MOD-SULQ** (Algorithm 1, Theorem 1): top-``k`` eigenvectors of ``A + N``, ``N``
  symmetric with i.i.d. ``N(0, sigma^2)`` entries on and above the diagonal. ``sigma`` is the
  paper's ``beta`` or the exact (analytic) Gaussian calibration for the L2 sensitivity
  ``sqrt(2) / n`` of the upper triangle of ``A`` (derived in the notebook).
* **PPCA** (Algorithm 2, Theorem 2): the exponential mechanism with utility
  ``n q_F(V) = n tr(V^T A V)`` (sensitivity 1), i.e. a draw from the matrix Bingham
  distribution with parameter ``(n epsilon / 2) A`` (eq. (8)), sampled with Hoff's Gibbs
  sampler (:mod:`dpnb.bingham`). A finite chain is only approximately exact, see the notebook.

Rows whose norm exceeds the declared ``data_norm`` are **rejected** (ValueError), never
silently clipped: clip or normalise them first (``dpnb.datasets.normalize_rows``).
"""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_limits

from .bingham import bingham_gibbs
from .linalg import symmetrize_upper
from .mechanisms import gaussian_sigma
from .validation import (check_array, check_delta, check_epsilon, check_n_components, check_positive,
                         check_random_state, check_row_norms)

SULQ_CALIBRATIONS = ("paper", "analytic", "classic")


# --------------------------------------------------------------------------------------
# Shared pieces
# --------------------------------------------------------------------------------------
def second_moment(X, data_norm: float = 1.0) -> np.ndarray:
    """``A = X^T X / (n data_norm^2)`` after checking every row has norm <= ``data_norm``.

    Dividing by ``data_norm^2`` puts the data on the paper's scale ``||x|| <= 1``.
    """
    X = check_row_norms(check_array(X, name="X"), data_norm)
    return X.T @ X / (X.shape[0] * float(data_norm) ** 2)


def utility_qf(A, V) -> np.ndarray | float:
    """Utility ``q_F(V) = tr(V^T A V)`` (paper eq. (3)); ``V`` is ``(d, k)`` or ``(m, d, k)``."""
    A = check_array(A, name="A")
    V = check_array(V, ndim=None, name="V")
    if V.ndim not in (2, 3) or V.shape[-2] != A.shape[0]:
        raise ValueError(f"V must have shape (d, k) or (m, d, k) with d = {A.shape[0]}, got {V.shape}")
    q = np.einsum("...dk,de,...ek->...", V, A, V)
    return float(q) if np.ndim(q) == 0 else q


def _top_k(M, k: int) -> np.ndarray:
    """Top-``k`` eigenvectors of a (stack of) symmetric matrices, shape ``(..., d, k)``."""
    with threadpool_limits(limits=1, user_api="blas"):  # batched small eigh: threads only contend
        _, vecs = np.linalg.eigh(M)
    return vecs[..., ::-1][..., :k]


def _check_common(X, k, epsilon, data_norm, n_draws):
    data_norm = check_positive(data_norm, "data_norm")
    A = second_moment(X, data_norm)
    n, d = np.shape(X)
    k = check_n_components(k, d, "k")
    epsilon = check_epsilon(epsilon)
    if isinstance(n_draws, bool) or int(n_draws) != n_draws or n_draws < 1:
        raise ValueError(f"n_draws must be a positive integer, got {n_draws!r}")
    return A, n, d, k, epsilon, int(n_draws)


# --------------------------------------------------------------------------------------
# MOD-SULQ (Algorithm 1)
# --------------------------------------------------------------------------------------
def mod_sulq_beta(d: int, n: int, epsilon, delta) -> float:
    """The paper's noise level (Algorithm 1, step 2; Theorem 1).

    ``beta = (d+1)/(n eps) sqrt(2 log((d^2+d)/(2 sqrt(2 pi) delta))) + 1/(n sqrt(eps))``.
    """
    if isinstance(d, bool) or int(d) != d or d < 1:
        raise ValueError(f"d must be a positive integer, got {d!r}")
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    t = np.sqrt(2 * np.log((d * d + d) / (2 * np.sqrt(2 * np.pi) * delta)))
    return float((d + 1) / (n * epsilon) * t + 1 / (n * np.sqrt(epsilon)))


def upper_triangle_sensitivity(n: int, data_norm: float = 1.0) -> float:
    """L2 sensitivity of the upper triangle (with diagonal) of ``A``: ``sqrt(2) data_norm^2 / n``.

    Attained by replacing ``e_1`` with ``e_2`` (derivation in the notebook).
    """
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    return float(np.sqrt(2.0) * check_positive(data_norm, "data_norm") ** 2 / n)


def mod_sulq_sigma(d: int, n: int, epsilon, delta, calibration: str = "paper") -> float:
    """Noise standard deviation of MOD-SULQ on the scale ``||x|| <= 1``.

    ``"paper"``: :func:`mod_sulq_beta`; ``"analytic"`` (Balle & Wang) and ``"classic"``
    (``epsilon < 1`` only): the Gaussian mechanism for L2 sensitivity ``sqrt(2)/n``.
    """
    if calibration == "paper":
        return mod_sulq_beta(d, n, epsilon, delta)
    if calibration not in SULQ_CALIBRATIONS:
        raise ValueError(f"calibration must be one of {SULQ_CALIBRATIONS}, got {calibration!r}")
    return gaussian_sigma(upper_triangle_sensitivity(n), epsilon, delta, calibration)


def mod_sulq(X, k: int, epsilon, delta, *, calibration: str = "paper", data_norm: float = 1.0,
             n_draws: int = 1, random_state=None) -> np.ndarray:
    """MOD-SULQ (Algorithm 1): ``n_draws`` independent releases, shape ``(n_draws, d, k)``.

    Each draw is one (epsilon, delta)-DP release (Theorem 1 for ``"paper"``); releasing several
    draws of the same data composes. Negative eigenvalues of ``A + N`` are harmless: only its
    eigenvectors are released (no PSD projection is needed because nothing is sampled from it).
    """
    A, n, d, k, epsilon, n_draws = _check_common(X, k, epsilon, data_norm, n_draws)
    sigma = mod_sulq_sigma(d, n, epsilon, delta, calibration)
    rng = check_random_state(random_state)
    noise = symmetrize_upper(rng.normal(0.0, sigma, size=(n_draws, d, d)))
    return _top_k(A + noise, k)


# --------------------------------------------------------------------------------------
# PPCA (Algorithm 2)
# --------------------------------------------------------------------------------------
def ppca(X, k: int, epsilon, *, data_norm: float = 1.0, n_draws: int = 1, n_iter: int = 100,
         return_trace: bool = False, random_state=None):
    """PPCA (Algorithm 2): ``n_draws`` independent chains, shape ``(n_draws, d, k)``.

    Each output is the last state of an ``n_iter``-scan Gibbs chain (Hoff 2009) started
    uniformly on the Stiefel manifold, targeting the matrix Bingham density
    ``exp((n epsilon / 2) tr(V^T A V))`` (eq. (8)); the exact target is epsilon-DP (Theorem 2),
    a finite chain is (epsilon, eta (1 + e^epsilon))-DP if it is within total variation
    ``eta`` of the target for every dataset (see the notebook). Needs ``k < d``.

    Returns
    -------
    V : ndarray, shape (n_draws, d, k)
    trace : ndarray, shape (n_iter, n_draws), only if ``return_trace``: ``q_F`` after each scan.
    """
    A, n, d, k, epsilon, n_draws = _check_common(X, k, epsilon, data_norm, n_draws)
    if k >= d:
        raise ValueError(f"PPCA needs k < d (k = d releases the whole space), got k={k}, d={d}")
    scale = n * epsilon / 2
    out = bingham_gibbs(scale * A, k, n_chains=n_draws, n_iter=n_iter, return_trace=return_trace,
                        random_state=random_state)
    if return_trace:
        return out[0], out[1] / scale
    return out


# --------------------------------------------------------------------------------------
# scikit-learn-like estimators
# --------------------------------------------------------------------------------------
class _PrivateSubspace:
    """Shared ``transform`` for estimators that release a basis ``components_`` (k, d)."""

    components_: np.ndarray

    def transform(self, X) -> np.ndarray:
        """Project ``X`` (n, d) onto the released subspace: ``X @ components_.T`` (post-processing)."""
        if not hasattr(self, "components_"):
            raise ValueError("call fit(X) before transform(X)")
        X = check_array(X, name="X")
        if X.shape[1] != self.components_.shape[1]:
            raise ValueError(f"X must have {self.components_.shape[1]} columns, got {X.shape[1]}")
        return X @ self.components_.T


class ModSULQ(_PrivateSubspace):
    """MOD-SULQ estimator (Algorithm 1), (epsilon, delta)-DP.

    Parameters
    ----------
    n_components : int
    epsilon : float
    delta : float in (0, 1)
    calibration : {"paper", "analytic", "classic"}
        ``"paper"`` uses Theorem 1's ``beta``; ``"analytic"`` the exact Gaussian calibration.
    data_norm : float
        Public bound on every row's L2 norm; rows beyond it are rejected.
    random_state : None, int or Generator

    Attributes
    ----------
    components_ : ndarray, shape (n_components, d)
    sigma_ : float
        Noise standard deviation used, on the scale ``||x|| <= 1``.
    """

    def __init__(self, n_components: int, epsilon: float, delta: float, *, calibration: str = "paper",
                 data_norm: float = 1.0, random_state=None):
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.calibration = calibration
        self.data_norm = data_norm
        self.random_state = random_state

    def fit(self, X, y=None) -> "ModSULQ":
        """Release a private basis of ``X`` (``y`` is ignored)."""
        V = mod_sulq(X, self.n_components, self.epsilon, self.delta, calibration=self.calibration,
                     data_norm=self.data_norm, random_state=self.random_state)
        n, d = np.shape(X)
        self.sigma_ = mod_sulq_sigma(d, n, self.epsilon, self.delta, self.calibration)
        self.components_ = V[0].T
        return self


class PPCA(_PrivateSubspace):
    """PPCA estimator (Algorithm 2), epsilon-DP for the exact Bingham draw.

    Parameters
    ----------
    n_components : int
        ``k < d``.
    epsilon : float
    n_iter : int
        Gibbs scans (see :func:`ppca` for what a finite chain guarantees).
    data_norm : float
        Public bound on every row's L2 norm; rows beyond it are rejected.
    random_state : None, int or Generator

    Attributes
    ----------
    components_ : ndarray, shape (n_components, d)
    trace_ : ndarray, shape (n_iter,)
        ``q_F`` after each Gibbs scan (a diagnostic; it is computed from the private data and
        must not be released).
    """

    def __init__(self, n_components: int, epsilon: float, *, n_iter: int = 100, data_norm: float = 1.0,
                 random_state=None):
        self.n_components = n_components
        self.epsilon = epsilon
        self.n_iter = n_iter
        self.data_norm = data_norm
        self.random_state = random_state

    def fit(self, X, y=None) -> "PPCA":
        """Release a private basis of ``X`` (``y`` is ignored)."""
        V, trace = ppca(X, self.n_components, self.epsilon, data_norm=self.data_norm, n_iter=self.n_iter,
                        return_trace=True, random_state=self.random_state)
        self.components_ = V[0].T
        self.trace_ = trace[:, 0]
        return self
