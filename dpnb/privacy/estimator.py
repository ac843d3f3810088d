"""The contract every dpnb estimator follows (scikit-learn conventions plus a privacy budget).

Subclass :class:`PrivateEstimator` (and ``sklearn.base.TransformerMixin`` where the estimator
transforms):

- ``__init__`` only stores its arguments under the same names (so ``get_params``, ``clone``
  and ``set_params`` work); validation and the random generator are made in ``fit``;
- ``random_state``: None, an int (the same int gives identical results on every re-fit), a
  SeedSequence, or a Generator (used as is, advancing it). Two releases that draw the same noise
  leak their difference: the noise cancels in it. So an int seed is for reproducing one release,
  not for two releases of neighbouring data; and ``sklearn.base.clone`` (as ``GridSearchCV``,
  ``cross_val_score`` and pipelines call it) copies a Generator in its current state, so the clone
  and the original would draw the same noise: cloning an estimator whose ``random_state`` is a
  Generator issues a :class:`~dpnb.ground.datasets.PrivacyLeakWarning`. Give each estimator a
  Generator of its own (``dpnb.ground.streams.stream(seed, key)`` with a key per release) or None;
- ``epsilon`` may be ``numpy.inf``: the noiseless (non-private) limit of the same algorithm,
  useful as a reference; ``delta`` is then ignored for calibration;
- after ``fit``: ``budget_`` maps each noisy statistic to the ``(epsilon, delta)`` it spent
  (they add up to what was asked, basic composition; with ``noise="exact"`` each delta also holds
  the exact sampler's ``sampling_delta``, :func:`with_sampling_delta`), ``sensitivity_`` maps it to the
  sensitivity its noise was calibrated to, and ``n_features_in_`` is set.
"""

from __future__ import annotations

import functools
import math
import numbers
import warnings
from fractions import Fraction

import numpy as np
from sklearn.base import BaseEstimator

from dpnb.ground.datasets import PrivacyLeakWarning
from dpnb.ground.validation import check_delta, check_epsilon, check_random_state
from dpnb.privacy.exact_noise import sampling_delta


def split_budget(epsilon: float, delta: float, fractions: dict) -> dict:
    """Split ``(epsilon, delta)`` over statistics by basic composition.

    Parameters
    ----------
    epsilon : float, > 0 (``inf`` allowed)
    delta : float, in [0, 1)
    fractions : dict
        Statistic name -> fraction of the budget, each in (0, 1], summing to 1. A value may be a
        pair ``(epsilon_fraction, delta_fraction)`` when the two are split differently (a
        statistic released with pure epsilon-DP takes delta fraction 0).

    Returns
    -------
    dict
        Statistic name -> ``(epsilon_i, delta_i)``; the parts add up to ``(epsilon, delta)``
        (the last part takes the remainder, so the sums are exact in floating point).
    """
    if not isinstance(fractions, dict) or not fractions:
        raise TypeError("fractions must be a non-empty dict of statistic name -> fraction")
    pairs = {}
    for name, f in fractions.items():
        fe, fd = f if isinstance(f, tuple) else (f, f)
        for value in (fe, fd):
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"budget fraction for {name!r} must be a number, got {type(value).__name__}")
            if not 0 <= value <= 1:
                raise ValueError(f"budget fraction for {name!r} must lie in [0, 1], got {value}")
        pairs[name] = (float(fe), float(fd))
    for index, label in ((0, "epsilon"), (1, "delta")):
        total = sum(p[index] for p in pairs.values())
        if not math.isclose(total, 1.0, rel_tol=1e-9) and not (index == 1 and total == 0):
            raise ValueError(f"the {label} fractions must add up to 1, got {total}")
    names = list(pairs)
    out, spent_e, spent_d = {}, 0.0, 0.0
    for name in names[:-1]:
        e, d = epsilon * pairs[name][0], delta * pairs[name][1]
        out[name] = (e, d)
        spent_e, spent_d = spent_e + e, spent_d + d
    last = names[-1]
    out[last] = (
        epsilon if math.isinf(epsilon) else epsilon - spent_e,
        delta * pairs[last][1] if pairs[last][1] in (0.0, 1.0) else delta - spent_d,
    )
    return out


def _add_up(a: float, b: float) -> float:
    """``a + b`` rounded up to a double (a bound stays a bound), at most 1."""
    total = a + b
    if Fraction(total) < Fraction(a) + Fraction(b):
        total = math.nextafter(total, math.inf)
    return min(total, 1.0)


