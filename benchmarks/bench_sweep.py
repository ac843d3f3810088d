"""Sweeps on Dask: the speed-up from 1 to 2 local worker processes on a CPU-bound function.

``python -m benchmarks.bench_sweep`` starts a 1-worker and a 2-worker LocalCluster, runs the same
sweep on each (cluster start-up excluded, one warm-up point each) and prints both times and their
ratio, measured in this one run. ``python -m benchmarks`` (the first step of ``make benchmark``) also
times the whole 2-worker sweep, start-up included, which is what a user waits for.

The same run also measures the machine's own ceilings: the same work done by one plain process,
then split between two plain processes started together (no Dask), once for this compute-bound
task (cache-resident linear algebra) and once for a memory-bound one (copies of 200 MB arrays).
Two busy cores may not run at twice the speed of one: a virtual machine's host shares them (steal
time), and both cores share the memory bus. No scheduler can beat those ratios; the sweep's
speed-up, and ``make run``'s (its notebooks sit between the two kinds of work), are best read
against them. Measured on 2026-11-26 (2 vCPUs, AMD EPYC; six runs, the host's load varying):
compute-bound 1.68-1.95x, memory-bound 1.46-1.59x (a plain copy loop: 13.8 GB/s in one process,
22.2 GB/s in two together); the sweep 1.66-1.74x; ``make run`` 1.64x (fast profile) and 1.53x
(paper profile).
"""

import argparse
import logging
import tempfile
import time

import numpy as np

from benchmarks import results
from benchmarks.gram_floor import machine
from dpnb.ground.streams import stream
from dpnb.tools.executor import THREAD_VARIABLES
from dpnb.tools.portability import environment
from dpnb.tools.sweep import run_sweep

# By module name, so that the workers import this module (not ``__main__``) and find the function.
TASK = "benchmarks.bench_sweep:top_eigenvalue"
GRID = {"n_features": [300], "repeats": [6]}


def top_eigenvalue(n_features: int, repeats: int, seed: int) -> dict:
    """Mean largest eigenvalue of ``repeats`` Wishart matrices, ``2 n_features`` rows each: CPU-bound linear algebra."""
    rng = stream(seed, "bench-sweep")
    tops = [np.linalg.eigvalsh(x.T @ x)[-1] for x in rng.standard_normal((repeats, 2 * n_features, n_features))]
    return {"top_eigenvalue": float(np.mean(tops))}


def timed_sweep(client, seeds) -> float:
    """Seconds to run the grid over ``seeds`` on ``client``'s cluster, into a fresh folder."""
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        table = run_sweep(TASK, GRID, seeds, folder, scheduler=client, progress=False)
        seconds = time.perf_counter() - start
    if (table["status"] != "ok").any():
        raise RuntimeError(f"benchmark sweep failed: {table['error'].dropna().iloc[0]}")
    return seconds


def speedup(n_points: int = 8) -> tuple[float, float]:
    """Seconds of an ``n_points`` sweep on 1 and on 2 local worker processes (start-up excluded)."""
    from distributed import Client, LocalCluster

    seconds = []
    for n_workers in (1, 2):
        with (
            LocalCluster(
                n_workers=n_workers, threads_per_worker=1, dashboard_address=":0", silence_logs=logging.ERROR
            ) as cluster,
            Client(cluster) as client,
        ):
            timed_sweep(client, range(1000, 1000 + n_workers))  # warm-up: imports on every worker
            seconds.append(timed_sweep(client, range(n_points)))
    return seconds[0], seconds[1]


def _points(seeds) -> None:
    for seed in seeds:
        top_eigenvalue(GRID["n_features"][0], GRID["repeats"][0], seed)


def _copies(n_copies: int) -> None:
    source = np.ones(25_000_000)  # 200 MB: far beyond every cache, so each copy streams through memory
    target = np.empty_like(source)
    for _ in range(n_copies):
        np.copyto(target, source)


def _plain_processes(target, shares) -> float:
    """Seconds for one plain process per share (``target(share)``), all started together (no Dask)."""
    import multiprocessing

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["numpy"])
    warm = context.Process(target=_points, args=(range(1000, 1001),))  # starts the forkserver
    warm.start()
    warm.join()
    workers = [context.Process(target=target, args=(share,)) for share in shares]
    start = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    if any(worker.exitcode for worker in workers):
        raise RuntimeError("a ceiling process failed")
    return time.perf_counter() - start


def ceiling(n_points: int = 8) -> tuple[float, float]:
    """Compute-bound ceiling: seconds for ``n_points`` in one plain process, and split between two."""
    return _plain_processes(_points, [range(n_points)]), _plain_processes(
        _points, [range(0, n_points, 2), range(1, n_points, 2)]
    )


def bandwidth_ceiling(n_copies: int = 80) -> tuple[float, float]:
    """Memory-bound ceiling: seconds for ``n_copies`` 200 MB copies in one plain process, and split between two."""
    return _plain_processes(_copies, [n_copies]), _plain_processes(_copies, [n_copies // 2, n_copies - n_copies // 2])


def _sweep_on_new_cluster():
    with tempfile.TemporaryDirectory() as folder:
        run_sweep(TASK, GRID, range(8), folder, n_workers=2, progress=False)


CASES = {"8 CPU-bound points on 2 local worker processes, start-up included": _sweep_on_new_cluster}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=96, help="grid points (seeds) per sweep")
    args = parser.parse_args(argv)
    one, two = speedup(args.points)
    print(machine("one BLAS thread per worker"))
    print(f"{args.points} points: 1 worker {one:.2f} s, 2 workers {two:.2f} s, speed-up {one / two:.2f}x")
    with environment(dict.fromkeys(THREAD_VARIABLES, "1")):  # one BLAS thread per process, as on the workers
        alone, pair = ceiling(args.points)
        copy_alone, copy_pair = bandwidth_ceiling()
    print(
        f"machine ceiling, plain processes, this task: 1 process {alone:.2f} s, 2 processes {pair:.2f} s, "
        f"speed-up {alone / pair:.2f}x; the sweep reaches {(one / two) / (alone / pair):.0%} of it"
    )
    print(
        f"machine ceiling, plain processes, memory-bound copies: 1 process {copy_alone:.2f} s, "
        f"2 processes {copy_pair:.2f} s, speed-up {copy_alone / copy_pair:.2f}x"
    )
    rows = [
        {"what": "sweep", "1 (s)": one, "2 (s)": two},
        {"what": "plain processes, this task", "1 (s)": alone, "2 (s)": pair},
        {"what": "plain processes, memory-bound copies", "1 (s)": copy_alone, "2 (s)": copy_pair},
    ]
    results.write("sweep", rows, machine=machine("one BLAS thread per worker"), points=args.points)


if __name__ == "__main__":
    main()
