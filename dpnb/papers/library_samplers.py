"""The top-eigenvector (vector Bingham) samplers behind two libraries' DP-PCA, and a corrected one.

Both libraries release the top eigenvector of the scaled second-moment matrix ``C = X^T X``
(rows with ``||x|| <= 1``) by the exponential mechanism of Amin, Dick, Kulesza, Munoz Medina
& Vassilvitskii (NeurIPS 2019, Algorithm 2): the intended output density on the unit sphere is

    p_C(u) proportional to exp(epsilon / (4 Delta) u^T C u) = exp(-u^T A u) * const,
    A = epsilon / (4 Delta) (lambda_max(C) I - C)           (step 1: A is PSD, smallest eigenvalue 0)

and it is drawn by rejection from an angular central Gaussian (ACG) envelope (Kent, Ganeiber &
Mardia 2018, Sec. 3-4, "KGM"): propose ``u = z / ||z||``, ``z ~ N(0, Omega^{-1})``,
``Omega = I + 2 A / b`` with ``b`` the root of ``sum_i 1 / (b + 2 a_i) = 1`` (``a_i`` the
eigenvalues of ``A``), ``M = exp(-(q - b) / 2) (q / b)^{q / 2}``. The ACG density with respect
to the uniform probability measure is ``|Omega|^{1/2} (u^T Omega u)^{-q/2}``, and KGM's envelope
inequality ``exp(-u^T A u) <= M (u^T Omega u)^{-q/2}`` gives the acceptance probability

    KGM (``rule="kgm"``):      exp(-u^T A u) (u^T Omega u)^{q/2} / M,
    libraries (``"library"``): exp(-u^T A u) / (M (u^T Omega u)^{q/2}),

the second being what diffprivlib 0.6.6 (``diffprivlib/mechanisms/bingham.py``,
``Bingham.randomise``) and OpenDP 0.16.0 (``opendp/extras/sklearn/_make_eigenvector/__init__.py``,
``make_private_eigenvector``) compute. Proposal density times acceptance probability is the
density of accepted draws, so the libraries sample

    p_lib(u) proportional to exp(-u^T A u) (u^T Omega u)^{-q}

(both factors depend on ``C``; ``Omega`` through ``A`` and ``b``), not ``p_C``.

This module gives the two densities exactly (quadrature on the sphere for ``d = 2, 3``), the
exact privacy loss of each, the exact acceptance rates, a KGM sampler with either acceptance rule
(``rule="kgm"`` is the corrected sampler; :func:`bingham_mechanism` is the corrected mechanism),
thin wrappers that call the two libraries' samplers with a seeded generator, and
:func:`compare_sampler`, which checks any sampler (a callable ``C -> unit vector``) against both
densities.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from unittest import mock

import numpy as np

from dpnb.ground.streams import sklearn_seed
from dpnb.ground.validation import (
    check_choice,
    check_epsilon,
    check_fraction,
    check_integer,
    check_positive,
    check_random_state,
    check_square,
)
from dpnb.numerics.bingham import MAX_CONCENTRATION, acg_shape
from dpnb.numerics.evaluation import tied_with_best
from dpnb.numerics.stats import mean_ci

RULES = ("kgm", "library")
_MAX_ROUNDS = 100_000


# --------------------------------------------------------------------------------------
# The target and the envelope
# --------------------------------------------------------------------------------------
def _check_symmetric(C, name: str) -> np.ndarray:
    C = check_square(C, name=name)
    if C.shape[0] < 2:
        raise ValueError(f"{name} must be at least 2 x 2 (on d = 1 the eigenvector is +-1)")
    if not np.allclose(C, C.T, rtol=1e-10, atol=1e-12 * max(1.0, float(np.abs(C).max()))):
        raise ValueError(f"{name} must be symmetric; pass (C + C.T) / 2")
    return (C + C.T) / 2


def _check_rule(rule) -> str:
    return check_choice(rule, "rule", RULES)  # "kgm": Kent et al.; "library": the libraries' rule


def bingham_parameter(C, epsilon, sensitivity=1.0) -> np.ndarray:
    """The libraries' step (1): ``A = epsilon / (4 sensitivity) (lambda_max(C) I - C)``.

    Amin et al. (2019), Algorithm 2, step 1; diffprivlib's ``value_translated`` and OpenDP's
    ``A``. The vector Bingham ``exp(-u^T A u)`` equals ``exp(epsilon u^T C u / (4 sensitivity))``
    up to a constant.

    Parameters
    ----------
    C : array_like, shape (d, d)
        Symmetric matrix (``X^T X`` with rows scaled into the unit ball), ``d >= 2``.
    epsilon : float
        Finite privacy parameter, > 0.
    sensitivity : float
        ``Delta`` (1 for rows in the unit ball: one record moves ``u^T C u`` by at most 1).

    An ``A`` with an entry above ``1e300`` (the samplers' envelopes would overflow float64) is refused with a
    ValueError naming epsilon and sensitivity.
    """
    C = _check_symmetric(C, "C")
    epsilon = check_epsilon(epsilon, allow_infinite=False)
    sensitivity = check_positive(sensitivity, "sensitivity")
    with np.errstate(over="ignore", invalid="ignore"):
        A = epsilon / (4 * sensitivity) * (np.linalg.eigvalsh(C).max() * np.eye(C.shape[0]) - C)
    if not np.abs(A).max() <= MAX_CONCENTRATION:  # a NaN fails this too
        raise ValueError(
            f"epsilon={epsilon!r} is too large for sensitivity {sensitivity!r}: the Bingham parameter "
            "epsilon / (4 sensitivity) (lambda_max I - C) exceeds 2^32, beyond which the release is the top "
            "eigenvector to double precision and the sampler's arithmetic is not exact; pass a smaller epsilon"
        )
    return A


def acg_envelope(A) -> tuple[float, np.ndarray, float]:
    """Kent-Ganeiber-Mardia's angular central Gaussian envelope for ``exp(-u^T A u)``.

    KGM (2018), Sec. 3.4-3.6: ``b`` solves ``sum_i 1 / (b + 2 a_i) = 1`` on ``(0, q]``
    (:func:`dpnb.numerics.bingham.acg_shape`),
    ``Omega = I + 2 A / b`` and ``log M = -(q - b) / 2 + (q / 2) log(q / b)``.

    Parameters
    ----------
    A : array_like, shape (q, q)
        Symmetric PSD with smallest eigenvalue 0 (the output of :func:`bingham_parameter`).

    Returns
    -------
    b : float
    omega : ndarray, shape (q, q)
    log_m : float
    """
    A = _check_symmetric(A, "A")
    a = np.linalg.eigvalsh(A)
    scale = max(1.0, float(np.abs(a).max()))
    if abs(a.min()) > 1e-9 * scale:
        raise ValueError("A must be PSD with smallest eigenvalue 0; pass lambda_max(C) I - C times a positive scale")
    b, log_m = acg_shape(np.maximum(a, 0.0))
    omega = np.eye(A.shape[0]) + 2.0 * A / b
    return float(b), omega, float(log_m)


def log_acceptance(U, A, rule: str = "kgm") -> np.ndarray:
    """Log acceptance probability of the proposals ``U`` (rows on the sphere) under ``rule``.

    ``"kgm"``: ``-u^T A u + (q/2) log(u^T Omega u) - log M`` (KGM 2018, eq. for the ACG
    envelope); ``"library"``: ``-u^T A u - (q/2) log(u^T Omega u) - log M`` (diffprivlib 0.6.6
    ``Bingham.randomise``, OpenDP 0.16.0 ``make_private_eigenvector``). Both are <= 0.
    """
    rule = _check_rule(rule)
    A = _check_symmetric(A, "A")
    _, omega, log_m = acg_envelope(A)
    U = _check_points(U, A.shape[0])
    sign = 1.0 if rule == "kgm" else -1.0
    q = U.shape[1]
    return -_quad(U, A) + sign * q / 2 * np.log(_quad(U, omega)) - log_m


def _check_points(U, d: int) -> np.ndarray:
    U = np.atleast_2d(np.asarray(U, dtype=float))
    if U.ndim != 2 or U.shape[1] != d:
        raise ValueError(f"points must have shape (m, {d}), got {U.shape}")
    if not np.all(np.isfinite(U)) or not np.allclose(np.einsum("ij,ij->i", U, U), 1.0, atol=1e-8):
        raise ValueError("points must be finite unit vectors")
    return U


def _quad(U, M) -> np.ndarray:
    """``u^T M u`` for each row ``u`` of ``U``: one ``(m, d) x (d, d)`` product, then row-wise dot products
    (``O(m d^2)``; the three-operand einsum loops over ``(i, j)`` per row without BLAS, about 6x slower at d = 3)."""
    return np.einsum("pi,pi->p", U @ M, U)


# --------------------------------------------------------------------------------------
# Samplers: KGM with either rule, the corrected mechanism, the two libraries
# --------------------------------------------------------------------------------------
def acg_proposals(A, size: int, *, random_state=None) -> np.ndarray:
    """``size`` proposals from KGM's ACG envelope for ``exp(-u^T A u)``: ``z ~ N(0, Omega^{-1})``, ``u = z / ||z||``.

    The proposal both libraries use (diffprivlib sums four ``N(0, Omega^{-1} / 4)`` draws, the
    same law). Drawn in ``Omega``'s eigenbasis. Returns an array of shape ``(size, q)``.
    """
    A = _check_symmetric(A, "A")
    size = check_integer(size, "size")
    rng = check_random_state(random_state)
    _, omega, _ = acg_envelope(A)
    w, E = np.linalg.eigh(omega)
    z = rng.standard_normal((size, A.shape[0])) / np.sqrt(w) @ E.T
    return z / np.linalg.norm(z, axis=1, keepdims=True)


def acg_rejection_sample(A, size: int = 1, *, rule: str = "kgm", random_state=None):
    """Rejection sampling from the ACG envelope of ``exp(-u^T A u)`` with acceptance ``rule``.

    Same proposal as both libraries (:func:`acg_proposals`); only the acceptance probability
    (:func:`log_acceptance`) differs. ``rule="kgm"`` draws exactly from the vector Bingham
    ``exp(-u^T A u)``; ``rule="library"`` reproduces the libraries' output density
    ``exp(-u^T A u) (u^T Omega u)^{-q}``.

    Returns
    -------
    draws : ndarray, shape (size, q)
    n_proposals : int
        Proposals used (``size / n_proposals`` estimates the acceptance rate).
    """
    A = _check_symmetric(A, "A")
    size = check_integer(size, "size")
    rule = _check_rule(rule)
    rng = check_random_state(random_state)
    out = np.empty((size, A.shape[0]))
    filled, proposals = 0, 0
    for _ in range(_MAX_ROUNDS):
        m = max(2 * (size - filled), 64)
        y = acg_proposals(A, m, random_state=rng)
        accepted = np.flatnonzero(np.log(rng.random(m)) < log_acceptance(y, A, rule))
        if accepted.size >= size - filled:  # count proposals up to the last one needed
            take = accepted[: size - filled]
            proposals += int(take[-1]) + 1
        else:
            take = accepted
            proposals += m
        out[filled : filled + take.size] = y[take]
        filled += take.size
        if filled == size:
            return out, proposals
    raise RuntimeError("ACG rejection sampler did not terminate; the acceptance rate is too small")


def bingham_mechanism(C, epsilon, size: int = 1, *, sensitivity=1.0, random_state=None) -> np.ndarray:
    """Corrected top-eigenvector mechanism: draws ``u`` with density ``exp(epsilon u^T C u / (4 Delta))``.

    The libraries' intended mechanism (Amin et al. 2019, Algorithm 2), sampled with KGM's
    acceptance ratio (:func:`acg_rejection_sample` with ``rule="kgm"``). With rows of norm
    <= 1 and ``sensitivity=1`` its privacy loss under replace-one neighbours is at most
    ``epsilon / 2`` (at most ``epsilon / 4`` under add/remove). ``epsilon=np.inf`` returns
    the top eigenvector of ``C`` (``size`` copies), the non-private limit.

    Returns
    -------
    ndarray, shape (size, d)

    Examples
    --------
    >>> import numpy as np
    >>> from dpnb.papers.library_samplers import bingham_mechanism
    >>> C = np.diag([3.0, 1.0, 0.5])  # X^T X of rows with norm <= 1
    >>> U = bingham_mechanism(C, epsilon=1.0, size=4, random_state=0)
    >>> U.shape, bool(np.allclose(np.linalg.norm(U, axis=1), 1.0))  # unit vectors
    ((4, 3), True)
    >>> np.abs(bingham_mechanism(C, np.inf)).round(3)  # epsilon = inf: the top eigenvector
    array([[1., 0., 0.]])
    """
    C = _check_symmetric(C, "C")
    epsilon = check_epsilon(epsilon)
    size = check_integer(size, "size")
    if np.isinf(epsilon):
        check_positive(sensitivity, "sensitivity")
        check_random_state(random_state)
        return np.tile(np.linalg.eigh(C)[1][:, -1], (size, 1))
    A = bingham_parameter(C, epsilon, sensitivity)
    return acg_rejection_sample(A, size, rule="kgm", random_state=random_state)[0]


def diffprivlib_sampler(epsilon, *, sensitivity=1.0, random_state=None) -> Callable:
    """diffprivlib 0.6.6's ``Bingham(epsilon, sensitivity).randomise`` as a callable ``C -> u``.

    ``random_state`` (None, int or Generator) seeds the mechanism through an int, which is
    the seed type diffprivlib accepts. Nothing else is changed.
    """
    from diffprivlib.mechanisms import Bingham

    epsilon = check_epsilon(epsilon, allow_infinite=False)
    sensitivity = check_positive(sensitivity, "sensitivity")
    seed = sklearn_seed(check_random_state(random_state))
    return Bingham(epsilon=epsilon, sensitivity=sensitivity, random_state=seed).randomise


def opendp_sampler(n_features: int, unit_epsilon, *, random_state=None) -> Callable:
    """OpenDP 0.16.0's ``make_private_eigenvector`` measurement as a callable ``C -> u``.

    Builds the measurement on ``_sscp_domain(num_features=n_features, norm=1, p=2)`` with the
    symmetric distance (its privacy map is ``d_in / 2 * unit_epsilon``: ``unit_epsilon`` for
    one replaced record). Enables OpenDP's ``"contrib"`` and ``"idealized-numerics"`` features
    (a process-wide switch), which the constructor requires. The only change is the random
    source: the constructor's ``get_np_csprng()`` (a NumPy Generator over OpenDP's CSPRNG) is
    replaced by the seeded Generator from ``random_state`` while the measurement is built, so
    runs are reproducible; the sampling code is OpenDP's.
    """
    import opendp.extras.sklearn._make_eigenvector as eigenvector
    import opendp.prelude as dp
    from opendp.extras.numpy import _sscp_domain

    n_features = check_integer(n_features, "n_features", minimum=2)
    unit_epsilon = check_epsilon(unit_epsilon, "unit_epsilon", allow_infinite=False)
    rng = check_random_state(random_state)
    dp.enable_features("contrib", "idealized-numerics")
    with mock.patch.object(eigenvector, "get_np_csprng", lambda: rng):
        measurement = eigenvector.make_private_eigenvector(
            _sscp_domain(num_features=n_features, norm=1.0, p=2), dp.symmetric_distance(), unit_epsilon
        )
    return lambda C: np.asarray(measurement(np.ascontiguousarray(C, dtype=np.float64)), dtype=float)


# --------------------------------------------------------------------------------------
# Exact densities on the sphere (d = 2, 3) and what follows from them
# --------------------------------------------------------------------------------------
def sphere_quadrature(d: int, n_nodes: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights for the uniform probability measure on the unit sphere of R^d, d = 2 or 3.

    d = 3: Gauss-Legendre in ``t = u_3`` (``n_nodes``) times the trapezoidal rule in the azimuth
    (``2 n_nodes``), since the uniform surface measure is ``dt dphi / (4 pi)``; d = 2: the
    trapezoidal rule on ``8 n_nodes`` angles. Both are spectrally accurate for smooth integrands.

    Returns
    -------
    points : ndarray, shape (P, d)
    weights : ndarray, shape (P,), summing to 1
    """
    d = check_integer(d, "d", minimum=2)
    n_nodes = check_integer(n_nodes, "n_nodes", minimum=8)
    if d == 2:
        t = np.linspace(0.0, 2 * np.pi, 8 * n_nodes, endpoint=False)
        return np.stack([np.cos(t), np.sin(t)], axis=1), np.full(t.size, 1.0 / t.size)
    if d != 3:
        raise ValueError(f"sphere_quadrature handles d = 2 or 3, got d = {d}")
    t, wt = np.polynomial.legendre.leggauss(n_nodes)
    phi = np.linspace(0.0, 2 * np.pi, 2 * n_nodes, endpoint=False)
    T, P = np.meshgrid(t, phi, indexing="ij")
    s = np.sqrt(1 - T**2)
    points = np.stack([s * np.cos(P), s * np.sin(P), T], axis=-1).reshape(-1, 3)
    return points, np.repeat(wt, phi.size) / (2 * phi.size)


