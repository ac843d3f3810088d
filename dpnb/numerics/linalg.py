"""Small linear-algebra helpers for symmetric matrices (noisy covariances, PCA bases)."""

from __future__ import annotations

import functools
from collections.abc import Iterator

import numpy as np
import scipy.linalg
from threadpoolctl import ThreadpoolController

from dpnb.ground.validation import (
    check_array,
    check_choice,
    check_integer,
    check_n_components,
    check_random_state,
    check_square,
)

PARTS = ("upper", "full")  # the entries of a symmetric matrix that noise is drawn on (see triangle)
BLOCK_VALUES = 2**18  # values per block of row_blocks (2 MB of float64: a block and its products stay in cache)
MIN_BLOCK_ROWS = 256  # rows per block at least (keeps the per-block overhead small for wide inputs)
GRAM_ROWS_PER_COLUMN = 8  # rows per block at least, per column, in a pass that adds each block's Gram matrix


@functools.lru_cache(maxsize=1)
def _blas_controller() -> ThreadpoolController:
    return ThreadpoolController()


def one_blas_thread():
    """Context manager: the BLAS libraries loaded at the first call use one thread inside it.

    For many small BLAS calls (batched small eigendecompositions, a Gibbs chain's updates), where
    threads only contend. The libraries are found once and remembered, so an entry sets the limit
    on them directly, where ``threadpool_limits`` would rescan every loaded library each time.
    """
    return _blas_controller().limit(limits=1, user_api="blas")


def block_rows(n_columns: int) -> int:
    """Rows per block of a pass over an ``n x n_columns`` matrix: about ``BLOCK_VALUES`` values, at least
    ``MIN_BLOCK_ROWS`` rows.

    The blocks of a pass that touches each row twice (a compiled check, then a BLAS product; row
    norms, then class sums): a fixed size in bytes rather than in rows keeps the block in cache
    for the second touch at any width, so the pass reads the matrix from memory once; at least
    ``MIN_BLOCK_ROWS`` rows keeps the per-block overhead (one BLAS call, one ``p x p`` sum) small.
    """
    return max(MIN_BLOCK_ROWS, BLOCK_VALUES // max(check_integer(n_columns, "n_columns", minimum=0), 1))


def gram_block_rows(n_columns: int) -> int:
    """Rows per block of a pass that adds each block's Gram matrix ``B^T B``: :func:`block_rows`, but at least
    ``GRAM_ROWS_PER_COLUMN * n_columns``.

    Each block's product costs ``r d^2 / 2`` multiply-adds for ``r`` rows of ``d`` columns, but also writes the
    ``d x d`` result and adds it to the running sum (``d^2`` values each time), and BLAS packs its operands per
    call. With ``r`` not several times ``d`` that per-block work is no longer small against the product, so for
    ``d`` above about 180 the blocks grow past :func:`block_rows`' cache size; a block's second touch (the
    product after the check) then reads memory, which the product's ``O(r d^2)`` arithmetic outweighs. Like
    :func:`block_rows`, the size depends on ``d`` only, so a pass adds the same blocks in the same order on
    every machine.

    Examples
    --------
    >>> gram_block_rows(20) == block_rows(20), gram_block_rows(784)
    (True, 6272)
    """
    n_columns = check_integer(n_columns, "n_columns", minimum=0)
    return max(block_rows(n_columns), GRAM_ROWS_PER_COLUMN * n_columns)


def row_blocks(n_rows: int, n_columns: int) -> Iterator[slice]:
    """Slices of consecutive rows of an ``n_rows x n_columns`` matrix, :func:`block_rows` rows each (last: fewer)."""
    n_rows, step = check_integer(n_rows, "n_rows", minimum=0), block_rows(n_columns)
    return (slice(start, min(start + step, n_rows)) for start in range(0, n_rows, step))


def symmetrize_upper(A) -> np.ndarray:
    """Return the symmetric matrix whose upper triangle (with diagonal) is that of ``A``.

    This is how noise on a symmetric statistic is made symmetric: draw it on the upper
    triangle and mirror it, so that each independent noise coordinate appears once.
    ``A`` may be a stack of square matrices, shape ``(..., d, d)``.
    """
    A = check_array(A, ndim=None, name="A")
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"A must be a square matrix or a stack of them, got shape {A.shape}")
    return np.triu(A) + np.swapaxes(np.triu(A, 1), -1, -2)


def triangle(A, part: str = "upper") -> np.ndarray:
    """The entries of a square matrix (or stack, shape ``(..., d, d)``) that noise is drawn on.

    Parameters
    ----------
    A : array_like of shape (..., d, d)
    part : {"upper", "full"}
        ``"upper"``: the ``d (d + 1) / 2`` entries on and above the diagonal, row by row (what a
        symmetric mechanism perturbs; sensitivities with ``part="upper"`` are norms of this vector).
        ``"full"``: all ``d^2`` entries.

    Returns
    -------
    ndarray of shape (..., d (d + 1) / 2) or (..., d^2)
    """
    A = check_array(A, ndim=None, name="A")
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"A must be a square matrix or a stack of them, got shape {A.shape}")
    if check_choice(part, "part", PARTS) == "full":
        return A.reshape(*A.shape[:-2], -1)
    return A[..., *_upper_indices(A.shape[-1])]


