"""The power of statistical epsilon audits: the smallest violation one can see, and an audit of the tails.

:func:`dpnb.privacy.audit.audit_epsilon` returns a lower confidence bound on the epsilon of a mechanism on
one neighbouring pair. "Consistent with the claimed epsilon" then says little unless the audit
could have flagged a violation of a stated size. :func:`detectable_epsilon` gives that size for
the canonical tight pure-DP mechanism, a Laplace shift: a scalar statistic distributed as
``Lap(0, 1)`` on one dataset and ``Lap(epsilon_true, 1)`` on the other, whose privacy loss is
exactly ``epsilon_true``.

``audit_epsilon`` chooses its event ``{s > t}`` among thresholds between the 1% and 99% quantiles
of the statistic. For an ``(epsilon, delta)`` mechanism with a small ``delta`` (a Gaussian
release), the events that show a violation have a probability far below 1%: a release with half
the noise it needs is not flagged at any sample size by events of probability 1% or more.
:func:`audit_epsilon_tails` takes the statistic's values on many runs (drawn by the caller,
vectorised) and searches thresholds down to the tail where ``min_count`` runs of the selection half
remain, so its power grows with the sample size. The bound stays valid for the same reason as
``audit_epsilon``'s: the event is chosen on one half of the runs and evaluated on the other.
"""

from __future__ import annotations

import numpy as np
from scipy import stats as _st

from dpnb.ground.validation import check_array, check_delta, check_fraction, check_integer, check_nonnegative
from dpnb.privacy.audit import EpsilonAudit, threshold_audit


def _laplace_sf(t):
    """P(L > t) for L ~ Lap(0, 1)."""
    t = np.asarray(t, dtype=float)
    return np.where(t >= 0, 0.5 * np.exp(-np.abs(t)), 1 - 0.5 * np.exp(-np.abs(t)))


def _bound_at_quantiles(epsilon_true: float, m: int, alpha: float, delta: float, q: float) -> float:
    """The audit's lower bound at the best event {s > t}, with counts at their q-quantiles.

    The numerator's count is at its lower q-quantile and the denominator's at its upper one, so
    both are at least this favourable with probability >= q**2 (independent samples); the bound
    is increasing in the first count and decreasing in the second.
    """
    thresholds = np.linspace(-2.0, epsilon_true + np.log(m) + 2.0, 400)
    p_num, p_den = _laplace_sf(thresholds - epsilon_true), _laplace_sf(thresholds)
    k_num = _st.binom.ppf(1 - q, m, p_num)
    k_den = _st.binom.ppf(q, m, p_den)
    a = alpha / 2  # audit_epsilon: two one-sided Clopper-Pearson bounds at alpha/2 each
    low_num = np.where(k_num > 0, _st.beta.ppf(a, np.maximum(k_num, 1), m - k_num + 1), 0.0)
    high_den = np.where(k_den < m, _st.beta.ppf(1 - a, k_den + 1, np.maximum(m - k_den, 1)), 1.0)
    num = low_num - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        bounds = np.where((num > 0) & (high_den > 0), np.log(num / high_den), 0.0)
    return float(np.max(bounds))


def detectable_epsilon(
    n_samples: int, claimed: float, *, alpha: float = 0.05, delta: float = 0.0, power: float = 0.8, tol: float = 0.01
) -> float:
    """Smallest true epsilon of a Laplace shift that :func:`~dpnb.privacy.audit.audit_epsilon` flags (vs ``claimed``).

    The audit runs ``n_samples`` times per dataset and evaluates its event on the second half,
    ``m = n_samples - n_samples // 2`` runs. For a Laplace shift with loss ``epsilon_true`` the
    event ``{s > t}`` has probabilities ``P(Lap(epsilon_true, 1) > t)`` and ``P(Lap(0, 1) > t)``;
    with both counts at their ``sqrt(power)``-quantiles the audit's Clopper-Pearson bound
    ``log(P_low / P_high)`` at the best ``t`` exceeds ``claimed`` exactly when ``epsilon_true`` is
    at least the returned value. It assumes the selection half picks that best ``t`` (the audit
    chooses it from data, so its real power is somewhat lower): a negative control run at the
    returned size checks it.

    Parameters
    ----------
    n_samples : int
        Runs per dataset, as passed to ``audit_epsilon`` (>= 20).
    claimed : float
        The advertised epsilon (>= 0).
    alpha : float
        One minus the audit's confidence level, in (0, 1).
    delta : float
        The advertised delta (0 for pure DP).
    power : float
        Probability, in (0, 1), with which the counts are at least as favourable as assumed.
    tol : float
        Resolution of the returned epsilon (it is rounded up to a multiple of ``tol``).

    Returns
    -------
    float
        The smallest ``epsilon_true`` (a multiple of ``tol``) flagged; ``inf`` if none up to
        ``claimed + 50`` is.
    """
    n_samples = check_integer(n_samples, "n_samples", minimum=20)
    claimed = check_nonnegative(claimed, "claimed")
    tol = check_fraction(tol, "tol", low_open=True, high_open=False)
    alpha, power = (check_fraction(v, name, low_open=True) for v, name in ((alpha, "alpha"), (power, "power")))
    if delta != 0:
        delta = check_delta(delta)
    m = n_samples - n_samples // 2
    q = float(np.sqrt(power))

    def flags(eps):
        return _bound_at_quantiles(eps, m, alpha, delta, q) > claimed

    low, high = int(np.floor(claimed / tol)), int(np.ceil((claimed + 50.0) / tol))
    if not flags(high * tol):
        return float("inf")
    while high - low > 1:  # invariant: low*tol not flagged (a pure shift below claimed never is), high*tol flagged
        mid = (low + high) // 2
        if flags(mid * tol):
            high = mid
        else:
            low = mid
    return round(high * tol, 10)


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
        Advertised epsilon, for :attr:`dpnb.privacy.audit.EpsilonAudit.violates`.
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
    dpnb.privacy.audit.EpsilonAudit
    """
    s = check_array(scores, ndim=1, name="scores")
    s_prime = check_array(scores_prime, ndim=1, name="scores_prime")
    if s.shape != s_prime.shape:
        raise ValueError(f"scores and scores_prime must have the same length, got {s.size} and {s_prime.size}")
    min_count = check_integer(min_count, "min_count")
    n_thresholds = check_integer(n_thresholds, "n_thresholds")
    if s.size < 4 * min_count:
        raise ValueError(f"need at least 4 * min_count = {4 * min_count} runs per dataset, got {s.size}")
    check_fraction(alpha, "alpha", low_open=True)
    if delta != 0:
        delta = check_delta(delta)
    half = s.size // 2
    sel, ev = (s[:half], s_prime[:half]), (s[half:], s_prime[half:])
    pooled = np.sort(np.concatenate(sel))
    tails = np.geomspace(min_count / pooled.size, 0.5, n_thresholds)
    thresholds = np.unique(np.concatenate([np.quantile(pooled, tails), np.quantile(pooled, 1 - tails)]))
    return threshold_audit(sel, ev, thresholds, claimed=claimed, delta=delta, alpha=alpha)
