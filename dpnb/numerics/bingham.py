"""Sampling the vector and matrix Bingham distributions (Hoff 2009 Gibbs sampler).

The matrix Bingham distribution on the Stiefel manifold
``V_{d,k} = {V in R^{d x k} : V^T V = I_k}`` has density

    p(V) proportional to exp(tr(V^T B V))

with respect to the uniform (Haar) measure, for a symmetric ``d x d`` parameter ``B``. It is the
output distribution of PPCA (Chaudhuri, Sarwate & Sinha 2012, eq. (8) and Algorithm 2) with
``B = (n epsilon / 2) A``. Exact sampling is hard for ``k > 1``; Hoff (2009, JCGS 18(2),
Sec. 2-3) gives a Gibbs sampler:

* **column update** (:func:`bingham_gibbs`): given the other columns ``V_{-r}``, the column
  ``v_r`` lies on the unit sphere of their orthogonal complement, spanned by an orthonormal
  ``N`` (``d x q``, ``q = d - k + 1``); writing ``v_r = N z`` the conditional of ``z`` is the
  *vector* Bingham distribution with parameter ``N^T B N``.
* **vector update**, ``column="scan"`` (``_vector_scan``, Hoff's): in the eigenbasis of that parameter, with
  eigenvalues ``l``, the density of ``y`` on the sphere is ``exp(sum_j l_j y_j^2)``. Each
  coordinate is redrawn given the *direction* of the others: with ``theta = y_i^2``,
  ``p(theta | rest) ~ theta^{-1/2} (1 - theta)^{(q-3)/2} exp(a theta)`` on ``(0, 1)``,
  ``a = l_i - sum_{j != i} l_j y_j^2 / (1 - y_i^2)``, and the sign of ``y_i`` is a fair coin.
  ``theta`` is drawn by rejection (``_sample_theta``).
* **exact column draw**, ``column="exact"``: the column's conditional is a vector Bingham, for
  which an exact sampler exists (Kent, Ganeiber & Mardia 2013, ``_acg_draw``); each column is
  then drawn exactly from its conditional, with no coordinate loop.

The complement's eigenbasis is the eigenbasis of ``P B P + s U U^T`` (``U = V_{-r}``,
``P = I - U U^T``, ``s`` below the spectrum of ``B``), whose ``k - 1`` smallest eigenvectors span
``U``: no QR and no ``N^T B N`` product are needed, one ``d x d`` ``eigh`` per column update of
Hoff's scan. The exact column draw (``_complement_acg_draw``) needs no eigendecomposition at all:
a Rayleigh-Ritz estimate of the compression's largest eigenvalue on ``B``'s top ``k + 3``
eigenvectors projected off ``U`` (``_ritz_top``), which the envelope needs only to within ``b / 2``
below, and one Cholesky factorisation of ``d x d`` per update, which proves that; if it does not,
an upper bound of the eigenvalue (LAPACK's top eigenvalue of ``P B P + s U U^T`` plus a bound on
its rounding error for ``d <= 256``, ``_lapack_top``; above, bisection on an inertia count in the
fixed eigenbasis of ``B``, ``_compression_top``, ``O(d k^2)`` per step). All of it but the random
draws is compiled, calling BLAS and LAPACK from numba (``_complement_kernel``, ``_ritz_kernel``,
``_envelope_kernel``, the rejection round ``_acg_proposals``), with the same operations in the same
order as the NumPy and SciPy calls they stand for, so the draws are bit-identical to theirs: one update
costs one ``d x d`` Cholesky factorisation and a few ``d x (k + 4)`` products, ``O(d^3 / 3 + d k^2)``
(``make benchmark`` times it, ``benchmarks/ppca_peers.py``). Everything is vectorised over
independent chains.

The module also holds an exact sampler for ``k = 1`` (:func:`vector_bingham_exact`, rejection
from an angular central Gaussian, Kent, Ganeiber & Mardia 2013), the exact references used to
validate the Gibbs sampler on small ``d`` (:func:`sphere_second_moments`,
:func:`circle_angle_density`) and chain diagnostics (:func:`autocorrelation`,
:func:`effective_sample_size`).
"""

from __future__ import annotations

import functools

import llvmlite.binding
import numba
import numpy as np
from numba.extending import get_cython_function_address
from scipy.linalg import get_lapack_funcs
from scipy.special import betaln, gammainc, gammaincinv, gammaln

from dpnb.ground.validation import (
    check_array,
    check_choice,
    check_integer,
    check_n_components,
    check_random_state,
    check_square,
)
from dpnb.numerics.linalg import haar_stiefel, one_blas_thread

_MAX_REJECTION_ROUNDS = 10_000
COLUMN_UPDATES = ("scan", "exact")
MAX_CONCENTRATION = 2.0**32  # the largest eigenvalue spread of B the Gibbs sampler takes (see bingham_gibbs)
_MAX_SPREAD_EXACT = 1e300  # vector_bingham_exact: beyond, the envelope's 2 t / b overflows float64


# --------------------------------------------------------------------------------------
# Vector Bingham: the one-coordinate conditional and one Gibbs scan
# --------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=64)
def _beta_grid(kappa: float):
    """Candidate shapes ``g`` of the Beta(1/2, g) envelope and ``log B(1/2, g)``."""
    g = kappa * np.geomspace(1e-3, 1.0, 16)
    return g, betaln(0.5, g)


