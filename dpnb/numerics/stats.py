"""Confidence intervals for Monte Carlo checks.

Every distributional claim in the notebooks is checked against an interval from here, so
test tolerances come from a stated confidence level rather than a guess.
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy import stats as _st

from dpnb.ground.validation import check_array, check_fraction


def _check_confidence(confidence: float) -> float:
    return check_fraction(confidence, "confidence", low_open=True)


def mean_ci(samples, confidence: float = 0.95) -> tuple[float, float, float]:
    """Sample mean with a two-sided Student-t confidence interval.

    Returns ``(mean, low, high)``. Needs at least two samples.
    """
    x = check_array(samples, ndim=1, name="samples", min_rows=2)
    confidence = _check_confidence(confidence)
    m = float(x.mean())
    half = float(_st.t.ppf(0.5 + confidence / 2, df=x.size - 1) * x.std(ddof=1) / np.sqrt(x.size))
    return m, m - half, m + half


def variance_ci(samples, confidence: float = 0.95) -> tuple[float, float, float]:
    """Sample variance with the chi-square confidence interval (exact for normal data).

    For non-normal data use :func:`bootstrap_ci` with ``np.var``; the notebooks say which.
    Returns ``(variance, low, high)``.
    """
    x = check_array(samples, ndim=1, name="samples", min_rows=2)
    confidence = _check_confidence(confidence)
    n = x.size
    v = float(x.var(ddof=1))
    a = (1 - confidence) / 2
    return v, (n - 1) * v / float(_st.chi2.ppf(1 - a, n - 1)), (n - 1) * v / float(_st.chi2.ppf(a, n - 1))


def clopper_pearson(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact two-sided Clopper-Pearson interval for a binomial proportion.

    For a one-sided bound at level ``1 - a`` use ``confidence = 1 - 2 a`` and take one end.
    """
    if not isinstance(trials, numbers.Integral) or trials < 1:
        raise ValueError(f"trials must be a positive integer, got {trials!r}")
    if not isinstance(successes, numbers.Integral) or not (0 <= successes <= trials):
        raise ValueError(f"successes must be an integer in [0, trials={trials}], got {successes!r}")
    confidence = _check_confidence(confidence)
    a = (1 - confidence) / 2
    low = 0.0 if successes == 0 else float(_st.beta.ppf(a, successes, trials - successes + 1))
    high = 1.0 if successes == trials else float(_st.beta.ppf(1 - a, successes + 1, trials - successes))
    return low, high


def bootstrap_ci(
    samples, statistic=np.mean, confidence: float = 0.95, n_resamples: int = 2000, random_state=None
) -> tuple[float, float, float]:
    """Percentile bootstrap interval of ``statistic`` over the first axis of ``samples``.

    Returns ``(estimate, low, high)``.
    """
    from dpnb.ground.validation import check_random_state

    x = check_array(samples, ndim=None, name="samples", min_rows=2)
    confidence = _check_confidence(confidence)
    rng = check_random_state(random_state)
    idx = rng.integers(0, x.shape[0], size=(n_resamples, x.shape[0]))
    boot = np.array([statistic(x[i]) for i in idx])
    a = (1 - confidence) / 2
    return float(statistic(x)), float(np.quantile(boot, a)), float(np.quantile(boot, 1 - a))
