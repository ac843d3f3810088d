"""The DPPro chapter's reproduction runs: eq. (12) errors of released distances, and the Adult SVM of Fig. 5.

Xu et al. (2017) measure a release by the relative ``L2`` error of its squared-distance
estimates (eq. 12, :func:`dpnb.papers.dppro.relative_l2_error`) and by a linear SVM trained on
the released rows. Each function here averages one setting over independent releases, each
drawn from the generator (or the ``stream(seed, (*key, rep))``) it is given.
"""

from __future__ import annotations

import numpy as np
from sklearn.pipeline import Pipeline
from sklearn.svm import LinearSVC

from dpnb.ground.streams import sklearn_seed, stream
from dpnb.ground.validation import check_array, check_integer, check_random_state
from dpnb.papers import dppro


def _upper_pairs(X, truth) -> tuple:
    X = check_array(X)
    truth = check_array(truth, ndim=1, name="truth")
    iu = np.triu_indices(X.shape[0], 1)
    if truth.size != iu[0].size:
        raise ValueError(
            f"truth must hold the {iu[0].size} squared distances of the pairs i < j of X's {X.shape[0]} rows, "
            f"got {truth.size}"
        )
    return X, truth, iu


def l2_error_fixed_sigma(X, truth, n_components: int, sigma: float, *, n_reps: int, random_state) -> float:
    """Mean eq.-(12) error over ``n_reps`` releases at a fixed noise s.d. ``sigma`` (the captions' reading).

    Parameters
    ----------
    X : array_like, shape (n, d)
    truth : array_like, shape (n (n - 1) / 2,)
        The true squared distances of the pairs ``i < j`` (``np.triu_indices`` order).
    n_components : int
    sigma : float
    n_reps : int
    random_state : numpy.random.Generator
    """
    X, truth, iu = _upper_pairs(X, truth)
    rng = check_random_state(random_state)
    out = []
    for _ in range(check_integer(n_reps, "n_reps")):
        R = dppro.gaussian_projection(X.shape[1], n_components, random_state=rng)
        P = dppro.project_and_perturb(X, R, sigma, random_state=rng)
        out.append(dppro.relative_l2_error(truth, dppro.squared_distance_estimate(P, sigma)[iu]))
    return float(np.mean(out))


def l2_error_private(
    X, truth, n_components: int, epsilon: float, delta: float, *, neighbours: str, groups=(), n_reps: int, random_state
) -> float:
    """Mean eq.-(12) error over ``n_reps`` :class:`~dpnb.papers.dppro.DPPro` releases at ``(epsilon, delta)``.

    Parameters
    ----------
    X, truth, n_components
        As in :func:`l2_error_fixed_sigma`.
    epsilon, delta : float
    neighbours : {"change-attribute", "replace-row"}
        The neighbour notion (:class:`~dpnb.papers.dppro.DPPro`'s ``neighbours``).
    groups : sequence of sequences of int
        One-hot blocks (``attribute_groups``), for the attribute relation.
    n_reps : int
    random_state : numpy.random.Generator
    """
    X, truth, iu = _upper_pairs(X, truth)
    rng = check_random_state(random_state)
    out = []
    for _ in range(check_integer(n_reps, "n_reps")):
        model = dppro.DPPro(
            n_components, epsilon, delta, neighbours=neighbours, attribute_groups=groups, random_state=rng
        ).fit(X)
        out.append(dppro.relative_l2_error(truth, model.estimate_squared_distances()[iu]))
    return float(np.mean(out))


def expected_l2_error(truth, n_components, sigma) -> float:
    """``E[eq. (12)]`` from Theorem 3: the per-pair variances summed over ``sum rho^4`` (a fixed denominator).

    Parameters
    ----------
    truth : array_like of shape (m,)
        True squared distances ``rho^2``, not all zero.
    n_components : int
    sigma : float
    """
    rho2 = check_array(truth, ndim=1, name="truth")
    if not np.any(rho2):
        raise ValueError("truth is all zero: eq. (12) is undefined")
    return float(np.sum(dppro.squared_distance_variance(rho2, n_components, sigma)) / np.sum(rho2**2))


def one_hot_groups(feature_names) -> list[list[int]]:
    """Column indices of each one-hot block (``"workclass=Private"``, ...), in order of first appearance.

    A categorical attribute is the group of columns named ``"<attribute>=<level>"``; other columns
    belong to no group.
    """
    if isinstance(feature_names, str) or not all(isinstance(f, str) for f in feature_names):
        raise TypeError("feature_names must be a sequence of column names (str)")
    prefixes = [f.split("=")[0] if "=" in f else None for f in feature_names]
    return [[j for j, q in enumerate(prefixes) if q == name] for name in dict.fromkeys(q for q in prefixes if q)]


def svm_test_error(make_release, X_train, y_train, X_test, y_test, *, seed: int, key, n_reps: int) -> float:
    """Mean test error of ``Pipeline([("release", make_release(rng)), ("svm", LinearSVC())])`` over ``n_reps`` fits.

    Rep ``r`` draws the SVM's seed and then the release from ``stream(seed, (*key, r))``. The
    release step's ``fit_transform`` is what the SVM trains on and its ``transform`` what it is
    tested on (for DPPro: the released ``P``, and the test rows times the public ``R``).

    Parameters
    ----------
    make_release : callable
        ``make_release(rng)`` -> an unfitted transformer.
    X_train, y_train, X_test, y_test : array_like
    seed : int
    key : tuple of str and int
    n_reps : int
    """
    if not callable(make_release):
        raise TypeError("make_release must be a callable rng -> transformer")
    errs = []
    for rep in range(check_integer(n_reps, "n_reps")):
        rng = stream(seed, (*key, rep))
        svm = LinearSVC(dual=False, random_state=sklearn_seed(rng))
        pipe = Pipeline([("release", make_release(rng)), ("svm", svm)])
        errs.append(float(np.mean(pipe.fit(X_train, y_train).predict(X_test) != y_test)))
    return float(np.mean(errs))


def fixed_sigma_svm_error(
    X_train, y_train, X_test, y_test, n_components: int, sigma: float, *, seed: int, key, n_reps: int
) -> float:
    """Mean test error of a linear SVM on training rows released as ``X R + N(0, sigma^2)`` (no calibration).

    The test rows are projected with the same public ``R``, without noise. Rep ``r`` draws ``R``,
    the SVM's seed and the noise, in that order, from ``stream(seed, (*key, r))``.
    """
    X_train, X_test = check_array(X_train, name="X_train"), check_array(X_test, name="X_test")
    errs = []
    for rep in range(check_integer(n_reps, "n_reps")):
        rng = stream(seed, (*key, rep))
        R = dppro.gaussian_projection(X_train.shape[1], n_components, random_state=rng)
        clf = LinearSVC(dual=False, random_state=sklearn_seed(rng))
        clf.fit(dppro.project_and_perturb(X_train, R, sigma, random_state=rng), y_train)
        errs.append(float(np.mean(clf.predict(X_test @ R) != y_test)))
    return float(np.mean(errs))