def _sample_theta(a, kappa: float, rng: np.random.Generator):
    """Draw ``theta`` with density proportional to ``theta^{-1/2} (1-theta)^{kappa-1} e^{a theta}``.

    Vectorised over the array ``a``; ``kappa = (q - 1) / 2 >= 1/2``. Returns ``(theta,
    1 - theta)``, both computed without cancellation. Every envelope below dominates the
    target, so each is an exact rejection sampler; for each entry the one with the smallest
    total mass (the highest acceptance rate) is used:

    * ``Beta(1/2, g)`` for ``theta``, ``0 < g <= kappa`` (Hoff 2009 uses
      ``g = max(1 / (1 + log(2 + a)), kappa - a)``; we pick the best ``g`` on a grid), accepted
      with ``(1-theta)^{kappa-g} e^{a theta - c}``, ``c`` the maximum of the exponent;
    * ``a < 0``: ``Gamma(1/2, rate -a)`` truncated to ``(0, 1)``, accepted with
      ``(1 - theta)^{kappa - 1}`` (needs ``kappa >= 1``);
    * ``a > 2 kappa + 2``: in ``phi = 1 - theta`` the target is
      ``phi^{kappa-1} (1-phi)^{-1/2} e^{-a phi}``; a truncated ``Gamma(kappa, rate a)`` on
      ``(0, s0]`` times ``(1 - s0)^{-1/2}`` plus ``M (1-phi)^{-1/2}`` on ``(s0, 1)``;
    * ``kappa = 1/2`` and ``a < 0`` (the circle) is reflected, ``theta -> 1 - theta``, ``a -> -a``.

    The last two keep the acceptance rate near 1 for the strongly concentrated conditionals
    PPCA produces at large ``n epsilon``, where Hoff's Beta envelope alone accepts rarely.
    """
    a = np.asarray(a, dtype=float)
    reflect = (a < 0) & (kappa == 0.5)
    a = np.where(reflect, -a, a)
    abs_a = np.abs(a)
    # log total mass of each candidate envelope (unnormalised target theta^{-1/2}(1-theta)^{kappa-1}e^{a theta})
    g_grid, betaln_grid = _beta_grid(kappa)
    e = kappa - g_grid[:, None]
    ap = np.maximum(a, 0.0)[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.where(e <= 0, ap, np.where(e >= ap, 0.0, ap - e + e * np.log(e / np.where(ap > 0, ap, 1.0))))
    c = np.where(a[None, :] < 0, 0.0, c)  # for a < 0 only g = kappa is valid (c = 0)
    log_mass_beta = betaln_grid[:, None] + c
    log_mass_beta[:-1, a < 0] = np.inf
    best_g = np.argmin(log_mass_beta, axis=0)
    candidates = [log_mass_beta[best_g, np.arange(a.size)]]
    with np.errstate(divide="ignore", invalid="ignore"):  # a = 0 gives inf - inf, discarded by the where
        log_mass_gamma = np.where(
            (a < 0) & (kappa >= 1), gammaln(0.5) - 0.5 * np.log(abs_a) + np.log(gammainc(0.5, abs_a)), np.inf
        )
    candidates.append(log_mass_gamma)
    steep = a > 2 * kappa + 2
    s0 = np.where(steep, np.minimum(0.5, (kappa + 5 * np.sqrt(kappa) + 5) / np.where(steep, a, 1.0)), 0.5)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_w1 = (
            -0.5 * np.log1p(-s0)
            + gammaln(kappa)
            - kappa * np.log(np.where(steep, a, 1.0))
            + np.log(gammainc(kappa, a * s0))
        )
        log_w2 = (kappa - 1) * np.log(s0) - a * s0 + np.log(2.0) + 0.5 * np.log1p(-s0)
        log_mass_mix = np.where(steep, a + np.logaddexp(log_w1, log_w2), np.inf)
    candidates.append(log_mass_mix)
    choice = np.argmin(np.stack(candidates), axis=0)
    g_choice = g_grid[best_g]

    theta = np.empty_like(a)
    phi = np.empty_like(a)
    pending = np.ones(a.shape, dtype=bool)
    for _ in range(_MAX_REJECTION_ROUNDS):
        idx = np.flatnonzero(pending)
        if idx.size == 0:
            break
        th = np.empty(idx.size)
        ph = np.empty(idx.size)
        log_acc = np.empty(idx.size)
        ch = choice[idx]

        sel = ch == 0
        if sel.any():
            aa, g = a[idx[sel]], g_choice[idx[sel]]
            p = rng.beta(g, 0.5)  # 1 - theta ~ Beta(g, 1/2)
            ee = kappa - g
            with np.errstate(divide="ignore", invalid="ignore"):
                logp = np.where(ee > 0, ee * np.log(p), 0.0)
            th[sel], ph[sel] = 1.0 - p, p
            log_acc[sel] = aa * (1.0 - p) + logp - c[best_g[idx[sel]], idx[sel]]

        sel = ch == 1
        if sel.any():
            rate = abs_a[idx[sel]]
            t = np.minimum(gammaincinv(0.5, rng.random(rate.size) * gammainc(0.5, rate)) / rate, 1.0)
            with np.errstate(divide="ignore"):
                log_acc[sel] = (kappa - 1.0) * np.log1p(-t)
            th[sel], ph[sel] = t, 1.0 - t

        sel = ch == 2
        if sel.any():
            j = idx[sel]
            aa, s, w1 = a[j], s0[j], log_w1[j]
            first = np.log(rng.random(j.size)) < w1 - np.logaddexp(w1, log_w2[j])
            u = rng.random(j.size)
            p_first = gammaincinv(kappa, u * gammainc(kappa, aa * s)) / aa
            p_second = 1.0 - (1.0 - s) * rng.random(j.size) ** 2  # 1 - phi ~ density s^{-1/2} on (0, 1-s0)
            p = np.where(first, p_first, p_second)
            with np.errstate(divide="ignore", invalid="ignore"):
                la_first = 0.5 * (np.log1p(-s) - np.log1p(-p))
                la_second = (kappa - 1) * (np.log(p) - np.log(s)) - aa * (p - s)
            log_acc[sel] = np.where(first, la_first, la_second)
            th[sel], ph[sel] = 1.0 - p, p

        accept = np.log(rng.random(idx.size)) < log_acc
        theta[idx[accept]] = th[accept]
        phi[idx[accept]] = ph[accept]
        pending[idx[accept]] = False
    else:  # pragma: no cover - acceptance rates are bounded away from 0 by construction
        raise RuntimeError("rejection sampler for the Bingham conditional did not terminate")
    return np.where(reflect, phi, theta), np.where(reflect, theta, phi)


def _vector_scan(y, lam, rng: np.random.Generator) -> np.ndarray:
    """One systematic Gibbs scan for ``p(y) ~ exp(sum_j lam_j y_j^2)`` on the unit sphere.

    ``y`` and ``lam`` have shape ``(m, q)`` (``m`` independent chains); returns the new ``y``.
    """
    m, q = y.shape
    kappa = (q - 1) / 2.0
    for i in range(q):
        rest = y.copy()
        rest[:, i] = 0.0
        r2 = np.einsum("ij,ij->i", rest, rest)
        degenerate = r2 <= 1e-300  # y = +-e_i exactly: any direction for the rest is equally likely
        if degenerate.any():
            fresh = rng.standard_normal((int(degenerate.sum()), q))
            fresh[:, i] = 0.0
            rest[degenerate] = fresh
            r2 = np.einsum("ij,ij->i", rest, rest)
        a = lam[:, i] - np.einsum("ij,ij->i", lam * rest, rest) / r2
        theta, phi = _sample_theta(a, kappa, rng)
        sign = 2.0 * rng.integers(0, 2, size=m) - 1.0
        y = rest * np.sqrt(phi / r2)[:, None]
        y[:, i] = sign * np.sqrt(theta)
    return y


def acg_shape(t) -> tuple[np.ndarray, np.ndarray]:
    """KGM's envelope constants for ``exp(-sum_i t_i y_i^2)`` on the sphere, ``t >= 0`` with a zero entry.

    ``b`` solves ``sum_i 1 / (b + 2 t_i) = 1`` on ``[1, q]`` (Kent, Ganeiber & Mardia 2013,
    Sec. 4), by Newton's method from ``b = max(1, q - 2 mean(t))``, which increases monotonically to
    the root because the left side is convex and decreasing; the start is below the root by
    Jensen's inequality (``sum_i 1 / (b + 2 t_i) >= q / (b + 2 mean(t))``) and because ``1 / b <= 1``
    at the root. ``log M = -(q - b) / 2 + (q / 2) log(q / b)``. Vectorised over the leading axes of
    ``t`` (shape ``(..., q)``).

    Returns
    -------
    b, log_m : ndarrays of shape ``t.shape[:-1]``
    """
    t = np.asarray(t, dtype=float)
    q = t.shape[-1]
    b = _acg_newton(np.ascontiguousarray(t.reshape(-1, q))).reshape(t.shape[:-1])
    return b, _acg_log_m(q, b)


def _acg_log_m(q: int, b) -> np.ndarray:
    """``log M_b = -(q - b) / 2 + (q / 2) log(q / b)``, the envelope's bound (:func:`acg_shape`), in NumPy
    (numba's ``log`` differs from NumPy's in the last bit for about one value in 4,000)."""
    return -(q - b) / 2 + q / 2 * np.log(q / b)


@numba.njit(cache=True, nogil=True)
def _acg_newton(t):  # pragma: no cover - compiled
    """:func:`acg_shape`'s Newton iteration for each row of ``t`` (shape ``(m, q)``), to a relative step of 1e-13."""
    m, q = t.shape
    b = np.empty(m)
    for i in range(m):
        mean = 0.0
        for j in range(q):
            mean += t[i, j]
        bi = min(max(q - 2.0 * mean / q, 1.0), float(q))
        for _ in range(100):
            s1 = 0.0
            s2 = 0.0
            for j in range(q):
                inv = 1.0 / (bi + 2.0 * t[i, j])
                s1 += inv
                s2 += inv * inv
            step = (s1 - 1.0) / s2
            bi = min(bi + step, float(q))
            if abs(step) <= 1e-13 * bi:
                break
        b[i] = bi
    return b


def _acg_draw(t, rng: np.random.Generator, proposals: int = 4) -> np.ndarray:
    """One exact draw per row of ``t`` (shape ``(m, q)``) from ``exp(-sum_i t_i y_i^2)`` on the sphere.

    Rejection from the angular central Gaussian ``y = z / ||z||``, ``z_i ~ N(0, 1 / omega_i)``,
    ``omega = 1 + 2 t / b``, accepted with ``exp(-y^T T y) (y^T Omega y)^{q/2} / M`` (KGM 2013,
    Sec. 4; the same rule as :func:`vector_bingham_exact`, one draw per parameter row). Each
    round proposes ``proposals`` candidates for every row still pending and keeps the first
    accepted one.
    """
    m, q = t.shape
    b, log_m = acg_shape(t)
    omega = 1.0 + 2.0 * t / b[:, None]
    out = np.empty((m, q))
    pending = np.arange(m)
    for _ in range(_MAX_REJECTION_ROUNDS):
        if pending.size == 0:
            return out
        z = rng.standard_normal((pending.size, proposals, q)) / np.sqrt(omega[pending, None, :])
        y = z / np.linalg.norm(z, axis=2, keepdims=True)
        y2 = y * y
        log_acc = (
            -np.einsum("mpq,mq->mp", y2, t[pending])
            + q / 2 * np.log(np.einsum("mpq,mq->mp", y2, omega[pending]))
            - log_m[pending, None]
        )
        accept = np.log(rng.random((pending.size, proposals))) < log_acc
        done = accept.any(axis=1)
        first = np.argmax(accept, axis=1)
        out[pending[done]] = y[done, first[done]]
        pending = pending[~done]
    raise RuntimeError("angular central Gaussian rejection sampler did not terminate")  # pragma: no cover


# --------------------------------------------------------------------------------------
# Matrix Bingham Gibbs sampler
# --------------------------------------------------------------------------------------
def bingham_gibbs(
    B,
    k: int = 1,
    *,
    n_chains: int = 1,
    n_iter: int = 200,
    initial=None,
    return_trace: bool = False,
    column: str = "scan",
    random_state=None,
):
    """Run ``n_chains`` independent Gibbs chains for the matrix Bingham ``exp(tr(V^T B V))``.

    Hoff (2009), Sec. 2.2-3.1: a systematic scan over the ``k`` columns; column ``r`` is
    redrawn on the unit sphere of the orthogonal complement of the other columns, from its
    vector-Bingham conditional with parameter ``N^T B N`` (module docstring). For ``k = 1`` and
    ``column="scan"`` this is Hoff's vector sampler in the eigenbasis of ``B``.

    Parameters
    ----------
    B : array_like, shape (d, d)
        Symmetric parameter (PPCA uses ``(n epsilon / 2) A``, Chaudhuri et al. eq. (8)).
        Adding a multiple of the identity does not change the distribution.
    k : int
        Number of columns, ``1 <= k <= d - 1``.
    n_chains : int
        Independent chains, run in parallel.
    n_iter : int
        Full scans per chain; the last state is returned. There is no exact burn-in: the
        output is only approximately Bingham-distributed (see the notebook).
    initial : array_like, shape (n_chains, d, k), optional
        Starting states with orthonormal columns. Default: uniform on the Stiefel manifold,
        which is data-independent.
    return_trace : bool
        Also return ``tr(V^T B V)`` after every scan, shape ``(n_iter, n_chains)``.
    column : {"scan", "exact"}
        How a column is redrawn from its conditional: ``"scan"``, one systematic scan of Hoff's
        coordinate sampler (``_vector_scan``); ``"exact"``, an exact draw (``_acg_draw`` for
        ``k = 1``, ``_complement_acg_draw`` for ``k > 1``), so that every column update is an exact
        conditional draw (for ``k = 1`` every scan is then an exact, independent draw). Both leave
        the target invariant; a finite chain is exact for ``k > 1`` with neither.
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    V : ndarray, shape (n_chains, d, k)
    trace : ndarray, shape (n_iter, n_chains), only if ``return_trace``.

    The spread ``lambda_max(B) - lambda_min(B)`` must be at most ``MAX_CONCENTRATION``
    (``2^32``; a ValueError naming ``B`` otherwise): a column update evaluates ``c - y^T B y`` for unit
    ``y``, whose rounding error, about ``d 2^-53`` times the spread, must stay far below the envelope's
    ``b / 2 >= 1/2``, and beyond about ``2^52`` float64 no longer determines the density at all
    (``B``'s eigenvalues themselves carry that rounding). Above ``2^32`` the draws lie within
    ``2^-16`` of the top eigenvectors' span for an eigenvalue gap of 1.
    """
    B = check_square(B, name="B")
    if not np.allclose(B, B.T, rtol=1e-10, atol=1e-12 * max(1.0, np.abs(B).max())):
        raise ValueError("B must be symmetric; symmetrise the parameter, e.g. (B + B.T) / 2")
    with np.errstate(over="ignore"):
        B = B / 2 + B.T / 2  # (B + B^T) / 2 overflows for entries near the float64 limit
    d = B.shape[0]
    if d < 2:
        raise ValueError("the Bingham distribution needs d >= 2 (on d = 1 the output is +-1)")
    k = check_n_components(k, d - 1, "k")
    n_chains = check_integer(n_chains, "n_chains")
    n_iter = check_integer(n_iter, "n_iter", minimum=0)
    check_choice(column, "column", COLUMN_UPDATES)
    with one_blas_thread():  # small batched BLAS calls: threads only contend
        l_B, E_B = _eigh(B)
    if not l_B[-1] - l_B[0] <= MAX_CONCENTRATION:  # a NaN fails this too
        raise ValueError(
            f"B's eigenvalues spread over {l_B[-1] - l_B[0]:.3g} > 2^32 (MAX_CONCENTRATION): float64 cannot sample "
            "so concentrated a Bingham distribution exactly; scale B down (for PPCA: a smaller n epsilon)"
        )
    rng = check_random_state(random_state)
    if initial is None:
        V = haar_stiefel(d, k, n_chains, random_state=rng)
    else:
        V = check_array(initial, ndim=3, name="initial").copy()
        if V.shape != (n_chains, d, k):
            raise ValueError(f"initial must have shape ({n_chains}, {d}, {k}), got {V.shape}")
        gram = np.einsum("mdi,mdj->mij", V, V)
        if not np.allclose(gram, np.eye(k), atol=1e-8):
            raise ValueError("initial states must have orthonormal columns (V^T V = I)")

    with one_blas_thread():  # small batched BLAS calls: threads only contend
        return _gibbs_scans(B, l_B, E_B, V, n_iter, return_trace, column, rng)


def _eigh(B) -> tuple[np.ndarray, np.ndarray]:
    """``numpy.linalg.eigh(B)``; eigenvalues NaN where LAPACK fails, for entries near the float64 limit (the
    callers then refuse ``B``: a NaN spread fails their range checks)."""
    with np.errstate(over="ignore", invalid="ignore"):
        try:
            return np.linalg.eigh(B)
        except np.linalg.LinAlgError:  # pragma: no cover - depends on LAPACK's scaling
            return np.full(B.shape[0], np.nan), np.full(B.shape, np.nan)


def _canonical_signs(W) -> np.ndarray:
    """Flip each column of ``W`` (shape ``(..., d, q)``) so that its largest-magnitude entry is positive.

    Eigenvectors are defined up to sign, and LAPACK builds linked against different BLAS kernels
    may return either. The Gibbs update draws coordinates *in* this basis, so a flipped column
    sends the chain down another (equally valid) path; fixing the sign keeps runs identical
    across machines.
    """
    idx = np.argmax(np.abs(W), axis=-2)[..., None, :]
    signs = np.sign(np.take_along_axis(W, idx, axis=-2))
    return W * np.where(signs == 0, 1.0, signs)


def _complement_matrix(B, U, shift) -> np.ndarray:
    """``P B P + shift U U^T`` with ``P = I - U U^T``, for each chain; ``U`` of shape ``(m, d, k-1)``, orthonormal.

    It has ``U``'s span as an eigenspace with eigenvalue ``shift`` (below the spectrum of ``B``) and,
    on the complement, acts as ``B`` compressed to it: its other eigenpairs are those of ``N^T B N``
    for any orthonormal basis ``N`` of the complement. Compiled (``_complement_kernel``).
    """
    return _complement_kernel(np.ascontiguousarray(B), np.ascontiguousarray(U), float(shift))


@numba.njit(cache=True, nogil=True)
def _complement_kernel(B, U, shift):  # pragma: no cover - compiled
    """:func:`_complement_matrix` per chain: ``B - Y U^T - U Y^T``, ``Y = B U - U (U^T B U + shift I) / 2``."""
    m, d, k1 = U.shape
    out = np.empty((m, d, d))
    given, transposed = _ORIENTATIONS[0], _ORIENTATIONS[1]
    for h in range(m):
        Uh = U[h]
        BU = _product(B, given, Uh, given)
        H = _product(Uh, transposed, BU, given)
        for i in range(k1):
            H[i, i] += shift
        for i in range(k1):
            for j in range(k1):
                H[i, j] /= 2
        Y = _product(Uh, given, H, given)
        for i in range(d):
            for j in range(k1):
                Y[i, j] = BU[i, j] - Y[i, j]
        W = _product(Y, given, Uh, transposed)  # Y U^T
        for i in range(d):
            for j in range(d):
                out[h, i, j] = B[i, j] - (W[i, j] + W[j, i])  # exactly symmetric as B is
    return out


def _complement_eigh(B, U, shift):
    """Eigenpairs of ``B`` compressed to the orthogonal complement of ``U`` (shape ``(m, d, k-1)``, orthonormal).

    From the eigenpairs of :func:`_complement_matrix`, whose ``k - 1`` smallest belong to ``U``.
    Returns the ascending eigenvalues ``(m, q)`` and sign-fixed eigenvectors in ``R^d``, ``(m, d, q)``.
    """
    k1 = U.shape[2]
    lam, W = np.linalg.eigh(_complement_matrix(B, U, shift))
    return lam[:, k1:], _canonical_signs(W[:, :, k1:])  # eigenvectors unique up to the sign fixed here


def _compression_top(l_B, E_B, U, n_bisect: int = 64) -> np.ndarray:
    """Largest eigenvalue of ``B = E_B diag(l_B) E_B^T`` compressed to the complement of ``U``, per chain.

    Bisection on an inertia count: for ``mu`` not an eigenvalue of ``B``, the number of the
    compression's eigenvalues above ``mu`` is ``#{l_B > mu} + #{eig(F(mu)) < 0} - (k - 1)`` with
    ``F(mu) = U^T (B - mu I)^{-1} U`` (the inertia of the bordered matrix ``[[B - mu I, U], [U^T, 0]]``
    counted through either of its two Schur complements). By interlacing the eigenvalue lies in
    ``[l_(k), l_(1)]`` (``l_(j)`` the ``j``-th largest of ``B``). Each step costs ``O(d k^2)``, no
    ``d x d`` factorisation; the upper end of the final bracket is returned (never below the
    eigenvalue, up to rounding in ``F``).
    """
    k1 = U.shape[2]
    coords = E_B.T @ U  # U in the eigenbasis of B (the columns of E_B)
    lo = np.full(U.shape[0], l_B[-(k1 + 1)])
    hi = np.full(U.shape[0], l_B[-1])
    for _ in range(n_bisect):
        open_ = np.flatnonzero(np.nextafter(lo, hi) < hi)  # brackets still wider than one floating-point step
        if open_.size == 0:
            break
        mid = (lo[open_] + hi[open_]) / 2
        mid = np.where(np.any(l_B[None, :] == mid[:, None], axis=1), np.nextafter(mid, hi[open_]), mid)  # avoid a pole
        F = np.swapaxes(coords[open_], 1, 2) @ (coords[open_] / (l_B[None, :] - mid[:, None])[:, :, None])
        above = np.sum(l_B[None, :] > mid[:, None], axis=1) + np.sum(np.linalg.eigvalsh(F) < 0, axis=1) - k1
        lo[open_], hi[open_] = np.where(above > 0, mid, lo[open_]), np.where(above > 0, hi[open_], mid)
    return hi


_LAPACK_TOP_MAX_D = 256  # up to here LAPACK's O(d^3) top eigenvalue costs less than the O(d k^2)-per-step bisection


def _lapack_top(M, scale: float) -> np.ndarray:
    """Largest eigenvalue of each matrix in ``M`` (shape ``(m, d, d)``), raised past its rounding error.

    LAPACK's ``dsyevr`` for the top eigenvalue alone; a backward-stable symmetric eigensolver is
    within a small multiple of ``d eps ||M||_2`` of the exact eigenvalue, and ``scale`` bounds
    ``||M||_2``, so adding ``8 d eps scale`` gives a value never below the eigenvalue (an
    overestimate only lowers the envelope's acceptance rate, see :func:`_complement_acg_draw`).
    """
    d = M.shape[1]
    syevr, work = _syevr(d)
    top = np.array([syevr(Mi, compute_v=0, range="I", il=d, iu=d, lower=1, **work)[0][0] for Mi in M])
    return top + 8 * d * np.finfo(float).eps * scale


@functools.lru_cache(maxsize=8)
def _syevr(d: int):
    """LAPACK's ``dsyevr`` and its workspace sizes for ``d x d``: what ``scipy.linalg.eigh`` calls, unchecked."""
    syevr, syevr_lwork = get_lapack_funcs(("syevr", "syevr_lwork"), (np.empty(0),))
    lwork, liwork, info = syevr_lwork(d, lower=1)
    if info != 0:  # pragma: no cover - a workspace query fails only on invalid sizes
        raise RuntimeError(f"dsyevr workspace query failed (info={info})")
    return syevr, {"lwork": int(lwork), "liwork": int(liwork)}


_RITZ_EXTRA = 4  # the Ritz estimate's subspace: B's top k - 1 + _RITZ_EXTRA eigenvectors, projected off U


def _ritz_top(M, E_top, U) -> np.ndarray:
    """Rayleigh-Ritz estimate of the largest eigenvalue of each ``M`` (:func:`_complement_matrix`), never above it.

    The subspace is spanned by ``E_top`` (``B``'s top eigenvectors, ``(d, p)``) projected onto the
    complement of ``U``: the compression's top eigenvector lies mostly there. The largest
    eigenvalue of ``Q^T M Q`` for any orthonormal ``Q`` is at most ``M``'s (Courant-Fischer), so
    the estimate is a lower bound; a few ``d x p`` products instead of a ``d x d`` factorisation.
    Compiled (``_ritz_kernel``: a ``d x p`` QR factorisation and a ``p x p`` ``syevd`` per chain).
    """
    return _ritz_kernel(np.ascontiguousarray(M), np.ascontiguousarray(E_top), np.ascontiguousarray(U))


def _fortran_external(library: str, name: str, n_args: int, result=numba.types.void):
    """``name`` from scipy's Cython export of ``library`` (``"lapack"`` or ``"blas"``) for compiled code: ``n_args``
    addresses, as in Fortran, and ``result`` (``void`` but for BLAS's dot products)."""
    address = get_cython_function_address(f"scipy.linalg.cython_{library}", name)
    llvmlite.binding.add_symbol(f"dpnb_{name}", address)
    return numba.types.ExternalFunction(f"dpnb_{name}", result(*n_args * (numba.types.voidptr,)))


_dgeqrf, _dorgqr, _dsyevd, _dpotrf = (
    _fortran_external("lapack", name, n_args)
    for name, n_args in (("dgeqrf", 8), ("dorgqr", 9), ("dsyevd", 11), ("dpotrf", 5))
)
_NO_TRANSPOSE, _TRANSPOSE, _NO_VECTORS, _LOWER = (ord(c) for c in "ntNL")  # BLAS and LAPACK flags, as bytes
# the kernels' operands of _product, as given or transposed: read from an array, so that numba compiles _product once
# for a bool, not once for each combination of literal True and False
_ORIENTATIONS = np.array([False, True])
_dgemm, _dgemv = _fortran_external("blas", "dgemm", 13), _fortran_external("blas", "dgemv", 11)
_ddot = _fortran_external("blas", "ddot", 5, numba.types.float64)


@numba.njit(cache=True, nogil=True)
def _product(a, a_transposed, b, b_transposed):  # pragma: no cover - compiled
    """``op(a) @ op(b)`` as a new C-ordered array, ``a`` and ``b`` C-ordered 2-d float64 arrays and ``op(x)`` ``x.T``
    where ``x_transposed``, else ``x``: through the BLAS call numba's ``@`` makes for those operands (``x.T`` is a
    Fortran-ordered array there), so the result is the same bit for bit.

    That is ``ddot`` for a ``1 x 1`` result, ``dgemv`` for one row or one column and otherwise ``dgemm`` on the
    transposed product in Fortran order (``numba/np/linalg.py``: ``dot_3_mm``, ``call_xxgemm``, ``call_xxgemv``).
    numba compiles its ``@`` anew in every function that uses it and for every pair of layouts; this is compiled
    once (``benchmarks.first_fit`` measures what a first fit spends compiling). Raises ``ValueError`` for operands
    that are not C-ordered or whose inner dimensions differ.
    """
    m, k = (a.shape[1], a.shape[0]) if a_transposed else (a.shape[0], a.shape[1])
    n = b.shape[0] if b_transposed else b.shape[1]
    if (b.shape[1] if b_transposed else b.shape[0]) != k:
        raise ValueError("_product: the operands' inner dimensions differ")
    if not (a.flags.c_contiguous and b.flags.c_contiguous):
        raise ValueError("_product: the operands must be C-ordered arrays")
    out = np.zeros((m, n))
    if m == 0 or n == 0 or k == 0:
        return out
    ints, reals, flags = np.empty(6, np.int32), np.zeros(2), np.empty(2, np.uint8)
    reals[0], flags[0], flags[1] = 1.0, _NO_TRANSPOSE, _TRANSPOSE  # alpha = 1, beta = 0
    if m == 1 and n == 1:
        ints[0], ints[1] = k, 1
        out[0, 0] = _ddot(ints[0:].ctypes, a.ctypes, ints[1:].ctypes, b.ctypes, ints[1:].ctypes)
        return out
    if m == 1 or n == 1:  # a matrix and a vector: dgemv on the matrix, read as its Fortran view (the C array's rows
        # are its columns), transposed for a C-ordered matrix on the left or a Fortran-ordered one on the right
        matrix, vector, transpose = (a, b, not a_transposed) if n == 1 else (b, a, b_transposed)
        ints[0], ints[1], ints[2] = matrix.shape[1], matrix.shape[0], 1
        _dgemv(
            flags[1 if transpose else 0 :].ctypes, ints[0:].ctypes, ints[1:].ctypes, reals[0:].ctypes, matrix.ctypes,
            ints[0:].ctypes, vector.ctypes, ints[2:].ctypes, reals[1:].ctypes, out.ctypes, ints[2:].ctypes,
        )  # fmt: skip
        return out
    ints[0], ints[1], ints[2], ints[3], ints[4], ints[5] = n, m, k, b.shape[1], a.shape[1], n  # C^T = op(b)^T op(a)^T
    _dgemm(
        flags[1 if b_transposed else 0 :].ctypes, flags[1 if a_transposed else 0 :].ctypes, ints[0:].ctypes,
        ints[1:].ctypes, ints[2:].ctypes, reals[0:].ctypes, b.ctypes, ints[3:].ctypes, a.ctypes, ints[4:].ctypes,
        reals[1:].ctypes, out.ctypes, ints[5:].ctypes,
    )  # fmt: skip
    return out


@numba.njit(cache=True, nogil=True)
def _ritz_kernel(M, E_top, U):  # pragma: no cover - compiled
    """:func:`_ritz_top` per chain: ``Q`` of the QR factorisation of ``(I - U U^T) E_top``, then ``Q^T M Q``.

    LAPACK's ``dgeqrf``, ``dorgqr`` and ``dsyevd`` (eigenvalues only, lower triangle) on column-major
    copies, with the workspace sizes of scipy's wrappers.
    """
    m = M.shape[0]
    d, p = E_top.shape
    top = np.empty(m)
    rows, cols, info = np.array([d], np.int32), np.array([p], np.int32), np.zeros(1, np.int32)
    lwork, lwork_ev, liwork = np.array([3 * p], np.int32), np.array([2 * p + 1], np.int32), np.ones(1, np.int32)
    jobz_uplo = np.array([_NO_VECTORS, _LOWER], np.uint8)
    S_f = np.empty((p, d))  # column-major d x p
    K_f = np.empty((p, p))
    tau, work, w, iwork = np.empty(p), np.empty(3 * p), np.empty(p), np.empty(1, np.int32)
    given, transposed = _ORIENTATIONS[0], _ORIENTATIONS[1]
    for h in range(m):
        Uh = U[h]
        P = _product(Uh, given, _product(Uh, transposed, E_top, given), given)
        for i in range(d):
            for j in range(p):
                S_f[j, i] = E_top[i, j] - P[i, j]
        _dgeqrf(rows.ctypes, cols.ctypes, S_f.ctypes, rows.ctypes, tau.ctypes, work.ctypes, lwork.ctypes, info.ctypes)
        _dorgqr(
            rows.ctypes, cols.ctypes, cols.ctypes, S_f.ctypes, rows.ctypes, tau.ctypes, work.ctypes, lwork.ctypes,
            info.ctypes,
        )  # fmt: skip
        K = _product(S_f, given, _product(M[h], given, S_f, transposed), given)  # Q^T M Q, Q = S_f^T
        for i in range(p):
            for j in range(p):
                K_f[j, i] = K[i, j]
        _dsyevd(
            jobz_uplo[0:].ctypes, jobz_uplo[1:].ctypes, cols.ctypes, K_f.ctypes, cols.ctypes, w.ctypes,
            work.ctypes, lwork_ev.ctypes, iwork.ctypes, liwork.ctypes, info.ctypes,
        )  # fmt: skip
        top[h] = w[p - 1]
    return top


def _acg_envelope(M, c, l_B, k1: int):
    """``b``, ``log M_b`` and the Cholesky factor of ``G`` for the envelope of :func:`_complement_acg_draw` at ``c``.

    The factor is returned as ``R = L^T`` (``G = R^T R``) in the upper triangle of each ``d x d``
    matrix (the strict lower triangle holds ``G``'s entries); compiled (``_envelope_kernel``).
    Raises ``numpy.linalg.LinAlgError`` if ``G`` is not positive definite (``c + b / 2`` not above
    the compression's top eigenvalue): then the envelope would not dominate.
    """
    q = M.shape[1] - k1
    b, upper, failed = _envelope_kernel(M, c, l_B, k1)
    if failed:
        raise np.linalg.LinAlgError("G is not positive definite")
    return b, _acg_log_m(q, b), upper


@numba.njit(cache=True, nogil=True)
def _envelope_kernel(M, c, l_B, k1):  # pragma: no cover - compiled
    """:func:`_acg_envelope` without ``log M_b``: ``b`` (:func:`acg_shape`'s Newton), the factors, the failures.

    ``t_j = c - l_(k - 1 + j)`` from ``B``'s ascending eigenvalues ``l_B``; ``G = (1 + 2 c / b) I - (2 / b) M``
    is exactly symmetric, so LAPACK, reading the C-ordered matrix column-major (as ``G^T = G``),
    factors it as ``L L^T`` in its lower triangle, which is the upper triangle ``R = L^T`` here.
    """
    m, d, _ = M.shape
    q = d - k1
    t = np.empty((m, q))
    for h in range(m):
        for j in range(q):
            t[h, j] = max(c[h] - l_B[q - 1 - j], 0.0)
        t[h, 0] = 0.0
    b = _acg_newton(t)
    upper = np.empty((m, d, d))
    lower = np.array([_LOWER], np.uint8)
    n = np.array([d], np.int32)
    info = np.zeros(1, np.int32)
    failed = 0
    for h in range(m):
        scale = -2.0 / b[h]
        diagonal = 1.0 + 2.0 * c[h] / b[h]
        G = upper[h]
        for i in range(d):
            for j in range(d):
                G[i, j] = M[h, i, j] * scale
            G[i, i] += diagonal
        _dpotrf(lower.ctypes, n.ctypes, G.ctypes, n.ctypes, info.ctypes)
        failed += info[0] != 0
    return b, upper, failed


@numba.njit(cache=True, nogil=True)
def _acg_proposals(upper, U, B, e, u, c, b, log_m, out, rows):  # pragma: no cover - compiled
    """One round of :func:`_complement_acg_draw`'s rejection step for the chains ``rows``, in one compiled pass.

    For the ``i``-th pending chain ``h = rows[i]``: solves ``R z = e[i, :, j]`` (``R`` the upper triangle of
    ``upper[h]``, :func:`_acg_envelope`) for its proposals ``j`` in order, projects ``z`` off ``U[h]``, normalises
    it to ``y`` and accepts it if ``log(u[i, j]) < -t + (q / 2) log(1 + 2 t / b[h]) - log_m[h]`` with
    ``t = c[h] - y^T B y``; the first accepted ``y`` is written to ``out[h]``. Returns the chains of
    ``rows`` that accepted none, in order. Raises ``RuntimeError`` if ``y^T Omega y = 1 + 2 t / b`` was not
    positive (the draw would not be exact).
    """
    m, d, p = e.shape
    k1 = U.shape[2]
    q = d - k1
    pending = np.empty(m, rows.dtype)
    n_pending = 0
    z = np.empty(d)
    for i in range(m):
        h = rows[i]
        R = upper[h]
        accepted = False
        for j in range(p):
            for a in range(d - 1, -1, -1):  # back substitution with R, reading its rows from the right
                wa = e[i, a, j]
                for r in range(d - 1, a, -1):
                    wa -= R[a, r] * z[r]
                z[a] = wa / R[a, a]
            for col in range(k1):  # z -= U U^T z
                dot = 0.0
                for a in range(d):
                    dot += U[h, a, col] * z[a]
                for a in range(d):
                    z[a] -= dot * U[h, a, col]
            norm2 = 0.0
            for a in range(d):
                norm2 += z[a] * z[a]
            inv_norm = 1.0 / np.sqrt(norm2)
            yby = 0.0
            for a in range(d):
                row = 0.0
                for r in range(d):
                    row += B[a, r] * z[r]
                yby += z[a] * row
            t = c[h] - yby * inv_norm * inv_norm
            ratio = 2.0 * t / b[h]
            if ratio <= -1.0:  # a positive definite G keeps y^T Omega y > 0 up to rounding
                raise RuntimeError("the envelope's Omega is not positive definite; the draw would not be exact")
            if np.log(u[i, j]) < -t + q / 2 * np.log1p(ratio) - log_m[h]:
                for a in range(d):
                    out[h, a] = z[a] * inv_norm
                accepted = True
                break
        if not accepted:
            pending[n_pending] = h
            n_pending += 1
    return pending[:n_pending]


def _complement_acg_draw(B, l_B, E_B, U, shift, rng: np.random.Generator, proposals: int = 4) -> np.ndarray:
    """One exact draw per chain from ``exp(v^T B v)`` on the unit sphere of the complement of ``U``.

    The rejection sampler of :func:`_acg_draw` (KGM 2013, Sec. 4) without the complement's
    eigendecomposition. With ``c`` an estimate of the largest eigenvalue ``lambda`` of the
    compression ``N^T B N`` and ``T = c I - N^T B N``, the envelope is the angular central Gaussian
    with ``Omega = I + 2 T / b``. Writing ``x = y^T T y`` for a unit ``y``, ``y^T Omega y = 1 + 2 x / b``
    and ``log(exp(-x) (1 + 2 x / b)^{q/2})`` is concave in ``x > -b / 2`` with its maximum
    ``log M_b = -(q - b) / 2 + (q / 2) log(q / b)`` at ``x = (q - b) / 2``: the bound
    ``exp(-y^T T y) <= M_b (y^T Omega y)^{-q/2}`` holds for *every* ``b`` in ``(0, q]`` and every
    ``c > lambda - b / 2``, i.e. whenever ``Omega`` is positive definite. So ``b`` and ``c`` only
    tune the acceptance rate; ``b`` is solved (:func:`acg_shape`) from the interlacing estimates
    ``t_j = c - l_(k - 1 + j)`` of ``T``'s eigenvalues. ``c`` is the Rayleigh-Ritz estimate
    (:func:`_ritz_top`, at most ``lambda`` and in practice within a few per cent of ``b / 2`` of
    it); the Cholesky factorisation below proves ``Omega`` positive definite, and if it fails ``c``
    is recomputed as an upper bound of ``lambda`` (LAPACK's top eigenvalue of the compression plus
    its rounding error for ``d <= 256``, ``_lapack_top``; above, bisection on an inertia count,
    ``_compression_top``), for which ``Omega`` is positive definite. The matrix
    ``G = (1 + 2 c / b) I - (2 / b) M``, ``M`` from :func:`_complement_matrix`, equals ``Omega`` on
    the complement and maps ``U``'s span to itself (positive definite there, as ``shift`` is far
    below ``c``), so with ``G = L L^T`` the complement part of ``z = L^{-T} e``, ``e ~ N(0, I_d)``, is
    the envelope's Gaussian. A proposal ``y`` (that part, normalised) is accepted with
    ``exp(-y^T T y) (y^T Omega y)^{q/2} / M_b``, where ``y^T T y = c - y^T B y``. Cost per chain:
    one Cholesky factorisation and a few ``d x (k + 4)`` products, no eigendecomposition: the
    complement matrix ``O(d^2 k)``, the Ritz estimate ``O(d k^2)`` per step, the envelope's
    factorisation ``O(d^3 / 3)``, the rejection round ``O(d^2)`` per proposal
    (``python -m benchmarks.ppca_peers`` times each part).

    Returns
    -------
    ndarray of shape (m, d), unit vectors orthogonal to ``U``.
    """
    m, d, k1 = U.shape
    M = _complement_matrix(B, U, shift)
    c = _ritz_top(M, E_B[:, -min(d, k1 + _RITZ_EXTRA) :], U)
    try:
        b, log_m, upper = _acg_envelope(M, c, l_B, k1)
    except np.linalg.LinAlgError:  # the estimate is too far below: an upper bound instead
        if d <= _LAPACK_TOP_MAX_D:
            c = _lapack_top(M, max(np.abs(l_B).max(), abs(shift)))
        else:
            c = _compression_top(l_B, E_B, U)
        b, log_m, upper = _acg_envelope(M, c, l_B, k1)
    out = np.empty((m, d))
    pending = np.arange(m)
    for _ in range(_MAX_REJECTION_ROUNDS):
        if pending.size == 0:
            return out
        e = rng.standard_normal((pending.size, d, proposals))
        pending = _acg_proposals(upper, U, B, e, rng.random((pending.size, proposals)), c, b, log_m, out, pending)
    raise RuntimeError("angular central Gaussian rejection sampler did not terminate")  # pragma: no cover


def _gibbs_scans(B, l_B, E_B, V, n_iter, return_trace, column, rng):
    """The scans of :func:`bingham_gibbs` (inputs already validated; ``l_B, E_B`` the eigendecomposition of ``B``)."""
    n_chains, d, k = V.shape
    if k == 1:
        l_fixed = np.broadcast_to(l_B, (n_chains, d))
        E_B = _canonical_signs(E_B)
    shift = l_B[0] - (l_B[-1] - l_B[0]) - 1.0  # below every eigenvalue of every compression of B
    trace = np.empty((n_iter, n_chains)) if return_trace else None
    others = [np.delete(np.arange(k), r) for r in range(k)]  # the columns that fix column r's complement
    for it in range(n_iter):
        for r in range(k):
            if k > 1 and column == "exact":  # unit vectors already (normalised in the compiled round)
                V[:, :, r] = _complement_acg_draw(B, l_B, E_B, V[:, :, others[r]], shift, rng)
                continue
            if k == 1:
                W, lam = np.broadcast_to(E_B, (n_chains, d, d)), l_fixed
            else:
                lam, W = _complement_eigh(B, V[:, :, others[r]], shift)
            if column == "exact":
                y = _acg_draw(lam[:, -1:] - lam, rng)
            else:
                y = _vector_scan(np.einsum("mdq,md->mq", W, V[:, :, r]), lam, rng)
            x = np.einsum("mdq,mq->md", W, y)
            V[:, :, r] = x / np.linalg.norm(x, axis=1, keepdims=True)
        if k > 1 and it % 20 == 19:  # re-orthonormalise against rounding drift, keeping each column's orientation
            Q, R = np.linalg.qr(V)
            signs = np.sign(np.diagonal(R, axis1=1, axis2=2))
            V = Q * np.where(signs == 0, 1.0, signs)[:, None, :]
        if return_trace:
            trace[it] = np.einsum("mdk,de,mek->m", V, B, V)
    return (V, trace) if return_trace else V


def vector_bingham_exact(B, size: int = 1, *, random_state=None) -> np.ndarray:
    """Exact draws from the vector Bingham ``exp(x^T B x)`` on the unit sphere (``k = 1``).

    Rejection from an angular central Gaussian envelope (Kent, Ganeiber & Mardia 2013,
    Sec. 4): with ``T = lambda_max(B) I - B`` (PSD), propose ``x = y / ||y||``,
    ``y ~ N(0, Omega^{-1})``, ``Omega = I + 2 T / b``, where ``b`` solves
    ``sum_i 1 / (b + 2 t_i) = 1``; accept with probability
    ``exp(-x^T T x) (x^T Omega x)^{q/2} / M``, ``M = e^{-(q-b)/2} (q/b)^{q/2}``.
    Used as an independent check of the Gibbs sampler, and for exact PPCA with ``k = 1``. ``T``'s eigenvalues
    are computed once, without cancellation, so the draws are exact for ``B``'s computed eigenvalues at any
    concentration; an eigenvalue spread above ``1e300`` (``2 t / b`` would overflow) is refused with a
    ValueError naming ``B``.

    Returns
    -------
    ndarray, shape (size, d)
    """
    B = check_square(B, name="B")
    with np.errstate(over="ignore"):
        B = B / 2 + B.T / 2  # (B + B^T) / 2 overflows for entries near the float64 limit
    q = B.shape[0]
    if q < 2:
        raise ValueError("the Bingham distribution needs d >= 2")
    size = check_integer(size, "size")
    rng = check_random_state(random_state)
    lam, E = _eigh(B)
    if not lam[-1] - lam[0] <= _MAX_SPREAD_EXACT:  # a NaN fails this too
        raise ValueError(
            f"B's eigenvalues spread over {lam[-1] - lam[0]:.3g} > 1e300: the sampler would overflow; scale B down"
        )
    t = lam.max() - lam  # eigenvalues of T, >= 0, one of them 0
    b, log_m = acg_shape(t)
    omega = 1.0 + 2.0 * t / b
    out = np.empty((size, q))
    filled = 0
    for _ in range(_MAX_REJECTION_ROUNDS):
        m = max(2 * (size - filled), 16)
        y = rng.standard_normal((m, q)) / np.sqrt(omega)
        x = y / np.linalg.norm(y, axis=1, keepdims=True)
        log_acc = -(x * x) @ t + q / 2 * np.log((x * x) @ omega) - log_m
        keep = x[np.log(rng.random(m)) < log_acc][: size - filled]
        out[filled : filled + keep.shape[0]] = keep
        filled += keep.shape[0]
        if filled == size:
            return out @ E.T
    raise RuntimeError("angular central Gaussian rejection sampler did not terminate")  # pragma: no cover


# --------------------------------------------------------------------------------------
# Exact references on small spheres, and chain diagnostics
# --------------------------------------------------------------------------------------
def circle_angle_density(B, angles) -> np.ndarray:
    """Exact density of the angle ``t`` of ``v = (cos t, sin t)`` under vector Bingham(B), d = 2.

    Normalised over ``[0, 2 pi)`` by the trapezoidal rule on 4096 points (spectrally
    accurate for this smooth periodic integrand).
    """
    B = check_square(B, name="B")
    if B.shape != (2, 2):
        raise ValueError(f"circle_angle_density needs a 2 x 2 parameter, got {B.shape}")
    angles = check_array(angles, ndim=None, name="angles")

    def log_unnorm(t):
        c, s = np.cos(t), np.sin(t)
        return B[0, 0] * c * c + (B[0, 1] + B[1, 0]) * c * s + B[1, 1] * s * s

    grid = np.linspace(0.0, 2 * np.pi, 4096, endpoint=False)
    shift = np.linalg.eigvalsh((B + B.T) / 2).max()
    Z = np.mean(np.exp(log_unnorm(grid) - shift)) * 2 * np.pi
    return np.exp(log_unnorm(angles) - shift) / Z


def sphere_second_moments(B, n_nodes: int = 400) -> np.ndarray:
    """Exact ``E[v v^T]`` under the vector Bingham(B) on the unit sphere of R^3 (or R^2).

    Quadrature: for d = 3, Gauss-Legendre in ``u = cos(polar angle)`` (``n_nodes`` nodes) times
    the trapezoidal rule in the azimuth (``2 n_nodes`` points); the uniform surface measure is
    ``du dphi``. For d = 2, the trapezoidal rule on the circle.
    """
    B = check_square(B, name="B")
    B = (B + B.T) / 2
    d = B.shape[0]
    n_nodes = check_integer(n_nodes, "n_nodes", minimum=8)
    if d == 2:
        t = np.linspace(0.0, 2 * np.pi, 8 * n_nodes, endpoint=False)
        pts = np.stack([np.cos(t), np.sin(t)], axis=1)
        w = np.ones(t.size)
    elif d == 3:
        u, wu = np.polynomial.legendre.leggauss(n_nodes)
        phi = np.linspace(0.0, 2 * np.pi, 2 * n_nodes, endpoint=False)
        U, P = np.meshgrid(u, phi, indexing="ij")
        s = np.sqrt(1 - U**2)
        pts = np.stack([s * np.cos(P), s * np.sin(P), U], axis=-1).reshape(-1, 3)
        w = np.repeat(wu, phi.size)
    else:
        raise ValueError(f"sphere_second_moments handles d = 2 or 3, got d = {d}")
    logf = np.einsum("pi,ij,pj->p", pts, B, pts)
    f = w * np.exp(logf - logf.max())
    return np.einsum("p,pi,pj->ij", f, pts, pts) / f.sum()


def autocorrelation(x, max_lag: int) -> np.ndarray:
    """Sample autocorrelation of each chain, averaged over chains, for lags ``0..max_lag``.

    ``x`` has shape ``(n_iter, n_chains)`` (a 1-d array is one chain).
    """
    x = check_array(x, ndim=None, name="x", min_rows=2)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2:
        raise ValueError(f"x must have shape (n_iter, n_chains), got {x.shape}")
    n = x.shape[0]
    max_lag = check_integer(max_lag, "max_lag", minimum=0)
    if max_lag >= n:
        raise ValueError(f"max_lag must be < the chain length {n}, got {max_lag}")
    xc = x - x.mean(axis=0)
    var = np.mean(xc**2, axis=0)
    var = np.where(var > 0, var, np.inf)
    acf = np.array([np.mean(np.sum(xc[: n - h] * xc[h:], axis=0) / (n * var)) for h in range(max_lag + 1)])
    acf[0] = 1.0
    return acf


def effective_sample_size(x) -> float:
    """Effective sample size of ``x`` (shape ``(n_iter, n_chains)``), summed over chains.

    ``n_chains * n_iter / (1 + 2 sum_h rho_h)`` with Geyer's initial positive sequence: pairs
    ``rho_{2t} + rho_{2t+1}`` are summed while positive.
    """
    x = check_array(x, ndim=None, name="x", min_rows=4)
    if x.ndim == 1:
        x = x[:, None]
    n, m = x.shape
    rho = autocorrelation(x, n - 1)
    tau = -1.0
    for t in range(0, n - 1, 2):
        pair = rho[t] + rho[t + 1]
        if pair <= 0:
            break
        tau += 2 * pair
    return float(n * m / max(tau, 1.0 / (n * m)))
