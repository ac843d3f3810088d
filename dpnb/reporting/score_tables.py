"""Scores of several methods over a grid of privacy budgets: intervals, tied sets, controls, repetitions.

A comparison holds ``scores[method][epsilon]``, the list of one score per repetition. A method that
gave no score in a repetition (a fit stopped by its time budget) holds there any value that is not a
number, whose ``str`` says why. Every interval is :func:`dpnb.numerics.evaluation.interval` and every
"best" the tie rule :func:`dpnb.numerics.evaluation.tied_with_best`; a control (the non-private
reference, a data-free release) is never among the private methods.
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy.stats import t as student_t

from dpnb.ground.validation import check_integer
from dpnb.numerics.evaluation import interval, tied_with_best

#: Words in a method's name that mark it as a control, not a private method.
CONTROL_MARKERS = ("non-private", "data-free")


def finished(values) -> bool:
    """Whether every repetition gave a number (not a marker of a fit that did not finish)."""
    return all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in values)


def score_cell(values) -> str:
    """The interval over the repetitions, or why there is none (the first marker, with how many repetitions hit one)."""
    values = list(values)
    if not values:
        raise ValueError("values is empty: give one score (or marker) per repetition")
    if finished(values):
        return str(interval(values))
    missing = [v for v in values if not (isinstance(v, numbers.Real) and not isinstance(v, bool))]
    return str(missing[0]) + ("" if len(missing) == len(values) else f" ({len(missing)} of {len(values)} seeds)")


def is_control(method: str) -> bool:
    """Whether ``method`` names a control (:data:`CONTROL_MARKERS`)."""
    return any(marker in method for marker in CONTROL_MARKERS)


def private_intervals(scores, epsilon) -> dict:
    """``{method: Interval}`` at ``epsilon`` for the private methods that finished there (controls left out)."""
    return {m: interval(v[epsilon]) for m, v in scores.items() if not is_control(m) and finished(v[epsilon])}


def score_table(scores, epsilons, *, higher_is_better: bool = True) -> tuple[list[dict], dict]:
    """Rows ``method, eps=...`` of :func:`score_cell`, and per epsilon the private methods tied with the best.

    Returns
    -------
    rows : list of dict
        For :func:`dpnb.reporting.report.markdown_table`.
    tied : dict
        ``epsilon -> [methods]`` (:func:`dpnb.numerics.evaluation.tied_with_best` on :func:`private_intervals`).
    """
    if not scores:
        raise ValueError("scores is empty: give {method: {epsilon: repetitions}}")
    tied = {e: tied_with_best(private_intervals(scores, e), higher_is_better=higher_is_better) for e in epsilons}
    rows = [{"method": m, **{f"eps={e:g}": score_cell(v[e]) for e in epsilons}} for m, v in scores.items()]
    return rows, tied


def plot_scores(scores, epsilons, ylabel: str, *, log: bool = False):
    """Mean score per method against the budget (log x); controls dashed, methods with no finished point left out."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    for m, v in scores.items():
        done = [e for e in epsilons if finished(v[e])]
        if done:
            ax.plot(done, [np.mean(v[e]) for e in done], "--" if is_control(m) else "-o", label=m)
    ax.set_xscale("log")
    if log:
        ax.set_yscale("log")
    ax.set_xlabel(r"privacy budget $\varepsilon$")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    plt.show()


def repetitions_to_separate(a, b, cap: int = 1000) -> int | None:
    """Repetitions at which the 95% Student-t intervals of two score lists would separate.

    Were their means and standard deviations to stay as observed: the smallest ``r`` with
    ``t(r-1) (s_a + s_b) / sqrt(r) < |mean_a - mean_b|`` (None up to ``cap``).
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size < 2 or b.size < 2:
        raise ValueError("each score list needs at least two repetitions (a standard deviation)")
    cap = check_integer(cap, "cap", minimum=2)
    gap, spread = abs(a.mean() - b.mean()), a.std(ddof=1) + b.std(ddof=1)
    return next((r for r in range(2, cap + 1) if student_t.ppf(0.975, r - 1) * spread / np.sqrt(r) < gap), None)


def separation_text(a, b) -> str:
    """How many repetitions (at this run's sizes) would separate two score lists, as text."""
    r = repetitions_to_separate(a, b)
    return f"about {r} repetitions would separate them" if r else "no number of repetitions up to 1000 would"


def repetitions_needed(pairs) -> str:
    """What would separate every pair ``(a, b)`` of score lists: the most repetitions any pair needs, as text
    for :func:`dpnb.reporting.claims.verdict`'s ``would_decide`` (at this run's sizes)."""
    pairs = list(pairs)
    if not pairs:
        raise ValueError("pairs is empty: give the (a, b) score lists left undecided")
    counts = [repetitions_to_separate(a, b) for a, b in pairs]
    if any(c is None for c in counts):
        return "no number of repetitions up to 1000"
    return f"about {max(counts)} repetitions"


def versus_control(scores, control: str, epsilons, *, higher_is_better: bool) -> dict:
    """Per epsilon: the private methods whose interval lies strictly beyond the control's (better), whether all lie
    strictly on its bad side (worse), and, where neither, the score lists of the best method and of the control.

    Returns
    -------
    dict
        ``epsilon -> (better: list of methods, worse: bool, undecided: (best's scores, control's scores) or None)``.
    """
    if control not in scores:
        raise ValueError(f"control {control!r} is not among the methods {list(scores)}")
    out = {}
    for e in epsilons:
        c = interval(scores[control][e])
        est = private_intervals(scores, e)
        better = [m for m, v in est.items() if (v.low > c.high if higher_is_better else v.high < c.low)]
        worse = all((v.high < c.low if higher_is_better else v.low > c.high) for v in est.values())
        best = tied_with_best(est, higher_is_better=higher_is_better)[0]
        out[e] = (better, worse, None if better or worse else (scores[best][e], scores[control][e]))
    return out


def control_evidence(outcome: dict) -> tuple:
    """The evidence of a "some private method beats the control at every epsilon" claim, for
    :func:`dpnb.reporting.claims.verdict`: ``(agrees, would_decide)``.

    ``agrees`` is True if some method beats the control at every epsilon, False if all lose to it at
    some epsilon, else None; ``would_decide`` (only then) is :func:`repetitions_needed` for the undecided
    epsilons' best method against the control.
    """
    if all(better for better, _, _ in outcome.values()):
        return True, None
    if any(worse for _, worse, _ in outcome.values()):
        return False, None
    return None, repetitions_needed(pair for _, _, pair in outcome.values() if pair is not None)


def control_text(outcome: dict, verb: str) -> str:
    """One clause per epsilon: the methods that beat the control (``verb``: "above", "below"), and, where undecided,
    :func:`separation_text`."""
    return "; ".join(
        f"eps={e:g} {verb} it: {', '.join(better) or 'none'}" + (f" ({separation_text(*pair)})" if pair else "")
        for e, (better, _, pair) in outcome.items()
    )