@functools.lru_cache(maxsize=64)
def _upper_indices(d: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.triu_indices(d)``, formed once per ``d`` (sensitivity searches call :func:`triangle` many thousands of
    times on matrices of a few sizes); read-only, as they are shared."""
    rows, cols = np.triu_indices(d)
    rows.flags.writeable = cols.flags.writeable = False
    return rows, cols


def haar_stiefel(n_features: int, n_components: int, size: int | None = None, *, random_state=None) -> np.ndarray:
    """Draw orthonormal frames uniformly (Haar) from the Stiefel manifold ``V_{d,k}``.

    QR of a ``d x k`` standard Gaussian matrix with the signs of ``R``'s diagonal moved into
    ``Q`` (Mezzadri 2007); without the sign fix the law of ``Q`` is not Haar.

    Parameters
    ----------
    n_features, n_components : int
        ``d`` and ``k``, ``1 <= k <= d``.
    size : int or None
        Number of independent frames; None returns one.
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    ndarray of shape (d, k), or (size, d, k)
    """
    d = check_integer(n_features, "n_features")
    k = check_n_components(n_components, d)
    rng = check_random_state(random_state)
    batch = () if size is None else (check_integer(size, "size"),)
    Q, R = np.linalg.qr(rng.standard_normal((*batch, d, k)))
    signs = np.sign(np.diagonal(R, axis1=-2, axis2=-1)).copy()
    signs[signs == 0] = 1.0
    return Q * signs[..., None, :]


def project_psd(A, min_eigenvalue: float = 0.0) -> np.ndarray:
    """Project a symmetric matrix onto ``{S : S >= min_eigenvalue * I}`` in Frobenius norm.

    The nearest such matrix clips the eigenvalues from below (Higham 1988). The input is
    symmetrised first as ``(A + A.T) / 2``. This is post-processing and costs no privacy.
    """
    A = check_square(A)
    if min_eigenvalue < 0:
        raise ValueError(f"min_eigenvalue must be >= 0, got {min_eigenvalue}")
    S = (A + A.T) / 2
    w, V = np.linalg.eigh(S)
    return (V * np.maximum(w, min_eigenvalue)) @ V.T


def top_eigenvectors(A, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` eigenpairs of a symmetric matrix, eigenvalues in decreasing order.

    Returns
    -------
    values : ndarray of shape (k,)
    vectors : ndarray of shape (d, k), orthonormal columns. Each column's sign is fixed so that
        its largest-magnitude entry is positive, which makes results reproducible.
    """
    A = check_square(A)
    d = A.shape[0]
    k = check_n_components(k, d)
    S = (A + A.T) / 2
    if 2 * k <= d:  # the top k only (LAPACK's MRRR, dsyevr): about half the time of a full eigh at d = 784, k <= 64
        w, V = scipy.linalg.eigh(S, subset_by_index=[d - k, d - 1], driver="evr", check_finite=False)
    else:
        w, V = np.linalg.eigh(S)
    order = np.argsort(w)[::-1][:k]
    V = V[:, order]
    signs = np.sign(V[np.argmax(np.abs(V), axis=0), np.arange(k)])
    signs[signs == 0] = 1.0
    return w[order], V * signs


def eigen_coordinate_draws(covariance, n_samples, *, random_state=None) -> np.ndarray:
    """Draws of ``N(0, covariance)`` in the coordinates of its eigenvectors, ``G diag(sqrt(w))``, without the vectors.

    :func:`gaussian_draws` returns ``mean + G diag(sqrt(w)) V^T`` (``G`` standard normal, ``w`` in decreasing
    order); times ``V`` that is ``G diag(sqrt(w))``, which has the same law and the same pairwise distances. Anything
    that sees a sample only through its distances (K-means, silhouettes, nearest neighbours) can take these draws
    instead, at the cost of the eigenvalues alone. Given the same generator, ``G`` is the same matrix as in
    :func:`gaussian_draws` (all ``d`` columns are drawn, so later draws never depend on how many are kept); the
    columns whose eigenvalue is round-off (``<= d eps_mach w_max``; every column when none is positive, i.e. all
    draws are the same point) are dropped, which changes a squared distance by a relative ``d eps_mach`` at most.

    Returns
    -------
    ndarray of shape (n_samples, r), ``r`` the number of eigenvalues kept.
    """
    n = check_integer(n_samples, "n_samples", minimum=0)
    cov = check_square(covariance)
    w = np.linalg.eigvalsh((cov + cov.T) / 2)[::-1]
    G = check_random_state(random_state).standard_normal((n, cov.shape[0]))
    kept = w > max(cov.shape[0] * np.finfo(float).eps * w[0], 0.0)
    return G[:, kept] * np.sqrt(w[kept])


def gaussian_draws(mean, covariance, n_samples, *, random_state=None) -> np.ndarray:
    """``n_samples`` draws from ``N(mean, covariance)`` for a PSD covariance, the same on every machine.

    ``mean + Z diag(sqrt(w)) V^T`` with ``Z`` standard normal and the eigenpairs ``(w, V)`` of
    :func:`top_eigenvectors`, whose signs are fixed (largest entry of each eigenvector
    positive): the law is ``N(mean, covariance)`` whatever the signs, but the realised draws of a
    given generator would otherwise depend on the signs the LAPACK build returns. Singular
    covariances are fine (negative round-off eigenvalues are clipped to 0).
    """
    n = check_integer(n_samples, "n_samples", minimum=0)
    cov = check_array(covariance, name="covariance")
    w, V = top_eigenvectors(cov, cov.shape[0])
    rng = check_random_state(random_state)
    scaled = rng.standard_normal((n, cov.shape[0])) * np.sqrt(np.clip(w, 0, None))
    return np.asarray(mean, dtype=float) + scaled @ V.T
