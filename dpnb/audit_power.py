"""A statistical epsilon audit that reaches into the tails, for audits that must detect small violations.

:func:`dpnb.audit.audit_epsilon` chooses its event ``{s > t}`` among thresholds between the 1% and
99% quantiles of the statistic. For an ``(epsilon, delta)`` mechanism with a small ``delta`` (a
Gaussian release), the events that show a violation have a probability far below 1%: a release
with half the noise it needs is not flagged at any sample size by events of probability 1% or
more. :func:`audit_epsilon_tails` takes the statistic's values on many runs (drawn by the caller,
vectorised) and searches thresholds down to the tail where ``min_count`` runs of the selection half
remain, so its power grows with the sample size. The bound stays valid for the same reason as
``audit_epsilon``'s: the event is chosen on one half of the runs and evaluated on the other.
"""

from __future__ import annotations

import numpy as np

from .audit import EpsilonAudit, threshold_audit
from .validation import check_array, check_delta, check_integer


def audit_epsilon_tails(
    scores,
    scores_prime,
    *,
    claimed: float | None = None,
    delta: float = 0.0,
    alpha: float = 0.05,
    min_count: int = 20,
    n_thresholds: int = 100,
) -> EpsilonAudit:
    """One-sided lower confidence bound on epsilon from a scalar statistic of runs on a neighbouring pair.

    The first half of each sample selects the event ``{s > t}`` or ``{s < t}`` (and which dataset is
    in the numerator) maximising a plug-in epsilon, over thresholds at tail probabilities from
    ``min_count / m`` to 1/2 (log-spaced, both tails, ``m`` the half size); the second half evaluates
    it: with Clopper-Pearson bounds at level ``1 - alpha/2`` each,
    ``epsilon >= log((P_lower[S] - delta) / P_upper[S'])`` holds with probability at least
    ``1 - alpha``.

    Parameters
    ----------
    scores, scores_prime : array_like of shape (n_samples,)
        The statistic on independent runs of the mechanism on ``X`` and on ``X'`` (same size,
        ``n_samples >= 4 * min_count``).
    claimed : float, optional
        Advertised epsilon, for :attr:`dpnb.audit.EpsilonAudit.violates`.
    delta : float
        Advertised delta (0 for pure DP).
    alpha : float
        One minus the confidence level of the bound.
    min_count : int
        Fewest selection-half runs of the pooled statistic beyond a threshold (>= 1).
    n_thresholds : int
        Thresholds per tail (>= 1).

    Returns
    -------
    dpnb.audit.EpsilonAudit
    """
    s = check_array(scores, ndim=1, name="scores")
    s_prime = check_array(scores_prime, ndim=1, name="scores_prime")
    if s.shape != s_prime.shape:
        raise ValueError(f"scores and scores_prime must have the same length, got {s.size} and {s_prime.size}")
    min_count = check_integer(min_count, "min_count")
    n_thresholds = check_integer(n_thresholds, "n_thresholds")
    if s.size < 4 * min_count:
        raise ValueError(f"need at least 4 * min_count = {4 * min_count} runs per dataset, got {s.size}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    if delta != 0:
        delta = check_delta(delta)
    half = s.size // 2
    sel, ev = (s[:half], s_prime[:half]), (s[half:], s_prime[half:])
    pooled = np.sort(np.concatenate(sel))
    tails = np.geomspace(min_count / pooled.size, 0.5, n_thresholds)
    thresholds = np.unique(np.concatenate([np.quantile(pooled, tails), np.quantile(pooled, 1 - tails)]))
    return threshold_audit(sel, ev, thresholds, claimed=claimed, delta=delta, alpha=alpha)
