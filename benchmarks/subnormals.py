"""What subnormal numbers cost a float32 Cholesky factorisation, and what flushing them to zero saves.

``python -m benchmarks.subnormals [--rows 1500] [--rounds 5]`` builds the RBF kernel (``gamma = 1/2``, ridge 0.1)
of ``--rows`` two-dimensional records in two settings: records spread as a release without noise is (standard
normal), and records far apart as a release with large noise is (standard normal times 30: the kernel is nearly
diagonal and its factor fills in with products of small entries). For each it times the float32 factorisation
plain and inside :func:`dpnb.numerics.subnormals.flushed_subnormals`, interleaved over ``--rounds`` rounds, and
prints the medians, their ratio and the number of subnormal entries in the plain factor. One BLAS thread.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time

import numpy as np
import scipy.linalg
from threadpoolctl import threadpool_limits

from benchmarks import results
from benchmarks.gram_floor import machine
from dpnb.numerics.subnormals import flushed_subnormals
from dpnb.reporting.report import markdown_table

SPREADS = {"spread as without noise": 1.0, "far apart, as with large noise": 30.0}


def kernel32(rows: int, spread: float) -> np.ndarray:
    """The float32 RBF kernel plus ridge of ``rows`` standard normal 2-d records times ``spread``."""
    Z = np.random.default_rng(0).standard_normal((rows, 2)) * spread
    sq = (Z * Z).sum(axis=1)
    K = np.exp(-0.5 * np.maximum(sq[:, None] + sq[None, :] - 2 * Z @ Z.T, 0.0)) + 0.1 * np.eye(rows)
    return K.astype(np.float32)


def factor_seconds(A: np.ndarray, flushed: bool) -> float:
    with flushed_subnormals() if flushed else contextlib.nullcontext():
        start = time.perf_counter()
        scipy.linalg.cho_factor(A, lower=True, check_finite=False)
        return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1500, help="records (Table 5 fits on 1,500)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds; medians are printed")
    args = parser.parse_args(argv)
    rows = []
    with threadpool_limits(1):
        for name, spread in SPREADS.items():
            A = kernel32(args.rows, spread)
            factor = np.tril(scipy.linalg.cho_factor(A, lower=True, check_finite=False)[0])
            subnormal = int(np.count_nonzero((factor != 0) & (np.abs(factor) < np.finfo(np.float32).tiny)))
            plain, flushed = [], []
            for _ in range(args.rounds):
                plain.append(factor_seconds(A, False))
                flushed.append(factor_seconds(A, True))
            p, f = statistics.median(plain), statistics.median(flushed)
            rows.append(
                {
                    "records": name,
                    "subnormal entries in the factor": subnormal,
                    "plain (s)": p,
                    "flushed (s)": f,
                    "plain / flushed": p / f,
                }
            )
    print(markdown_table(rows, precision=3))
    results.write("subnormals", rows, machine=machine(), records=args.rows, rounds=args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