def with_sampling_delta(budget: dict, draws: dict) -> dict:
    """A ``budget_`` of an exact-noise release: each statistic's delta plus its sampler's ``sampling_delta``.

    The exact samplers of :mod:`dpnb.privacy.exact_noise` are within total variation ``2^-100`` of their
    law per draw, so a statistic released ``(epsilon_i, delta_i)``-DP with ``m_i`` exact draws is
    ``(epsilon_i, delta_i + sampling_delta(epsilon_i, m_i))``-DP (:func:`dpnb.privacy.exact_noise.sampling_delta`);
    basic composition then adds the parts as before. One pass over ``draws``; the sum is rounded up to
    the next double when it is not exact (below ``delta_i``'s resolution it moves ``delta_i`` by one
    ulp), and capped at 1.

    Parameters
    ----------
    budget : dict
        Statistic name -> ``(epsilon_i, delta_i)``, as :func:`split_budget` returns.
    draws : dict
        Statistic name -> ``m_i``, the number of exact draws of its release, or ``(epsilon, m_i)`` when
        the draws are charged at another epsilon than the entry's (a zCDP split whose conversion to
        ``(epsilon, delta)`` is made once, for the whole release). Statistics not named keep their delta.

    Returns
    -------
    dict
        A new budget dict; epsilons unchanged.

    Examples
    --------
    >>> from dpnb.privacy.exact_noise import sampling_delta
    >>> budget = with_sampling_delta({"mean": (1.0, 0.0)}, {"mean": 3})
    >>> budget["mean"] == (1.0, sampling_delta(1.0, 3))
    True
    """
    if not isinstance(budget, dict) or not isinstance(draws, dict):
        raise TypeError("budget and draws must be dicts keyed by statistic name")
    out = dict(budget)
    for name, count in draws.items():
        if name not in budget:
            raise ValueError(f"draws names {name!r}, which is not a statistic of the budget {sorted(budget)}")
        epsilon, delta = budget[name]
        charged, m = count if isinstance(count, tuple) else (epsilon, count)
        out[name] = (epsilon, _add_up(delta, sampling_delta(charged, m)))
    return out


def _transactional(fit):
    """Wrap ``fit`` so that it runs on an unfitted estimator and restores the old state if it raises."""
    if getattr(fit, "_transactional", False):
        return fit

    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        params = self.get_params(deep=False)
        saved = {k: v for k, v in vars(self).items() if k not in params and not k.startswith("_sklearn")}
        for name in saved:
            delattr(self, name)
        try:
            return fit(self, *args, **kwargs)
        except BaseException:
            for name in [k for k in vars(self) if k not in params and not k.startswith("_sklearn")]:
                delattr(self, name)
            vars(self).update(saved)
            raise

    wrapper._transactional = True
    return wrapper


def budget_total(budget: dict) -> tuple[float, float]:
    """The ``(epsilon, delta)`` that a ``budget_`` dict spends in all (basic composition)."""
    return (math.fsum(e for e, _ in budget.values()), math.fsum(d for _, d in budget.values()))


class PrivateEstimator(BaseEstimator):
    """Base class of dpnb's estimators: privacy checks and the random generator, made in ``fit``.

    Subclasses define ``__init__`` storing ``epsilon``, ``delta`` (when they use it) and
    ``random_state`` among their parameters, and call ``_check_privacy()`` and
    ``_make_rng()`` at the start of ``fit``.

    Every subclass's ``fit`` is transactional (wrapped by ``_transactional``): it starts
    from an unfitted estimator (the previous release, its ``budget_`` and every other fitted
    attribute are set aside) and, if it raises, the estimator is put back exactly as it was. So
    ``budget_`` always describes the release the estimator holds, and a failed fit (bad data,
    or bad parameters after ``set_params``) never leaves a mix of two releases.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "fit" in vars(cls):
            cls.fit = _transactional(vars(cls)["fit"])

    def __sklearn_clone__(self):
        """``sklearn.base.clone``: a new unfitted estimator with the same parameters.

        A ``random_state`` Generator is copied in its current state, so the clone would draw the same
        noise as the original (and as every other clone): a :class:`PrivacyLeakWarning` says so. Nothing
        is remembered between calls.

        Examples
        --------
        >>> import numpy as np, warnings
        >>> from sklearn.base import clone
        >>> from dpnb.papers.dppro import DPPro
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     twin = clone(DPPro(2, 1.0, 1e-6, random_state=np.random.default_rng(0)))
        ...     seeded = clone(DPPro(2, 1.0, 1e-6, random_state=0))
        >>> [w.category.__name__ for w in caught]
        ['PrivacyLeakWarning']
        """
        if isinstance(getattr(self, "random_state", None), np.random.Generator):
            warnings.warn(
                f"cloning {type(self).__name__} copies its random_state Generator: the clone and the original "
                "would add the same noise, which cancels in the difference of their releases; give each "
                "estimator a Generator of its own (dpnb.ground.streams.stream(seed, key)) or None",
                PrivacyLeakWarning,
                stacklevel=3,
            )
        return super().__sklearn_clone__()

    def _check_privacy(self, *, needs_delta: bool = True) -> tuple[float, float]:
        """Validated ``(epsilon, delta)``; ``delta`` is 0.0 for a pure-epsilon estimator."""
        epsilon = check_epsilon(self.epsilon)
        if not needs_delta:
            return epsilon, 0.0
        return epsilon, check_delta(self.delta)

    def _make_rng(self) -> np.random.Generator:
        """A generator from ``random_state`` (a fresh one per fit for an int seed)."""
        return check_random_state(self.random_state)
