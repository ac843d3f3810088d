"""Results over repeated trials: intervals, and numbers printed with only the digits they justify.

A notebook that prints ``0.7302`` for an accuracy whose 95% interval is ``± 0.025`` shows two
digits of noise; on another machine (or with another seed) they change and mislead. Here a
result is summarised by its mean and confidence interval, and printed to the decimal place of
the interval's half-width.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from dpnb.ground.validation import check_array
from dpnb.numerics.stats import mean_ci


@dataclass(frozen=True)
class Interval:
    """A mean over ``n`` trials with a two-sided ``confidence`` interval ``[low, high]``."""

    mean: float
    low: float
    high: float
    n: int
    confidence: float = 0.95

    @property
    def half_width(self) -> float:
        """Half the interval's width."""
        return (self.high - self.low) / 2

    def __str__(self) -> str:
        return format_interval(self.mean, self.half_width)

    def contains(self, value: float) -> bool:
        """Whether ``value`` lies in the interval."""
        return self.low <= value <= self.high


def interval(samples, confidence: float = 0.95) -> Interval:
    """Mean of ``samples`` with its Student-t interval (:func:`dpnb.numerics.stats.mean_ci`).

    Parameters
    ----------
    samples : array_like of shape (n,), n >= 2
    confidence : float in (0, 1)
    """
    x = check_array(samples, ndim=1, name="samples", min_rows=2)
    mean, low, high = mean_ci(x, confidence)
    return Interval(mean, low, high, int(x.size), float(confidence))


def decimals_for(half_width: float) -> int:
    """Decimal places that show a value to the precision of an interval of this half-width.

    One significant digit of the half-width (two when it starts with 1), so ``0.0251 -> 2``
    decimals (``± 0.03``), ``0.0149 -> 3`` (``± 0.015``), ``3.2 -> 0``; negative for wide
    intervals (``39287 -> -4``: round to ten thousands).
    """
    if isinstance(half_width, bool) or not isinstance(half_width, numbers.Real):
        raise TypeError(f"half_width must be a number, got {type(half_width).__name__}")
    if not math.isfinite(half_width) or half_width <= 0:
        raise ValueError(f"half_width must be finite and > 0, got {half_width!r}")
    exponent = math.floor(math.log10(half_width))
    leading = half_width / 10.0**exponent
    return -exponent + (1 if leading < 2 else 0)


def format_interval(mean: float, half_width: float) -> str:
    """``"mean ± half"`` with both rounded at the decimal place :func:`decimals_for` gives.

    A half-width at round-off scale (below ``1e-9`` of the mean) means the result did not vary
    between trials: the mean is shown with 4 significant digits and ``(no spread)``.
    """
    if half_width <= 1e-9 * max(1.0, abs(mean)):
        return f"{mean:.4g} (no spread)"
    digits = decimals_for(half_width)
    if digits >= 0:
        return f"{mean:.{digits}f} ± {half_width:.{digits}f}"
    return f"{round(mean, digits):.0f} ± {round(half_width, digits):.0f}"


def summarize(results: dict, confidence: float = 0.95) -> list[dict]:
    """One row per method: mean, interval and its printable form, for ``{method: trial values}``.

    Parameters
    ----------
    results : dict
        Method name -> array_like of per-trial values (>= 2 each).
    confidence : float

    Returns
    -------
    list of dict
        Keys ``method``, ``mean``, ``low``, ``high``, ``n``, ``shown`` (the formatted interval);
        ready for :func:`dpnb.reporting.report.markdown_table` with ``columns=["method", "shown", "n"]``.
    """
    if not isinstance(results, dict) or not results:
        raise TypeError("results must be a non-empty dict of method name -> trial values")
    rows = []
    for method, values in results.items():
        est = interval(np.asarray(values, dtype=float).ravel(), confidence)
        rows.append(
            {"method": method, "mean": est.mean, "low": est.low, "high": est.high, "n": est.n, "shown": str(est)}
        )
    return rows


#: Relative uncertainty of an exactly computed number: far above the round-off of any computation
#: in the notebooks (a few ulp times a condition number), far below any difference they report.
ROUNDOFF_RTOL = 1e-9


