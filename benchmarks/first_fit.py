"""What a first fit costs on a fresh machine: numba compiling the estimator's kernels, against the fit itself.

``python -m benchmarks.first_fit [--only WORD ...]`` runs each case of :data:`CASES` (an estimator fitted on a small
input inside its public bounds) three times, each in a new Python process, one BLAS thread:

* **fresh**: numba's cache in a new, empty folder (``NUMBA_CACHE_DIR``): the first fit compiles every kernel it
  calls, as on a machine that has never run it (a new clone, a new environment, a new version of ``dpnb``);
* **cached**: a new process on the cache the fresh run wrote: the kernels are loaded, not compiled;
* and in each process the same fit a second time, compiled and warm.

It prints, per case, the CPU seconds of the first fit fresh and cached and of the warm fit, the fresh first fit
over the warm one, and the CPU seconds numba spent compiling (its ``numba:compile`` events, outermost only)
with the kernel that took longest. CPU seconds, not wall time: the numbers do not depend on the machine's load.
The input is small on purpose (the fits take milliseconds), so the first fit is almost all compiling: what a
reader waits for on the first run of a notebook cell, and what ``make test`` pays once per fresh clone.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

from benchmarks import results
from benchmarks.gram_floor import machine
from dpnb.reporting.report import markdown_table

#: case -> the statement that fits it on ``X`` (unit-ball rows), ``box`` (rows in [0, 1]) and ``labels``
CASES = {
    "RONGauss unsupervised": "RONGauss(4, 1.0, random_state=0).fit(X)",
    "RONGauss gmm": "RONGauss(4, 1.0, mode='gmm', random_state=0).fit(X, labels)",
    "RONGauss supervised": "RONGauss(4, 1.0, mode='supervised', label_bound=1.0, random_state=0).fit(X, X[:, 0])",
    "PPCA (Gibbs)": "PPCA(2, 0.5, n_iter=30, random_state=0).fit(X)",
    "PPCA (exact, k = 1)": "PPCA(1, 0.5, sampler='exact', random_state=0).fit(X)",
    "MOD-SULQ": "ModSULQ(2, 1.0, 1e-5, random_state=0).fit(X)",
    "PCAGauss": "PCAGauss(2, 1.0, random_state=0).fit(X)",
    "DPPCAPublisher": "DPPCAPublisher(2, 1.0, random_state=0).fit(box)",
    "DPLDAPublisher": "DPLDAPublisher(1.0, n_classes=2, random_state=0).fit(box, labels)",
    "DPPro": "DPPro(2, 1.0, 1e-5, random_state=0).fit(box)",
}

#: runs in the child process: ``{statement}`` is a case of :data:`CASES`; prints one JSON line
CHILD = """
import json, time
from threadpoolctl import threadpool_limits
threadpool_limits(1)
from numba.core import event

compiles = {{}}
class Compiles(event.Listener):
    def __init__(self):
        self.open = []
    def on_start(self, ev):
        self.open.append(time.process_time())
    def on_end(self, ev):
        start = self.open.pop()
        if not self.open:  # outermost: a kernel's time includes the kernels it calls
            name = ev.data["dispatcher"].py_func.__qualname__
            compiles[name] = compiles.get(name, 0.0) + time.process_time() - start
event.register("numba:compile", Compiles())

import numpy as np
from dpnb.papers.lda_publishing import DPLDAPublisher
from dpnb.papers.component_analysis import DPPCAPublisher
from dpnb.papers.dppro import DPPro
from dpnb.papers.pca_gauss import PCAGauss
from dpnb.papers.private_pca import PPCA, ModSULQ
from dpnb.papers.ron_gauss import RONGauss

rng = np.random.default_rng(0)
box = rng.random((500, 6))
X = (2 * box - 1) / np.sqrt(6)
labels = (box[:, 0] > 0.5).astype(int)
seconds = []
for _ in range(2):
    start = time.process_time()
    {statement}
    seconds.append(time.process_time() - start)
print(json.dumps({{"first": seconds[0], "warm": seconds[1], "compiles": compiles}}))
"""


def run_case(statement: str, cache: str) -> dict:
    """Fit ``statement`` twice in a new process with numba's cache in ``cache``: CPU seconds and compile times."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    code = CHILD.format(statement=statement)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def summary(name: str, fresh: dict, cached: dict) -> dict:
    """One row of the table from a case's fresh and cached runs (:func:`run_case`)."""
    compiles = fresh["compiles"]
    slowest = max(compiles, key=compiles.get) if compiles else ""
    warm = min(fresh["warm"], cached["warm"])
    return {
        "case": name,
        "first fit, fresh (CPU s)": fresh["first"],
        "first fit, cached (CPU s)": cached["first"],
        "warm fit (CPU s)": warm,
        "fresh / warm": round(fresh["first"] / max(warm, 1e-6)),
        "compiling (CPU s)": sum(compiles.values()),
        "kernels compiled": len(compiles),
        "slowest to compile": f"{slowest} ({compiles[slowest]:.2f} s)" if slowest else "",
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None, help="cases whose name contains one of these words")
    args = parser.parse_args(argv)
    rows = []
    for name, statement in CASES.items():
        if args.only and not any(word in name for word in args.only):
            continue
        with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
            fresh = run_case(statement, cache)
            cached = run_case(statement, cache)
        rows.append(summary(name, fresh, cached))
        print(f"{name}: first fit {fresh['first']:.2f} s fresh, {cached['first']:.2f} s cached", flush=True)
    print(machine())
    print(markdown_table(rows, precision=3))
    results.write("first_fit", rows, machine=machine(), only=args.only)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
