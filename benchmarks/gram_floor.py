"""Every Gaussian-model fit against its own floor and the Gram matrix, at several dimensions.

``python -m benchmarks.gram_floor [--elements E] [--dims D ...] [--repeat R] [--only WORD ...] [--coretype NAME]``
times, with one BLAS thread, each estimator's ``fit`` on an ``n x d`` float64 input (inside its
public bounds) for every ``d`` in ``--dims`` (20, 77, 200, 500 by default), with
``n = E / d`` rows (``E = 2e7`` elements, 160 MB per input, by default), and prints per fit:

* ``time / own floor``: the fit's median time over the summed median times of the operations
  the mechanism cannot avoid (:data:`FLOORS`), each timed alone in the same run: one read of
  ``X`` (its column sums; it stands for the validation pass every fit makes over its input), the
  projection product ``X R`` (``d x 8``) where the mechanism has one, the ``n x 8`` noise draws
  where it releases one noisy value per record, the Gram matrix ``X^T X`` where it needs one, and
  the projected rows' Gram matrix ``Z^T Z`` (``Z = X R``, ``n x 8``) where the mechanism releases
  the second moment of projected rows (RON-Gauss, PCA-Gauss with a public basis: ``n k^2 / 2``
  multiply-adds, a fifth of the projection's at ``d = 20``, negligible from ``d = 77`` on), and the
  top ``k = 8`` eigenvectors of a ``d x d`` symmetric matrix where the mechanism releases or uses the
  principal subspace of a noisy one (MOD-SULQ, PCA-Gauss's Algorithm 1, DP-PCA): LAPACK's subset driver
  (:func:`dpnb.numerics.linalg.top_eigenvectors`), whose reduction to tridiagonal form (``4 d^3 / 3``
  flops) no dense method avoids; against the Gram matrix's ``n d^2`` it matters only where ``d`` is
  not small against ``n`` (``n = E / d``: from ``d = 200`` on here). An iterative solver could cost
  less but returns the vectors only to a tolerance, so the released subspace would no longer be the
  exact one of the noisy matrix.
  RON-Gauss's floor has two reads of ``X`` (the read and the projection's): its DP mean must be
  released before the pass whose per-row normalisation depends on it. Goal: <= 1.2
  (:data:`GOAL_FLOOR`).
* ``time / Gram``: the fit's time over one ``X^T X``; the Gram matrix costs ``n d^2 / 2``
  multiply-adds while most fits cost ``O(n d k)``, so this ratio falls like ``1 / d`` and is only
  the right yardstick for the fits that need the Gram matrix.
* ``time / read at bandwidth``: the fit's time over one read of ``X`` at the machine's measured
  single-thread read bandwidth (:func:`read_bandwidth`, the best flat sum over an array of ``X``'s size,
  far larger than any cache); the gap to the memory system.
* ``time / flops at peak``: the fit's time over its floor's arithmetic (:data:`FLOPS`: a
  multiply-add counts two flops; draws none) at the measured single-core DGEMM peak
  (:func:`dgemm_peak`, the best of square float64 products); the gap to the arithmetic units.
  Both yardsticks are measured in the same run as the fits, so load hits them alike.
* extra peak memory (tracemalloc, NumPy allocations included) over the input's size (goal <= 1).

``--coretype NAME`` forces OpenBLAS's kernel for the run (``OPENBLAS_CORETYPE``, read when OpenBLAS
loads, so the benchmark starts itself again with it set; e.g. ``Haswell`` for an AVX2 machine's kernel
on an AVX-512 one) and writes ``gram_floor-NAME.json``.

Timing: one warm-up round (imports, numba's compilation), then ``--repeat`` rounds, each of which
runs every operation and every fit once, interleaved, so that a change in the machine's load hits
all of them alike. The two ratios to the machine's own operations (``time / own floor``, ``time /
Gram``) are the medians over rounds of each round's ratio, so a round slowed by the load as a whole
cancels; the seconds printed are the medians over rounds. No fit keeps statistics of its input
between calls (no warm cache is timed). Each table is printed with the CPU model and the BLAS
library's kernel, because the ratios differ between CPU kinds.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
import tracemalloc

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from benchmarks import results
from dpnb.numerics.linalg import top_eigenvectors
from dpnb.papers.component_analysis import DPPCAPublisher
from dpnb.papers.dppro import DPPro
from dpnb.papers.lda_publishing import DPLDAPublisher
from dpnb.papers.pca_gauss import PCAGauss
from dpnb.papers.private_pca import ModSULQ
from dpnb.papers.ron_gauss import RONGauss
from dpnb.reporting.report import markdown_table

GOAL_FLOOR, GOAL_MEMORY = 1.2, 1.0
DIMENSIONS = (20, 77, 200, 500)
K = 8  # released dimension of every projecting fit

# fit -> the operations it cannot avoid (names of :func:`operations`)
FLOORS = {
    "RONGauss unsupervised": ("read", "projection", "projected Gram"),
    "RONGauss supervised": ("read", "projection", "projected Gram"),
    "RONGauss gmm": ("read", "projection", "projected Gram"),
    "PCAGauss Algorithm 1 (default)": ("read", "Gram", "eigenvectors"),
    "PCAGauss (public basis)": ("read", "projection", "projected Gram"),
    "DPPCAPublisher": ("read", "Gram", "eigenvectors", "projection", "Laplace draws"),
    "DPLDAPublisher": ("read", "Gram"),
    "MOD-SULQ": ("read", "Gram", "eigenvectors"),
    "DPPro release": ("read", "projection", "normal draws"),
}


# operation -> its flops on an n x d input (a multiply-add counts two; random draws count none): the
# fit's flops are the sum over its floor (:data:`FLOORS`)
FLOPS = {
    "read": lambda n, d: n * d,
    "Gram": lambda n, d: n * d * (d + 1),  # the symmetric product (BLAS syrk): half of 2 n d^2, diagonal included
    "projection": lambda n, d: 2 * n * d * K,
    "projected Gram": lambda n, d: n * K * (K + 1),
    "eigenvectors": lambda n, d: 4 * d**3 // 3,  # the reduction to tridiagonal form, which dominates for K << d
    "normal draws": lambda n, d: 0,
    "Laplace draws": lambda n, d: 0,
}


def read_bandwidth(nbytes: int, repeat: int) -> float:
    """Bytes per second of one thread reading ``nbytes`` of float64 once (a flat sum), the best of ``repeat``.

    The sum adds one element per element read, far below the arithmetic units' rate, so its time is the
    memory system's. ``nbytes`` should exceed the last-level cache by far (the inputs do).
    """
    a = np.ones(max(nbytes // 8, 1))
    a.sum()
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        a.sum()
        best = min(best, time.perf_counter() - start)
    return a.nbytes / best


def dgemm_peak(repeat: int, size: int = 2000) -> float:
    """Flops per second of one thread's float64 ``size x size`` product (``2 size^3`` flops), the best of ``repeat``."""
    rng = np.random.default_rng(2)
    a, b = rng.random((size, size)), rng.random((size, size))
    with threadpool_limits(1):
        a @ b
        best = np.inf
        for _ in range(repeat):
            start = time.perf_counter()
            a @ b
            best = min(best, time.perf_counter() - start)
    return 2 * size**3 / best