def _score_interval(score, rtol: float) -> tuple[float, float, float]:
    if isinstance(score, Interval):
        return score.mean, score.low, score.high
    if isinstance(score, bool) or not isinstance(score, numbers.Real):
        raise TypeError(f"a score must be a number or an Interval, got {type(score).__name__}")
    value = float(score)
    if math.isnan(value):
        raise ValueError("a score is NaN: a tie with NaN is undefined; drop or fix that score first")
    slack = rtol * max(1.0, abs(value)) if math.isfinite(value) else 0.0
    return value, value - slack, value + slack


def _float_vector(scores) -> bool:
    """A plain 1-d float ndarray (not a subclass: the array path would see a masked array's masked scores)."""
    return type(scores) is np.ndarray and scores.ndim == 1 and scores.dtype.kind == "f"


def _tied_in_vector(values: np.ndarray, higher_is_better: bool, rtol: float) -> list:
    """:func:`tied_with_best` on a 1-d float array, in one pass of array operations instead of one Python call per
    score: the same intervals (``v ± rtol·max(1, |v|)``, the same IEEE operations), the same best (the first of the
    largest), so the same tied positions, bit for bit."""
    values = values.astype(np.float64)  # float32 -> float64 is exact, as float() of each score is
    if np.isnan(values).any():
        raise ValueError("a score is NaN: a tie with NaN is undefined; drop or fix that score first")
    # near the largest double v ± slack rounds to ±inf, as it does score by score: no warning either way
    with np.errstate(over="ignore", invalid="ignore"):
        slack = np.where(np.isfinite(values), rtol * np.maximum(1.0, np.abs(values)), 0.0)
        best = int(np.argmax(values if higher_is_better else -values))
        if higher_is_better:
            return np.flatnonzero(values + slack >= values[best] - slack[best]).tolist()
        return np.flatnonzero(values - slack <= values[best] + slack[best]).tolist()


def tied_with_best(scores, *, higher_is_better: bool = True, rtol: float = ROUNDOFF_RTOL) -> list:
    """The keys tied with the best score: the package's one rule for every "best", argmax and "where attained".

    Each score carries an interval: an :class:`Interval` (a Monte Carlo estimate) its confidence
    interval; a number (an exact computation) ``v ± rtol·max(1, |v|)``, its round-off. A key is tied
    with the best when its interval overlaps the interval of the best mean. Round-off can change
    which of two tied scores is larger, never the tied set, so a printed tied set is the same on
    every machine; a single best is reported only when the data single it out.

    Parameters
    ----------
    scores : mapping or sequence
        Key -> score (a number or an :class:`Interval`); a sequence is keyed by position.
    higher_is_better : bool
        ``True`` for a maximum, ``False`` for a minimum.
    rtol : float
        Relative round-off of a number (default :data:`ROUNDOFF_RTOL`).

    Returns
    -------
    list
        The tied keys, in the order of ``scores``.
    """
    vector = _float_vector(scores) and isinstance(rtol, (int, float))  # the array path (bit for bit the same)
    if isinstance(scores, dict):
        items = list(scores.items())
    elif isinstance(scores, (str, bytes)) or not hasattr(scores, "__len__"):
        raise TypeError(f"scores must be a mapping or a sequence, got {type(scores).__name__}")
    elif vector:
        items = scores
    else:
        items = list(enumerate(scores.tolist() if isinstance(scores, np.ndarray) else scores))
    if not len(items):
        raise ValueError("scores is empty: there is no best")
    if not isinstance(rtol, numbers.Real) or not 0 <= rtol < 1:
        raise ValueError(f"rtol must be in [0, 1), got {rtol!r}")
    if vector:
        return _tied_in_vector(items, higher_is_better, float(rtol))
    spans = {key: _score_interval(score, rtol) for key, score in items}
    sign = 1.0 if higher_is_better else -1.0
    best = max(spans.values(), key=lambda s: sign * s[0])
    if higher_is_better:
        return [key for key, (_, _, high) in spans.items() if high >= best[1]]
    return [key for key, (_, low, _) in spans.items() if low <= best[2]]