def _checked_nodes(d, n_nodes) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_nodes` after checking ``d``, then ``n_nodes``, in :func:`sphere_quadrature`'s order."""
    d = check_integer(d, "d", minimum=2)
    return _nodes(d, check_integer(n_nodes, "n_nodes", minimum=8))


@functools.lru_cache(maxsize=16)
def _nodes(d: int, n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`sphere_quadrature`, computed once per ``(d, n_nodes)`` (read-only arrays)."""
    points, weights = sphere_quadrature(d, n_nodes)
    points.flags.writeable = weights.flags.writeable = False
    return points, weights


def _stacked_log_density(C, scale, rule, nodes, weights) -> np.ndarray:
    """Normalised log densities on ``nodes`` for a stack of parameters ``C`` (shape ``(m, d, d)``).

    ``A = scale (lambda_max(C) I - C)``; with ``y = u^T A u``, the intended log density is
    ``-y`` and the libraries' ``-y - q log(1 + 2 y / b)`` (``u^T Omega u = 1 + 2 y / b``, ``b``
    from the eigenvalues of ``A`` by :func:`dpnb.numerics.bingham.acg_shape`); both are normalised by the
    quadrature. Returns shape ``(m, P)``.
    """
    lam = np.linalg.eigvalsh(C)
    q = C.shape[-1]
    y = scale * (lam[:, -1, None] - np.einsum("pi,mij,pj->mp", nodes, C, nodes, optimize=True))
    log_f = -y
    if rule == "library":
        b, _ = acg_shape(np.maximum(scale * (lam[:, -1:] - lam), 0.0))
        log_f = log_f - q * np.log1p(2.0 * y / b[:, None])
    shift = log_f.max(axis=1, keepdims=True)
    return log_f - shift - np.log(np.exp(log_f - shift) @ weights)[:, None]


def _unnormalised_log_density(U, A, rule):
    if rule == "kgm":
        return -_quad(U, A)
    _, omega, _ = acg_envelope(A)
    return -_quad(U, A) - U.shape[1] * np.log(_quad(U, omega))


def log_density(U, C, epsilon, *, sensitivity=1.0, rule: str = "kgm", n_nodes: int = 200) -> np.ndarray:
    """Normalised log density, w.r.t. the uniform probability measure, of the sampler's output.

    ``rule="kgm"``: the intended ``exp(epsilon u^T C u / (4 Delta))``; ``rule="library"``: what
    the libraries sample, ``exp(-u^T A u) (u^T Omega u)^{-q}`` (module docstring). The
    normalising constant is computed by :func:`sphere_quadrature`, so ``d`` must be 2 or 3.

    Parameters
    ----------
    U : array_like, shape (m, d)
        Unit vectors.
    C, epsilon, sensitivity
        As in :func:`bingham_parameter`.
    rule : {"kgm", "library"}
    n_nodes : int
        Quadrature size for the normalising constant.
    """
    rule = _check_rule(rule)
    A = bingham_parameter(C, epsilon, sensitivity)
    U = _check_points(U, A.shape[0])
    nodes, weights = _checked_nodes(A.shape[0], n_nodes)
    log_f = _unnormalised_log_density(nodes, A, rule)
    shift = log_f.max()
    log_z = shift + np.log(weights @ np.exp(log_f - shift))
    return _unnormalised_log_density(U, A, rule) - log_z


def _loss_on_points(C, C_prime, epsilon, sensitivity, rule, n_nodes) -> tuple[np.ndarray, np.ndarray]:
    """The evaluated points (quadrature nodes; the eigenvectors of C and C', both signs) and the loss at each."""
    C = _check_symmetric(C, "C")
    C_prime = _check_symmetric(C_prime, "C_prime")
    if C.shape != C_prime.shape:
        raise ValueError(f"C and C_prime must have the same shape, got {C.shape} and {C_prime.shape}")
    nodes, _ = _checked_nodes(C.shape[0], n_nodes)
    axes = np.concatenate([np.linalg.eigh(C)[1].T, np.linalg.eigh(C_prime)[1].T])
    U = np.concatenate([nodes, axes, -axes])
    diff = np.abs(
        log_density(U, C, epsilon, sensitivity=sensitivity, rule=rule, n_nodes=n_nodes)
        - log_density(U, C_prime, epsilon, sensitivity=sensitivity, rule=rule, n_nodes=n_nodes)
    )
    return U, diff


def privacy_loss(
    C, C_prime, epsilon, *, sensitivity=1.0, rule: str = "kgm", n_nodes: int = 200
) -> tuple[float, np.ndarray]:
    """Exact ``max_u |log p_C(u) - log p_C'(u)|`` over the quadrature nodes and the eigenvectors of C, C'.

    For the output densities of a sampler with ``rule`` (see :func:`log_density`), ``d = 2, 3``.
    The maximum over these points is a lower bound on the privacy loss (the sup over the
    sphere); the eigenvectors are added because the maximum sits on one in diagonal examples.
    A value above ``epsilon`` for neighbouring ``C, C'`` refutes ``epsilon``-DP: the densities
    are continuous, so a small cap around the maximiser is an event whose probabilities differ
    by more than ``e^epsilon``.

    Returns
    -------
    loss : float
    argmax : ndarray, shape (d,)
        The point where the loss is attained.
    """
    U, diff = _loss_on_points(C, C_prime, epsilon, sensitivity, rule, n_nodes)
    i = int(np.argmax(diff))
    return float(diff[i]), U[i]


def second_moments(C, epsilon, *, sensitivity=1.0, rule: str = "kgm", n_nodes: int = 200) -> np.ndarray:
    """``E[u u^T]`` under the output density of a sampler with ``rule`` (quadrature, d = 2, 3)."""
    rule = _check_rule(rule)
    A = bingham_parameter(C, epsilon, sensitivity)
    nodes, weights = _checked_nodes(A.shape[0], n_nodes)
    log_f = _unnormalised_log_density(nodes, A, rule)
    f = weights * np.exp(log_f - log_f.max())
    return np.einsum("p,pi,pj->ij", f, nodes, nodes) / f.sum()


def acceptance_rate(
    C,
    epsilon,
    *,
    sensitivity=1.0,
    rule: str = "kgm",
    n_nodes: int = 200,
    n_proposals: int | None = None,
    random_state=None,
) -> float:
    """Probability that one ACG proposal is accepted under ``rule``; its inverse is the proposals per draw.

    ``E_ACG[a(u)] = E_uniform[|Omega|^{1/2} (u^T Omega u)^{-q/2} a(u)]``, ``a`` the acceptance
    probability of :func:`log_acceptance`: exact by quadrature for ``d = 2, 3``; for larger
    ``d`` (or when ``n_proposals`` is given) the Monte Carlo mean of ``a`` over ``n_proposals``
    draws of :func:`acg_proposals`.
    """
    rule = _check_rule(rule)
    A = bingham_parameter(C, epsilon, sensitivity)
    q = A.shape[0]
    if n_proposals is not None or q > 3:
        if n_proposals is None:
            raise ValueError(f"d = {q} > 3 has no quadrature here; pass n_proposals for a Monte Carlo estimate")
        U = acg_proposals(A, check_integer(n_proposals, "n_proposals"), random_state=random_state)
        return float(np.mean(np.exp(log_acceptance(U, A, rule))))
    _, omega, _ = acg_envelope(A)
    nodes, weights = _checked_nodes(q, n_nodes)
    log_acg = 0.5 * np.linalg.slogdet(omega)[1] - q / 2 * np.log(_quad(nodes, omega))
    return float(weights @ np.exp(log_acg + log_acceptance(nodes, A, rule)))


def library_rate_bounds(A) -> tuple[float, float]:
    """Bounds on the log acceptance rate of the libraries' rule in any dimension: ``(log_low, log_high)``.

    The rate of one proposal (D5) is ``r = |Omega|^{1/2} / M * E[exp(-y) (1 + 2 y / b)^{-q}]`` with
    ``y = u^T A u``, ``u`` uniform on the sphere (``u^T Omega u = 1 + 2 y / b``), so the expected number
    of proposals per draw is ``1 / r``; where ``r`` is far below ``1e-3`` a Monte Carlo mean cannot
    give it. Two bounds that hold in every dimension:

    * below, Jensen's inequality twice (``exp`` and ``-q log(1 + 2 y / b)`` are convex) with the
      exact ``E[y] = tr(A) / q``: ``log r >= log(|Omega|^{1/2} / M) - E[y] - q log(1 + 2 E[y] / b)``;
    * above, ``(1 + 2y/b)^{-q} = Gamma(q)^{-1} int_0^inf t^{q-1} exp(-t (1 + 2y/b)) dt`` turns the
      mean into ``int Gamma(q, 1)(dt) Z(c_t A)`` with ``c_t = 1 + 2t/b`` and ``Z(B) = E[exp(-u^T B u)]``,
      and KGM's envelope bounds ``Z(B) <= min(1, M_B |Omega_B|^{-1/2})`` (its own ``b`` for each
      ``B``, :func:`dpnb.numerics.bingham.acg_shape`). The ``t`` integral is a trapezoid rule on
      ``[0, T]`` (4,001 points; the integrand is smooth and unimodal) plus the Gamma tail beyond
      ``T = q + 40 sqrt(q) + 50`` (where ``Z <= 1``).

    One pass over the 4,001 points, each ``O(q)`` after the eigendecomposition of ``A`` (``O(q^3)``).

    Parameters
    ----------
    A : array_like, shape (q, q)
        Symmetric PSD with smallest eigenvalue 0 (:func:`bingham_parameter`).

    Returns
    -------
    log_low, log_high : float
        Natural logs of a lower and an upper bound on the acceptance rate; ``-log_high`` and
        ``-log_low`` bound the log of the expected proposals per draw.

    Examples
    --------
    >>> A = bingham_parameter(np.diag([51.0, 47.0, 19.0]), 1.0)
    >>> low, high = library_rate_bounds(A)
    >>> bool(low <= np.log(acceptance_rate(np.diag([51.0, 47.0, 19.0]), 1.0, rule="library")) <= high)
    True
    """
    from scipy.special import gammaincc, gammaln, logsumexp

    b, _, log_m = acg_envelope(A)  # validates A
    a = np.maximum(np.linalg.eigvalsh(A), 0.0)
    q = a.size
    log_front = 0.5 * np.log1p(2 * a / b).sum() - log_m
    mean_y = a.sum() / q
    log_low = log_front - mean_y - q * np.log1p(2 * mean_y / b)
    t = np.linspace(0.0, q + 40 * np.sqrt(q) + 50, 4001)[1:]
    scaled = (1 + 2 * t[:, None] / b) * a[None, :]
    b_t, log_m_t = acg_shape(scaled)
    log_z = np.minimum(log_m_t - 0.5 * np.log1p(2 * scaled / b_t[:, None]).sum(axis=1), 0.0)
    log_f = (q - 1) * np.log(t) - t - gammaln(q) + log_z
    step = t[1] - t[0]
    weights = np.full(t.size, step)
    weights[-1] = step / 2  # trapezoid; the integrand is 0 at t = 0
    log_integral = np.logaddexp(logsumexp(log_f, b=weights), np.log(gammaincc(q, t[-1])))
    return float(log_low), float(log_front + log_integral)


def log_density_query(epsilon, *, d: int = 3, sensitivity=1.0, rule: str = "kgm", n_nodes: int = 60) -> Callable:
    """A query ``X -> log p_{X^T X}`` on fixed quadrature nodes, for :func:`dpnb.privacy.audit.search_sensitivity`.

    With ``norm="inf"`` the searched "sensitivity" of this query is the privacy loss over the
    nodes, so the search looks for the neighbouring datasets (rows in the unit ball) that
    maximise it. The query also takes a stack of datasets, shape ``(m, n, d)``, and returns shape
    ``(m, P)`` (:func:`dpnb.privacy.audit.search_sensitivity_batched`); its values are those of
    :func:`log_density` at the nodes.
    """
    epsilon = check_epsilon(epsilon, allow_infinite=False)
    sensitivity = check_positive(sensitivity, "sensitivity")
    rule = _check_rule(rule)
    nodes, weights = _checked_nodes(d, n_nodes)
    scale = epsilon / (4 * sensitivity)

    def query(X):
        X = np.asarray(X, dtype=float)
        if X.ndim not in (2, 3) or X.shape[-1] != nodes.shape[1]:
            raise ValueError(f"X must have shape (n, {nodes.shape[1]}) or (m, n, {nodes.shape[1]}), got {X.shape}")
        C = np.einsum("...ni,...nj->...ij", X, X).reshape(-1, nodes.shape[1], nodes.shape[1])
        out = _stacked_log_density((C + np.swapaxes(C, 1, 2)) / 2, scale, rule, nodes, weights)
        return out if X.ndim == 3 else out[0]

    return query


# --------------------------------------------------------------------------------------
# The check a maintainer can run on any sampler
# --------------------------------------------------------------------------------------
def compare_sampler(
    sampler: Callable, C, epsilon, n_draws: int, *, sensitivity=1.0, confidence: float = 0.99, n_nodes: int = 200
) -> dict:
    """Check a top-eigenvector sampler against the intended and the libraries' densities (d = 2, 3).

    Calls ``sampler(C)`` until ``n_draws`` unit vectors are collected (a call may return one
    vector, shape ``(d,)``, or several, shape ``(m, d)``), then compares ``E[(e_i^T u)^2]`` for
    each eigenvector ``e_i`` of ``C`` with its value under :func:`second_moments` for both
    rules, using Student-t intervals at ``confidence`` with a Bonferroni correction over the
    ``d`` coordinates.

    Parameters
    ----------
    sampler : callable
        ``sampler(C) -> ndarray``, e.g. ``diffprivlib.mechanisms.Bingham(epsilon=...).randomise``.
    C, epsilon, sensitivity
        The input and the parameters the sampler was built with (density
        ``exp(epsilon u^T C u / (4 sensitivity))`` intended).
    n_draws : int
        Draws to collect, >= 2.

    Returns
    -------
    dict with keys ``mean``, ``low``, ``high`` (arrays over coordinates, eigenvalues of C in
    decreasing order), ``intended``, ``library`` (quadrature values) and ``matches_intended``,
    ``matches_library`` (every reference value inside its interval).
    """
    if not callable(sampler):
        raise TypeError(f"sampler must be callable C -> unit vector(s), got {type(sampler).__name__}")
    C = _check_symmetric(C, "C")
    n_draws = check_integer(n_draws, "n_draws", minimum=2)
    confidence = check_fraction(confidence, "confidence", low_open=True)
    d = C.shape[0]
    draws, collected = [], 0
    while collected < n_draws:
        u = np.atleast_2d(np.asarray(sampler(C), dtype=float))
        if u.ndim != 2 or u.shape[1] != d:
            raise ValueError(f"sampler must return unit vectors of length {d}, got shape {u.shape}")
        draws.append(u)
        collected += u.shape[0]
    U = _check_points(np.concatenate(draws)[:n_draws], d)
    E = np.linalg.eigh(C)[1][:, ::-1]
    coords = (U @ E) ** 2
    stats = np.array([mean_ci(coords[:, i], 1 - (1 - confidence) / d) for i in range(d)])
    refs = {
        rule: np.diag(E.T @ second_moments(C, epsilon, sensitivity=sensitivity, rule=rule, n_nodes=n_nodes) @ E)
        for rule in RULES
    }
    low, high = stats[:, 1], stats[:, 2]
    return {
        "mean": stats[:, 0],
        "low": low,
        "high": high,
        "intended": refs["kgm"],
        "library": refs["library"],
        "matches_intended": bool(np.all((low <= refs["kgm"]) & (refs["kgm"] <= high))),
        "matches_library": bool(np.all((low <= refs["library"]) & (refs["library"] <= high))),
    }


def privacy_loss_maximisers(
    C, C_prime, epsilon, *, sensitivity=1.0, rule: str = "kgm", n_nodes: int = 200
) -> tuple[float, np.ndarray]:
    """The privacy loss of :func:`privacy_loss` and *every* point that attains it, up to round-off.

    The loss is evaluated on the same points as :func:`privacy_loss` (the quadrature nodes and
    the eigenvectors of ``C`` and ``C'``, both signs). Where two points tie (``C = diag(3, 2, 0)``
    against ``diag(2, 3, 0)`` attains the same loss at ``e1`` and ``e2``), ``privacy_loss``'s
    single argmax is whichever round-off happens to favour, which differs between CPUs; this
    returns the tied set by the package's tie rule, :func:`dpnb.numerics.evaluation.tied_with_best`
    (exact values, tied within ``1e-9`` relative).

    Returns
    -------
    loss : float
        The largest ``|log p_C(u) - log p_C'(u)|`` over the points.
    points : ndarray, shape (m, d)
        The tied maximisers, each once: the densities are even (``p(u) = p(-u)``), so ``u`` and
        ``-u`` are one point, given with its first nonzero coordinate positive; in the order of
        the evaluated points.
    """
    U, diff = _loss_on_points(C, C_prime, epsilon, sensitivity, rule, n_nodes)
    tied = U[tied_with_best(diff)]
    lead = np.argmax(np.abs(tied) > 1e-12, axis=1)  # first coordinate that is not zero (a unit vector has one)
    tied = tied * np.sign(tied[np.arange(len(tied)), lead])[:, None]
    kept = []
    for point in tied:  # merge u and -u, and an eigenvector listed for both C and C'
        if not any(np.allclose(point, other, rtol=0.0, atol=1e-9) for other in kept):
            kept.append(point)
    return float(diff.max()), np.array(kept)
