"""The library-samplers chapter's audit plumbing: its pairs, tied maximisers as text, intervals, release audits.

The worked pair ``C = diag(51, 47, 19)`` against ``diag(50, 48, 19)`` (one ``e_1`` of 117 rows
replaced by ``e_2``) is where diffprivlib's and OpenDP's Bingham samplers exceed their stated
``epsilon`` (:mod:`dpnb.papers.library_samplers`); the pair with two tied top eigenvalues starts the
searches; the whole release of :mod:`dpnb.papers.library_pca` is audited by sampling beyond
``d = 3``.
"""

from __future__ import annotations

import numpy as np

from dpnb.ground.validation import check_array, check_integer
from dpnb.numerics.evaluation import Interval
from dpnb.papers.library_pca import release_log_ratio, sample_release
from dpnb.privacy.audit import audit_epsilon

WORKED_EIGENVALUES = (51.0, 47.0, 19.0)


def worked_pair(n_features: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """The worked pair ``diag(51, 47, 19)`` and ``diag(50, 48, 19)``, padded with ``d - 3`` empty coordinates."""
    pad = [0.0] * (check_integer(n_features, "n_features", minimum=3) - 3)
    return np.diag([*WORKED_EIGENVALUES, *pad]), np.diag([50.0, 48.0, 19.0, *pad])


def tied_top_pair(n_rows: int, n_features: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows cycling through ``e_1, ..., e_d`` (tied top eigenvalues), and the same with row 0 replaced by ``e_2``."""
    n = check_integer(n_rows, "n_rows")
    d = check_integer(n_features, "n_features", minimum=2)
    X = np.eye(d)[np.arange(n) % d]
    X_prime = X.copy()
    X_prime[0] = np.eye(d)[1]
    return X, X_prime


def axis_names(points) -> str:
    """Points on the sphere as text, signs dropped: ``e1``, ``e2``, ... for coordinate axes, else ``(|u_1|, ...)``.

    Each distinct name once, sorted, so that a tied set prints the same on every machine.
    """
    points = check_array(points, name="points")
    names = set()
    for point in np.abs(points):
        axis = np.flatnonzero(np.isclose(point, 1.0, rtol=0.0, atol=1e-9))
        names.add(f"e{axis[0] + 1}" if axis.size else "(" + ", ".join(f"{v:.3f}" for v in point) + ")")
    return ", ".join(sorted(names))


def moment_intervals(result: dict, n_draws: int, confidence: float) -> list[Interval]:
    """The intervals of ``E[u_i^2]`` in a :func:`~dpnb.papers.library_samplers.compare_sampler` result, one per axis.

    ``confidence`` is the family's level; each interval is at the Bonferroni level
    ``1 - (1 - confidence) / d`` the comparison used.
    """
    missing = {"mean", "low", "high"} - set(result)
    if missing:
        raise ValueError(f"result lacks {sorted(missing)}; pass what compare_sampler returns")
    n_draws = check_integer(n_draws, "n_draws", minimum=2)
    level = 1 - (1 - confidence) / len(result["mean"])
    return [
        Interval(float(m), float(lo), float(hi), n_draws, level)
        for m, lo, hi in zip(result["mean"], result["low"], result["high"], strict=True)
    ]


def audit_whole_release(
    n_features: int, library: str, epsilon: float, *, n_samples: int, confidence: float, random_state, noise_factor=1.0
):
    """:func:`dpnb.privacy.audit.audit_epsilon` of ``library``'s one-component release on :func:`worked_pair`.

    The event is a level set of :func:`dpnb.papers.library_pca.release_log_ratio` (the most powerful
    one); ``noise_factor=0.5`` is the under-noised negative control.

    Returns
    -------
    dpnb.privacy.audit.EpsilonAudit
    """
    C, C_prime = worked_pair(n_features)
    return audit_epsilon(
        lambda D, rng, size: sample_release(D, epsilon, library, size, noise_factor=noise_factor, random_state=rng),
        C,
        C_prime,
        n_samples=n_samples,
        claimed=epsilon,
        alpha=1 - confidence,
        batched=True,
        statistic=release_log_ratio(C, C_prime, epsilon, library, noise_factor=noise_factor),
        random_state=random_state,
    )
