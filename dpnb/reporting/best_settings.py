"""Methods compared over a grid of settings: the settings tied with the best, and who is best.

A reproduction often reports, for each method, its best result over a grid of settings (the
projected dimension, a budget, ...), as the papers do. Which setting is "best" is decided by the
one tie rule, :func:`dpnb.numerics.evaluation.tied_with_best`, so the printed set of tied settings
is the same on every machine, and the best result is shown with the digits its interval justifies
(:func:`dpnb.numerics.evaluation.format_interval`).
"""

from __future__ import annotations

import numbers

import numpy as np

from dpnb.numerics.evaluation import Interval, format_interval, interval, tied_with_best


def _score(values, where: str):
    """An :class:`Interval` of two or more trial values; a single value is an exact number."""
    x = np.asarray(values, dtype=float).ravel()
    if x.size == 0:
        raise ValueError(f"{where} has no values; give at least one trial value per setting")
    return interval(x) if x.size > 1 else float(x[0])


def _scores(by_setting, where: str) -> dict:
    if not isinstance(by_setting, dict) or not by_setting:
        raise TypeError(f"{where} must be a non-empty dict of setting -> trial values")
    return {s: _score(v, f"{where}[{s!r}]") for s, v in by_setting.items()}


def _mean(score) -> float:
    return score.mean if isinstance(score, Interval) else score


def tied_settings(by_setting: dict, *, higher_is_better: bool = True) -> list:
    """The settings whose result is tied with the best (:func:`~dpnb.numerics.evaluation.tied_with_best`).

    Parameters
    ----------
    by_setting : dict
        Setting -> trial values (an interval from two or more; one value is an exact number).
    higher_is_better : bool

    Returns
    -------
    list
        The tied settings, in the order of ``by_setting``.
    """
    return tied_with_best(_scores(by_setting, "by_setting"), higher_is_better=higher_is_better)


def best_score(by_setting: dict, *, higher_is_better: bool = True):
    """The score (an :class:`~dpnb.numerics.evaluation.Interval`, or a number) with the best mean."""
    sign = 1.0 if higher_is_better else -1.0
    return max(_scores(by_setting, "by_setting").values(), key=lambda s: sign * _mean(s))


def shown(score) -> str:
    """A score as text: an interval as ``mean ± half-width``, a single value as ``value (no spread)``."""
    if isinstance(score, Interval):
        return str(score)
    if isinstance(score, bool) or not isinstance(score, numbers.Real):
        raise TypeError(f"a score must be an Interval or a number, got {type(score).__name__}")
    return format_interval(float(score), 0.0)


def summarize_best(
    results: dict, *, higher_is_better: bool = True, setting: str = "p", reference: dict | None = None
) -> list[dict]:
    """One row per method: the settings tied with its best, and its best result.

    Parameters
    ----------
    results : dict
        Method -> {setting -> trial values}.
    higher_is_better : bool
    setting : str
        The settings' name, for the column ``"<setting> tied with the best"``.
    reference : dict, optional
        Method -> a published value (text), shown as the column ``"paper reports"`` (``"-"`` where absent).

    Returns
    -------
    list of dict
        Keys ``method``, ``"<setting> tied with the best"``, (``paper reports``,) ``we measure`` (text),
        ``mean`` (the best mean) and ``best`` (its :class:`~dpnb.numerics.evaluation.Interval` or number).
        Show them with ``markdown_table(rows, columns=[...])`` naming the text columns.
    """
    if not isinstance(results, dict) or not results:
        raise TypeError("results must be a non-empty dict of method -> {setting -> trial values}")
    if not isinstance(setting, str) or not setting:
        raise ValueError(f"setting must be a non-empty name, got {setting!r}")
    if reference is not None and not isinstance(reference, dict):
        raise TypeError("reference must be a dict of method -> published value, or None")
    rows = []
    for method, by_setting in results.items():
        scores = _scores(by_setting, f"results[{method!r}]")
        tied = tied_with_best(scores, higher_is_better=higher_is_better)
        best = best_score(by_setting, higher_is_better=higher_is_better)
        row = {"method": method, f"{setting} tied with the best": ", ".join(map(str, tied))}
        if reference is not None:
            row["paper reports"] = reference.get(method, "-")
        row.update({"we measure": shown(best), "mean": _mean(best), "best": best})
        rows.append(row)
    return rows


def sole_best_and_close(
    rows: list[dict], method: str, competitors, reference: str, *, higher_is_better: bool = True
) -> bool:
    """Whether ``method`` alone is tied with the best of ``competitors`` and its interval holds ``reference``.

    The reading of a table's claim "the method is the best of its kind and close to the reference":
    among ``competitors`` (``method`` included) no other one's interval overlaps the best one
    (:func:`~dpnb.numerics.evaluation.tied_with_best`), and the reference's best mean lies inside
    ``method``'s interval.

    Parameters
    ----------
    rows : list of dict
        Rows of :func:`summarize_best`.
    method : str
    competitors : iterable of str
        The methods compared with ``method`` (it is added if missing).
    reference : str
        The method whose result ``method`` should match (e.g. the real data).
    higher_is_better : bool
    """
    best = {r["method"]: r["best"] for r in rows}
    names = list(dict.fromkeys([*competitors, method]))
    missing = [m for m in [*names, reference] if m not in best]
    if missing:
        raise ValueError(f"no row for {missing}; rows hold {list(best)}")
    scores = {m: best[m] for m in names}
    target = best[method]
    low, high = (target.low, target.high) if isinstance(target, Interval) else (target, target)
    close = bool(low <= _mean(best[reference]) <= high)
    return tied_with_best(scores, higher_is_better=higher_is_better) == [method] and close
