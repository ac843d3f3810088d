"""The privacy of two libraries' whole PCA releases on a replace-one pair, computed exactly (d = 2, 3).

:mod:`dpnb.papers.library_samplers` audits the eigenvector sampler alone. A user of the libraries gets
more than one vector: each PCA release composes an eigenvalue step, one eigenvector step per
component and, when the data's centre is not declared, a private mean. As read from the installed
sources (``k`` = ``n_components``, total budget ``epsilon``, rows clipped to ``norm`` = 1, so
``C = X^T X`` and a replaced row moves ``u^T C u`` by at most 1):

* **diffprivlib 0.6.6** ``models.PCA(epsilon, data_norm=1, centered=True)`` calls
  ``models/utils.py`` ``covariance_eig``: ``epsilon_0 = epsilon / (k + [k < d])``; *every* eigenvalue
  of ``C`` (all ``d``, in descending order) gets ``LaplaceBoundedDomain(epsilon_0, lower=0,
  upper=inf, sensitivity=2)``, a Laplace law truncated to ``[0, inf)`` and renormalised, with the
  scale ``s`` that solves ``epsilon_0 = 2 / s + log(2 - exp(-2 / s))`` (its ``_find_scale`` for an
  infinite domain); then ``k`` ``Bingham(epsilon_0)`` draws with deflation (the ``d``-th vector is
  free). ``centered=False`` adds a private mean at ``epsilon / 2`` and halves the rest.
* **OpenDP 0.16.0** ``make_private_pca`` (``extras/sklearn/decomposition``): with the centre declared
  in the input domain, ``epsilon / 2`` for the eigenvalues (``np.linalg.eigvalsh`` of ``C`` plus a
  Laplace vector of scale ``s``, the smallest with ``2 / s <= epsilon / 2``: L1 sensitivity 2 at
  ``d_in = 2``) and ``epsilon / 2`` split over ``min(k, d - 1)`` eigenvectors
  (``make_private_eigenvector``); with the centre unknown, thirds, the first for a private mean
  (``make_private_np_mean``: rows clamped to L1 norm 1, Laplace of scale ``s_m`` on the mean with
  ``2 / (n s_m) = epsilon / 3``), after which the rows are centred at the released mean and clamped
  to the L2 ball around it.

The steps draw independent noise given the data, so the log density ratio of a whole release is the
sum of the steps' ratios, and the privacy loss of a pair is the largest sum, in either direction.
For Laplace noise the eigenvalue part is a closed form; for the eigenvector the densities of
:mod:`dpnb.papers.library_samplers` (``rule="library"``: what the libraries sample; ``rule="kgm"``: the
corrected sampler substituted) on a sphere quadrature. :func:`release_loss_query` folds both into one
vector-valued query whose sup-norm distance is the whole release's loss, so
:func:`dpnb.privacy.audit.search_sensitivity` can search over pairs.

Only ``k = 1`` is computed exactly (``k >= 2`` needs the joint law of deflated draws); the
eigenvalue attributes a PCA object exposes are post-processings of the released vector, so its
loss is at most the one computed here, and at least the eigenvector step's alone.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy.optimize import brentq

from dpnb.ground.validation import check_choice, check_epsilon, check_integer, check_positive, check_square
from dpnb.papers.library_samplers import RULES, _checked_nodes, _stacked_log_density, log_density

LIBRARIES = ("diffprivlib", "opendp")


def _check_library(library) -> str:
    return check_choice(library, "library", LIBRARIES)


def _check_rule(rule) -> str:
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    return rule


def bounded_laplace_scale(epsilon, sensitivity=2.0) -> float:
    """Scale of diffprivlib's ``LaplaceBoundedDomain`` on ``[0, inf)``: the root of
    ``epsilon = sensitivity / s + log(2 - exp(-sensitivity / s))``.

    The truncated, renormalised Laplace law ``exp(-|y - lam| / s) / (s (2 - exp(-lam / s)))`` on
    ``y >= 0`` moves its normaliser as well as its exponent, so the scale is larger than
    ``sensitivity / epsilon``. The right-hand side increases in ``x = sensitivity / s`` from 0 to
    infinity, so the root is unique.
    """
    epsilon = check_epsilon(epsilon, allow_infinite=False)
    sensitivity = check_positive(sensitivity, "sensitivity")
    x = brentq(lambda x: x + math.log(2.0 - math.exp(-x)) - epsilon, 1e-300, epsilon, xtol=1e-15, rtol=1e-15)
    return sensitivity / x


def release_budgets(epsilon, library: str, n_features: int, *, centre_known: bool = True) -> dict:
    """The budget split of a one-component PCA (``k = 1``) of ``library``, as its source computes it.

    Returns
    -------
    dict
        ``eigenvalue_scale`` (Laplace scale of each eigenvalue), ``truncated`` (diffprivlib's law on
        ``[0, inf)``), ``vector_epsilon`` (the eigenvector sampler's epsilon), ``mean_epsilon``
        (``None`` when the centre is known) and ``stated`` (the total the library declares).
    """
    epsilon = check_epsilon(epsilon, allow_infinite=False)
    library = _check_library(library)
    d = check_integer(n_features, "n_features", minimum=2)
    if library == "diffprivlib":
        share = epsilon if centre_known else epsilon / 2  # covariance_eig's budget
        eps0 = share / (1 + (1 < d))  # epsilon / (dims + (dims != n_features)) with dims = 1
        return {
            "eigenvalue_scale": bounded_laplace_scale(eps0, 2.0),
            "truncated": True,
            "vector_epsilon": eps0,
            "mean_epsilon": None if centre_known else epsilon / 2,
            "stated": epsilon,
        }
    parts = 2 if centre_known else 3  # _split_pca_epsilon_evenly
    return {
        "eigenvalue_scale": 2.0 / (epsilon / parts),
        "truncated": False,
        "vector_epsilon": epsilon / parts,
        "mean_epsilon": None if centre_known else epsilon / parts,
        "stated": epsilon,
    }


def _eigenvalue_terms(lam, scale, truncated, signs):
    """Per dataset, the eigenvalue part of the log density at the worst outputs: ``signs @ lam / s - log Z``."""
    out = np.einsum("sd,md->ms", signs, lam) / scale
    if truncated:  # log of diffprivlib's normaliser 2 - exp(-lam / s) (the s is common and cancels)
        out = out - np.log(2.0 - np.exp(-np.maximum(lam, 0.0) / scale)).sum(axis=1, keepdims=True)
    return out


def eigenvalue_loss(lam, lam_prime, scale, *, truncated: bool = False) -> tuple[float, float]:
    """Exact ``sup_y log p(y) / p'(y)`` and ``sup_y log p'(y) / p(y)`` of the noisy eigenvalue vector.

    Each eigenvalue gets independent Laplace noise of ``scale`` (``truncated=True``: diffprivlib's
    law on ``[0, inf)``, normaliser ``s (2 - exp(-lam / s))``). For one coordinate
    ``sup_y (|y - lam'| - |y - lam|) = |lam - lam'|`` (attained at some ``y >= 0``), so the
    forward loss is ``sum_i |lam_i - lam'_i| / s + log Z(lam'_i) - log Z(lam_i)``, and the
    backward one swaps the normalisers.
    """
    lam, lam_prime = (np.asarray(v, dtype=float).ravel() for v in (lam, lam_prime))
    if lam.shape != lam_prime.shape:
        raise ValueError(f"lam and lam_prime must have the same length, got {lam.size} and {lam_prime.size}")
    scale = check_positive(scale, "scale")
    shift = np.abs(lam - lam_prime).sum() / scale
    if not truncated:
        return float(shift), float(shift)
    log_z = np.log(2.0 - np.exp(-np.maximum(lam, 0.0) / scale)).sum()
    log_z_prime = np.log(2.0 - np.exp(-np.maximum(lam_prime, 0.0) / scale)).sum()
    return float(shift + log_z_prime - log_z), float(shift + log_z - log_z_prime)


def vector_loss(C, C_prime, epsilon, *, rule: str = "library", n_nodes: int = 200) -> tuple[float, float]:
    """``max_u log p_C(u) / p_C'(u)`` and its reverse for the eigenvector sampler (``d = 2, 3``).

    Over the quadrature nodes and the eigenvectors of both matrices, as
    :func:`dpnb.papers.library_samplers.privacy_loss`, but keeping the direction, which the sum with the
    eigenvalue part needs.
    """
    C, C_prime = check_square(C, "C"), check_square(C_prime, "C_prime")
    if C.shape != C_prime.shape:
        raise ValueError(f"C and C_prime must have the same shape, got {C.shape} and {C_prime.shape}")
    nodes, _ = _checked_nodes(C.shape[0], n_nodes)
    axes = np.concatenate([np.linalg.eigh(C)[1].T, np.linalg.eigh(C_prime)[1].T])
    U = np.concatenate([nodes, axes])  # the densities are even: -axes add nothing
    ratio = log_density(U, C, epsilon, rule=_check_rule(rule), n_nodes=n_nodes) - log_density(
        U, C_prime, epsilon, rule=rule, n_nodes=n_nodes
    )
    return float(ratio.max()), float(-ratio.min())


def release_loss(C, C_prime, epsilon, library: str, *, rule: str = "library", n_nodes: int = 200) -> dict:
    """Exact privacy loss of ``library``'s one-component PCA release on the pair ``C = X^T X``, ``C'``.

    The centre is declared (diffprivlib ``centered=True``, OpenDP with ``origin`` in the domain), so
    the release is (eigenvalues, top eigenvector). ``rule="kgm"`` substitutes the corrected sampler.

    Returns
    -------
    dict
        ``eigenvalues`` and ``vector`` (each step's own loss, the larger direction), ``total`` (the
        whole release's loss: the larger of the two directions' sums) and ``stated`` (``epsilon``).
    """
    C, C_prime = check_square(C, "C"), check_square(C_prime, "C_prime")
    budget = release_budgets(epsilon, library, C.shape[0])
    lam = np.sort(np.linalg.eigvalsh((C + C.T) / 2))
    lam_prime = np.sort(np.linalg.eigvalsh((C_prime + C_prime.T) / 2))
    eig = eigenvalue_loss(lam, lam_prime, budget["eigenvalue_scale"], truncated=budget["truncated"])
    vec = vector_loss(C, C_prime, budget["vector_epsilon"], rule=rule, n_nodes=n_nodes)
    return {
        "eigenvalues": max(eig),
        "vector": max(vec),
        "total": max(eig[0] + vec[0], eig[1] + vec[1]),
        "stated": budget["stated"],
    }


def centred_release_loss(X, X_prime, epsilon, *, rule: str = "library", n_nodes: int = 200) -> dict:
    """A lower bound, exact at the outputs it uses, on the loss of OpenDP's PCA when the centre is unknown.

    OpenDP releases a mean (Laplace of scale ``s_m`` on the mean of the rows clamped to L1 norm 1),
    then centres the rows at it, clamps them to the unit L2 ball around it, and releases eigenvalues
    and the top eigenvector of the centred ``C(m)``. The mean's log ratio attains its maximum
    ``||mu - mu'||_1 / s_m`` on the whole region of ``m`` on ``mu``'s side of ``mu'`` in every
    coordinate, ``m = mu`` included, so at ``m = mu`` the release's ratio is that maximum plus the
    eigen steps' ratio on ``(C(mu), C'(mu))``; the reverse direction uses ``m = mu'``. Rows of ``X``
    must lie in the unit L1 ball (then the mean's clamp does nothing) and ``X, X'`` differ in one row.

    Returns
    -------
    dict
        ``mean`` (the mean step's loss), ``rest`` (eigen steps at the chosen ``m``, per direction),
        ``total`` (the lower bound), ``stated`` (``epsilon``).
    """
    X, X_prime = (np.asarray(v, dtype=float) for v in (X, X_prime))
    if X.ndim != 2 or X.shape != X_prime.shape:
        raise ValueError(f"X and X_prime must be 2-d with the same shape, got {X.shape} and {X_prime.shape}")
    if np.count_nonzero(np.any(X != X_prime, axis=1)) != 1:
        raise ValueError("X and X_prime must differ in exactly one row (a replace-one pair)")
    if np.abs(X).sum(axis=1).max() > 1 + 1e-12 or np.abs(X_prime).sum(axis=1).max() > 1 + 1e-12:
        raise ValueError("rows must lie in the unit L1 ball (the mean step clamps them there)")
    n, d = X.shape
    budget = release_budgets(epsilon, "opendp", d, centre_known=False)
    mean_scale = 2.0 / (n * budget["mean_epsilon"])
    mu, mu_prime = X.mean(axis=0), X_prime.mean(axis=0)
    mean_loss = float(np.abs(mu - mu_prime).sum() / mean_scale)

    def eigen_steps(m):
        def centred(Z):
            Z = Z - m
            norms = np.linalg.norm(Z, axis=1, keepdims=True)
            Z = Z / np.maximum(norms, 1.0)
            return Z.T @ Z

        C, C_prime = centred(X), centred(X_prime)
        lam, lam_prime = np.linalg.eigvalsh(C), np.linalg.eigvalsh(C_prime)
        eig = eigenvalue_loss(lam, lam_prime, budget["eigenvalue_scale"])
        vec = vector_loss(C, C_prime, budget["vector_epsilon"], rule=rule, n_nodes=n_nodes)
        return eig, vec

    # the forward ratio log p / p' of the mean is at its maximum at m = mu (and beyond it), the backward at mu'
    eig_f, vec_f = eigen_steps(mu)
    eig_b, vec_b = eigen_steps(mu_prime)
    rest = (eig_f[0] + vec_f[0], eig_b[1] + vec_b[1])
    return {"mean": mean_loss, "rest": rest, "total": mean_loss + max(rest), "stated": budget["stated"]}


def release_loss_query(epsilon, library: str, *, d: int = 3, rule: str = "library", n_nodes: int = 60):
    """A query whose sup-norm distance between two datasets is the whole release's loss (centre known, k = 1).

    For the pair ``(X, X')`` the release's log ratio at the worst outputs is
    ``max over nodes u and sign vectors t`` of ``q(X)[u, t] - q(X')[u, t]`` with
    ``q(X)[u, t] = log p_{X^T X}(u) + t . lam(X) / s - sum_i log Z(lam_i)`` (the last term only for
    diffprivlib's truncated law): the eigenvalue part's sup over ``y`` picks the side of each
    coordinate, i.e. a sign. The reverse direction is the same maximum with ``-t``, so
    ``||q(X) - q(X')||_inf`` is the loss. Takes ``(n, d)`` or a stack ``(m, n, d)``
    (:func:`dpnb.privacy.audit.search_sensitivity_batched`).
    """
    d = check_integer(d, "d", minimum=2)
    budget = release_budgets(epsilon, library, d)
    nodes, weights = _checked_nodes(d, n_nodes)
    signs = np.array(list(itertools.product((-1.0, 1.0), repeat=d)))
    vector_scale = budget["vector_epsilon"] / 4  # Bingham's exp(epsilon u^T C u / 4), sensitivity 1
    rule = _check_rule(rule)

    def query(X):
        X = np.asarray(X, dtype=float)
        if X.ndim not in (2, 3) or X.shape[-1] != d:
            raise ValueError(f"X must have shape (n, {d}) or (m, n, {d}), got {X.shape}")
        C = np.einsum("...ni,...nj->...ij", X, X).reshape(-1, d, d)
        C = (C + np.swapaxes(C, 1, 2)) / 2
        vec = _stacked_log_density(C, vector_scale, rule, nodes, weights)  # (m, P)
        eig = _eigenvalue_terms(np.linalg.eigvalsh(C), budget["eigenvalue_scale"], budget["truncated"], signs)
        out = (vec[:, :, None] + eig[:, None, :]).reshape(C.shape[0], -1)
        return out if X.ndim == 3 else out[0]

    return query


def sample_release(C, epsilon, library: str, size: int, *, rule: str = "library", noise_factor=1.0, random_state=None):
    """Draws of ``library``'s one-component release (centre declared) on ``C``, for any ``d``.

    Each row is the noisy eigenvalue vector (ascending) followed by the top eigenvector: the
    eigenvalues get the library's Laplace noise (diffprivlib's truncated to ``[0, inf)`` by redrawing
    negatives, its sampler's method), the vector comes from :func:`dpnb.papers.library_samplers.acg_rejection_sample`
    with ``rule`` (``"library"`` mirrors both libraries' sampler, checked against their code in the
    notebook; ``"kgm"`` is the corrected one). ``noise_factor`` multiplies every step's noise
    (eigenvalue scale times it, eigenvector epsilon divided by it): ``0.5`` is the under-noised
    negative control of a statistical audit, whose loss is larger than the release's.

    Returns
    -------
    ndarray, shape (size, 2 d)

    Examples
    --------
    >>> import numpy as np
    >>> from dpnb.papers.library_pca import sample_release
    >>> C = np.diag([3.0, 1.0, 0.5])
    >>> draws = sample_release(C, 1.0, "diffprivlib", size=5, rule="kgm", random_state=0)
    >>> draws.shape  # per draw: 3 noisy eigenvalues, then the 3 coordinates of the top eigenvector
    (5, 6)
    """
    from dpnb.ground.validation import check_random_state
    from dpnb.papers.library_samplers import acg_rejection_sample, bingham_parameter

    C = check_square(C, "C")
    size = check_integer(size, "size")
    noise_factor = check_positive(noise_factor, "noise_factor")
    rng = check_random_state(random_state)
    budget = release_budgets(epsilon, library, C.shape[0])
    lam = np.sort(np.linalg.eigvalsh((C + C.T) / 2))
    scale = budget["eigenvalue_scale"] * noise_factor
    y = lam + rng.laplace(0.0, scale, (size, lam.size))
    if budget["truncated"]:
        bad = y < 0
        while bad.any():
            y[bad] = (lam + rng.laplace(0.0, scale, (size, lam.size)))[bad]
            bad = y < 0
    u, _ = acg_rejection_sample(
        bingham_parameter(C, budget["vector_epsilon"] / noise_factor), size, rule=_check_rule(rule), random_state=rng
    )
    return np.hstack([y, u])


def release_log_ratio(C, C_prime, epsilon, library: str, *, rule: str = "library", noise_factor=1.0):
    """The log density ratio ``log p_C / p_C'`` of a release row of :func:`sample_release`, up to a constant.

    The Neyman-Pearson statistic for a statistical audit of the pair: its upper level sets are the
    events where the ratio is largest. The eigenvalue part is exact; the eigenvector part omits the
    two normalising constants (a constant shift, which a threshold absorbs), so it is available in
    any dimension: ``-u^T A u`` for ``rule="kgm"``, ``-u^T A u - q log(u^T Omega u)`` for the libraries'.
    """
    from dpnb.papers.library_samplers import _unnormalised_log_density, bingham_parameter

    C, C_prime = check_square(C, "C"), check_square(C_prime, "C_prime")
    if C.shape != C_prime.shape:
        raise ValueError(f"C and C_prime must have the same shape, got {C.shape} and {C_prime.shape}")
    d = C.shape[0]
    rule = _check_rule(rule)
    noise_factor = check_positive(noise_factor, "noise_factor")
    budget = release_budgets(epsilon, library, d)
    scale = budget["eigenvalue_scale"] * noise_factor
    lam = np.sort(np.linalg.eigvalsh((C + C.T) / 2))
    lam_prime = np.sort(np.linalg.eigvalsh((C_prime + C_prime.T) / 2))
    A = bingham_parameter(C, budget["vector_epsilon"] / noise_factor)
    A_prime = bingham_parameter(C_prime, budget["vector_epsilon"] / noise_factor)

    def statistic(rows):
        rows = np.asarray(rows, dtype=float)
        if rows.ndim != 2 or rows.shape[1] != 2 * d:
            raise ValueError(f"rows must have shape (m, {2 * d}), got {rows.shape}")
        y, u = rows[:, :d], rows[:, d:]
        eig = (np.abs(y - lam_prime) - np.abs(y - lam)).sum(axis=1) / scale
        return eig + _unnormalised_log_density(u, A, rule) - _unnormalised_log_density(u, A_prime, rule)

    return statistic
