"""Estimates beside what they estimate: a Monte Carlo mean against an exact value, an observed rate.

Both are printed with the digits their interval justifies (:func:`dpnb.numerics.evaluation.decimals_for`),
so the text is the same on every machine whose draws agree and shows no digits of noise.
"""

from __future__ import annotations

import math
import numbers

from dpnb.ground.validation import check_integer
from dpnb.numerics.evaluation import decimals_for, interval
from dpnb.numerics.stats import clopper_pearson


def exact_vs_estimate(setting: str, exact: float, samples, confidence: float = 0.999) -> dict:
    """A table row: an exact value, the Monte Carlo mean of ``samples`` with its interval, and whether it covers it.

    Parameters
    ----------
    setting : str
        What is estimated (the row's label).
    exact : float
        The exact value.
    samples : array_like of shape (n,), n >= 2
        Monte Carlo draws whose mean estimates ``exact``.
    confidence : float in (0, 1)
        Level of the Student-t interval (:func:`dpnb.numerics.evaluation.interval`).

    Returns
    -------
    dict
        ``setting``; ``exact`` (text, one decimal more than the estimate); ``"MC estimate (<level>% CI)"``
        (``mean ± half-width``); ``exact inside CI`` (bool).
    """
    if not isinstance(setting, str) or not setting:
        raise ValueError(f"setting must be a non-empty label, got {setting!r}")
    if isinstance(exact, bool) or not isinstance(exact, numbers.Real) or not math.isfinite(exact):
        raise ValueError(f"exact must be a finite number, got {exact!r}")
    est = interval(samples, confidence)
    digits = max(0, decimals_for(est.half_width)) + 1 if est.half_width > 0 else 6
    return {
        "setting": setting,
        "exact": f"{exact:.{digits}f}",
        f"MC estimate ({100 * confidence:g}% CI)": str(est),
        "exact inside CI": bool(est.contains(float(exact))),
    }


def format_rate(count: int, total: int, confidence: float = 0.95) -> str:
    """``count / total`` with its Clopper-Pearson interval: ``"rate [low, high]"``.

    Decimals: those the interval's half-width justifies, at least 2, and enough to show a lower
    end above 0 as such (a rate that is certainly positive must not print as ``0.00``).
    """
    total = check_integer(total, "total")
    count = check_integer(count, "count", minimum=0, maximum=total)
    low, high = clopper_pearson(count, total, confidence)
    digits = max(2, decimals_for((high - low) / 2))
    if low > 0:
        digits = max(digits, -math.floor(math.log10(low)))
    return f"{count / total:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"
