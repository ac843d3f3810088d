"""The private-PCA chapter's room (Chaudhuri, Sarwate and Sinha 2012): sample complexity and the reproduction of Sec. 4.

Sample complexity of private PCA (Chaudhuri, Sarwate and Sinha 2012): Theorems 3-5, measured and exact.

The paper bounds the number of records ``n`` a release needs for a utility target: PPCA's grows
linearly in ``d`` (Theorem 3, reconstructed), MOD-SULQ's like ``d^{3/2} sqrt(log d)`` with the
paper's ``beta`` (Theorem 5), and no ``epsilon``-DP algorithm does better than ``d / (epsilon
Lambda)`` (Theorem 4, reconstructed). The checks here use the flat-spectrum data of
:func:`dpnb.papers.private_pca.spike_data`, where PPCA's utility is a one-dimensional integral
(:func:`dpnb.papers.private_pca.ppca_flat_alignment_mean`), and find the ``n*`` where a utility
curve reaches its target by log-linear interpolation.

The private-PCA chapter's reproduction of Sec. 4 (Chaudhuri, Sarwate and Sinha 2012): real data, k, verdicts, SVM.

Figure 1 and Table 1 run on real data brought into the unit ball the same way for every data
set (:func:`unit_sphere_rows`); Sec. 4's rule for ``k`` is evaluated beside the energy rule
(:func:`k_by_rules`); Figure 1's claim "PPCA beats MOD-SULQ, which is close to random" is judged
with the package's tie rule (:func:`figure1_consistent`, :func:`figure1_contradicted`); Table 1
scores a linear SVM in released subspaces (:func:`subspace_svm_accuracy`).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq
from sklearn.svm import LinearSVC

from dpnb.ground import datasets
from dpnb.ground.streams import sklearn_seed
from dpnb.ground.validation import check_array, check_epsilon, check_fraction, check_integer, check_random_state
from dpnb.numerics.evaluation import tied_with_best
from dpnb.papers.private_pca import (
    mod_sulq_sigma,
    ppca_flat_alignment_mean,
    ppca_flat_alignment_sf,
    second_moment,
    spike_data,
)

METHODS = ("PPCA", "MOD-SULQ (beta)", "MOD-SULQ (corrected)")


def spike_gap(n_features: int) -> float:
    """``lambda_1 - lambda_2`` of ``spike_data`` with share 1/2 (exact when ``n/2`` is a multiple of ``d - 1``)."""
    d = check_integer(n_features, "n_features", minimum=3)
    return 0.5 - 0.5 / (d - 1)


def first_crossing(ns, utility, target: float) -> float:
    """Smallest ``n`` where the utility curve reaches ``target``, by log-linear interpolation; NaN if not bracketed.

    Parameters
    ----------
    ns : array_like of shape (m,), increasing, > 0
    utility : array_like of shape (m,)
    target : float
    """
    ns = check_array(ns, ndim=1, name="ns")
    utility = check_array(utility, ndim=1, name="utility")
    if ns.size != utility.size:
        raise ValueError(f"ns and utility must have the same length, got {ns.size} and {utility.size}")
    if np.any(ns <= 0) or np.any(np.diff(ns) <= 0):
        raise ValueError("ns must be positive and strictly increasing")
    above = np.flatnonzero(utility >= target)
    if above.size == 0 or above[0] == 0:
        return np.nan
    j = above[0]
    t = (target - utility[j - 1]) / (utility[j] - utility[j - 1])
    return float(np.exp(np.log(ns[j - 1]) + t * (np.log(ns[j]) - np.log(ns[j - 1]))))


def ppca_exact_utility(n_features: int, n_samples: float, epsilon: float) -> float:
    """Exact ``E|<v, e_1>|`` of PPCA (``k = 1``) on a flat spectrum with the gap of :func:`spike_gap`."""
    epsilon = check_epsilon(epsilon, allow_infinite=False)
    return ppca_flat_alignment_mean(n_features, n_samples * epsilon * spike_gap(n_features) / 2)


def ppca_exact_n_star(n_features: int, epsilon: float, target: float) -> float:
    """The ``n`` where :func:`ppca_exact_utility` equals ``target`` (root in ``log n``)."""
    target = check_fraction(target, "target", low_open=True)
    return float(
        np.exp(
            brentq(
                lambda t: ppca_exact_utility(n_features, np.exp(t), epsilon) - target,
                0.0,
                np.log(1000 * n_features),
                xtol=1e-10,
            )
        )
    )


def first_order_n_star(method: str, n_features: int, epsilon: float, target: float, delta: float = 1e-5) -> float:
    """First-order prediction of ``n*`` (the Derivations' perturbation rates) for one of ``METHODS``.

    PPCA: ``(d - 1) / (2 (1 - target) epsilon gap)``; MOD-SULQ: ``sqrt((d - 1) / (2 (1 - target)))
    sigma(n = 1) / gap`` with ``sigma`` Theorem 1's ``beta`` or the exact calibration.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    target = check_fraction(target, "target", low_open=True)
    gap = spike_gap(n_features)
    if method == "PPCA":
        return (n_features - 1) / (2 * (1 - target) * check_epsilon(epsilon, allow_infinite=False) * gap)
    calibration = "paper" if method == "MOD-SULQ (beta)" else "corrected"
    sigma = mod_sulq_sigma(n_features, 1, epsilon, delta, calibration)
    return float(np.sqrt((n_features - 1) / (2 * (1 - target))) * sigma / gap)


def sample_complexity_slope(release, dims, n_grids, n_draws: int, target: float, *, random_state, n_boot: int = 200):
    """``n*`` per ``d`` from releases on ``spike_data``; the slope of ``log n*`` on ``log d``, and its bootstrap CI.

    Parameters
    ----------
    release : callable
        ``release(X, m, rng)`` -> ``m`` released subspaces, shape ``(m, d, 1)``.
    dims : sequence of int
    n_grids : sequence of array_like of int
        The ``n`` values tried at each ``d``, increasing.
    n_draws : int
        Releases per ``(d, n)``.
    target : float
        The utility ``E|<v, e_1>|`` that defines ``n*``.
    random_state : numpy.random.Generator
        Draws every release, then the bootstrap (``n_boot`` resamples of the draws at each ``(d, n)``).

    Returns
    -------
    n_star : ndarray, shape (len(dims),)
    slope, low, high : float
        Least-squares slope and its 95% percentile-bootstrap interval.
    """
    if not callable(release):
        raise TypeError("release must be a callable (X, m, rng) -> subspaces")
    n_draws, n_boot = check_integer(n_draws, "n_draws", minimum=2), check_integer(n_boot, "n_boot")
    rng = check_random_state(random_state)
    dims_log = np.log(np.asarray(dims, dtype=float))
    draws = []  # per d: (ns, |<v, e_1>| of shape (len(ns), m))
    for d, ns in zip(dims, n_grids, strict=True):
        q = np.array([np.abs(release(spike_data(int(n), d), n_draws, rng)[:, 0, 0]) for n in ns])
        draws.append((np.asarray(ns), q))
    n_star = np.array([first_crossing(ns, q.mean(axis=1), target) for ns, q in draws])
    slope = np.polyfit(dims_log, np.log(n_star), 1)[0]
    boot = []
    for _ in range(n_boot):
        nb = [first_crossing(ns, q[:, rng.integers(0, q.shape[1], q.shape[1])].mean(axis=1), target) for ns, q in draws]
        if np.all(np.isfinite(nb)):
            boot.append(np.polyfit(dims_log, np.log(nb), 1)[0])
    if not boot:
        raise ValueError("no bootstrap resample brackets the target at every d; widen the n grids")
    low, high = np.quantile(boot, [0.025, 0.975])
    return n_star, float(slope), float(low), float(high)


def theorem3_n(n_features: int, lambda1: float, lambda2: float, rho: float, eta: float, epsilon: float) -> float:
    """The sample size above which Theorem 3 (reconstructed) promises ``(rho, eta)``-closeness of PPCA (``k = 1``).

    ``d / (epsilon (1 - rho) g) (log(1/eta) / d + log(4 lambda_1 / ((1 - rho^2) g)))`` with ``g = lambda_1 - lambda_2``.
    """
    g = lambda1 - lambda2
    if not g > 0:
        raise ValueError(f"lambda1 must exceed lambda2 (a positive eigengap), got {lambda1} and {lambda2}")
    rho, eta = check_fraction(rho, "rho", low_open=True), check_fraction(eta, "eta", low_open=True)
    epsilon = check_epsilon(epsilon, allow_infinite=False)
    d = check_integer(n_features, "n_features", minimum=2)
    return d / (epsilon * (1 - rho) * g) * (np.log(1 / eta) / d + np.log(4 * lambda1 / ((1 - rho**2) * g)))


def flat_failure_probability(n_features: int, n_samples, lambda1: float, lambda2: float, rho: float, epsilon: float):
    """Exact ``P(|<v, v_1>| < rho)`` of PPCA on a flat spectrum ``(lambda1, lambda2, ..., lambda2)``."""
    epsilon = check_epsilon(epsilon, allow_infinite=False)
    return ppca_flat_alignment_sf(rho, n_features, n_samples * epsilon * (lambda1 - lambda2) / 2, lower=True)


def theorem4_rho_min(n_features: int) -> float:
    """Smallest ``rho`` Theorem 4 covers: ``1 - (1 - phi)/16``, ``1 - phi = exp(-2 (ln 8 + ln(1 + e^d)) / (d - 2))``."""
    d = check_integer(n_features, "n_features", minimum=3)
    return float(1 - np.exp(-2 * (np.log(8) + np.logaddexp(0.0, d)) / (d - 2)) / 16)


#: Offline data sets of Figure 1: loader, rows available, the paper's data set it matches, that data set's k.
REAL_DATA = {
    "kdd2004_bio": (datasets.load_kdd2004_bio, 145751, "kddcup99 (stand-in)", 4),
    "coil2000": (datasets.load_coil2000, 9822, "insurance (same records)", 11),
    "census_income": (datasets.load_census_income, 299285, "census (same survey)", 8),
}


def _check_name(name: str) -> str:
    if name not in REAL_DATA:
        raise ValueError(f"name must be one of {', '.join(REAL_DATA)}, got {name!r}")
    return name


def unit_sphere_rows(name: str, n_rows: int, *, random_state):
    """Rows of a Figure 1 data set scaled to ``[0, 1]`` with the declared column domains, all-zero rows dropped,
    then put on the unit sphere.

    Returns
    -------
    X : ndarray, shape (m, d), rows of norm 1
    y : ndarray, shape (m,)
    k_paper : int
        The paper's ``k`` for the data set this one matches.
    """
    loader, available, _, k_paper = REAL_DATA[_check_name(name)]
    n_rows = check_integer(n_rows, "n_rows")
    ds = loader(n_samples=None if n_rows >= available else n_rows, random_state=random_state)
    X = datasets.scale_to_box(ds.X, ds.bounds, output_bounds=(0.0, 1.0))
    keep = np.linalg.norm(X, axis=1) > 0
    return datasets.normalize_rows(X[keep], 1.0, mode="sphere"), ds.y[keep], k_paper


def k_by_rules(name: str, X) -> dict:
    """Smallest ``k`` by the paper's stated rule (``q_F(V_k) >= 0.8 ||A||_F``) and by the energy rule (``0.8 tr A``)."""
    _, _, matches, k_paper = REAL_DATA[_check_name(name)]
    w = np.sort(np.linalg.eigvalsh(second_moment(check_array(X))))[::-1]
    return {
        "data": name,
        "d": X.shape[1],
        "paper's data set": matches,
        "paper k": "not comparable" if matches.endswith("(stand-in)") else k_paper,
        "k by 0.8 ||A||_F": int(np.argmax(np.cumsum(w) >= 0.8 * np.sqrt(np.sum(w**2)))) + 1,
        "k by 0.8 tr A": int(np.argmax(np.cumsum(w) >= 0.8 * w.sum())) + 1,
    }


def ppca_beats(intervals: dict) -> bool:
    """PPCA's interval of ``q_F`` lies above MOD-SULQ's (overlapping ones tie), for ``{method: Interval}``."""
    return tied_with_best(intervals) == ["PPCA"]


def _sulq_near_random(rows) -> bool:
    near = [r["MOD-SULQ"] - r["random"] < 0.5 * (r["PPCA"] - r["random"]) for r in rows]
    return sum(near) >= len(near) / 2


def figure1_consistent(rows, intervals) -> bool:
    """Figure 1's claim on ``rows``: PPCA beats MOD-SULQ on every row, and MOD-SULQ is nearer random than PPCA on half.

    Parameters
    ----------
    rows : list of dict
        Keys ``data``, ``n`` and the mean utilities ``PPCA``, ``MOD-SULQ``, ``random``.
    intervals : dict
        ``(data, n)`` -> ``{"PPCA": Interval, "MOD-SULQ": Interval}``.
    """
    return all(ppca_beats(intervals[(r["data"], r["n"])]) for r in rows) and _sulq_near_random(rows)


def figure1_contradicted(rows, intervals) -> bool:
    """MOD-SULQ's interval lies above PPCA's on some row, or MOD-SULQ is not near random on half the rows."""
    above = any(tied_with_best(intervals[(r["data"], r["n"])]) == ["MOD-SULQ"] for r in rows)
    return above or not _sulq_near_random(rows)


def subspace_svm_accuracy(bases, X, y, n_train: int, *, random_state) -> list[dict]:
    """Accuracy and balanced accuracy (%) of a class-balanced ``LinearSVC`` on ``X`` projected on each subspace.

    The first ``n_train`` rows train, the rest test; the scores are averaged over the subspaces of
    each entry. Each fit draws its seed from ``random_state``, in order.

    Parameters
    ----------
    bases : dict
        Name -> array of shape ``(m, d, k)``: ``m`` subspaces.
    X : array_like, shape (n, d)
    y : array_like of shape (n,), labels 0 and 1
    n_train : int
    random_state : numpy.random.Generator
    """
    X = check_array(X)
    y = np.asarray(y)
    n_train = check_integer(n_train, "n_train", maximum=X.shape[0] - 1)
    rng = check_random_state(random_state)
    rows = []
    for name, Vs in bases.items():
        acc, bal = [], []
        for V in Vs:
            Z = X @ V
            svm = LinearSVC(class_weight="balanced", max_iter=20000, random_state=sklearn_seed(rng))
            pred = svm.fit(Z[:n_train], y[:n_train]).predict(Z[n_train:])
            acc.append(np.mean(pred == y[n_train:]))
            bal.append(np.mean([np.mean(pred[y[n_train:] == c] == c) for c in (0, 1)]))
        rows.append({"subspace": name, "accuracy %": 100 * np.mean(acc), "balanced accuracy %": 100 * np.mean(bal)})
    return rows
