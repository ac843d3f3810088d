"""Where one trial of RON-Gauss's reproduction loops spends its CPU time, at the paper profile's parameters.

``python -m benchmarks.ron_gauss_trials [--profile paper] [--trials 1]`` loads the data of Tables 3, 4 and 5
as ``notebooks/ron_gauss.md`` does (outside the timing), runs the loop body of each table (every method and
setting of one trial, the same calls as the notebook) under ``cProfile`` with a CPU-time clock, and prints the
CPU seconds per trial of each table split into its parts: the releases (fits and draws, baselines included) and
the evaluation's pieces (K-means and the silhouette; libsvm's fit and the BLAS prediction; the Cholesky
factorisation, its refinement and the kernels of kernel ridge). Seeds differ from the notebook's trials, which
does not change the cost. Measure CPU seconds, not wall time, on a shared machine; the shares are what to act
on.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from functools import partial
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks import results
from benchmarks.gram_floor import machine
from dpnb.chapters.ron_gauss import krr_rmse, release_accuracy, release_rmse, svm_accuracy
from dpnb.ground import datasets
from dpnb.ground.streams import sklearn_seed, stream
from dpnb.numerics.linalg import eigen_coordinate_draws
from dpnb.numerics.metrics import best_silhouette
from dpnb.papers.ron_gauss import RONGauss, bernoulli_identity, pca_identity, unit_rows
from dpnb.reporting.parameters import read_yaml
from dpnb.reporting.report import markdown_table

PROFILES = Path(__file__).resolve().parents[1] / "notebooks" / "profiles" / "ron_gauss.yml"
SEED, EPSILON, MEAN_FRACTION = 20261122, 1.0, 0.3  # the notebook's defaults
CLASSES = (0, 1)

# Parts of each table: (label, file suffix, function name); CPU seconds are the functions' cumulative times,
# a part's "rest" is the table's total minus the listed parts.
PARTS = {
    "Table 3": [
        ("K-means (sklearn KMeans.fit)", "cluster/_kmeans.py", "fit"),
        ("silhouette (dpnb silhouette_scores)", "numerics/metrics.py", "silhouette_scores"),
        ("RON-Gauss fits", "papers/ron_gauss.py", "fit"),
        ("RON-Gauss draws (eigen_coordinate_draws)", "numerics/linalg.py", "eigen_coordinate_draws"),
        ("Jiang et al. release (pca_identity)", "papers/ron_gauss.py", "pca_identity"),
        ("Li et al. release (bernoulli_identity)", "papers/ron_gauss.py", "bernoulli_identity"),
    ],
    "Table 4": [
        ("libsvm fit (SVC.fit)", "sklearn/svm/_base.py", "fit"),
        ("decision function (_binary_svc_predict)", "chapters/ron_gauss.py", "_binary_svc_predict"),
        ("RON-Gauss fits", "papers/ron_gauss.py", "fit"),
        ("RON-Gauss draws (sample)", "papers/ron_gauss.py", "sample"),
        ("Jiang et al. release (pca_identity)", "papers/ron_gauss.py", "pca_identity"),
        ("Li et al. release (bernoulli_identity)", "papers/ron_gauss.py", "bernoulli_identity"),
    ],
    "Table 5": [
        ("Cholesky (cho_factor, float32)", "linalg/_decomp_cholesky.py", "cho_factor"),
        ("refinement solves (cho_solve)", "linalg/_decomp_cholesky.py", "cho_solve"),
        ("kernel ridge, rest (kernels, products)", "papers/ron_gauss.py", "rbf_ridge_predict"),
        ("RON-Gauss fits", "papers/ron_gauss.py", "fit"),
        ("RON-Gauss draws (sample)", "papers/ron_gauss.py", "sample"),
        ("Jiang et al. release (pca_identity)", "papers/ron_gauss.py", "pca_identity"),
        ("Li et al. release (bernoulli_identity)", "papers/ron_gauss.py", "bernoulli_identity"),
    ],
}
NESTED = {"kernel ridge, rest (kernels, products)": ("Cholesky (cho_factor, float32)", "refinement solves (cho_solve)")}


def table3(P: dict):
    """The Table 3 loop body (25 releases scored by K-means over K = 2..5 and the silhouette), ready to call."""
    rng = stream(SEED, "bench-table3")
    X = unit_rows(datasets.load(P["cluster_data"], n_samples=P["cluster_rows"], random_state=sklearn_seed(rng)).X)
    second_moment = X.T @ X / len(X)
    score = partial(best_silhouette, n_clusters=(2, 3, 4, 5), n_points=P["silhouette_points"], random_state=rng)

    def ron(p):
        model = RONGauss(p, EPSILON, mean_fraction=MEAN_FRACTION, random_state=sklearn_seed(rng)).fit(X)
        return eigen_coordinate_draws(model.covariance_, len(X), random_state=rng)

    def trial():
        for p in P["cluster_dims"]:
            score(ron(p))
            score(bernoulli_identity(X, p, EPSILON, random_state=rng)[0])
            score(pca_identity(X, p, EPSILON, second_moment=second_moment, random_state=rng)[0])
            score(rng.standard_normal((len(X), p)))
        score(ron(X.shape[1]))

    return trial


def table4(P: dict):
    """The Table 4 loop body (GMM releases with and without noise, two baselines, Liu; an RBF-SVM on each)."""
    rng = stream(SEED, "bench-table4")
    bio = datasets.load_kdd2004_bio()
    X = datasets.scale_to_box(bio.X, bio.bounds)
    n_c = P["class_rows_per_class"]
    idx = rng.permutation(
        np.concatenate([rng.choice(np.flatnonzero(bio.y == c), 2 * n_c, replace=False) for c in CLASSES])
    )
    tr, te = idx[: len(idx) // 2], idx[len(idx) // 2 :]
    X_tr, y_tr, X_te, y_te = X[tr], bio.y[tr], X[te], bio.y[te]

    def gmm(p, eps):
        return RONGauss(p, eps, mode="gmm", mean_fraction=MEAN_FRACTION, random_state=sklearn_seed(rng)).fit(X_tr, y_tr)

    def trial():
        for p in P["class_dims"]:
            for eps in (EPSILON, np.inf):
                release_accuracy(gmm(p, eps), len(X_tr), X_te, y_te)
            for baseline in (bernoulli_identity, pca_identity):
                Z, B = baseline(unit_rows(X_tr), p, EPSILON, random_state=rng)
                svm_accuracy(Z, y_tr, unit_rows(X_te) @ B.T, y_te)
        release_accuracy(gmm(X.shape[1], EPSILON), len(X_tr), X_te, y_te)

    return trial


def table5(P: dict):
    """The Table 5 loop body (the epsilon sweep with both projections, noise off, two baselines, Liu; kernel ridge)."""
    rng = stream(SEED, "bench-table5")
    tr = datasets.load_rf1(split="train", n_samples=P["reg_train_rows"], random_state=sklearn_seed(rng))
    te = datasets.load_rf1(split="test", n_samples=P["reg_test_rows"], random_state=sklearn_seed(rng))
    lo, hi = float(tr.target_bounds[0][0]), float(tr.target_bounds[1][0])
    X_tr, X_te = datasets.scale_to_box(tr.X, tr.bounds), datasets.scale_to_box(te.X, te.bounds)
    y_tr, y_te = 2 * (tr.y - lo) / (hi - lo) - 1, 2 * (te.y - lo) / (hi - lo) - 1
    fit_rows = P["reg_fit_rows"]

    def ron(p, eps, projection="haar"):
        g = RONGauss(
            p,
            eps,
            mode="supervised",
            label_bound=1.0,
            mean_fraction=MEAN_FRACTION,
            projection=projection,
            random_state=sklearn_seed(rng),
        ).fit(X_tr, y_tr)
        release_rmse(g, len(X_tr), X_te, y_te, fit_rows=fit_rows, random_state=rng)

    def trial():
        for eps, projection in [(e, "haar") for e in P["reg_epsilons"]] + [(EPSILON, "paper")]:
            for p in P["reg_dims"]:
                ron(p, eps, projection)
        for p in P["reg_dims"]:
            ron(p, np.inf)
            for baseline in (bernoulli_identity, pca_identity):
                Z, B = baseline(unit_rows(X_tr), p, EPSILON, random_state=rng)
                krr_rmse(Z, y_tr, unit_rows(X_te) @ B.T, y_te, fit_rows=fit_rows, random_state=rng)
        ron(X_tr.shape[1], EPSILON)

    return trial


def cumulative(stats: pstats.Stats, suffix: str, name: str) -> float:
    """Cumulative CPU seconds of every profiled function ``name`` defined in a file ending with ``suffix``."""
    return sum(
        ct for (file, _, func), (_, _, _, ct, _) in stats.stats.items() if func == name and file.endswith(suffix)
    )


def breakdown(table: str, trial, n_trials: int) -> list[dict]:
    """Rows ``{table, part, CPU s per trial, share}`` of ``n_trials`` calls of ``trial`` under a CPU-time profiler."""
    trial()  # warm-up: imports, compiled kernels, caches
    profiler = cProfile.Profile(time.process_time)
    start = time.process_time()
    profiler.enable()
    for _ in range(n_trials):
        trial()
    profiler.disable()
    total = (time.process_time() - start) / n_trials
    stats = pstats.Stats(profiler)
    seconds = {label: cumulative(stats, suffix, name) / n_trials for label, suffix, name in PARTS[table]}
    for outer, inner in NESTED.items():
        if outer in seconds:
            seconds[outer] -= sum(seconds[i] for i in inner)
    seconds["rest (Python, validation, small pieces)"] = total - sum(seconds.values())
    rows = [{"table": table, "part": k, "CPU s per trial": v, "share %": 100 * v / total} for k, v in seconds.items()]
    rows.append({"table": table, "part": "total", "CPU s per trial": total, "share %": 100.0})
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="paper", help="profile of notebooks/profiles/ron_gauss.yml")
    parser.add_argument("--trials", type=int, default=1, help="trials timed per table (after one warm-up trial)")
    parser.add_argument("--only", default="", help="tables whose name contains this text, e.g. 5")
    args = parser.parse_args()
    P = read_yaml(PROFILES.read_text())[args.profile]
    threadpool_limits(1)  # as the notebook: one BLAS/OpenMP thread
    rows = []
    for table, build in (("Table 3", table3), ("Table 4", table4), ("Table 5", table5)):
        if args.only in table:
            rows += breakdown(table, build(P), args.trials)
            print(markdown_table([r for r in rows if r["table"] == table], precision=3), flush=True)
    print(machine())
    results.write("ron_gauss_trials", rows, machine=machine(), profile=args.profile, trials=args.trials)


if __name__ == "__main__":
    main()
