"""A fit on more rows than memory holds: MOD-SULQ or RON-Gauss on a float32 file through a Dask cluster.

``python -m benchmarks.scale [--estimator {ModSULQ,RONGauss}] [--rows N] [--columns D] [--path FILE] [--keep]
[--chunk-rows R] [--workers W] [--memory-limit BYTES] [--scheduler tcp://HOST:PORT] [--check-rows M]``

writes (unless ``FILE`` already holds them) ``N x D`` float32 rows of L2 norm below 1 (``N = 1e8``,
``D = 77``: 31 GB by default, more than this machine's memory, so the page cache cannot hold the
file), then, in one run:

* times one sequential read of the file (64 MB ``readinto`` calls), the yardstick;
* fits :class:`dpnb.papers.private_pca.ModSULQ` (default; one pass) or
  :class:`dpnb.papers.ron_gauss.RONGauss` (unsupervised; two passes, the second after the client has
  released the mean, so the file is read twice) on ``dask.array.from_array`` of the file in
  chunks of ``R`` rows (each chunk read by the worker that reduces it: the graph holds the file's
  name, not its data), on a ``LocalCluster`` of ``W`` single-threaded worker processes with
  ``BYTES`` of memory each (2 workers, 1 GB: 2 GB in all), or on the cluster at ``--scheduler``;
  only each chunk's sums (``D x D``; for RON-Gauss ``D`` unit-row sums, then ``p x p``) come back to the client;
* samples the resident memory of the client and of every worker process every 0.1 s (psutil)
  and prints the peaks, and the workers' CPU seconds during the fit (on a shared machine the wall
  time depends on the load; the CPU seconds do not);
* checks the agreement with the in-memory fit on the first ``M`` rows (``M = 1e6``): the Dask fit
  of those rows against the NumPy fit of the same rows with the same seed. ModSULQ: the second
  moments within the summations' round-off bound ``2 M u |X|^T |X| / M`` (entrywise), and the largest
  principal angle between the two released subspaces. RONGauss (against the float64 fit of the same
  values): the largest change of the released mean over its round-off bound ``2 (M + D + 2) u``, the
  change of the released covariance (Frobenius) and the condition ``1 / min_i ||unit(x_i) - mu||`` that
  amplifies the mean's change into it.

Prints the wall time of the fit, the read time, their ratio (goal <= 1.5; RON-Gauss reads the file
twice, so its floor is 2 when the file is not in the page cache), the peak memory (goal <= 2 GB for
the cluster's processes) and the agreement. The file is deleted at the end unless ``--keep``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import threading
import time

import numpy as np

from dpnb.ground.streams import stream
from dpnb.papers.private_pca import ModSULQ, second_moment
from dpnb.papers.ron_gauss import RONGauss, unit_rows

GOAL_RATIO, GOAL_MEMORY = 1.5, 2 * 2**30
SEED = 20261128
ESTIMATORS = {  # name -> (class, its module, keywords)
    "ModSULQ": (ModSULQ, "dpnb.papers.private_pca", {"n_components": 8, "epsilon": 1.0, "delta": 1e-6}),
    "RONGauss": (RONGauss, "dpnb.papers.ron_gauss", {"n_components": 8, "epsilon": 1.0}),
}


class RowFile:
    """Rows of a raw float32 file, sliced like an array (what ``dask.array.from_array`` needs).

    Pickles as its path and shape, so a cluster's tasks read their own rows (``np.fromfile`` at an
    offset: a plain read into a fresh buffer, nothing mapped, nothing copied twice).
    """

    def __init__(self, path: str, shape: tuple[int, int], dtype=np.float32):
        self.path, self.shape, self.dtype = path, tuple(shape), np.dtype(dtype)
        self.ndim = 2

    def __getitem__(self, key):
        rows, cols = key if isinstance(key, tuple) else (key, slice(None))
        start, stop, step = rows.indices(self.shape[0])
        if step != 1:
            raise ValueError("RowFile reads consecutive rows only")
        width = self.shape[1] * self.dtype.itemsize
        block = np.fromfile(self.path, dtype=self.dtype, count=(stop - start) * self.shape[1], offset=start * width)
        return block.reshape(stop - start, self.shape[1])[:, cols]


def write_rows(path: str, n: int, d: int, chunk: int = 1_000_000) -> None:
    """``n x d`` float32 rows with L2 norm at most 0.99, written in chunks of ``chunk`` rows.

    One chunk of uniform entries (rows scaled to norm <= 0.99) is drawn; chunk ``i`` of the file is
    that chunk with its columns rotated by ``i`` (norms unchanged, contents differ from chunk to chunk), so
    writing costs the disk's time, not the random generator's.
    """
    rng = stream(SEED, "scale/rows")
    base = rng.uniform(-1.0, 1.0, size=(min(chunk, n), d))
    base *= 0.99 / np.maximum(np.linalg.norm(base, axis=1, keepdims=True), 1.0)
    base = base.astype(np.float32)
    with open(path, "wb") as out:
        for i, start in enumerate(range(0, n, chunk)):
            out.write(np.roll(base[: n - start], i, axis=1).tobytes())


def read_time(path: str, buffer_bytes: int = 64 * 2**20) -> float:
    """Wall seconds of one sequential read of the whole file."""
    buffer = bytearray(buffer_bytes)
    start = time.perf_counter()
    with open(path, "rb", buffering=0) as f:
        while f.readinto(buffer):
            pass
    return time.perf_counter() - start


class PeakMemory:
    """Peak resident memory of this process and, separately, of the given worker processes, and the workers'
    CPU seconds (user + system) inside the ``with`` block (psutil)."""

    def __init__(self, pids=(), interval: float = 0.1):
        import psutil

        self._me = psutil.Process()
        self._workers = [psutil.Process(p) for p in pids]
        self.client = self.cluster = 0
        self._stop, self._interval = threading.Event(), interval
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            self.client = max(self.client, self._me.memory_info().rss)
            total = 0
            for p in self._workers:
                try:
                    total += p.memory_info().rss
                except Exception:  # noqa: BLE001 -- a worker that has exited holds no memory
                    pass
            self.cluster = max(self.cluster, total)
            self._stop.wait(self._interval)

    def _cpu(self) -> float:
        return sum(sum(p.cpu_times()[:2]) for p in self._workers)

    def __enter__(self):
        self.cpu = -self._cpu()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.cpu += self._cpu()


def agreement(path: str, shape, rows: int, chunk_rows: int, estimator: str = "ModSULQ") -> str:
    """The agreement of the Dask fit of the first ``rows`` rows with the in-memory fit of them, as a sentence.

    ModSULQ: ``max |A_dask - A_numpy| / bound`` for the second moment :func:`dpnb.papers.private_pca.second_moment`
    (``bound`` the round-off bound of the two summations, ``2 rows u |X|^T |X| / rows`` entrywise) and the sine
    of the largest angle between the two releases with the same seed. RONGauss: against the fit of the
    float64 values, ``max |mu_dask - mu_numpy| / (2 (rows + D + 2) u)`` (the mean's round-off bound, unit rows
    summed), ``||Sigma_dask - Sigma_numpy||_F`` and the condition ``1 / min_i ||unit(x_i) - mu||``.
    """
    import dask.array as da

    X = RowFile(path, shape)[:rows]
    D = da.from_array(RowFile(path, (rows, shape[1])), chunks=(min(chunk_rows, rows), shape[1]), asarray=True)
    X64 = X.astype(np.float64)
    cls, _, fit = ESTIMATORS[estimator]
    if estimator == "RONGauss":
        A, B = (cls(**fit, random_state=SEED).fit(data) for data in (X64, D))
        mean_ratio = np.abs(A.mean_ - B.mean_).max() / (2 * (rows + shape[1] + 2) * 2.0**-53)
        condition = 1.0 / np.linalg.norm(unit_rows(X64) - A.mean_, axis=1).min()
        return (
            f"|mu_dask - mu_numpy| <= {mean_ratio:.3g} x the round-off bound; "
            f"||Sigma_dask - Sigma_numpy||_F {np.linalg.norm(A.covariance_ - B.covariance_):.2g}; "
            f"condition 1 / min ||unit(x) - mu|| {condition:.3g}"
        )
    bound = 2 * rows * 2.0**-53 * (np.abs(X64).T @ np.abs(X64)) / rows
    ratio = float(np.max(np.abs(second_moment(X) - second_moment(D)) / bound))
    U, V = (cls(**fit, random_state=SEED).fit(data).components_.T for data in (X, D))
    return (
        f"|A_dask - A_numpy| <= {ratio:.3g} x the round-off bound; "
        f"sin of the largest angle between the two releases {np.linalg.norm(U - V @ (V.T @ U), 2):.2g}"
    )


def warm_up(estimator: str) -> None:
    """Import the estimator's module and fit it on a few float32 rows: loads its compiled (numba) code in a worker.

    Numba loads a cached function the first time it is called, in every process (about a second of CPU per
    worker here); a fit on 10^8 rows pays that once, and the timing should not count it.
    """
    cls, module, keywords = ESTIMATORS[estimator]
    importlib.import_module(module)
    rows = np.random.default_rng(0).uniform(-0.1, 0.1, (64, 16)).astype(np.float32)
    cls(**{**keywords, "n_components": 2}, random_state=0).fit(rows)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--estimator", choices=tuple(ESTIMATORS), default="ModSULQ")
    parser.add_argument("--rows", type=float, default=1e8)
    parser.add_argument("--columns", type=int, default=77)
    parser.add_argument("--path", default="scale_rows.f32")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--chunk-rows", type=int, default=400_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", type=int, default=2**30)
    parser.add_argument("--scheduler", default=None)
    parser.add_argument("--check-rows", type=float, default=1e6)
    args = parser.parse_args(argv)
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    n, d = int(args.rows), args.columns
    shape = (n, d)
    size = n * d * 4
    if not (os.path.exists(args.path) and os.path.getsize(args.path) == size):
        write_rows(args.path, n, d)
    try:
        seconds_read = read_time(args.path)
        if args.scheduler:
            cluster, client = None, Client(args.scheduler)
        else:
            cluster = LocalCluster(
                n_workers=args.workers, threads_per_worker=1, memory_limit=args.memory_limit, dashboard_address=None
            )
            client = Client(cluster)
        pids = list(client.run(os.getpid).values()) if cluster is not None else []
        cls, _, keywords = ESTIMATORS[args.estimator]
        client.run(warm_up, args.estimator)  # imports and loading compiled code are not the fit's time
        with client:
            X = da.from_array(RowFile(args.path, shape), chunks=(args.chunk_rows, d), asarray=True)
            with PeakMemory(pids) as peak:
                start = time.perf_counter()
                fit = cls(**keywords, random_state=SEED).fit(X)
                seconds_fit = time.perf_counter() - start
            m = min(int(args.check_rows), n)
            agrees = agreement(args.path, shape, m, args.chunk_rows, args.estimator)
        if cluster is not None:
            cluster.close()
    finally:
        if not args.keep:
            os.remove(args.path)
    gib = 2.0**30
    where = f"{args.workers} local workers" if cluster is not None else args.scheduler
    print(f"rows {n:.3g} x {d} float32 ({size / 1e9:.1f} GB), chunks of {args.chunk_rows} rows, {where}")
    print(f"one sequential read: {seconds_read:.1f} s ({size / seconds_read / 1e9:.2f} GB/s)")
    print(
        f"{args.estimator} fit on Dask: {seconds_fit:.1f} s, {seconds_fit / seconds_read:.2f} x the read "
        f"(goal <= {GOAL_RATIO})"
    )
    if cluster is not None:
        print(f"peak RSS: workers {peak.cluster / gib:.2f} GiB (goal <= 2), client {peak.client / gib:.2f} GiB")
        print(f"workers' CPU during the fit: {peak.cpu:.1f} s (user + system)")
    print(f"released components: {fit.components_.shape}")
    print(f"agreement on the first {m:.3g} rows: {agrees}")


if __name__ == "__main__":
    main()
