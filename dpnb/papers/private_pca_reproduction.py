"""The private-PCA chapter's reproduction of Sec. 4 (Chaudhuri, Sarwate and Sinha 2012): real data, k, verdicts, SVM.

Figure 1 and Table 1 run on real data brought into the unit ball the same way for every data
set (:func:`unit_sphere_rows`); Sec. 4's rule for ``k`` is evaluated beside the energy rule
(:func:`k_by_rules`); Figure 1's claim "PPCA beats MOD-SULQ, which is close to random" is judged
with the package's tie rule (:func:`figure1_consistent`, :func:`figure1_contradicted`); Table 1
scores a linear SVM in released subspaces (:func:`subspace_svm_accuracy`).
"""

from __future__ import annotations

import numpy as np
from sklearn.svm import LinearSVC

from dpnb.ground import datasets
from dpnb.ground.streams import sklearn_seed
from dpnb.ground.validation import check_array, check_integer, check_random_state
from dpnb.numerics.evaluation import tied_with_best
from dpnb.papers.private_pca import second_moment

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