def machine(threads: str | None = "one BLAS thread") -> str:
    """One line naming the CPU model and the BLAS libraries' kernels (the ratios depend on both), and ``threads``."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    blas = [
        f"{i['internal_api']} {i.get('version')} kernel {i.get('architecture')}"
        for i in threadpool_info()
        if i["user_api"] == "blas"
    ]
    return f"CPU: {cpu}; BLAS: {', '.join(blas) or 'unknown'}" + (f"; {threads}" if threads else "")


def interleaved_times(fns: dict, repeat: int) -> dict:
    """Wall-clock seconds of each zero-argument function in each of ``repeat`` interleaved rounds.

    One untimed warm-up round, then ``repeat`` rounds that each call every function once, so that
    a change in the machine's load during the run hits every function alike. Returns name -> one
    time per round, in round order.
    """
    for fn in fns.values():
        fn()
    times = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return times


def medians(times: dict) -> dict:
    """Name -> the median of its times over rounds (:func:`interleaved_times`' result)."""
    return {name: statistics.median(t) for name, t in times.items()}


def interleaved_medians(fns: dict, repeat: int) -> dict:
    """Median over :func:`interleaved_times`' rounds of each function's wall-clock seconds."""
    return medians(interleaved_times(fns, repeat))


def paired_ratio(times: dict, name: str, parts) -> float:
    """Median over rounds of ``times[name]`` over the sum of ``times[part]`` in the same round.

    Examples
    --------
    >>> paired_ratio({"fit": [2.0, 6.0, 3.0], "a": [1.0, 2.0, 1.0], "b": [1.0, 1.0, 2.0]}, "fit", ("a", "b"))
    1.0
    """
    rounds = zip(times[name], *(times[part] for part in parts), strict=True)
    return statistics.median(fit / sum(floor) for fit, *floor in rounds)


def _extra_peak(fn) -> int:
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def inputs(n: int, d: int, seed: int = 0) -> dict:
    """The inputs of :func:`cases`: ``[0, 1]^d``, ``[-1, 1]^d``, the unit ball, labels and a public basis."""
    rng = np.random.default_rng(seed)
    box = rng.random((n, d))
    sym = 2 * box - 1
    return {
        "box": box,
        "sym": sym,
        "ball": sym / np.sqrt(d),
        "labels": (box[:, 0] > 0.5).astype(int),
        "basis": np.linalg.qr(rng.standard_normal((d, K)))[0],
    }


def cases(data: dict) -> dict:
    """Fit name -> zero-argument fit."""
    box, sym, ball, labels, basis = (data[key] for key in ("box", "sym", "ball", "labels", "basis"))
    return {
        "RONGauss unsupervised": lambda: RONGauss(K, 1.0, random_state=0).fit(sym),
        "RONGauss supervised": lambda: RONGauss(K, 1.0, mode="supervised", label_bound=1.0, random_state=0).fit(
            sym, sym[:, 0]
        ),
        "RONGauss gmm": lambda: RONGauss(K, 1.0, mode="gmm", random_state=0).fit(sym, labels),
        "PCAGauss Algorithm 1 (default)": lambda: PCAGauss(K, 1.0, random_state=0).fit(sym),
        "PCAGauss (public basis)": lambda: PCAGauss(K, 1.0, basis=basis, random_state=0).fit(sym),
        "DPPCAPublisher": lambda: DPPCAPublisher(K, 1.0, random_state=0).fit(box),
        "DPLDAPublisher": lambda: DPLDAPublisher(1.0, n_classes=2, random_state=0).fit(box, labels),
        "MOD-SULQ": lambda: ModSULQ(K, 1.0, 1e-5, random_state=0).fit(ball),
        "DPPro release": lambda: DPPro(K, 1.0, 1e-5, random_state=0).fit(box),
    }


def operations(data: dict) -> dict:
    """The unavoidable operations of :data:`FLOORS`, each a zero-argument function on the same input."""
    X = data["box"]
    n = X.shape[0]
    projection = np.ascontiguousarray(data["basis"])
    draws = np.random.default_rng(1)
    projected = X @ projection
    gram = X.T @ X
    return {
        "read": lambda: np.einsum("ij->j", X),
        "Gram": lambda: X.T @ X,
        "projection": lambda: X @ projection,
        "projected Gram": lambda: projected.T @ projected,
        "eigenvectors": lambda: top_eigenvectors(gram, K),
        "normal draws": lambda: draws.standard_normal((n, K)),
        "Laplace draws": lambda: draws.laplace(0.0, 1.0, size=(n, K)),
    }


def table(n: int, d: int, repeat: int, only=None) -> tuple[list, dict, dict]:
    """Rows of the printed table for one ``n x d`` input, the operations' median seconds, and the yardsticks.

    The yardsticks (``"bandwidth"`` in bytes/s, ``"peak"`` in flops/s) are measured once before and once
    after the fits; the better of the two is used, as each is a best-case rate.
    """
    data = inputs(n, d)
    fits = {
        name: fit
        for name, fit in cases(data).items()
        if only is None or any(word.lower() in name.lower() for word in only)
    }
    ops = operations(data)
    nbytes = data["box"].nbytes
    rates = [(read_bandwidth(nbytes, repeat), dgemm_peak(repeat))]
    with threadpool_limits(1):
        times = interleaved_times({**ops, **fits}, repeat)
        memory = {name: _extra_peak(fit) / nbytes for name, fit in fits.items()}
    rates.append((read_bandwidth(nbytes, repeat), dgemm_peak(repeat)))
    yardsticks = {"bandwidth": max(r[0] for r in rates), "peak": max(r[1] for r in rates)}
    seconds = medians(times)
    rows = []
    for name in fits:
        to_floor = paired_ratio(times, name, FLOORS[name])
        flops = sum(FLOPS[op](n, d) for op in FLOORS[name])
        rows.append(
            {
                "fit": name,
                "time / own floor": to_floor,
                "time / Gram": paired_ratio(times, name, ("Gram",)),
                "time / read at bandwidth": seconds[name] * yardsticks["bandwidth"] / nbytes,
                "time / flops at peak": seconds[name] * yardsticks["peak"] / flops,
                "own floor": " + ".join(FLOORS[name]),
                "extra memory / input": memory[name],
                "meets both goals": to_floor <= GOAL_FLOOR and memory[name] <= GOAL_MEMORY,
            }
        )
    return rows, {op: seconds[op] for op in ops}, yardsticks


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=float, default=2e7, help="n * d of every input (n = elements / d)")
    parser.add_argument("--dims", type=int, nargs="*", default=list(DIMENSIONS))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", nargs="*", default=None, help="fits to time, by a word of their names (gmm DPPro)")
    parser.add_argument("--coretype", default=None, help="OpenBLAS kernel to force for the run (e.g. Haswell)")
    args = parser.parse_args(argv)
    if args.coretype and os.environ.get("OPENBLAS_CORETYPE") != args.coretype:
        # OpenBLAS reads the variable when it loads (it already has): the run starts again with it set
        argv = sys.argv[1:] if argv is None else list(argv)
        env = {**os.environ, "OPENBLAS_CORETYPE": args.coretype}
        os.execve(sys.executable, [sys.executable, "-m", "benchmarks.gram_floor", *argv], env)
    measured = []
    for d in args.dims:
        n = int(round(args.elements / d, -3))
        rows, ops, yardsticks = table(n, d, args.repeat, args.only)
        measured.append({"n": n, "d": d, "operations (s)": ops, "yardsticks": yardsticks, "fits": rows})
        print(f"\n{n} x {d} float64 (n d = {n * d:.2g}), median of {args.repeat} interleaved rounds")
        print(machine())
        print("operations alone: " + ", ".join(f"{op} {s:.4f} s" for op, s in ops.items()))
        print(
            f"measured in this run, one thread: read bandwidth {yardsticks['bandwidth'] / 1e9:.1f} GB/s, "
            f"DGEMM peak {yardsticks['peak'] / 1e9:.1f} GFLOP/s"
        )
        print(f"goals: time / own floor <= {GOAL_FLOOR}, extra memory / input <= {GOAL_MEMORY}")
        print(markdown_table(rows, precision=2), flush=True)
    name = f"gram_floor-{args.coretype}" if args.coretype else "gram_floor"
    results.write(name, measured, machine=machine(), elements=args.elements, repeat=args.repeat)


if __name__ == "__main__":
    main()
